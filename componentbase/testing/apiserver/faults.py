"""Run-time switchable faults, so reliability tests can make the server slow, flaky or rude."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["FaultRule", "Faults", "rules_from"]


@dataclass(slots=True)
class FaultRule:
    """What to do to matching requests. Empty filters match everything.

    ``stall`` hangs a request up to that many seconds (or until the faults are cleared) before
    serving it; ``drop_rate`` closes the connection without an answer; ``error_rate`` answers with
    ``error_code`` (500 or 429; 429 carries ``Retry-After: retry_after``); ``watch_close_after``
    ends matching watches after that many seconds.
    """

    latency: float = 0.0
    error_rate: float = 0.0
    error_code: int = 500
    retry_after: int = 1
    drop_rate: float = 0.0
    stall: float = 0.0
    watch_close_after: float | None = None
    verbs: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    path_prefix: str = ""

    def matches(self, verb: str, resource: str, path: str) -> bool:
        if self.verbs and verb not in self.verbs:
            return False
        if self.resources and resource not in self.resources:
            return False
        return path.startswith(self.path_prefix)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verbs"] = list(self.verbs)
        d["resources"] = list(self.resources)
        return d


_FIELDS = {f.name for f in fields(FaultRule)}


def rule_from_mapping(data: Mapping[str, Any]) -> FaultRule:
    """Build a rule from JSON-ish input, naming unknown keys instead of ignoring them."""
    unknown = set(data) - _FIELDS - {"verb", "resource", "path"}
    if unknown:
        raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
    kw = {k: v for k, v in data.items() if k in _FIELDS}
    for one, many in (("verb", "verbs"), ("resource", "resources")):
        if one in data:
            kw[many] = (data[one],)
    if "path" in data:
        kw["path_prefix"] = data["path"]
    for many in ("verbs", "resources"):
        if many in kw:
            value = kw[many]
            kw[many] = (value,) if isinstance(value, str) else tuple(value)
    rule = FaultRule(**kw)
    _check(rule)
    return rule


def _check(rule: FaultRule) -> None:
    for name in ("error_rate", "drop_rate"):
        value = getattr(rule, name)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be within [0, 1], got {value}")
    if rule.latency < 0 or rule.stall < 0:
        raise ValueError("latency and stall must not be negative")
    if rule.error_code not in (429, 500, 503):
        raise ValueError(f"error_code must be 429, 500 or 503, got {rule.error_code}")


@dataclass(slots=True)
class Decision:
    """The faults chosen for one request."""

    latency: float = 0.0
    stall: float = 0.0
    drop: bool = False
    error_code: int = 0
    retry_after: int = 1
    watch_close_after: float | None = None


@dataclass
class Faults:
    """The server's fault switchboard; ``set`` replaces the rules, ``add`` appends one."""

    seed: int | None = None
    _rules: list[FaultRule] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _cleared: threading.Event = field(default_factory=threading.Event)
    _random: random.Random = field(default_factory=random.Random)
    _watch_epoch: int = 0
    _on_watch_close: list[Callable[[], None]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._random.seed(self.seed)

    def set(self, **kw: Any) -> FaultRule:
        rule = rule_from_mapping(kw)
        self.replace([rule])
        return rule

    def add(self, **kw: Any) -> FaultRule:
        rule = rule_from_mapping(kw)
        with self._lock:
            self._rules.append(rule)
        return rule

    def replace(self, rules: Iterable[FaultRule]) -> None:
        with self._lock:
            self._rules = list(rules)
            self._release_stalled()

    def clear(self) -> None:
        """Remove every rule and release requests stalled right now."""
        self.replace([])

    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def close_watches(self) -> None:
        """End every watch open right now (they finish cleanly, as on a kube watch timeout)."""
        with self._lock:
            self._watch_epoch += 1
            hooks = list(self._on_watch_close)
        for hook in hooks:
            hook()

    @property
    def watch_epoch(self) -> int:
        return self._watch_epoch

    def on_watch_close(self, hook: Callable[[], None]) -> None:
        self._on_watch_close.append(hook)

    def stall_event(self) -> threading.Event:
        return self._cleared

    def _release_stalled(self) -> None:
        self._cleared.set()
        self._cleared = threading.Event()

    def decide(self, verb: str, resource: str, path: str) -> Decision | None:
        """Pick this request's faults; None (the common case) when no rule matches."""
        if not self._rules:
            return None
        with self._lock:
            matching = [r for r in self._rules if r.matches(verb, resource, path)]
            if not matching:
                return None
            d = Decision()
            for r in matching:
                d.latency = max(d.latency, r.latency)
                d.stall = max(d.stall, r.stall)
                if r.watch_close_after is not None:
                    d.watch_close_after = min(d.watch_close_after or r.watch_close_after, r.watch_close_after)
                if not d.drop and r.drop_rate and self._random.random() < r.drop_rate:
                    d.drop = True
                if not d.error_code and r.error_rate and self._random.random() < r.error_rate:
                    d.error_code, d.retry_after = r.error_code, r.retry_after
            for name, hit in (("drop", d.drop), ("error", bool(d.error_code)), ("stall", d.stall > 0)):
                if hit:
                    self.counts[name] = self.counts.get(name, 0) + 1
            return d


def rules_from(doc: Any) -> list[FaultRule]:
    """Rules as the control endpoint takes them: one rule, a list of rules, or {"rules": [...]}."""
    if isinstance(doc, dict) and "rules" in doc:
        doc = doc["rules"]
    items = doc if isinstance(doc, list) else [doc]
    try:
        return [rule_from_mapping(item) for item in items if isinstance(item, dict)]
    except (TypeError, ValueError) as err:
        raise ValueError(f"bad fault rule: {err}") from None

