"""Attach's stdin through the shim: the process reads a pipe its shim holds open, fed from a FIFO per client."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from componentbase.testing import eventually
from componentbase_examples.virtual_kubelet.provider_types import ExecIO
from componentbase_examples.virtual_kubelet.providers.process.attach import attach
from componentbase_examples.virtual_kubelet.providers.process.container import ContainerProcess

pytestmark = pytest.mark.process

ECHO = "import sys\nfor line in sys.stdin: print('got', line.strip(), flush=True)\nprint('eof', flush=True)"


def _running(tmp_path: Path, stopped: list[ContainerProcess], *, stdin: bool = True,
             once: bool = False, code: str = ECHO) -> ContainerProcess:
    """``code`` (ECHO) as a new container, running (stopped at the test's end)."""
    proc = ContainerProcess(name="c", argv=[sys.executable, "-u", "-c", code], env={}, working_dir="",
                            log_dir=str(tmp_path / "c"), restart_policy="Never", backoff=0.05, max_backoff=0.1,
                            on_change=lambda: None)
    proc.keep_stdin, proc.stdin_once = stdin, once
    proc.save_spec()
    stopped.append(proc)
    proc.start()
    eventually(lambda: proc.pid is not None, 20, what="the process to run")
    return proc


def _adopted(tmp_path: Path) -> ContainerProcess:
    """The container as a restarted virtual kubelet takes it up from its directory."""
    return ContainerProcess.adopt(name="c", log_dir=str(tmp_path / "c"), restart_policy="Never", backoff=0.05,
                                  max_backoff=0.1, on_change=lambda: None)


def _send(proc: ContainerProcess, text: bytes, upto: bytes) -> bytes:
    """Attach with ``text`` as the client's input; the output seen until ``upto`` appears."""
    seen = bytearray()
    attach(proc, ExecIO(stdin=io.BytesIO(text), stdout=seen.extend, closed=lambda: upto in seen))
    return bytes(seen)


@pytest.fixture
def stopped() -> Iterator[list[ContainerProcess]]:
    procs: list[ContainerProcess] = []
    yield procs
    for proc in procs:
        proc.stop(grace=1)


def test_each_client_feeds_stdin_and_the_process_sees_no_end_between_clients_nor_across_adoption(
        tmp_path: Path, stopped: list[ContainerProcess]) -> None:
    proc = _running(tmp_path, stopped)
    assert b"got a\n" in _send(proc, b"a\n", b"got a")
    assert b"got b\n" in _send(proc, b"b\n", b"got b")  # the first client's end was not the process's
    adopted = _adopted(tmp_path)
    stopped.append(adopted)
    adopted.start()
    eventually(lambda: adopted.pid == proc.pid, 20, what="the restarted virtual kubelet to adopt the run")
    assert b"got c\n" in _send(adopted, b"c\n", b"got c")
    assert b"eof" not in (tmp_path / "c" / "0.log").read_bytes()
    assert proc.running


def test_stdin_once_ends_the_process_input_with_the_first_client(tmp_path: Path,
                                                                 stopped: list[ContainerProcess]) -> None:
    proc = _running(tmp_path, stopped, once=True)
    out = _send(proc, b"only\n", b"eof")
    assert out.endswith(b"got only\neof\n")
    eventually(lambda: proc.finished, 20, what="the process to end with its input")
    assert proc.state["terminated"]["exitCode"] == 0
    assert proc.open_stdin() is None


def test_stdin_once_refuses_a_second_client_input_instead_of_dropping_it(tmp_path: Path,
                                                                       stopped: list[ContainerProcess]) -> None:
    keeps_running = ("import sys, time\nprint('got', sys.stdin.readline().strip(), flush=True)\n"
                     "while True:\n    print('up', flush=True)\n    time.sleep(0.1)")
    proc = _running(tmp_path, stopped, once=True, code=keeps_running)
    assert b"got first\n" in _send(proc, b"first\n", b"got first")
    eventually(lambda: not (tmp_path / "c" / "0.stdin").exists(), 10, what="the shim to close stdin after the first")
    with pytest.raises(ValueError, match=r"stdin was closed when its first attached client's input ended"):
        _send(proc, b"second\n", b"")
    seen = bytearray()  # watching the output, without stdin, is still allowed
    assert attach(proc, ExecIO(stdout=seen.extend, closed=lambda: b"up\n" in seen)) == 0
    assert b"up\n" in seen
    assert proc.running


def test_a_container_without_stdin_refuses_input_but_streams_output(tmp_path: Path,
                                                                    stopped: list[ContainerProcess]) -> None:
    # A process that does not read stdin: ECHO would read /dev/null's end at once and exit, and a run that ends
    # before the test sees its pid timed out here (seen on a quiet machine at five workers). It keeps printing:
    # attach streams what is written after it starts, as kubectl attach does, so one line printed before is missed.
    ticks = "import time\nwhile True:\n    print('up', flush=True)\n    time.sleep(0.1)"
    proc = _running(tmp_path, stopped, stdin=False, code=ticks)
    with pytest.raises(ValueError, match="stdin is not enabled for this container"):
        _send(proc, b"x\n", b"")
    assert proc.open_stdin() is None
    assert not list((tmp_path / "c").glob("*.stdin"))
    seen = bytearray()  # its output is attached to all the same
    assert attach(proc, ExecIO(stdout=seen.extend, closed=lambda: b"up\n" in seen)) == 0
    assert b"up\n" in seen
