"""The library's webhook server called by the loopback API server, through the official client: a default
stored, a denial in kube's words, certificates rotated under load and rotated to garbage, malformed reviews,
metrics, a conversion webhook, and a Manager serving its webhooks before its caches sync.

One API server and one webhook server for the module (``conftest.py``); each test creates a namespace of its
own labelled ``webhooks: on``, which the webhook configurations select.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from componentbase.controller import Manager
from componentbase.util._certs import CertificateAuthority
from componentbase.webhook import WebhookServer
from tests.webhook.conftest import crd, served_name, widgets_conversion, write_pair

pytestmark = pytest.mark.integration

@pytest.fixture
def ns(api: client.ApiClient, request: pytest.FixtureRequest) -> str:
    name = request.node.name.replace("_", "-")[:50].strip("-")
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name, "labels": {"webhooks": "on"}}})
    return name


def _cm(name: str, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": data}


def test_a_mutating_default_shows_in_the_stored_object(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, _cm("plain", a="1"))
    core.create_namespaced_config_map(ns, _cm("red", color="red"))
    stored = core.read_namespaced_config_map("plain", ns)
    assert stored.data == {"a": "1", "color": "blue"}
    assert stored.metadata.labels == {"example.com/defaulted": "true"}  # a key with a '/' in the patch's path
    assert core.read_namespaced_config_map("red", ns).data == {"color": "red"}  # a default, not an override


def test_a_validating_denial_reads_as_kubes_and_nothing_is_stored(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_config_map(ns, _cm("bad", forbidden="x"))
    assert caught.value.status == 403
    status = json.loads(caught.value.body)
    assert status["reason"] == "Forbidden"
    assert status["message"] == ('admission webhook "check.example.com" denied the request: '
                                 "the key 'forbidden' is not allowed")
    assert core.list_namespaced_config_map(ns).items == []


def test_rotating_the_certificate_mid_run_drops_no_request(api: client.ApiClient, ns: str, hooks: WebhookServer,
                                                          cert_dir: Path, ca: CertificateAuthority) -> None:
    core = client.CoreV1Api(api)
    done = threading.Event()
    created: list[str] = []
    failed: list[BaseException] = []

    def load() -> None:
        while not done.is_set():
            name = f"cm-{len(created)}"
            try:
                core.create_namespaced_config_map(ns, _cm(name, a="1"))
                created.append(name)
            except BaseException as err:  # any failure is the finding
                failed.append(err)
                return

    thread = threading.Thread(target=load)
    thread.start()
    try:
        reloads = hooks.certificates.reloads
        for i in range(3):
            time.sleep(0.15)
            write_pair(cert_dir, ca, f"rotated-{i}")
            deadline = time.monotonic() + 5
            while hooks.certificates.reloads <= reloads + i and time.monotonic() < deadline:
                time.sleep(0.01)
        time.sleep(0.15)
    finally:
        done.set()
        thread.join(30)
    assert failed == [] and len(created) >= 5
    assert served_name(hooks.port, ca) == "CN=rotated-2"
    assert core.read_namespaced_config_map(created[-1], ns).data == {"a": "1", "color": "blue"}


def test_a_certificate_rotated_to_garbage_keeps_the_old_one_serving(
        api: client.ApiClient, ns: str, hooks: WebhookServer, cert_dir: Path, ca: CertificateAuthority,
        caplog: pytest.LogCaptureFixture) -> None:
    before = served_name(hooks.port, ca)
    key = (cert_dir / "tls.key").read_bytes()
    (cert_dir / "tls.crt").write_bytes(b"not a certificate")
    try:
        hooks.certificates.check()  # or the watcher's own poll got there first: the same error, logged once
        assert (f"failed to reload the serving certificate, still serving the previous one: {cert_dir}/tls.crt: "
                "tls: failed to find any PEM data in certificate input") in caplog.text
        assert served_name(hooks.port, ca) == before
        client.CoreV1Api(api).create_namespaced_config_map(ns, _cm("still", a="1"))
    finally:
        (cert_dir / "tls.key").write_bytes(key)
        write_pair(cert_dir, ca, "repaired")
        hooks.certificates.check()
    assert served_name(hooks.port, ca) == "CN=repaired"


def _post(hooks: WebhookServer, ca: CertificateAuthority, path: str, body: bytes,
          content_type: str = "application/json") -> tuple[int, bytes]:
    ctx = ssl.create_default_context(cadata=ca.cert_pem.decode())
    conn = http.client.HTTPSConnection("127.0.0.1", hooks.port, context=ctx, timeout=10)
    try:
        conn.request("POST", path, body, {"Content-Type": content_type})
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def test_a_malformed_review_is_answered_as_controller_runtime_does(hooks: WebhookServer,
                                                                   ca: CertificateAuthority) -> None:
    status, body = _post(hooks, ca, "/validate--v1-configmap", b"{not json")
    assert status == 200
    review = json.loads(body)
    assert (review["apiVersion"], review["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    assert review["response"]["allowed"] is False and review["response"]["status"]["code"] == 400
    status, body = _post(hooks, ca, "/validate--v1-configmap", b"{}", "text/plain")
    assert json.loads(body)["response"]["status"]["message"] == "contentType=text/plain, expected application/json"
    assert _post(hooks, ca, "/convert", b"{not json") == (400, b"")
    assert _post(hooks, ca, "/nowhere", b"{}") == (404, b"404 page not found\n")


def test_the_webhook_metrics_are_controller_runtimes(api: client.ApiClient, ns: str, hooks: WebhookServer) -> None:
    client.CoreV1Api(api).create_namespaced_config_map(ns, _cm("counted", a="1"))
    text = hooks.metrics.render().decode()
    for path in ("/mutate--v1-configmap", "/validate--v1-configmap"):
        counted = f'controller_runtime_webhook_requests_total{{code="200",webhook="{path}"}} '
        assert float(text.split(counted, 1)[1].split("\n", 1)[0]) >= 1
        assert f'controller_runtime_webhook_requests_total{{code="500",webhook="{path}"}} 0.0' in text
        assert f'controller_runtime_webhook_latency_seconds_count{{webhook="{path}"}} ' in text
        assert f'controller_runtime_webhook_requests_in_flight{{webhook="{path}"}} 0.0' in text


def test_a_v1_object_reads_back_as_v2_through_the_conversion_webhook(api: client.ApiClient, ns: str) -> None:
    crs = client.CustomObjectsApi(api)
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}}
    crs.create_namespaced_custom_object("example.com", "v1", ns, "widgets", widget)
    got = crs.get_namespaced_custom_object("example.com", "v2", ns, "widgets", "w")
    assert (got["apiVersion"], got["spec"]) == ("example.com/v2", {"replicas": 3})
    crs.create_namespaced_custom_object("example.com", "v2", ns, "widgets", {
        "apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w2"}, "spec": {"replicas": 5}})
    assert crs.get_namespaced_custom_object("example.com", "v1", ns, "widgets", "w2")["spec"] == {"size": 5}


def test_a_manager_serves_its_webhooks_before_its_caches_sync(api: client.ApiClient, ns: str, cert_dir: Path,
                                                             ca: CertificateAuthority) -> None:
    """A cache of v2 gadgets, stored as v1, syncs only through the manager's own conversion webhook."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = {"url": f"https://127.0.0.1:{port}/convert", "caBundle": base64.b64encode(ca.cert_pem).decode()}
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd("gadgets", "Gadget", url))
    crs = client.CustomObjectsApi(api)
    crs.create_namespaced_custom_object("example.com", "v1", ns, "gadgets", {
        "apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 2}})
    mgr = Manager(api, sync_timeout=10, webhook_server=WebhookServer(str(cert_dir), port=port, host="127.0.0.1"))
    widgets_conversion(mgr.webhooks, "example.com", "Gadget")
    gadgets = mgr.informer("example.com/v2", "Gadget", ns)
    synced: list[bool] = []
    mgr.add(lambda stop: synced.append(gadgets.has_synced()), needs_leader=False)
    stop = threading.Event()
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(mgr.run(stop)))
    thread.start()
    deadline = time.monotonic() + 15
    while not synced and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.set()
    thread.join(15)
    assert synced == [True] and code == [0]
    assert [(o["apiVersion"], o["spec"]) for o in gadgets.list()] == [("example.com/v2", {"replicas": 2})]
    with pytest.raises(ConnectionRefusedError):  # stopped with the manager
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
