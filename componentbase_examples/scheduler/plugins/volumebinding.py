"""VolumeBinding: a pod's claims must be bound, or bindable on the node; the chosen node's claims are bound
before the pod is, as kube-scheduler's VolumeBinding plugin.

* PreFilter: a missing, lost or deleting claim, or an unbound claim whose class binds ``Immediate``, makes
  the pod unschedulable (``pod has unbound immediate PersistentVolumeClaims``): the PV controller binds
  those, not the scheduler. A pod with no claims skips the plugin.
* PreFilter also narrows the nodes to those bound local PVs name (``kubernetes.io/hostname In``): the
  others are reported as ``node(s) didn't satisfy plugin(s) [VolumeBinding]``.
* Filter: a bound claim's PV must exist and its ``nodeAffinity`` admit the node; a ``WaitForFirstConsumer``
  claim needs an available PV that fits the node (smallest first, kube's ``FindMatchingVolume``) or a
  class that provisions (not ``kubernetes.io/no-provisioner``) with ``allowedTopologies`` the node meets.
* Reserve assumes the chosen PVs (``claimRef`` set) and claims (``selected-node`` annotation) so later
  cycles do not hand out the same PV; Unreserve forgets them.
* PreBind writes them (PUT of each PV, then of each claim) and waits, up to ``bindTimeoutSeconds``, for
  the PV controller or the provisioner to finish (the claim's ``volumeName`` and ``bind-completed``).

Not here: CSIStorageCapacity checks (``did not have enough free storage``), CSI migration of in-tree PVs,
and the capacity score (``StorageCapacityScoring``, off by default upstream).
"""

from __future__ import annotations

import copy
from typing import Any

import attrs

import componentbase
from componentbase_examples.scheduler import features
from componentbase_examples.scheduler.framework import (
    SKIP,
    Code,
    CycleState,
    Handle,
    Plugin,
    PreFilterResult,
    Status,
)
from componentbase_examples.scheduler.plugins.args import VolumeBindingArgs
from componentbase_examples.scheduler.plugins.helpers import labels_match, selector_requirements
from componentbase_examples.scheduler.plugins.volumebinder import (
    AssumeCache,
    PodVolumes,
    VolumeAPI,
    bind_volume_to_claim,
    check_bindings,
    wait_for_bindings,
)
from componentbase_examples.scheduler.plugins.volumes import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PluginError,
    StorageObjects,
    claim_class,
    ephemeral_owner_problem,
    is_fully_bound,
    missing_claim,
    pod_claims,
    pv_class,
    pv_matches_node,
    topology_matches,
)
from componentbase_examples.scheduler.plugins.volumescore import capacity_scorer
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["ERR_REASON_BIND_CONFLICT", "ERR_REASON_NODE_CONFLICT", "ERR_REASON_PV_NOT_EXIST", "VolumeBinding",
           "VolumeBindingArgs"]

Obj = dict[str, Any]

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
HOSTNAME = "kubernetes.io/hostname"


@attrs.define
class _State:
    bound: list[Obj]
    delayed: list[Obj]
    by_node: dict[str, PodVolumes] = attrs.field(factory=dict)
    all_bound: bool = False


def _size(pvc: Obj) -> int:
    request = (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    return componentbase.util.quantity_value(request) if request is not None else 0


def _capacity(pv: Obj) -> int:
    storage = ((pv.get("spec") or {}).get("capacity") or {}).get("storage")
    return componentbase.util.quantity_value(storage) if storage is not None else 0


def _bound_to(pv: Obj, pvc: Obj) -> bool:
    """kube's ``IsVolumeBoundToClaim``: the claimRef names the claim (and its UID, when the ref has one)."""
    ref = (pv.get("spec") or {}).get("claimRef") or {}
    meta = pvc.get("metadata") or {}
    if ref.get("name") != meta.get("name") or ref.get("namespace") != meta.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


def _local_node_names(pv: Obj) -> frozenset[str]:
    """kube's ``GetLocalPersistentVolumeNodeNames``: per required term, the hostnames its ``In`` expressions
    all allow; the union over the terms."""
    required = ((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}
    names: set[str] = set()
    for term in required.get("nodeSelectorTerms") or ():
        allowed: set[str] | None = None
        for expr in term.get("matchExpressions") or ():
            if expr.get("key") == HOSTNAME and expr.get("operator") == "In":
                values = set(expr.get("values") or ())
                allowed = values if allowed is None else allowed & values
        names |= allowed or set()
    return frozenset(names)


def find_matching_volume(pvc: Obj, pvs: list[Obj], node: NodeInfo, excluded: set[str]) -> Obj | None:
    """kube's ``FindMatchingVolume`` on the scheduler's path: a PV already bound to the claim, else the
    smallest available PV of the claim's class, size, volume mode, access modes, selector and node."""
    spec = pvc.get("spec") or {}
    wanted = _size(pvc)
    mode = spec.get("volumeMode") or "Filesystem"
    modes = set(spec.get("accessModes") or ())
    selector = spec.get("selector")
    requirements = selector_requirements(selector) if selector is not None else None
    best: Obj | None = None
    for pv in pvs:
        meta, pv_spec = pv.get("metadata") or {}, pv.get("spec") or {}
        if meta.get("name") in excluded or meta.get("deletionTimestamp"):
            continue
        if pv_spec.get("claimRef") and not _bound_to(pv, pvc):
            continue
        if _capacity(pv) < wanted or (pv_spec.get("volumeMode") or "Filesystem") != mode:
            continue
        fits = pv_matches_node(pv, node)
        if _bound_to(pv, pvc):
            return pv if fits else None
        if ((pv.get("status") or {}).get("phase") != "Available" or pv_class(pv) != claim_class(pvc)
                or not fits or not modes <= set(pv_spec.get("accessModes") or ())):
            continue
        if requirements is not None and not labels_match(requirements, meta.get("labels") or {}):
            continue
        if best is None or _capacity(pv) < _capacity(best):
            best = pv
    return best


class VolumeBinding(Plugin):
    name = "VolumeBinding"
    Args = VolumeBindingArgs

    def __init__(self, args: VolumeBindingArgs | None, handle: Handle) -> None:
        super().__init__(args or VolumeBindingArgs(), handle)
        self.storage = StorageObjects(handle, "pvcs", "pvs", "classes")
        self.pvcs = AssumeCache(self.storage.pvcs)
        self.pvs = AssumeCache(self.storage.pvs)
        informer = getattr(handle, "informer", None)
        self.pods = informer("v1", "Pod") if informer is not None else None
        client = getattr(handle, "client", None)
        self.api = VolumeAPI(client) if client is not None else None
        self.bind_timeout = float(self.args.bind_timeout_seconds)
        shape = self.args.shape if features.enabled(features.STORAGE_CAPACITY_SCORING) else None
        self.scorer = capacity_scorer(shape, lambda pv, pvc: (pv_class(pv), _size(pvc), _capacity(pv))) \
            if shape else None

    # PreFilter

    @componentbase.hookimpl
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo) -> Status | PreFilterResult | None:
        claims = pod_claims(pod)
        if not claims:
            return SKIP
        bound: list[Obj] = []
        delayed: list[Obj] = []
        immediate = False
        for name, ephemeral in claims:
            pvc = self.pvcs.get(f"{pod.namespace}/{name}")
            if pvc is None:
                return missing_claim(name, ephemeral)
            problem = self._claim_problem(pod, pvc, name, ephemeral)
            if problem is not None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, problem)
            if is_fully_bound(pvc):
                bound.append(pvc)
            elif self._delay_binding(pvc) and not (pvc.get("spec") or {}).get("volumeName"):
                delayed.append(pvc)
            else:
                immediate = True  # prebound claims count as immediate: the PV controller finishes them
        if immediate:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, UNBOUND_IMMEDIATE)
        state[self.name] = _State(bound, sorted(delayed, key=_size))
        eligible = self._eligible_nodes(bound)
        return None if eligible is None else PreFilterResult(eligible)

    def _eligible_nodes(self, bound: list[Obj]) -> frozenset[str] | None:
        """kube's ``GetEligibleNodes``: the nodes every bound local PV names (``kubernetes.io/hostname In``),
        or None when some bound PV does not pin its node."""
        eligible: frozenset[str] | None = None
        for pvc in bound:
            pv = self.pvs.get((pvc.get("spec") or {}).get("volumeName", ""))
            names = _local_node_names(pv) if pv is not None else frozenset()
            if names:
                eligible = names if eligible is None else eligible & names
        return eligible

    @staticmethod
    def _claim_problem(pod: PodInfo, pvc: Obj, name: str, ephemeral: bool) -> str | None:
        if (pvc.get("status") or {}).get("phase") == "Lost":
            return (f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{(pvc.get("spec") or {}).get("volumeName", "")}"')
        if (pvc.get("metadata") or {}).get("deletionTimestamp"):
            return f'persistentvolumeclaim "{name}" is being deleted'
        return ephemeral_owner_problem(pod, pvc) if ephemeral else None

    def _delay_binding(self, pvc: Obj) -> bool:
        """kube's ``IsDelayBindingMode``: the claim's class exists and binds ``WaitForFirstConsumer``."""
        name = claim_class(pvc)
        if not name:
            return False
        sc = self.storage.storage_class(name)
        if sc is None:
            return False
        mode = sc.get("volumeBindingMode")
        if mode is None:
            raise PluginError(f'running PreFilter plugin "{self.name}": '
                              f'VolumeBindingMode not set for StorageClass "{name}"')
        return bool(mode == WAIT_FOR_FIRST_CONSUMER)

    # Filter

    @componentbase.hookimpl
    def scheduler_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                         rejected: dict[str, Status]) -> list[NodeInfo]:
        s: _State = state[self.name]
        pvs = self.pvs.list() if s.delayed else []
        passed = []
        for n in nodes:
            try:
                volumes, reasons = self._find_pod_volumes(s, n, pvs)
            except PluginError as e:
                raise PluginError(f'running "{self.name}" filter plugin: {e}') from None
            if reasons:
                rejected[n.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons, plugin=self.name)
            else:
                s.by_node[n.name] = volumes
                passed.append(n)
        return passed

    def _find_pod_volumes(self, s: _State, node: NodeInfo, pvs: list[Obj]) -> tuple[PodVolumes, list[str]]:
        """kube's ``FindPodVolumes``: what the node needs done for the claims, or why it cannot be used."""
        volumes = PodVolumes()
        node_ok = pv_found = unbound_ok = True
        for pvc in s.bound:
            pv = self.pvs.get((pvc.get("spec") or {}).get("volumeName", ""))
            if pv is None:
                pv_found = False
                break
            if not pv_matches_node(pv, node):
                node_ok = False
                break
        to_provision: list[Obj] = []
        chosen: set[str] = set()
        for pvc in s.delayed:
            selected = ((pvc.get("metadata") or {}).get("annotations") or {}).get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node.name:
                    unbound_ok = False
                    break
                to_provision.append(pvc)
                continue
            candidates = [pv for pv in pvs if pv_class(pv) == claim_class(pvc)]
            pv = find_matching_volume(pvc, candidates, node, chosen)
            if pv is None:
                to_provision.append(pvc)
            else:
                chosen.add(pv["metadata"]["name"])
                volumes.static_bindings.append((pv, pvc))
        if unbound_ok and to_provision:
            unbound_ok = self._can_provision(to_provision, node)
            volumes.provisions = to_provision if unbound_ok else []
        reasons = [reason for ok, reason in ((node_ok, ERR_REASON_NODE_CONFLICT),
                                             (unbound_ok, ERR_REASON_BIND_CONFLICT),
                                             (pv_found, ERR_REASON_PV_NOT_EXIST)) if not ok]
        return volumes, reasons

    def _can_provision(self, claims: list[Obj], node: NodeInfo) -> bool:
        """kube's ``checkVolumeProvisions``: each claim's class provisions, on this node's topology."""
        for claim in claims:
            meta = claim.get("metadata") or {}
            name = claim_class(claim)
            if not name:
                raise PluginError(f'no class for claim "{meta.get("namespace")}/{meta.get("name")}"')
            sc = self.storage.storage_class(name)
            if sc is None:
                raise PluginError(f'failed to find storage class "{name}"')
            provisioner = sc.get("provisioner") or ""
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False
            if not topology_matches(sc.get("allowedTopologies"), node.labels):
                return False
        return True

    # PreScore, Score: the capacity of the volumes a node would give the claims (volumescore)

    @componentbase.hookimpl
    def scheduler_pre_score(self, state: CycleState) -> Status | None:
        return None if self.scorer is not None and self.name in state else SKIP

    @componentbase.hookimpl
    def scheduler_score(self, state: CycleState, nodes: list[NodeInfo]) -> list[int]:
        by_node, scorer = state[self.name].by_node, self.scorer
        return [scorer(by_node[n.name]) if scorer is not None and n.name in by_node else 0 for n in nodes]

    # Reserve, Unreserve

    @componentbase.hookimpl
    def scheduler_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: _State | None = state.get(self.name)
        volumes = s.by_node.get(node_name) if s is not None else None
        if s is None or volumes is None:
            if s is not None:
                s.all_bound = True
            return None
        if not s.delayed:
            s.all_bound = True
            return None
        bindings = []
        for pv, pvc in volumes.static_bindings:
            new_pv = bind_volume_to_claim(pv, pvc)
            self.pvs.assume(new_pv)
            bindings.append((new_pv, pvc))
        provisions = []
        for claim in volumes.provisions:
            new_claim = copy.deepcopy(claim)
            meta = new_claim.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {}), ANN_SELECTED_NODE: node_name}
            self.pvcs.assume(new_claim)
            provisions.append(new_claim)
        s.by_node[node_name] = PodVolumes(bindings, provisions)
        return None

    @componentbase.hookimpl
    def scheduler_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s: _State | None = state.get(self.name)
        volumes = s.by_node.get(node_name) if s is not None else None
        if volumes is None:
            return
        for pv, _ in volumes.static_bindings:
            self.pvs.restore(pv["metadata"]["name"])
        for claim in volumes.provisions:
            self.pvcs.restore(f"{claim['metadata']['namespace']}/{claim['metadata']['name']}")

    # PreBind

    @componentbase.hookimpl
    def scheduler_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: _State | None = state.get(self.name)
        if s is None or s.all_bound:
            return None
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return Status(Code.ERROR, f'no pod volumes found for node "{node_name}"')
        if self.api is None or self.pods is None:
            return None  # a dry run: the assumed bindings are the outcome, as the assumed pod is the placement
        try:
            sent = self._send(volumes)
            node = self.handle.snapshot.get(node_name)
            pods = self.pods
            wait_for_bindings(lambda: check_bindings(pods, self.storage.pvcs, self.storage.pvs, node,
                                                     f"{pod.namespace}/{pod.name}", volumes, sent),
                              self.bind_timeout)
        except Exception as e:  # an API refusal or a binding that cannot finish: the pod is retried
            return Status(Code.ERROR, str(e))
        return None

    def _send(self, volumes: PodVolumes) -> dict[str, str]:
        """kube's ``bindAPIUpdate``: the PVs, then the claims; what was sent is no longer only assumed."""
        assert self.api is not None
        sent: dict[str, str] = {}
        for pv, _ in volumes.static_bindings:
            written = self.api.update(pv)
            sent[pv["metadata"]["name"]] = str(written["metadata"].get("resourceVersion") or "")
        for claim in volumes.provisions:
            written = self.api.update(claim)
            meta = claim["metadata"]
            sent[f"{meta['namespace']}/{meta['name']}"] = str(written["metadata"].get("resourceVersion") or "")
        return sent
