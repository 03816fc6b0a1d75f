"""Which requests an event makes, and which events are worth one: controller-runtime's handlers and predicates."""

from __future__ import annotations

from collections.abc import Iterable

from componentbase.controller._types import Event, MapFunc, Obj, Request

__all__ = ["annotations_changed", "enqueue_object", "enqueue_owner", "generation_changed", "labels_changed"]


def enqueue_object(obj: Obj) -> Iterable[Request]:
    """The object itself: what a controller's primary kind enqueues."""
    return (Request.of(obj),)


def enqueue_owner(api_version: str, kind: str, *, only_controller: bool = True) -> MapFunc:
    """The owner of kind ``kind`` named in the object's ownerReferences (its controller only, by default).

    The owner is matched by group and kind, not version, as controller-runtime's ``EnqueueRequestForOwner``;
    it lives in the object's namespace (cluster-scoped owners get an empty namespace from the object).
    """
    group = api_version.rpartition("/")[0]

    def owners(obj: Obj) -> Iterable[Request]:
        meta = obj.get("metadata") or {}
        for ref in meta.get("ownerReferences") or ():
            if ref.get("kind") != kind or str(ref.get("apiVersion", "")).rpartition("/")[0] != group:
                continue
            if only_controller and not ref.get("controller"):
                continue
            yield Request(str(meta.get("namespace") or ""), str(ref.get("name") or ""))

    return owners


def _changed(event: Event, *path: str) -> bool:
    if event.type != "MODIFIED" or event.old is None:
        return True
    old: object = event.old
    new: object = event.object
    for part in path:
        old = old.get(part) if isinstance(old, dict) else None
        new = new.get(part) if isinstance(new, dict) else None
    return old != new


def generation_changed(event: Event) -> bool:
    """Updates only when ``metadata.generation`` moved (the spec changed); creates and deletes always."""
    return _changed(event, "metadata", "generation")


def labels_changed(event: Event) -> bool:
    """Updates only when the labels changed; creates and deletes always."""
    return _changed(event, "metadata", "labels")


def annotations_changed(event: Event) -> bool:
    """Updates only when the annotations changed; creates and deletes always."""
    return _changed(event, "metadata", "annotations")
