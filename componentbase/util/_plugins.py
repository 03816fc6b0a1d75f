"""Plugin points, on pluggy: the hooks every component offers, and the manager that holds a component's plugins.

A program that embeds a component passes plugins into its ``Command`` (kube-scheduler's
``registryOptions``); a package can add one through an entry point. Components declare their own hooks
(scheduler plugins, virtual-kubelet providers) on the same manager.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any

import pluggy

__all__ = ["PROJECT", "ComponentHooks", "hookimpl", "hookspec", "new_plugin_manager"]

PROJECT = "componentbase"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class ComponentHooks:
    """Hooks called by ``Command`` at each stage of a component's life."""

    @hookspec
    def componentbase_add_flags(self, options: Any, flags: Any) -> None:
        """Install a plugin's own flags into the component's ``NamedFlagSets``."""

    @hookspec
    def componentbase_validate(self, options: Any) -> list[Exception]:  # type: ignore[empty-body]
        """Return what is wrong with the options, as the plugin sees it."""

    @hookspec
    def componentbase_configure(self, config: Any) -> None:
        """Adjust the ``Config`` after the options were applied, before it is completed."""


def new_plugin_manager(
    hookspecs: Iterable[type | ModuleType] = (),
    plugins: Iterable[object] = (),
    entry_point_group: str | None = None,
) -> pluggy.PluginManager:
    """A manager with the component hooks, the component's own ``hookspecs``, then its ``plugins``.

    Plugins from ``entry_point_group`` load last, so a program's own plugins can be named first.
    """
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(ComponentHooks)
    for spec in hookspecs:
        pm.add_hookspecs(spec)
    for plugin in plugins:
        pm.register(plugin)
    if entry_point_group:
        pm.load_setuptools_entrypoints(entry_point_group)
    return pm
