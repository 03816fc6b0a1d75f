"""componentbase: Kubernetes control-plane components in Python, built the way component-base builds them.

The public API lives here. Importing it stays cheap: nothing below imports the ``kubernetes`` client,
which loads only when a component connects to a cluster.
"""

__version__ = "0.1.0"

from componentbase import configz, events, informers, metrics, quantity, serving, version, workqueue
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
    validate_client_connection_configuration,
    validate_leader_election_configuration,
)
from componentbase.duration import Duration, format_duration, parse_duration
from componentbase.events import EventBroadcaster, EventRecorder
from componentbase.featuregate import FeatureGate, FeatureSpec, Stage
from componentbase.fileutil import write_atomic
from componentbase.informers import (
    DeletedFinalStateUnknown,
    Indexer,
    InformerFactory,
    ListWatch,
    SharedInformer,
    deleted_object,
    meta_namespace_key,
)
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
    "structure",
    "validate_client_connection_configuration",
    "validate_leader_election_configuration",
    "version",
    "workqueue",
    "write_atomic",
]
