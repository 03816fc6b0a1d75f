"""``LoopbackAPIServer``: the in-process handle tests use to start, reach, fault and stop the server."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from ._deadlines import HEADER_TIMEOUT
from .apimachinery.errors import ApiError
from .apimachinery.resources import Registry, Resource
from .auth import Authorizer, User, load_policy, read_token_file
from .auth._authn import Authenticator
from .auth._bootstrap_roles import bootstrap_objects
from .auth._rbac import Decider, RBACAuthorizer, UnionAuthorizer
from .auth._sa_tokens import ServiceAccountTokens
from .auth._tls import ServerTLS
from .controllers._bootstrap_service import kubernetes_service
from .faults import Faults
from .kinds._builtin import builtin_resources
from .kinds._crd import read_crd_files
from .kubeconfig import write_kubeconfig
from .proxy._kubeletclient import CLIENT_CA_CONFIGMAP
from .proxy._proxy import kubelet_client
from .server import LoopbackHTTPServer
from .storage.store import Store
from .storage.watch import DEFAULT_BOOKMARK_INTERVAL
from .wire._wire import Request

__all__ = ["LoopbackAPIServer"]

_ISSUER = "https://kubernetes.default.svc"  # Rest's default, the audience its tokens name


class LoopbackAPIServer:
    """A Kubernetes API server on 127.0.0.1 holding objects in memory.

    Construction only records settings; ``start`` (or ``with``) binds the port and writes the
    kubeconfig. ``kubeconfig_path`` defaults to a file in a private temporary folder removed on stop.
    ``resources`` are served besides the built-in ones; ``crd_dirs`` are folders (or files) of
    CustomResourceDefinition YAML created at start, as envtest's CRDDirectoryPaths.
    ``garbage_collection=False`` leaves dependents whose owners are gone in place (and ignores
    Foreground and Orphan propagation), as kube-apiserver's ``--enable-garbage-collector=false``.

    Authentication is on with tokens, ``client_ca_file`` or ``rbac``; then the server serves HTTPS with
    a CA of its own (``tls=True`` asks for HTTPS without it), which the kubeconfig carries. ``rbac``
    authorizes every request from the stored RBAC objects, kube's default roles included.
    ``header_timeout``: a client must send its request's head (TLS handshake, request line, headers) within
    this many seconds, or it is hung up on (slowloris).
    ``publish_kubelet_client_ca`` writes the CA of the server's kubelet client certificate into
    ``kube-system/extension-apiserver-authentication`` (``client-ca-file``) at start, so kubelets that read
    it (the example virtual kubelet does) accept the node proxy: ``kubectl logs``, ``exec``, ``attach``.
    ``webhook_services`` maps a Service (``"namespace/name"``) that webhook configurations and CRD conversion
    name in ``clientConfig.service`` to the ``"host:port"`` serving it, as envtest's WebhookInstallOptions
    points them at the webhook server in the test; the certificate must still be valid for
    ``name.namespace.svc`` and signed by the ``caBundle`` (``set_webhook_service`` changes it while running).
    """

    def __init__(
        self,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        kubeconfig_path: str | os.PathLike[str] | None = None,
        token_auth_file: str | os.PathLike[str] | None = None,
        tokens: Mapping[str, User] | None = None,
        authorization_policy_file: str | os.PathLike[str] | None = None,
        enforce_authorization: bool = False,
        watch_history: int = 10000,
        bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
        seed: int | None = None,
        resources: Iterable[Resource] = (),
        crd_dirs: Iterable[str | os.PathLike[str]] = (),
        garbage_collection: bool = True,
        tls: bool | None = None,
        client_ca_file: str | os.PathLike[str] | None = None,
        rbac: bool = False,
        publish_kubelet_client_ca: bool = False,
        header_timeout: float = HEADER_TIMEOUT,
        anonymous_auth: bool = True,
        webhook_services: Mapping[str, str] | None = None,
    ) -> None:
        self.webhook_services = dict(webhook_services or {})
        self._port = port
        self._resources = list(resources)
        self._crd_dirs = [os.fspath(d) for d in crd_dirs]
        self._publish_ca = publish_kubelet_client_ca
        self._host = host
        self._kubeconfig = os.fspath(kubeconfig_path) if kubeconfig_path is not None else None
        self._tmpdir: str | None = None
        all_tokens: dict[str, User] = {}
        if token_auth_file is not None:
            all_tokens.update(read_token_file(os.fspath(token_auth_file)))
        all_tokens.update(tokens or {})
        self.tokens: dict[str, User] | None = all_tokens if (token_auth_file is not None or tokens) else None
        policy = load_policy(os.fspath(authorization_policy_file)) if authorization_policy_file else []
        self.authorizer = Authorizer.from_rules(policy)
        self.rbac = rbac
        self.enforce_authorization = enforce_authorization or rbac
        # kube-apiserver's --anonymous-auth, which it turns off itself under AlwaysAllow authorization
        self.anonymous_auth = anonymous_auth and self.enforce_authorization
        self._client_ca_file = os.fspath(client_ca_file) if client_ca_file is not None else None
        self.authentication = self.tokens is not None or client_ca_file is not None or rbac
        if tls is False and self.authentication:
            raise ValueError("tls=False needs authentication off: kubectl sends credentials only over TLS")
        self.tls = bool(tls) or self.authentication
        self._server_tls: ServerTLS | None = None
        self.watch_history = watch_history
        self.bookmark_interval = bookmark_interval
        self.garbage_collection = garbage_collection
        self.header_timeout = header_timeout
        self.faults = Faults(seed=seed)
        self.store = Store(watch_history)
        self._httpd: LoopbackHTTPServer | None = None
        self._scratch: str | None = None  # kubeconfigs of add_user and service_account_kubeconfig
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> LoopbackAPIServer:
        if self._httpd is not None:
            raise RuntimeError("server already started")
        crds = read_crd_files(self._crd_dirs) if self._crd_dirs else []
        self.store = Store(self.watch_history)
        registry = Registry(builtin_resources())
        registry.register(*self._resources)
        if self.tls and self._server_tls is None:  # kept across a restart: clients keep trusting the server
            self._server_tls = ServerTLS(self._host, self._client_ca_file)
        authorizers: list[Decider] = [self.authorizer]
        if self.rbac:
            authorizers.append(RBACAuthorizer(self.store, registry))
        httpd = LoopbackHTTPServer(
            (self._host, self._port), self.store, self.faults, self.tokens, UnionAuthorizer(authorizers),
            self.enforce_authorization, self.bookmark_interval, registry, self.garbage_collection,
            self._server_tls.context if self._server_tls else None, self._authenticator(registry),
        )
        httpd.heads.timeout = self.header_timeout
        httpd.rest.webhooks.client.services = self.webhook_services  # one map, changed in place by set_webhook_service
        sa_tokens = httpd.authenticator.service_accounts
        if sa_tokens is not None:
            httpd.rest.sign_token = sa_tokens.sign
        try:
            _create(httpd, bootstrap_objects() if self.rbac else [], "rbac.authorization.k8s.io")
            for group, plural, obj in kubernetes_service(str(httpd.server_address[0]), httpd.server_address[1]):
                _create(httpd, [(plural, obj)], group)
            _create_crds(httpd, crds)
            if self._publish_ca:
                _publish_client_ca(httpd)
        except ValueError:
            httpd.server_close()
            raise
        self._httpd = httpd
        if self._kubeconfig is None:
            self._tmpdir = tempfile.mkdtemp(prefix="loopback-apiserver-")
            self._kubeconfig = os.path.join(self._tmpdir, "kubeconfig")
        try:
            self._write_kubeconfig(self._kubeconfig, self.token, None if self.token else self._admin_cert())
        except OSError as err:
            self._httpd = None
            httpd.server_close()
            raise OSError(err.errno, err.strerror, self._kubeconfig) from None
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"loopback-apiserver-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end watches, hang up on open connections; safe to call twice."""
        if not self._halt():
            return
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
            self._kubeconfig = None

    def restart(self) -> LoopbackAPIServer:
        """Stop, then serve again on the same address, with the same credentials and kubeconfig, from empty
        storage whose resourceVersions start again at 1: a cluster whose etcd was restored or replaced
        behind the same address. Clients' watches are cut, and their resourceVersions are ahead of it."""
        port = self.port
        self._halt()
        self._port = port
        return self.start()

    def _halt(self) -> bool:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return False
        self.store.close()
        httpd.shutdown()
        httpd.hang_up_all()
        httpd.server_close()
        httpd.rest.webhooks.client.close()  # the webhook connections kept alive
        if self._thread is not None:
            self._thread.join(timeout=5)
        return True

    def serve_forever(self) -> None:
        """Block until ``stop`` is called from another thread (the CLI's signal handler does)."""
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> LoopbackAPIServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- addresses -----------------------------------------------------------------------------

    def _running(self) -> LoopbackHTTPServer:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd

    @property
    def port(self) -> int:
        return int(self._running().server_address[1])

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self._host}:{self.port}"

    @property
    def kubeconfig_path(self) -> str:
        if self._kubeconfig is None or self._httpd is None:
            raise RuntimeError("server not started")
        return self._kubeconfig

    @property
    def token(self) -> str | None:
        """The bearer token the kubeconfig carries: the first one configured, if any."""
        return next(iter(self.tokens), None) if self.tokens else None

    # --- credentials ---------------------------------------------------------------------------

    def _authenticator(self, registry: Registry) -> Authenticator:
        if not self.authentication:
            return Authenticator({}, enabled=False)
        bucket = registry.must("", "v1", "serviceaccounts").bucket
        return Authenticator(self.tokens or {}, ServiceAccountTokens(self.store, bucket, _ISSUER), enabled=True,
                             anonymous=self.anonymous_auth)

    def _admin_cert(self) -> tuple[bytes, bytes] | None:
        """The kubeconfig's credential when authentication is on without tokens: envtest's admin."""
        if self._server_tls is None or not self.authentication:
            return None
        return self._server_tls.client_certificate("loopback-admin", ("system:masters",))

    def _write_kubeconfig(self, path: str | os.PathLike[str] | None, token: str | None,
                          client_cert: tuple[bytes, bytes] | None, name: str = "") -> str:
        if path is None:
            if self._scratch is None:
                self._scratch = tempfile.mkdtemp(prefix="loopback-apiserver-users-")
            path = os.path.join(self._scratch, f"kubeconfig-{name.replace(':', '-')}")
        ca = self._server_tls.ca_pem if self._server_tls else None
        write_kubeconfig(path, self.url, token, ca_data=ca, client_cert=client_cert)
        return os.fspath(path)

    @property
    def ca_data(self) -> bytes | None:
        """The PEM of the CA that signed the serving certificate (None over plain HTTP)."""
        self._running()
        return self._server_tls.ca_pem if self._server_tls else None

    def ssl_context(self) -> ssl.SSLContext:
        """A client context that verifies this server, for raw HTTPS requests (``urllib``)."""
        return ssl.create_default_context(cadata=(self.ca_data or b"").decode("ascii") or None)

    def add_user(self, name: str, groups: Iterable[str] = (),
                 kubeconfig_path: str | os.PathLike[str] | None = None) -> str:
        """A kubeconfig (its path) whose client certificate, signed by this server's CA, authenticates
        as ``name`` in ``groups`` (CN and O, as kube reads them), as envtest's ``AddUser``."""
        tls = self._server_tls
        if tls is None or not self.authentication:
            raise RuntimeError("add_user needs authentication on (tokens, client_ca_file or rbac)")
        return self._write_kubeconfig(kubeconfig_path, None, tls.client_certificate(name, tuple(groups)), name)

    def service_account_kubeconfig(self, namespace: str, name: str,
                                   kubeconfig_path: str | os.PathLike[str] | None = None,
                                   expiration_seconds: int = 3600) -> str:
        """A kubeconfig (its path) carrying a TokenRequest token of an existing ServiceAccount, so a
        component runs with only that account's permissions. Raise ApiError 404 when it does not exist."""
        httpd = self._running()
        res = httpd.registry.must("", "v1", "serviceaccounts")
        body = json.dumps({"spec": {"expirationSeconds": expiration_seconds}}).encode()
        reply = httpd.rest.token(Request("create", res, namespace, name, "token", body=body))
        token = json.loads(reply.body)["status"]["token"]
        return self._write_kubeconfig(kubeconfig_path, token, None, f"system:serviceaccount:{namespace}:{name}")

    @property
    def kubelet_client_ca(self) -> str:
        """PEM of the CA that signed the certificate the node proxy presents to kubelets."""
        return kubelet_client(self._running()).ca_pem

    def request_counts(self) -> Counter[tuple[str, str]]:
        """Requests served so far, by ``(verb, resource)``: ``counts[("update", "leases")]``.

        Subresources count under their resource's plural; discovery under its path.
        """
        return self._running().request_counts()

    def set_webhook_service(self, service: str, address: str | None) -> None:
        """Route ``clientConfig.service`` ``"namespace/name"`` to ``"host:port"`` (None: no longer)."""
        if address is None:
            self.webhook_services.pop(service, None)
        else:
            self.webhook_services[service] = address

    def register(self, *resources: Resource) -> None:
        """Serve more resources (now if running, and from every later start); discovery follows."""
        self._resources.extend(resources)
        if self._httpd is not None:
            self._httpd.registry.register(*resources)

    def api_client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` configured from this server's kubeconfig."""
        from kubernetes import config  # lazily: importing this module must stay cheap

        new_client: Any = config.new_client_from_config  # untyped upstream
        return new_client(config_file=self.kubeconfig_path)


def _create(httpd: LoopbackHTTPServer, objects: list[tuple[str, dict[str, Any]]], group: str) -> None:
    """Store kube's default objects as a client would create them (uid, resourceVersion and all)."""
    for plural, obj in objects:
        res = httpd.registry.must(group, "v1", plural)
        namespace = obj["metadata"].get("namespace", "")
        httpd.rest.create(Request("create", res, namespace, body=json.dumps(obj).encode()))


def _create_crds(httpd: LoopbackHTTPServer, crds: list[tuple[str, dict[str, Any]]]) -> None:
    """Create the CRDs read from files, as a client would; ValueError names the file of a refused one."""
    res = httpd.registry.must("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    for path, crd in crds:
        try:
            httpd.rest.create(Request("create", res, body=json.dumps(crd).encode()))
        except ApiError as err:
            raise ValueError(f"{path}: {err.message}") from None


def _publish_client_ca(httpd: LoopbackHTTPServer) -> None:
    namespace, name = CLIENT_CA_CONFIGMAP
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": {"client-ca-file": kubelet_client(httpd).ca_pem}}
    res = httpd.registry.must("", "v1", "configmaps")
    httpd.rest.create(Request("create", res, namespace, body=json.dumps(body).encode()))
