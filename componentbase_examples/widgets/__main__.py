"""``python -m componentbase_examples.widgets``: a controller for a custom resource (``crd.yaml`` beside this file),
with its webhooks (``webhooks.yaml``): a Widget's owner defaults to its creator and cannot change, and v2 of the
resource calls ``replicas`` ``size``, converted through v1, the hub and storage version. See docs/webhooks.md."""

import os
from typing import Any

from componentbase import controller_command
from componentbase.controller import Manager, Request, generation_changed, set_condition
from componentbase.util import deepcopy_json
from componentbase.webhook import AdmissionRequest, Denied


def default_owner(req: AdmissionRequest) -> None:
    """Only a webhook knows who asks: the schema cannot default the owner to the creator. An update that
    leaves the owner out (a replace) keeps the old one."""
    assert req.object is not None  # webhooks.yaml sends CREATE and UPDATE, which carry the object
    old_owner = (req.old_object or {}).get("spec", {}).get("owner")
    req.object.setdefault("spec", {}).setdefault("owner", old_owner or req.user_info.get("username", ""))


def check_owner(req: AdmissionRequest) -> None:
    """An owner is set once (the schema could check it too, with a CEL rule; a webhook can ask anything)."""
    assert req.object is not None
    owner = req.object["spec"].get("owner")
    if req.old_object is not None and owner != req.old_object["spec"].get("owner"):
        raise Denied(f"spec.owner cannot change (it is {req.old_object['spec'].get('owner')!r})")
    if not owner:
        raise Denied("spec.owner must name someone")


def v2_to_v1(widget: dict[str, Any]) -> None:
    """v2 calls ``replicas`` ``size``: renaming it is the whole conversion, each way."""
    spec = widget.get("spec", {})
    if "size" in spec:
        spec["replicas"] = spec.pop("size")


def v1_to_v2(widget: dict[str, Any]) -> None:
    spec = widget.get("spec", {})
    if "replicas" in spec:
        spec["size"] = spec.pop("replicas")


def setup(mgr: Manager) -> None:
    if os.environ.get("ENABLE_WEBHOOKS") != "false":  # kubebuilder's switch, to run without certificates
        mgr.webhooks.mutate("example.com/v1", "Widget", default_owner)  # at /mutate-example-com-v1-widget
        mgr.webhooks.validate("example.com/v1", "Widget", check_owner)
        mgr.webhooks.conversion("example.com", "Widget", hub="v1").spoke("v2", to_hub=v2_to_v1, from_hub=v1_to_v2)
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
