"""Installing a component's webhook configurations into the loopback server, pointed at the webhook server the
test runs, as envtest's ``WebhookInstallOptions`` does for a real kube-apiserver.

Data only (the test kit imports nothing of the library): the configurations are the dicts a component deploys
(MutatingWebhookConfiguration, ValidatingWebhookConfiguration, and CustomResourceDefinitions whose conversion
is a webhook); other kinds are skipped, as envtest skips them. Each ``clientConfig`` gets ``caBundle`` (what
cert-manager's ``inject-ca-from`` would put there). A ``service`` stays as deployed and is routed to
``address`` (``set_webhook_service``), so the serving certificate is checked for ``NAME.NAMESPACE.svc`` as in
a cluster; a ``url`` is rewritten to ``https://ADDRESS/PATH``, as envtest rewrites every clientConfig.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .apiserver import LoopbackAPIServer

__all__ = ["install_webhooks", "point_webhooks"]

Obj = dict[str, Any]
_CONFIGURATIONS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def _client_configs(obj: Obj) -> list[Obj]:
    """The clientConfig maps of a configuration's webhooks, or of a CRD's conversion webhook."""
    if obj.get("kind") in _CONFIGURATIONS:
        return [w.setdefault("clientConfig", {}) for w in obj.get("webhooks") or []]
    conversion = (obj.get("spec") or {}).get("conversion") or {}
    if obj.get("kind") == "CustomResourceDefinition" and conversion.get("strategy") == "Webhook":
        return [conversion.setdefault("webhook", {}).setdefault("clientConfig", {})]
    return []


def point_webhooks(manifests: Iterable[Obj], *, address: str, ca_bundle: bytes) -> tuple[list[Obj], set[str]]:
    """Copies of the manifests that call webhooks, pointed at ``address`` (``"host:port"``) and trusting
    ``ca_bundle`` (PEM), and the ``"namespace/name"`` of each Service they name."""
    bundle = base64.b64encode(ca_bundle).decode()
    out, services = [], set()
    for manifest in manifests:
        obj = copy.deepcopy(manifest)
        configs = _client_configs(obj)
        if not configs:
            continue
        for config in configs:
            config["caBundle"] = bundle
            service = config.get("service")
            if isinstance(service, dict):
                services.add(f"{service.get('namespace', '')}/{service.get('name', '')}")
            elif config.get("url"):
                parts = urlsplit(str(config["url"]))
                config["url"] = f"https://{address}{parts.path}" + (f"?{parts.query}" if parts.query else "")
        out.append(obj)
    return out, services


def install_webhooks(server: LoopbackAPIServer, manifests: Iterable[Obj], *, address: str,
                     ca_bundle: bytes) -> list[Obj]:
    """Create the webhook configurations and conversion CRDs among ``manifests`` on ``server`` (through the
    official client), calling the webhook server at ``address`` whose certificate ``ca_bundle`` signed; the
    objects as created."""
    from kubernetes import client  # lazily: importing the test kit must not import kubernetes

    objects, services = point_webhooks(manifests, address=address, ca_bundle=ca_bundle)
    for service in services:
        server.set_webhook_service(service, address)
    api = server.api_client()
    created = []
    try:
        registration = client.AdmissionregistrationV1Api(api)
        create: dict[str, Any] = {  # the client's methods take its models; a dict is sent as it is
            "MutatingWebhookConfiguration": registration.create_mutating_webhook_configuration,
            "ValidatingWebhookConfiguration": registration.create_validating_webhook_configuration,
            "CustomResourceDefinition": client.ApiextensionsV1Api(api).create_custom_resource_definition}
        for obj in objects:
            created.append(api.sanitize_for_serialization(create[obj["kind"]](obj)))
    finally:
        api.close()
    return created
