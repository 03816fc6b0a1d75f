"""A resource lock on a ``coordination.k8s.io/v1`` Lease, spoken through the official client.

Every call is bounded twice: by the client's ``_request_timeout`` and by a worker thread the caller
stops waiting for at the deadline, because a request can outlive its socket timeout (slow drip,
urllib3 retries) and a leader must be able to give up on time. Results of abandoned calls are
dropped, so only the caller's thread ever changes the lock's cached Lease.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from componentbase.client import (
    describe,
    is_already_exists,
    is_conflict,
    is_not_found,
    json_body,
    request,
    status_of,
)
from componentbase.leaderelection._record import (
    LeaderElectionRecord,
    record_from_spec,
    record_to_spec,
)

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

__all__ = [
    "LeaseLock",
    "LockConflict",
    "LockError",
    "LockNotFound",
    "LockTimeout",
    "ResourceLock",
    "call_with_timeout",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Below this the client refuses a timeout (it must be > 0); we treat it as already expired.
_MIN_TIMEOUT = 0.001


class LockError(Exception):
    """A lock operation failed; ``status`` is the HTTP status when the server answered."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LockNotFound(LockError):
    """The Lease does not exist (404)."""


class LockConflict(LockError):
    """Someone else wrote the Lease since we read it (409)."""


class LockTimeout(LockError, TimeoutError):
    """The call did not finish within its budget."""


class ResourceLock(Protocol):
    """What the elector needs from a lock (client-go's ``resourcelock.Interface``, minus events)."""

    def get(self, timeout: float) -> LeaderElectionRecord: ...
    def create(self, record: LeaderElectionRecord, timeout: float) -> None: ...
    def update(self, record: LeaderElectionRecord, timeout: float) -> None: ...
    def describe(self) -> str: ...


def call_with_timeout(fn: Callable[[], T], timeout: float, what: str = "request") -> T:
    """Run ``fn`` in a daemon thread and give up waiting after ``timeout`` seconds."""
    if timeout < _MIN_TIMEOUT:
        raise LockTimeout(f"{what}: no time left")
    done = threading.Event()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name=f"leaselock-{what}", daemon=True).start()
    if not done.wait(timeout):
        raise LockTimeout(f"{what}: timed out after {timeout:.3f}s")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _translate(exc: Exception, what: str) -> LockError:
    """A failed call as a lock error: taken (409 Conflict or AlreadyExists), missing (404), or other."""
    if isinstance(exc, LockError):
        return exc
    status = status_of(exc)
    if status is None:
        return LockError(f"{what}: {describe(exc).summary}")
    reason = f"{what}: {status} {getattr(exc, 'reason', '') or ''}".strip()
    if is_not_found(exc):
        return LockNotFound(reason, status)
    if is_conflict(exc) or is_already_exists(exc):
        return LockConflict(reason, status)
    return LockError(reason, status)


_LEASES = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"


class LeaseLock:
    """A Lease used as a lock: get, create, and update guarded by the resourceVersion last seen."""

    def __init__(
        self,
        namespace: str,
        name: str,
        api_client: ApiClient,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        if not namespace or not name:
            raise ValueError("a LeaseLock needs a namespace and a name")
        self.namespace = namespace
        self.name = name
        self.labels = dict(labels or {})
        self._api_client = api_client
        self._lease: dict[str, Any] | None = None  # the Lease last read or written by us, as the server sent it

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _call(self, what: str, timeout: float, fn: Callable[[float], T]) -> T:
        started = time.monotonic()
        try:
            return call_with_timeout(lambda: fn(max(timeout, _MIN_TIMEOUT)), timeout, what)
        except Exception as exc:
            err = _translate(exc, what)
            if not isinstance(err, LockNotFound | LockConflict):
                elapsed = time.monotonic() - started
                log.debug("%s %s failed after %.3fs: %s", what, self.describe(), elapsed, err)
            raise err from exc

    def _request(self, method: str, timeout: float, body: Any = None, *, named: bool = True) -> Any:
        """One call on the Lease (or, for a create, its collection), its JSON body read back.

        Through ``client.request``: the client's models would re-serialise our MicroTimes as ``+00:00``.
        """
        path = _LEASES + ("/{name}" if named else "")
        return json_body(request(self._api_client, method, path, path_params={"namespace": self.namespace,
                                                                              "name": self.name},
                                 body=body, content_type="application/json" if body is not None else None,
                                 timeout=timeout))

    def get(self, timeout: float) -> LeaderElectionRecord:
        lease = self._call("get", timeout, lambda t: self._request("GET", t))
        self._lease = lease
        return record_from_spec(lease.get("spec"))

    def create(self, record: LeaderElectionRecord, timeout: float) -> None:
        """Write the record as a new Lease: plain JSON, its MicroTimes formatted by us."""
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace,
                             **({"labels": self.labels} if self.labels else {})},
                "spec": record_to_spec(record)}
        self._lease = self._call("create", timeout, lambda t: self._request("POST", t, body, named=False))

    def update(self, record: LeaderElectionRecord, timeout: float) -> None:
        """Replace the Lease last seen: its resourceVersion makes a write by someone else meanwhile a conflict."""
        if self._lease is None:
            raise LockError("lease not initialized, call get or create first")
        meta = dict(self._lease.get("metadata") or {})
        if self.labels:
            meta["labels"] = {**(meta.get("labels") or {}), **self.labels}
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
                "spec": record_to_spec(record)}
        self._lease = self._call("update", timeout, lambda t: self._request("PUT", t, body))
