"""Admission and conversion webhooks served by a component, as controller-runtime's ``pkg/webhook``.

A ``WebhookServer`` serves mutating and validating handlers for any kind and a CRD's conversions (hub and
spoke) over HTTPS from a certificate directory it reloads on rotation; ``WebhookOptions`` are its flags.
See ``docs/webhooks.md``. Importing this package is cheap (it is on the ``--help`` path through the
options): the server, ``ssl`` and the serving stack load on first use of their names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from componentbase.util import lazy_exports
from componentbase.webhook._admission import (
    AdmissionRequest,
    Denied,
)
from componentbase.webhook._conversion import (
    Conversion,
    ConversionError,
)
from componentbase.webhook._options import (
    WebhookOptions,
)

if TYPE_CHECKING:
    from componentbase.webhook._certwatcher import (
        CertificateError,
    )
    from componentbase.webhook._server import (
        WebhookServer,
        mutate_path,
        validate_path,
    )

__getattr__ = lazy_exports(__name__, {"WebhookServer": "._server", "mutate_path": "._server",
                                      "validate_path": "._server", "CertificateError": "._certwatcher"})


__all__ = [
    "AdmissionRequest",
    "CertificateError",
    "Conversion",
    "ConversionError",
    "Denied",
    "WebhookOptions",
    "WebhookServer",
    "mutate_path",
    "validate_path",
]
