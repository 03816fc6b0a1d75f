"""ConversionReview v1 for a CRD's versions, hub and spoke, as controller-runtime's conversion webhook.

One version is the hub (usually the storage version); each other version (a spoke) has one function to the
hub and one from it. An object goes spoke to hub to spoke, so N versions need 2(N-1) functions, not N(N-1).
One path serves every kind (``/convert``, as controller-runtime's): each object is dispatched by its group
and kind. Any failure fails the whole review (kube-apiserver takes all objects or none) with a ``Failure``
result and the message; a review that cannot be read is a 400 with no body, as controller-runtime answers.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["Conversion", "ConversionError", "answer_conversion"]

log = logging.getLogger("componentbase.webhook")

Obj = dict[str, Any]
#: A conversion: the object (the function's own copy) in; the converted object out, or None when changed in place.
Convert = Callable[[Obj], "Obj | None"]

_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")


class ConversionError(Exception):
    """Raise in a conversion function to fail the review with this message."""


class Conversion:
    """The conversions of one kind (``group``, ``kind``) through its ``hub`` version; add spokes with ``spoke``."""

    def __init__(self, group: str, kind: str, hub: str) -> None:
        self.group = group
        self.kind = kind
        self.hub = hub
        self._to_hub: dict[str, Convert] = {}
        self._from_hub: dict[str, Convert] = {}

    def spoke(self, version: str, *, to_hub: Convert, from_hub: Convert) -> Conversion:
        """Convert ``version`` to the hub with ``to_hub``, and the hub to ``version`` with ``from_hub``."""
        if version == self.hub:
            raise ValueError(f"{self.group}/{version} {self.kind} is the hub: it needs no conversion of its own")
        self._to_hub[version] = to_hub
        self._from_hub[version] = from_hub
        return self

    def _step(self, funcs: dict[str, Convert], version: str, obj: Obj, target: str) -> Obj:
        func = funcs.get(version)
        if func is None:
            raise ConversionError(f"no conversion between {self.group}/{version} and the hub {self.group}/{self.hub} "
                                  f"for {self.kind}")
        out = func(obj)
        out = obj if out is None else out
        if not isinstance(out, dict):
            raise ConversionError(f"the conversion of {self.kind} to {target} returned {type(out).__name__}, "
                                  "not an object")
        out["apiVersion"] = target
        return out

    def convert(self, obj: Obj, desired: str) -> Obj:
        """``obj`` (a copy of it) in ``desired`` (group/version): through the hub, unless one end is the hub."""
        source = str(obj.get("apiVersion") or "").rpartition("/")[2]
        target = desired.rpartition("/")[2]
        obj = copy.deepcopy(obj)
        if source == target:
            return obj
        hub = f"{self.group}/{self.hub}"
        if source != self.hub:
            obj = self._step(self._to_hub, source, obj, hub)
        if target != self.hub:
            obj = self._step(self._from_hub, target, obj, desired)
        return obj


def _decode(body: bytes) -> tuple[str, Obj]:
    review = json.loads(body)
    if not isinstance(review, dict) or review.get("kind") != "ConversionReview" or \
            review.get("apiVersion") not in _VERSIONS:
        raise ValueError("not a ConversionReview of apiextensions.k8s.io/v1 or v1beta1")
    request = review.get("request")
    if not isinstance(request, dict) or not request.get("uid"):
        raise ValueError("conversion request is nil" if not isinstance(request, dict) else "conversion request has "
                         "no uid")
    if not isinstance(request.get("objects") or [], list) or not isinstance(request.get("desiredAPIVersion"), str):
        raise ValueError("conversion request has no desiredAPIVersion or objects")
    return str(review["apiVersion"]), request


def _convert_all(kinds: dict[tuple[str, str], Conversion], request: Obj) -> list[Obj]:
    desired = request["desiredAPIVersion"]
    desired_group = desired.rpartition("/")[0]
    converted = []
    for obj in request.get("objects") or []:
        if not isinstance(obj, dict):
            raise ConversionError("an object to convert is not a JSON object")
        group = str(obj.get("apiVersion") or "").rpartition("/")[0]
        kind = str(obj.get("kind") or "")
        conversion = kinds.get((group, kind))
        if conversion is None:
            raise ConversionError(f"no conversion is registered for {kind} of group {group!r}")
        if group != desired_group:
            raise ConversionError(f"cannot convert {obj.get('apiVersion')} {kind} to another group ({desired})")
        converted.append(conversion.convert(obj, desired))
    return converted


def answer_conversion(body: bytes, kinds: dict[tuple[str, str], Conversion], path: str) -> tuple[int, bytes]:
    """(HTTP status, body) answering a ConversionReview: 400 and no body when it cannot be read."""
    try:
        api_version, request = _decode(body)
    except (ValueError, UnicodeDecodeError) as err:
        log.error("webhook %s: failed to read the conversion request: %s", path, err)
        return 400, b""
    try:
        response: Obj = {"convertedObjects": _convert_all(kinds, request), "result": {"status": "Success"}}
    except ConversionError as err:
        log.error("webhook %s: failed to convert (request %s): %s", path, request["uid"], err)
        response = {"convertedObjects": [], "result": {"status": "Failure", "message": str(err)}}
    except Exception as err:
        log.exception("webhook %s: a conversion failed (request %s)", path, request["uid"])
        response = {"convertedObjects": [], "result": {"status": "Failure", "message": f"{type(err).__name__}: {err}"}}
    response["uid"] = request["uid"]
    review = {"apiVersion": api_version, "kind": "ConversionReview", "response": response}
    return 200, json.dumps(review, separators=(",", ":")).encode()
