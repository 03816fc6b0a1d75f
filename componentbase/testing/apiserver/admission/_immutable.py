"""What an update may not change, as kube-apiserver's ``Validate*Update`` functions refuse it.

``prepare_update`` runs on the body before anything is filled in: a changed ``metadata.name`` or ``uid``
is refused (kube's ValidateObjectMetaUpdate), and a Service keeps the cluster IPs it was allocated when
the update leaves them out (the Service REST's patchAllocatedValues, so ``kubectl apply`` of a manifest
without a clusterIP keeps it). ``update_errors`` runs on the defaulted result: the pod spec beyond its
mutable fields, ``immutable`` ConfigMaps and Secrets, a Secret's type, a Service's cluster IPs, the
selectors of workloads, a StatefulSet's spec beyond its mutable fields, a Job's selector and template.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from componentbase.util.field import FieldError, Path, forbidden, invalid

from ..apimachinery.resources import Resource
from ._validation import GoValue, raise_invalid

__all__ = ["prepare_update", "update_errors"]

Obj = dict[str, Any]
IMMUTABLE = "field is immutable"
_POD_UPDATABLE = ("pod updates may not change fields other than `spec.containers[*].image`,"
                  "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
                  "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
                  "to 1 if it was previously negative)")
_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                "minReadySeconds")
_STS_FORBIDDEN = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                  "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")
_FIXED_SELECTOR = ("deployments.apps", "replicasets.apps", "daemonsets.apps", "jobs.batch")


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def prepare_update(res: Resource, new: Obj, old: Obj) -> Obj:
    """``new`` with what kube takes from ``old`` filled in; 422 for a changed name or uid."""
    meta, old_meta = _dict(new.get("metadata")), _dict(old.get("metadata"))
    errors: list[FieldError] = []
    for key in ("name", "uid"):
        if meta.get(key) and meta[key] != old_meta.get(key):
            errors.append(invalid(Path("metadata", key), meta[key], IMMUTABLE))
    raise_invalid(res, str(old_meta.get("name", "")), errors)
    if res.key == "services":
        spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
        if "ExternalName" not in (spec.get("type"), old_spec.get("type")) and old_spec.get("clusterIP"):
            spec = dict(spec)
            if not spec.get("clusterIP"):
                spec["clusterIP"] = old_spec["clusterIP"]
                spec.setdefault("clusterIPs", old_spec.get("clusterIPs"))
            if not spec.get("clusterIPs"):
                spec["clusterIPs"] = old_spec.get("clusterIPs") or [spec["clusterIP"]]
            new = dict(new, spec=spec)
    return new


def update_errors(res: Resource, obj: Obj, old: Obj) -> list[FieldError]:
    """What the update of ``old`` to ``obj`` (both defaulted, in one version) may not do."""
    spec, old_spec = _dict(obj.get("spec")), _dict(old.get("spec"))
    key = res.key
    if key == "pods":
        return _pod_spec_update(spec, old_spec)
    if key in ("configmaps", "secrets"):
        return _immutable_data(key, obj, old)
    if key == "services":
        return _cluster_ips(spec, old_spec)
    errors: list[FieldError] = []
    if key in _FIXED_SELECTOR and spec.get("selector") != old_spec.get("selector"):
        errors.append(invalid("spec.selector", GoValue(_label_selector(spec.get("selector"))), IMMUTABLE))
    if key == "statefulsets.apps":
        if {k: v for k, v in spec.items() if k not in _STS_MUTABLE} != {
                k: v for k, v in old_spec.items() if k not in _STS_MUTABLE}:
            errors.append(forbidden("spec", _STS_FORBIDDEN))
    if key == "jobs.batch" and _job_template(spec) != _job_template(old_spec):
        errors.append(invalid("spec.template", GoValue("core.PodTemplateSpec{...}"), IMMUTABLE))
    return errors


def _go_map(labels: Any) -> str:
    if not isinstance(labels, dict):
        return "map[string]string(nil)"
    items = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(labels.items()))
    return "map[string]string{" + items + "}"


def _label_selector(selector: Any) -> str:
    """A LabelSelector as Go prints it in kube's "field is immutable" message."""
    selector = _dict(selector)
    exprs = [e for e in selector.get("matchExpressions") or () if isinstance(e, dict)]
    if exprs:
        shown = ", ".join(
            f'v1.LabelSelectorRequirement{{Key:{json.dumps(e.get("key", ""))}, Operator:'
            f'{json.dumps(e.get("operator", ""))}, Values:[]string{{'
            + ", ".join(json.dumps(v) for v in e.get("values") or ()) + "}}" for e in exprs)
        expressions = "[]v1.LabelSelectorRequirement{" + shown + "}"
    else:
        expressions = "[]v1.LabelSelectorRequirement(nil)"
    return f"v1.LabelSelector{{MatchLabels:{_go_map(selector.get('matchLabels'))}, MatchExpressions:{expressions}}}"


def _job_template(spec: Obj) -> Any:
    """A Job's template without what kube lets a suspended Job's template change (scheduling directives)."""
    template = copy.deepcopy(_dict(spec.get("template")))
    pod = _dict(template.get("spec"))
    for key in ("nodeSelector", "tolerations", "schedulingGates", "affinity"):
        pod.pop(key, None)
    meta = _dict(template.get("metadata"))
    for key in ("labels", "annotations"):
        meta.pop(key, None)
    return template


def _pod_spec_update(spec: Obj, old: Obj) -> list[FieldError]:
    """ValidatePodUpdate: only images, a shorter activeDeadlineSeconds, added tolerations and a negative
    grace period raised to 1 may change; anything else is one Forbidden on ``spec``. ``munged`` is only
    compared, never kept: it copies what it changes and shares the rest with ``spec`` and ``old``."""
    if spec == old:
        return []
    munged = dict(spec)
    for key in ("containers", "initContainers"):
        new_list, old_list = munged.get(key), old.get(key)
        if isinstance(new_list, list) and isinstance(old_list, list) and len(new_list) == len(old_list):
            munged[key] = [dict(c, image=was.get("image")) if isinstance(c, dict) and isinstance(was, dict)
                           and c.get("image") else c for c, was in zip(new_list, old_list, strict=True)]
    deadline, old_deadline = spec.get("activeDeadlineSeconds"), old.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and (old_deadline is None or 0 < deadline <= old_deadline):
        _restore(munged, old, "activeDeadlineSeconds")
    tolerations, old_tolerations = spec.get("tolerations") or [], old.get("tolerations") or []
    if all(t in tolerations for t in old_tolerations):
        _restore(munged, old, "tolerations")
    grace, old_grace = spec.get("terminationGracePeriodSeconds"), old.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and grace == 1:
        _restore(munged, old, "terminationGracePeriodSeconds")
    gates, old_gates = spec.get("schedulingGates") or [], old.get("schedulingGates") or []
    if all(g in old_gates for g in gates):
        _restore(munged, old, "schedulingGates")
    if munged == old:
        return []
    return [forbidden("spec", _POD_UPDATABLE)]


def _restore(munged: Obj, old: Obj, key: str) -> None:
    if key in old:
        munged[key] = old[key]
    else:
        munged.pop(key, None)


def _immutable_data(key: str, obj: Obj, old: Obj) -> list[FieldError]:
    errors: list[FieldError] = []
    if key == "secrets" and obj.get("type") != old.get("type"):
        errors.append(invalid("type", obj.get("type"), IMMUTABLE))
    if old.get("immutable") is True:
        why = "field is immutable when `immutable` is set"
        if obj.get("immutable") is not True:
            errors.append(forbidden("immutable", why))
        for field in ("data", "binaryData") if key == "configmaps" else ("data",):
            if (obj.get(field) or {}) != (old.get(field) or {}):
                errors.append(forbidden(field, why))
    return errors


def _cluster_ips(spec: Obj, old: Obj) -> list[FieldError]:
    """validateUpgradeDowngradeClusterIPs: an allocated cluster IP never changes (ExternalName aside)."""
    if "ExternalName" in (spec.get("type"), old.get("type")):
        return []
    new_ips, old_ips = spec.get("clusterIPs") or [], old.get("clusterIPs") or []
    if spec.get("clusterIP") and spec.get("clusterIP") != old.get("clusterIP") and new_ips == old_ips:
        new_ips = [spec["clusterIP"], *new_ips[1:]]  # kube normalizes clusterIPs from a changed clusterIP
    shown = GoValue("[]string{" + ", ".join(json.dumps(ip) for ip in new_ips) + "}")
    return [invalid(Path("spec", "clusterIPs").index(i), shown, "may not change once set")
            for i, ip in enumerate(old_ips) if i < len(new_ips) and new_ips[i] != ip]

