"""pytest fixtures for the loopback API server, its webhooks, and a leak check; registered through the
``pytest11`` entry point.

The leak check is off unless the ini option ``componentbase_leak_check = true`` turns it on (this repository
does): a plugin every user of the library loads should not fail their tests by default.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from ._webhookinstall import install_webhooks
from .apiserver import LoopbackAPIServer

if TYPE_CHECKING:
    import psutil

__all__ = ["install_webhooks", "kube_apiserver", "kube_apiserver_session", "kube_client", "kube_webhooks"]

LEAK_CHECK_INI = "componentbase_leak_check"
#: How long a test's threads and children may take to end after its teardown before they count as leaked.
LEAK_GRACE_SECONDS = 5.0
#: Threads other plugins start around a test (pytest-timeout's timer is not a daemon).
_FOREIGN_THREADS = ("pytest_timeout",)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(LEAK_CHECK_INI, "Fail a test that leaves a non-daemon thread or a child process running "
                  "(componentbase's leak check).", type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "allow_leaks: componentbase's leak check skips this test.")
    if config.getini(LEAK_CHECK_INI):
        try:
            import psutil  # noqa: F401  (psutil is in the test extra, not a runtime dependency)
        except ImportError:
            raise pytest.UsageError(f"{LEAK_CHECK_INI}: needs psutil (pip install psutil)") from None


@pytest.fixture
def kube_apiserver() -> Iterator[LoopbackAPIServer]:
    """A fresh server per test: starting one takes milliseconds, and tests stay independent."""
    with LoopbackAPIServer() as server:
        yield server


@pytest.fixture(scope="session")
def kube_apiserver_session() -> Iterator[LoopbackAPIServer]:
    """One server shared by a whole session, for suites that only read or clean up after themselves."""
    with LoopbackAPIServer() as server:
        yield server


@pytest.fixture
def kube_client(kube_apiserver: LoopbackAPIServer) -> Iterator[Any]:
    """A ready ``kubernetes.client.ApiClient`` for ``kube_apiserver``."""
    client = kube_apiserver.api_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def kube_webhooks(kube_apiserver: LoopbackAPIServer) -> Callable[..., list[dict[str, Any]]]:
    """``kube_webhooks(manifests, address="127.0.0.1:PORT", ca_bundle=CA_PEM)`` installs a component's webhook
    configurations and conversion CRDs (dicts, as deployed) on ``kube_apiserver``, pointed at the webhook
    server the test runs on ``address`` (see ``install_webhooks``); returns the objects as created."""
    return functools.partial(install_webhooks, kube_apiserver)


@pytest.fixture(autouse=True)
def _componentbase_leak_check(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that leaves a non-daemon thread or a child process behind.

    Autouse fixtures are set up first, so this one checks after the test's own fixtures have stopped what
    they started; wider-scoped fixtures (a session's server) started before the snapshot. A leaked thread
    keeps the interpreter from exiting and a leaked child outlives the run: each is a bug of the test or of
    the code it drives. Leaked children are killed once reported, so later tests start clean.
    """
    if not request.config.getini(LEAK_CHECK_INI) or request.node.get_closest_marker("allow_leaks"):
        yield
        return
    threads_before = set(threading.enumerate())
    children_before = {p.pid for p in _children()}
    yield
    deadline = time.monotonic() + LEAK_GRACE_SECONDS
    threads = [t for t in threading.enumerate() if t not in threads_before and not t.daemon
               and not t.name.startswith(_FOREIGN_THREADS)]
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    problems = [f"thread {t.name!r}" for t in threads if t.is_alive()]
    problems += _leaked_children(children_before, deadline)
    if problems:
        pytest.fail(f"{request.node.nodeid} left running: " + "; ".join(problems), pytrace=False)


def _children() -> list[psutil.Process]:
    """This process's descendants. ``waitid`` answers "none at all" in microseconds, sparing most tests a
    scan of every process on the machine."""
    if hasattr(os, "waitid"):
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)  # WNOWAIT: reaps nothing
        except ChildProcessError:
            return []
    import psutil  # in the test extra only: the leak check is opt-in

    return psutil.Process().children(recursive=True)


def _leaked_children(before: set[int], deadline: float) -> list[str]:
    """Children started since ``before`` still running at ``deadline``, described, and killed.

    Polled rather than waited for: waiting would reap a child whose owner still means to wait for it.
    """
    import psutil  # in the test extra only: the leak check is opt-in

    def running(process: psutil.Process) -> bool:  # a zombie has ended; only its exit status is left
        with contextlib.suppress(psutil.Error):
            return process.status() != psutil.STATUS_ZOMBIE
        return False

    children = [p for p in _children() if p.pid not in before]
    while children := [p for p in children if running(p)]:
        if time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    leaked = []
    for process in children:
        with contextlib.suppress(psutil.Error):
            leaked.append(f"child process {process.pid} ({' '.join(process.cmdline())[:200]})")
            process.kill()
    return leaked
