"""``/stats/summary`` and ``/metrics/resource``: what metrics-server (and so ``kubectl top``) reads from a kubelet.

A provider implements ``get_stats_summary`` and returns the kubelet's ``stats/v1alpha1`` ``Summary`` as a
dict (``node`` and ``pods``, each with ``cpu`` and ``memory``); ``/metrics/resource`` is rendered from the
same summary as the kubelet's resource metrics collector does, with its metric names, help texts and
millisecond timestamps. A provider without the hook gets 501 on both, saying so.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

from componentbase.client import parse_time
from componentbase_examples.virtual_kubelet.provider import Provider

__all__ = ["StatsUnavailable", "render_resource_metrics", "resource_metrics", "stats_summary"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.api")


class StatsUnavailable(RuntimeError):
    """A provider that has the stats hook but cannot measure now (a missing library, say): answered 501."""


def _response(status: int, body: bytes, content_type: str) -> Any:
    from componentbase.serving import Response

    return Response(status, body, content_type)


def _summary_or_refusal(provider: Provider) -> tuple[dict[str, Any] | None, Any]:
    if not provider.implements("get_stats_summary"):
        return None, _response(501, f"the {provider.name} provider does not report stats\n".encode(), "text/plain")
    try:
        return provider.get_stats_summary(), None
    except StatsUnavailable as err:
        return None, _response(501, f"{err}\n".encode(), "text/plain")
    except Exception as err:
        log.error("error getting stats from the %s provider: %s", provider.name, err)
        return None, _response(500, f"Internal Error: {err}\n".encode(), "text/plain")


def stats_summary(provider: Provider) -> Any:
    """``GET /stats/summary``: the provider's summary as JSON."""
    summary, refusal = _summary_or_refusal(provider)
    if refusal is not None:
        return refusal
    return _response(200, json.dumps(summary).encode(), "application/json")


def resource_metrics(provider: Provider) -> Any:
    """``GET /metrics/resource``: the summary as Prometheus text, in the kubelet's names."""
    summary, refusal = _summary_or_refusal(provider)
    if refusal is not None:
        return refusal
    return _response(200, render_resource_metrics(summary or {}).encode(), "text/plain; version=0.0.4; charset=utf-8")


#: (name, type, help) in the order the kubelet's collector describes them; all STABLE but the scrape error.
_FAMILIES = (
    ("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the container in core-seconds"),
    ("container_memory_working_set_bytes", "gauge", "Current working set of the container in bytes"),
    ("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds"),
    ("node_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the node in core-seconds"),
    ("node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes"),
    ("pod_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the pod in core-seconds"),
    ("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes"),
    ("resource_scrape_error", "gauge", "1 if there was an error while getting container metrics, 0 otherwise"),
)


def _ms(stamp: str | None) -> str:
    return str(int(parse_time(stamp).timestamp() * 1000)) if stamp else ""


def _labels(pairs: dict[str, str]) -> str:
    def quoted(value: str) -> str:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    return "{" + ",".join(f'{k}="{quoted(v)}"' for k, v in sorted(pairs.items())) + "}" if pairs else ""


def _samples(summary: dict[str, Any]) -> Iterator[tuple[str, dict[str, str], float, str]]:
    """(metric, labels, value, timestamp ms) for every figure the summary has; absent figures are skipped."""
    def cpu(stats: dict[str, Any]) -> tuple[float, str] | None:
        c = stats.get("cpu") or {}
        return (c["usageCoreNanoSeconds"] / 1e9, _ms(c.get("time"))) if "usageCoreNanoSeconds" in c else None

    def memory(stats: dict[str, Any]) -> tuple[float, str] | None:
        m = stats.get("memory") or {}
        return (float(m["workingSetBytes"]), _ms(m.get("time"))) if "workingSetBytes" in m else None

    figures: list[tuple[str, Callable[[dict[str, Any]], tuple[float, str] | None]]] = [
        ("cpu_usage_seconds_total", cpu), ("memory_working_set_bytes", memory)]
    for pod in summary.get("pods") or ():
        ref = pod.get("podRef") or {}
        pod_labels = {"namespace": str(ref.get("namespace", "")), "pod": str(ref.get("name", ""))}
        for container in pod.get("containers") or ():
            labels = dict(pod_labels, container=str(container.get("name", "")))
            for suffix, read in figures:
                if (got := read(container)) is not None:
                    yield f"container_{suffix}", labels, got[0], got[1]
            if container.get("startTime"):
                started = parse_time(container["startTime"]).timestamp()
                yield "container_start_time_seconds", labels, started, _ms(container["startTime"])
        for suffix, read in figures:
            if (got := read(pod)) is not None:
                yield f"pod_{suffix}", pod_labels, got[0], got[1]
    node = summary.get("node") or {}
    for suffix, read in figures:
        if (got := read(node)) is not None:
            yield f"node_{suffix}", {}, got[0], got[1]


def render_resource_metrics(summary: dict[str, Any]) -> str:
    """The Prometheus text format of the kubelet's ``/metrics/resource`` for ``summary``."""
    by_name: dict[str, list[str]] = {name: [] for name, _, _ in _FAMILIES}
    for name, labels, value, stamp in _samples(summary):
        by_name[name].append(f"{name}{_labels(labels)} {value!r}{' ' + stamp if stamp else ''}")
    by_name["resource_scrape_error"].append("resource_scrape_error 0")
    lines: list[str] = []
    for name, kind, text in _FAMILIES:
        if by_name[name]:
            lines += [f"# HELP {name} [STABLE] {text}", f"# TYPE {name} {kind}", *by_name[name]]
    return "\n".join(lines) + "\n"
