"""``VirtualKubeletConfig``: what ``run`` gets: the options as given, the serving pieces, the provider's config."""

from __future__ import annotations

from typing import Any

import attrs

import componentbase

__all__ = ["VirtualKubeletConfig"]


@attrs.define(kw_only=True)
class VirtualKubeletConfig(componentbase.Config):
    #: The validated ``VirtualKubeletOptions`` (flags and environment defaults).
    options: Any = None
    #: The decoded ``--provider-config`` (the provider's ``config_type``), or None.
    provider_config: Any = None
    #: The kubelet API's TLS listener, and how its callers are authenticated and authorized.
    secure_serving: Any = None
    kubelet_serving: Any = None
    authentication: Any = None
    authorization: Any = None
    #: This component's metrics, served on ``--metrics-addr``.
    metrics: Any = None
