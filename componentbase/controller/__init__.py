"""Controllers the way controller-runtime builds them: a ``Manager`` owning the client, the shared cache and
leader election, and ``Controller``s reconciling any kind by name.

``mgr = Manager.from_config(completed)``, ``cms = mgr.informer("v1", "ConfigMap")``,
``mgr.controller("hello", reconcile).watch(cms)``, ``mgr.run(stop)``. See ``docs/controllers.md``.
"""

from __future__ import annotations

from componentbase.controller._controller import Controller, Source
from componentbase.controller._handlers import (
    annotations_changed,
    enqueue_object,
    enqueue_owner,
    generation_changed,
    labels_changed,
)
from componentbase.controller._manager import Manager, Runnable
from componentbase.controller._types import Event, MapFunc, Predicate, Reconciler, Request, Result

__all__ = [
    "Controller",
    "Event",
    "Manager",
    "MapFunc",
    "Predicate",
    "Reconciler",
    "Request",
    "Result",
    "Runnable",
    "Source",
    "annotations_changed",
    "enqueue_object",
    "enqueue_owner",
    "generation_changed",
    "labels_changed",
]
