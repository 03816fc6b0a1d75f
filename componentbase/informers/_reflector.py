"""List, then watch from the list's resourceVersion, forever: client-go's ``Reflector``.

- A watch that ends well (its timeout, or closed by the server after it ran a while) resumes from the
  last resourceVersion seen, bookmarks included, without listing again.
- ``410 Gone`` (as an HTTP status or as an ERROR event in the stream) means the server forgot that
  history: list again; the cache turns the difference into updates and deletes.
- Failures (5xx, 429, refused or dropped connections, malformed answers) back off exponentially with
  jitter, at least as long as a 429's Retry-After, and are logged once per streak of failures.
- Watches carry ``timeoutSeconds`` and a socket read timeout a little longer, or ``inactivity_timeout`` if
  shorter: a watch silent for that long (no event, no bookmark) is presumed dead and opened again.
- A resourceVersion ahead of the server's ("Too large resource version") or one that went backwards (an
  event or bookmark older than what was seen: the server restarted with a fresh sequence) means our
  position means nothing to this server: list again, or the watch would wait for a future that never comes.
- After a watch failed (refused, dropped, ended at once) we list before watching again, as client-go
  relists after a watch that ended in error: the server may have been restored or replaced behind the
  same address, and kube-apiserver holds a watch from a resourceVersion it has not reached open in
  silence. Its resourceVersion cannot tell us: a busy new server passes ours within seconds.
- A list whose resourceVersion is lower than ours replaces the cache all the same (the handlers see what
  was deleted and added, and no change for what did not change), and says so in the log.
- From a failed watch until the relist is in, ``on_stale()`` tells the informer its cache is not known
  to be current.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from componentbase.client import (
    describe,
    is_gone,
    is_resource_expired,
    is_too_large_resource_version,
    status_reason,
)
from componentbase.informers._listwatch import (
    BadResponse,
    ListWatch,
    WatchStream,
)
from componentbase.logs import V
from componentbase.util import Backoff, jitter

__all__ = ["Reflector", "Sink"]

log = logging.getLogger("componentbase.informers")

Obj = dict[str, Any]
_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED"})
#: A watch that ends this soon with nothing received counts as a failure, so it cannot spin.
_SHORT_WATCH = 1.0


class Sink(Protocol):
    """Where a reflector puts what it learns (the informer's cache)."""

    def replace(self, items: list[Obj], resource_version: str) -> None: ...
    def apply(self, events: list[Obj]) -> None:
        """Watch events as the server sent them: ``{"type": "ADDED", "object": {...}}``."""
        ...


class _Gone(Exception):
    """The server no longer has the history we asked for."""


class _Stopped(Exception):
    """Told to stop in the middle of a paged list."""


class Reflector:
    """Keeps a ``Sink`` equal to the server's state of one resource."""

    def __init__(self, list_watch: ListWatch, sink: Sink, *, page_size: int = 500,
                 watch_timeout: float = 300.0, list_timeout: float = 60.0,
                 backoff: Backoff | None = None, inactivity_timeout: float | None = None,
                 on_stale: Callable[[], None] | None = None) -> None:
        self.lw = list_watch
        self._on_stale = on_stale
        self.inactivity_timeout = inactivity_timeout
        self.sink = sink
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.list_timeout = list_timeout
        self.backoff = backoff or Backoff()
        self.failures = 0  # in a row
        self.resource_version = ""
        #: A list must come before the next watch: our position may mean nothing to the server.
        self.stale = False
        self._watch_failing = False
        self.lists = 0  # lists completed
        self.watches = 0  # watches opened
        self._stopped = threading.Event()
        self._stream: WatchStream | None = None
        self._what = list_watch.describe()
        self._streak_logged = False

    def stop(self) -> None:
        """Stop soon, hanging up an open watch."""
        self._stopped.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    def run(self) -> None:
        while not self._stopped.is_set():
            if not self.resource_version or self.stale:
                try:
                    self.resource_version = self._list()
                except _Stopped:
                    return
                except Exception as err:
                    self._failed("list", err)
                    continue
                if not self._watch_failing:  # else lists that work between watches that fail keep backing off
                    self._succeeded()
            self._watch()

    # --- listing -------------------------------------------------------------------------------

    def _list(self) -> str:
        items: list[Obj] = []
        token = ""
        rv = ""
        while True:
            try:
                page = self.lw.list_page(limit=self.page_size, continue_token=token, timeout=self.list_timeout)
            except Exception as err:
                if not token or not _history_gone(err):
                    raise
                log.log(V(2), "list %s: continue token expired, listing everything at once", self._what)
                page = self.lw.list_page(timeout=self.list_timeout)
                items = []
            items.extend(page.items)
            rv = page.resource_version
            token = page.continue_token
            if not token:
                break
            if self._stopped.is_set():
                raise _Stopped
        seen = self.resource_version
        if not self.stale and seen.isdigit() and rv.isdigit() and int(rv) < int(seen):
            log.info("list %s: the server's resourceVersion went backwards (%s after %s): its history was "
                     "restored or replaced; replacing the cache with its state", self._what, rv, seen)
        self.sink.replace(items, rv)
        self.stale = False
        self.lists += 1
        log.log(V(4), "list %s: %d objects at resourceVersion %s", self._what, len(items), rv)
        return rv

    # --- watching ------------------------------------------------------------------------------

    def _watch(self) -> None:
        timeout = int(jitter(self.watch_timeout, 1.0))
        timeout = max(1, timeout)
        started = time.monotonic()
        try:
            read_timeout = timeout + min(30.0, max(1.0, timeout * 0.1))
            if self.inactivity_timeout:
                read_timeout = min(read_timeout, self.inactivity_timeout)
            stream = self.lw.watch(resource_version=self.resource_version, timeout_seconds=timeout,
                                   read_timeout=read_timeout)
        except Exception as err:
            if _history_gone(err):
                self._gone(f"watch {self._what}: {describe(err).summary}")
            else:
                self._watch_failed(err)
            return
        self.watches += 1
        self._stream = stream
        if self._stopped.is_set():
            stream.close()
        received = 0
        try:
            received = self._consume(stream)
        except _Gone as gone:
            self._gone(str(gone))
            return
        except Exception as err:
            if not self._stopped.is_set():
                self._watch_failed(err)
            return
        finally:
            self._stream = None
            stream.release()
        if self._stopped.is_set():
            return
        lasted = time.monotonic() - started
        if received == 0 and lasted < _SHORT_WATCH:
            self._watch_failed(BadResponse(f"very short watch: ended after {lasted:.3f}s with no events"))
            return
        log.log(V(5), "watch %s ended after %.1fs, %d events; resuming at %s", self._what, lasted, received,
                self.resource_version)
        self._watch_failing = False
        self._succeeded()

    def _consume(self, stream: WatchStream) -> int:
        """Apply the stream's events to the sink; returns how many arrived (bookmarks too)."""
        received = 0
        for batch in stream:
            received += len(batch)
            if all(ev.get("type") in _EVENT_TYPES for ev in batch):
                try:
                    rv = batch[-1]["object"]["metadata"]["resourceVersion"]
                    first = batch[0]["object"]["metadata"]["resourceVersion"]
                except (KeyError, TypeError, AttributeError):
                    pass  # something is malformed: the careful path below says what
                else:
                    self._check_forward(first)
                    self.sink.apply(batch)
                    self.resource_version = rv
                    continue
            self._consume_carefully(batch)
        return received

    def _consume_carefully(self, batch: list[Obj]) -> None:
        """One event at a time: bookmarks, ERROR events, and what is wrong with a malformed one."""
        events: list[Obj] = []
        rv = self.resource_version
        try:
            for ev in batch:
                kind, obj = ev.get("type"), ev.get("object")
                if kind == "ERROR":
                    self._stream_error(obj)
                meta = obj.get("metadata") if isinstance(obj, dict) else None
                if not isinstance(meta, dict) or (kind != "BOOKMARK" and not meta.get("name")):
                    raise BadResponse(f"watch: {kind} event without metadata")
                if kind == "BOOKMARK":
                    self._check_forward(meta.get("resourceVersion") or rv)
                    rv = meta.get("resourceVersion") or rv
                    continue
                if kind not in _EVENT_TYPES:
                    raise BadResponse(f"watch: unknown event type {kind!r}")
                events.append(ev)
                rv = meta.get("resourceVersion") or rv
        finally:
            if events:
                self.sink.apply(events)
            self.resource_version = rv

    def _check_forward(self, rv: Any) -> None:
        """A server's resourceVersions only grow; one lower than ours means a new server, so relist.

        They are opaque strings to clients, so only two integers are compared (kube-apiserver's are).
        """
        seen, got = self.resource_version, str(rv)
        if seen.isdigit() and got.isdigit() and int(got) < int(seen):
            raise _Gone(f"watch {self._what}: the server's resourceVersion went backwards ({got} after {seen})")

    def _stream_error(self, obj: Any) -> None:
        status = obj if isinstance(obj, dict) else {}
        if _history_gone(status):
            raise _Gone(f"watch {self._what}: {status_reason(status)}")
        raise BadResponse(f"watch: error event: {status_reason(status)}")

    # --- outcomes ------------------------------------------------------------------------------

    def _gone(self, why: str) -> None:
        """Relist at once: our position means nothing to the server, which is fine."""
        log.info("%s; relisting", why)
        self._mark_stale()

    def _watch_failed(self, err: BaseException) -> None:
        """Back off, then list before watching again (see the module's docstring); a 429 only slows us."""
        if describe(err).status != 429:
            self._mark_stale()
        self._watch_failing = True
        self._failed("watch", err)

    def _mark_stale(self) -> None:
        self.stale = True
        if self._on_stale is not None:
            self._on_stale()

    def _failed(self, what: str, err: BaseException) -> None:
        if self._stopped.is_set():
            return
        failure = describe(err)
        self.failures += 1
        delay = max(self.backoff.step(), failure.retry_after or 0.0)
        if not self._streak_logged:
            self._streak_logged = True
            log.warning("%s %s failed: %s; retrying in %.1fs (further failures logged at -v=4)",
                        what, self._what, failure.summary, delay)
        else:
            log.log(V(4), "%s %s failed again (%d in a row): %s; retrying in %.1fs", what, self._what,
                    self.failures, failure.summary, delay)
        self.backoff.clock.wait(self._stopped, delay)

    def _succeeded(self) -> None:
        if self._streak_logged:
            log.info("%s: recovered after %d failures", self._what, self.failures)
            self._streak_logged = False
        self.failures = 0
        self.backoff.reset()


def _history_gone(err: BaseException | dict[str, Any]) -> bool:
    """Our position means nothing to the server: 410, the resourceVersion or continue token is older than its
    history (client-go checks both), or the resourceVersion is ahead of it ("Too large resource version")."""
    return is_resource_expired(err) or is_gone(err) or is_too_large_resource_version(err)
