"""kube's defaulting of the common fields of built-in kinds, applied on create and on every update.

A subset of the generated ``SetDefaults_*`` functions: the fields controllers and kubectl read back
(Deployment strategy and limits, Job completions, Service type, pod template basics...). Like kube's
defaulters these only fill what is missing; nothing runs afterwards (no controller acts on them).
"""

from __future__ import annotations

import base64
import ipaddress
import itertools
from collections.abc import Callable
from typing import Any

from ._admission import admit_pod
from ._webhookconfig import CONFIGURATIONS, default_configuration

__all__ = ["apply_defaults"]

Obj = dict[str, Any]
_SERVICE_IPS = itertools.count(2)  # .1 is the kubernetes Service's (_bootstrap_service)
_SERVICE_NET = ipaddress.ip_network("10.96.0.0/12")


def _sub(obj: Obj, *path: str) -> Obj:
    """The dict at ``path``, made (as a fresh copy, so stored objects are never mutated) when needed."""
    for key in path:
        got = obj.get(key)
        obj[key] = dict(got) if isinstance(got, dict) else {}
        obj = obj[key]
    return obj


def _container(c: Any) -> Any:
    if not isinstance(c, dict):
        return c
    c = dict(c)
    image = str(c.get("image") or "")
    tagged = ":" in image.rsplit("/", 1)[-1] or "@" in image
    latest = not tagged or image.endswith(":latest")
    c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    if isinstance(c.get("ports"), list):
        c["ports"] = [dict(p, protocol=p.get("protocol", "TCP")) if isinstance(p, dict) else p for p in c["ports"]]
    return c


def pod_spec(spec: Obj) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for key in ("containers", "initContainers"):
        if isinstance(spec.get(key), list):
            spec[key] = [_container(c) for c in spec[key]]


def _template(obj: Obj, *path: str) -> None:
    pod_spec(_sub(obj, *path, "template", "spec"))


def _pod(obj: Obj) -> None:
    pod_spec(_sub(obj, "spec"))
    obj["status"] = {"phase": "Pending"}  # kube's PrepareForCreate resets a new pod's status


def _deployment(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    spec.setdefault("replicas", 1)
    strategy = _sub(spec, "strategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _sub(strategy, "rollingUpdate")
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(obj, "spec")


def _replicaset(obj: Obj) -> None:
    _sub(obj, "spec").setdefault("replicas", 1)
    _template(obj, "spec")


def _replication_controller(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    spec.setdefault("replicas", 1)
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if isinstance(labels, dict) and labels:
        spec.setdefault("selector", dict(labels))
    _template(obj, "spec")


def _statefulset(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = _sub(spec, "updateStrategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        _sub(strategy, "rollingUpdate").setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    retention = _sub(spec, "persistentVolumeClaimRetentionPolicy")
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    _template(obj, "spec")


def _daemonset(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    strategy = _sub(spec, "updateStrategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _sub(strategy, "rollingUpdate")
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(obj, "spec")


def _job(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    uid, name = obj["metadata"].get("uid"), obj["metadata"].get("name")
    if uid and not spec.get("selector"):  # the job controller's labels, set by the Job strategy on create
        marks = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                 "controller-uid": uid, "job-name": name}
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        meta = _sub(spec, "template", "metadata")
        meta["labels"] = dict(meta.get("labels") or {}, **marks)
    _template(obj, "spec")


def _cronjob(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    _template(obj, "spec", "jobTemplate", "spec")


def _service(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    kind = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if kind != "ExternalName" and spec.get("clusterIP"):
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if kind in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    ports = spec.get("ports")
    if isinstance(ports, list):
        spec["ports"] = [dict(p, protocol=p.get("protocol", "TCP"), targetPort=p.get("targetPort", p.get("port")))
                         if isinstance(p, dict) else p for p in ports]
    _sub(obj, "status").setdefault("loadBalancer", {})


def _secret(obj: Obj) -> None:
    obj.setdefault("type", "Opaque")
    if isinstance(obj.get("stringData"), dict):
        data = dict(obj.get("data") or {})
        for k, v in obj.pop("stringData").items():
            data[k] = base64.b64encode(str(v).encode()).decode()
        obj["data"] = data


def _volume_claim(obj: Obj) -> None:
    _sub(obj, "spec").setdefault("volumeMode", "Filesystem")
    _sub(obj, "status").setdefault("phase", "Pending")


def _volume(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    _sub(obj, "status").setdefault("phase", "Pending")


def _hpa(obj: Obj) -> None:
    spec = _sub(obj, "spec")
    spec.setdefault("minReplicas", 1)
    if obj.get("apiVersion") == "autoscaling/v2" and not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 80}}}]


def _storage_class(obj: Obj) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def _priority_class(obj: Obj) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _namespace(obj: Obj) -> None:
    obj["status"] = {"phase": "Active"}
    _sub(obj, "spec").setdefault("finalizers", ["kubernetes"])
    labels = _sub(obj, "metadata", "labels")
    labels.setdefault("kubernetes.io/metadata.name", obj["metadata"]["name"])


def _pdb(obj: Obj) -> None:
    status = _sub(obj, "status")
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        status.setdefault(key, 0)


_DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "pods": _pod, "deployments.apps": _deployment, "replicasets.apps": _replicaset,
    "statefulsets.apps": _statefulset, "daemonsets.apps": _daemonset, "replicationcontrollers":
    _replication_controller, "podtemplates": lambda o: _template(o), "jobs.batch": _job,
    "cronjobs.batch": _cronjob, "services": _service, "secrets": _secret, "persistentvolumeclaims": _volume_claim,
    "persistentvolumes": _volume, "horizontalpodautoscalers.autoscaling": _hpa,
    "storageclasses.storage.k8s.io": _storage_class, "priorityclasses.scheduling.k8s.io": _priority_class,
    "namespaces": _namespace, "poddisruptionbudgets.policy": _pdb,
    CONFIGURATIONS[0]: lambda o: default_configuration(o, True),
    CONFIGURATIONS[1]: lambda o: default_configuration(o, False),
}


def apply_defaults(key: str, obj: Obj, creating: bool) -> None:
    """Default ``obj`` (a fresh top-level dict of kind ``key``) in place; status only on create."""
    defaulter = _DEFAULTERS.get(key)
    if defaulter is None:
        return
    status = obj.get("status")
    if key == "services" and creating:  # the allocator's part: a cluster IP for every non-headless service
        spec = _sub(obj, "spec")
        if spec.get("type") != "ExternalName" and not spec.get("clusterIP"):
            spec["clusterIP"] = str(_SERVICE_NET[next(_SERVICE_IPS)])
    defaulter(obj)
    if key == "pods" and creating:  # the admission plugins that fill a new pod in
        admit_pod(obj)
    if not creating:  # status belongs to controllers after create; keep what was there
        if status is None:
            obj.pop("status", None)
        else:
            obj["status"] = status
