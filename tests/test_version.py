"""What ``--version`` and ``--version=raw`` print, and the commit read from ``.git`` without git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import componentbase
from componentbase.util import version

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.unit
def test_default_is_the_package_version() -> None:
    info = version.get()
    assert info.git_version == "v" + componentbase.__version__ == "v0.1.0"
    assert (info.major, info.minor) == ("0", "1")
    assert str(info) == "v0.1.0"
    assert info.git_tree_state == ""
    assert info.build_date == "1970-01-01T00:00:00Z"
    assert info.compiler == sys.implementation.name
    assert info.python_version == ".".join(map(str, sys.version_info[:3]))
    goos, goarch = info.platform.split("/")
    assert goos in ("linux", "darwin", "windows") or goos == sys.platform
    assert goarch and goarch != "x86_64"


@pytest.mark.unit
@pytest.mark.parametrize(
    ("given", "git_version", "major", "minor"),
    [("1.30.2", "v1.30.2", "1", "30"), ("v2.0.0-rc.1", "v2.0.0-rc.1", "2", "0"), ("v3", "v3", "3", "")],
)
def test_explicit_versions(given: str, git_version: str, major: str, minor: str) -> None:
    info = version.get(given)
    assert (info.git_version, info.major, info.minor) == (git_version, major, minor)


@pytest.mark.unit
def test_raw_prints_every_field_like_go() -> None:
    info = version.Info(major="1", minor="2", git_version="v1.2.3", git_commit=COMMIT, git_tree_state="clean",
                        build_date="2024-05-01T00:00:00Z", python_version="3.11.7", compiler="cpython",
                        platform="linux/amd64")
    assert info.raw() == (
        'version.Info{Major:"1", Minor:"2", GitVersion:"v1.2.3", '
        f'GitCommit:"{COMMIT}", GitTreeState:"clean", BuildDate:"2024-05-01T00:00:00Z", '
        'PythonVersion:"3.11.7", Compiler:"cpython", Platform:"linux/amd64"}'
    )


def _repo(tmp_path: Path, head: str) -> Path:
    (tmp_path / ".git" / "refs" / "heads").mkdir(parents=True)
    (tmp_path / ".git" / "HEAD").write_text(head)
    return tmp_path


@pytest.mark.unit
def test_commit_from_a_loose_ref(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "ref: refs/heads/main\n")
    (repo / ".git" / "refs" / "heads" / "main").write_text(COMMIT + "\n")
    assert version.git_commit(repo) == COMMIT


@pytest.mark.unit
def test_commit_from_packed_refs(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "ref: refs/heads/main\n")
    (repo / ".git" / "packed-refs").write_text(
        f"# pack-refs with: peeled fully-peeled sorted\n{'f' * 40} refs/heads/other\n{COMMIT} refs/heads/main\n"
    )
    assert version.git_commit(repo) == COMMIT


@pytest.mark.unit
def test_commit_of_a_detached_head(tmp_path: Path) -> None:
    assert version.git_commit(_repo(tmp_path, COMMIT + "\n")) == COMMIT


@pytest.mark.unit
def test_commit_of_a_worktree(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main", "ref: refs/heads/main\n")
    (main / ".git" / "refs" / "heads" / "feature").write_text(COMMIT + "\n")
    wt_git = main / ".git" / "worktrees" / "wt"
    wt_git.mkdir(parents=True)
    (wt_git / "HEAD").write_text("ref: refs/heads/feature\n")
    (wt_git / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {wt_git}\n")
    assert version.git_commit(wt) == COMMIT


@pytest.mark.unit
@pytest.mark.parametrize("setup", ["none", "dangling-ref"])
def test_unknown_commit(tmp_path: Path, setup: str) -> None:
    if setup == "dangling-ref":
        _repo(tmp_path, "ref: refs/heads/gone\n")
    assert version.git_commit(tmp_path) == "unknown"


@pytest.mark.process
def test_importing_version_is_cheap() -> None:
    code = "import sys, componentbase.util.version; print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.unit
def test_get_runs_no_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("version.get() must not run git")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    version._package_commit.cache_clear()
    info = version.get()
    assert info.git_commit == "unknown" or len(info.git_commit) == 40
