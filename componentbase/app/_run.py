"""Running a completed component: its work, gated by leader election when the config asks for it.

As kube-scheduler's ``Run``: with ``leaderElect`` the work starts only once this replica leads, losing the
lease stops the work and the process exits non-zero, and a requested stop releases the lease so another
replica takes over at once.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from componentbase.app._config import CompletedConfig
from componentbase.componentconfig import validate_leader_election_configuration
from componentbase.leaderelection import (
    DuplicateElectorError,
    HealthzAdaptor,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
)
from componentbase.serving import start_serving
from componentbase.util import field

__all__ = ["WorkFunc", "run_component"]

log = logging.getLogger("componentbase.app._run")

WorkFunc = Callable[[CompletedConfig[Any], threading.Event], "int | None"]

#: How often the main thread looks up from waiting, so signals are handled promptly.
_POLL = 0.2

#: How long past its lease's expiry a leader that has not stopped counts as unhealthy (kube-scheduler's 20s).
_WATCHDOG_TIMEOUT = 20.0


def run_component(completed: CompletedConfig[Any], work: WorkFunc, stop: threading.Event, *,
                  err: TextIO | None = None) -> int:
    """Run ``work`` until ``stop``; the exit code is what it returns (``None`` is 0).

    An invalid leader-election config is refused first, one ``Error:`` line per problem on ``err`` (stderr by
    default) and exit 1, whether or not the component validated it.

    With ``secure_serving`` configured, serving starts first and stops last, so health answers while this
    replica is only a candidate, and during its work.
    """
    if not isinstance(completed, CompletedConfig):
        raise TypeError("run needs a CompletedConfig: call Config.complete() first")
    config = completed.config
    le = config.leader_election
    leading = le is not None and le.leader_elect
    if le is not None:
        # Checked here, not only by components that remember to: a bad lease config is a one-line error per
        # problem and exit 1, never a traceback from the elector.
        errors = validate_leader_election_configuration(le, field.Path("leaderElection"))
        for error in errors:
            (err or sys.stderr).write(f"Error: {error}\n")
        if errors:
            return 1
    watchdog = None
    server = None
    if config.secure_serving is not None:
        watchdog = HealthzAdaptor(_WATCHDOG_TIMEOUT) if leading else None
        if watchdog is not None:
            # Served with the config's checks; a work that elects by itself (a Manager) finds it there and
            # attaches its own elector to it.
            config.healthz_checks = [*config.healthz_checks, watchdog]
        info = config.secure_serving
        try:
            server = start_serving(config, stop)
        except OSError as err:
            log.error("failed to listen on %s:%d: %s", info.bind_address, info.port, err.strerror or err)
            return 1
    try:
        # A work marked ``elects_leader`` elects by itself (its Manager, before which its caches sync: a hot
        # standby); any other is run while this replica leads, and a Manager it builds runs under that election.
        if leading and not getattr(work, "elects_leader", False):
            return _run_leading(completed, work, stop, watchdog)
        return _exit_code(work(completed, stop))
    finally:
        if server is not None:
            server.stop()


def _exit_code(code: int | None) -> int:
    return 0 if code is None else int(code)


def _run_leading(completed: CompletedConfig[Any], work: WorkFunc, stop: threading.Event,
                 watchdog: HealthzAdaptor | None = None) -> int:
    config = completed.config
    elector_stop = threading.Event()
    returned: list[int | None] = []
    lost = threading.Event()

    def started_leading(work_stop: threading.Event) -> None:
        try:
            returned.append(work(completed, work_stop))
        finally:
            if work_stop.is_set() and not stop.is_set():
                lost.set()
            elector_stop.set()  # the work ended (by itself or told to): step down

    callbacks = LeaderCallbacks(on_started_leading=started_leading, on_stopped_leading=lambda: None)
    observer = config.metrics.leader_status if config.metrics is not None else None
    lease_client = config.leader_election_client or config.client
    le_config = LeaderElectionConfig.from_configuration(config.leader_election, lease_client, callbacks,
                                                        release_on_cancel=True, watchdog=watchdog,
                                                        status_observer=observer)
    elector = LeaderElector(le_config)
    # A Manager the work builds from this config runs under this election, never a second one on the Lease.
    config.leader_elector = elector
    try:
        thread = elector.run_in_thread(elector_stop)
    except DuplicateElectorError as err:  # it would wait forever for a Lease its own process holds
        log.error("%s", err)
        return 1
    while thread.is_alive() and not stop.wait(_POLL):
        pass
    thread.stop()
    if config.leader_election_client is not None:
        config.leader_election_client.close()  # only the lease used it; its connections go with it
    if stop.is_set():
        log.info("Requested to terminate, exiting")
        return _exit_code(returned[0]) if returned else 0
    if lost.is_set() or not returned:
        log.error("leaderelection lost")
        return 1
    return _exit_code(returned[0])
