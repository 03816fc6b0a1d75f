"""Backoff with client-go's ``wait.Backoff`` semantics, retries and waits: all on a FakeClock, no sleeping."""

from __future__ import annotations

import random
import threading

import pytest

from componentbase.testing import FakeClock
from componentbase.util import Backoff, exponential_backoff, exponential_delay, jitter, retry_on_error, wait_until


@pytest.mark.unit
def test_steps_grow_by_the_factor_until_the_cap_then_stay() -> None:
    b = Backoff(duration=1.0, factor=2.0, jitter=0.0, steps=10, cap=5.0)
    assert [b.step() for _ in range(6)] == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    assert b.steps == 0  # reaching the cap ends the steps, as in client-go


@pytest.mark.unit
def test_without_steps_the_delay_does_not_grow() -> None:
    b = Backoff(duration=1.0, factor=2.0, jitter=0.0, steps=2, cap=0.0)
    assert [b.step() for _ in range(4)] == [1.0, 2.0, 4.0, 4.0]
    constant = Backoff(duration=0.5, factor=0.0, jitter=0.0, steps=3)
    assert [constant.step() for _ in range(4)] == [0.5, 0.5, 0.5, 0.5]


@pytest.mark.unit
def test_jitter_stretches_each_delay_within_bounds() -> None:
    b = Backoff(duration=1.0, factor=2.0, jitter=0.5, cap=8.0, rng=random.Random(3))
    delays = [b.step() for _ in range(200)]
    bases = [1.0, 2.0, 4.0] + [8.0] * 197
    assert all(base <= d <= base * 1.5 for base, d in zip(bases, delays, strict=True))
    assert len({round(d, 6) for d in delays[5:]}) > 100  # really random, not a constant stretch
    assert all(1.0 <= jitter(1.0, 0.0) <= 2.0 for _ in range(50))  # a factor of 0 means 1, as client-go's Jitter


@pytest.mark.unit
def test_reset_and_independent_copies() -> None:
    b = Backoff(duration=1.0, factor=3.0, jitter=0.0, steps=3)
    twin = b.copy()
    assert [b.step(), b.step()] == [1.0, 3.0]
    assert twin.step() == 1.0  # stepping one does not step the other
    b.reset()
    assert (b.duration, b.steps, b.step()) == (1.0, 3, 1.0)


@pytest.mark.unit
@pytest.mark.parametrize("kw", [{"duration": -1.0}, {"factor": -1.0}, {"jitter": -0.1}, {"cap": -1.0}, {"steps": -1}])
def test_negative_settings_are_refused(kw: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="backoff needs duration, factor, jitter, cap and steps of at least 0"):
        Backoff(**kw)  # type: ignore[arg-type]


@pytest.mark.unit
def test_exponential_delay_never_overflows() -> None:
    assert [exponential_delay(0.5, n, 3.0) for n in range(-1, 5)] == [0.5, 0.5, 1.0, 2.0, 3.0, 3.0]
    assert exponential_delay(0.005, 100_000, 1000.0) == 1000.0


@pytest.mark.unit
def test_exponential_backoff_checks_up_to_steps_times() -> None:
    clock = FakeClock()
    checks: list[float] = []
    never = Backoff(duration=1.0, factor=2.0, jitter=0.0, steps=4, clock=clock)
    assert not exponential_backoff(lambda: bool(checks.append(clock.monotonic())), never)
    assert [t - checks[0] for t in checks] == [0.0, 1.0, 3.0, 7.0]
    assert never.steps == 4  # the caller's backoff is not stepped
    third = iter([False, False, True])
    assert exponential_backoff(lambda: next(third), never)


@pytest.mark.integration
def test_exponential_backoff_ends_when_stopped() -> None:
    stop = threading.Event()
    calls: list[int] = []

    def check() -> bool:
        calls.append(1)
        stop.set()
        return False

    assert not exponential_backoff(check, Backoff(duration=1.0, clock=FakeClock()), stop)
    assert calls == [1]


@pytest.mark.unit
def test_retry_on_error_retries_what_is_retriable() -> None:
    clock = FakeClock()
    results = iter([KeyError("a"), KeyError("b"), "done"])

    def flaky() -> str:
        r = next(results)
        if isinstance(r, Exception):
            raise r
        return r

    backoff = Backoff(duration=0.1, factor=2.0, jitter=0.0, steps=5, clock=clock)
    assert retry_on_error(backoff, lambda e: isinstance(e, KeyError), flaky) == "done"
    assert clock.waits == pytest.approx([0.1, 0.2])


@pytest.mark.unit
def test_retry_on_error_raises_the_last_or_the_first_unretriable_error() -> None:
    errors = iter([KeyError(1), KeyError(2), KeyError(3), KeyError(4)])

    def fails() -> None:
        raise next(errors)

    with pytest.raises(KeyError, match="3"):
        retry_on_error(Backoff(duration=0.1, steps=3, clock=FakeClock()), lambda e: True, fails)
    with pytest.raises(KeyError, match="4"):
        retry_on_error(Backoff(duration=0.1, steps=3, clock=FakeClock()), lambda e: False, fails)


@pytest.mark.integration
def test_wait_until_polls_on_the_clock_and_honours_stop_and_timeout() -> None:
    clock = FakeClock()
    start = clock.monotonic()
    assert wait_until(lambda: clock.monotonic() - start >= 1.0, timeout=5.0, interval=0.25, clock=clock)
    assert clock.monotonic() - start == pytest.approx(1.0)
    assert not wait_until(lambda: False, timeout=2.0, interval=0.5, clock=clock)
    assert clock.monotonic() - start == pytest.approx(3.0)
    stop = threading.Event()
    stop.set()
    assert not wait_until(lambda: False, stop, clock=clock)  # no timeout, but stopped: at once
    assert wait_until(lambda: True, stop, clock=clock)  # already true wins over stop


@pytest.mark.integration
def test_backoff_wait_honours_a_longer_retry_after() -> None:
    clock = FakeClock()
    b = Backoff(duration=0.5, factor=2.0, jitter=0.0, clock=clock)
    stop = threading.Event()
    assert not b.wait(stop, at_least=3.0)
    assert not b.wait(stop)
    assert clock.waits == [3.0, 1.0]
