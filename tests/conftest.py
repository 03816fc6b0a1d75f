"""Suite-wide settings for componentbase's own tests: every test carries exactly one tier (docs/testing.md)."""

from __future__ import annotations

import os
import re
import sys
import threading
import warnings
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TIERS = ("unit", "integration", "process")

#: Workers for ``-n auto``: most tests wait on servers, processes and lease timings, so two cores keep five
#: busy. Measured on a quiet machine, one run each: three workers 152-163 s (the CPU busy 1.3 cores of 2),
#: five 129 s (1.75 cores), six 142 s (more CPU lost to contention than waiting won back).
WORKERS = 5

_status: list[int] = []


def _keep_bytecode() -> None:
    """Cache bytecode even where ``PYTHONDONTWRITEBYTECODE`` is set.

    The suite starts hundreds of Python processes (components, shims, the demo); without cached bytecode
    each compiles the library again, and every xdist worker rewrites every test module's asserts again:
    measured here, collection took 11.8 s of CPU per worker instead of 5.0 s, and a virtual kubelet test
    file 12% more CPU. ``__pycache__`` is git-ignored. (A ``PYTHONPYCACHEPREFIX`` would keep the tree
    clean but ignores the installed packages' own caches: the first processes of a run would compile the
    whole ``kubernetes`` package again.) Subprocesses inherit the environment without the variable.
    """
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        sys.dont_write_bytecode = False


_keep_bytecode()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Five workers, but one per core for ``-m unit``: its tests only compute (two workers on two cores: 13.4 s
    against 17.1 s in one process, for 770 tests, though each worker imports them all again).

    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return (os.cpu_count() or 1) if config.option.markexpr == "unit" else WORKERS


def pytest_configure(config: pytest.Config) -> None:
    """Before xdist starts its workers, have hypothesis build its table of Unicode characters once.

    The text strategies need it, and hypothesis keeps it in ``.hypothesis/unicode_data``, which a fresh
    checkout (CI's) lacks: each worker then built it again, measured at 13 CPU-s more for the four fuzzing
    modules on five workers. One tiny property run here, in the controller, writes it for all of them.
    """
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.errors import HypothesisSideeffectWarning

    @settings(max_examples=1, database=None)
    @given(st.text(min_size=1, max_size=1))
    def build_the_unicode_table(text: str) -> None:
        assert text

    # Hypothesis warns of slow work while plugins load: that is this work's point, and its four warnings
    # printed at the top of every run.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisSideeffectWarning)
        build_the_unicode_table()


_MODULE_TIER = re.compile(r"^pytestmark = \[?pytest\.mark\.(\w+)", re.MULTILINE)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m unit``, do not import a module whose ``pytestmark`` names another tier.

    Importing the server and process tests (and the client they load) is half the time of a unit run;
    their tests would all be deselected anyway.
    """
    if config.option.markexpr != "unit" or not collection_path.name.startswith("test_") \
            or collection_path.suffix != ".py":
        return None
    found = _MODULE_TIER.search(collection_path.read_text())
    return True if found and found.group(1) in TIERS and found.group(1) != "unit" else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse to run a suite where a test has no tier or two, so ``-m unit`` never silently misses one.

    Runs before ``-m`` deselects, so it sees every collected test.
    """
    wrong = []
    for item in items:
        tiers = sorted({m.name for m in item.iter_markers() if m.name in TIERS})
        if len(tiers) != 1:
            wrong.append(f"{item.nodeid}: {', '.join(tiers) or 'no tier'}")
    if wrong:
        raise pytest.UsageError("each test needs exactly one of the markers " + ", ".join(TIERS)
                                + " (docs/testing.md):\n  " + "\n  ".join(wrong))
    items[:] = _interleaved(sorted(items, key=_rank))


#: The process-tier modules whose tests (or xdist groups) take longest, longest first: with
#: ``--no-loadscope-reorder`` xdist hands work out in this order, so they start while every worker is busy
#: and no worker is left alone on a 20-second test at the end. From a per-test profile of the run (wall,
#: two loaded cores); a module missing here only starts later than it could.
SLOW_FIRST = (
    "tests/ship/test_wheel.py", "tests/leaderelection/test_le_processes.py", "tests/demo/test_demo.py",
    "tests/test_docs_build.py", "tests/virtual_kubelet/test_process.py", "tests/virtual_kubelet/test_node_proxy.py",
    "tests/virtual_kubelet/test_podstatus.py", "tests/test_docs_run.py", "tests/testing/test_builtin.py",
    "tests/scheduler_e2e/test_process.py", "tests/scheduler_e2e/test_scheduling.py",
    "tests/test_api_server_restore.py", "tests/virtual_kubelet/test_restart.py",
    "tests/virtual_kubelet/test_signals.py", "tests/test_benchmarks.py",
)


def _rank(item: pytest.Item) -> tuple[int, int]:
    """Process tests first, the slowest of them first, unit tests last: xdist hands tests out in this order,
    so the long ones start while every worker is still busy and the run does not end with one worker alone
    on a 20-second test."""
    path = item.nodeid.split("::", 1)[0]
    return -TIERS.index(_tier(item)), SLOW_FIRST.index(path) if path in SLOW_FIRST else len(SLOW_FIRST)


def _interleaved(items: list[pytest.Item]) -> list[pytest.Item]:
    """The process and integration tests merged so each tier is handed out at the same pace, unit tests last.

    Process tests mostly spend CPU (interpreters starting), integration tests mostly wait (leases, watches,
    timeouts): one after the other, the run's CPU sat at a third of two cores while the integration tier ran
    alone. Merged, one tier's waits overlap the other's work. Order within each tier is kept (``_rank``).
    """
    tiers = {tier: [i for i in items if _tier(i) == tier] for tier in TIERS}
    slow, waiting = tiers["process"], tiers["integration"]
    merged: list[pytest.Item] = []
    a = b = 0
    while a < len(slow) or b < len(waiting):
        if b >= len(waiting) or (a < len(slow) and a * len(waiting) <= b * len(slow)):
            merged.append(slow[a])
            a += 1
        else:
            merged.append(waiting[b])
            b += 1
    return merged + tiers["unit"]


def _tier(item: pytest.Item) -> str:
    return next(m.name for m in item.iter_markers() if m.name in TIERS)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _status.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """End the process as ``Command.main`` does when threads are still alive.

    Calls abandoned at their deadline (leader election stops waiting on a stalled API by design) can
    leave a daemon thread blocked in a socket; if one writes to stderr while the interpreter shuts down,
    CPython aborts the process after every test has passed. The report is already printed here.
    """
    if _status and threading.active_count() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_status[0])
