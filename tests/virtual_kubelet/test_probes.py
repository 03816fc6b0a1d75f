"""The probe worker's thresholds and starting results, as the kubelet's prober counts them."""

from __future__ import annotations

import threading

import pytest

from componentbase.testing import eventually
from componentbase_examples.virtual_kubelet.providers.process.probes import _Worker

pytestmark = pytest.mark.integration  # a worker is a thread probing on its period


def _run(kind: str, outcomes: list[bool], **probe: float) -> list[bool]:
    """The results the worker reports for these probe outcomes (one per period; the last repeats, and the
    worker is stopped once it has asked again twice: by then it has acted on every scripted outcome)."""
    reported: list[bool] = []
    left = list(outcomes)
    repeats = 0
    done = threading.Event()

    def once() -> tuple[bool, str]:
        nonlocal repeats
        if len(left) > 1:
            return left.pop(0), "scripted"
        repeats += 1
        if repeats > 2:
            done.set()
        return left[0], "scripted"

    worker = _Worker(kind, {"periodSeconds": 0.005, **probe}, once, reported.append, "c")
    eventually(done.is_set, what="every scripted outcome to be probed")
    worker.stop.set()
    worker.thread.join(5)
    return reported


def test_readiness_starts_failed_and_needs_success_threshold_successes_in_a_row() -> None:
    assert _run("readiness", [True, False, True, True, True], successThreshold=3, failureThreshold=1) == [True]
    assert _run("readiness", [True, True, False, False, True, True], successThreshold=2, failureThreshold=2) == \
        [True, False, True]
    assert _run("readiness", [False]) == []  # never ready: nothing to report, it started as not ready


def test_liveness_starts_alive_and_fails_after_failure_threshold_failures_in_a_row() -> None:
    assert _run("liveness", [False, False, True, False, False, False], failureThreshold=3) == [False]
    assert _run("liveness", [False, True, False, True]) == []  # the default threshold is 3
