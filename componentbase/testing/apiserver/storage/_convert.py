"""Versions that share storage: each bucket holds one stored form, and other versions are views of it.

As kube-apiserver stores a kind once and converts on the way in and out: events.k8s.io/v1 Events are
core/v1 Events (so either API sees the other's writes), autoscaling/v1 HorizontalPodAutoscalers are
stored as v2, and a CustomResourceDefinition's versions with ``conversion: None`` differ only in
``apiVersion``. A view is computed once per stored object version and kept on its ``Entry``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..apimachinery.resources import Converter, Resource
from .store import Entry

__all__ = ["ApiVersionConverter", "builtin_converter", "to_storage", "view"]

# events.k8s.io/v1 field -> core/v1 field (kube's conversion between the two Event types)
_EVENT_FIELDS = {"regarding": "involvedObject", "note": "message", "reportingController": "reportingComponent",
                 "deprecatedSource": "source", "deprecatedFirstTimestamp": "firstTimestamp",
                 "deprecatedLastTimestamp": "lastTimestamp", "deprecatedCount": "count"}
_CPU_TARGET = ("Resource", "cpu", "Utilization")


def _rename(obj: dict[str, Any], names: dict[str, str], api_version: str) -> dict[str, Any]:
    out = {"kind": obj.get("kind", "Event"), "apiVersion": api_version}
    out.update((names.get(k, k), v) for k, v in obj.items() if k not in ("kind", "apiVersion"))
    return out


class _EventsV1:
    """events.k8s.io/v1 Event <-> core/v1 Event (the stored form)."""

    _back: ClassVar[dict[str, str]] = {v: k for k, v in _EVENT_FIELDS.items()}

    def to_storage(self, obj: dict[str, Any]) -> dict[str, Any]:
        return _rename(obj, _EVENT_FIELDS, "v1")

    def from_storage(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        return _rename(obj, self._back, "events.k8s.io/v1")


def _cpu_percent(metrics: Any, value: str) -> int | None:
    """The CPU utilization percentage among v2 ``metrics`` (``value``: "target" or "current")."""
    for m in metrics if isinstance(metrics, list) else ():
        res = m.get("resource") if isinstance(m, dict) else None
        if m.get("type") == "Resource" and isinstance(res, dict) and res.get("name") == "cpu":
            got = res.get(value) or {}
            if value == "current" or got.get("type") == "Utilization":
                pct = got.get("averageUtilization")
                return pct if isinstance(pct, int) else None
    return None


def _cpu_metric(pct: int, value: str) -> dict[str, Any]:
    inner: dict[str, Any] = {"averageUtilization": pct}
    if value == "target":
        inner["type"] = "Utilization"
    return {"type": "Resource", "resource": {"name": "cpu", value: inner}}


class _HPAv1:
    """autoscaling/v1 HorizontalPodAutoscaler <-> autoscaling/v2 (the stored form), CPU target only."""

    def to_storage(self, obj: dict[str, Any]) -> dict[str, Any]:
        out = dict(obj, apiVersion="autoscaling/v2")
        spec = dict(obj.get("spec") or {})
        pct = spec.pop("targetCPUUtilizationPercentage", None)
        if isinstance(pct, int):
            spec["metrics"] = [_cpu_metric(pct, "target")]
        out["spec"] = spec
        if isinstance(obj.get("status"), dict):
            status = dict(obj["status"])
            cur = status.pop("currentCPUUtilizationPercentage", None)
            if isinstance(cur, int):
                status["currentMetrics"] = [_cpu_metric(cur, "current")]
            out["status"] = status
        return out

    def from_storage(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        out = dict(obj, apiVersion="autoscaling/v1")
        spec = {k: v for k, v in (obj.get("spec") or {}).items() if k not in ("metrics", "behavior")}
        pct = _cpu_percent((obj.get("spec") or {}).get("metrics"), "target")
        if pct is not None:
            spec["targetCPUUtilizationPercentage"] = pct
        out["spec"] = spec
        if isinstance(obj.get("status"), dict):
            status = {k: v for k, v in obj["status"].items() if k not in ("currentMetrics", "conditions")}
            cur = _cpu_percent(obj["status"].get("currentMetrics"), "current")
            if cur is not None:
                status["currentCPUUtilizationPercentage"] = cur
            out["status"] = status
        return out


class ApiVersionConverter:
    """``conversion: None``: versions differ in ``apiVersion`` only (CustomResourceDefinitions)."""

    def __init__(self, api_version: str, storage_version: str) -> None:
        self.api_version = api_version
        self.storage_version = storage_version

    def to_storage(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj if obj.get("apiVersion") == self.storage_version else dict(obj, apiVersion=self.storage_version)

    def from_storage(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        return None if obj.get("apiVersion") == self.api_version else dict(obj, apiVersion=self.api_version)


def builtin_converter(res: Resource) -> tuple[str, Converter] | None:
    """The bucket and converter of a built-in version stored as another one."""
    if res.key == "events.events.k8s.io":
        return "events", _EventsV1()
    if res.group == "autoscaling" and res.version == "v1":
        return res.key, _HPAv1()
    return None


def view(res: Resource, entry: Entry) -> Entry:
    """``entry`` as ``res``'s version shows it; the stored entry itself when no conversion applies."""
    conv = res.convert
    if conv is None:
        return entry
    views = entry.views
    if views is None:
        views = entry.views = {}
    got = views.get(res.group_version)
    if got is None:
        obj = conv.from_storage(entry.obj)
        got = views[res.group_version] = entry if obj is None else Entry(obj, entry.rv)
    return got


def to_storage(res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    return obj if res.convert is None else res.convert.to_storage(obj)
