"""kube-apiserver's table printers for the built-in kinds (pkg/printers/internalversion): the columns as data,
one cell function per kind.

A column is ``Name[:type][:priority]`` (type string and priority 0 when left out; priority 1 columns are the
ones ``-o wide`` adds). Kinds without a printer get kube's default table: Name and Created At.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ._cells import (
    age,
    binding,
    count,
    cronjob,
    daemonset,
    deployment,
    dig,
    endpoints,
    event,
    format_labels,
    hpa,
    human_duration,
    ingress,
    job,
    label_selector,
    node,
    or_none,
    pdb,
    pod,
    pv,
    pvc,
    quota,
    replicas,
    service,
    template_cells,
)

__all__ = ["COLUMNS", "DEFAULT_COLUMNS", "cells_for"]

Obj = dict[str, Any]
_WIDE_POD = "Containers::1 Images::1 Selector::1"

#: resource key -> its columns, in kube's order
COLUMNS: dict[str, str] = {
    "pods": "Name Ready Status Restarts Age IP::1 Node::1 Nominated_Node::1 Readiness_Gates::1",
    "podtemplates": "Name Containers Images Pod_Labels",
    "replicationcontrollers": f"Name Desired:integer Current:integer Ready:integer Age {_WIDE_POD}",
    "replicasets.apps": f"Name Desired:integer Current:integer Ready:integer Age {_WIDE_POD}",
    "deployments.apps": f"Name Ready Up-to-date:integer Available:integer Age {_WIDE_POD}",
    "statefulsets.apps": "Name Ready Age Containers::1 Images::1",
    "daemonsets.apps": "Name Desired:integer Current:integer Ready:integer Up-to-date:integer Available:integer "
                       f"Node_Selector Age {_WIDE_POD}",
    "controllerrevisions.apps": "Name Controller Revision:integer Age",
    "jobs.batch": f"Name Status Completions Duration Age {_WIDE_POD}",
    "cronjobs.batch": f"Name Schedule Timezone Suspend:boolean Active:integer Last_Schedule Age {_WIDE_POD}",
    "services": "Name Type Cluster-IP External-IP Port(s) Age Selector::1",
    "endpoints": "Name Endpoints Age",
    "nodes": "Name Status Roles Age Version Internal-IP::1 External-IP::1 OS-Image::1 Kernel-Version::1 "
             "Container-Runtime::1",
    "events": "Last_Seen Type Reason Object Subobject::1 Source::1 Message First_Seen::1 Count::1 Name::1",
    "namespaces": "Name Status Age",
    "secrets": "Name Type Data:integer Age",
    "configmaps": "Name Data:integer Age",
    "serviceaccounts": "Name Secrets:integer Age",
    "persistentvolumes": "Name Capacity Access_Modes Reclaim_Policy Status Claim StorageClass "
                         "VolumeAttributesClass Reason Age VolumeMode::1",
    "persistentvolumeclaims": "Name Status Volume Capacity Access_Modes StorageClass VolumeAttributesClass Age "
                              "VolumeMode::1",
    "resourcequotas": "Name Age Request Limit",
    "poddisruptionbudgets.policy": "Name Min_Available Max_Unavailable Allowed_Disruptions:integer Age",
    "rolebindings.rbac.authorization.k8s.io": "Name Role Age Users::1 Groups::1 ServiceAccounts::1",
    "clusterrolebindings.rbac.authorization.k8s.io": "Name Role Age Users::1 Groups::1 ServiceAccounts::1",
    "leases.coordination.k8s.io": "Name Holder Age",
    "priorityclasses.scheduling.k8s.io": "Name Value:integer Global-Default:boolean Age PreemptionPolicy",
    "storageclasses.storage.k8s.io": "Name Provisioner ReclaimPolicy VolumeBindingMode "
                                     "AllowVolumeExpansion:boolean Age",
    "ingresses.networking.k8s.io": "Name Class Hosts Address Ports Age",
    "ingressclasses.networking.k8s.io": "Name Controller Parameters Age",
    "networkpolicies.networking.k8s.io": "Name Pod-Selector Age",
    "horizontalpodautoscalers.autoscaling": "Name Reference Targets MinPods:integer MaxPods:integer "
                                            "Replicas:integer Age",
    "runtimeclasses.node.k8s.io": "Name Handler Age",
    "endpointslices.discovery.k8s.io": "Name AddressType Ports Endpoints Age",
    "certificatesigningrequests.certificates.k8s.io": "Name Age SignerName Requestor RequestedDuration Condition",
    "mutatingwebhookconfigurations.admissionregistration.k8s.io": "Name Webhooks:integer Age",
    "validatingwebhookconfigurations.admissionregistration.k8s.io": "Name Webhooks:integer Age",
}
DEFAULT_COLUMNS = "Name Created_At:date"


def _simple(*paths: str, default: Any = "") -> Callable[[Obj, float], list[Any]]:
    """Cells read straight from the object (dotted paths), with Age where a path is "@age"."""

    def cells(obj: Obj, now: float) -> list[Any]:
        out: list[Any] = []
        for path in paths:
            if path == "@age":
                out.append(age(obj, now))
            elif path.startswith("#"):
                value = dig(obj, *path[1:].split("."))
                out.append(len(value) if isinstance(value, list | dict) else 0)
            else:
                value = dig(obj, *path.split("."))
                out.append(json.dumps(value) if isinstance(value, dict | list) else or_none(value, default))
        return out

    return cells


_CELLS: dict[str, Callable[[Obj, float], list[Any]]] = {
    "pods": pod, "nodes": node, "services": service, "jobs.batch": job, "cronjobs.batch": cronjob,
    "replicasets.apps": replicas, "replicationcontrollers": replicas, "deployments.apps": deployment,
    "daemonsets.apps": daemonset, "rolebindings.rbac.authorization.k8s.io": binding,
    "clusterrolebindings.rbac.authorization.k8s.io": binding, "events": event, "persistentvolumes": pv,
    "persistentvolumeclaims": pvc, "poddisruptionbudgets.policy": pdb, "resourcequotas": quota,
    "horizontalpodautoscalers.autoscaling": hpa, "ingresses.networking.k8s.io": ingress, "endpoints": endpoints,
    "statefulsets.apps": lambda o, now: [f"{count(dig(o, 'status', 'readyReplicas'))}/"
                                         f"{count(dig(o, 'spec', 'replicas'))}", age(o, now),
                                         *template_cells(o, "spec", "template")],
    "podtemplates": lambda o, now: [*template_cells(o, "template"),
                                    format_labels(dig(o, "template", "metadata", "labels"))],
    "namespaces": _simple("status.phase", "@age"),
    "secrets": lambda o, now: [o.get("type", ""), len(o.get("data") or {}), age(o, now)],
    "configmaps": lambda o, now: [len(o.get("data") or {}) + len(o.get("binaryData") or {}), age(o, now)],
    "serviceaccounts": _simple("#secrets", "@age"),
    "controllerrevisions.apps": lambda o, now: [
        next((f"{r.get('kind', '').lower()}.{r.get('apiVersion', '').split('/')[0]}/{r.get('name')}"
              for r in dig(o, "metadata", "ownerReferences") or [] if r.get("controller")), "<none>"),
        count(o.get("revision")), age(o, now)],
    "leases.coordination.k8s.io": _simple("spec.holderIdentity", "@age"),
    "priorityclasses.scheduling.k8s.io": lambda o, now: [count(o.get("value")), bool(o.get("globalDefault")),
                                                         age(o, now), o.get("preemptionPolicy", "")],
    "storageclasses.storage.k8s.io": lambda o, now: [
        o.get("provisioner", ""), o.get("reclaimPolicy") or "Delete", o.get("volumeBindingMode") or "Immediate",
        bool(o.get("allowVolumeExpansion")), age(o, now)],
    "ingressclasses.networking.k8s.io": _simple("spec.controller", "spec.parameters", "@age", default="<none>"),
    "networkpolicies.networking.k8s.io": lambda o, now: [label_selector(dig(o, "spec", "podSelector")),
                                                         age(o, now)],
    "runtimeclasses.node.k8s.io": _simple("handler", "@age"),
    "endpointslices.discovery.k8s.io": lambda o, now: [
        o.get("addressType", ""), ",".join(str(p.get("port")) for p in o.get("ports") or []) or "<unset>",
        ",".join(a for e in o.get("endpoints") or [] for a in e.get("addresses") or []) or "<unset>",
        age(o, now)],
    "certificatesigningrequests.certificates.k8s.io": lambda o, now: [
        age(o, now), dig(o, "spec", "signerName") or "", dig(o, "spec", "username") or "",
        human_duration(count(dig(o, "spec", "expirationSeconds"))) if dig(o, "spec", "expirationSeconds")
        else "<none>",
        ",".join(c.get("type", "") for c in dig(o, "status", "conditions") or []) or "Pending"],
    "mutatingwebhookconfigurations.admissionregistration.k8s.io": _simple("#webhooks", "@age"),
    "validatingwebhookconfigurations.admissionregistration.k8s.io": _simple("#webhooks", "@age"),
}


def cells_for(key: str, obj: Obj, now: float) -> list[Any]:
    """The row cells of ``obj`` (of resource ``key``), Name first unless kube's printer puts it elsewhere."""
    name = dig(obj, "metadata", "name") or ""
    cells = _CELLS.get(key)
    if cells is None:
        return [name, dig(obj, "metadata", "creationTimestamp") or ""]
    if key == "events":
        return cells(obj, now)
    return [name, *cells(obj, now)]
