"""Read-your-own-writes: a reconcile waits for its own write to reach the cache, and only for that."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from componentbase.controller import Manager

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class Cache:
    """An informer's cache as the tracker sees it: objects by key, then handlers told, in that order."""

    def __init__(self) -> None:
        self.objects: dict[str, Obj] = {}
        self.on_add: Callable[[Obj], None] | None = None
        self.on_update: Callable[[Obj, Obj], None] | None = None
        self.on_delete: Callable[[Obj], None] | None = None

    def add_event_handler(self, on_add: Any = None, on_update: Any = None, on_delete: Any = None) -> None:
        self.on_add, self.on_update, self.on_delete = on_add, on_update, on_delete

    def get(self, key: str) -> Obj | None:
        return self.objects.get(key)

    def event(self, obj: Obj) -> None:
        old = self.objects.get("default/cm")
        self.objects["default/cm"] = obj
        if old is None:
            assert self.on_add is not None
            self.on_add(obj)
        else:
            assert self.on_update is not None
            self.on_update(old, obj)


def cm(rv: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default",
                                                                   "resourceVersion": rv}}


@pytest.fixture
def tracked() -> tuple[Any, Cache]:
    writes = Manager(None).writes
    cache = Cache()
    writes.track(cache)
    return writes, cache


def test_a_write_not_yet_in_the_cache_is_waited_for_until_its_event(tracked: tuple[Any, Cache]) -> None:
    writes, cache = tracked
    cache.event(cm("1"))
    writes.wrote(cm("2"))
    assert not writes.wait(cache.get("default/cm"), 0.01), "the cache still shows the object before the write"
    cache.event(cm("2"))
    assert writes.wait(cache.get("default/cm"), 0.01)


def test_a_write_whose_event_came_first_is_not_waited_for(tracked: tuple[Any, Cache]) -> None:
    writes, cache = tracked
    cache.event(cm("1"))
    cache.event(cm("2"))  # the watch was faster than the writer's own bookkeeping
    writes.wrote(cm("2"))
    cache.event(cm("3"))  # someone else's change: the next reconcile must not wait for "2" any more
    assert writes.wait(cache.get("default/cm"), 0.01)


def test_a_no_op_write_is_not_waited_for(tracked: tuple[Any, Cache]) -> None:
    writes, cache = tracked
    cache.event(cm("1"))
    writes.wrote(cm("1"))  # kube answers a write that changed nothing with the stored version, and no event
    cache.event(cm("2"))
    assert writes.wait(cache.get("default/cm"), 0.01)


def test_the_same_name_in_another_kind_does_not_settle_a_write(tracked: tuple[Any, Cache]) -> None:
    writes, cache = tracked
    cache.event({**cm("1"), "kind": "Secret"})
    writes.wrote(cm("1"))
    cache.objects["default/cm"] = cm("0")
    assert not writes.wait(cache.get("default/cm"), 0.01)
