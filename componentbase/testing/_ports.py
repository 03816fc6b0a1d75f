"""A free TCP port on the loopback address, for a component a test (or the demo) starts on a port it chooses."""

from __future__ import annotations

import socket

__all__ = ["free_port"]


def free_port() -> int:
    """A port nothing listens on right now (the kernel's pick); another process may take it before it is used,
    so prefer ``--port=0`` where the component can report the port it got."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
