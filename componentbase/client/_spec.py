"""A picklable description of an ``ApiClient``'s connection, to build the same client in another process.

Carried: the host, bearer tokens and API keys with their prefixes, basic auth, TLS (CA, client
certificate and key, as files or data; verify, hostname checks, SNI), a proxy, socket options, the
retry setting, default headers (User-Agent, Accept), the cookie and the client-side rate limit. The
in-cluster service-account token is re-read from its file in the new process, as the client does in this one.

Not carried, so ``describe_client`` refuses: credentials this process refreshes itself (exec credential
plugins and auth providers whose tokens expire, or any other ``refresh_api_key_hook``) and a proxy
``SSLContext``. Files named by the description (certificates the kubeconfig loader wrote to temporary
files) must stay readable while the other process runs.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClientDescription", "NotPortable", "describe_client"]

#: How often the in-cluster token file is read again (the client's own period).
TOKEN_REFRESH_SECONDS = 60.0


class NotPortable(Exception):
    """The client's configuration cannot be rebuilt in another process; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class ClientDescription:
    host: str
    api_key: dict[str, str] = field(default_factory=dict)
    api_key_prefix: dict[str, str] = field(default_factory=dict)
    username: str | None = None
    password: str | None = None
    verify_ssl: bool = True
    ssl_ca_cert: str | None = None
    ca_cert_data: Any = None
    cert_file: str | None = None
    key_file: str | None = None
    assert_hostname: Any = None
    tls_server_name: str | None = None
    proxy: str | None = None
    no_proxy: str | None = None
    proxy_headers: dict[str, str] | None = None
    socket_options: Any = None
    retries: Any = None
    default_headers: dict[str, str] = field(default_factory=dict)
    cookie: str | None = None
    token_file: str | None = None  # in-cluster: the service-account token, re-read every minute
    # The client-side rate limit (-1: none), kept by the other process too, as kube-scheduler's event
    # client is built from the same rest config as its main client.
    qps: float = -1.0
    burst: int = 0

    def new_api_client(self, pool_maxsize: int = 2) -> Any:
        """An official ``ApiClient`` for this description (imports ``kubernetes``)."""
        from kubernetes import client  # kubernetes takes ~0.5 s to import: loaded on first use, never for --help

        from componentbase.client import _throttled as throttledclient

        c = client.Configuration()
        c.host = self.host
        c.api_key = dict(self.api_key)
        c.api_key_prefix = dict(self.api_key_prefix)
        c.username, c.password = self.username, self.password
        c.verify_ssl = self.verify_ssl
        c.ssl_ca_cert, c.ca_cert_data = self.ssl_ca_cert, self.ca_cert_data
        c.cert_file, c.key_file = self.cert_file, self.key_file
        c.assert_hostname, c.tls_server_name = self.assert_hostname, self.tls_server_name
        c.proxy, c.no_proxy = self.proxy, self.no_proxy
        c.proxy_headers = dict(self.proxy_headers) if self.proxy_headers is not None else None
        c.socket_options = self.socket_options
        c.retries = self.retries
        c.connection_pool_maxsize = pool_maxsize
        if self.token_file is not None:
            hook: Any = TokenFile(self.token_file)
            c.refresh_api_key_hook = hook
        api = throttledclient.api_client(c, self.qps, self.burst)
        for name, value in self.default_headers.items():
            api.set_default_header(name, value)
        api.cookie = self.cookie
        return api


class TokenFile:
    """A ``refresh_api_key_hook`` re-reading a service-account token every minute, as the in-cluster loader's does.

    ``new_api_client`` installs it for the in-cluster config, so ``describe_client`` knows the file to carry.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.read_at = 0.0

    def __call__(self, configuration: Any) -> None:
        now = time.monotonic()
        if now - self.read_at < TOKEN_REFRESH_SECONDS:
            return
        try:
            with open(self.path) as f:
                token = f.read().strip()
        except OSError:
            return  # keep the last token; the server will say if it is no longer good
        if token:
            configuration.api_key["BearerToken"] = "bearer " + token
            self.read_at = now


def _token_file(hook: Any) -> str | None:
    """The token file behind the client's refresh hook, None for a static token; NotPortable otherwise."""
    if isinstance(hook, TokenFile):
        return hook.path
    # slow import (~0.5 s): on first use, never for --help
    from kubernetes.config.incluster_config import SERVICE_TOKEN_FILENAME, InClusterConfigLoader
    from kubernetes.config.kube_config import KubeConfigLoader

    # A client built by the client's own loaders: their hook is a closure over the loader, and nothing public
    # says whether it refreshes (the hook is undocumented upstream: kubernetes-client/python#1948,
    # kubernetes-client/python-base#250). tests/test_client_spec.py fails if that shape changes.
    owner = _loader_of(hook)
    if isinstance(owner, InClusterConfigLoader):
        return SERVICE_TOKEN_FILENAME  # the file load_incluster_config reads
    if isinstance(owner, KubeConfigLoader) and getattr(owner, "expiry", None) is None:
        return None  # a token from the kubeconfig (or a plugin) that never expires: the hook changes nothing
    raise NotPortable("its credentials are refreshed in this process (an exec or auth-provider plugin with "
                      "expiring tokens, or a custom refresh_api_key_hook)")


def _loader_of(hook: Any) -> object:
    try:
        return inspect.getclosurevars(hook).nonlocals.get("self")
    except (TypeError, ValueError):
        return None


def describe_client(api_client: Any) -> ClientDescription:
    """What another process needs to build the same client; NotPortable when something cannot be carried."""
    c = getattr(api_client, "configuration", None)
    if c is None:
        raise NotPortable("it has no configuration")
    if getattr(c, "proxy_ssl_context", None) is not None:
        raise NotPortable("it uses a proxy SSLContext")
    hook = getattr(c, "refresh_api_key_hook", None)
    token_file = _token_file(hook) if hook is not None else None
    headers = getattr(c, "proxy_headers", None)
    limiter = getattr(api_client, "limiter", None)
    qps, burst = (float(limiter.qps), int(limiter.burst)) if limiter is not None else (-1.0, 0)
    return ClientDescription(
        host=c.host, api_key=dict(c.api_key or {}), api_key_prefix=dict(c.api_key_prefix or {}),
        username=c.username, password=c.password, verify_ssl=bool(c.verify_ssl), ssl_ca_cert=c.ssl_ca_cert,
        ca_cert_data=getattr(c, "ca_cert_data", None), cert_file=c.cert_file, key_file=c.key_file,
        assert_hostname=c.assert_hostname, tls_server_name=getattr(c, "tls_server_name", None), proxy=c.proxy,
        no_proxy=getattr(c, "no_proxy", None), proxy_headers=dict(headers) if headers is not None else None,
        socket_options=getattr(c, "socket_options", None), retries=c.retries,
        default_headers=dict(getattr(api_client, "default_headers", None) or {}),
        cookie=getattr(api_client, "cookie", None), token_file=token_file, qps=qps, burst=burst)
