"""componentbase: Kubernetes control-plane components in Python, built the way component-base builds them.

These are the names a component author types; everything else is reached through its package
(``componentbase.cli``, ``.componentconfig``, ``.client``, ``.informers``, ``.workqueue``, ``.events``,
``.leaderelection``, ``.serving``, ``.metrics``, ``.util``, ``.testing``), see ``docs/architecture.md``.
Importing it stays cheap: nothing here imports the ``kubernetes`` client, which loads only when a
component connects to a cluster.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from componentbase.app import (
        Command,
        CompletedConfig,
        ComponentOptions,
        Config,
        Options,
        controller_command,
        run_component,
    )
    from componentbase.cli import FlagError, flag
    from componentbase.client import ClientConfigError, new_api_client
    from componentbase.componentconfig import (
        ClientConnectionConfiguration,
        DebuggingConfiguration,
        DecodeError,
        FeatureGate,
        FeatureGateOptions,
        LeaderElectionConfiguration,
        LeaderElectionOptions,
        Scheme,
    )
    from componentbase.logs import LogsOptions, V
    from componentbase.serving import SecureServingOptions, ServingOptions
    from componentbase.util import Duration, field, hookimpl, hookspec
    from componentbase.util.field import AggregateError, FieldError
    from componentbase.util.version import __version__

#: Where each re-exported name lives. They load on first use (PEP 562), so a process that imports only a
#: package of the library (``componentbase.testing``'s API server, the event sender's child) does not pay
#: for ``app``, ``serving`` and the rest (~40-50 ms of CPU).
_EXPORTS = {
    "Command": "componentbase.app",
    "CompletedConfig": "componentbase.app",
    "ComponentOptions": "componentbase.app",
    "Config": "componentbase.app",
    "Options": "componentbase.app",
    "controller_command": "componentbase.app",
    "run_component": "componentbase.app",
    "FlagError": "componentbase.cli",
    "flag": "componentbase.cli",
    "ClientConfigError": "componentbase.client",
    "new_api_client": "componentbase.client",
    "ClientConnectionConfiguration": "componentbase.componentconfig",
    "DebuggingConfiguration": "componentbase.componentconfig",
    "DecodeError": "componentbase.componentconfig",
    "FeatureGate": "componentbase.componentconfig",
    "FeatureGateOptions": "componentbase.componentconfig",
    "LeaderElectionConfiguration": "componentbase.componentconfig",
    "LeaderElectionOptions": "componentbase.componentconfig",
    "Scheme": "componentbase.componentconfig",
    "LogsOptions": "componentbase.logs",
    "V": "componentbase.logs",
    "SecureServingOptions": "componentbase.serving",
    "ServingOptions": "componentbase.serving",
    "Duration": "componentbase.util",
    "field": "componentbase.util",
    "hookimpl": "componentbase.util",
    "hookspec": "componentbase.util",
    "AggregateError": "componentbase.util.field",
    "FieldError": "componentbase.util.field",
    "__version__": "componentbase.util.version",
}


def __getattr__(name: str) -> Any:
    """A re-exported name, or a package of the library (``componentbase.componentconfig``), loaded on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        if name.startswith("_"):
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        try:
            value: Any = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "AggregateError",
    "ClientConfigError",
    "ClientConnectionConfiguration",
    "Command",
    "CompletedConfig",
    "ComponentOptions",
    "Config",
    "DebuggingConfiguration",
    "DecodeError",
    "Duration",
    "FeatureGate",
    "FeatureGateOptions",
    "FieldError",
    "FlagError",
    "LeaderElectionConfiguration",
    "LeaderElectionOptions",
    "LogsOptions",
    "Options",
    "Scheme",
    "SecureServingOptions",
    "ServingOptions",
    "V",
    "__version__",
    "controller_command",
    "field",
    "flag",
    "hookimpl",
    "hookspec",
    "new_api_client",
    "run_component",
]
