"""Checking ``--provider`` and ``--provider-config`` with the other flags, before anything starts."""

from __future__ import annotations

from typing import Any

import pluggy

import componentbase
from componentbase import field
from componentbase_examples.virtual_kubelet.provider import installed_providers

__all__ = ["ProviderSelection", "describe_providers"]


class ProviderSelection:
    """A plugin of the command: validates the provider choice and decodes its config strictly."""

    def __init__(self, plugins: pluggy.PluginManager) -> None:
        self.plugins = plugins

    @componentbase.hookimpl
    def componentbase_validate(self, options: Any) -> list[Exception]:
        installed = installed_providers(self.plugins)
        if options.provider not in installed:
            if not options.provider:
                return [field.required("provider", "installed providers: " + ", ".join(installed))]
            return [field.not_supported("provider", options.provider, list(installed))]
        spec = installed[options.provider]
        if spec.config_type is None:
            if options.provider_config:
                return [field.invalid("provider-config", options.provider_config,
                                      f'the "{spec.name}" provider takes no configuration')]
            return []
        config: Any
        try:
            if options.provider_config:
                config = componentbase.componentconfig.decode_file_as(options.provider_config, spec.config_type)
            else:
                config = componentbase.componentconfig.structure({}, spec.config_type)
        except componentbase.DecodeError as err:
            return [err]
        errs = spec.validate(config) if spec.validate is not None else []
        where = options.provider_config or "provider config"
        problems: list[Exception] = [ValueError(f"{where}: {e}") for e in errs]
        options.provider_settings = config
        return problems


def describe_providers(plugins: pluggy.PluginManager) -> str:
    """``Providers installed (--provider): mock, process (built in); echo (myprovider 1.0)``: what --help lists.

    Each plugin is asked on its own, so a provider is named with where it came from: built in, the
    distribution whose entry point loaded it, or a plugin the program passed.
    """
    dists = {id(plugin): f"{dist.project_name} {dist.version}" for plugin, dist in plugins.list_plugin_distinfo()}
    sources: dict[str, list[str]] = {}
    for impl in plugins.hook.virtual_kubelet_providers.get_hookimpls():
        builtin = type(impl.plugin).__module__.startswith("componentbase_examples.virtual_kubelet.")
        source = "built in" if builtin else dists.get(id(impl.plugin), f"plugin {impl.plugin_name}")
        specs: Any = impl.function()
        for spec in specs or ():
            sources.setdefault(source, []).append(spec.name)
    listed = "; ".join(f"{', '.join(sorted(names))} ({source})" for source, names in sources.items())
    return f"Providers installed (--provider): {listed or 'none'}"
