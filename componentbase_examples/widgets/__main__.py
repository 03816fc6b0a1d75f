"""``python -m componentbase_examples.widgets``: a controller for a custom resource (``crd.yaml`` beside this file)."""

from componentbase import controller_command
from componentbase.controller import Manager, Request, generation_changed


def setup(mgr: Manager) -> None:
    widgets = mgr.informer("example.com/v1", "Widget")

    def reconcile(req: Request) -> None:
        widget = widgets.get(req.key)
        if widget is None:
            return  # deleted
        generation = widget["metadata"]["generation"]
        status = {"phase": "Ready", "observedGeneration": generation}
        if widget.get("status") != status:
            mgr.objects.patch(widget, {"status": status}, subresource="status")

    mgr.controller("widgets", reconcile).watch(widgets, generation_changed)


if __name__ == "__main__":
    controller_command("widgets", setup).main()
