"""Secure serving for components: HTTPS, delegated authentication and authorization, health, configz, metrics.

See ``docs/serving.md``. Importing this package stays cheap (it is on the ``--help`` path): the options
are here; the server (``componentbase.serving.server``, ``.endpoints``, ``.start``) loads when serving
starts, and the ``kubernetes`` client, ``cryptography`` and ``prometheus_client`` when they are used.
"""

from __future__ import annotations

from componentbase.serving.authn import AuthenticationInfo, AuthenticationOptions, TokenReviewAuthenticator
from componentbase.serving.authz import AuthorizationOptions, Authorizer, Decision, ResourceAttributes
from componentbase.serving.delegation import ANONYMOUS, DelegationError, UserInfo
from componentbase.serving.healthz import PING, HealthChecker, NamedCheck, ShutdownCheck
from componentbase.serving.metricsoptions import MetricsOptions
from componentbase.serving.options import ServingOptions
from componentbase.serving.redact import REDACTED, is_secret_key, redact
from componentbase.serving.secure import SecureServingInfo, SecureServingOptions

__all__ = [
    "ANONYMOUS",
    "PING",
    "REDACTED",
    "AuthenticationInfo",
    "AuthenticationOptions",
    "AuthorizationOptions",
    "Authorizer",
    "Decision",
    "DelegationError",
    "HealthChecker",
    "MetricsOptions",
    "NamedCheck",
    "ResourceAttributes",
    "SecureServingInfo",
    "SecureServingOptions",
    "ServingOptions",
    "ShutdownCheck",
    "TokenReviewAuthenticator",
    "UserInfo",
    "is_secret_key",
    "redact",
]
