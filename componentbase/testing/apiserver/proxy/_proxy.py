"""The node proxy: pods/log, exec, attach, portforward and nodes/proxy, forwarded to the node's kubelet.

As kube-apiserver, the server finds the pod's node, dials the kubelet endpoint the node advertises
(``status.addresses``, ``status.daemonEndpoints.kubeletEndpoint.Port``) over TLS with its own client
certificate (``_kubeletclient``) and relays: a log as a chunked stream, an upgrade (WebSocket, SPDY) as
raw bytes both ways once the kubelet answers 101. kubectl 1.37 speaks WebSocket to the server for exec
and attach (``v5.channel.k8s.io``) and tunnels SPDY in WebSocket for port-forward; kube-apiserver
translates both to SPDY for the kubelet, this server passes them through unchanged, so the kubelet it
reaches (the example virtual kubelet) serves those protocols itself.

Address choice: ``InternalIP``, then ``Hostname``, ``ExternalIP`` (kube-apiserver's
``--kubelet-preferred-address-types`` put Hostname first; a virtual node's hostname is its name, which
rarely resolves). Errors answer as kube-apiserver's: a kubelet's refusal goes through its
``GenericHttpResponseChecker`` (the kubelet's text kept in the Status), an unreachable kubelet is a 500
without a reason, its message naming the dial that failed.
"""

from __future__ import annotations

import http.client
import io
import json
import re
import select
import socket
import ssl
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from ..apimachinery.errors import ApiError
from ..apimachinery.user import Attributes
from ..auth._authn import authorize
from ..routing import Route
from ._kubeletclient import KubeletClient

__all__ = ["Target", "attributes", "checked", "connect", "kubelet_client", "match", "serve", "splice"]

_POD = re.compile(r"/api/v1/namespaces/([^/]+)/pods/([^/]+)/(log|exec|attach|portforward)/?")
_NODE = re.compile(r"/api/v1/nodes/([^/]+)/proxy(/.*)?")
_ADDRESS_TYPES = ("InternalIP", "Hostname", "ExternalIP", "InternalDNS", "ExternalDNS")
_DEFAULT_KUBELET_PORT = 10250
#: Request headers never forwarded: hop-by-hop ones and the caller's own credentials.
_DROP = frozenset({"host", "authorization", "content-length", "transfer-encoding", "keep-alive",
                   "proxy-authorization", "te", "trailer"})
_MAX_ERROR_BODY = 50000  # as kube's response checker
_DIAL_TIMEOUT = 10.0
_CLIENTS_LOCK = threading.Lock()


def kubelet_client(server: Any) -> KubeletClient:
    """The server's kubelet client (its certificate made on first use), kept on the server object."""
    with _CLIENTS_LOCK:
        found: KubeletClient | None = getattr(server, "_kubelet_client", None)
        if found is None:
            found = KubeletClient()
            server._kubelet_client = found
        return found


@dataclass(frozen=True, slots=True)
class Target:
    """What a connect request asks for: ``sub`` is log, exec, attach, portforward or proxy (a node's)."""

    sub: str
    name: str
    namespace: str = ""
    rest: str = ""  # the path after ``nodes/NAME/proxy``


def match(path: str) -> Target | None:
    """The connect subresource ``path`` names, or None for every other path."""
    found = _POD.fullmatch(path)
    if found:
        return Target(found.group(3), found.group(2), found.group(1))
    found = _NODE.fullmatch(path)
    if found:
        return Target("proxy", found.group(1), rest=found.group(2) or "/")
    return None


def attributes(target: Target, method: str) -> Attributes:
    """What the request asks to do. exec, attach and portforward need ``create`` even as a WebSocket GET
    (kube 1.35's AuthorizePodWebsocketUpgradeCreatePermission, on by default); the rest use the method."""
    if target.sub in ("exec", "attach", "portforward"):
        verb = "create"
    else:
        verb = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete"}.get(method, "get")
    resource = "nodes" if target.sub == "proxy" else "pods"
    return Attributes(verb, resource, target.sub, "", target.namespace, target.name)


# --- where to go -------------------------------------------------------------------------------------


def _container(pod: Mapping[str, Any], given: str) -> str:
    """kube's ``validateContainer``: the one container when none is named, else a named one the pod has."""
    spec = pod.get("spec") or {}
    name = (pod.get("metadata") or {}).get("name", "")
    every = [str(c.get("name")) for key in ("initContainers", "containers", "ephemeralContainers")
             for c in spec.get(key) or ()]
    if given:
        if given not in every:
            raise ApiError.bad_request(f"container {given} is not valid for pod {name}")
        return given
    containers = spec.get("containers") or []
    if len(containers) == 1:
        return str(containers[0].get("name"))
    if not containers:
        raise ApiError.bad_request(f"a container name must be specified for pod {name}")
    raise ApiError.bad_request(f"a container name must be specified for pod {name}, "
                               f"choose one of: [{' '.join(every)}]")


def _endpoint(server: Any, node_name: str) -> tuple[str, int]:
    entry = server.store.get("nodes", "", node_name)
    if entry is None:
        raise ApiError(404, "NotFound", f'nodes "{node_name}" not found', {"name": node_name, "kind": "nodes"})
    status = entry.obj.get("status") or {}
    addresses = [a for a in status.get("addresses") or () if isinstance(a, dict)]
    port = int(((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port") or 0)
    for kind in _ADDRESS_TYPES:
        for address in addresses:
            if address.get("type") == kind and address.get("address"):
                return str(address["address"]), port or _DEFAULT_KUBELET_PORT
    known = " ".join(f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in addresses)
    raise ApiError(500, "", f"no preferred addresses found; known addresses: [{known}]")


_LOG_FLAGS = ("follow", "previous", "timestamps")
_LOG_VALUES = ("sinceSeconds", "sinceTime", "tailLines", "limitBytes")
_STREAM_FLAGS = ("stdin", "stdout", "stderr", "tty")


def _truthy(value: str) -> bool:
    return value.lower() in ("1", "true", "t", "yes")


def _kubelet_location(server: Any, target: Target, pairs: Sequence[tuple[str, str]],
                      raw_query: str) -> tuple[str, int, str] | None:
    """(host, port, path?query) on the kubelet; None for the log of a pod no node runs (an empty log)."""
    if target.sub == "proxy":
        host, port = _endpoint(server, target.name)
        return host, port, target.rest + (f"?{raw_query}" if raw_query else "")
    entry = server.store.get("pods", target.namespace, target.name)
    if entry is None:
        raise ApiError(404, "NotFound", f'pods "{target.name}" not found', {"name": target.name, "kind": "pods"})
    pod = entry.obj
    query = dict(pairs)
    params: list[tuple[str, str]] = []
    container = ""
    if target.sub != "portforward":
        container = _container(pod, query.get("container", ""))
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    if not node:
        if target.sub == "log":
            return None
        raise ApiError.bad_request(f"pod {target.name} does not have a host assigned")
    host, port = _endpoint(server, node)
    if target.sub == "log":
        params += [(k, "true") for k in _LOG_FLAGS if _truthy(query.get(k, ""))]
        params += [(k, query[k]) for k in _LOG_VALUES if query.get(k)]
        path = f"/containerLogs/{target.namespace}/{target.name}/{container}"
    elif target.sub == "portforward":
        ports = [v for k, v in pairs if k == "ports"]
        params += [("port", ",".join(ports))] if ports else []
        path = f"/portForward/{target.namespace}/{target.name}"
    else:
        params += [(k, "1") for k in _STREAM_FLAGS if _truthy(query.get(k, ""))]
        params += [("command", v) for k, v in pairs if k == "command" and target.sub == "exec"]
        path = f"/{target.sub}/{target.namespace}/{target.name}/{container}"
    return host, port, path + (f"?{urlencode(params)}" if params else "")


# --- the kubelet's answer ----------------------------------------------------------------------------

_GENERIC = {404: ("NotFound", "the server could not find the requested resource"),
            401: ("Unauthorized", "the server has asked for the client to provide credentials"),
            405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
            409: ("Conflict", "the server reported a conflict"),
            422: ("Invalid", "the server rejected our request due to an error in our request"),
            429: ("TooManyRequests", "the server has received too many requests and has asked us to try again later"),
            503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
            504: ("Timeout", "the server was unable to return a response in the time allotted, but may still be "
                             "processing the request")}


def checked(code: int, body: str, target: Target) -> ApiError:
    """kube's ``GenericHttpResponseChecker`` on a kubelet's refusal of ``pods/SUB``."""
    if code == 500:
        return ApiError(500, "InternalError", f"Internal error occurred: {body}", {"causes": [{"message": body}]})
    if code == 400:
        return ApiError.bad_request(body)
    resource = f"{'nodes' if target.sub == 'proxy' else 'pods'}/{target.sub}"
    if code in (403, 406, 415):
        reason, message = {403: "Forbidden", 406: "NotAcceptable", 415: "UnsupportedMediaType"}[code], body
    elif code in _GENERIC:
        reason, message = _GENERIC[code]
    elif code >= 500:
        reason = "InternalError"  # the body quoted as Go's %q does
        message = f"an error on the server ({json.dumps(body)}) has prevented the request from succeeding"
    else:
        reason, message = "", f"the server responded with the status code {code} but did not return more information"
    return ApiError(code, reason, f"{message} ( {resource} {target.name})", {"name": target.name, "kind": resource})


class _Raw:
    """Gives ``http.client`` an unbuffered file, so nothing past the kubelet's header block is read ahead
    (after a 101 those bytes belong to the upgraded stream, relayed as they are)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def makefile(self, mode: str) -> Any:
        return self.sock.makefile("rb", buffering=0)


def _dial(server: Any, host: str, port: int, what: str) -> ssl.SSLSocket:
    try:
        raw = socket.create_connection((host, port), timeout=_DIAL_TIMEOUT)
    except OSError as err:
        reason = "connection refused" if isinstance(err, ConnectionRefusedError) else (err.strerror or str(err))
        raise ApiError(500, "", f"{what}: dial tcp {host}:{port}: connect: {reason}") from None
    try:
        return kubelet_client(server).context().wrap_socket(raw)
    except (OSError, ssl.SSLError) as err:
        raw.close()
        raise ApiError(500, "", f"{what}: tls handshake with {host}:{port}: {err}") from None


def connect(handler: Any, user: Any, target: Target, method: str, pairs: Sequence[tuple[str, str]],
            raw_query: str, body: bytes) -> None:
    """Count, authorize (as the request's verb on the subresource) and relay a connect request."""
    attrs = attributes(target, method)
    handler.server.count(attrs.verb, attrs.resource)
    if handler.server.enforce_authorization:
        res = handler.server.registry.must("", "v1", attrs.resource)
        authorize(handler.server.authorizer, user, Route(attrs.verb, res, target.namespace, target.name, target.sub))
    serve(handler, target, method, pairs, raw_query, body)


def serve(handler: Any, target: Target, method: str, pairs: Sequence[tuple[str, str]], raw_query: str,
          body: bytes) -> None:
    """Answer ``handler``'s request by relaying it to the kubelet; raise ApiError before anything is sent."""
    location = _kubelet_location(handler.server, target, pairs, raw_query)
    if location is None:
        handler._send(200, b"", content_type="text/plain")
        return
    host, port, path = location
    upgrade = "upgrade" in (handler.headers.get("Connection") or "").lower() and bool(handler.headers.get("Upgrade"))
    url = f"https://{host}:{port}{path}"
    what = "error dialing backend" if upgrade else f'{method.capitalize()} "{url}"'
    sock = _dial(handler.server, host, port, what)
    try:
        head = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}"]
        head += [f"{k}: {v}" for k, v in handler.headers.items()
                 if k.lower() not in _DROP and (upgrade or k.lower() != "connection")]
        if not upgrade:
            head.append("Connection: close")
        if body:
            head.append(f"Content-Length: {len(body)}")
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        resp = http.client.HTTPResponse(_Raw(sock), method=method)  # type: ignore[arg-type]
        try:
            resp.begin()
        except (OSError, http.client.HTTPException) as err:
            raise ApiError(500, "", f"{what}: {err}") from None
        handler.close_connection = True
        if resp.status == 101 and upgrade:
            _relay_upgrade(handler, sock, resp)
        elif target.sub == "proxy" or 200 <= resp.status <= 206:
            _relay_response(handler, sock, resp)
        else:
            raise checked(resp.status, resp.read(_MAX_ERROR_BODY).decode("utf-8", "replace"), target)
    finally:
        sock.close()


def _relay_upgrade(handler: Any, sock: ssl.SSLSocket, resp: http.client.HTTPResponse) -> None:
    lines = [f"HTTP/1.1 101 {resp.reason}"] + [f"{k}: {v}" for k, v in resp.getheaders()]
    handler.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    handler.wfile.flush()
    sock.settimeout(None)
    splice(handler.connection, sock)


def _relay_response(handler: Any, sock: ssl.SSLSocket, resp: http.client.HTTPResponse) -> None:
    """Stream the kubelet's body as chunks until it ends or the client hangs up (a followed log)."""
    sock.settimeout(None)
    resp.fp = io.BufferedReader(resp.fp)  # read1 from here on; nothing was read ahead
    content_type = resp.getheader("Content-Type") or "text/plain"
    handler.wfile.write((f"HTTP/1.1 {resp.status} {resp.reason}\r\nContent-Type: {content_type}\r\n"
                         "Transfer-Encoding: chunked\r\nCache-Control: no-cache, private\r\n"
                         "Connection: close\r\n\r\n").encode("latin-1"))
    handler.wfile.flush()
    done = threading.Event()
    threading.Thread(target=_hang_up_with, args=(handler.connection, sock, done), daemon=True,
                     name="proxy-watch").start()
    try:
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
    except (OSError, ValueError, http.client.HTTPException):
        pass
    finally:
        done.set()


def _hang_up_with(client: socket.socket, backend: socket.socket, done: threading.Event) -> None:
    """Close the kubelet side when the client goes away, which ends a relay blocked reading the kubelet."""
    while not done.is_set():
        try:
            ready, _, _ = select.select([client], [], [], 0.5)
            # Read, not peek (a TLS socket cannot peek): nothing the client sends now is kept, as the
            # connection closes after the stream.
            if ready and client.recv(1) == b"":
                break
        except (OSError, ValueError):
            break
    if not done.is_set():
        try:
            backend.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _recv(sock: socket.socket) -> bytes:
    data = sock.recv(65536)
    pending = getattr(sock, "pending", None)
    while data and pending is not None and pending():
        data += sock.recv(pending())
    return data


def splice(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    peer = {a.fileno(): b, b.fileno(): a}
    by_fd = {a.fileno(): a, b.fileno(): b}
    try:
        while True:
            ready, _, _ = select.select(list(by_fd.values()), [], [])
            for sock in ready:
                data = _recv(sock)
                if not data:
                    return
                peer[sock.fileno()].sendall(data)
    except (OSError, ValueError):
        return
