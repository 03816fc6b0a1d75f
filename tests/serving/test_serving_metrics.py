"""The library's own metrics: a registry per component, API calls observed, disabled metrics, label allow-lists."""

from __future__ import annotations

import re

import pytest

from componentbase import metrics
from componentbase.client import observe_request
from componentbase.testing import LoopbackAPIServer


def sample(m: metrics.Metrics, name: str, labels: str) -> float | None:
    found = re.search("^" + re.escape(name + "{" + labels + "}") + r" (\S+)$", m.render().decode(), re.M)
    return float(found.group(1)) if found else None


@pytest.mark.integration
def test_api_calls_are_counted_by_code_in_the_metrics_tracking_the_client(kube_apiserver: LoopbackAPIServer) -> None:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    mine, other = metrics.Metrics(), metrics.Metrics()
    api = kube_apiserver.api_client()
    untracked = kube_apiserver.api_client()
    mine.track(api)
    host = f"127.0.0.1:{kube_apiserver.port}"
    core = client.CoreV1Api(api)
    with observe_request(api, "get") as obs:
        obs.response(core.list_namespaced_config_map("default", _preload_content=False))
    with observe_request(api, "GET"):
        core.list_namespaced_config_map("default")
    with pytest.raises(ApiException), observe_request(api, "GET"):
        core.read_namespaced_config_map("missing", "default", _preload_content=False)
    with pytest.raises(RuntimeError), observe_request(api, "DELETE"):
        raise RuntimeError("connection refused")
    with observe_request(untracked, "GET"):
        client.CoreV1Api(untracked).list_namespaced_config_map("default", _preload_content=False)
    assert sample(mine, "rest_client_requests_total", f'code="200",host="{host}",method="GET"') == 1
    assert sample(mine, "rest_client_requests_total", f'code="2xx",host="{host}",method="GET"') == 1
    assert sample(mine, "rest_client_requests_total", f'code="404",host="{host}",method="GET"') == 1
    assert sample(mine, "rest_client_requests_total", f'code="<error>",host="{host}",method="DELETE"') == 1
    assert sample(mine, "rest_client_request_duration_seconds_count", f'host="{host}",verb="GET"') == 3
    assert "rest_client_requests_total{" not in other.render().decode()  # another component's registry
    api.close()
    untracked.close()


@pytest.mark.unit
def test_leader_status_gauge() -> None:
    m = metrics.Metrics(process_metrics=False)
    m.leader_status("kube-scheduler", True)
    assert sample(m, "leader_election_master_status", 'name="kube-scheduler"') == 1
    m.leader_status("kube-scheduler", False)
    assert sample(m, "leader_election_master_status", 'name="kube-scheduler"') == 0


@pytest.mark.unit
def test_disabled_metrics_are_not_served_and_labels_are_bounded_by_their_allow_list() -> None:
    m = metrics.Metrics(disabled=["rest_client_requests_total", "kubernetes_build_info"],
                        allow_labels={"leader_election_master_status,name": ["kube-scheduler"]}, process_metrics=False)
    m.observe_rest_request("GET", "h:1", "200", 0.01)
    m.leader_status("kube-scheduler", True)
    m.leader_status("someone-elses-lease", True)
    text = m.render().decode()
    assert "rest_client_requests_total" not in text and "kubernetes_build_info" not in text
    assert 'rest_client_request_duration_seconds_count{host="h:1",verb="GET"} 1.0' in text
    assert sample(m, "leader_election_master_status", 'name="kube-scheduler"') == 1
    assert sample(m, "leader_election_master_status", f'name="{metrics.UNEXPECTED}"') == 1
    assert "someone-elses-lease" not in text


@pytest.mark.unit
def test_repeated_observations_add_up_in_their_own_series_within_the_allow_list() -> None:
    m = metrics.Metrics(allow_labels={"rest_client_requests_total,code": ["200"]}, process_metrics=False)
    for code in ("200", "500", "200", "404"):
        m.observe_rest_request("GET", "h:1", code, 0.01)
    for result in ("success", "error", "success"):
        m.observe_reconcile("hello", result, 0.01)
    m.queue_added("hello", 1)
    m.queue_added("hello", 2)
    m.queue_taken("hello", 1, 0.001)
    m.queue_retried("hello")
    assert sample(m, "rest_client_requests_total", 'code="200",host="h:1",method="GET"') == 2
    assert sample(m, "rest_client_requests_total", f'code="{metrics.UNEXPECTED}",host="h:1",method="GET"') == 2
    assert sample(m, "controller_runtime_reconcile_total", 'controller="hello",result="success"') == 2
    assert sample(m, "controller_runtime_reconcile_errors_total", 'controller="hello"') == 1
    assert sample(m, "controller_runtime_reconcile_time_seconds_count", 'controller="hello"') == 3
    assert sample(m, "workqueue_adds_total", 'name="hello"') == 2
    assert sample(m, "workqueue_depth", 'name="hello"') == 1
    assert sample(m, "workqueue_retries_total", 'name="hello"') == 1


@pytest.mark.unit
def test_no_created_series_are_served_as_no_kube_component_serves_them() -> None:
    """prometheus_client adds a ``<name>_created`` timestamp to every counter, histogram and summary series;
    client_golang's text exposition has none, so kube's dashboards and alerts never expect them."""
    m = metrics.Metrics(process_metrics=False)
    m.observe_rest_request("GET", "h:1", "200", 0.01)
    m.observe_reconcile("hello", "success", 0.01)
    m.queue_retried("hello")
    text = m.render().decode()
    assert [line for line in text.splitlines() if "_created" in line] == []
    assert sample(m, "controller_runtime_reconcile_total", 'controller="hello",result="success"') == 1
    assert sample(m, "controller_runtime_reconcile_time_seconds_count", 'controller="hello"') == 1
    assert sample(m, "workqueue_retries_total", 'name="hello"') == 1
