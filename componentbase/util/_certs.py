"""A throw-away certificate authority: the x509 mechanism both serving and the test kit need.

Serving signs a self-signed serving certificate with one (apiserver's ``MaybeDefaultWithSelfSignedCerts``);
the loopback API server signs its serving certificate and its users' client certificates with one. It
lives in ``util`` because it knows x509 and nothing of Kubernetes, and ``util`` is the one package the test
kit may share with the library. ``cryptography`` is imported only when a certificate is made.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CertificateAuthority"]

_VALIDITY = dt.timedelta(days=365)


def _new_key(kind: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec, rsa  # ~70 ms: only to make a certificate

    if kind == "ec":
        return ec.generate_private_key(ec.SECP256R1())
    if kind == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    raise ValueError(f"key kind must be 'ec' or 'rsa', got {kind!r}")


def _key_pem(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization  # lazily: slow to import

    fmt = serialization.PrivateFormat.TraditionalOpenSSL
    return bytes(key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()))


@dataclass(frozen=True)
class CertificateAuthority:
    """A CA's certificate and key (PEM); ``issue`` signs serving or client certificates with it.

    ``key_kind`` "ec" (P-256) makes a key in about a millisecond, "rsa" (2048 bits) in tens of them.
    """

    cert_pem: bytes
    key_pem: bytes
    key_kind: str = "ec"

    @classmethod
    def generate(cls, common_name: str, key_kind: str = "ec") -> CertificateAuthority:
        """A new self-signed CA valid for a year (and from an hour ago, for skewed clocks)."""
        from cryptography import x509  # lazily: ~70 ms to import, paid only to make a certificate
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.x509.oid import NameOID

        key = _new_key(key_kind)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = dt.datetime.now(dt.UTC)
        usage = x509.KeyUsage(digital_signature=True, key_encipherment=key_kind == "rsa", key_cert_sign=True,
                              content_commitment=False, data_encipherment=False, key_agreement=False,
                              crl_sign=False, encipher_only=False, decipher_only=False)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + _VALIDITY)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(usage, critical=True)
                .sign(key, hashes.SHA256()))
        return cls(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key), key_kind)

    def issue(self, common_name: str, *, organizations: Sequence[str] = (), hosts: Sequence[str] = (),
              server: bool = False, client: bool = False, key_kind: str | None = None) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) signed by this CA.

        The new key is of ``key_kind`` ("ec" or "rsa"; the CA's own kind when not given): a serving
        certificate's key decides which cipher suites a handshake can use, the CA's key does not.

        ``hosts`` (IP addresses or DNS names) become subject alternative names; ``server`` and ``client``
        set the extended key usages TLS checks; ``organizations`` become O attributes, which
        kube-apiserver reads as the client's groups.
        """
        from cryptography import x509  # lazily: ~70 ms to import, paid only to make a certificate
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        ca_cert = x509.load_pem_x509_certificate(self.cert_pem)
        ca_key = serialization.load_pem_private_key(self.key_pem, password=None)
        key = _new_key(key_kind or self.key_kind)
        attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
        now = dt.datetime.now(dt.UTC)
        builder = (x509.CertificateBuilder().subject_name(x509.Name(attrs)).issuer_name(ca_cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + _VALIDITY)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
        usages = [u for u, on in ((ExtendedKeyUsageOID.SERVER_AUTH, server),
                                  (ExtendedKeyUsageOID.CLIENT_AUTH, client)) if on]
        if usages:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        if hosts:
            builder = builder.add_extension(x509.SubjectAlternativeName(_names(hosts)), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]  # any CA key type signs
        return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def _names(hosts: Sequence[str]) -> list[Any]:
    from cryptography import x509  # lazily: ~70 ms to import, paid only to make a certificate

    out: list[Any] = []
    for host in dict.fromkeys(hosts):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            out.append(x509.DNSName(host))
    return out
