"""Building the official client from a ``ClientConnectionConfiguration``, as client-go's ``BuildConfigFromFlags``."""

from __future__ import annotations

import binascii
import logging
import os
import sys
from typing import Any

from componentbase.client._incluster import load_incluster_config
from componentbase.client._spec import TokenFile
from componentbase.componentconfig._types import ClientConnectionConfiguration

__all__ = ["ClientConfigError", "new_api_client"]

log = logging.getLogger(__name__)


class ClientConfigError(Exception):
    """No usable way to reach the API server."""


def new_api_client(cc: ClientConnectionConfiguration, master: str = "", *, pool_maxsize: int | None = None) -> Any:
    """A ``kubernetes.client.ApiClient`` for ``cc.kubeconfig`` (or in-cluster), ``master`` overriding the host.

    Its calls are rate limited to ``cc.qps`` a second with bursts of ``cc.burst``, as client-go's are
    (a negative qps turns the limit off).
    ``pool_maxsize`` keeps that many keep-alive connections (the client's default is 5 per CPU): a component
    calling the API from more threads than that would open a new connection for each extra call.
    The ``kubernetes`` package is imported here, not at start-up: it is slow to import.
    """
    from kubernetes import client, config  # kubernetes takes ~0.5 s to import: loaded on first use, never for --help
    from kubernetes.config.config_exception import ConfigException

    from componentbase.client import _throttled as throttledclient

    if cc.kubeconfig and not os.path.exists(cc.kubeconfig):
        raise ClientConfigError(f"invalid configuration: stat {cc.kubeconfig}: no such file or directory")
    configuration = client.Configuration()
    try:
        if cc.kubeconfig:
            config.load_kube_config(config_file=cc.kubeconfig, client_configuration=configuration)
        elif master:
            configuration.host = master
        else:
            # Not client-go's "Neither --kubeconfig nor --master": a component may have neither flag.
            log.warning("Neither a kubeconfig nor a master URL was given. Using the inClusterConfig. "
                        "This might not work.")
            # Our own refresh hook (the same one-minute re-read), so describe_client knows the token's file.
            hook: Any = TokenFile(load_incluster_config(configuration, try_refresh_token=False))
            configuration.refresh_api_key_hook = hook
    except ConfigException as err:
        raise ClientConfigError(f"invalid configuration: {err}") from None
    except OSError as err:
        raise ClientConfigError(f"unable to read kubeconfig {cc.kubeconfig}: {err.strerror}") from None
    except Exception as err:
        if not cc.kubeconfig:
            raise
        # Not YAML (PyYAML's errors), or YAML of another shape (a list, a number where a list of clusters
        # goes): the official loader fails with whatever it tripped over, so the file is named here, as
        # client-go does.
        raise ClientConfigError(f'error loading config file "{cc.kubeconfig}": {_yaml_problem(err)}') from None
    if master:
        configuration.host = master
    # No silent resends inside urllib3: a dropped POST must not be sent again behind our back, and the
    # informers, leader election and event recorder each retry with their own backoff, as client-go does.
    configuration.retries = False
    if pool_maxsize is not None:
        configuration.connection_pool_maxsize = pool_maxsize
    api = throttledclient.api_client(configuration, cc.qps, cc.burst)
    if cc.accept_content_types:
        api.set_default_header("Accept", cc.accept_content_types)
    api.user_agent = f"{os.path.basename(sys.argv[0] or 'componentbase')}/componentbase"
    return api


def _yaml_problem(err: Exception) -> str:
    """One line for what the kubeconfig loader tripped over: YAML's own problem and line, or the shape."""
    problem, mark = getattr(err, "problem", None), getattr(err, "problem_mark", None)
    if problem:
        return f"yaml: line {mark.line + 1}: {problem}" if mark is not None else f"yaml: {problem}"
    if isinstance(err, UnicodeDecodeError):
        return f"not UTF-8 text (byte {err.start})"
    if isinstance(err, binascii.Error):  # a certificate-authority-data, client-certificate-data or key
        return f"a *-data field is not base64: {err}"
    return f"not a kubeconfig ({type(err).__name__}: {err})"
