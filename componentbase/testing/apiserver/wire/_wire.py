"""What the verb handlers take and give back, and the JSON decoding whose errors kube reports as 400s.

Kept apart from ``rest`` so the option parsing, listing and review modules can share them without
importing the verb handlers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Resource
from ..apimachinery.user import User
from ._json import loads

__all__ = ["Options", "Reply", "Request", "decode_json", "decode_object", "now_rfc3339"]


_formatted: list[tuple[int, str]] = [(-1, "")]  # the last second formatted: every write stamps one or two times


def now_rfc3339(offset: float = 0.0) -> str:
    second = int(time.time() + offset)
    last = _formatted[0]
    if last[0] == second:
        return last[1]
    text = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
    _formatted[0] = (second, text)
    return text


def decode_json(body: bytes) -> Any:
    try:
        return loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise ApiError.bad_request(f"couldn't get version/kind; json parse error: {err}") from None


def decode_object(body: bytes) -> dict[str, Any]:
    obj = decode_json(body)
    if not isinstance(obj, dict):
        raise ApiError.bad_request("the body of the request must be a JSON object")
    return obj


@dataclass(frozen=True, slots=True)
class Options:
    """A write's options as kube-apiserver decoded them (see ``_options``); reads have the defaults."""

    dry_run: bool = False
    grace: int | None = None  # DeleteOptions.gracePeriodSeconds
    preconditions: dict[str, Any] | None = None  # DeleteOptions.preconditions
    propagation: str | None = None  # DeleteOptions.propagationPolicy, or what orphanDependents means
    orphan_dependents: bool | None = None  # the deprecated DeleteOptions.orphanDependents, as given


@dataclass(slots=True)
class Request:
    """One resource request; ``options`` are already decoded and validated, as kube's handlers do
    before they decode the body."""

    verb: str
    res: Resource
    namespace: str = ""
    name: str = ""
    sub: str = ""
    query: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = "application/json"
    options: Options = field(default_factory=Options)
    user_agent: str = ""  # names the field manager of a write without ``fieldManager``
    user: User | None = None  # who asked: admission webhooks see it (``userInfo``)
    warnings: list[str] = field(default_factory=list)  # admission webhooks' warnings, answered as headers


@dataclass(frozen=True, slots=True)
class Reply:
    code: int
    body: bytes
