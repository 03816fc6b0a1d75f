"""componentbase_examples/widgets: a custom resource's controller; its CRD loads from YAML, as envtest's do."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

from componentbase.client import ObjectClient
from componentbase.controller import Manager
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
        ready = eventually(lambda: objects.get("example.com/v1", "Widget", "w1", "default").get("status"),
                         what="the widget's status")
        assert ready == {"phase": "Ready", "observedGeneration": created["metadata"]["generation"]}
        bumped = objects.patch(created, {"spec": {"replicas": 5}})
        eventually(lambda: objects.get("example.com/v1", "Widget", "w1", "default")["status"]["observedGeneration"]
                 == bumped["metadata"]["generation"], what="the new generation observed")
    finally:
        stop.set()
        thread.join(10)
