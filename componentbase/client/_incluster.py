"""The in-cluster configuration: the pod's service-account token and CA, and the API server's address from
``KUBERNETES_SERVICE_HOST`` and ``KUBERNETES_SERVICE_PORT``, as client-go's ``rest.InClusterConfig``.

The official client reads the files from the fixed paths a pod mounts. ``COMPONENTBASE_SERVICE_ACCOUNT_DIR``
names another folder holding ``token`` and ``ca.crt``, so a component can be run as in a pod outside one
(tests/ship runs the scheduler so); the client's own ``InClusterConfigLoader`` reads them either way.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["SERVICE_ACCOUNT_DIR", "SERVICE_ACCOUNT_DIR_ENV", "load_incluster_config", "service_account_files"]

#: Where a pod finds its service account's files.
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: The environment variable naming another folder with ``token`` and ``ca.crt``.
SERVICE_ACCOUNT_DIR_ENV = "COMPONENTBASE_SERVICE_ACCOUNT_DIR"


def service_account_files() -> tuple[str, str]:
    """(token file, CA file) the in-cluster configuration reads."""
    folder = os.environ.get(SERVICE_ACCOUNT_DIR_ENV) or SERVICE_ACCOUNT_DIR
    return os.path.join(folder, "token"), os.path.join(folder, "ca.crt")


def load_incluster_config(configuration: Any, *, try_refresh_token: bool = True) -> str:
    """Fill ``configuration`` (a ``kubernetes.client.Configuration``) in-cluster; the token file it read.

    Raise the client's ``ConfigException`` when not in a cluster or a file is missing or empty.
    """
    # kubernetes takes ~0.5 s to import: loaded when a client is built, never for --help
    from kubernetes.config.incluster_config import InClusterConfigLoader

    token, ca = service_account_files()
    loader: Any = InClusterConfigLoader(token_filename=token, cert_filename=ca, try_refresh_token=try_refresh_token)
    loader.load_and_set(configuration)
    return token
