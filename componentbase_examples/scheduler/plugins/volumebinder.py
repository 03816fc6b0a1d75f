"""VolumeBinding's memory and side effects, kube's ``volumeBinder``: the PVs and PVCs it assumed at Reserve,
the API updates at PreBind, and the wait for the PV controller (or a provisioner) to finish the binding.

An assumed object (a PV given a ``claimRef``, a PVC given the ``selected-node`` annotation) hides the
informer's copy until the informer shows another resourceVersion than the one it was assumed over, as
kube's ``AssumeCache``: the next cycles do not pick the same PV for another claim while the update is in
flight, and once the informer sees the update (or someone else's) the real object counts again.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Mapping
from typing import Any

import attrs

import componentbase
from componentbase.util import wait_until
from componentbase_examples.scheduler.binder import _message
from componentbase_examples.scheduler.plugins.volumes import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    PluginError,
    Store,
    is_fully_bound,
    pv_matches_node,
)
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["AssumeCache", "PodVolumes", "VolumeAPI", "bind_volume_to_claim", "check_bindings", "wait_for_bindings"]

Obj = dict[str, Any]


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta.get("name", ""))


def _rv(obj: Mapping[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


class AssumeCache:
    """An informer's objects with this scheduler's assumed versions on top (see the module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._assumed: dict[str, tuple[Obj, str]] = {}  # key -> (assumed object, the informer's rv under it)

    def get(self, key: str) -> Obj | None:
        api = self.store.get(key)
        with self._lock:
            entry = self._assumed.get(key)
            if entry is None:
                return api
            if api is not None and _rv(api) == entry[1]:
                return entry[0]
            del self._assumed[key]  # the informer moved on: its object is the truth again
            return api

    def list(self) -> list[Obj]:
        with self._lock:
            if not self._assumed:
                return self.store.list()
        found = [self.get(_key(obj)) for obj in self.store.list()]
        return [obj for obj in found if obj is not None]

    def assume(self, obj: Obj) -> None:
        key = _key(obj)
        base = self.store.get(key)
        with self._lock:
            self._assumed[key] = (obj, _rv(base))

    def restore(self, key: str) -> None:
        with self._lock:
            self._assumed.pop(key, None)


@attrs.define
class PodVolumes:
    """What a node needs done for a pod's unbound claims: PVs to bind them to, claims to provision."""

    static_bindings: list[tuple[Obj, Obj]] = attrs.field(factory=list)  # (pv, pvc)
    provisions: list[Obj] = attrs.field(factory=list)  # claims


def bind_volume_to_claim(pv: Obj, pvc: Obj) -> Obj:
    """kube's ``GetBindVolumeToClaim``: the PV with its ``claimRef`` pointing at the claim."""
    new = copy.deepcopy(pv)
    meta = pvc.get("metadata") or {}
    spec = new.setdefault("spec", {})
    ref = spec.get("claimRef") or {}
    if ref.get("name") == meta.get("name") and ref.get("namespace") == meta.get("namespace") and \
            ref.get("uid") == meta.get("uid"):
        return new
    if not ref:
        annotations = new.setdefault("metadata", {}).setdefault("annotations", {}) or {}
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        new["metadata"]["annotations"] = annotations
    spec["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": meta.get("namespace"),
                        "name": meta.get("name"), "uid": meta.get("uid"),
                        "resourceVersion": meta.get("resourceVersion")}
    return new


class VolumeAPI:
    """PUTs PVs and PVCs through the scheduler's (fenced) client; an error is one line, the server's."""

    def __init__(self, api_client: Any, request_timeout: float = 30.0) -> None:
        self.api_client = api_client
        self.request_timeout = request_timeout

    def update(self, obj: Obj) -> Obj:
        meta = obj.get("metadata") or {}
        if meta.get("namespace"):
            path = "/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
            params = {"namespace": meta["namespace"], "name": meta["name"]}
        else:
            path, params = "/api/v1/persistentvolumes/{name}", {"name": meta["name"]}
        try:
            resp = componentbase.client.request(self.api_client, "PUT", path, path_params=params, body=obj,
                                                timeout=self.request_timeout)
            return json.loads(resp.read())  # type: ignore[no-any-return]
        except Exception as err:  # ApiException or a transport error: PreBind fails, the pod is retried
            raise _message(err) from None


def check_bindings(pods: Store, pvcs: Store, pvs: Store, node: NodeInfo | None, pod_key: str,
                   volumes: PodVolumes, sent: Mapping[str, str]) -> bool:
    """kube's ``checkBindings``: True once every claim it acted on is fully bound; raises ``PluginError``
    when the binding cannot finish (the pod is gone, a claimRef was dropped, provisioning gave up).

    ``sent`` maps each updated object's key to the resourceVersion the API returned: an informer copy
    older than that is not judged yet.
    """
    if pods.get(pod_key) is None:
        raise PluginError("pod does not exist any more")
    for pv, pvc in volumes.static_bindings:
        current_pv, current_pvc = pvs.get(_key(pv)), pvcs.get(_key(pvc))
        if current_pv is None or current_pvc is None:
            raise PluginError(f"failed to check binding: {'pv' if current_pv is None else 'pvc'} "
                              f"{_key(pv) if current_pv is None else _key(pvc)} not found")
        if _older(current_pv, sent.get(_key(pv))):
            return False
        if node is not None and not pv_matches_node(current_pv, node):
            raise PluginError(f'pv "{_key(pv)}" node affinity doesn\'t match node "{node.name}"')
        ref = (current_pv.get("spec") or {}).get("claimRef") or {}
        if not ref.get("uid"):
            raise PluginError(f'ClaimRef got reset for pv "{_key(pv)}"')
        if not is_fully_bound(current_pvc):
            return False
    for claim in volumes.provisions:
        current = pvcs.get(_key(claim))
        if current is None:
            raise PluginError(f"failed to check provisioning pvc: {_key(claim)} not found")
        if _older(current, sent.get(_key(claim))):
            return False
        name = (current.get("metadata") or {}).get("name")
        selected = ((current.get("metadata") or {}).get("annotations") or {}).get(ANN_SELECTED_NODE)
        if node is not None and selected != node.name:
            raise PluginError(f'provisioning failed for PVC "{name}"')  # the provisioner gave up: retry
        volume_name = (current.get("spec") or {}).get("volumeName")
        if volume_name:
            bound_pv = pvs.get(volume_name)
            if bound_pv is None:
                return False  # not seen yet
            if node is not None and not pv_matches_node(bound_pv, node):
                raise PluginError(f'pv "{volume_name}" node affinity doesn\'t match node "{node.name}"')
        if not is_fully_bound(current):
            return False
    return True


def _older(current: Mapping[str, Any], sent_rv: str | None) -> bool:
    if not sent_rv:
        return False
    try:
        return int(_rv(current) or 0) < int(sent_rv)
    except ValueError:
        return _rv(current) != sent_rv


def wait_for_bindings(check: Any, timeout: float, interval: float = 0.2) -> None:
    """Poll ``check()`` until it is True (kube polls every second; a local cache read is cheap); raise
    ``PluginError`` after ``timeout`` seconds, as ``BindPodVolumes`` fails with its timeout."""
    try:
        done = wait_until(check, timeout=timeout, interval=interval)
    except PluginError as e:
        raise PluginError(f"binding volumes: {e}") from None
    if not done:
        raise PluginError("binding volumes: timed out waiting for the condition")
