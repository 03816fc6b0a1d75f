"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import errno
import os
import stat
import tempfile

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: str | bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and an ``os.replace``.

    A symlink is written through: its target gets the content and the link stays, as a plain ``open`` would
    do (a config path is often a link into a mounted ConfigMap). Only a regular file, or nothing, may be at the
    target: a device, FIFO or directory is refused rather than replaced by a file.
    """
    target = os.path.realpath(os.fspath(path))
    try:
        existing = os.stat(target).st_mode
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing):
        code = errno.EISDIR if stat.S_ISDIR(existing) else errno.EINVAL
        reason = "is a directory" if code == errno.EISDIR else "not a regular file"
        raise OSError(code, reason, os.fspath(path))
    folder = os.path.dirname(target)
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
