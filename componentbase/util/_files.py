"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: str | bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and an ``os.replace``."""
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    payload = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
