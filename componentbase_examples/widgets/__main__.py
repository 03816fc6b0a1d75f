"""``python -m componentbase_examples.widgets``: a controller for a custom resource (``crd.yaml`` beside this file)."""

from componentbase import controller_command
from componentbase.controller import Manager, Request, generation_changed, set_condition
from componentbase.util import deepcopy_json


def setup(mgr: Manager) -> None:
    widgets = mgr.informer("example.com/v1", "Widget")
    events = mgr.event_recorder("widgets")

    def reconcile(req: Request) -> None:
        widget = widgets.get(req.key)
        if widget is None:
            return  # deleted
        widget = deepcopy_json(widget)  # the cache's objects are shared: change a copy
        counted = f"{widget['spec']['replicas']} replicas counted"
        if set_condition(widget, "Ready", True, "Counted", counted):  # observedGeneration: the generation
            mgr.objects.patch(widget, {"status": widget["status"]}, subresource="status")
            events.event(widget, "Normal", "Counted", counted)

    mgr.controller("widgets", reconcile).watch(widgets, generation_changed)


if __name__ == "__main__":
    controller_command("widgets", setup).main()
