"""``python -m componentbase_examples.website``: an operator. Each Website (``crd.yaml`` beside this file) gets a
ConfigMap holding its page and a Deployment serving it, both controlled by it: garbage collection deletes them
with it, and an edit of either is put back. Its status says which generation it has seen and whether the
Deployment's replicas are ready; an Event marks each change of that, and its finalizer's cleanup."""

from typing import Any

from componentbase import controller_command
from componentbase.controller import Manager, Request, enqueue_owner, set_condition, set_controller_reference
from componentbase.util import deepcopy_json

MANAGED = "app.kubernetes.io/managed-by=website"  # the children's label: the cache holds only theirs


def children(site: dict[str, Any]) -> list[dict[str, Any]]:
    """What ``site`` asks for: the fields this operator owns, and only those (server-side apply)."""
    name, labels = site["metadata"]["name"], {"app.kubernetes.io/managed-by": "website"}
    meta = {"name": name, "namespace": site["metadata"]["namespace"], "labels": labels}  # the same for both
    page = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
            "data": {"index.html": f"<h1>{site['spec']['title']}</h1>\n"}}
    pod = {"containers": [{"name": "nginx", "image": "nginx:1.27",
                           "volumeMounts": [{"name": "page", "mountPath": "/usr/share/nginx/html"}]}],
           "volumes": [{"name": "page", "configMap": {"name": name}}]}
    server = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
              "spec": {"replicas": site["spec"]["replicas"], "selector": {"matchLabels": {"website": name}},
                       "template": {"metadata": {"labels": {"website": name}}, "spec": pod}}}
    return [page, server]


def setup(mgr: Manager) -> None:
    sites = mgr.informer("example.com/v1", "Website")
    pages = mgr.informer("v1", "ConfigMap", label_selector=MANAGED)
    servers = mgr.informer("apps/v1", "Deployment", label_selector=MANAGED)
    events = mgr.event_recorder("website")

    def reconcile(req: Request) -> None:
        site = sites.get(req.key)
        if site is None:
            return  # deleted: garbage collection takes its children
        for child in children(site):
            set_controller_reference(site, child)  # controller: true; garbage collected with the Website
            mgr.objects.apply(child, field_manager="website", force=True)  # creates, or puts back what was edited
        site, want = deepcopy_json(site), site["spec"]["replicas"]  # cached objects are shared: change a copy
        ready = ((servers.get(req.key) or {}).get("status") or {}).get("readyReplicas", 0)
        reason, message = "Available" if ready >= want else "Progressing", f"{ready} of {want} replicas ready"
        if set_condition(site, "Ready", ready >= want, reason, message):
            events.event(site, "Normal", reason, message)
        elif site["status"].get("observedGeneration") == site["metadata"]["generation"]:
            return  # nothing changed: no write, so no event comes back and the work settles
        site["status"]["observedGeneration"] = site["metadata"]["generation"]
        mgr.objects.patch(site, {"status": site["status"]}, subresource="status")

    def cleanup(site: dict[str, Any]) -> None:  # runs before the finalizer lets the Website go
        events.event(site, "Normal", "Deleted", f"{site['spec']['title']}: taken down")  # what GC cannot reach

    website = mgr.controller("website", reconcile, finalizer="example.com/cleanup", cleanup=cleanup)
    website.watch(sites).watch(pages, map_to=enqueue_owner("example.com/v1", "Website"))
    website.watch(servers, map_to=enqueue_owner("example.com/v1", "Website"))


if __name__ == "__main__":
    controller_command("website", setup, short="website: serves each Website from a Deployment it owns.").main()
