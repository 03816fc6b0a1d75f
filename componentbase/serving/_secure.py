"""The "Secure serving flags" and what they become: where to listen and with which certificate.

As apiserver's ``SecureServingOptions``: ``--secure-port=0`` turns serving off; with no
``--tls-cert-file``/``--tls-private-key-file`` a self-signed pair for localhost/127.0.0.1 is made,
kept in ``--cert-dir`` when one is given (and reused on restart), in memory otherwise. Certificates are
read when the config is built, so a bad file fails at start-up with one line, not at the first client.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import tempfile
from typing import TYPE_CHECKING, Any

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.cli._options import (
    Options,
    flag,
)
from componentbase.serving import _tls as tls
from componentbase.serving._certs import (
    generate_self_signed,
    maybe_default_self_signed,
)
from componentbase.serving._limits import ServerLimits

if TYPE_CHECKING:
    import ssl  # loaded when a context is built, not by the flags on the --help path

__all__ = ["IP", "SecureServingInfo", "SecureServingOptions"]

SECTION = "Secure serving flags"

log = logging.getLogger("componentbase.serving")


def _parse_ip(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        raise ValueError(f'failed to parse IP: "{text}"') from None


#: pflag's ``ip`` flag type.
IP = cliflags.FlagType("ip", _parse_ip, str, "")


def _parse_named_cert_key(text: str) -> list[str]:
    """apiserver's ``namedCertKey``: ``cert,key`` optionally followed by ``:domain,domain...``."""
    files = text.split(":", 1)[0].split(",")
    if len(files) != 2 or not all(f.strip() for f in files):
        raise ValueError("expected comma separated certificate and key file paths")
    return [text]


def _parse_int32_slice(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if any(not -(2**31) <= v < 2**31 for v in values):
        raise ValueError("value out of range")
    return values


NAMED_CERT_KEY = cliflags.FlagType("string", _parse_named_cert_key, lambda v: ";".join(v or []), [])
INT32_SLICE = cliflags.FlagType("int32Slice", _parse_int32_slice, lambda v: "[" + ",".join(map(str, v or [])) + "]",
                                None)
HTTP1_ONLY = "the server speaks HTTP/1.1 only"

_CIPHER_HELP = (
    "Comma-separated list of cipher suites for the server. If omitted, the default Python (OpenSSL) cipher "
    "suites will be used. \nPreferred values: " + ", ".join(sorted((*tls.CIPHER_SUITES, *tls.TLS13_CIPHER_SUITES)))
    + ". \nInsecure values: " + ", ".join(sorted(tls.INSECURE_CIPHER_SUITES)) + "."
)


@attrs.frozen(kw_only=True)
class SecureServingInfo:
    """Where and how to serve: the address, and the certificate as PEM (read once, at config time)."""

    bind_address: str
    port: int
    cert_pem: bytes = attrs.field(repr=False)
    key_pem: bytes = attrs.field(repr=False)
    min_tls_version: str = ""
    cipher_suites: tuple[str, ...] = ()
    #: How long a stop waits for requests in flight before hanging up on them.
    shutdown_timeout: float = 5.0
    #: ``SO_REUSEPORT`` on the listener (``--permit-port-sharing``).
    reuse_port: bool = False
    #: Timeouts and limits against slow, greedy and malformed clients.
    limits: ServerLimits = attrs.field(factory=ServerLimits)

    def ssl_context(self, client_ca: str = "") -> ssl.SSLContext:
        """A fresh server context; ``client_ca`` asks clients for certificates signed by it (optional)."""
        with tempfile.TemporaryDirectory(prefix="componentbase-tls-") as folder:
            cert_file = os.path.join(folder, "tls.crt")
            key_file = os.path.join(folder, "tls.key")
            for path, data in ((cert_file, self.cert_pem), (key_file, self.key_pem)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            return tls.new_server_context(cert_file, key_file, self.min_tls_version, list(self.cipher_suites),
                                          client_ca)


@attrs.define
class SecureServingOptions(Options):
    """The "Secure serving flags" section. Components pick their port: ``SecureServingOptions(bind_port=10259)``.

    ``pair_name`` names the generated files in ``--cert-dir`` (``kube-scheduler.crt``...).
    """

    bind_address: str = flag(
        "bind-address", "The IP address on which to listen for the --secure-port port. The associated interface(s) "
        "must be reachable by the rest of the cluster, and by CLI/web clients. If blank or an unspecified address "
        "(0.0.0.0 or ::), all interfaces and IP address families will be used.",
        default="0.0.0.0", section=SECTION, type=IP)
    bind_port: int = flag(
        "secure-port", "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve "
        "HTTPS at all.", default=443, section=SECTION)
    cert_dir: str = flag(
        "cert-dir", "The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file "
        "are provided, this flag will be ignored.", default="", section=SECTION)
    tls_cert_file: str = flag(
        "tls-cert-file", "File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated "
        "after server cert). If HTTPS serving is enabled, and --tls-cert-file and --tls-private-key-file are not "
        "provided, a self-signed certificate and key are generated for the public address and saved to the "
        "directory specified by --cert-dir.", default="", section=SECTION)
    tls_private_key_file: str = flag(
        "tls-private-key-file", "File containing the default x509 private key matching --tls-cert-file.",
        default="", section=SECTION)
    tls_min_version: str = flag(
        "tls-min-version", "Minimum TLS version supported. Possible values: " + ", ".join(tls.TLS_VERSIONS),
        default="", section=SECTION)
    tls_cipher_suites: list[str] = flag("tls-cipher-suites", _CIPHER_HELP, factory=list, section=SECTION)
    tls_sni_cert_key: list[str] = flag(
        "tls-sni-cert-key", "A pair of x509 certificate and private key file paths, optionally suffixed with a list "
        "of domain patterns which are fully qualified domain names, possibly with prefixed wildcard segments. The "
        "domain patterns also allow IP addresses, but IPs should only be used if the apiserver has visibility to "
        "the IP address requested by a client. If no domain patterns are provided, the names of the certificate "
        "are extracted. Non-wildcard matches trump over wildcard matches, explicit domain patterns trump over "
        "extracted names. For multiple key/certificate pairs, use the --tls-sni-cert-key multiple times. Examples: "
        '"example.crt,example.key" or "foo.crt,foo.key:*.foo.com,foo.com".', factory=list, section=SECTION,
        type=NAMED_CERT_KEY, inert="every client gets the certificate of --tls-cert-file (or the generated one)")
    tls_curve_preferences: list[int] = flag(
        "tls-curve-preferences", "Comma-separated list of numeric Go crypto/tls CurveID values, as the allowed key "
        "exchange mechanisms for the server. The supported values depend on the Go version used. See "
        "https://pkg.go.dev/crypto/tls#CurveID for values supported for each Go version. The order of the list is "
        "ignored, and key exchange mechanisms are chosen by Go from this list using an internal preference order. "
        "If omitted, the default Go curves will be used.", factory=list, section=SECTION, type=INT32_SLICE,
        inert="OpenSSL's default key exchange groups are used")
    http2_max_streams_per_connection: int = flag(
        "http2-max-streams-per-connection", "The limit that the server gives to clients for the maximum number of "
        "streams in an HTTP/2 connection. Zero means to use golang's default.", default=0, section=SECTION,
        inert=HTTP1_ONLY)
    disable_http2_serving: bool = flag(
        "disable-http2-serving", "If true, HTTP2 serving will be disabled [default=false]", default=False,
        section=SECTION, inert=HTTP1_ONLY)
    permit_address_sharing: bool = flag(
        "permit-address-sharing", "If true, SO_REUSEADDR will be used when binding the port. This allows binding to "
        "wildcard IPs like 0.0.0.0 and specific IPs in parallel, and it avoids waiting for the kernel to release "
        "sockets in TIME_WAIT state. [default=false]", default=False, section=SECTION,
        inert="SO_REUSEADDR is always set, as Python's socket.create_server does")
    permit_port_sharing: bool = flag(
        "permit-port-sharing", "If true, SO_REUSEPORT will be used when binding the port, which allows more than one "
        "instance to bind on the same address and port. [default=false]", default=False, section=SECTION)
    pair_name: str = "serving"
    shutdown_timeout: float = 5.0
    #: Header deadline, idle timeout, requests in flight, size limits: ``ServerLimits(max_in_flight=100)``.
    limits: ServerLimits = attrs.field(factory=ServerLimits)

    def validate(self) -> list[Exception]:
        errs: list[Exception] = [*super().validate()]
        if not 0 <= self.bind_port <= 65535:
            errs.append(ValueError(f"--secure-port {self.bind_port} must be between 0 and 65535, inclusive. "
                                   "0 for turning off secure port"))
        if bool(self.tls_cert_file) != bool(self.tls_private_key_file):
            errs.append(ValueError("--tls-cert-file and --tls-private-key-file must be given together"))
        if self.tls_min_version and self.tls_min_version not in tls.TLS_VERSIONS:
            errs.append(ValueError(f'--tls-min-version: unknown tls version "{self.tls_min_version}"; possible '
                                   f"values: {', '.join(tls.TLS_VERSIONS)}"))
        errs.extend(ValueError(f"--tls-cipher-suites: {e}") for e in tls.cipher_suite_errors(self.tls_cipher_suites))
        return errs

    def apply_to(self, config: Any) -> None:
        super().apply_to(config)
        if self.bind_port == 0:
            config.secure_serving = None
            return
        cert_pem, key_pem = self._certificate()
        info = SecureServingInfo(
            bind_address=self.bind_address or "0.0.0.0", port=self.bind_port, cert_pem=cert_pem, key_pem=key_pem,
            min_tls_version=self.tls_min_version, cipher_suites=tuple(self.tls_cipher_suites),
            shutdown_timeout=self.shutdown_timeout, limits=self.limits, reuse_port=self.permit_port_sharing)
        import ssl  # TLS loads with the server's context, not for the flags on the --help path

        try:
            info.ssl_context()
        except ssl.SSLError as err:
            raise ValueError(f"unable to load server certificate {self._describe()}: {err.reason or err}") from None
        config.secure_serving = info

    def _describe(self) -> str:
        if self.tls_cert_file:
            return f"(--tls-cert-file={self.tls_cert_file}, --tls-private-key-file={self.tls_private_key_file})"
        return f"(--cert-dir={self.cert_dir})" if self.cert_dir else "(generated)"

    def _certificate(self) -> tuple[bytes, bytes]:
        """The given pair, the pair in --cert-dir, or a new self-signed pair (OSError names the file)."""
        cert_file, key_file = self.tls_cert_file, self.tls_private_key_file
        if not cert_file:
            if not self.cert_dir:
                log.info("Generated self-signed cert in-memory")
                return generate_self_signed("localhost", ["127.0.0.1"])
            try:
                cert_file, key_file = maybe_default_self_signed(self.cert_dir, self.pair_name)
            except OSError as err:
                raise ValueError(f"unable to write a self-signed certificate to --cert-dir={self.cert_dir}: "
                                 f"{err.strerror or err}") from None
        return _read(cert_file, "--tls-cert-file"), _read(key_file, "--tls-private-key-file")


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise ValueError(f"unable to read {what} {path}: {err.strerror or err}") from None
