"""TLS versions and cipher suites by the names Kubernetes flags use, mapped onto Python's ``ssl``.

Names are Go's (``VersionTLS12``, ``TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256``), so a command line written for
a Go component works here. A name is refused when it is unknown, or known but beyond what the local
OpenSSL can negotiate, so a typo never silently weakens the server. TLS 1.3 suites are accepted (Go
lists them) but, as in Go, TLS 1.3 always uses its own fixed set.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl  # loaded by the functions that build contexts: the names above are on the --help path

__all__ = ["CIPHER_SUITES", "INSECURE_CIPHER_SUITES", "TLS13_CIPHER_SUITES", "TLS_VERSIONS",
           "cipher_suite_errors", "new_server_context", "openssl_cipher_string"]

#: Go's names and ``ssl.TLSVersion`` member names.
TLS_VERSIONS: dict[str, str] = {
    "VersionTLS10": "TLSv1",
    "VersionTLS11": "TLSv1_1",
    "VersionTLS12": "TLSv1_2",
    "VersionTLS13": "TLSv1_3",
}

#: TLS 1.3 suites: always on when TLS 1.3 is negotiated, not configurable (as in Go).
TLS13_CIPHER_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")

#: Go's secure TLS 1.0-1.2 suites and their OpenSSL names.
CIPHER_SUITES: dict[str, str] = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
}

#: Go's insecure suites: accepted by name, but most are compiled out of a modern OpenSSL.
INSECURE_CIPHER_SUITES: dict[str, str] = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
}


@functools.cache
def _available() -> frozenset[str]:
    """OpenSSL names this interpreter can negotiate (TLS 1.2 and below)."""
    import ssl  # only here, where a context is built: the names above are read by --help

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.set_ciphers("ALL:@SECLEVEL=0")
    return frozenset(c["name"] for c in ctx.get_ciphers())


def _openssl_name(go_name: str) -> str | None:
    return CIPHER_SUITES.get(go_name) or INSECURE_CIPHER_SUITES.get(go_name)


def cipher_suite_errors(names: list[str]) -> list[str]:
    """One message per name that is unknown or that this OpenSSL cannot do."""
    errs = []
    for name in names:
        if name in TLS13_CIPHER_SUITES:
            continue
        openssl = _openssl_name(name)
        if openssl is None:
            errs.append(f"Cipher suite {name} not supported or doesn't exist")
        elif openssl not in _available():
            errs.append(f"Cipher suite {name} is not available in this Python's TLS library")
    return errs


def openssl_cipher_string(names: list[str]) -> str:
    """The ``set_ciphers`` string for Go suite names (TLS 1.3 names contribute nothing)."""
    parts = [n for n in (_openssl_name(name) for name in names) if n]
    return ":".join(dict.fromkeys(parts))


def new_server_context(cert_file: str, key_file: str, min_version: str = "", cipher_suites: list[str] | None = None,
                       client_ca: str = "") -> ssl.SSLContext:
    """A server context; ``client_ca`` (PEM text) asks for optional client certificates signed by it."""
    import ssl  # only here, where a context is built: the names above are read by --help

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion[TLS_VERSIONS[min_version or "VersionTLS12"]]
    if cipher_suites:
        ciphers = openssl_cipher_string(cipher_suites)
        if ciphers:
            ctx.set_ciphers(ciphers + (":@SECLEVEL=0" if min_version in ("VersionTLS10", "VersionTLS11") else ""))
        elif ctx.minimum_version < ssl.TLSVersion.TLSv1_3:
            ctx.minimum_version = ssl.TLSVersion.TLSv1_3  # only TLS 1.3 suites were named
    elif min_version in ("VersionTLS10", "VersionTLS11"):
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")  # OpenSSL 3 refuses TLS < 1.2 at the default level
    ctx.load_cert_chain(cert_file, key_file)
    if client_ca:
        ctx.load_verify_locations(cadata=client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx
