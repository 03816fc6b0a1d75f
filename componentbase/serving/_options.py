"""``ServingOptions``: secure serving, delegated authentication and authorization, and metrics, together.

What kube-scheduler composes; a component adds one field, ``serving: ServingOptions =
attrs.field(factory=lambda: ServingOptions.for_component(10259, "kube-scheduler"))``, and its run gets
``/healthz``, ``/livez``, ``/readyz``, ``/configz``, ``/version`` and ``/metrics`` on that port.
"""

from __future__ import annotations

from typing import Any

import attrs

from componentbase.cli._options import Options
from componentbase.metrics._options import MetricsOptions
from componentbase.serving._authn import AuthenticationOptions
from componentbase.serving._authz import AuthorizationOptions
from componentbase.serving._secure import SecureServingOptions

__all__ = ["ServingOptions"]


@attrs.define
class ServingOptions(Options):
    """The sections "Secure serving", "Authentication", "Authorization" and "Metrics"."""

    secure_serving: SecureServingOptions = attrs.field(factory=SecureServingOptions)
    authentication: AuthenticationOptions = attrs.field(factory=AuthenticationOptions)
    authorization: AuthorizationOptions = attrs.field(factory=AuthorizationOptions)
    metrics: MetricsOptions = attrs.field(factory=MetricsOptions)

    @classmethod
    def for_component(cls, port: int, pair_name: str, *, tolerate_lookup_failure: bool = True) -> ServingOptions:
        """A component's defaults, as kube-scheduler sets them (its lookup failures are tolerated)."""
        return cls(secure_serving=SecureServingOptions(bind_port=port, pair_name=pair_name),
                   authentication=AuthenticationOptions(tolerate_lookup_failure=tolerate_lookup_failure))

    def apply_to(self, config: Any) -> None:
        """Secure serving first: authentication and authorization are set up only when serving is on."""
        self.metrics.apply_to(config)
        self.secure_serving.apply_to(config)
        self.authentication.apply_to(config)
        self.authorization.apply_to(config)
