"""kube-apiserver's validation of what is written: object metadata for every kind, and the pod spec
essentials for pods and the kinds that carry a pod template.

``validate`` returns apimachinery field errors (``componentbase.util.field``) in kube's words and field
paths (``metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of ...``);
the caller turns them into one 422 Invalid, as kube's ``NewInvalid`` does. Rules are those of
apimachinery's ``ValidateObjectMeta`` and core's ``ValidatePodSpec``, kept to what a controller's objects
exercise (names, labels, annotations, finalizers, ownerReferences, containers, ports, resources,
restartPolicy), not the whole of upstream's.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from typing import Any

from componentbase.util import QuantityError, parse_quantity
from componentbase.util.field import ErrorType, FieldError, Path, duplicate, invalid, not_supported, required
from componentbase.util.validation import config_key, dns1123_label, label_key, label_value, port_name

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Resource
from ._formats import NAME_RULES
from ._webhookconfig import CONFIGURATIONS, configuration_errors

__all__ = ["TEMPLATE_PATHS", "GoValue", "as_causes", "raise_invalid", "template_spec", "undecodable", "validate"]

Obj = dict[str, Any]
_ANNOTATIONS_LIMIT = 256 * 1024  # TotalAnnotationSizeLimitB
#: where kinds that run pods keep their pod template
TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "podtemplates": ("template",),
    **dict.fromkeys(("replicationcontrollers", "replicasets.apps", "deployments.apps", "statefulsets.apps",
                     "daemonsets.apps", "jobs.batch"), ("spec", "template")),
    "cronjobs.batch": ("spec", "jobTemplate", "spec", "template"),
}
# restartPolicy values each kind's pods may have (ValidatePodTemplateSpecForReplicaSet, batch's ValidateJobSpec)
_RESTART = {"pods": ("Always", "OnFailure", "Never"), "podtemplates": ("Always", "OnFailure", "Never"),
            "jobs.batch": ("OnFailure", "Never"), "cronjobs.batch": ("OnFailure", "Never")}
_PROTOCOLS = ("SCTP", "TCP", "UDP")
# workloads whose selector must select their own template (apps' ValidateDeploymentSpec and friends)
_SELECTED = ("deployments.apps", "replicasets.apps", "daemonsets.apps", "statefulsets.apps")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_CAUSE_REASONS = {ErrorType.NOT_FOUND: "FieldValueNotFound", ErrorType.REQUIRED: "FieldValueRequired",
                  ErrorType.DUPLICATE: "FieldValueDuplicate", ErrorType.INVALID: "FieldValueInvalid",
                  ErrorType.NOT_SUPPORTED: "FieldValueNotSupported", ErrorType.FORBIDDEN: "FieldValueForbidden",
                  ErrorType.TOO_LONG: "FieldValueTooLong", ErrorType.TOO_MANY: "FieldValueTooMany",
                  ErrorType.INTERNAL: "InternalError"}


def _remembered(check: Callable[[str], list[str]]) -> Callable[[str], tuple[str, ...]]:
    """``check`` (a pure string rule: a name, a label key or value, a data key) with its answers kept: every
    update revalidates the same few label keys and values, names and data keys, each a regular expression."""
    return functools.lru_cache(maxsize=16384)(lambda value: tuple(check(value)))


_NAME_CHECKS = {rule: _remembered(check) for rule, check in NAME_RULES.items()}
_label_key, _label_value, _config_key = _remembered(label_key), _remembered(label_value), _remembered(config_key)


def as_causes(errors: Iterable[FieldError]) -> list[tuple[str, str, str]]:
    """Field errors as a Status's causes: (reason, field, message without the field)."""
    return [(_CAUSE_REASONS[e.type], e.field, e.body()) for e in errors]


def raise_invalid(res: Resource, name: str, errors: list[FieldError]) -> None:
    """kube's 422 Invalid for ``errors``, if there are any."""
    if errors:
        raise ApiError.invalid_fields(res.group, res.kind, name, as_causes(errors))


def undecodable(res: Resource, why: str) -> ApiError:
    """The 400 kube's handlers give a body its decoder refuses (transformDecodeError)."""
    return ApiError.bad_request(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {why}')


class _Undecodable(ValueError):
    """A value Go's decoder would refuse (a malformed quantity): a 400, not a field error."""


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def template_spec(res: Resource, obj: Obj) -> tuple[Path, Obj] | None:
    """The pod spec ``obj`` runs (a pod's own, or its template's) and its path; None for other kinds."""
    path = ("spec",) if res.key == "pods" else TEMPLATE_PATHS.get(res.key)
    if path is None:
        return None
    if res.key != "pods":
        path = (*path, "spec")
    node: Any = obj
    for key in path:
        node = _dict(node).get(key)
    return Path(*path), _dict(node)


def validate(res: Resource, obj: Obj) -> list[FieldError]:
    """What kube-apiserver would refuse in ``obj`` (defaulted, about to be stored) of kind ``res``."""
    errors = validate_meta(res, _dict(obj.get("metadata")))
    if res.key in _SELECTED:
        errors += _selector_matches_template(_dict(obj.get("spec")))
    if res.key == "services":
        errors += _service_ports(_dict(obj.get("spec")))
    if res.key in ("configmaps", "secrets"):
        errors += _data_keys(obj)
    if res.key in CONFIGURATIONS:
        errors += configuration_errors(obj, mutating=res.key == CONFIGURATIONS[0])
    spec = template_spec(res, obj)
    if spec is not None:
        try:
            errors += _pod_spec(res, spec[1], spec[0])
        except _Undecodable as err:
            raise undecodable(res, str(err)) from None
    return errors


# --- metadata ---------------------------------------------------------------------------------


def _name_errors(rule: Callable[[str], Iterable[str]], value: str, path: str, prefix: bool) -> list[FieldError]:
    if prefix and len(value) > 1 and value.endswith("-"):
        value_checked = value[:-1] + "a"  # maskTrailingDash: a generated suffix follows the dash
    else:
        value_checked = value
    return [invalid(path, value, msg) for msg in rule(value_checked)]


def validate_meta(res: Resource, meta: Obj) -> list[FieldError]:
    """apimachinery's ValidateObjectMeta: names by the kind's rule, labels, annotations, finalizers, owners."""
    rule = _NAME_CHECKS.get(res.name_rule, _NAME_CHECKS["subdomain"])
    errors: list[FieldError] = []
    generate = meta.get("generateName")
    if isinstance(generate, str) and generate:
        errors += _name_errors(rule, generate, "metadata.generateName", prefix=True)
    name = meta.get("name")
    if not name:
        errors.append(required("metadata.name", "name or generateName is required"))
    elif isinstance(name, str):
        errors += _name_errors(rule, name, "metadata.name", prefix=False)
    labels = _dict(meta.get("labels"))
    for key in sorted(labels):
        errors += [invalid("metadata.labels", key, msg) for msg in _label_key(key)]
        if isinstance(labels[key], str):
            errors += [invalid("metadata.labels", labels[key], msg) for msg in _label_value(labels[key])]
    annotations = _dict(meta.get("annotations"))
    for key in sorted(annotations):
        errors += [invalid("metadata.annotations", key, msg) for msg in _label_key(key.lower())]
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > _ANNOTATIONS_LIMIT:
        errors.append(FieldError(ErrorType.TOO_LONG, "metadata.annotations",
                                 detail=f"may not be more than {_ANNOTATIONS_LIMIT} bytes"))
    if refs := _list(meta.get("ownerReferences")):
        errors += _owner_references(refs)
    finalizers = [f for f in _list(meta.get("finalizers")) if isinstance(f, str)]
    for finalizer in finalizers:
        errors += [invalid("metadata.finalizers", finalizer, msg) for msg in _label_key(finalizer)]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errors.append(invalid("metadata.finalizers", finalizers,
                              "finalizer orphan and foregroundDeletion cannot be both set"))
    return errors


def _owner_references(refs: list[Any]) -> list[FieldError]:
    path = Path("metadata", "ownerReferences")
    errors: list[FieldError] = []
    controller = ""
    for ref in refs:
        ref = _dict(ref)
        api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
        if not api_version.rpartition("/")[2]:
            errors.append(invalid(path.child("apiVersion"), api_version, "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errors.append(invalid(path.child(key), str(ref.get(key) or ""), "must not be empty"))
        if api_version == "v1" and kind == "Event":
            errors.append(invalid(path, f"{kind}/{ref.get('name', '')}",
                                  '/v1, Kind=Event is disallowed from being an owner'))
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name', '')}"
            if controller:
                errors.append(invalid(path, [f"{_dict(r).get('kind')}/{_dict(r).get('name')}" for r in refs],
                                      'Only one reference can have Controller set to true. Found "true" in '
                                      f"references for {controller} and {current}"))
            else:
                controller = current
    return errors


# --- workloads and services ------------------------------------------------------------------


def _requirement_met(req: Obj, labels: Obj) -> bool:
    key, op, values = req.get("key"), req.get("operator"), _list(req.get("values"))
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    return op == "DoesNotExist" and key not in labels


def _selector_matches_template(spec: Obj) -> list[FieldError]:
    """``spec.selector`` is required, not empty, and selects the template's labels."""
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [required("spec.selector", "")]
    match_labels, exprs = _dict(selector.get("matchLabels")), _list(selector.get("matchExpressions"))
    labels = _dict(_dict(_dict(spec.get("template")).get("metadata")).get("labels"))
    if all(labels.get(k) == v for k, v in match_labels.items()) and all(
            _requirement_met(_dict(e), labels) for e in exprs):
        if match_labels or exprs:
            return []
    shown = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(labels.items()))
    return [invalid("spec.template.metadata.labels", GoValue("map[string]string{" + shown + "}"),
                    "`selector` does not match template `labels`")]


class GoValue:
    """A bad value already in Go's ``%#v`` form (``map[string]string{...}``), printed as is, not quoted."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def _data_keys(obj: Obj) -> list[FieldError]:
    """ConfigMap and Secret keys (IsConfigMapKey), unique across data and binaryData."""
    errors: list[FieldError] = []
    data = _dict(obj.get("data"))
    for field in ("data", "binaryData"):
        for key in _dict(obj.get(field)):
            errors += [invalid(Path(field).key(key), key, msg) for msg in _config_key(key)]
            if field == "binaryData" and key in data:
                errors.append(invalid(Path(field).key(key), key, "duplicate of key present in data"))
    return errors


def _service_ports(spec: Obj) -> list[FieldError]:
    """ValidateService: ports are required but for headless and ExternalName services."""
    if spec.get("type") == "ExternalName" or spec.get("clusterIP") == "None" or _list(spec.get("ports")):
        return []
    return [required("spec.ports", "")]


# --- pod spec ---------------------------------------------------------------------------------


def _pod_spec(res: Resource, spec: Obj, path: Path) -> list[FieldError]:
    """core's ValidatePodSpec essentials: containers, their names, images, ports, resources; restartPolicy."""
    errors: list[FieldError] = []
    containers = _list(spec.get("containers"))
    if not containers:
        errors.append(required(path.child("containers"), ""))
    volumes = _volumes(_list(spec.get("volumes")), path.child("volumes"), errors)
    names: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, c in enumerate(_list(spec.get(key))):
            errors += _container(_dict(c), path.child(key).index(i), names)
            errors += _mounts(_list(_dict(c).get("volumeMounts")), path.child(key).index(i).child("volumeMounts"),
                              volumes)
    policy = spec.get("restartPolicy")
    allowed = _RESTART.get(res.key, ("Always",))
    if not policy:
        errors.append(required(path.child("restartPolicy"), ""))
    elif policy not in allowed:
        errors.append(not_supported(path.child("restartPolicy"), policy, allowed))
    return errors


def _volumes(volumes: list[Any], path: Path, errors: list[FieldError]) -> set[str]:
    """Volume names: DNS labels, unique. Returns them, for the mounts to refer to."""
    names: set[str] = set()
    for i, volume in enumerate(volumes):
        name, at = _dict(volume).get("name"), path.index(i).child("name")
        if not name:
            errors.append(required(at, ""))
        elif isinstance(name, str):
            errors += [invalid(at, name, msg) for msg in dns1123_label(name)]
            if name in names:
                errors.append(duplicate(at, name))
            names.add(name)
    return names


def _mounts(mounts: list[Any], path: Path, volumes: set[str]) -> list[FieldError]:
    """A mount names a volume of the pod and a path, unique in its container (ValidateVolumeMounts)."""
    errors: list[FieldError] = []
    paths: set[str] = set()
    for i, mount in enumerate(mounts):
        mount, at = _dict(mount), path.index(i)
        name, where = mount.get("name"), mount.get("mountPath")
        if not name:
            errors.append(required(at.child("name"), ""))
        elif name not in volumes:
            errors.append(FieldError(ErrorType.NOT_FOUND, at.child("name"), name))
        if not where:
            errors.append(required(at.child("mountPath"), ""))
        elif where in paths:
            errors.append(invalid(at.child("mountPath"), where, "must be unique"))
        paths.add(str(where))
    return errors


def _container(c: Obj, path: Path, names: set[str]) -> list[FieldError]:
    errors: list[FieldError] = []
    name = c.get("name")
    if not name:
        errors.append(required(path.child("name"), ""))
    elif isinstance(name, str):
        errors += [invalid(path.child("name"), name, msg) for msg in dns1123_label(name)]
        if name in names:
            errors.append(duplicate(path.child("name"), name))
        names.add(name)
    if not c.get("image"):
        errors.append(required(path.child("image"), ""))
    pull = c.get("imagePullPolicy")
    if pull and pull not in _PULL_POLICIES:
        errors.append(not_supported(path.child("imagePullPolicy"), pull, _PULL_POLICIES))
    errors += _ports(_list(c.get("ports")), path.child("ports"))
    errors += _resources(_dict(c.get("resources")), path.child("resources"))
    return errors


def _ports(ports: list[Any], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        port, at = _dict(port), path.index(i)
        name = port.get("name")
        if isinstance(name, str) and name:
            msgs = port_name(name)
            errors += [invalid(at.child("name"), name, msg) for msg in msgs]
            if not msgs and name in seen:
                errors.append(duplicate(at.child("name"), name))
            seen.add(name)
        number = port.get("containerPort")
        if not number:
            errors.append(required(at.child("containerPort"), ""))
        elif isinstance(number, int) and not 1 <= number <= 65535:
            errors.append(invalid(at.child("containerPort"), number, "must be between 1 and 65535, inclusive"))
        host = port.get("hostPort")
        if isinstance(host, int) and host and not 1 <= host <= 65535:
            errors.append(invalid(at.child("hostPort"), host, "must be between 1 and 65535, inclusive"))
        protocol = port.get("protocol")
        if protocol not in _PROTOCOLS:
            errors.append(not_supported(at.child("protocol"), protocol, _PROTOCOLS) if protocol
                          else required(at.child("protocol"), ""))
    return errors


def _resource_name_errors(name: str, path: Path) -> list[FieldError]:
    if "/" in name:
        return [invalid(path, name, msg) for msg in label_key(name)]
    if name in _STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-"):
        return []
    return [invalid(path, name, "must be a standard resource for containers")]


def _resources(resources: Obj, path: Path) -> list[FieldError]:
    """Names, non-negative quantities, and requests within limits (ValidateContainerResourceRequirements)."""
    errors: list[FieldError] = []
    limits: dict[str, tuple[Any, Any]] = {}
    for kind in ("limits", "requests"):
        for name, value in _dict(resources.get(kind)).items():
            at = path.child(kind).key(name)
            errors += _resource_name_errors(name, at)
            try:
                quantity = parse_quantity(value)
            except (QuantityError, TypeError, ValueError):
                raise _Undecodable("quantities must match the regular expression "
                                   "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None
            if quantity < 0:
                errors.append(invalid(at, str(value), "must be greater than or equal to 0"))
            overcommit = "/" not in name or name.startswith("kubernetes.io/")  # IsOvercommitAllowed
            if kind == "limits":
                limits[name] = (quantity, value)
            elif name in limits and quantity != limits[name][0] and not overcommit:
                errors.append(invalid(path.child("requests"), str(value),
                                      f"must be equal to {name} limit of {limits[name][1]}"))
            elif name in limits and quantity > limits[name][0]:
                errors.append(invalid(path.child("requests"), str(value),
                                      f"must be less than or equal to {name} limit of {limits[name][1]}"))
            elif name not in limits and not overcommit:
                errors.append(required(path.child("limits"), "Limit must be set for non overcommitable resources"))
    return errors

