"""What providers are given and return, besides pods: their spec, context, log and exec options, errors."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from componentbase_examples.virtual_kubelet.resources import ResourceManager

__all__ = ["ExecIO", "LogOptions", "PodNotFound", "PortStream", "ProviderContext", "ProviderSpec"]


class PodNotFound(LookupError):
    """The provider does not know the pod (upstream's ``errdefs.NotFound``)."""


@attrs.frozen(kw_only=True)
class ProviderContext:
    """What a provider is built with (upstream's ``provider.InitConfig``)."""

    node_name: str
    operating_system: str
    #: ``$VKUBELET_POD_IP``: the address the node reports, when the provider has none of its own.
    internal_ip: str
    #: The kubelet API port, reported as ``daemonEndpoints.kubeletEndpoint.Port``.
    daemon_port: int
    cluster_domain: str
    #: The decoded ``--provider-config`` (an instance of the spec's ``config_type``), or None.
    config: Any
    #: ConfigMaps and Secrets from the informers' caches, for resolving what pods reference.
    resources: ResourceManager
    #: ``record_event(pod, type, reason, message)``: an Event about a pod from the ``kubelet`` (a probe that
    #: failed, a container killed), sent as the node's other Events are; dropped before the node runs.
    record_event: Callable[[dict[str, Any], str, str, str], None] = lambda pod, type, reason, message: None


@attrs.frozen(kw_only=True)
class ProviderSpec:
    """One provider a plugin offers: ``--provider=name`` selects it."""

    name: str
    #: Builds the provider object (whose methods are the hook implementations).
    factory: Callable[[ProviderContext], object]
    #: The attrs class ``--provider-config`` decodes into, strictly; None: the provider takes no config.
    config_type: type | None = None
    #: Checks a decoded config beyond its types (quantities, paths); returns every problem.
    validate: Callable[[Any], list[Exception]] | None = None


@attrs.frozen(kw_only=True)
class LogOptions:
    """The query of ``GET /containerLogs`` (upstream's ``api.ContainerLogOpts``); None means not given."""

    tail: int | None = None
    limit_bytes: int | None = None
    timestamps: bool = False
    follow: bool = False
    previous: bool = False
    since_seconds: int | None = None
    since_time: dt.datetime | None = None


@attrs.define(kw_only=True)
class ExecIO:
    """The streams of one exec session; an absent stream is None.

    ``stdin`` is a binary file the server feeds and closes at the client's end of input;
    ``stdout``/``stderr`` take the bytes the command writes. ``done`` is set when the client went away.
    """

    stdin: IO[bytes] | None = None
    stdout: Callable[[bytes], None] | None = None
    stderr: Callable[[bytes], None] | None = None
    tty: bool = False
    closed: Callable[[], bool] = lambda: False
    #: Set by a provider that runs the command on a terminal: called with (width, height) when the client's
    #: terminal is resized (channel 4).
    resize: Callable[[int, int], None] | None = None
    #: Called by that provider once ``resize`` is set, so a size the client sent before is applied.
    on_terminal: Callable[[], None] = lambda: None


@attrs.define(kw_only=True)
class PortStream:
    """One forwarded connection of a port-forward session, as a provider sees it.

    ``read()`` blocks for the client's next bytes and answers ``b""`` once the client closed its side;
    ``write(data)`` sends bytes to the client; ``closed()`` tells whether the session is gone.
    """

    read: Callable[[], bytes]
    write: Callable[[bytes], None]
    closed: Callable[[], bool] = lambda: False
