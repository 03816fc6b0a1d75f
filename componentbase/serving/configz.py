"""The running config of a component, as ``k8s.io/component-base/configz``: what ``/configz`` shows.

A component registers its effective config once it is complete, so an operator can see what the
process actually runs with, after flags, files and defaults were merged. Values are shown in their
wire form (camelCase keys, Go durations), the same form the config file uses.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from componentbase.componentconfig import unstructure

__all__ = ["Config", "ConfigzError", "Redactor", "Registry", "default_registry", "delete", "new", "render"]

#: Called with a config's name and its JSON-able value, returns what to show (e.g. with secrets masked).
Redactor = Callable[[str, Any], Any]


class ConfigzError(ValueError):
    """A name registered twice."""


class Config:
    """One named value; ``set`` it whenever the effective config changes."""

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._value: Any = None

    def set(self, value: Any) -> None:
        with self._lock:
            self._value = value

    def get(self) -> Any:
        with self._lock:
            return self._value


class Registry:
    """Named configs of one process; thread-safe, since handlers read while components set."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._configs: dict[str, Config] = {}

    def new(self, name: str) -> Config:
        with self._lock:
            if name in self._configs:
                raise ConfigzError(f'register config "{name}" twice')
            config = Config(self._lock)
            self._configs[name] = config
            return config

    def delete(self, name: str) -> None:
        with self._lock:
            self._configs.pop(name, None)

    def snapshot(self) -> dict[str, Any]:
        """Every config's current value, by name (sorted), in JSON-able form."""
        with self._lock:
            values = {name: self._configs[name]._value for name in sorted(self._configs)}
        return {name: _jsonable(value) for name, value in values.items()}

    def render(self, redact: Redactor | None = None) -> bytes:
        """The JSON document ``/configz`` serves; ``redact`` rewrites each value before it is shown."""
        data = self.snapshot()
        if redact is not None:
            data = {name: redact(name, value) for name, value in data.items()}
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def _jsonable(value: Any) -> Any:
    """The wire form of a config value; something the config codec cannot encode is shown as its str."""
    try:
        return unstructure(value)
    except TypeError:
        return str(value)


_default = Registry()


def default_registry() -> Registry:
    """The process-wide registry the component's ``/configz`` serves, as upstream's package-level one."""
    return _default


def new(name: str) -> Config:
    """Register ``name`` in the default registry; ``set`` the returned ``Config`` once the config is complete."""
    return _default.new(name)


def delete(name: str) -> None:
    """Remove ``name`` from the default registry, so the name can be registered again."""
    _default.delete(name)


def render(redact: Redactor | None = None) -> bytes:
    """The ``/configz`` body of the default registry: every config as JSON, through ``redact`` if given."""
    return _default.render(redact)
