"""componentbase_examples/widgets: a custom resource's controller; its CRD loads from YAML, as envtest's do."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from componentbase.client import ObjectClient
from componentbase.controller import Manager, find_status_condition
from componentbase.testing import LoopbackAPIServer, eventually
from componentbase_examples.widgets.__main__ import setup

pytestmark = pytest.mark.integration

CRD = Path(__file__).resolve().parents[2] / "componentbase_examples" / "widgets" / "crd.yaml"


@pytest.fixture
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(crd_dirs=[CRD]) as s:
        yield s


def _widget(name: str, replicas: object) -> dict[str, object]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas}}


def _ready(objects: ObjectClient) -> Any:
    """w1's Ready condition, or None."""
    status = objects.get("example.com/v1", "Widget", "w1", "default").get("status") or {}
    return find_status_condition(status.get("conditions") or [], "Ready")


def test_widgets_are_validated_defaulted_and_their_status_reported(server: LoopbackAPIServer) -> None:
    objects = ObjectClient(server.api_client())
    with pytest.raises(ApiException) as err:
        objects.create(_widget("bad", "three"))
    assert err.value.status == 422
    message = json.loads(err.value.body)["message"]
    assert 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer' in message
    created = objects.create(_widget("w1", 3))
    assert created["spec"]["color"] == "blue", "the schema's default"

    mgr = Manager(server.api_client())
    setup(mgr)
    stop = threading.Event()
    thread = threading.Thread(target=mgr.run, args=(stop,))
    thread.start()
    try:
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
    finally:
        stop.set()
        thread.join(10)
