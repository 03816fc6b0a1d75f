"""``--provider-config`` of the process provider, and its checks."""

from __future__ import annotations

import os
import tempfile

import attrs

import componentbase
from componentbase import field

__all__ = ["ProcessConfig", "validate_config"]


@attrs.define(kw_only=True)
class ProcessConfig:
    """Where logs live, what the node advertises, and how restarts back off (the kubelet's 10s..5m)."""

    #: Directory holding each pod's container logs; empty: a folder in the system's temporary directory.
    root: str = ""
    #: Capacity; empty: this machine's CPUs and memory.
    cpu: str = ""
    memory: str = ""
    pods: str = "20"
    restart_backoff: componentbase.Duration = attrs.field(default=componentbase.Duration("10s"),
                                                          converter=componentbase.Duration)
    max_restart_backoff: componentbase.Duration = attrs.field(default=componentbase.Duration("5m"),
                                                              converter=componentbase.Duration)
    #: Stop every container when the virtual kubelet stops; by default they keep running and the next start
    #: takes them up (a kubelet's restart does not restart its pods either).
    stop_containers_on_shutdown: bool = False
    #: How long containers get between SIGTERM and SIGKILL when the virtual kubelet stops them on shutdown.
    shutdown_grace_period: componentbase.Duration = attrs.field(default=componentbase.Duration("5s"),
                                                                converter=componentbase.Duration)

    def root_dir(self, node_name: str) -> str:
        return self.root or os.path.join(tempfile.gettempdir(), f"virtual-kubelet-{node_name}")


def validate_config(cfg: ProcessConfig) -> list[Exception]:
    errs: list[Exception] = []
    if cfg.root and not os.path.isabs(cfg.root):
        errs.append(field.invalid("root", cfg.root, "must be an absolute path"))
    for name in ("cpu", "memory", "pods"):
        value = getattr(cfg, name)
        if value:
            try:
                componentbase.util.parse_quantity(value)
            except componentbase.util.QuantityError as err:
                errs.append(field.invalid(name, value, str(err).split(": ", 1)[-1]))
    if cfg.restart_backoff <= 0:
        errs.append(field.invalid("restartBackoff", cfg.restart_backoff, "must be greater than zero"))
    if cfg.max_restart_backoff < cfg.restart_backoff:
        errs.append(field.invalid("maxRestartBackoff", cfg.max_restart_backoff,
                                  "must not be less than restartBackoff"))
    if cfg.shutdown_grace_period < 0:
        errs.append(field.invalid("shutdownGracePeriod", cfg.shutdown_grace_period, "must not be negative"))
    return errs
