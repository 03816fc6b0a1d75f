"""The leader election loop, with client-go's semantics and stricter timing.

Safety rests on two clocks that never meet. A candidate judges a holder expired only after
``lease_duration`` on its own monotonic clock since it last saw the record change, and it sees a
renewal no earlier than the server wrote it. The leader counts its deadline from the moment it
*sent* its last successful write, which precedes that server write, and every call it makes is cut
off at the deadline. So the leader's work is told to stop at most ``renew_deadline`` after a write
that others will honour for ``lease_duration`` after they see it: the gap is the safety margin.
"""

from __future__ import annotations

import logging
import random
import threading

import attrs

from componentbase.leaderelection import _registry as registry
from componentbase.leaderelection._config import JITTER_FACTOR, LeaderElectionConfig
from componentbase.leaderelection._leaselock import LockConflict, LockError, LockNotFound
from componentbase.leaderelection._notify import Notifier
from componentbase.leaderelection._record import LeaderElectionRecord, wire_lease_duration
from componentbase.util import jitter

__all__ = ["ElectorThread", "LeaderElectionHealthError", "LeaderElector"]

log = logging.getLogger(__name__)


class LeaderElectionHealthError(RuntimeError):
    """This process believes it leads, but its lease expired longer ago than tolerated."""


class LeaderElector:
    """One candidate for one lease. ``run`` returns once stopped or once leadership is lost."""

    def __init__(self, config: LeaderElectionConfig) -> None:
        config.validate()
        self._config = config
        self._lock = config.lock
        self._identity = config.identity
        self._desc = config.lock.describe()
        self._clock = config.clock
        self._mu = threading.Lock()
        self._observed = LeaderElectionRecord()
        self._observed_time = self._clock.monotonic()
        self._last_renew = float("-inf")
        self._reported_leader = ""
        self._leading = False
        self._running = False
        self._rng = random.Random()
        on_new = config.callbacks.on_new_leader
        self._notifier = Notifier(on_new) if on_new is not None else None
        if config.watchdog is not None:
            config.watchdog.set_leader_election(self)
        self._report_status(False)

    @property
    def config(self) -> LeaderElectionConfig:
        return self._config

    @property
    def identity(self) -> str:
        return self._identity

    # --- observation -------------------------------------------------------------------------

    def get_leader(self) -> str:
        """The last observed holder ("" if none yet); informational, as in client-go."""
        with self._mu:
            return self._observed.holder_identity

    def is_leader(self) -> bool:
        """Whether the last observed record names this candidate (client-go's ``IsLeader``).

        It stays true after a failed renewal until another record is observed, which is what lets
        the health check notice a leader that should have died. Gate work on the stop event (or
        :meth:`is_leading`) instead.
        """
        return self.get_leader() == self._identity

    def is_leading(self) -> bool:
        """True only between acquiring the lease and the moment leadership ends."""
        with self._mu:
            return self._leading

    def leading_until(self) -> float:
        """The monotonic time until which this replica may act as leader; ``-inf`` when it does not lead.

        It is the last successful renewal (when its request was sent) plus ``renew_deadline``: past it the
        elector gives up, and others may take over once the lease expires. client-go does not fence
        writes on it; ``componentbase.controller.Manager`` does.
        """
        with self._mu:
            return self._last_renew + self._config.renew_deadline if self._leading else float("-inf")

    def check(self, max_tolerable_expired: float) -> None:
        """Raise if we believe we lead but our lease expired more than the tolerance ago."""
        with self._mu:
            mine = self._observed.holder_identity == self._identity
            since = self._clock.monotonic() - self._observed_time
        if not mine:
            return
        expired_for = since - self._config.lease_duration
        if expired_for > max_tolerable_expired:
            raise LeaderElectionHealthError(
                f"failed election to renew leadership on lease {self._config.lease_name}: lease expired "
                f"{expired_for:.3f}s ago (tolerance {max_tolerable_expired:g}s)"
            )

    def _snapshot(self) -> tuple[LeaderElectionRecord, float]:
        with self._mu:
            return self._observed, self._observed_time

    def _observe(self, record: LeaderElectionRecord) -> None:
        """A record read from the server; only a change restarts the local expiry clock."""
        with self._mu:
            if record != self._observed:
                self._observed = record
                self._observed_time = self._clock.monotonic()

    def _wrote(self, record: LeaderElectionRecord, sent_at: float) -> None:
        with self._mu:
            self._observed = record
            self._observed_time = self._clock.monotonic()
            if record.holder_identity == self._identity:
                self._last_renew = sent_at

    def _expiry(self, record: LeaderElectionRecord) -> float:
        """How long to honour a holder's record.

        The wire only carries whole seconds; when the record's value is what our own duration rounds
        to, we assume a peer with our config and use our exact (possibly sub-second) duration.
        """
        own = self._config.lease_duration
        if record.lease_duration_seconds == wire_lease_duration(own):
            return own
        return float(record.lease_duration_seconds)

    def _held_by_other(self, record: LeaderElectionRecord, observed_at: float) -> bool:
        if not record.holder_identity or record.holder_identity == self._identity:
            return False
        return self._clock.monotonic() < observed_at + self._expiry(record)

    def _maybe_report_transition(self) -> None:
        with self._mu:
            holder = self._observed.holder_identity
            if not holder or holder == self._reported_leader:
                return
            self._reported_leader = holder
        log.info("new leader elected: %s", holder)
        if self._notifier is not None:
            self._notifier.notify(holder)

    def _report_status(self, leading: bool) -> None:
        with self._mu:
            self._leading = leading
        observer = self._config.status_observer
        if observer is None:
            return
        try:
            observer(self._config.lease_name, leading)
        except Exception:
            log.exception("leader status observer failed")

    # --- one attempt -------------------------------------------------------------------------

    def _budget(self, deadline: float | None) -> float:
        timeout = self._config.effective_request_timeout
        if deadline is not None:
            timeout = min(timeout, deadline - self._clock.monotonic())
        return timeout

    def _write(self, record: LeaderElectionRecord, deadline: float | None, create: bool = False) -> None:
        sent_at = self._clock.monotonic()
        if create:
            self._lock.create(record, self._budget(deadline))
        else:
            self._lock.update(record, self._budget(deadline))
        self._wrote(record, sent_at)

    def _try_acquire_or_renew(self, deadline: float | None) -> bool:
        """One client-go ``tryAcquireOrRenew``; ``deadline`` is set while leading."""
        now = self._clock.now()
        desired = LeaderElectionRecord(
            holder_identity=self._identity,
            lease_duration_seconds=wire_lease_duration(self._config.lease_duration),
            acquire_time=now,
            renew_time=now,
        )
        observed, _ = self._snapshot()
        if deadline is not None and observed.holder_identity == self._identity:
            # Fast path: one PUT on the Lease we last wrote; a conflict falls back to reading it.
            mine = attrs.evolve(desired, acquire_time=observed.acquire_time,
                                leader_transitions=observed.leader_transitions)
            try:
                self._write(mine, deadline)
                return True
            except LockError as exc:
                log.debug("failed to update lease %s optimistically, falling back to slow path: %s",
                          self._desc, exc)
        try:
            old = self._lock.get(self._budget(deadline))
        except LockNotFound:
            try:
                self._write(desired, deadline, create=True)
                return True
            except LockConflict:
                log.debug("lease %s was created by another candidate first", self._desc)
                return False
            except LockError as exc:
                log.error("error initially creating lease lock %s: %s", self._desc, exc)
                return False
        except LockError as exc:
            log.error("error retrieving resource lock %s: %s", self._desc, exc)
            return False
        self._observe(old)
        _, observed_at = self._snapshot()
        if self._held_by_other(old, observed_at):
            log.debug("lease %s is held by %s and has not yet expired", self._desc, old.holder_identity)
            return False
        if old.holder_identity == self._identity:
            desired = attrs.evolve(desired, acquire_time=old.acquire_time,
                                   leader_transitions=old.leader_transitions)
        else:
            desired = attrs.evolve(desired, leader_transitions=old.leader_transitions + 1)
        try:
            self._write(desired, deadline)
        except LockConflict:
            log.debug("lease %s was updated by another candidate first", self._desc)
            return False
        except LockError as exc:
            log.error("failed to update lease %s: %s", self._desc, exc)
            return False
        return True

    # --- the loops ---------------------------------------------------------------------------

    def _jittered(self) -> float:
        return jitter(self._config.retry_period, JITTER_FACTOR, self._rng)

    def _acquire(self, stop: threading.Event) -> bool:
        log.info("attempting to acquire leader lease %s...", self._desc)
        while not stop.is_set():
            acquired = self._try_acquire_or_renew(None)
            self._maybe_report_transition()
            if acquired:
                self._report_status(True)
                log.info("successfully acquired lease %s", self._desc)
                return True
            log.debug("failed to acquire lease %s", self._desc)
            self._clock.wait(stop, self._next_attempt())
        return False

    def _next_attempt(self) -> float:
        """A jittered retry period, or less if the holder's lease expires before it: then right after.

        client-go waits whole jittered periods, so a standby takes over up to 1.2 retry periods after the
        expiry it judged; waking at the expiry itself takes that away (the expiry is still judged from when
        this candidate saw the record change, on its own clock).
        """
        wait = self._jittered()
        record, observed_at = self._snapshot()
        if record.holder_identity and record.holder_identity != self._identity:
            until_expiry = observed_at + self._expiry(record) - self._clock.monotonic()
            wait = min(wait, max(0.0, until_expiry) + 0.001)
        return wait

    def _renew(self, stop: threading.Event, work_stop: threading.Event) -> bool:
        """Renew every retry_period; True when asked to stop, False (work already told) when lost."""
        period = self._config.retry_period
        reason = "timed out waiting for the condition"
        while True:
            with self._mu:
                deadline = self._last_renew + self._config.renew_deadline
            wake = min(self._clock.monotonic() + period, deadline)
            if self._clock.wait(stop, wake - self._clock.monotonic()):
                work_stop.set()
                return True
            if self._clock.monotonic() >= deadline:
                break
            renewed = self._try_acquire_or_renew(deadline)
            self._maybe_report_transition()
            if renewed:
                log.debug("successfully renewed lease %s", self._desc)
                continue
            holder = self.get_leader()
            if holder and holder != self._identity:
                reason = f"lease is held by {holder}"
                break
            if self._clock.monotonic() >= deadline:
                break
        work_stop.set()
        self._report_status(False)
        log.info("failed to renew lease %s: %s", self._desc, reason)
        return False

    def _release(self) -> bool:
        """client-go's ReleaseOnCancel: empty holder, 1s duration, so a candidate takes over at once."""
        deadline = self._clock.monotonic() + self._config.renew_deadline
        observed, _ = self._snapshot()
        while observed.holder_identity == self._identity:
            now = self._clock.now()
            released = LeaderElectionRecord(lease_duration_seconds=1, acquire_time=now, renew_time=now,
                                            leader_transitions=observed.leader_transitions)
            try:
                self._write(released, deadline)
                log.info("released lease %s", self._desc)
                return True
            except LockConflict:
                log.debug("conflict when releasing lease %s, retrying", self._desc)
            except LockError as exc:
                log.error("failed to release lease %s: %s", self._desc, exc)
                return False
            try:
                self._observe(self._lock.get(self._budget(deadline)))
            except LockError as exc:
                log.error("error retrieving resource lock %s: %s", self._desc, exc)
                return False
            observed, _ = self._snapshot()
        return True

    def _run_work(self, work_stop: threading.Event) -> None:
        try:
            with registry.leading(self._lock):  # an elector its work starts on this Lease is refused
                self._config.callbacks.on_started_leading(work_stop)
        except Exception:
            log.exception("on_started_leading for lease %s failed", self._desc)

    def _lead(self, stop: threading.Event) -> None:
        work_stop = threading.Event()
        worker: threading.Thread | None = None
        if not stop.is_set():
            worker = threading.Thread(target=self._run_work, args=(work_stop,),
                                      name="leaderelection-leading", daemon=True)
            worker.start()
        if self._renew(stop, work_stop):
            self._report_status(False)
        work_stop.set()
        grace = self._config.effective_stop_grace
        if worker is not None:
            worker.join(grace)
            if worker.is_alive():
                log.error("on_started_leading for lease %s did not return within %gs of losing leadership; "
                          "not releasing the lease", self._desc, grace)
                return
        if self._config.release_on_cancel:
            self._release()

    def run(self, stop: threading.Event) -> None:
        """Campaign, lead until ``stop`` is set or the lease is lost, then return. Never exits the process.
        An elector that could never lead, or would lead twice, is refused: ``DuplicateElectorError``."""
        self._claim()
        self._campaign(stop)

    def _claim(self) -> None:
        with self._mu:
            if self._running:
                raise RuntimeError("this LeaderElector is already running")
            registry.claim(self._lock, self._identity)
            self._running = True

    def _campaign(self, stop: threading.Event) -> None:
        log.info("leader election candidate %s for lease %s", self._identity, self._desc)
        try:
            if self._acquire(stop):
                self._lead(stop)
        finally:
            with self._mu:
                self._running = False
            registry.release(self._lock, self._identity)
            try:
                self._config.callbacks.on_stopped_leading()
            except Exception:
                log.exception("on_stopped_leading for lease %s failed", self._desc)

    def run_in_thread(self, stop: threading.Event | None = None) -> ElectorThread:
        """:meth:`run` on a daemon thread (stop it with ``thread.stop()``), refused here as ``run`` refuses."""
        self._claim()
        (thread := ElectorThread(self, stop or threading.Event())).start()
        return thread


class ElectorThread(threading.Thread):
    """:meth:`LeaderElector.run` on its own thread, with its stop event at hand."""

    def __init__(self, elector: LeaderElector, stop: threading.Event) -> None:
        super().__init__(name=f"leaderelection-{elector.identity}", daemon=True)
        self.elector = elector
        self.stop_event = stop

    def run(self) -> None:
        self.elector._campaign(self.stop_event)  # claimed by run_in_thread, in its caller's thread

    def stop(self, timeout: float | None = None) -> bool:
        """Ask the elector to stop (releasing if configured) and wait; True if it has returned."""
        self.stop_event.set()
        self.join(timeout)
        return not self.is_alive()
