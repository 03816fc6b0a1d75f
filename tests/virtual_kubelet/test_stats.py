"""``/stats/summary`` and ``/metrics/resource`` on the kubelet API: rendering, and providers without stats."""

from __future__ import annotations

import pytest

import componentbase
from componentbase_examples.virtual_kubelet import statsapi
from componentbase_examples.virtual_kubelet.providers.mock import MockProvider
from tests.virtual_kubelet.conftest import new_provider

pytestmark = pytest.mark.unit

SUMMARY = {
    "node": {"nodeName": "vk", "cpu": {"time": "2026-01-02T03:04:05Z", "usageCoreNanoSeconds": 2_500_000_000},
             "memory": {"time": "2026-01-02T03:04:05Z", "workingSetBytes": 1024}},
    "pods": [{"podRef": {"name": "web", "namespace": "default", "uid": "u"},
              "cpu": {"time": "2026-01-02T03:04:05Z", "usageCoreNanoSeconds": 1_000_000},
              "memory": {"time": "2026-01-02T03:04:05Z", "workingSetBytes": 300},
              "containers": [{"name": "c", "startTime": "2026-01-02T03:00:00Z",
                              "cpu": {"time": "2026-01-02T03:04:05Z", "usageCoreNanoSeconds": 1_000_000},
                              "memory": {"time": "2026-01-02T03:04:05Z", "workingSetBytes": 300}}]}],
}


def test_resource_metrics_are_rendered_in_the_kubelets_names_with_millisecond_timestamps() -> None:
    text = statsapi.render_resource_metrics(SUMMARY)
    lines = text.splitlines()
    assert "# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in " \
           "core-seconds" in lines
    assert "# TYPE container_cpu_usage_seconds_total counter" in lines
    assert 'container_cpu_usage_seconds_total{container="c",namespace="default",pod="web"} 0.001 1767323045000' \
        in lines
    assert 'container_memory_working_set_bytes{container="c",namespace="default",pod="web"} 300.0 1767323045000' \
        in lines
    assert 'container_start_time_seconds{container="c",namespace="default",pod="web"} 1767322800.0 1767322800000' \
        in lines
    assert "node_cpu_usage_seconds_total 2.5 1767323045000" in lines
    assert 'pod_memory_working_set_bytes{namespace="default",pod="web"} 300.0 1767323045000' in lines
    assert lines[-1] == "resource_scrape_error 0"
    # A summary with nothing measured has only the scrape error.
    assert statsapi.render_resource_metrics({}).splitlines()[-1] == "resource_scrape_error 0"
    assert "node_" not in statsapi.render_resource_metrics({"node": {"nodeName": "vk"}})


def test_a_provider_without_stats_answers_501_saying_so() -> None:
    provider = new_provider(MockProvider)
    for handler in (statsapi.stats_summary, statsapi.resource_metrics):
        resp = handler(provider)
        assert (resp.status, resp.body) == (501, b"the mock provider does not report stats\n")


class _Unmeasurable:
    @componentbase.hookimpl
    def get_stats_summary(self) -> dict[str, object]:
        raise statsapi.StatsUnavailable("psutil is not installed")


class _Broken:
    @componentbase.hookimpl
    def get_stats_summary(self) -> dict[str, object]:
        raise OSError("disk on fire")


def test_a_provider_that_cannot_measure_answers_501_and_one_that_fails_500() -> None:
    resp = statsapi.stats_summary(new_provider(lambda ctx: _Unmeasurable(), name="x"))
    assert (resp.status, resp.body) == (501, b"psutil is not installed\n")
    resp = statsapi.resource_metrics(new_provider(lambda ctx: _Broken(), name="x"))
    assert (resp.status, resp.body) == (500, b"Internal Error: disk on fire\n")
