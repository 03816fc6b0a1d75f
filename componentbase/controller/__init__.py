"""Controllers the way controller-runtime builds them: a ``Manager`` owning the client, the shared cache and
leader election, and ``Controller``s reconciling any kind by name.

``mgr = Manager.from_config(completed)``, ``cms = mgr.informer("v1", "ConfigMap")``,
``mgr.controller("hello", reconcile).watch(cms)``, ``mgr.run(stop)``. See ``docs/controllers.md``.
"""

from __future__ import annotations

from componentbase.controller._cleanup import Cleanup, FinalizerError
from componentbase.controller._conditions import (
    find_status_condition,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    remove_status_condition,
    set_condition,
    set_status_condition,
)
from componentbase.controller._controller import Controller, Source
from componentbase.controller._finalizers import (
    add_finalizer,
    finalizers_of,
    has_finalizer,
    is_being_deleted,
    remove_finalizer,
)
from componentbase.controller._handlers import (
    annotations_changed,
    enqueue_object,
    enqueue_owner,
    generation_changed,
    labels_changed,
)
from componentbase.controller._manager import Manager, Runnable
from componentbase.controller._ownership import (
    AlreadyOwnedError,
    OwnerReferenceError,
    get_controller_of,
    has_controller_reference,
    has_owner_reference,
    is_controlled_by,
    remove_controller_reference,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from componentbase.controller._ring import HashRing
from componentbase.controller._sharding import DuplicateShardError, ShardingConfig
from componentbase.controller._types import Event, MapFunc, Predicate, Reconciler, Request, Result, TerminalError
from componentbase.informers import CacheSyncCheck  # the Manager's /readyz check (Manager.from_config fills it)

__all__ = [
    "AlreadyOwnedError",
    "CacheSyncCheck",
    "Cleanup",
    "Controller",
    "DuplicateShardError",
    "Event",
    "FinalizerError",
    "HashRing",
    "Manager",
    "MapFunc",
    "OwnerReferenceError",
    "Predicate",
    "Reconciler",
    "Request",
    "Result",
    "Runnable",
    "ShardingConfig",
    "Source",
    "TerminalError",
    "add_finalizer",
    "annotations_changed",
    "enqueue_object",
    "enqueue_owner",
    "finalizers_of",
    "find_status_condition",
    "generation_changed",
    "get_controller_of",
    "has_controller_reference",
    "has_finalizer",
    "has_owner_reference",
    "is_being_deleted",
    "is_controlled_by",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "labels_changed",
    "remove_controller_reference",
    "remove_finalizer",
    "remove_owner_reference",
    "remove_status_condition",
    "set_condition",
    "set_controller_reference",
    "set_owner_reference",
    "set_status_condition",
]
