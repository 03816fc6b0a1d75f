"""componentbase_examples/website against the loopback API server, tested as a user tests an operator with the
library's pytest plugin (docs/runtime.md shows this file)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from componentbase.client import ObjectClient
from componentbase.controller import Manager, find_status_condition, is_controlled_by
from componentbase.testing import LoopbackAPIServer, eventually
from componentbase_examples.website.__main__ import setup

pytestmark = pytest.mark.integration

CRD = Path(__file__).resolve().parents[2] / "componentbase_examples" / "website" / "crd.yaml"
BLOG = {"apiVersion": "example.com/v1", "kind": "Website", "metadata": {"name": "blog", "namespace": "default"},
        "spec": {"title": "My blog", "replicas": 2}}


@pytest.fixture
def kube_apiserver() -> Iterator[LoopbackAPIServer]:  # the plugin's fixture, with the CRD installed
    with LoopbackAPIServer(crd_dirs=[CRD]) as server:
        yield server


@pytest.fixture
def operator(kube_apiserver: LoopbackAPIServer) -> Iterator[Manager]:  # the Manager, in a thread
    mgr = Manager(kube_apiserver.api_client())
    setup(mgr)
    stop = threading.Event()
    thread = threading.Thread(target=mgr.run, args=(stop,))
    thread.start()
    yield mgr
    stop.set()
    thread.join(10)


def test_a_website_gets_its_children_status_events_and_cleanup(kube_apiserver: LoopbackAPIServer,
                                                                kube_client: Any, operator: Manager) -> None:
    objects = ObjectClient(kube_client)

    def get(api_version: str, kind: str) -> dict[str, Any] | None:  # blog's object of that kind, or None
        try:
            return objects.get(api_version, kind, "blog", "default")
        except ApiException as err:
            if err.status == 404:
                return None
            raise

    def ready() -> dict[str, Any] | None:  # blog's Ready condition
        site = get("example.com/v1", "Website") or {}
        return find_status_condition((site.get("status") or {}).get("conditions", []), "Ready")

    site = objects.create(BLOG)
    page = eventually(lambda: get("v1", "ConfigMap"), what="the page")
    server = eventually(lambda: get("apps/v1", "Deployment"), what="the Deployment")
    assert page["data"] == {"index.html": "<h1>My blog</h1>\n"}
    assert server["spec"]["replicas"] == 2
    assert is_controlled_by(page, site) and is_controlled_by(server, site)
    assert eventually(ready, what="a Ready condition")["status"] == "False"  # no replica is ready yet
    site = objects.get("example.com/v1", "Website", "blog", "default")
    assert site["metadata"]["finalizers"] == ["example.com/cleanup"]
    assert site["status"]["observedGeneration"] == site["metadata"]["generation"]

    # Drift is repaired: an edited page is put back, a deleted Deployment made again.
    objects.patch(page, {"data": {"index.html": "defaced"}})
    eventually(lambda: (get("v1", "ConfigMap") or {}).get("data") == page["data"], what="the page put back")
    old = server["metadata"]["uid"]
    objects.delete(server)
    server = eventually(lambda: (d := get("apps/v1", "Deployment")) and d["metadata"]["uid"] != old and d,
                        what="a new Deployment")

    # No Deployment controller runs here: the test reports the replicas ready, as one would.
    server = objects.patch(server, {"status": {"replicas": 2, "readyReplicas": 2}}, subresource="status")
    assert eventually(lambda: (c := ready()) and c["status"] == "True" and c)["reason"] == "Available"

    # It settles: a reconcile with nothing to do changes nothing (its applies are no-ops) and writes no status.
    counts = kube_apiserver.request_counts

    def reconciled_again(touch: str) -> dict[str, Any]:  # a label, so an event: wait for the reconcile's apply
        applies = counts()[("patch", "configmaps")]
        labelled = objects.patch(site, {"metadata": {"labels": {"touched": touch}}})
        eventually(lambda: counts()[("patch", "configmaps")] > applies, what="a reconcile")
        return labelled

    writes = counts()[("patch", "websites")]
    reconciled_again("1")
    labelled = reconciled_again("2")  # its reconcile starts only once the first one has ended
    assert counts()[("patch", "websites")] == writes + 2, "the two labels, and no status write"
    assert get("example.com/v1", "Website") == labelled
    assert get("apps/v1", "Deployment") == server

    # Deleted: the finalizer holds it for its cleanup, then garbage collection takes the children.
    objects.delete(site)
    eventually(lambda: get("example.com/v1", "Website") is None, what="the Website gone")
    eventually(lambda: get("v1", "ConfigMap") is None and get("apps/v1", "Deployment") is None, what="the children")

    def reasons() -> set[str]:  # of the Events about blog
        return {e["reason"] for e in objects.list("v1", "Event", "default") if e["involvedObject"]["name"] == "blog"}

    eventually(lambda: reasons() >= {"Progressing", "Available", "Deleted"}, what="the Events")
