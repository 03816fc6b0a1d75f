"""A standard kubeconfig for the loopback server, readable by kubectl and the Python client."""

from __future__ import annotations

import json
import os

from componentbase.util._files import write_atomic

__all__ = ["kubeconfig_text", "write_kubeconfig"]


def kubeconfig_text(server: str, token: str | None = None, name: str = "loopback") -> str:
    """YAML with JSON-quoted scalars, so any URL or token stays a plain string."""
    q = json.dumps
    user = f"    token: {q(token)}\n" if token else "    {}\n"
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        f"- name: {q(name)}\n"
        "  cluster:\n"
        f"    server: {q(server)}\n"
        "users:\n"
        f"- name: {q(name)}\n"
        "  user:\n"
        f"{user}"
        "contexts:\n"
        f"- name: {q(name)}\n"
        "  context:\n"
        f"    cluster: {q(name)}\n"
        f"    user: {q(name)}\n"
        f"    namespace: default\n"
        f"current-context: {q(name)}\n"
        "preferences: {}\n"
    )


def write_kubeconfig(path: str | os.PathLike[str], server: str, token: str | None = None,
                     name: str = "loopback") -> None:
    """Write atomically and private to the owner, since it may carry a bearer token."""
    write_atomic(path, kubeconfig_text(server, token, name), mode=0o600)
