"""Versioned component configuration, as k8s.io/component-base/config: the shared config types, their
defaulting and validation, the strict YAML codec with file:line errors, feature gates, and the option groups
that bind these types to flags.
"""

from __future__ import annotations

from componentbase.componentconfig._encode import to_dict, unstructure
from componentbase.componentconfig._errors import DecodeError
from componentbase.componentconfig._featuregate import (
    FeatureGate,
    FeatureGateError,
    FeatureSpec,
    Stage,
    UnknownFeatureError,
)
from componentbase.componentconfig._featuregateoptions import (
    FeatureGateOptions,
)
from componentbase.componentconfig._gotypes import NULL_IS_UNSET, OMIT_EMPTY, Float32, Int32, Int64, pointer
from componentbase.componentconfig._leaderelectionoptions import (
    LeaderElectionOptions,
)
from componentbase.componentconfig._naming import (
    JSON_NAME,
    json_name_of,
)
from componentbase.componentconfig._scheme import Scheme, decode_as, decode_file_as, structure
from componentbase.componentconfig._types import (
    ClientConnectionConfiguration,
    DebuggingConfiguration,
    LeaderElectionConfiguration,
    set_defaults_client_connection_configuration,
    validate_client_connection_configuration,
    validate_leader_election_configuration,
)

__all__ = [
    "JSON_NAME",
    "NULL_IS_UNSET",
    "OMIT_EMPTY",
    "ClientConnectionConfiguration",
    "DebuggingConfiguration",
    "DecodeError",
    "FeatureGate",
    "FeatureGateError",
    "FeatureGateOptions",
    "FeatureSpec",
    "Float32",
    "Int32",
    "Int64",
    "LeaderElectionConfiguration",
    "LeaderElectionOptions",
    "Scheme",
    "Stage",
    "UnknownFeatureError",
    "decode_as",
    "decode_file_as",
    "json_name_of",
    "pointer",
    "set_defaults_client_connection_configuration",
    "structure",
    "to_dict",
    "unstructure",
    "validate_client_connection_configuration",
    "validate_leader_election_configuration",
]
