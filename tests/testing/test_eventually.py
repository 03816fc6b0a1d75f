"""``eventually``: the value it waited for, or an AssertionError that says what it waited for."""

from __future__ import annotations

import itertools

import pytest

from componentbase.testing import eventually

pytestmark = pytest.mark.unit


def test_returns_the_first_truthy_value() -> None:
    answers = iter([0, [], {"ready": True}])
    assert eventually(lambda: next(answers), interval=0) == {"ready": True}


def test_times_out_naming_what_it_waited_for_and_the_last_value() -> None:
    with pytest.raises(AssertionError) as err:
        eventually(lambda: [], timeout=0, what="the node to be Ready")
    assert str(err.value) == "timed out after 0s waiting for the node to be Ready (last value: [])"


def test_names_a_named_condition_by_itself() -> None:
    def pod_running() -> bool:
        return False

    with pytest.raises(AssertionError, match=r"waiting for .*pod_running"):
        eventually(pod_running, timeout=0)


def test_ignored_errors_mean_not_yet_and_the_last_one_is_told() -> None:
    calls: list[int] = []

    def serving() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionRefusedError("not listening yet")
        return "ok"

    def never() -> str:
        raise ConnectionRefusedError("not listening yet")

    assert eventually(serving, interval=0, ignoring=(OSError,)) == "ok"
    with pytest.raises(AssertionError, match=r"last error: ConnectionRefusedError\('not listening yet'\)"):
        eventually(never, timeout=0, ignoring=(OSError,))


def test_other_errors_propagate_at_once() -> None:
    with pytest.raises(KeyError):
        eventually(lambda: {}["missing"], ignoring=(OSError,))


def test_pauses_grow_from_10_ms_to_at_most_100_ms_unless_an_interval_is_given(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr("componentbase.testing._eventually.time.sleep", pauses.append)

    def after(polls: int) -> object:
        answers = iter([False] * polls + [True])
        return lambda: next(answers)

    eventually(after(10), timeout=60)
    assert pauses[0] == pytest.approx(0.01)
    assert all(b > a or b == pytest.approx(0.1) for a, b in itertools.pairwise(pauses))
    assert max(pauses) == pytest.approx(0.1)
    pauses.clear()
    eventually(after(4), timeout=60, interval=0.05)
    assert pauses == [0.05] * 4
