"""componentbase: Kubernetes control-plane components in Python, built the way component-base builds them.

These are the names a component author types; everything else is reached through its package
(``componentbase.cli``, ``.componentconfig``, ``.client``, ``.informers``, ``.workqueue``, ``.events``,
``.leaderelection``, ``.serving``, ``.metrics``, ``.util``, ``.testing``), see ``docs/architecture.md``.
Importing it stays cheap: nothing here imports the ``kubernetes`` client, which loads only when a
component connects to a cluster.
"""

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
