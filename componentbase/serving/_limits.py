"""``ServerLimits``, apart from the server: the serving options hold one, and ``--help`` builds the options
without loading the server (its sockets, TLS and HTTP wire code)."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["ServerLimits"]


def _positive(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value > 0:
        raise ValueError(f"serving limit {attribute.name} must be positive, not {value!r}")


@attrs.frozen(kw_only=True)
class ServerLimits:
    """What one client may take from a server; the timeouts are kube-apiserver's (Go's ``http.Server``)."""

    #: The TLS handshake, request line and headers must all arrive within this many seconds of the
    #: connection (of the first byte, for a keep-alive connection's next request); a body within as many
    #: of its head. kube-apiserver's ``ReadHeaderTimeout``.
    header_timeout: float = attrs.field(default=32.0, validator=_positive)
    #: How long a keep-alive connection may wait for its next request (``IdleTimeout``).
    idle_timeout: float = attrs.field(default=90.0, validator=_positive)
    #: How long one write of a response may wait for a client that does not read.
    write_timeout: float = attrs.field(default=60.0, validator=_positive)
    #: Requests served at once (kube-apiserver's ``--max-requests-inflight``); more are answered 429.
    max_in_flight: int = attrs.field(default=400, validator=_positive)
    #: Health probes (``probe_paths``, GET or HEAD) are counted apart, against their own limit of as many.
    probe_paths: tuple[str, ...] = ("/healthz", "/livez", "/readyz")
    #: Connections waiting (handshaking, sending a request, idle); beyond it the longest-waiting is closed.
    max_connections: int = attrs.field(default=1024, validator=_positive)
    #: Request line and headers; more is 431. Go's default is 1 MiB; 64 KiB bounds the memory slow clients
    #: can hold (``max_connections`` times this) and is far more than any Kubernetes client sends.
    max_header_bytes: int = attrs.field(default=64 * 1024, validator=_positive)
    #: A request body (nothing here takes one but it must be read); more is 413 before it is read.
    max_body_bytes: int = attrs.field(default=1024 * 1024, validator=_positive)
    #: Seconds a 429 asks the client to wait (``Retry-After``), as kube-apiserver does.
    retry_after: int = attrs.field(default=1, validator=_positive)
