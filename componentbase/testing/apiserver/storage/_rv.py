"""resourceVersion rules of LIST and WATCH, as kube-apiserver (its watch cache over etcd) keeps them.

- Options are validated first (apimachinery's ValidateListOptions): a 422 naming ``ListOptions``.
- A list is served at the latest state (``resourceVersion`` unset or ``0``), at least at ``N``
  (``NotOlderThan``), or at exactly ``N`` (``Exact``, and the legacy ``N`` with a ``limit``): the store's
  history rewinds to ``N``. ``N`` older than the history is 410 as etcd's compaction answers; ``N`` the
  server has not reached is waited for up to three seconds, then "Too large resource version" (504),
  as the watch cache's waitUntilFreshAndBlock does.
- Continue tokens are kube's (``{"v":"meta.k8s.io/v1","rv":N,"start":key}``) and hold the list's
  resourceVersion, so every page reads the same snapshot. A token older than the history is 410 with
  a token for the rest of the list at the latest state (``rv`` -1), as etcd3's store offers.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from typing import Any

from ..apimachinery.errors import ApiError
from .store import Entry, Store

__all__ = ["TOO_LARGE_WAIT", "ListRead", "decode_continue", "encode_continue", "list_read",
           "refuse_resource_version_on_create", "too_large", "validate_watch_options", "wait_fresh", "watch_start"]

TOO_LARGE_WAIT = 3.0  # the watch cache's blockTimeout
_TOO_LARGE_RETRY = 1  # its resourceVersionTooHighRetrySeconds
_EXPIRED_LIST = "The resourceVersion for the provided list is too old."
_INCONSISTENT = ("The provided continue parameter is too old to display a consistent list result. You can "
                 "start a new list without the continue parameter, or use the continue token in this response "
                 "to retrieve the remainder of the results. Continuing with the provided token results in an "
                 "inconsistent list - objects that were created, modified, or deleted between the time the "
                 "first chunk was returned and now may show up in the list.")
_INVALID_KEY = "continue key is not valid"
_MATCHES = ("Exact", "NotOlderThan")


class _ExpiredContinue(ApiError):
    """410 whose Status carries a continue token in its list metadata, as kube's does."""

    def __init__(self, token: str) -> None:
        super().__init__(410, "Expired", _INCONSISTENT)
        self.token = token

    def status(self) -> dict[str, Any]:
        body = super().status()
        body["metadata"] = {"continue": self.token}
        return body


class ListRead:
    """Where a list reads: ``exact`` (a past resourceVersion) or the latest state; ``start`` is the
    (namespace, name) a continued list resumes after."""

    __slots__ = ("exact", "start")

    def __init__(self, exact: int | None, start: tuple[str, str] | None) -> None:
        self.exact = exact
        self.start = start


def _field(path: str, why: str) -> tuple[str, str, str]:
    return ("FieldValueForbidden", path, f"Forbidden: {why}")


def _not_supported(value: str, supported: tuple[str, ...]) -> tuple[str, str, str]:
    listed = ", ".join(json.dumps(v) for v in supported)
    why = f"Unsupported value: {json.dumps(value)}: supported values: {listed}"
    return ("FieldValueNotSupported", "resourceVersionMatch", why)


def _invalid(causes: list[tuple[str, str, str]]) -> None:
    if causes:
        raise ApiError.invalid_fields("meta.k8s.io", "ListOptions", "", causes)


def parse_rv(value: str) -> int:
    """A query's resourceVersion ("" and "0" read as 0); anything but a number is kube's 400."""
    if value in ("", "0"):
        return 0
    if value.isdigit():
        return int(value)
    why = f'strconv.ParseUint: parsing "{value}": invalid syntax'
    raise ApiError.bad_request(f'invalid resource version: resourceVersion: Invalid value: "{value}": {why}')


def refuse_resource_version_on_create(meta: dict[str, Any]) -> None:
    """kube's storage refuses a create carrying a resourceVersion it reads as set (a number but 0), before
    it looks for the key; its error is no Status, so the client gets a 500 without a reason."""
    value = str(meta.get("resourceVersion") or "")
    if value.isdigit() and int(value) != 0:
        raise ApiError(500, "", "resourceVersion should not be set on objects to be created")


def validate_watch_options(query: dict[str, str]) -> None:
    """validateWatchOptions: sendInitialEvents needs NotOlderThan, which needs sendInitialEvents."""
    match = query.get("resourceVersionMatch", "")
    causes = []
    if "sendInitialEvents" in query and match != "NotOlderThan":
        causes.append(_field("resourceVersionMatch",
                             "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
    if match:
        if "sendInitialEvents" not in query:
            causes.append(_field("resourceVersionMatch",
                                 "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
        if match != "NotOlderThan":
            causes.append(_not_supported(match, ("NotOlderThan",)))
        if query.get("continue"):
            causes.append(_field("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    _invalid(causes)


def watch_start(store: Store, query: dict[str, str]) -> tuple[int | None, bool]:
    """Where a watch starts (None: with an ADDED for every object) and whether it is a streaming
    list (``sendInitialEvents=true``) that ends its initial events with a marked bookmark.

    Without sendInitialEvents, ``resourceVersion`` unset or ``0`` lists first, as kube keeps for
    compatibility; ``sendInitialEvents=false`` starts at ``N`` or now. A streaming list waits for ``N``
    as a list does; a watch from an ``N`` ahead of the server just waits for it, as kube's does.
    """
    validate_watch_options(query)
    want = parse_rv(query.get("resourceVersion", ""))
    send = query.get("sendInitialEvents")
    if send in ("true", "1", "True"):
        wait_fresh(store, want)
        return None, True
    if send is None and not want:
        return None, False
    return want or store.rv, False


def _validate_list_options(query: dict[str, str]) -> None:
    match = query.get("resourceVersionMatch", "")
    rv = query.get("resourceVersion", "")
    causes = []
    if match:
        if not rv:
            causes.append(_field("resourceVersionMatch",
                                 "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if query.get("continue"):
            causes.append(_field("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
        if match not in _MATCHES:
            causes.append(_not_supported(match, (*_MATCHES, "")))
        if match == "Exact" and rv == "0":
            causes.append(_field("resourceVersionMatch",
                                 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if "sendInitialEvents" in query:
        causes.append(_field("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    _invalid(causes)


def list_read(store: Store, query: dict[str, str], with_namespace: bool, limit: int) -> ListRead:
    """Validate a list's options and decide where it reads; waits (without the lock) for a future rv."""
    _validate_list_options(query)
    token = query.get("continue", "")
    rv_param = query.get("resourceVersion", "")
    if token:
        if rv_param not in ("", "0"):
            raise ApiError.bad_request("specifying resource version is not allowed when using continue")
        token_rv, start = decode_continue(token, with_namespace)
        return ListRead(token_rv if token_rv > 0 else None, start)  # -1: the rest at the latest state
    want = parse_rv(rv_param)
    match = query.get("resourceVersionMatch", "")
    if want:
        wait_fresh(store, want)
        if match == "Exact" or (not match and limit):
            return ListRead(want, None)
    return ListRead(None, None)


def snapshot(store: Store, read: ListRead, bucket: str, namespace: str | None,
             with_namespace: bool) -> tuple[list[Entry], int]:
    """The entries and resourceVersion ``read`` asks for; call it holding the store's lock."""
    if read.exact is None:
        return store.items(bucket, namespace), store.rv
    entries = store.items_at(bucket, namespace, read.exact)
    if entries is None:
        if read.start is not None:
            raise _ExpiredContinue(encode_continue(-1, read.start, with_namespace))
        raise ApiError(410, "Expired", _EXPIRED_LIST)
    return entries, read.exact


def too_large(want: int, current: int) -> ApiError:
    """storage.NewTooLargeResourceVersionError: a 504 Timeout with its cause and a Retry-After."""
    details = {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
               "retryAfterSeconds": _TOO_LARGE_RETRY}
    message = f"Timeout: Too large resource version: {want}, current: {current}"
    return ApiError(504, "Timeout", message, details, {"Retry-After": str(_TOO_LARGE_RETRY)})


def wait_fresh(store: Store, want: int, timeout: float = TOO_LARGE_WAIT) -> None:
    """Wait until the store reached ``want``, or raise "Too large resource version" after ``timeout``."""
    deadline = time.monotonic() + timeout
    with store.cond:
        while store.rv < want and not store.closed:
            left = deadline - time.monotonic()
            if left <= 0:
                raise too_large(want, store.rv)
            store.cond.wait(min(left, 0.05))  # writes notify per-resource conditions: poll the counter


def encode_continue(rv: int, key: tuple[str, str], with_namespace: bool) -> str:
    """kube's token; ``start`` is the key after the last one returned, relative to the list's prefix."""
    ns, name = key
    start = f"{ns}/{name}\x00" if with_namespace else f"{name}\x00"
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str, with_namespace: bool) -> tuple[int, tuple[str, str]]:
    """storage.DecodeContinue's checks and messages, as the 400 kube's store gives for them."""
    try:
        data = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        doc = json.loads(data)
    except (ValueError, binascii.Error) as err:
        raise _bad_token(f"{_INVALID_KEY}: {err}") from None
    if not isinstance(doc, dict):
        raise _bad_token(f"{_INVALID_KEY}: not a JSON object")
    if doc.get("v") != "meta.k8s.io/v1":
        raise _bad_token(f"{_INVALID_KEY}: server does not recognize this encoded version {doc.get('v') or ''}")
    rv, start = doc.get("rv"), doc.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0:
        raise _bad_token(f"{_INVALID_KEY}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise _bad_token(f"{_INVALID_KEY}: encoded start key empty (version meta.k8s.io/v1)")
    key = start.rstrip("\x00").lstrip("/")
    parts = key.split("/")
    if any(p in ("", ".", "..") for p in parts) or len(parts) != (2 if with_namespace else 1):
        raise _bad_token(f"{_INVALID_KEY}: {start}")
    return rv, ((parts[0], parts[1]) if len(parts) == 2 else ("", parts[0]))


def _bad_token(why: str) -> ApiError:
    return ApiError.bad_request(f"invalid continue token: {why}")
