"""CRDs loaded at start from a folder, as envtest's CRDDirectoryPaths: this module overrides the plugin's
``kube_apiserver`` fixture with ``crd_dirs``, so ``kube_client`` and ``kubectl`` see the CRDs too."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from componentbase.informers import InformerFactory
from componentbase.testing import LoopbackAPIServer, eventually
from tests.testing.helpers import informing

Kubectl = Callable[..., subprocess.CompletedProcess[str]]  # the ``kubectl`` fixture of conftest.py
CRDS = Path(__file__).parent / "crds"


@pytest.fixture
def kube_apiserver() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer(crd_dirs=[CRDS]) as server:
        yield server


def _widget(name: str) -> dict[str, object]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": "small"}}


@pytest.mark.process
def test_crds_from_the_folder_are_served_at_start(kube_client: client.ApiClient, kubectl: Kubectl) -> None:
    crd = client.ApiextensionsV1Api(kube_client).read_custom_resource_definition("widgets.example.com")
    assert {c.type: c.status for c in crd.status.conditions}["Established"] == "True"
    client.CustomObjectsApi(kube_client).create_namespaced_custom_object("example.com", "v1", "default", "widgets",
                                                                         _widget("w"))
    assert kubectl("get", "wd", "-o", "jsonpath={.items[*].spec.replicas}").stdout == "1"


@pytest.mark.integration
def test_generic_informer_lists_and_watches_a_custom_resource(kube_apiserver: LoopbackAPIServer,
                                                              kube_client: client.ApiClient) -> None:
    objects = client.CustomObjectsApi(kube_client)
    objects.create_namespaced_custom_object("example.com", "v1", "default", "widgets", _widget("before"))
    factory = InformerFactory(kube_apiserver.api_client())
    informer = factory.for_kind("example.com/v1", "Widget")
    with informing(factory):
        assert informer.get("default/before")["spec"]["mode"] == "fast"
        objects.create_namespaced_custom_object("example.com", "v1", "default", "widgets", _widget("after"))
        eventually(lambda: informer.get("default/after"), what="the watch to deliver the new Widget")
