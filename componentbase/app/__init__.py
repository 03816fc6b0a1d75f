"""The staging pipeline of a component: flags and files -> ``Options`` -> ``Config`` -> ``CompletedConfig`` -> ``run``,
and ``Command``, which drives it as kube-scheduler's ``cmd/app`` does.
"""

from __future__ import annotations

from componentbase.app._command import (
    Command,
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
    run_component,
)

__all__ = [
    "Command",
    "CompletedConfig",
    "ComponentOptions",
    "Config",
    "ControllerOptions",
    "Options",
    "controller_command",
    "run_component",
]
