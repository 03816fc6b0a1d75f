"""Extenders with a ``preemptVerb``: they see DefaultPreemption's candidates and may narrow them.

kube's ``Evaluator.callExtenders``: each interested extender that supports preemption gets the pod and,
per candidate node, its victims (the Pod objects, or only their UIDs when ``nodeCacheCapable``) with the
number of PodDisruptionBudget violations, and answers the nodes (and victims) it accepts, by UID; the
next extender gets that answer. The answer's UIDs are looked up on the scheduler's own nodes. Wire
shapes are kube's ``ExtenderPreemptionArgs`` / ``ExtenderPreemptionResult`` (Go field names, no tags).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from componentbase_examples.scheduler.extender import ExtenderError, HTTPExtender, go_field, skipped_if_ignorable
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import Snapshot

__all__ = ["Victims", "preempt_with_extenders", "process_preemption"]

log = logging.getLogger("componentbase_examples.scheduler.extender")

#: The pods a candidate node would lose, and how many PodDisruptionBudgets that violates.
Victims = tuple[list[PodInfo], int]


def _uid(pod: PodInfo) -> str:
    return str((pod.pod.get("metadata") or {}).get("uid", ""))


def process_preemption(extender: HTTPExtender, pod: PodInfo, victims: Mapping[str, Victims],
                       snapshot: Snapshot) -> dict[str, Victims]:
    """One extender's ``ProcessPreemption``: the candidates it keeps, victims resolved on ``snapshot``."""
    if not extender.preempt_verb:
        raise ExtenderError(f"preempt verb is not defined for extender {extender.name} but run into "
                            "ProcessPreemption")
    if extender.node_cache_capable:
        args = {"Pod": pod.pod, "NodeNameToMetaVictims": {
            node: {"Pods": [{"UID": _uid(p)} for p in pods], "NumPDBViolations": violations}
            for node, (pods, violations) in victims.items()}}
    else:
        args = {"Pod": pod.pod, "NodeNameToVictims": {
            node: {"Pods": [p.pod for p in pods], "NumPDBViolations": violations}
            for node, (pods, violations) in victims.items()}}
    result = extender.send(extender.preempt_verb, args)
    kept: dict[str, Victims] = {}
    for node_name, meta in (go_field(result, "NodeNameToMetaVictims") or {}).items():
        info = snapshot.get(node_name)
        if info is None:
            raise ExtenderError(f'nodeinfo not found for node name "{node_name}"')
        by_uid = {_uid(p): p for p in info.pods.values()}
        pods = []
        for meta_pod in go_field(meta, "Pods") or ():
            uid = str(go_field(meta_pod, "UID") or "")
            if uid not in by_uid:
                raise ExtenderError(f"extender: {extender.name} claims to preempt pod (UID: &{{{uid}}}) on node: "
                                    f"{node_name}, but the pod is not found on that node")
            pods.append(by_uid[uid])
        kept[node_name] = (pods, int(go_field(meta, "NumPDBViolations") or 0))
    return kept


def preempt_with_extenders(extenders: Iterable[HTTPExtender], pod: PodInfo, victims: Mapping[str, Victims],
                           snapshot: Snapshot) -> dict[str, Victims]:
    """kube's ``callExtenders``: the candidates every preempting extender keeps, in turn.

    A non-ignorable extender's error, or a kept node without victims, raises ``ExtenderError`` (the
    preemption attempt fails); an ignorable extender is skipped, and a node it left without victims dropped.
    """
    current = dict(victims)
    if not current:
        return current
    for extender in extenders:
        if not extender.preempt_verb or not extender.is_interested(pod):
            continue
        try:
            kept = process_preemption(extender, pod, current, snapshot)
        except ExtenderError as e:
            if not skipped_if_ignorable(extender, e, "Skipped"):
                raise
            continue
        for node_name, (pods, _) in list(kept.items()):
            if not pods:
                if not extender.ignorable:
                    raise ExtenderError(f'expected at least one victim pod on node "{node_name}"')
                del kept[node_name]
        current = kept
        if not current:
            break
    return current
