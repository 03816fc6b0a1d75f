"""``python -m componentbase_examples.scheduler``: the example kube-scheduler."""

from __future__ import annotations

import functools
import logging
import sys
import threading
from collections.abc import Iterable
from typing import Any

import pluggy

import componentbase
from componentbase_examples.scheduler.interface import ENTRY_POINT_GROUP, SchedulerHooks
from componentbase_examples.scheduler.options import SchedulerOptions
from componentbase_examples.scheduler.profiles import ProfileValidator

log = logging.getLogger("componentbase_examples.scheduler")

LONG = """The Kubernetes scheduler is a control plane process which assigns Pods to Nodes. The scheduler
determines which Nodes are valid placements for each Pod in the scheduling queue according to constraints
and available resources. The scheduler then ranks each valid Node and binds the Pod to a suitable Node."""


def run(options: SchedulerOptions, completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
    if options.simulation.dry_run:
        from componentbase_examples.scheduler.simulate import dry_run

        cfg = completed.config
        assert cfg.plugins is not None
        return dry_run(options.simulation.dry_run, cfg.component_config, cfg.plugins, sys.stdout, sys.stderr)
    from componentbase_examples.scheduler import scheduler

    max_in_unschedulable = float(options.deprecated.pod_max_in_unschedulable_pods_duration)
    return scheduler.run(completed, stop, max_in_unschedulable=max_in_unschedulable)


class DefaultPlugins:
    """Registers the default plugins with the command's plugin manager once its options are validated (before
    the profiles are), not when the command is built: none adds a flag, and ``--help`` and ``--version`` need
    not import them (~25 ms). A plugin pluggy refuses is reported as a validation error."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm
        self.error: Exception | None = None
        self.loaded = False

    @componentbase.hookimpl(tryfirst=True)
    def componentbase_validate(self, options: Any) -> list[Exception]:
        if not self.loaded:
            self.loaded = True
            from componentbase_examples.scheduler.registry import DEFAULT_PLUGINS  # ~25 ms: not for --help

            try:
                for plugin in DEFAULT_PLUGINS:
                    self.pm.register(plugin)
            except (pluggy.PluginValidationError, ValueError) as e:
                self.error = e
        return [self.error] if self.error is not None else []


def new_command(plugins: Iterable[object] = ()) -> componentbase.Command:
    """The scheduler's command; ``plugins`` are scheduler plugins a program adds to the default ones."""
    options = SchedulerOptions()
    work = functools.partial(run, options)
    work.elects_leader = True  # type: ignore[attr-defined]  # its Manager elects: run_component must not
    command = componentbase.Command("kube-scheduler", options, work, long=LONG, plugins=plugins,
                                    hookspecs=[SchedulerHooks], entry_point_group=ENTRY_POINT_GROUP)
    command.plugins.register(DefaultPlugins(command.plugins))
    command.plugins.register(ProfileValidator(command.plugins))
    return command


if __name__ == "__main__":
    new_command().main()
