"""HTTPS for the loopback server: a CA made at start, a serving certificate, and client certificates.

kubectl sends a bearer token only over TLS, so a server that authenticates serves HTTPS. The CA it makes
signs the serving certificate (for the host, ``localhost``, ``127.0.0.1`` and ``::1``) and the client
certificates ``client_certificate`` issues; client certificates are trusted when that CA or the one in
``--client-ca-file`` signed them, and name the user in CN and the groups in O, as kube-apiserver reads
them. Keys are P-256: a server starts in milliseconds, not the tens an RSA key takes.
"""

from __future__ import annotations

import os
import ssl
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from componentbase.util._certs import CertificateAuthority

from ..apimachinery.user import User

__all__ = ["ServerTLS", "load_pair", "peer_user"]


class ServerTLS:
    """The server's CA, its SSL context, and the client CAs it trusts."""

    def __init__(self, host: str, client_ca_file: str | None = None) -> None:
        trusted = b""
        if client_ca_file is not None:
            with open(client_ca_file, "rb") as f:
                trusted = f.read()
            if b"-----BEGIN CERTIFICATE-----" not in trusted:
                raise ValueError(f"{client_ca_file}: no PEM certificate in the client CA file")
        self.ca = CertificateAuthority.generate(f"loopback-apiserver-ca@{int(time.time())}")
        cert, key = self.ca.issue("loopback-apiserver", hosts=[host, "localhost", "127.0.0.1", "::1"],
                                  server=True)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        load_pair(context, cert + self.ca.cert_pem, key)
        try:
            context.load_verify_locations(cadata=(self.ca.cert_pem + b"\n" + trusted).decode("ascii"))
        except (ssl.SSLError, UnicodeDecodeError):
            raise ValueError(f"{client_ca_file}: not a PEM certificate bundle") from None
        context.verify_mode = ssl.CERT_OPTIONAL  # a client certificate is one way to authenticate, not required
        context.set_alpn_protocols(["http/1.1"])
        self.context = context

    @property
    def ca_pem(self) -> bytes:
        """The CA a client verifies the server with (a kubeconfig's certificate-authority-data)."""
        return self.ca.cert_pem

    def client_certificate(self, user: str, groups: Sequence[str] = ()) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) that authenticates as ``user`` in ``groups``."""
        return self.ca.issue(user, organizations=groups, client=True)


def load_pair(context: ssl.SSLContext, chain: bytes, key: bytes) -> None:
    """``load_cert_chain`` reads files only: a private temporary file, removed at once."""
    fd, path = tempfile.mkstemp(prefix="loopback-tls-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(chain + key)
        context.load_cert_chain(path)
    finally:
        os.unlink(path)


def peer_user(conn: Any) -> User | None:
    """The user a verified client certificate names (CN; groups from O), or None without one."""
    getpeercert = getattr(conn, "getpeercert", None)
    if getpeercert is None:
        return None
    try:
        cert = getpeercert()
    except ValueError:  # the handshake has not completed
        return None
    if not cert:
        return None
    name, groups = "", []
    for rdn in cert.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                name = value
            elif key == "organizationName":
                groups.append(value)
    if not name:
        return None
    return User(name, "", (*groups, "system:authenticated"))
