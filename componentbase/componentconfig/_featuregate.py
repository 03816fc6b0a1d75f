"""Feature gates, as ``k8s.io/component-base/featuregate``: named switches with a maturity stage.

A user turns features on and off with ``--feature-gates=A=true,B=false`` the same way in every
component; alpha features start off, beta ones on, and GA or deprecated ones are on their way out of
the flag. ``AllAlpha`` and ``AllBeta`` flip every alpha or beta feature not set by name.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Mapping

import attrs

from componentbase.util.field import AggregateError

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "FeatureGate",
    "FeatureGateError",
    "FeatureSpec",
    "Stage",
    "UnknownFeatureError",
]

ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"

_log = logging.getLogger(__name__)

# strconv.ParseBool's spellings: a flag accepted by a Go component is accepted here.
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


class Stage(enum.Enum):
    """A feature's maturity; it decides the default, and whether ``AllAlpha``/``AllBeta`` set it."""

    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = "GA"
    DEPRECATED = "DEPRECATED"

    def __str__(self) -> str:
        return self.value


@attrs.frozen
class FeatureSpec:
    """A known feature: its default, its stage, and whether it is locked to its default (users may not change it)."""

    default: bool
    stage: Stage
    locked_to_default: bool = False


class FeatureGateError(AggregateError, ValueError):
    """Every problem with a ``--feature-gates`` value or an ``add``, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__([ValueError(p) for p in problems])


class UnknownFeatureError(KeyError):
    """A feature the code asks about was never added: a bug in the component, not in its flags."""

    def __str__(self) -> str:
        return str(self.args[0])


_SPECIAL = {ALL_ALPHA: Stage.ALPHA, ALL_BETA: Stage.BETA}


class FeatureGate:
    """Known features and the values set for them; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known = {name: FeatureSpec(False, stage) for name, stage in _SPECIAL.items()}
        self._set: dict[str, bool] = {}
        self._closed = False

    def add(self, specs: Mapping[str, FeatureSpec]) -> None:
        """Add features; the same spec twice is fine (shared libraries add theirs), a different one is not."""
        with self._lock:
            if self._closed:
                raise FeatureGateError(["cannot add a feature gate after adding it to the flag set"])
            problems = [
                f'feature gate "{name}" with different spec already exists: {self._known[name]}'
                for name, spec in specs.items()
                if name in self._known and self._known[name] != spec
            ]
            if problems:
                raise FeatureGateError(problems)
            self._known.update(specs)

    def close(self) -> None:
        """No more ``add``: the flag's help text has been written from the known features."""
        with self._lock:
            self._closed = True

    def set(self, text: str) -> None:
        """Apply ``A=true,B=false``; nothing changes unless every entry is valid."""
        entries: list[tuple[str, bool | str]] = []
        for item in text.split(","):
            if not item.strip():
                continue
            name, sep, raw = item.partition("=")
            name, raw = name.strip(), raw.strip()
            if not sep:
                entries.append((name, f"missing bool value for {name}"))
            elif raw in _TRUE or raw in _FALSE:
                entries.append((name, raw in _TRUE))
            else:
                entries.append((name, f"invalid value of {name}={raw}, err: must be true or false"))
        self._apply(entries)

    def set_from_map(self, values: Mapping[str, bool]) -> None:
        """Apply a ``featureGates`` map from a config file; nothing changes unless every entry is valid."""
        self._apply(list(values.items()))

    def _apply(self, entries: list[tuple[str, bool | str]]) -> None:
        """Entries are a name with its value, or with the parse problem it had; problems keep input order."""
        values: dict[str, bool] = {}
        problems: list[str] = []
        warnings: list[str] = []
        with self._lock:
            for name, value in entries:
                problem = value if isinstance(value, str) else self._problem(name, value)
                if problem or isinstance(value, str):
                    problems.append(problem)
                    continue
                values[name] = value
                stage = self._known[name].stage
                if stage in (Stage.GA, Stage.DEPRECATED):
                    label = "GA" if stage is Stage.GA else "deprecated"
                    warnings.append(f"Setting {label} feature gate {name}={_go_bool(value)}. "
                                    "It will be removed in a future release.")
            if problems:
                raise FeatureGateError(problems)
            self._set.update(values)
        for warning in warnings:
            _log.warning(warning)

    def _problem(self, name: str, value: bool) -> str:
        spec = self._known.get(name)
        if spec is None:
            return f"unrecognized feature gate: {name}"
        if spec.locked_to_default and value != spec.default:
            return (f"cannot set feature gate {name} to {_go_bool(value)}, "
                    f"feature is locked to {_go_bool(spec.default)}")
        return ""

    def enabled(self, name: str) -> bool:
        with self._lock:
            return self._enabled(name)

    def _enabled(self, name: str) -> bool:
        spec = self._known.get(name)
        if spec is None:
            raise UnknownFeatureError(f'feature "{name}" is not registered in the feature gate')
        if spec.locked_to_default:
            return spec.default
        if name in self._set:
            return self._set[name]
        for special, stage in _SPECIAL.items():
            if spec.stage is stage and special in self._set and name not in _SPECIAL:
                return self._set[special]
        return spec.default

    def known_features(self) -> list[str]:
        """Help text lines for the flag; GA and deprecated features are hidden, as upstream hides them."""
        with self._lock:
            return sorted(
                f"{name}=true|false ({spec.stage} - default={_go_bool(spec.default)})"
                for name, spec in self._known.items()
                if spec.stage not in (Stage.GA, Stage.DEPRECATED)
            )

    def specs(self) -> dict[str, FeatureSpec]:
        """Every known feature's spec, ``AllAlpha`` and ``AllBeta`` included."""
        with self._lock:
            return dict(self._known)

    def to_map(self) -> dict[str, bool]:
        """What was set, with the features ``AllAlpha``/``AllBeta`` switched spelled out (upstream's view)."""
        with self._lock:
            names = set(self._set)
            for special, stage in _SPECIAL.items():
                if special in self._set:
                    names.update(n for n, s in self._known.items() if s.stage is stage and n not in _SPECIAL)
            return {n: self._set[n] if n in _SPECIAL else self._enabled(n) for n in sorted(names)}

    def enabled_features(self) -> list[str]:
        """Names of every feature that is on now, sorted (``AllAlpha``/``AllBeta`` are not features)."""
        with self._lock:
            return sorted(n for n in self._known if n not in _SPECIAL and self._enabled(n))

    def deep_copy(self) -> FeatureGate:
        """An independent gate with the same features and values, to try changes on."""
        copy = FeatureGate()
        with self._lock:
            copy._known = dict(self._known)
            copy._set = dict(self._set)
            copy._closed = self._closed
        return copy

    def __str__(self) -> str:
        """``A=true,B=false``, sorted: what the flag prints as its value."""
        return ",".join(f"{name}={_go_bool(value)}" for name, value in self.to_map().items())


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
