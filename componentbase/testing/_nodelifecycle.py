"""``NodeLifecycle``: what kube-controller-manager's node lifecycle controller does when a kubelet goes quiet.

envtest runs no controller manager, and the loopback server, like it, runs none by default: a node whose
kubelet died stays Ready for ever. Tests of kubelets (the example virtual kubelet's) start this beside the
server to see what a cluster would show, through the server's HTTP API as the real controller does:

- a node whose heartbeat (its Lease's ``renewTime`` or its Ready condition's ``lastHeartbeatTime``) has not
  moved for ``grace_period`` seconds (upstream ``--node-monitor-grace-period``) gets Ready, MemoryPressure,
  DiskPressure and PIDPressure ``Unknown`` with reason ``NodeStatusUnknown`` ("Kubelet stopped posting node
  status."), or ``NodeStatusNeverUpdated`` for a condition never posted;
- a node not Ready (Unknown, or False as its kubelet said) gets the ``node.kubernetes.io/unreachable`` (or
  ``not-ready``) taints, NoSchedule and NoExecute, removed once it is Ready again;
- when a node stops being Ready, its pods' Ready condition becomes False (upstream ``MarkPodsNotReady``);
  setting it back is the kubelet's work, as on a cluster.

Heartbeats are judged by when this controller saw them change, not by the kubelet's clock, as upstream does.
Taint-based eviction (deleting pods after their NoExecute tolerations) is not done.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from types import TracebackType
from typing import Any

from componentbase.util import REAL_CLOCK, Clock

from .apiserver import LoopbackAPIServer

__all__ = ["NodeLifecycle"]

_MONITORED = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
_TAINT_KEYS = {"Unknown": "node.kubernetes.io/unreachable", "False": "node.kubernetes.io/not-ready"}


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == kind), None)


class NodeLifecycle:
    """Watches every node's heartbeat every ``monitor_period`` seconds; ``start``/``stop`` or ``with``."""

    def __init__(self, server: LoopbackAPIServer, *, grace_period: float = 40.0, monitor_period: float = 5.0,
                 clock: Clock = REAL_CLOCK) -> None:
        self.server = server
        self.clock = clock
        self.grace_period = grace_period
        self.monitor_period = monitor_period
        self._seen: dict[str, tuple[Any, float]] = {}  # node -> (heartbeat, when this controller saw it change)
        self._marked: set[str] = set()  # nodes whose pods were marked not ready since they stopped being Ready
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> NodeLifecycle:
        self._thread = threading.Thread(target=self._loop, name="node-lifecycle", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> NodeLifecycle:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.sync()
            except (OSError, ValueError):
                pass  # the server stopped or answered oddly: the next pass tries again
            self._stop.wait(self.monitor_period)

    # --- one pass -------------------------------------------------------------------------------

    def sync(self) -> None:
        """Look at every node once, and act on what changed."""
        for node in self._call("GET", "/api/v1/nodes")["items"]:
            name = node["metadata"]["name"]
            lease = self._call("GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}")
            ready = _condition(node, "Ready") or {}
            beat = (ready.get("lastHeartbeatTime"), ((lease or {}).get("spec") or {}).get("renewTime"))
            seen = self._seen.get(name)
            if seen is None or seen[0] != beat:
                self._seen[name] = seen = (beat, self.clock.monotonic())
            if self.clock.monotonic() - seen[1] > self.grace_period and ready.get("status") != "Unknown":
                node = self._mark_unknown(node) or node
            status = (_condition(node, "Ready") or {}).get("status", "Unknown")
            self._taint(node, status)
            if status == "True":
                self._marked.discard(name)
            elif name not in self._marked:
                self._mark_pods_not_ready(name)
                self._marked.add(name)

    def _mark_unknown(self, node: dict[str, Any]) -> dict[str, Any] | None:
        now = _now()
        conditions = node.setdefault("status", {}).setdefault("conditions", [])
        for kind in _MONITORED:
            cond = _condition(node, kind)
            if cond is None:
                conditions.append({"type": kind, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                                   "message": "Kubelet never posted node status.", "lastTransitionTime": now,
                                   "lastHeartbeatTime": node["metadata"].get("creationTimestamp")})
            elif cond.get("status") != "Unknown":
                cond.update(status="Unknown", reason="NodeStatusUnknown",
                            message="Kubelet stopped posting node status.", lastTransitionTime=now)
        updated: dict[str, Any] | None = self._call("PUT", f"/api/v1/nodes/{node['metadata']['name']}/status", node)
        return updated

    def _taint(self, node: dict[str, Any], ready: str) -> None:
        """The taints for ``ready`` added, the others of ours removed; everyone else's kept where they are."""
        existing = list((node.get("spec") or {}).get("taints") or ())
        key = _TAINT_KEYS.get(ready)
        taints = [t for t in existing if t.get("key") not in _TAINT_KEYS.values() or t.get("key") == key]
        if key is not None:
            have = {t.get("effect") for t in taints if t.get("key") == key}
            taints += [t for t in ({"key": key, "effect": "NoSchedule"},
                                   {"key": key, "effect": "NoExecute", "timeAdded": _now()}) if t["effect"] not in have]
        if taints != existing:
            node.setdefault("spec", {})["taints"] = taints
            self._call("PUT", f"/api/v1/nodes/{node['metadata']['name']}", node)

    def _mark_pods_not_ready(self, node_name: str) -> None:
        selector = urllib.parse.quote(f"spec.nodeName={node_name}")
        for pod in self._call("GET", f"/api/v1/pods?fieldSelector={selector}")["items"]:
            cond = _condition(pod, "Ready")
            if cond is None or cond.get("status") == "False":
                continue
            cond.update(status="False", lastTransitionTime=_now())
            meta = pod["metadata"]
            self._call("PUT", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status", pod)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """The answer's JSON; None for 404 and 409 (gone, or changed meanwhile: the next pass sees it anew)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.server.token:
            headers["Authorization"] = f"Bearer {self.server.token}"
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server.url + path, data=data, method=method, headers=headers)
        try:
            context = self.server.ssl_context() if self.server.url.startswith("https:") else None
            with urllib.request.urlopen(req, timeout=10, context=context) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as err:
            if err.code in (404, 409):
                return None
            raise
