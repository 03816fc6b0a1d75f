"""Calling a webhook: one HTTPS POST of a JSON review, and the failure wording kube-apiserver gives it.

A webhook's ``clientConfig`` names a ``url`` or a ``service`` (namespace, name, path, port 443). No Service
routes anywhere here, so a service is reached through a map the test fixture gives the server
(``webhook_services``: ``"namespace/name"`` -> ``"host:port"``), as envtest's WebhookInstallOptions points
configurations at the webhook server in the test. The certificate is still verified as kube-apiserver
verifies it: against ``caBundle`` (the system's roots without one) and for ``name.namespace.svc``.

Failures read as client-go's: ``Post "URL": dial tcp 127.0.0.1:9443: connect: connection refused``,
``...: context deadline exceeded``, ``...: tls: failed to verify certificate: x509: certificate signed by
unknown authority``. As client-go, the URL carries ``?timeout=Ns`` when the call has a timeout.

Connections are kept alive, as kube-apiserver's webhook client keeps them (Go's transport): a call takes an
idle HTTP/1.1 connection to the same address, name and CA, or opens one; each call in flight has its own,
and at most ``MAX_IDLE_PER_HOST`` wait idle per address for ``IDLE_TIMEOUT`` seconds. The TLS handshake is
the most of a call's cost on a new connection. An idle connection the webhook closed (readable while idle,
as Go's read loop notices) is dropped before use; one it closed while the request was sent is retried once
on a new connection, only when no byte of an answer came (reviews are POSTs: Go retries them only then).
``close`` (the server's stop) closes them all.
"""

from __future__ import annotations

import base64
import binascii
import http.client
import ipaddress
import json
import select
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

__all__ = ["CallError", "WebhookClient"]

_UNKNOWN_AUTHORITY = (18, 19, 20, 21, 27)  # OpenSSL's self-signed, unknown issuer, untrusted codes
_EXPIRED = (9, 10)
MAX_IDLE_PER_HOST = 25  # apimachinery's SetTransportDefaults
IDLE_TIMEOUT = 90.0  # Go's DefaultTransport
#: A kept-alive connection the peer closed: the request may be sent again when no answer came back on it.
_CLOSED = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError,
           ssl.SSLEOFError, ssl.SSLZeroReturnError)
_NO_DETAIL = {404: "the server could not find the requested resource", 401: "Unauthorized",
              403: "Forbidden", 400: "the server rejected our request for an unknown reason"}


class CallError(Exception):
    """The webhook could not be asked, or did not answer (kube's ErrCallingWebhook reason)."""


class _Stale(Exception):
    """A reused connection closed before any byte of the answer: send again on a new one."""


@dataclass(frozen=True, slots=True)
class _Target:
    url: str  # as client-go prints it in errors
    host: str  # where to connect
    port: int
    server_name: str  # what the certificate must be valid for
    path: str
    ca_bundle: bytes | None


class WebhookClient:
    """Posts reviews; ``services`` maps ``"namespace/name"`` (any port) to the ``"host:port"`` serving it."""

    def __init__(self, services: Mapping[str, str] | None = None) -> None:
        self.services = dict(services or {})
        self._lock = threading.Lock()
        self._idle: dict[tuple[str, int, str, bytes | None], list[tuple[float, http.client.HTTPConnection]]] = {}
        self._closed = False

    def close(self) -> None:
        """Close the idle connections; those in flight close when their call ends. Calls may still follow,
        on connections of their own."""
        with self._lock:
            idle, self._idle, self._closed = self._idle, {}, True
        for conns in idle.values():
            for _, conn in conns:
                conn.close()

    def post(self, client_config: Any, review: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        """The decoded answer to ``review``; CallError for anything but a JSON object with a 2xx."""
        target = self._target(client_config, timeout)
        body = json.dumps(review, separators=(",", ":")).encode()
        try:
            status, data = self._exchange(target, body, timeout if timeout is not None else 30.0)
        except CallError as err:
            raise CallError(f'Post "{target.url}": {err}') from None
        if not 200 <= status < 300:
            why = _NO_DETAIL.get(status) or (
                f"an error on the server ({data[:512].decode('utf-8', 'replace')!r}) has prevented the request "
                "from succeeding" if status >= 500 else
                f"the server responded with the status code {status} but did not return more information")
            raise CallError(why)
        try:
            answer = json.loads(data)
        except (ValueError, UnicodeDecodeError) as err:
            raise CallError(f"couldn't get version/kind; json parse error: {_json_error(data, err)}") from None
        if not isinstance(answer, dict):
            raise CallError("couldn't get version/kind; json parse error: not a JSON object")
        return answer

    def _target(self, cfg: Any, timeout: float | None) -> _Target:
        cfg = cfg if isinstance(cfg, dict) else {}
        query = f"?timeout={int(-(-timeout // 1))}s" if timeout else ""
        ca = _ca_bundle(cfg.get("caBundle"))
        service = cfg.get("service")
        if isinstance(service, dict):
            ns, name = str(service.get("namespace") or ""), str(service.get("name") or "")
            port = int(service.get("port") or 443)
            path = str(service.get("path") or "/")
            server_name = f"{name}.{ns}.svc"
            url = f"https://{server_name}:{port}{path}{query}"
            mapped = self.services.get(f"{ns}/{name}")
            if mapped is None:
                raise CallError(f'Post "{url}": service "{name}" not found '
                                f"(the loopback server reaches a webhook Service only through webhook_services)")
            host, _, mapped_port = mapped.rpartition(":")
            return _Target(url, host.strip("[]"), int(mapped_port), server_name, path + query, ca)
        raw = str(cfg.get("url") or "")
        parts = urlsplit(raw)
        if query and parts.query:
            query = f"&{query[1:]}"
        if parts.scheme != "https" or not parts.hostname:
            raise CallError(f'Post "{raw}{query}": unsupported protocol scheme '
                            f'"{parts.scheme}" (webhooks are called over https)')
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "") + query
        return _Target(raw + query, parts.hostname, parts.port or 443, parts.hostname, path, ca)

    def _exchange(self, t: _Target, body: bytes, timeout: float) -> tuple[int, bytes]:
        """(status, body) on a kept-alive connection, or on a new one; a reused one found closed is retried."""
        key = (t.host, t.port, t.server_name, t.ca_bundle)
        conn = self._take(key, timeout)
        if conn is not None:
            try:
                return self._roundtrip(key, conn, t, body, reused=True)
            except _Stale:
                pass
        return self._roundtrip(key, self._dial(t, timeout), t, body, reused=False)

    def _take(self, key: tuple[str, int, str, bytes | None], timeout: float) -> http.client.HTTPConnection | None:
        """An idle connection still open, its timeout set for this call; None when there is none."""
        now = time.monotonic()
        while True:
            with self._lock:
                conns = self._idle.get(key)
                if not conns:
                    return None
                since, conn = conns.pop()
            sock = conn.sock
            readable = sock is not None and select.select([sock], [], [], 0)[0]
            if sock is None or readable or now - since > IDLE_TIMEOUT:  # closed by the peer, or too old
                conn.close()
                continue
            sock.settimeout(timeout)
            return conn

    def _give_back(self, key: tuple[str, int, str, bytes | None], conn: http.client.HTTPConnection) -> None:
        with self._lock:
            conns = self._idle.setdefault(key, [])
            if not self._closed and len(conns) < MAX_IDLE_PER_HOST:
                conns.append((time.monotonic(), conn))
                return
        conn.close()

    def _roundtrip(self, key: tuple[str, int, str, bytes | None], conn: http.client.HTTPConnection, t: _Target,
                   body: bytes, *, reused: bool) -> tuple[int, bytes]:
        answered = False
        try:
            conn.request("POST", t.path, body, {"Content-Type": "application/json", "Accept": "application/json",
                                              "User-Agent": "kube-apiserver-admission"})
            reply = conn.getresponse()
            answered = True
            data = reply.read()
        except TimeoutError:
            conn.close()
            raise CallError("context deadline exceeded") from None
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            if reused and not answered and isinstance(err, _CLOSED):
                raise _Stale from None
            raise CallError(f"read tcp {_hostport(t.host, t.port)}: {err}") from None
        if reply.will_close:
            conn.close()
        else:
            self._give_back(key, conn)
        return reply.status, data

    def _dial(self, t: _Target, timeout: float) -> http.client.HTTPConnection:
        """A new connection, its TLS handshake done and the certificate checked."""
        try:
            sock = socket.create_connection((t.host, t.port), timeout=timeout)
        except ConnectionRefusedError:
            raise CallError(f"dial tcp {_hostport(t.host, t.port)}: connect: connection refused") from None
        except TimeoutError:
            raise CallError("context deadline exceeded") from None
        except OSError as err:
            raise CallError(f"dial tcp {_hostport(t.host, t.port)}: {err.strerror or err}") from None
        try:
            # http.client sends the head and the body apart: with Nagle on, the body waits for the head's
            # delayed ACK (40 ms a call); HTTPConnection.connect sets this itself, but the socket is ours
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tls = _handshake(sock, t)
        except TimeoutError:
            sock.close()
            raise CallError("context deadline exceeded") from None
        except (CallError, OSError) as err:
            sock.close()
            if isinstance(err, CallError):
                raise
            raise CallError(f"read tcp {_hostport(t.host, t.port)}: {err}") from None
        conn = http.client.HTTPConnection(t.host, t.port, timeout=timeout)
        conn.sock = tls
        return conn


def _json_error(data: bytes, err: Exception) -> str:
    """Go's encoding/json wording for the usual bad answers (an empty body, an HTML page), else Python's."""
    text = data.strip()
    if not text:
        return "unexpected end of JSON input"
    if chr(text[0]) not in '{["-0123456789tfn':
        return f"invalid character {chr(text[0])!r} looking for beginning of value"
    return str(err)


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _ca_bundle(value: Any) -> bytes | None:
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise CallError("could not get REST client: unable to load root certificates: caBundle is not base64") \
            from None


def _handshake(sock: socket.socket, t: _Target) -> ssl.SSLSocket:
    """TLS verified against ``caBundle`` and for ``server_name``, with Go's x509 wording on failure."""
    ctx = _context(t.ca_bundle)
    sni = None if _is_ip(t.server_name) else t.server_name
    try:
        tls = ctx.wrap_socket(sock, server_hostname=sni)
    except ssl.SSLCertVerificationError as err:
        why = ("certificate signed by unknown authority" if err.verify_code in _UNKNOWN_AUTHORITY else
               "certificate has expired or is not yet valid" if err.verify_code in _EXPIRED else
               str(err.verify_message))
        raise CallError(f"tls: failed to verify certificate: x509: {why}") from None
    except ssl.SSLError as err:
        raise CallError(f"remote error: tls: {err.reason or err}") from None
    cert: Any = tls.getpeercert() or {}
    sans = cert.get("subjectAltName", ())
    ip = _is_ip(t.server_name)
    names = [str(v) for k, v in sans if k == ("IP Address" if ip else "DNS")]
    if not _valid_for(names, t.server_name):
        tls.close()
        if ip and not names:  # Go's HostnameError, word for word
            why = f"cannot validate certificate for {t.server_name} because it doesn't contain any IP SANs"
        elif not names:
            why = f"certificate is not valid for any names, but wanted to match {t.server_name}"
        else:
            why = f"certificate is valid for {', '.join(_go_ip(n) if ip else n for n in names)}, not {t.server_name}"
        raise CallError(f"tls: failed to verify certificate: x509: {why}")
    return tls


@lru_cache(maxsize=64)
def _context(ca_bundle: bytes | None) -> ssl.SSLContext:
    """The client context trusting ``ca_bundle`` (the system's roots without one), made once per CA: loading
    the roots is a good part of a new connection's cost. Hostnames are checked by ``_handshake``."""
    try:
        ctx = ssl.create_default_context(cadata=ca_bundle.decode("ascii") if ca_bundle else None)
    except (ssl.SSLError, UnicodeDecodeError, ValueError):
        raise CallError("tls: failed to verify certificate: x509: certificate signed by unknown authority "
                        "(the caBundle holds no usable certificate)") from None
    ctx.check_hostname = False  # checked in _handshake, to word a mismatch as Go does
    return ctx


def _go_ip(text: str) -> str:
    """An IP SAN as Go prints it (Python writes IPv6 ones in full, with a trailing newline)."""
    return str(ipaddress.ip_address(text.strip()))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _valid_for(names: list[str], host: str) -> bool:
    """Go's VerifyHostname: an IP matches an IP SAN; a name matches a DNS SAN, ``*.`` covering one label."""
    if _is_ip(host):
        return any(_is_ip(n.strip()) and ipaddress.ip_address(n.strip()) == ipaddress.ip_address(host)
                   for n in names)
    host = host.lower().rstrip(".")
    for name in (n.lower() for n in names if not _is_ip(n.strip())):
        if name == host or (name.startswith("*.") and "." in host and host.split(".", 1)[1] == name[2:]):
            return True
    return False
