"""Secure serving for components: HTTPS, delegated authentication and authorization, health, configz, metrics.

See ``docs/serving.md``. Importing this package stays cheap (it is on the ``--help`` path): the ``kubernetes``
client, ``cryptography`` and ``prometheus_client`` load only when they are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from componentbase.serving import configz
from componentbase.serving._authn import (
    AuthenticationInfo,
    AuthenticationOptions,
)
from componentbase.serving._authz import (
    AuthorizationOptions,
    Authorizer,
    ResourceAttributes,
)
from componentbase.serving._certs import (
    generate_self_signed,
    maybe_default_self_signed,
)
from componentbase.serving._delegation import (
    DelegationError,
)
from componentbase.serving._healthz import (
    PING,
    HealthChecker,
    NamedCheck,
    check_one,
    check_root,
)
from componentbase.serving._limits import (
    ServerLimits,
)
from componentbase.serving._options import (
    ServingOptions,
)
from componentbase.serving._secure import (
    SecureServingInfo,
    SecureServingOptions,
)
from componentbase.util import lazy_exports

if TYPE_CHECKING:
    from componentbase.serving._server import (
        Request,
        Response,
        SecureServer,
        Server,
    )
    from componentbase.serving._start import (
        start_serving,
    )

#: The server itself (sockets, TLS, the HTTP wire code, metrics) loads on first use: the options above are on
#: every component's ``--help`` path, the server only on its run path.
__getattr__ = lazy_exports(__name__, {"Request": "._server", "Response": "._server", "SecureServer": "._server",
                                      "Server": "._server", "start_serving": "._start"})


__all__ = [
    "PING",
    "AuthenticationInfo",
    "AuthenticationOptions",
    "AuthorizationOptions",
    "Authorizer",
    "DelegationError",
    "HealthChecker",
    "NamedCheck",
    "Request",
    "ResourceAttributes",
    "Response",
    "SecureServer",
    "SecureServingInfo",
    "SecureServingOptions",
    "Server",
    "ServerLimits",
    "ServingOptions",
    "check_one",
    "check_root",
    "configz",
    "generate_self_signed",
    "maybe_default_self_signed",
    "start_serving",
]
