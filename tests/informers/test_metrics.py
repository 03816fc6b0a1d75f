"""Informer and event-recorder calls are counted in the component's client metrics."""

from __future__ import annotations

import re
import threading

import pytest
from kubernetes import client

from componentbase.events import EventBroadcaster
from componentbase.informers import InformerFactory
from componentbase.metrics import Metrics
from componentbase.testing import eventually

from .conftest import cm

pytestmark = pytest.mark.integration


def _count(text: str, method: str, code: str) -> float:
    pattern = rf'^rest_client_requests_total{{code="{code}",host="[^"]+",method="{method}"}} (\S+)$'
    match = re.search(pattern, text, re.M)
    return float(match.group(1)) if match else 0.0


def test_list_watch_and_event_calls_are_observed(kube_client: client.ApiClient, v1: client.CoreV1Api,
                                                 stop: threading.Event) -> None:
    metrics = Metrics(process_metrics=False)
    metrics.track(kube_client)
    for name in ("a", "b"):  # plain client calls: not observed (the client has no hook)
        v1.create_namespaced_config_map("default", cm(name), _preload_content=False)
    informer = InformerFactory(kube_client, page_size=1).configmaps("default")
    informer.start(stop)
    assert informer.wait_for_sync(5)
    broadcaster = EventBroadcaster(kube_client)
    broadcaster.new_recorder("c").event(informer.get("default/a") or {}, "Normal", "Seen", "seen")
    assert broadcaster.flush(5)
    broadcaster.shutdown(2)
    # Two list pages and the watch, counted when its response starts: after the sync, so waited for.
    eventually(lambda: _count(metrics.render().decode(), "GET", "200") >= 3, 5, what="the watch's GET counted")
    assert _count(metrics.render().decode(), "POST", "201") == 1  # the event
