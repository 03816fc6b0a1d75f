"""The one seam to the official ``kubernetes`` client: building an ``ApiClient`` (kubeconfig, in-cluster),
client-side rate limiting, API error classification, Kubernetes timestamps and request metrics.

Importing this package does not import ``kubernetes``; building a client does.
"""

from __future__ import annotations

from componentbase.client._build import (
    ClientConfigError,
    new_api_client,
)
from componentbase.client._errors import (
    CallFailure,
    ThrottledTimeout,
    describe,
    is_conflict,
    is_not_found,
    json_body,
    status_of,
    status_reason,
)
from componentbase.client._fastcall import (
    unvalidated,
)
from componentbase.client._metrics import (
    RequestObservation,
    api_client_of,
    host_of,
    observe_request,
)
from componentbase.client._spec import (
    ClientDescription,
    NotPortable,
    describe_client,
)

__all__ = [
    "CallFailure",
    "ClientConfigError",
    "ClientDescription",
    "NotPortable",
    "RequestObservation",
    "ThrottledTimeout",
    "api_client_of",
    "describe",
    "describe_client",
    "host_of",
    "is_conflict",
    "is_not_found",
    "json_body",
    "new_api_client",
    "observe_request",
    "status_of",
    "status_reason",
    "unvalidated",
]
