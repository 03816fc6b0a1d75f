"""componentbase: Kubernetes control-plane components in Python, built the way component-base builds them.

The public API lives here. Importing it stays cheap: nothing below imports the ``kubernetes`` client,
which loads only when a component connects to a cluster.
"""

__version__ = "0.1.0"

import importlib
from typing import TYPE_CHECKING, Any

from componentbase import configz, metrics, quantity, serving, version
from componentbase.appconfig import CompletedConfig, Config
from componentbase.cli.command import Command, RunFunc
from componentbase.cli.flags import (
    BOOL,
    DURATION,
    FLOAT,
    INT,
    MAP_STRING_BOOL,
    STRING,
    STRINGS,
    Flag,
    FlagError,
    FlagSet,
    FlagType,
    NamedFlagSets,
)
from componentbase.client import ClientConfigError, new_api_client
from componentbase.config.naming import JSON_NAME
from componentbase.config.scheme import DecodeError, Scheme, decode_file_as, structure
from componentbase.config.types import (
    ClientConnectionConfiguration,
    DebuggingConfiguration,
    LeaderElectionConfiguration,
    set_defaults_client_connection_configuration,
    validate_client_connection_configuration,
    validate_leader_election_configuration,
)
from componentbase.duration import Duration, format_duration, parse_duration
from componentbase.featuregate import FeatureGate, FeatureSpec, Stage
from componentbase.fileutil import write_atomic
from componentbase.logs import LogsOptions, V
from componentbase.options.base import Options, flag
from componentbase.options.component import ComponentOptions
from componentbase.options.featuregate import FeatureGateOptions
from componentbase.options.leaderelection import LeaderElectionOptions
from componentbase.plugins import hookimpl, hookspec
from componentbase.quantity import QuantityError, parse_quantity
from componentbase.serving import (
    AuthenticationOptions,
    AuthorizationOptions,
    HealthChecker,
    MetricsOptions,
    NamedCheck,
    SecureServingOptions,
    ServingOptions,
)
from componentbase.validation import field
from componentbase.validation.field import AggregateError, FieldError

# The controller machinery loads on first use: a component's --help need not pay for it.
_LAZY = {
    "events": "componentbase.events",
    "EventBroadcaster": "componentbase.events",
    "EventRecorder": "componentbase.events",
    "unvalidated": "componentbase.fastcall",
    "informers": "componentbase.informers",
    "DeletedFinalStateUnknown": "componentbase.informers",
    "Indexer": "componentbase.informers",
    "InformerFactory": "componentbase.informers",
    "ListWatch": "componentbase.informers",
    "SharedInformer": "componentbase.informers",
    "deleted_object": "componentbase.informers",
    "meta_namespace_key": "componentbase.informers",
    "workqueue": "componentbase.workqueue",
    "BucketRateLimiter": "componentbase.workqueue",
    "ItemExponentialFailureRateLimiter": "componentbase.workqueue",
    "MaxOfRateLimiter": "componentbase.workqueue",
    "RateLimitingQueue": "componentbase.workqueue",
    "ShutDown": "componentbase.workqueue",
    "WorkQueue": "componentbase.workqueue",
    "default_controller_rate_limiter": "componentbase.workqueue",
    "run_workers": "componentbase.workqueue",
}

if TYPE_CHECKING:
    from componentbase import events, informers, workqueue
    from componentbase.events import EventBroadcaster, EventRecorder
    from componentbase.fastcall import unvalidated
    from componentbase.informers import (
        DeletedFinalStateUnknown,
        Indexer,
        InformerFactory,
        ListWatch,
        SharedInformer,
        deleted_object,
        meta_namespace_key,
    )
    from componentbase.workqueue import (
        BucketRateLimiter,
        ItemExponentialFailureRateLimiter,
        MaxOfRateLimiter,
        RateLimitingQueue,
        ShutDown,
        WorkQueue,
        default_controller_rate_limiter,
        run_workers,
    )


def __getattr__(name: str) -> Any:
    """Load a lazily exported name (PEP 562) and keep it, so the next access is a plain lookup."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'componentbase' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    value = module if module_name.endswith("." + name) else getattr(module, name)
    globals()[name] = value
    return value


__all__ = [
    "BOOL",
    "DURATION",
    "FLOAT",
    "INT",
    "JSON_NAME",
    "MAP_STRING_BOOL",
    "STRING",
    "STRINGS",
    "AggregateError",
    "AuthenticationOptions",
    "AuthorizationOptions",
    "BucketRateLimiter",
    "ClientConfigError",
    "ClientConnectionConfiguration",
    "Command",
    "CompletedConfig",
    "ComponentOptions",
    "Config",
    "DebuggingConfiguration",
    "DecodeError",
    "DeletedFinalStateUnknown",
    "Duration",
    "EventBroadcaster",
    "EventRecorder",
    "FeatureGate",
    "FeatureGateOptions",
    "FeatureSpec",
    "FieldError",
    "Flag",
    "FlagError",
    "FlagSet",
    "FlagType",
    "HealthChecker",
    "Indexer",
    "InformerFactory",
    "ItemExponentialFailureRateLimiter",
    "LeaderElectionConfiguration",
    "LeaderElectionOptions",
    "ListWatch",
    "LogsOptions",
    "MaxOfRateLimiter",
    "MetricsOptions",
    "NamedCheck",
    "NamedFlagSets",
    "Options",
    "QuantityError",
    "RateLimitingQueue",
    "RunFunc",
    "Scheme",
    "SecureServingOptions",
    "ServingOptions",
    "SharedInformer",
    "ShutDown",
    "Stage",
    "V",
    "WorkQueue",
    "configz",
    "decode_file_as",
    "default_controller_rate_limiter",
    "deleted_object",
    "events",
    "field",
    "flag",
    "format_duration",
    "hookimpl",
    "hookspec",
    "informers",
    "meta_namespace_key",
    "metrics",
    "new_api_client",
    "parse_duration",
    "parse_quantity",
    "quantity",
    "run_workers",
    "serving",
    "set_defaults_client_connection_configuration",
    "structure",
    "unvalidated",
    "validate_client_connection_configuration",
    "validate_leader_election_configuration",
    "version",
    "workqueue",
    "write_atomic",
]
