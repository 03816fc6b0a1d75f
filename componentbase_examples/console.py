"""The console scripts the wheel installs (``[project.scripts]``): each runs its component as ``python -m`` does.

They live here, not in the components' ``__main__`` modules, so those stay the small programs the docs show;
each function imports its component only when called, so one script never pays for another's imports, and
``--help`` and ``--version`` import none of the runtime (the client, informers, serving, plugins).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from componentbase.controller import Manager


def scheduler() -> None:
    """``componentbase-scheduler``: ``python -m componentbase_examples.scheduler``."""
    from componentbase_examples.scheduler.__main__ import new_command

    new_command().main()


def virtual_kubelet() -> None:
    """``componentbase-virtual-kubelet``: ``python -m componentbase_examples.virtual_kubelet``."""
    from componentbase_examples.virtual_kubelet.__main__ import new_command

    new_command().main()


def hello() -> None:
    """``componentbase-hello``: ``python -m componentbase_examples.hello``."""
    from componentbase import controller_command

    def setup(mgr: Manager) -> None:
        """The example's ``setup``, imported when the controller starts: the README's 11 lines import
        ``componentbase.controller`` (the Manager, informers, the client), which ``--help`` needs not load."""
        from componentbase_examples.hello.__main__ import setup as hello_setup

        hello_setup(mgr)

    # --sharded: replicas share the labelled ConfigMaps (docs/sharding.md)
    controller_command("hello", setup, shard_kinds=[("v1", "ConfigMap")], shard_selector="hello=true").main()


def widgets() -> None:
    """``componentbase-widgets``: ``python -m componentbase_examples.widgets``, its webhooks served on
    ``--webhook-port`` from ``--webhook-cert-dir``."""
    from componentbase import controller_command

    def setup(mgr: Manager) -> None:
        """The example's ``setup``, imported when the controller starts, as hello's."""
        from componentbase_examples.widgets.__main__ import setup as widgets_setup

        widgets_setup(mgr)

    controller_command("widgets", setup).main()


def demo() -> None:
    """``componentbase-demo``: ``python -m componentbase_examples.demo``."""
    from componentbase_examples.demo.__main__ import new_command

    new_command().main()
