"""The default plugins' ``EventsToRegister`` and queueing hints, as kube-scheduler's plugins declare them.

Each entry maps a plugin name to a function of the plugin instance (its args shape some hints) returning
the events that can make a pod it rejected schedulable, each with the hint that decides, from the old and
new object, whether this particular change can. The cases follow kube's own hint tests: a node added that
is too small for the pod, a label change that does not make the node match, a pod deleted elsewhere that
held no port the pod wants, all leave the pod parked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from componentbase_examples.scheduler.events import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from componentbase_examples.scheduler.plugins.helpers import RequiredNodeAffinity, find_untolerated, tolerates
from componentbase_examples.scheduler.plugins.nodeports import conflicts
from componentbase_examples.scheduler.plugins.noderesourcesfit import NodeResourcesFit
from componentbase_examples.scheduler.plugins.nodeunschedulable import UNSCHEDULABLE_TAINT
from componentbase_examples.scheduler.plugins.podaffinityterms import parse_terms
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["DEFAULT_EVENTS"]

Obj = Mapping[str, Any]
QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
A = ActionType
PVC, PV, STORAGE_CLASS, CSINODE = "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode"


_last: list[tuple[Obj, NodeInfo]] = []  # the last nodes parsed: one event is asked of every parked pod


def _node(obj: Obj | None) -> NodeInfo | None:
    """``obj`` as a ``NodeInfo`` without pods; the event's objects are parsed once, not once per parked pod."""
    if obj is None:
        return None
    for seen, info in _last:
        if seen is obj:
            return info
    info = NodeInfo((obj.get("metadata") or {}).get("name", ""))
    info.set_node(obj)
    _last[:] = [*_last[-1:], (obj, info)]
    return info


def _uid(obj: Obj) -> Any:
    return (obj.get("metadata") or {}).get("uid")


def _same_pod(pod: PodInfo, obj: Obj | None) -> bool:
    return obj is not None and _uid(obj) is not None and _uid(obj) == _uid(pod.pod)


def _assigned(obj: Obj) -> bool:
    return bool((obj.get("spec") or {}).get("nodeName"))


def _hint(event: ClusterEvent, fn: Callable[..., QueueingHint] | None) -> ClusterEventWithHint:
    return ClusterEventWithHint(event, fn)


# NodeResourcesFit


def _fit_pod_event(plugin: Any, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """A bound pod deleted frees what it held; a scale-down helps if it shrinks what this pod asks for."""
    if new is None:
        return QUEUE if old is not None and _assigned(old) else SKIP
    if _same_pod(pod, new):
        return QUEUE
    if old is None or not _assigned(new):
        return SKIP
    before, after = PodInfo(old).requests, PodInfo(new).requests
    return QUEUE if any(amount and after.get(name, 0) < before.get(name, 0)
                        for name, amount in pod.requests.items()) else SKIP


def _fits_empty(pod: PodInfo, n: NodeInfo) -> bool:
    scalars = [(name, amount) for name, amount in pod.scalar.items() if amount]
    return not NodeResourcesFit.insufficient(pod, n, scalars)[0]


def _fit_node_event(plugin: Any, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """A node the pod fits when empty, added, or grown in a resource the pod requests (or in pods)."""
    modified, original = _node(new), _node(old)
    if modified is None or not _fits_empty(pod, modified):
        return SKIP
    if original is None:
        return QUEUE
    if modified.alloc_pods > original.alloc_pods:
        return QUEUE
    grown = ((pod.cpu and modified.alloc_cpu > original.alloc_cpu)
             or (pod.memory and modified.alloc_memory > original.alloc_memory)
             or (pod.ephemeral_storage and modified.alloc_ephemeral_storage > original.alloc_ephemeral_storage)
             or any(amount and modified.alloc_scalar.get(name, 0) > original.alloc_scalar.get(name, 0)
                    for name, amount in pod.scalar.items()))
    return QUEUE if grown else SKIP


def _fit(plugin: Any) -> list[ClusterEventWithHint]:
    return [_hint(ClusterEvent(POD, A.DELETE | A.UPDATE_POD_SCALE_DOWN),
                  lambda p, o, n: _fit_pod_event(plugin, p, o, n)),
            _hint(ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE),
                  lambda p, o, n: _fit_node_event(plugin, p, o, n))]


# NodeAffinity


def _affinity_node_event(plugin: Any, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """The node now matches the pod's required affinity (and the profile's addedAffinity) and did not."""
    modified = _node(new)
    if modified is None:
        return SKIP
    added = getattr(plugin, "added_selector", None)
    if added is not None and not added.match(modified):
        return SKIP
    required = RequiredNodeAffinity(pod.spec)
    if not required.match(modified):
        return SKIP
    original = _node(old)
    if original is None:
        return QUEUE
    was = required.match(original) and (added is None or added.match(original))
    return SKIP if was else QUEUE


def _node_affinity(plugin: Any) -> list[ClusterEventWithHint]:
    return [_hint(ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_LABEL),
                  lambda p, o, n: _affinity_node_event(plugin, p, o, n))]


# TaintToleration and NodeUnschedulable


def _taint_node_event(pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """The node had a NoSchedule/NoExecute taint the pod does not tolerate (or is new) and has none now."""
    modified, original = _node(new), _node(old)
    if modified is None or find_untolerated(modified.no_schedule_taints, pod.tolerations) is not None:
        return SKIP
    if original is None or find_untolerated(original.no_schedule_taints, pod.tolerations) is not None:
        return QUEUE
    return SKIP


def _own_toleration_change(pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    return QUEUE if _same_pod(pod, new) else SKIP


def _taint_toleration(plugin: Any) -> list[ClusterEventWithHint]:
    return [_hint(ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_TAINT), _taint_node_event),
            _hint(ClusterEvent(POD, A.UPDATE_POD_TOLERATION), _own_toleration_change)]


def _unschedulable_node_event(pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """The node is (now) schedulable for the pod: uncordoned, or added uncordoned."""
    if new is None:
        return SKIP
    tolerated = any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations)
    if (new.get("spec") or {}).get("unschedulable") and not tolerated:
        return SKIP
    if old is None or (old.get("spec") or {}).get("unschedulable"):
        return QUEUE
    return SKIP


def _unschedulable_toleration(pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    if not _same_pod(pod, new) or new is None:
        return SKIP
    return QUEUE if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in PodInfo(new).tolerations) else SKIP


def _node_unschedulable(plugin: Any) -> list[ClusterEventWithHint]:
    return [_hint(ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_TAINT), _unschedulable_node_event),
            _hint(ClusterEvent(POD, A.UPDATE_POD_TOLERATION), _unschedulable_toleration)]


# NodeName and NodePorts


def _node_name_event(pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    wanted = pod.spec.get("nodeName")
    return QUEUE if new is not None and (not wanted or (new.get("metadata") or {}).get("name") == wanted) else SKIP


def _ports_pod_deleted(pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """A bound pod deleted that held a host port this pod wants."""
    if old is None or not _assigned(old):
        return SKIP
    used: dict[str, dict[tuple[str, int], int]] = {}
    for ip, protocol, port in PodInfo(old).host_ports:
        used.setdefault(ip, {})[(protocol, port)] = 1
    return QUEUE if any(conflicts(used, ip, protocol, port) for ip, protocol, port in pod.host_ports) else SKIP


# PodTopologySpread


def _spread_constraints(plugin: Any, pod: PodInfo) -> list[Any]:
    try:
        return list(plugin.constraints(pod, "DoNotSchedule"))
    except ValueError:  # a selector the API let through; the pod fails anyway, so retry it on any change
        return []


def _spread_pod_event(plugin: Any, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """A bound pod in the pod's namespace that a constraint counts was added, relabelled or deleted."""
    involved = new if new is not None else old
    if involved is None or not _assigned(involved):
        return SKIP
    if ((involved.get("metadata") or {}).get("namespace") or "default") != pod.namespace:
        return SKIP
    constraints = _spread_constraints(plugin, pod)
    if not constraints:
        return QUEUE

    def counted(obj: Obj | None) -> bool:
        labels = (obj or {}).get("metadata", {}).get("labels") or {}
        return obj is not None and any(c.selector(labels) for c in constraints)

    if old is not None and new is not None and ((old.get("metadata") or {}).get("labels")
                                                == (new.get("metadata") or {}).get("labels")):
        return SKIP
    return QUEUE if counted(old) or counted(new) else SKIP


def _spread_node_event(plugin: Any, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """A node with every topology key added or deleted, or one whose topology labels (or taints, for a
    ``nodeTaintsPolicy: Honor`` constraint) changed."""
    constraints = _spread_constraints(plugin, pod)
    if not constraints:
        return QUEUE
    keys = [c.topology_key for c in constraints]

    def labels(obj: Obj | None) -> Mapping[str, str]:
        return ((obj or {}).get("metadata") or {}).get("labels") or {}

    def in_domain(obj: Obj | None) -> bool:
        return obj is not None and all(k in labels(obj) for k in keys)

    if new is None or old is None:
        return QUEUE if in_domain(new if new is not None else old) else SKIP
    if not in_domain(old) and not in_domain(new):
        return SKIP
    if any(labels(old).get(k) != labels(new).get(k) for k in keys):
        return QUEUE
    honor_taints = any(c.honor_taints for c in constraints)
    taints_changed = (old.get("spec") or {}).get("taints") != (new.get("spec") or {}).get("taints")
    return QUEUE if honor_taints and taints_changed else SKIP


def _spread(plugin: Any) -> list[ClusterEventWithHint]:
    return [_hint(ClusterEvent(POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE),
                  lambda p, o, n: _spread_pod_event(plugin, p, o, n)),
            _hint(ClusterEvent(NODE, A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT),
                  lambda p, o, n: _spread_node_event(plugin, p, o, n))]


# InterPodAffinity


def _affinity_pod_event(pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """A bound pod now matching a required affinity term, or one matching an anti-affinity term (either
    way round) gone or relabelled away."""
    involved = new if new is not None else old
    if involved is None or not _assigned(involved):
        return SKIP
    terms = parse_terms(pod)
    after = PodInfo(new) if new is not None else None
    before = PodInfo(old) if old is not None else None
    if after is not None and any(t.matches(after) for t in terms.required_affinity):
        return QUEUE
    if before is None:
        return SKIP
    if any(t.matches(before) for t in terms.required_anti_affinity) and \
            (after is None or not any(t.matches(after) for t in terms.required_anti_affinity)):
        return QUEUE
    if after is None and any(t.matches(pod) for t in parse_terms(before).required_anti_affinity):
        return QUEUE
    return SKIP


def _affinity_node_labels(pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
    """A node that now carries (or changed) the topology label of one of the pod's required terms."""
    terms = parse_terms(pod)
    keys = {t.topology_key for t in (*terms.required_affinity, *terms.required_anti_affinity)}
    if not keys:
        return QUEUE  # rejected by existing pods' anti-affinity: any domain change may help
    after = ((new or {}).get("metadata") or {}).get("labels") or {}
    before = ((old or {}).get("metadata") or {}).get("labels") or {}
    return QUEUE if any(after.get(k) != before.get(k) for k in keys) else SKIP


def _inter_pod_affinity(plugin: Any) -> list[ClusterEventWithHint]:
    return [_hint(ClusterEvent(POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE), _affinity_pod_event),
            _hint(ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_LABEL), _affinity_node_labels)]


#: Plugin name -> its ``EventsToRegister`` given the plugin instance.
DEFAULT_EVENTS: dict[str, Callable[[Any], list[ClusterEventWithHint]]] = {
    "NodeResourcesFit": _fit,
    "NodeAffinity": _node_affinity,
    "TaintToleration": _taint_toleration,
    "NodeUnschedulable": _node_unschedulable,
    "NodeName": lambda plugin: [_hint(ClusterEvent(NODE, A.ADD), _node_name_event)],
    "NodePorts": lambda plugin: [_hint(ClusterEvent(POD, A.DELETE), _ports_pod_deleted),
                                 _hint(ClusterEvent(NODE, A.ADD), None)],
    "PodTopologySpread": _spread,
    "InterPodAffinity": _inter_pod_affinity,
    # The volume plugins: any add or update of the storage kinds they read may help (no hints of their own).
    "VolumeBinding": lambda plugin: [_hint(ClusterEvent(PVC, A.ADD | A.UPDATE), None),
                                     _hint(ClusterEvent(PV, A.ADD | A.UPDATE), None),
                                     _hint(ClusterEvent(STORAGE_CLASS, A.ADD | A.UPDATE), None),
                                     _hint(ClusterEvent(NODE, A.ADD | A.UPDATE), None)],
    "VolumeRestrictions": lambda plugin: [_hint(ClusterEvent(POD, A.DELETE), None),
                                          _hint(ClusterEvent(PVC, A.ADD), None),
                                          _hint(ClusterEvent(NODE, A.ADD | A.UPDATE), None)],
    "VolumeZone": lambda plugin: [_hint(ClusterEvent(PVC, A.ADD | A.UPDATE), None),
                                  _hint(ClusterEvent(PV, A.ADD | A.UPDATE), None),
                                  _hint(ClusterEvent(STORAGE_CLASS, A.ADD), None),
                                  _hint(ClusterEvent(NODE, A.ADD | A.UPDATE), None)],
    "NodeVolumeLimits": lambda plugin: [_hint(ClusterEvent(POD, A.DELETE), None),
                                        _hint(ClusterEvent(PVC, A.ADD), None),
                                        _hint(ClusterEvent(CSINODE, A.ADD | A.UPDATE), None)],
    # Score-only and binding plugins never reject a pod: nothing to register.
    "ImageLocality": lambda plugin: [],
    "DefaultPreemption": lambda plugin: [],
    "NodeResourcesBalancedAllocation": lambda plugin: [],
    "PrioritySort": lambda plugin: [],
    "DefaultBinder": lambda plugin: [],
}
