"""The "Webhook flags" section: where the webhook server listens and finds its certificate.

Named as kubebuilder's scaffold names them (``--webhook-cert-name``, ``--webhook-cert-key``) with
controller-runtime's defaults (port 9443, ``$TMPDIR/k8s-webhook-server/serving-certs``). Cheap to import:
nothing here loads the server, ``ssl`` or the serving stack.
"""

from __future__ import annotations

import os
import tempfile

import attrs

from componentbase.cli import Options, flag

__all__ = ["SECTION", "WebhookOptions"]

SECTION = "Webhook flags"


@attrs.define
class WebhookOptions(Options):
    """The webhook server's flags; ``WebhookServer.from_options(options, metrics)`` serves as they say."""

    cert_dir: str = flag(
        "webhook-cert-dir", "The directory holding the webhook server's serving certificate and key (as "
        "cert-manager writes them into a Secret mounted there); reloaded when they change.",
        default=os.path.join(tempfile.gettempdir(), "k8s-webhook-server", "serving-certs"), section=SECTION)
    cert_name: str = flag("webhook-cert-name", "The serving certificate's file name in --webhook-cert-dir.",
                          default="tls.crt", section=SECTION)
    key_name: str = flag("webhook-cert-key", "The serving key's file name in --webhook-cert-dir.",
                         default="tls.key", section=SECTION)
    port: int = flag("webhook-port", "The port the webhook server serves on, when the component has webhooks "
                     "(0 picks a free one).", default=9443, section=SECTION)
    bind_address: str = flag("webhook-bind-address", "The IP address the webhook server listens on (all "
                             "interfaces when empty).", default="", section=SECTION)

    def validate(self) -> list[Exception]:
        errs = super().validate()
        if not 0 <= self.port <= 65535:
            errs.append(ValueError(f"--webhook-port {self.port} must be between 0 and 65535, inclusive"))
        for name, value in (("--webhook-cert-name", self.cert_name), ("--webhook-cert-key", self.key_name)):
            if not value or "/" in value:
                errs.append(ValueError(f"{name} {value!r} must be a file name in --webhook-cert-dir"))
        return errs
