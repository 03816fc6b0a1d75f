"""``python -m componentbase_examples.hello``: the smallest controller: greets ConfigMaps labelled ``hello=true``."""

from componentbase import controller_command
from componentbase.controller import Manager, Request


def setup(mgr: Manager) -> None:
    configmaps = mgr.informer("v1", "ConfigMap", label_selector="hello=true")

    def reconcile(req: Request) -> None:
        cm = configmaps.get(req.key)
        if cm is not None and (cm.get("data") or {}).get("greeting") != f"hello, {req.name}":
            mgr.objects.patch(cm, {"data": {"greeting": f"hello, {req.name}"}})

    mgr.controller("hello", reconcile).watch(configmaps)


if __name__ == "__main__":
    controller_command("hello", setup).main()
