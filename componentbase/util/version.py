"""Build information, as ``k8s.io/component-base/version``: what ``--version`` and ``/version`` report.

Everything here is cheap: the git commit is read straight from ``.git`` files (no subprocess), so a
component can answer ``--version`` without paying for more than a few small reads.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import sys
from pathlib import Path

import attrs

__all__ = ["UNKNOWN_BUILD_DATE", "Info", "__version__", "get", "git_commit"]

#: componentbase's own version (the package root re-exports it).
__version__ = "0.1.0"

#: What upstream reports when the build did not stamp a date.
UNKNOWN_BUILD_DATE = "1970-01-01T00:00:00Z"

_GOOS = {"linux": "linux", "darwin": "darwin", "win32": "windows", "cygwin": "windows"}
_GOARCH = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "i386": "386",
    "i686": "386",
    "x86": "386",
    "armv7l": "arm",
    "armv6l": "arm",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
}


@attrs.frozen(kw_only=True)
class Info:
    """Version information; ``str(info)`` is the git version, as upstream's ``String()``."""

    major: str
    minor: str
    git_version: str
    git_commit: str
    git_tree_state: str
    build_date: str
    python_version: str
    compiler: str
    platform: str

    def __str__(self) -> str:
        return self.git_version

    def raw(self) -> str:
        """Every field as Go's ``%#v`` prints upstream's struct (``--version=raw``)."""
        fields = [
            ("Major", self.major),
            ("Minor", self.minor),
            ("GitVersion", self.git_version),
            ("GitCommit", self.git_commit),
            ("GitTreeState", self.git_tree_state),
            ("BuildDate", self.build_date),
            ("PythonVersion", self.python_version),
            ("Compiler", self.compiler),
            ("Platform", self.platform),
        ]
        body = ", ".join(f"{name}:{json.dumps(value, ensure_ascii=False)}" for name, value in fields)
        return f"version.Info{{{body}}}"


def get(version: str | None = None) -> Info:
    """Info for ``version`` (``v1.2.3`` or ``1.2.3``), by default componentbase's own version."""
    if version is None:
        version = __version__
    git_version = version if version.startswith("v") else "v" + version
    major, minor = _major_minor(git_version)
    return Info(
        major=major,
        minor=minor,
        git_version=git_version,
        git_commit=_package_commit(),
        git_tree_state="",
        build_date=UNKNOWN_BUILD_DATE,
        python_version=".".join(str(n) for n in sys.version_info[:3]),
        compiler=sys.implementation.name,
        platform=_platform(),
    )


def _major_minor(git_version: str) -> tuple[str, str]:
    """``v1.30.2-rc.0`` -> ``("1", "30")``; parts that are missing are empty, as upstream leaves them."""
    core = git_version[1:].split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    major = parts[0] if parts else ""
    minor = parts[1] if len(parts) > 1 else ""
    return major, minor


def _platform() -> str:
    """``GOOS/GOARCH`` spelling: ``linux/amd64``, ``darwin/arm64``."""
    goos = _GOOS.get(sys.platform, sys.platform)
    if hasattr(os, "uname"):
        machine = os.uname().machine
    else:  # Windows
        machine = platform.machine()
    return f"{goos}/{_GOARCH.get(machine.lower(), machine.lower())}"


@functools.cache
def _package_commit() -> str:
    return git_commit(Path(__file__).resolve().parent.parent)


def git_commit(repo: str | os.PathLike[str]) -> str:
    """The commit checked out in ``repo`` (a folder holding ``.git``), or ``"unknown"``."""
    try:
        git_dir = _git_dir(Path(repo) / ".git")
        if git_dir is None:
            return "unknown"
        head = (git_dir / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head or "unknown"  # a detached HEAD holds the commit itself
        return _resolve_ref(git_dir, head[len("ref:"):].strip()) or "unknown"
    except (OSError, UnicodeDecodeError):
        return "unknown"


def _git_dir(dot_git: Path) -> Path | None:
    """``.git`` itself, or where a ``gitdir:`` file (worktrees, submodules) points."""
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():
        text = dot_git.read_text().strip()
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:"):].strip())
            return target if target.is_absolute() else dot_git.parent / target
    return None


def _resolve_ref(git_dir: Path, ref: str) -> str:
    """A ref's commit from its loose file or from ``packed-refs``, in the worktree's common dir too."""
    dirs = [git_dir]
    common = git_dir / "commondir"
    if common.is_file():
        dirs.append(git_dir / common.read_text().strip())
    for d in dirs:
        loose = d / ref
        if loose.is_file():
            return loose.read_text().strip()
    for d in dirs:
        packed = d / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                commit, _, name = line.partition(" ")
                if name.strip() == ref and not line.startswith(("#", "^")):
                    return commit
    return ""
