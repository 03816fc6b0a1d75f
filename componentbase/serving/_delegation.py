"""Clients for delegated authentication and authorization, and the user they establish.

As upstream, an empty ``--authentication-kubeconfig``/``--authorization-kubeconfig`` means the in-cluster
config; outside a cluster that gives no client (a warning, not an error: the component still serves its
always-allowed paths). The component's own ``--kubeconfig`` is deliberately not used: it carries the
component's credentials, which need not be allowed to create TokenReviews or SubjectAccessReviews.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import attrs

__all__ = ["ANONYMOUS", "DelegationError", "UserInfo", "delegation_client", "describe_error"]

log = logging.getLogger("componentbase.serving")


class DelegationError(Exception):
    """The API server could not be asked; the request is refused (fail closed)."""


@attrs.frozen(cache_hash=True)  # a key of the authorization cache, looked up on every request
class UserInfo:
    """Who a request comes from, as a TokenReview or a client certificate says."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def extra_dict(self) -> dict[str, list[str]]:
        return {key: list(values) for key, values in self.extra}


ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


def delegation_client(kubeconfig: str, flag: str, timeout: float) -> Any:
    """An ``ApiClient`` from ``kubeconfig``, else the in-cluster config, else ``None``.

    Raise ValueError naming ``flag`` when a given kubeconfig cannot be used.
    """
    from kubernetes import client, config  # kubernetes takes ~0.5 s to import: loaded on first use, never for --help
    from kubernetes.config.config_exception import ConfigException

    from componentbase.client import load_incluster_config

    configuration = client.Configuration()
    if kubeconfig:
        if not os.path.exists(kubeconfig):
            raise ValueError(f"failed to get delegated {flag} kubeconfig: stat {kubeconfig}: no such file or directory")
        try:
            config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
        except (ConfigException, OSError, ValueError) as err:
            raise ValueError(f"failed to get delegated {flag} kubeconfig {kubeconfig}: {err}") from None
    else:
        if not os.environ.get("KUBERNETES_SERVICE_HOST") or not os.environ.get("KUBERNETES_SERVICE_PORT"):
            return None  # not in a cluster: upstream's ErrNotInCluster, silently optional
        try:
            load_incluster_config(configuration)
        except (ConfigException, OSError) as err:
            log.warning("failed to read in-cluster kubeconfig for delegated %s: %s", flag, err)
            return None
    api = client.ApiClient(configuration)
    api.user_agent = "componentbase/delegated-" + flag
    return api


def describe_error(err: BaseException) -> str:
    """A short reason without response bodies (a TokenReview reply carries the token)."""
    from componentbase.client import status_of  # the client: loaded with the server, not for --help

    status = status_of(err)
    if status:
        return f"HTTP {status} {getattr(err, 'reason', '') or ''}".strip()
    text = str(err)
    return type(err).__name__ + (f": {text[:300]}" if text else "")
