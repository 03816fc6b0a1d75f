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

from componentbase.util._certs import CertificateAuthority
from componentbase.util._files import write_atomic

__all__ = ["generate_self_signed", "maybe_default_self_signed"]

log = logging.getLogger("componentbase.serving")


def generate_self_signed(host: str, alternate_ips: Sequence[str] = (),
                         alternate_dns: Sequence[str] = ()) -> tuple[bytes, bytes]:
    """(certificate chain PEM, private key PEM) for ``host`` plus the alternate names."""
    stamp = int(dt.datetime.now(dt.UTC).timestamp())
    ips: list[str] = list(alternate_ips)
    dns: list[str] = list(alternate_dns)
    try:
        ipaddress.ip_address(host)
        ips.insert(0, host)
    except ValueError:
        dns.insert(0, host)
    # The serving key is RSA as upstream's, so a --tls-cipher-suites list of *_RSA_* suites still
    # handshakes; the throw-away CA's key only signs, and an EC key costs ~0.1 ms against ~70 ms for RSA.
    ca = CertificateAuthority.generate(f"{host}-ca@{stamp}", key_kind="ec")
    cert, key = ca.issue(f"{host}@{stamp}", hosts=[*ips, *dns], server=True, key_kind="rsa")
    return cert + ca.cert_pem, key


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
