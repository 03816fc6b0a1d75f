"""componentbase_examples/widgets: a custom resource's controller with its webhooks, installed from the example's
YAML (the CRD and the webhook configurations, as deployed) with the pytest plugin's ``install_webhooks``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from componentbase.client import ObjectClient
from componentbase.controller import Manager, find_status_condition
from componentbase.testing import LoopbackAPIServer, eventually, free_port, install_webhooks
from componentbase.util import CertificateAuthority
from componentbase.webhook import WebhookServer
from componentbase_examples.widgets.__main__ import setup

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "componentbase_examples" / "widgets"
SERVICE = "widgets-webhook.widgets-system.svc"  # the name the serving certificate must carry


def manifests() -> list[dict[str, Any]]:
    """The example's CRD and webhook configurations, as deploy/widgets applies them."""
    return [d for name in ("crd.yaml", "webhooks.yaml") for d in yaml.safe_load_all((EXAMPLE / name).read_text())]


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[tuple[LoopbackAPIServer, Manager]]:
    """The loopback server calling the example's webhooks, served by its Manager on a local port."""
    ca = CertificateAuthority.generate("widgets-ca")
    cert, key = ca.issue("widgets-webhook", hosts=[SERVICE], server=True)
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    port = free_port()
    with LoopbackAPIServer() as server:
        install_webhooks(server, manifests(), address=f"127.0.0.1:{port}", ca_bundle=ca.cert_pem)
        mgr = Manager(server.api_client(), webhook_server=WebhookServer(str(tmp_path), port=port, host="127.0.0.1"))
        setup(mgr)
        stop = threading.Event()
        thread = threading.Thread(target=mgr.run, args=(stop,))
        thread.start()
        try:
            yield server, mgr
        finally:
            stop.set()
            thread.join(10)


def _widget(name: str, replicas: object) -> dict[str, object]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas}}


def _ready(objects: ObjectClient) -> Any:
    """w1's Ready condition, or None."""
    status = objects.get("example.com/v1", "Widget", "w1", "default").get("status") or {}
    return find_status_condition(status.get("conditions") or [], "Ready")


def _message(err: ApiException) -> str:
    return str(json.loads(err.body)["message"])


def test_widgets_are_defaulted_validated_converted_and_their_status_reported(
        manager: tuple[LoopbackAPIServer, Manager]) -> None:
    server, _ = manager
    objects = ObjectClient(server.api_client())
    created = eventually(lambda: objects.create(_widget("w1", 3)), ignoring=(ApiException,),
                         what="a widget created once the webhook server is up")
    assert created["spec"]["color"] == "blue", "the schema's default"
    user = created["spec"]["owner"]
    assert user, "the defaulting webhook's: the creator"
    with pytest.raises(ApiException) as err:
        objects.create(_widget("bad", "three"))
    assert err.value.status == 422
    assert 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer' in _message(
        err.value)

    ready = eventually(lambda: _ready(objects), what="the widget's Ready condition")
    since = ready.pop("lastTransitionTime")
    assert ready == {"type": "Ready", "status": "True", "reason": "Counted", "message": "3 replicas counted",
                     "observedGeneration": created["metadata"]["generation"]}
    bumped = objects.patch(created, {"spec": {"replicas": 5}})
    eventually(lambda: (_ready(objects) or {}).get("observedGeneration") == bumped["metadata"]["generation"],
               what="the new generation observed")
    assert _ready(objects)["message"] == "5 replicas counted"
    assert _ready(objects)["lastTransitionTime"] == since, "still True: the transition time stays"
    events = eventually(lambda: [e["message"] for e in objects.list("v1", "Event", "default")
                                 if e["involvedObject"]["name"] == "w1"] or None, what="the Events")
    assert "3 replicas counted" in events

    with pytest.raises(ApiException) as err:
        objects.patch(bumped, {"spec": {"owner": "someone-else"}})
    assert err.value.status == 403
    assert _message(err.value) == ('admission webhook "check.widgets.example.com" denied the request: '
                                   f"spec.owner cannot change (it is {user!r})")

    as_v2 = objects.get("example.com/v2", "Widget", "w1", "default")
    assert (as_v2["apiVersion"], as_v2["spec"]) == ("example.com/v2", {"size": 5, "color": "blue", "owner": user})
    objects.create({"apiVersion": "example.com/v2", "kind": "Widget",
                    "metadata": {"name": "w2", "namespace": "default"}, "spec": {"size": 2}})
    stored = objects.get("example.com/v1", "Widget", "w2", "default")["spec"]
    assert stored == {"replicas": 2, "color": "blue", "owner": user}, "a v2 write, defaulted and stored as v1"
