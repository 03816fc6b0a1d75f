"""``Options``: a group of flags bound to the fields of an attrs class, the base of every option group.

Options compose: a component's options hold sub-options (leader election, logs, feature gates...), and
each one adds its own flag section, validates itself and applies itself to the config, as kube-scheduler's
``Options`` hold ``SecureServing``, ``Authentication`` and ``Deprecated``. Flags can be declared on a field
with :func:`flag`, or installed by hand in :meth:`Options.add_flags` with the ``FlagSet`` methods.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterator
from typing import Any, cast

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.util._duration import Duration

__all__ = ["FlagSpec", "Options", "flag"]

_FLAG = "componentbase.flag"

MISC = "Misc flags"


@attrs.frozen
class FlagSpec:
    """What :func:`flag` records on a field: how the field appears on the command line."""

    name: str
    usage: str
    section: str = MISC
    type: cliflags.FlagType | None = None
    shorthand: str = ""
    deprecated: str = ""
    hidden: bool = False
    type_label: str = ""
    secret: bool = False
    inert: str = ""


def flag(
    name: str,
    usage: str,
    *,
    default: Any = attrs.NOTHING,
    factory: Any = None,
    section: str = MISC,
    type: cliflags.FlagType | None = None,
    shorthand: str = "",
    deprecated: str = "",
    hidden: bool = False,
    type_label: str = "",
    secret: bool = False,
    inert: str = "",
) -> Any:
    """An attrs field bound to ``--name``; its default is the flag's default.

    ``deprecated`` warns on use; with ``hidden`` too the flag leaves help (pflag's MarkDeprecated),
    without it the flag stays in its section marked ``DEPRECATED``. ``secret`` keeps the value out of logs.
    ``inert`` accepts a flag that has no effect in this implementation: the reason is added to its help
    and printed once when the flag is set, so a command line written for the Go component still runs.
    """
    if inert:
        usage = f"{usage} [No effect here: {inert}]"
    spec = FlagSpec(name, usage, section, type, shorthand, deprecated, hidden, type_label, secret, inert)
    converter = Duration if type is cliflags.DURATION else None
    if factory is not None:
        return attrs.field(factory=factory, metadata={_FLAG: spec}, converter=converter)
    return attrs.field(default=default, metadata={_FLAG: spec}, converter=converter)


_TYPES: dict[Any, cliflags.FlagType] = {
    str: cliflags.STRING,
    bool: cliflags.BOOL,
    int: cliflags.INT,
    float: cliflags.FLOAT,
    Duration: cliflags.DURATION,
    list[str]: cliflags.STRINGS,
    dict[str, bool]: cliflags.MAP_STRING_BOOL,
}


@functools.cache
def _type_hints(cls: type) -> dict[str, Any]:
    """``cls``'s resolved annotations, once per class: resolving them evaluates every annotation string, and
    options are built many times a run (each ``Command`` adds every flag; the CLI tests build hundreds)."""
    return typing.get_type_hints(cls)


def _flag_type(cls: type, a: attrs.Attribute) -> cliflags.FlagType:  # type: ignore[type-arg]
    hint = _type_hints(cls).get(a.name, a.type)
    found = _TYPES.get(hint)
    if found is None:
        raise TypeError(f"{cls.__name__}.{a.name}: no flag type for {hint!r}; pass type= to flag()")
    return found


@attrs.define
class Options:
    """The base of every component's options and sub-options (subclasses are attrs classes).

    The defaults walk the fields: ``flag()`` fields become flags, and fields holding other ``Options``
    are sub-options whose ``add_flags``/``complete``/``validate``/``apply_to`` are called in field order.
    """

    def sub_options(self) -> Iterator[Options]:
        for a in attrs.fields(cast(Any, type(self))):
            value = getattr(self, a.name)
            if isinstance(value, Options):
                yield value

    def add_flags(self, fss: cliflags.NamedFlagSets) -> None:
        """Install this option's flags (and its sub-options') into their sections."""
        cls = type(self)
        for a in attrs.fields(cast(Any, cls)):
            spec: FlagSpec | None = a.metadata.get(_FLAG)
            if spec is None:
                continue
            fss.flag_set(spec.section).var(
                spec.name, self, a.name, spec.type or _flag_type(cls, a), spec.usage,
                shorthand=spec.shorthand, deprecated=spec.deprecated, hidden=spec.hidden,
                type_label=spec.type_label, secret=spec.secret, inert=spec.inert,
            )
        for sub in self.sub_options():
            sub.add_flags(fss)

    def complete(self) -> list[Exception]:
        """Fill in what depends on other options or files (``--config``); return what went wrong."""
        errs: list[Exception] = []
        for sub in self.sub_options():
            errs.extend(sub.complete())
        return errs

    def validate(self) -> list[Exception]:
        """Every problem at once, each naming its flag or field."""
        errs: list[Exception] = []
        for sub in self.sub_options():
            errs.extend(sub.validate())
        return errs

    def apply_to(self, config: Any) -> None:
        """Carry these options into ``config``."""
        for sub in self.sub_options():
            sub.apply_to(config)

    def merge_into(self, component_config: Any, *, from_file: bool) -> None:
        """Carry flags into the component config: a loaded ``--config`` file or the defaulted one.

        Deprecated flags apply only when there is no file (``from_file`` false), as in kube-scheduler.
        """
        for sub in self.sub_options():
            sub.merge_into(component_config, from_file=from_file)
