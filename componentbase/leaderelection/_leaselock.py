"""A resource lock on a ``coordination.k8s.io/v1`` Lease, spoken through the official client.

Every call is bounded twice: by the client's ``_request_timeout`` and by a worker thread the caller
stops waiting for at the deadline, because a request can outlive its socket timeout (slow drip,
urllib3 retries) and a leader must be able to give up on time. Results of abandoned calls are
dropped, so only the caller's thread ever changes the lock's cached Lease.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from componentbase.leaderelection._record import (
    LeaderElectionRecord,
    format_micro_time,
    record_from_spec,
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


class _MicroTime(dt.datetime):
    """A datetime the client serialises (via ``isoformat``) as a MicroTime: 6 digits and ``Z``."""

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return format_micro_time(self)


def _micro(t: dt.datetime | None) -> _MicroTime | None:
    if t is None:
        return None
    u = (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
    return _MicroTime(u.year, u.month, u.day, u.hour, u.minute, u.second, u.microsecond, tzinfo=u.tzinfo)


def _translate(exc: Exception, what: str) -> LockError:
    from kubernetes.client.exceptions import ApiException  # slow import (~0.5 s): on first use, never for --help

    if isinstance(exc, LockError):
        return exc
    if isinstance(exc, ApiException):
        status = int(exc.status) if exc.status else None
        reason = f"{what}: {status} {exc.reason or ''}".strip()
        if status == 404:
            return LockNotFound(reason, status)
        if status == 409:
            return LockConflict(reason, status)
        return LockError(reason, status)
    return LockError(f"{what}: {type(exc).__name__}: {exc}")


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
        self._api: Any = None
        self._lease: Any = None  # V1Lease last read or written by us

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _coordination(self) -> Any:
        if self._api is None:
            from kubernetes.client import CoordinationV1Api  # slow import (~0.5 s): on first use, never for --help

            self._api = CoordinationV1Api(self._api_client)
        return self._api

    def _call(self, what: str, timeout: float, fn: Callable[[Any, float], T]) -> T:
        api = self._coordination()
        started = time.monotonic()
        try:
            return call_with_timeout(lambda: fn(api, max(timeout, _MIN_TIMEOUT)), timeout, what)
        except Exception as exc:
            err = _translate(exc, what)
            if not isinstance(err, LockNotFound | LockConflict):
                elapsed = time.monotonic() - started
                log.debug("%s %s failed after %.3fs: %s", what, self.describe(), elapsed, err)
            raise err from exc

    def get(self, timeout: float) -> LeaderElectionRecord:
        lease = self._call(
            "get", timeout,
            lambda api, t: api.read_namespaced_lease(self.name, self.namespace, _request_timeout=t),
        )
        self._lease = lease
        return record_from_spec(lease.spec)

    def create(self, record: LeaderElectionRecord, timeout: float) -> None:
        from kubernetes.client import V1Lease, V1ObjectMeta  # slow import (~0.5 s): on first use, never for --help

        body = V1Lease(
            api_version="coordination.k8s.io/v1",
            kind="Lease",
            metadata=V1ObjectMeta(name=self.name, namespace=self.namespace, labels=self.labels or None),
            spec=self._spec(record),
        )
        self._lease = self._call(
            "create", timeout,
            lambda api, t: api.create_namespaced_lease(self.namespace, body, _request_timeout=t),
        )

    def update(self, record: LeaderElectionRecord, timeout: float) -> None:
        from kubernetes.client import V1Lease  # slow import (~0.5 s): on first use, never for --help

        if self._lease is None:
            raise LockError("lease not initialized, call get or create first")
        meta = self._lease.metadata
        if self.labels:
            meta.labels = {**(meta.labels or {}), **self.labels}
        body = V1Lease(api_version="coordination.k8s.io/v1", kind="Lease", metadata=meta,
                       spec=self._spec(record))
        self._lease = self._call(
            "update", timeout,
            lambda api, t: api.replace_namespaced_lease(self.name, self.namespace, body, _request_timeout=t),
        )

    @staticmethod
    def _spec(record: LeaderElectionRecord) -> Any:
        from kubernetes.client import V1LeaseSpec  # slow import (~0.5 s): on first use, never for --help

        return V1LeaseSpec(
            holder_identity=record.holder_identity,
            lease_duration_seconds=max(1, record.lease_duration_seconds),
            acquire_time=_micro(record.acquire_time),
            renew_time=_micro(record.renew_time),
            lease_transitions=record.leader_transitions,
        )
