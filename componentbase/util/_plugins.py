"""Plugin points, on pluggy: the hooks every component offers, and the manager that holds a component's plugins.

A program that embeds a component passes plugins into its ``Command`` (kube-scheduler's
``registryOptions``); a package can add one through an entry point. Components declare their own hooks
(scheduler plugins, virtual-kubelet providers) on the same manager.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable
from importlib.machinery import PathFinder
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


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, skipping dunder names when it looks for hook implementations.

    Registering walks ``dir(plugin)``, and for a plugin class two thirds of that are ``object``'s dunders,
    each looked up statically; a component registers every plugin each time a ``Command`` is built.
    No hook is a dunder. ``parse_hookimpl_opts`` is pluggy's documented point for this.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        if name.startswith("__"):
            return None
        return super().parse_hookimpl_opts(plugin, name)


@functools.cache
def _declared(group: str, path: tuple[str, ...]) -> bool:
    """Whether a distribution on ``path`` declares entry points of ``group``.

    Reading every distribution's metadata takes about 5 ms, which pluggy pays each time it loads a group,
    so each ``Command``; most groups have no entry point at all, and then it is read once per ``sys.path``.
    The folders on the path are read directly: ``importlib.metadata`` alone takes ~20 ms to import, which
    ``--help``, ``--version`` and config validation need not pay (a real start imports it with ``kubernetes``).
    """
    found = _declared_in_folders(group, path)
    if found is not None:
        return found
    import importlib.metadata  # a path entry the scan cannot read: ask the standard library

    return bool(importlib.metadata.entry_points(group=group))


def _declared_in_folders(group: str, path: tuple[str, ...]) -> bool | None:
    """``group`` as a section of any ``*.dist-info``/``*.egg-info`` folder's ``entry_points.txt`` on ``path``,
    where ``importlib.metadata`` finds distributions; ``None`` for what only it can read (zip files, finders
    other than the path finder)."""
    if any(hasattr(f, "find_distributions") for f in sys.meta_path if f is not PathFinder):
        return None
    header = f"[{group}]"
    for entry in path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return None
            continue
        with os.scandir(folder) as children:
            metadata = [c.path for c in children if c.name.lower().endswith((".dist-info", ".egg-info"))]
        for meta in metadata:
            try:
                with open(os.path.join(meta, "entry_points.txt"), encoding="utf-8") as f:
                    if any(line.strip() == header for line in f):
                        return True
            except OSError:  # no entry points (or an .egg-info file, which holds none)
                continue
    return False


def new_plugin_manager(
    hookspecs: Iterable[type | ModuleType] = (),
    plugins: Iterable[object] = (),
    entry_point_group: str | None = None,
) -> pluggy.PluginManager:
    """A manager with the component hooks, the component's own ``hookspecs``, then its ``plugins``.

    Plugins from ``entry_point_group`` load last, so a program's own plugins can be named first.
    """
    pm = _PluginManager(PROJECT)
    pm.add_hookspecs(ComponentHooks)
    for spec in hookspecs:
        pm.add_hookspecs(spec)
    for plugin in plugins:
        pm.register(plugin)
    if entry_point_group and _declared(entry_point_group, tuple(sys.path)):
        pm.load_setuptools_entrypoints(entry_point_group)
    return pm
