"""``NodeController``: registers the node (or takes it over) and keeps its status fresh.

As upstream's: the node is created if missing, else our labels and taint are written onto it; its
status is written every ``status_interval`` and whenever the provider reports a change; nothing is
heartbeated while the provider's ping fails. It is a ``Controller`` of one key, the node's name: the
provider's notifications and the ping's changes enqueue it, ``Result(requeue_after=...)`` is the
heartbeat, and a failed write is retried with the key's backoff. The ping and the Lease
(``ping``, ``lease``) are runnables of their own. Unlike upstream, a clean stop marks the node
NotReady at once, so nothing waits 40s to learn it is gone.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable
from typing import Any

from componentbase.client import DEFAULT_RETRY
from componentbase.controller import Controller, Request, Result
from componentbase.tracing import span
from componentbase.util import retry_on_error
from componentbase.workqueue import ItemExponentialFailureRateLimiter
from componentbase_examples.virtual_kubelet import kubeapi, nodespec
from componentbase_examples.virtual_kubelet.lease import NodeLease
from componentbase_examples.virtual_kubelet.ping import PingMonitor
from componentbase_examples.virtual_kubelet.provider import Provider
from componentbase_examples.virtual_kubelet.timings import Timings

__all__ = ["NodeController", "NodeSyncFailed"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.node")

Node = dict[str, Any]


class NodeSyncFailed(Exception):
    """A registration or status write failed; one line saying which and why (the controller retries it)."""


_NODE = "/api/v1/nodes/{name}"


class NodeController:
    """One node: ``run(stop)`` registers it and heartbeats until ``stop``; ``registered`` once it exists.

    ``api_client`` writes while running (the manager's fenced client); ``stop_client`` writes the
    NotReady of a clean stop, which comes after leadership was given up but before the lease is released.
    """

    def __init__(self, api_client: Any, provider: Provider, node: Node, timings: Timings, *,
                 stop_client: Any = None, metrics: Any = None) -> None:
        self.api: Any = api_client
        self.stop_api: Any = stop_client if stop_client is not None else api_client
        self.provider = provider
        self.node = node  # what we want the node to be; the status loop owns it once running
        self.name = str(node["metadata"]["name"])
        self.timings = timings
        self.ping = PingMonitor(provider, timings.ping_interval, timings.ping_timeout)
        self.lease = NodeLease(api_client, self.name, duration=timings.lease_duration,
                               renew_interval=timings.renew_interval, ping=self.ping, node_uid=self._uid,
                               retry=timings.retry_backoff(), request_timeout=timings.request_timeout)
        self.registered = threading.Event()
        self.status_updates = 0
        self._lock = threading.Lock()
        self._server_node: Node | None = None
        self._key = Request("", self.name)
        limiter = ItemExponentialFailureRateLimiter(min(2 * timings.retry_initial, timings.retry_max),
                                                    timings.retry_max)
        self.controller = Controller("node", self._reconcile, rate_limiter=limiter, metrics=metrics)
        self.controller.watch_source(self._start)
        self.ping.on_change = self._changed

    # --- what others call -----------------------------------------------------------------------

    def _uid(self) -> str | None:
        with self._lock:
            uid = (self._server_node or {}).get("metadata", {}).get("uid")
        return str(uid) if uid else None

    def server_node(self) -> Node | None:
        with self._lock:
            return copy.deepcopy(self._server_node)

    def set_ready(self, ready: bool, reason: str, message: str) -> None:
        with self._lock:
            nodespec.set_ready(self.node, ready, reason, message)
        self._changed()

    def watch_node(self, informer: Any) -> None:
        """Our Node deleted (by someone, or gone with the history of an API server restored behind the same
        address, which the informer's relist shows): register it again now, not at the next heartbeat."""
        informer.add_event_handler(on_delete=lambda _obj: self._changed())

    def _changed(self) -> None:
        self.controller.enqueue(self._key)

    def _provider_changed(self, node: Node) -> None:
        """The provider's notify callback: take its status, labels and annotations (as upstream)."""
        with self._lock:
            meta = self.node.setdefault("metadata", {})
            theirs = node.get("metadata") or {}
            for key in ("labels", "annotations"):
                if key in theirs:
                    meta[key] = copy.deepcopy(theirs[key])
            if "status" in node:
                self.node["status"] = copy.deepcopy(node["status"])
        self._changed()

    # --- running --------------------------------------------------------------------------------

    def run(self, stop: threading.Event, clean_stop: Callable[[], bool] = lambda: True) -> None:
        """Register and heartbeat until ``stop``; then mark the node NotReady if ``clean_stop()`` (a stop
        asked for, not leadership lost: the node is someone else's then)."""
        self.controller.run(stop)
        if self.registered.is_set() and clean_stop():
            self.mark_not_ready()

    def _start(self, enqueue: Callable[[Request], bool]) -> None:
        if self.provider.implements("notify_node_status"):
            self.provider.notify_node_status(self._provider_changed)
        enqueue(self._key)

    def _reconcile(self, _req: Request) -> Result:
        heartbeat = Result(requeue_after=self.timings.status_interval)
        if not self.registered.is_set():
            try:
                self._ensure_node()
                self._write_status()
            except Exception as err:
                raise NodeSyncFailed(f"registering node {self.name}: {kubeapi.describe(err)}") from err
            log.info("Node %s registered", self.name)
            self.registered.set()
            return heartbeat
        if not self.ping.pinged():
            return heartbeat  # its first answer enqueues the node again
        error = self.ping.last_error()
        if error is not None:
            log.error("Not updating node status because node ping failed: %s", error)
            return heartbeat
        try:
            self._write_status()
        except Exception as err:
            raise NodeSyncFailed(f"updating the status of node {self.name}: {kubeapi.describe(err)}") from err
        return heartbeat

    def mark_not_ready(self, message: str = "virtual-kubelet is shutting down") -> None:
        """The last status write of a clean stop; one try, bounded by the request timeout."""
        with self._lock:
            nodespec.set_ready(self.node, False, "KubeletNotReady", message)
        try:
            self._write_status(self.stop_api)
            log.info("Node %s marked NotReady", self.name)
        except Exception as err:
            log.warning("Could not mark node %s NotReady: %s", self.name, kubeapi.describe(err))

    # --- API calls ------------------------------------------------------------------------------

    def _read(self, api: Any) -> Node | None:
        try:
            return kubeapi.call(api, "GET", _NODE, name=self.name, timeout=self.timings.request_timeout)
        except Exception as err:
            if kubeapi.is_not_found(err):
                return None
            raise

    def _remember(self, node: Node) -> None:
        with self._lock:
            self._server_node = node

    def _ensure_node(self, api: Any = None) -> None:
        """Create the node, or take over the one there: our labels and our taint on it.

        Read again and retried while someone else creates or changes the node under us (client-go's
        ``RetryOnConflict``): a node created meanwhile is taken over.
        """
        retry_on_error(DEFAULT_RETRY, lambda err: kubeapi.is_conflict(err) or kubeapi.is_already_exists(err),
                       lambda: self._ensure_node_once(api or self.api))

    def _ensure_node_once(self, api: Any) -> None:
        t = self.timings.request_timeout
        current = self._read(api)
        with self._lock:
            wanted = copy.deepcopy(self.node)
        if current is None:
            self._remember(kubeapi.call(api, "POST", "/api/v1/nodes", body=wanted, timeout=t))
            return
        merged = _take_over(current, wanted)
        if merged == current:
            self._remember(current)
            return
        self._remember(kubeapi.call(api, "PUT", _NODE, name=self.name, body=merged, timeout=t))
        log.info("Took over existing node %s", self.name)

    def _write_status(self, api: Any = None) -> None:
        """Read the node, put our status on it (keeping conditions others own), write ``/status``.

        On a conflict, read and write again (client-go's ``RetryOnConflict``).
        """
        with span("node.updateStatus", {"node": self.name}):
            retry_on_error(DEFAULT_RETRY, kubeapi.is_conflict, lambda: self._write_status_once(api or self.api))

    def _write_status_once(self, api: Any) -> None:
        current = self._read(api)
        if current is None:  # deleted under us: register again, as the kubelet does
            self._ensure_node(api)
            current = self.server_node() or {}
        with self._lock:
            nodespec.apply_heartbeat(self.node)
            status = copy.deepcopy(self.node.get("status") or {})
        body = dict(current)
        body["status"] = _merge_status(current.get("status") or {}, status)
        self._remember(kubeapi.call(api, "PUT", _NODE + "/status", name=self.name, body=body,
                                    timeout=self.timings.request_timeout))
        self.status_updates += 1


def _take_over(current: Node, wanted: Node) -> Node:
    merged = copy.deepcopy(current)
    meta = merged.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **(wanted["metadata"].get("labels") or {})}
    spec = merged.setdefault("spec", {})
    ours = wanted.get("spec", {}).get("taints") or []
    keys = {t["key"] for t in ours}
    # Our taint replaces one with the same key; taints others put on the node stay.
    others = [t for t in spec.get("taints") or () if t.get("key") not in keys]
    spec["taints"] = others + ours
    if not spec["taints"]:
        spec.pop("taints")
    return merged


def _merge_status(current: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    merged = dict(ours)
    mine = {c.get("type") for c in ours.get("conditions") or ()}
    foreign = [c for c in current.get("conditions") or () if c.get("type") not in mine]
    merged["conditions"] = list(ours.get("conditions") or ()) + foreign
    return merged
