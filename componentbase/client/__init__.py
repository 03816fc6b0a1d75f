"""The one seam to the official ``kubernetes`` client: building an ``ApiClient`` (kubeconfig, in-cluster),
client-side rate limiting, reads and writes of any kind (``ObjectClient``), API error classification and
retries, Kubernetes timestamps (``metav1.Time``, ``MicroTime``) and request metrics.

Importing this package does not import ``kubernetes``; building a client does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from componentbase.client._conflicterror import Conflict

from componentbase.client._build import (
    ClientConfigError,
    new_api_client,
)
from componentbase.client._conflict import (
    FieldConflict,
)
from componentbase.client._errors import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRY,
    CallFailure,
    ThrottledTimeout,
    describe,
    is_already_exists,
    is_bad_request,
    is_conflict,
    is_connection_error,
    is_forbidden,
    is_gone,
    is_internal_error,
    is_invalid,
    is_not_found,
    is_resource_expired,
    is_server_timeout,
    is_service_unavailable,
    is_timeout,
    is_too_large_resource_version,
    is_too_many_requests,
    is_transient,
    is_unauthorized,
    json_body,
    reason_of,
    retry_on_conflict,
    status_of,
    status_reason,
    suggests_client_delay,
)
from componentbase.client._fastcall import (
    request,
)
from componentbase.client._fence import (
    Fence,
    NotLeader,
)
from componentbase.client._incluster import (
    SERVICE_ACCOUNT_DIR_ENV,
    load_incluster_config,
)
from componentbase.client._json import (
    decode_json,
)
from componentbase.client._metrics import (
    RequestObservation,
    api_client_of,
    host_of,
    observe_request,
)
from componentbase.client._mutate import (
    OperationResult,
)
from componentbase.client._objects import (
    PATCH_TYPES,
    ObjectClient,
)
from componentbase.client._rest import (
    ResourceMapping,
    RESTMapper,
    UnknownKind,
)
from componentbase.client._spec import (
    ClientDescription,
    NotPortable,
    describe_client,
)
from componentbase.client._time import (
    format_micro_time,
    format_time,
    parse_micro_time,
    parse_time,
)

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "PATCH_TYPES",
    "SERVICE_ACCOUNT_DIR_ENV",
    "CallFailure",
    "ClientConfigError",
    "ClientDescription",
    "Conflict",
    "Fence",
    "FieldConflict",
    "NotLeader",
    "NotPortable",
    "ObjectClient",
    "OperationResult",
    "RESTMapper",
    "RequestObservation",
    "ResourceMapping",
    "ThrottledTimeout",
    "UnknownKind",
    "api_client_of",
    "decode_json",
    "describe",
    "describe_client",
    "format_micro_time",
    "format_time",
    "host_of",
    "is_already_exists",
    "is_bad_request",
    "is_conflict",
    "is_connection_error",
    "is_forbidden",
    "is_gone",
    "is_internal_error",
    "is_invalid",
    "is_not_found",
    "is_resource_expired",
    "is_server_timeout",
    "is_service_unavailable",
    "is_timeout",
    "is_too_large_resource_version",
    "is_too_many_requests",
    "is_transient",
    "is_unauthorized",
    "json_body",
    "load_incluster_config",
    "new_api_client",
    "observe_request",
    "parse_micro_time",
    "parse_time",
    "reason_of",
    "request",
    "retry_on_conflict",
    "status_of",
    "status_reason",
    "suggests_client_delay",
]


def __getattr__(name: str) -> Any:
    """``Conflict`` is an ``ApiException``: it loads (and imports ``kubernetes``) on first use, not with the package."""
    if name == "Conflict":
        from componentbase.client._conflicterror import Conflict  # imports kubernetes: not on the --help path

        return Conflict
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
