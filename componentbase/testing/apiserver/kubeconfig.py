"""A standard kubeconfig for the loopback server, readable by kubectl and the Python client."""

from __future__ import annotations

import base64
import json
import os

from componentbase.util._files import write_atomic

__all__ = ["kubeconfig_text", "write_kubeconfig"]


def _b64(data: bytes) -> str:
    return json.dumps(base64.b64encode(data).decode("ascii"))


def kubeconfig_text(server: str, token: str | None = None, name: str = "loopback", *,
                    ca_data: bytes | None = None, client_cert: tuple[bytes, bytes] | None = None) -> str:
    """YAML with JSON-quoted scalars, so any URL or token stays a plain string.

    ``ca_data`` (PEM) becomes the cluster's certificate-authority-data; ``client_cert`` (certificate
    and key PEM) the user's client-certificate-data and client-key-data.
    """
    q = json.dumps
    user = f"    token: {q(token)}\n" if token else ""
    if client_cert is not None:
        user += f"    client-certificate-data: {_b64(client_cert[0])}\n    client-key-data: {_b64(client_cert[1])}\n"
    user = user or "    {}\n"
    authority = f"    certificate-authority-data: {_b64(ca_data)}\n" if ca_data else ""
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        f"- name: {q(name)}\n"
        "  cluster:\n"
        f"    server: {q(server)}\n"
        f"{authority}"
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
                     name: str = "loopback", *, ca_data: bytes | None = None,
                     client_cert: tuple[bytes, bytes] | None = None) -> None:
    """Write atomically and private to the owner, since it may carry a bearer token or a key."""
    text = kubeconfig_text(server, token, name, ca_data=ca_data, client_cert=client_cert)
    write_atomic(path, text, mode=0o600)
