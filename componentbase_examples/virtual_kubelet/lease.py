"""The node's heartbeat: the Lease ``kube-node-lease/<node>``, renewed every quarter of its duration.

The lease is owned by the Node (an ownerReference), so deleting the node deletes its lease. Renewals
reuse the lease last written, saving a GET per heartbeat; when that fails (someone else wrote it, or it
is gone) the lease is read or created again with a capped backoff. A failing provider ping stops the
renewals: the node then goes stale, as a real kubelet's would.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from componentbase.client import format_micro_time, request
from componentbase.util import Backoff, wait_until
from componentbase_examples.virtual_kubelet import kubeapi
from componentbase_examples.virtual_kubelet.ping import PingMonitor

__all__ = ["NODE_LEASE_NAMESPACE", "NodeLease"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.node")

NODE_LEASE_NAMESPACE = "kube-node-lease"
_LEASES = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
_UPDATE_TRIES = 5


class NodeLease:
    """Keeps one node's Lease fresh while the provider answers pings."""

    def __init__(self, api_client: Any, node_name: str, *, duration: int, renew_interval: float,
                 ping: PingMonitor, node_uid: Callable[[], str | None], retry: Backoff,
                 request_timeout: float = 10.0) -> None:
        if duration <= 0 or not 0 < renew_interval < duration:
            raise ValueError("lease renew interval must be positive and less than the lease duration")
        # Unvalidated: the client's models would rewrite our MicroTime renewTime in their own format.
        self._api_client = api_client
        self.node_name = node_name
        self.duration = duration
        self.renew_interval = renew_interval
        self.ping = ping
        self.node_uid = node_uid
        self.retry = retry
        self.timeout = request_timeout
        self.latest: dict[str, Any] | None = None
        self.renewals = 0

    def _new(self, base: dict[str, Any] | None, uid: str) -> dict[str, Any]:
        lease: dict[str, Any] = dict(base) if base else {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": self.node_name, "namespace": NODE_LEASE_NAMESPACE}}
        meta = dict(lease.get("metadata") or {})
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": self.node_name, "uid": uid}]
        lease["metadata"] = meta
        lease["spec"] = {**(lease.get("spec") or {}), "holderIdentity": self.node_name,
                         "leaseDurationSeconds": self.duration, "renewTime": format_micro_time()}
        return lease

    def run(self, stop: threading.Event) -> None:
        """Renew until ``stop``, from the moment the node exists (the lease names it as its owner)."""
        if not wait_until(lambda: bool(self.node_uid()), stop):
            return
        while True:
            self.sync(stop)
            if stop.wait(self.renew_interval):
                return

    def sync(self, stop: threading.Event) -> None:
        error = self.ping.error(stop)
        if error is not None:
            if not stop.is_set():
                log.error("Ping result is not clean, not updating lease: %s", error)
            return
        uid = self.node_uid()
        if not uid:
            return
        if self.latest is not None and self._update(self.latest, uid, stop):
            return
        lease, created = self._ensure(uid, stop)
        if lease is not None and not created:
            self._update(lease, uid, stop)

    def _ensure(self, uid: str, stop: threading.Event) -> tuple[dict[str, Any] | None, bool]:
        """The lease as the server has it (created if missing), retrying with backoff until ``stop``."""
        backoff = self.retry.copy()
        while not stop.is_set():
            try:
                self.latest = kubeapi.call(self._api_client, "GET", _LEASES + "/{name}",
                                           namespace=NODE_LEASE_NAMESPACE, name=self.node_name, timeout=self.timeout)
                return self.latest, False
            except Exception as err:
                if kubeapi.is_not_found(err):
                    try:
                        resp = request(self._api_client, "POST", _LEASES,
                                       path_params={"namespace": NODE_LEASE_NAMESPACE}, body=self._new(None, uid),
                                       content_type="application/json", timeout=self.timeout)
                        self.latest = kubeapi.body(resp)
                        self.renewals += 1
                        log.debug("Created node lease %s/%s", NODE_LEASE_NAMESPACE, self.node_name)
                        return self.latest, True
                    except Exception as create_err:
                        err = create_err
                log.error("Failed to ensure node lease exists, will retry: %s", kubeapi.describe(err))
                backoff.wait(stop)
        return None, False

    def _update(self, base: dict[str, Any], uid: str, stop: threading.Event) -> bool:
        for _ in range(_UPDATE_TRIES):
            if stop.is_set():
                return False
            try:
                resp = request(self._api_client, "PUT", _LEASES + "/{name}",
                               path_params={"namespace": NODE_LEASE_NAMESPACE, "name": self.node_name},
                               body=self._new(base, uid), content_type="application/json", timeout=self.timeout)
                self.latest = kubeapi.body(resp)
                self.renewals += 1
                return True
            except Exception as err:
                if kubeapi.is_conflict(err) or kubeapi.is_not_found(err):
                    self.latest = None
                    return False  # stale: read (or create) it again
                log.error("Failed to update node lease: %s", kubeapi.describe(err))
        return False

