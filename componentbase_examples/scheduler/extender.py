"""HTTP scheduler extenders, called as kube-scheduler's ``HTTPExtender`` calls them.

An extender is a web service named in the config's ``extenders`` section. After the filter plugins, each
interested extender with a ``filterVerb`` gets the pod and the feasible nodes (full Node objects, or only
their names when ``nodeCacheCapable``) and answers which stay; ``prioritizeVerb`` answers 0..10 per node,
added to the plugins' total as ``score * weight * 10``; the one ``bindVerb`` extender binds in place of the
bind plugins. ``managedResources`` makes an extender interested only in pods that request or limit one of
them. The wire shapes are kube's ``k8s.io/kube-scheduler/extender/v1`` types, whose Go fields carry no JSON
tags: ``{"Pod", "Nodes", "NodeNames"}`` out, ``{"NodeNames", "Nodes", "FailedNodes",
"FailedAndUnresolvableNodes", "Error"}`` back, keys matched without regard to case as Go's decoder does.

Errors are kube's: a filter or bind error fails the scheduling attempt (a ``SchedulerError``) unless the
extender is ``ignorable``; a prioritize error only costs that extender's scores. Messages are Go's:
``failed filter with extender at URL <url>, code 500``, ``Post "<url>": dial tcp <host>:<port>: connect:
connection refused``. Each call is one POST with the ``httpTimeout`` (5 s when 0); unlike Go's client, no
proxy from the environment is used.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import os
import ssl
import tempfile
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from componentbase_examples.scheduler.interface import Code, Status
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = [
    "DEFAULT_TIMEOUT",
    "EXTENDER_NAME",
    "MAX_EXTENDER_PRIORITY",
    "ExtenderConfig",
    "ExtenderError",
    "HTTPExtender",
    "add_extender_scores",
    "bind_with_extenders",
    "extenders_from_config",
    "filter_with_extenders",
    "go_field",
    "ignore_extender_resources",
    "skipped_if_ignorable",
]

log = logging.getLogger("componentbase_examples.scheduler.extender")

DEFAULT_TIMEOUT = 5.0
#: An extender's best score; it is scaled to the plugins' 0..100 (kube's ``MaxExtenderPriority``).
MAX_EXTENDER_PRIORITY = 10
#: The "plugin" a pod is unschedulable by when an extender rejected nodes (kube's ``framework.ExtenderName``).
EXTENDER_NAME = "Extender"


class ExtenderConfig(Protocol):
    """One entry of the config's ``extenders`` (kube's ``Extender``), as the config section decodes it."""

    url_prefix: str
    filter_verb: str
    preempt_verb: str
    prioritize_verb: str
    bind_verb: str
    weight: int
    enable_https: bool
    tls_config: Any
    http_timeout: float
    node_cache_capable: bool
    managed_resources: Sequence[Any]
    ignorable: bool


class ExtenderError(Exception):
    """A call to an extender failed; ``str()`` is kube-scheduler's message for it."""


def skipped_if_ignorable(extender: HTTPExtender, err: ExtenderError, verb: str) -> bool:
    """Whether ``err`` is to be skipped because ``extender`` is ignorable (logged as kube-scheduler logs it)."""
    if extender.ignorable:
        log.info("%s extender as it returned error and has ignorable flag set: extender=%s err=%s", verb,
                 extender.name, err)
    return extender.ignorable


def go_field(obj: Any, key: str) -> Any:
    """``obj[key]``, else the first key equal to it ignoring case (Go's JSON decoder), else ``None``."""
    if not isinstance(obj, Mapping):
        return None
    if key in obj:
        return obj[key]
    folded = key.casefold()
    return next((v for k, v in obj.items() if isinstance(k, str) and k.casefold() == folded), None)


class _HTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection whose TLS server name may differ from the host dialled (``tlsConfig.serverName``)."""

    def __init__(self, host: str, port: int | None, timeout: float, context: ssl.SSLContext,
                 server_name: str) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self.tls_context = context
        self.server_name = server_name

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self.tls_context.wrap_socket(self.sock, server_hostname=self.server_name or self.host)


def _tls_context(cfg: ExtenderConfig) -> ssl.SSLContext:
    """kube's ``makeTransport``: ``enableHTTPS`` without a CA does not verify; the ``*Data`` fields are base64."""
    tls = cfg.tls_config
    ca_file = getattr(tls, "ca_file", "") or ""
    ca_data = base64.b64decode(getattr(tls, "ca_data", "") or "").decode() or None
    ctx = ssl.create_default_context(cafile=ca_file or None, cadata=ca_data)
    if getattr(tls, "insecure", False) or (cfg.enable_https and not ca_file and not ca_data):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    cert_file, key_file = getattr(tls, "cert_file", "") or "", getattr(tls, "key_file", "") or ""
    cert_data, key_data = getattr(tls, "cert_data", "") or "", getattr(tls, "key_data", "") or ""
    if cert_data or key_data:  # load_cert_chain reads files only: the PEM goes through a private temp file
        with tempfile.TemporaryDirectory() as tmp:
            cert_file, key_file = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
            for path, data in ((cert_file, cert_data), (key_file, key_data)):
                with open(path, "wb") as f:
                    f.write(base64.b64decode(data))
            ctx.load_cert_chain(cert_file, key_file)
    elif cert_file:
        ctx.load_cert_chain(cert_file, key_file or None)
    return ctx


class HTTPExtender:
    """One configured extender; its ``name`` is its ``urlPrefix``, as kube names it."""

    def __init__(self, cfg: ExtenderConfig) -> None:
        self.name = cfg.url_prefix
        self.filter_verb = cfg.filter_verb
        self.prioritize_verb = cfg.prioritize_verb
        self.bind_verb = cfg.bind_verb
        self.preempt_verb = cfg.preempt_verb
        self.weight = int(cfg.weight)
        self.node_cache_capable = cfg.node_cache_capable
        self.ignorable = cfg.ignorable
        self.managed_resources = frozenset(r.name for r in cfg.managed_resources or ())
        self.timeout = float(cfg.http_timeout) or DEFAULT_TIMEOUT
        self._url = urllib.parse.urlsplit(cfg.url_prefix)
        self._tls = _tls_context(cfg) if self._url.scheme == "https" else None
        self._server_name = getattr(cfg.tls_config, "server_name", "") or ""

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name})"

    def is_interested(self, pod: PodInfo) -> bool:
        """Whether the pod requests or limits a managed resource (every pod, when none is managed)."""
        if not self.managed_resources:
            return True
        containers = [*(pod.spec.get("containers") or ()), *(pod.spec.get("initContainers") or ())]
        for c in containers:
            resources = c.get("resources") or {}
            if any(name in self.managed_resources
                   for name in (*(resources.get("requests") or {}), *(resources.get("limits") or {}))):
                return True
        return False

    def _args(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, Any]:
        if self.node_cache_capable:
            return {"Pod": pod.pod, "Nodes": None, "NodeNames": [n.name for n in nodes]}
        return {"Pod": pod.pod, "Nodes": {"items": [n.node for n in nodes]}, "NodeNames": None}

    def filter(self, pod: PodInfo, nodes: Sequence[NodeInfo],
               ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """The nodes that stay, then failed and failed-and-unresolvable node names with their messages."""
        if not self.filter_verb:
            return list(nodes), {}, {}
        result = self.send(self.filter_verb, self._args(pod, nodes))
        error = go_field(result, "Error")
        if error:
            raise ExtenderError(str(error))
        by_name = {n.name: n for n in nodes}
        names = go_field(result, "NodeNames")
        listed = go_field(result, "Nodes")
        if self.node_cache_capable and names is not None:
            chosen = [str(name) for name in names]
        elif listed is not None:
            items = go_field(listed, "items") or ()
            chosen = [str(((item or {}).get("metadata") or {}).get("name", "")) for item in items]
        else:
            chosen = []
        for name in chosen:
            if name not in by_name:
                raise ExtenderError(f'extender "{self.name}" claims a filtered node "{name}" which is not found '
                                    f"in the input node list")
        failed = {str(k): str(v) for k, v in (go_field(result, "FailedNodes") or {}).items()}
        unresolvable = {str(k): str(v) for k, v in (go_field(result, "FailedAndUnresolvableNodes") or {}).items()}
        return [by_name[name] for name in chosen], failed, unresolvable

    def prioritize(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        """``(host, score)`` per node and this extender's weight (all 0, weight 0, without a prioritize verb)."""
        if not self.prioritize_verb:
            return [(n.name, 0) for n in nodes], 0
        result = self.send(self.prioritize_verb, self._args(pod, nodes))
        if not isinstance(result, list):
            raise ExtenderError(f"json: cannot unmarshal {type(result).__name__} into Go value of type "
                                "v1.HostPriorityList")
        return [(str(go_field(p, "Host")), int(go_field(p, "Score") or 0)) for p in result], self.weight

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """Ask the extender to bind the pod (kube's ``ExtenderBindingArgs``); raises ``ExtenderError``."""
        meta = pod.pod.get("metadata") or {}
        result = self.send(self.bind_verb, {"PodName": pod.name, "PodNamespace": pod.namespace,
                                             "PodUID": meta.get("uid", ""), "Node": node_name})
        error = go_field(result, "Error")
        if error:
            raise ExtenderError(str(error))

    def send(self, action: str, args: Mapping[str, Any]) -> Any:
        """POST ``args`` as JSON to ``urlPrefix/action``; the decoded answer of a 200, else ``ExtenderError``."""
        url = self.name.rstrip("/") + "/" + action
        target = urllib.parse.urlsplit(url)
        host, port = target.hostname or "", target.port
        conn: http.client.HTTPConnection
        if self._tls is not None:
            conn = _HTTPSConnection(host, port, self.timeout, self._tls, self._server_name)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=self.timeout)
        path = target.path + (f"?{target.query}" if target.query else "")
        try:
            conn.request("POST", path or "/", body=json.dumps(args).encode(),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            body = resp.read()
        except TimeoutError:
            raise ExtenderError(f'Post "{url}": context deadline exceeded '
                                "(Client.Timeout exceeded while awaiting headers)") from None
        except ConnectionRefusedError:
            default_port = 443 if target.scheme == "https" else 80
            raise ExtenderError(f'Post "{url}": dial tcp {host}:{port or default_port}: connect: '
                                "connection refused") from None
        except (OSError, http.client.HTTPException) as e:
            raise ExtenderError(f'Post "{url}": {e}') from None
        finally:
            conn.close()
        if resp.status != 200:
            raise ExtenderError(f"failed {action} with extender at URL {url}, code {resp.status}")
        try:
            return json.loads(body)
        except ValueError as e:
            raise ExtenderError(f"invalid character in the answer of extender at URL {url}: {e}") from None


def extenders_from_config(cfg: Any) -> list[HTTPExtender]:
    """The config's ``extenders`` in kube's order: as written, the ignorable ones moved to the end (none when
    the config has no such section)."""
    extenders = [HTTPExtender(e) for e in getattr(cfg, "extenders", None) or ()]
    return [e for e in extenders if not e.ignorable] + [e for e in extenders if e.ignorable]


def ignore_extender_resources(cfg: Any, frameworks: Mapping[str, Any]) -> None:
    """kube's ``buildExtenders``: resources an extender manages with ``ignoredByScheduler`` become every
    profile's NodeResourcesFit ``ignoredResources`` (replacing the args'), so the plugin does not count them."""
    names = [r.name for e in getattr(cfg, "extenders", None) or () for r in e.managed_resources or ()
             if r.ignored_by_scheduler]
    if not names:
        return
    for fw in frameworks.values():
        fit = fw.plugins.get("NodeResourcesFit")
        if fit is not None and hasattr(fit, "ignored"):
            fit.ignored = frozenset(names)


def _with_reason(status: Status | None, code: Code, reason: str) -> Status:
    """``status`` with ``reason`` appended (a new ``Status``: plugins share theirs between nodes)."""
    if status is None:
        return Status(code, reason)
    return Status(code, *status.reasons, reason, plugin=status.plugin)


def filter_with_extenders(extenders: Iterable[HTTPExtender], pod: PodInfo, feasible: list[NodeInfo],
                          statuses: dict[str, Status], unschedulable_plugins: set[str]) -> list[NodeInfo]:
    """kube's ``findNodesThatPassExtenders``: each interested extender narrows the feasible nodes in turn.

    A rejected node's status gets the extender's message (unresolvable ones take precedence, as in kube);
    an error fails the attempt (``ExtenderError``) unless the extender is ignorable.
    """
    before = len(feasible)
    for extender in extenders:
        if not feasible:
            break
        if not extender.is_interested(pod):
            continue
        try:
            feasible, failed, unresolvable = extender.filter(pod, feasible)
        except ExtenderError as e:
            if not skipped_if_ignorable(extender, e, "Skipping"):
                raise
            continue
        for name, message in unresolvable.items():
            statuses[name] = _with_reason(statuses.get(name), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)
        for name, message in failed.items():
            if name not in unresolvable:
                existing = statuses.get(name)
                statuses[name] = _with_reason(existing, existing.code if existing else Code.UNSCHEDULABLE, message)
    if len(feasible) != before:
        unschedulable_plugins.add(EXTENDER_NAME)
    return feasible


def add_extender_scores(extenders: Iterable[HTTPExtender], pod: PodInfo, nodes: Sequence[NodeInfo],
                        totals: list[int]) -> None:
    """Add each interested extender's ``score * weight * 10`` to ``totals``; a failing extender adds none."""
    index = {n.name: i for i, n in enumerate(nodes)}
    scale = 100 // MAX_EXTENDER_PRIORITY
    for extender in extenders:
        if not extender.is_interested(pod):
            continue
        try:
            scores, weight = extender.prioritize(pod, nodes)
        except (ExtenderError, TypeError, ValueError) as e:
            log.debug("Failed to run extender's priority function, no score given by it: extender=%s err=%s",
                      extender.name, e)
            continue
        for host, score in scores:
            i = index.get(host)
            if i is not None:
                totals[i] += score * weight * scale


def bind_with_extenders(extenders: Iterable[HTTPExtender], pod: PodInfo, node_name: str) -> Status | None:
    """kube's ``extendersBinding``: the first interested binder binds (success, or its error as a ``Status``);
    an ignorable binder's error passes the pod on; ``None`` when no extender bound it."""
    for extender in extenders:
        if not extender.bind_verb or not extender.is_interested(pod):
            continue
        try:
            extender.bind(pod, node_name)
        except ExtenderError as e:
            if extender.ignorable:
                log.info("Skipping extender in bind as it returned error: extender=%s err=%s", extender.name, e)
                continue
            return Status(Code.ERROR, str(e))
        return Status(Code.SUCCESS)
    return None
