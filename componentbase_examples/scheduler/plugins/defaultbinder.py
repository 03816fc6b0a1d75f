"""DefaultBinder: binds through the ``Handle``'s binder, which the scheduler's wiring connects to the API."""

from __future__ import annotations

import componentbase
from componentbase_examples.scheduler.framework import Code, Plugin, Status
from componentbase_examples.scheduler.podinfo import PodInfo


class DefaultBinder(Plugin):
    name = "DefaultBinder"

    @componentbase.hookimpl
    def scheduler_bind(self, pod: PodInfo, node_name: str) -> Status | None:
        binder = self.handle.binder
        if binder is None:
            return Status(Code.ERROR, "no binder is configured for this scheduler")
        try:
            binder(pod, node_name)
        except Exception as e:  # the API refused: the pod goes back to the queue, as kube does
            return Status(Code.ERROR, str(e))
        return None
