"""The staging pipeline of a component: flags and files -> ``Options`` -> ``Config`` -> ``CompletedConfig`` -> ``run``,
and ``Command``, which drives it as kube-scheduler's ``cmd/app`` does.
"""

from __future__ import annotations

from componentbase.app._command import (
    Command,
    RunFunc,
    print_flags,
)
from componentbase.app._componentoptions import (
    ComponentOptions,
)
from componentbase.app._config import (
    CompletedConfig,
    Config,
)
from componentbase.app._controllercommand import (
    ControllerOptions,
    controller_command,
)
from componentbase.app._options import (
    Options,
)
from componentbase.app._run import (
    WorkFunc,
    run_component,
)

__all__ = [
    "Command",
    "CompletedConfig",
    "ComponentOptions",
    "Config",
    "ControllerOptions",
    "Options",
    "RunFunc",
    "WorkFunc",
    "controller_command",
    "print_flags",
    "run_component",
]
