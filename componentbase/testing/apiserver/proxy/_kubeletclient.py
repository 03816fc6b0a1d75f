"""The server's client certificate for kubelets (kube-apiserver's ``--kubelet-client-certificate``).

The node proxy (pods/log, exec, attach, portforward, nodes/proxy) reaches a kubelet over TLS and
authenticates with a client certificate, as kube-apiserver does: ``CN=kube-apiserver-kubelet-client``
in ``system:masters``, signed by a CA of its own that a kubelet trusts through its client CA (the
virtual kubelet reads it from ``kube-system/extension-apiserver-authentication``). The pair is made on
first use with EC keys (milliseconds, where RSA takes a tenth of a second), so servers that never proxy
pay nothing. Like kube-apiserver without ``--kubelet-certificate-authority``, the kubelet's serving
certificate is not verified.
"""

from __future__ import annotations

import datetime as dt
import os
import ssl
import tempfile
import threading

__all__ = ["CLIENT_CA_CONFIGMAP", "KubeletClient"]

#: Where kube-apiserver publishes the client CA that components (kubelets here) trust.
CLIENT_CA_CONFIGMAP = ("kube-system", "extension-apiserver-authentication")
USER = "kube-apiserver-kubelet-client"
GROUP = "system:masters"


class KubeletClient:
    """Holds the CA and the client pair; ``context()`` is the TLS context for dialing kubelets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pems: tuple[bytes, bytes, bytes] | None = None  # CA, certificate, key
        self._context: ssl.SSLContext | None = None

    def _made(self) -> tuple[bytes, bytes, bytes]:
        with self._lock:
            if self._pems is None:
                self._pems = _generate()
            return self._pems

    @property
    def ca_pem(self) -> str:
        """The CA that signed the client certificate: what a kubelet's client CA must contain."""
        return self._made()[0].decode()

    def context(self) -> ssl.SSLContext:
        _, cert, key = self._made()
        with self._lock:
            if self._context is None:
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                fd, path = tempfile.mkstemp(prefix="kubelet-client-", suffix=".pem")
                try:
                    os.write(fd, key + cert)
                    os.close(fd)
                    ctx.load_cert_chain(path)  # reads the file now; it need not outlive this call
                finally:
                    os.unlink(path)
                self._context = ctx
            return self._context


def _generate() -> tuple[bytes, bytes, bytes]:
    from cryptography import x509  # ~70 ms to import: only when a proxy request first needs the pair
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.UTC)
    start, end = now - dt.timedelta(hours=1), now + dt.timedelta(days=365)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"loopback-kubelet-client-ca@{int(now.timestamp())}")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, GROUP),
                         x509.NameAttribute(NameOID.COMMON_NAME, USER)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ca.public_bytes(pem), cert.public_bytes(pem), key_pem
