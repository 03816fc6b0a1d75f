"""The staging pipeline of a component: flags and files -> ``Options`` -> ``Config`` -> ``CompletedConfig`` -> ``run``,
and ``Command``, which drives it as kube-scheduler's ``cmd/app`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from componentbase.app._run import run_component


def __getattr__(name: str) -> Any:
    """``run_component`` on first use: it starts serving and leader election, which ``--help`` needs not load."""
    if name == "run_component":
        from componentbase.app._run import run_component  # serving, leader election: not for --help

        globals()[name] = run_component
        return run_component
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
