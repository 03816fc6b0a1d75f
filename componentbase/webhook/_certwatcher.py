"""Serving certificates reloaded from their files as they rotate, as controller-runtime's ``certwatcher``.

cert-manager (or a kubelet-projected Secret) replaces ``tls.crt`` and ``tls.key`` in place; a webhook must
pick the new pair up without a restart. The server's TLS context carries an SNI callback, which OpenSSL calls
on every ClientHello (with or without a server name): it switches the handshake to the newest context. So a
new connection gets the new certificate, and a connection already open keeps the one it shook hands with.

The files are polled (``interval`` seconds; the standard library has no inotify), compared by content, not
time: the kubelet's atomic writer swaps a symlink and keeps the files' times. A pair that does not load (a
half-written rotation, garbage) is logged once and the previous certificate goes on serving.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from typing import Any

__all__ = ["CertWatcher", "CertificateError"]

log = logging.getLogger("componentbase.webhook")


class CertificateError(Exception):
    """The serving certificate or key cannot be read or used: the message names the file."""


def _context(cert: str, key: str) -> ssl.SSLContext:
    """A server context from the pair, TLS 1.2 at least (controller-runtime's webhook server default); the
    errors are Go's ``tls.X509KeyPair`` wording, after the file."""
    for path, marker, what in ((cert, b"-----BEGIN CERTIFICATE-----", "certificate"),
                               (key, b"PRIVATE KEY-----", "key")):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise CertificateError(f"open {path}: no such file or directory") from None
        except OSError as err:
            raise CertificateError(f"open {path}: {err.strerror or err}") from None
        if marker not in data:
            raise CertificateError(f"{path}: tls: failed to find any PEM data in {what} input")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert, key)
    except ssl.SSLError as err:
        why = "private key does not match public key" if "KEY_VALUES_MISMATCH" in str(err) else \
            f"cannot load the pair: {err.reason or err}"
        raise CertificateError(f"{cert}, {key}: tls: {why}") from None
    except OSError as err:  # the files went away between the read and the load
        raise CertificateError(f"open {getattr(err, 'filename', None) or cert}: {err.strerror or err}") from None
    return ctx


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


class CertWatcher:
    """The newest good context for ``cert``/``key``; ``front`` is the one to give the server."""

    def __init__(self, cert: str, key: str, interval: float = 1.0) -> None:
        self.cert = cert
        self.key = key
        self.interval = interval
        self._seen = (_read(cert), _read(key))
        self.front = _context(cert, key)
        self.front.sni_callback = self._pick
        self._current = self.front
        self._failed: tuple[bytes | None, bytes | None] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: How many times a rotated pair was loaded (for logs and tests).
        self.reloads = 0

    def _pick(self, sock: Any, server_name: str | None, ctx: ssl.SSLContext) -> None:
        current = self._current
        if current is not ctx:
            sock.context = current

    def check(self) -> bool:
        """Load the pair if its files changed; True when a new certificate now serves."""
        seen = (_read(self.cert), _read(self.key))
        if seen == self._seen or seen == self._failed:
            return False
        try:
            ctx = _context(self.cert, self.key)
        except CertificateError as err:
            self._failed = seen
            log.error("webhook: failed to reload the serving certificate, still serving the previous one: %s", err)
            return False
        self._current, self._seen, self._failed = ctx, seen, None
        self.reloads += 1
        log.info("webhook: serving the rotated certificate %s", self.cert)
        return True

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._poll, name="webhook-certwatcher", daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception:  # never let a surprise stop the watching
                log.exception("webhook: checking the serving certificate failed")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._thread = None


def cert_paths(cert_dir: str, cert_name: str, key_name: str) -> tuple[str, str]:
    return os.path.join(cert_dir, cert_name), os.path.join(cert_dir, key_name)
