"""A self-signed serving certificate when none is given, as apiserver's ``MaybeDefaultWithSelfSignedCerts``.

Like upstream, a throw-away CA signs a certificate for the host (``localhost``, ``127.0.0.1``); the
certificate file holds the serving certificate followed by that CA, so a client can pin the file as its
CA bundle. With a cert dir the pair is kept as ``<pair>.crt``/``<pair>.key`` and reused on restart.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import os
from collections.abc import Sequence

from componentbase.util._files import write_atomic

__all__ = ["generate_self_signed", "maybe_default_self_signed"]

log = logging.getLogger("componentbase.serving")

_VALIDITY = dt.timedelta(days=365)


def generate_self_signed(host: str, alternate_ips: Sequence[str] = (),
                         alternate_dns: Sequence[str] = ()) -> tuple[bytes, bytes]:
    """(certificate chain PEM, private key PEM) for ``host`` plus the alternate names."""
    from cryptography import x509  # ~70 ms to import: loaded only to generate a certificate
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.UTC)
    stamp = int(now.timestamp())
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}-ca@{stamp}")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + _VALIDITY)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=True,
                                       content_commitment=False, data_encipherment=False, key_agreement=False,
                                       crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ips: list[str] = list(alternate_ips)
    dns: list[str] = list(alternate_dns)
    try:
        ipaddress.ip_address(host)
        ips.insert(0, host)
    except ValueError:
        dns.insert(0, host)
    sans: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in dict.fromkeys(ips)]
    sans += [x509.DNSName(name) for name in dict.fromkeys(dns)]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{stamp}")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .sign(ca_key, hashes.SHA256()))
    chain = cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    return chain, key_pem


def maybe_default_self_signed(cert_dir: str, pair_name: str, host: str = "localhost",
                              alternate_ips: Sequence[str] = ("127.0.0.1",),
                              alternate_dns: Sequence[str] = ()) -> tuple[str, str]:
    """Paths of a certificate and key in ``cert_dir``: the ones there, or new ones written there.

    The key is written mode 0600. Raise OSError when the directory cannot be written.
    """
    cert_file = os.path.join(cert_dir, pair_name + ".crt")
    key_file = os.path.join(cert_dir, pair_name + ".key")
    if os.path.isfile(cert_file) and os.path.isfile(key_file):
        return cert_file, key_file
    chain, key = generate_self_signed(host, alternate_ips, alternate_dns)
    os.makedirs(cert_dir, mode=0o700, exist_ok=True)
    write_atomic(key_file, key, mode=0o600)
    write_atomic(cert_file, chain, mode=0o644)
    log.info("Generated self-signed cert (%s, %s)", cert_file, key_file)
    return cert_file, key_file
