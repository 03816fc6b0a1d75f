"""Secure serving for components: HTTPS, delegated authentication and authorization, health, configz, metrics.

See ``docs/serving.md``. Importing this package stays cheap (it is on the ``--help`` path): the ``kubernetes``
client, ``cryptography`` and ``prometheus_client`` load only when they are used.
"""

from __future__ import annotations

from componentbase.serving import configz
from componentbase.serving._authn import (
    AuthenticationInfo,
    AuthenticationOptions,
    TokenReviewAuthenticator,
)
from componentbase.serving._authz import (
    AuthorizationOptions,
    Authorizer,
    Decision,
    ResourceAttributes,
)
from componentbase.serving._certs import (
    generate_self_signed,
    maybe_default_self_signed,
)
from componentbase.serving._delegation import (
    ANONYMOUS,
    DelegationError,
    UserInfo,
    delegation_client,
    describe_error,
)
from componentbase.serving._endpoints import (
    Endpoints,
    version_json,
)
from componentbase.serving._healthz import (
    PING,
    HealthChecker,
    NamedCheck,
    ShutdownCheck,
    check_one,
    check_root,
)
from componentbase.serving._options import (
    ServingOptions,
)
from componentbase.serving._redact import (
    REDACTED,
    is_secret_key,
    redact,
    redact_value,
)
from componentbase.serving._secure import (
    IP,
    SecureServingInfo,
    SecureServingOptions,
)
from componentbase.serving._server import (
    App,
    Request,
    Response,
    SecureServer,
)
from componentbase.serving._start import (
    start_serving,
)
from componentbase.serving._tls import (
    CIPHER_SUITES,
    INSECURE_CIPHER_SUITES,
    TLS13_CIPHER_SUITES,
    TLS_VERSIONS,
    cipher_suite_errors,
    new_server_context,
    openssl_cipher_string,
)

__all__ = [
    "ANONYMOUS",
    "CIPHER_SUITES",
    "INSECURE_CIPHER_SUITES",
    "IP",
    "PING",
    "REDACTED",
    "TLS13_CIPHER_SUITES",
    "TLS_VERSIONS",
    "App",
    "AuthenticationInfo",
    "AuthenticationOptions",
    "AuthorizationOptions",
    "Authorizer",
    "Decision",
    "DelegationError",
    "Endpoints",
    "HealthChecker",
    "NamedCheck",
    "Request",
    "ResourceAttributes",
    "Response",
    "SecureServer",
    "SecureServingInfo",
    "SecureServingOptions",
    "ServingOptions",
    "ShutdownCheck",
    "TokenReviewAuthenticator",
    "UserInfo",
    "check_one",
    "check_root",
    "cipher_suite_errors",
    "configz",
    "delegation_client",
    "describe_error",
    "generate_self_signed",
    "is_secret_key",
    "maybe_default_self_signed",
    "new_server_context",
    "openssl_cipher_string",
    "redact",
    "redact_value",
    "start_serving",
    "version_json",
]
