"""A container's environment as the kubelet builds it: ``envFrom``, then ``env``, with ``$(VAR)`` expansion.

Values come from ConfigMaps and Secrets through the resource manager and from the pod itself
(``fieldRef``). A missing reference that is not ``optional`` is an error naming it, so the pod fails to
start with a reason the user can act on, and starts once the ConfigMap or Secret appears.
"""

from __future__ import annotations

import re
from typing import Any

from componentbase_examples.virtual_kubelet.resources import ResourceManager

__all__ = ["EnvError", "container_env", "expand"]

Obj = dict[str, Any]

_FIELD_INDEX = re.compile(r"^metadata\.(labels|annotations)\['(.+)'\]$")


class EnvError(ValueError):
    """A reference in a container's environment cannot be resolved."""


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion: defined names are replaced, ``$$`` escapes, the rest stays."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end != -1:
                    name = text[i + 2:end]
                    out.append(env[name] if name in env else text[i:end + 1])
                    i = end + 1
                    continue
        out.append(ch)
        i += 1
    return "".join(out)


def _field_value(pod: Obj, path: str) -> str:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.podIP": status.get("podIP"),
        "status.hostIP": status.get("hostIP"),
    }
    if path in simple:
        return str(simple[path] or "")
    m = _FIELD_INDEX.match(path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    raise EnvError(f"unsupported fieldRef fieldPath {path!r}")


def _from_source(rm: ResourceManager, namespace: str, kind: str, ref: Obj) -> dict[str, str] | None:
    name = str(ref.get("name") or "")
    data = rm.configmap_data(namespace, name) if kind == "configmap" else rm.secret_data(namespace, name)
    if data is None and not ref.get("optional"):
        raise EnvError(f'{kind} "{namespace}/{name}" not found')
    return data


def _key_ref(rm: ResourceManager, namespace: str, kind: str, ref: Obj) -> str | None:
    data = _from_source(rm, namespace, kind, ref)
    if data is None:
        return None
    key = str(ref.get("key") or "")
    if key not in data:
        if ref.get("optional"):
            return None
        raise EnvError(f'couldn\'t find key {key} in {kind} "{namespace}/{ref.get("name")}"')
    return data[key]


def _value_from(rm: ResourceManager, pod: Obj, source: Obj) -> str | None:
    namespace = str((pod.get("metadata") or {}).get("namespace") or "")
    if "configMapKeyRef" in source:
        return _key_ref(rm, namespace, "configmap", source["configMapKeyRef"] or {})
    if "secretKeyRef" in source:
        return _key_ref(rm, namespace, "secret", source["secretKeyRef"] or {})
    if "fieldRef" in source:
        return _field_value(pod, str((source["fieldRef"] or {}).get("fieldPath") or ""))
    raise EnvError(f"unsupported env valueFrom {sorted(source)}")


def container_env(rm: ResourceManager, pod: Obj, container: Obj) -> dict[str, str]:
    """The environment ``container`` of ``pod`` runs with, in the kubelet's order of precedence."""
    namespace = str((pod.get("metadata") or {}).get("namespace") or "")
    env: dict[str, str] = {}
    for source in container.get("envFrom") or ():
        prefix = str(source.get("prefix") or "")
        if "configMapRef" in source:
            data = _from_source(rm, namespace, "configmap", source["configMapRef"] or {})
        elif "secretRef" in source:
            data = _from_source(rm, namespace, "secret", source["secretRef"] or {})
        else:
            continue
        for key, value in (data or {}).items():
            env[prefix + key] = value
    for var in container.get("env") or ():
        name = str(var.get("name") or "")
        if var.get("valueFrom"):
            resolved = _value_from(rm, pod, var["valueFrom"])
            if resolved is not None:
                env[name] = resolved
        else:
            env[name] = expand(str(var.get("value") or ""), env)
    return env
