"""CustomResourceDefinitions: validated and defaulted as apiextensions-apiserver does, their status kept
(NamesAccepted, Established, storedVersions), and their served versions registered as resources.

kube-apiserver's controllers establish a CRD a moment after it is stored; here the same write does it,
so a created CRD is served before its creation is answered. CRDs also load from files at start, as
envtest's ``CRDDirectoryPaths`` does.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..admission._celhook import crd_rule_errors
from ..admission._conversion import converter_for
from ..admission._validation import as_causes
from ..admission._webhookclient import WebhookClient
from ..admission._webhookconfig import conversion_errors
from ..apimachinery.errors import ApiError
from ..apimachinery.resources import CRUD_VERBS, Converter, Registry, Resource, ScalePaths
from ..wire._json import loads
from ..wire._wire import now_rfc3339
from ._schema import Cause, go_value, structural_errors

__all__ = ["CRD_KEY", "Crds", "read_crd_files"]

CRD_KEY = "customresourcedefinitions.apiextensions.k8s.io"
_GROUP, _KIND = "apiextensions.k8s.io", "CustomResourceDefinition"
_SCOPES = ("Cluster", "Namespaced")


def _spec(crd: dict[str, Any]) -> dict[str, Any]:
    spec = crd.get("spec")
    return spec if isinstance(spec, dict) else {}


def _versions(crd: dict[str, Any]) -> list[dict[str, Any]]:
    versions = _spec(crd).get("versions")
    return [v for v in versions if isinstance(v, dict)] if isinstance(versions, list) else []


def _storage_version(crd: dict[str, Any]) -> str:
    return next((str(v.get("name")) for v in _versions(crd) if v.get("storage")), "")


def _validate(crd: dict[str, Any]) -> list[Cause]:
    spec, name = _spec(crd), (crd.get("metadata") or {}).get("name", "")
    names: dict[str, Any] = spec["names"] if isinstance(spec.get("names"), dict) else {}
    errors: list[Cause] = []
    group, plural = spec.get("group") or "", names.get("plural") or ""
    if not group:
        errors.append(("FieldValueRequired", "spec.group", "Required value"))
    elif "." not in group:
        errors.append(("FieldValueInvalid", "spec.group",
                       f"Invalid value: {go_value(group)}: should be a domain with at least one dot"))
    for key in ("plural", "kind"):
        if not names.get(key):
            errors.append(("FieldValueRequired", f"spec.names.{key}", "Required value"))
    if group and plural and name != f"{plural}.{group}":
        errors.append(("FieldValueInvalid", "metadata.name",
                       f'Invalid value: {go_value(name)}: must be spec.names.plural+"."+spec.group'))
    if spec.get("scope") not in _SCOPES:
        why = ("Required value" if not spec.get("scope") else
               f"Unsupported value: {go_value(spec['scope'])}: supported values: \"Cluster\", \"Namespaced\"")
        errors.append(("FieldValueRequired" if not spec.get("scope") else "FieldValueNotSupported",
                       "spec.scope", why))
    versions = _versions(crd)
    if sum(1 for v in versions if v.get("storage")) != 1:
        errors.append(("FieldValueInvalid", "spec.versions", "Invalid value: "
                       f"{json.dumps([v.get('name') for v in versions])}: "
                       "must have exactly one version marked as storage version"))
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not version.get("name"):
            errors.append(("FieldValueRequired", f"{path}.name", "Required value"))
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        errors.extend(structural_errors(schema, f"{path}.schema.openAPIV3Schema"))
        scale = (version.get("subresources") or {}).get("scale")
        if isinstance(scale, dict) and not scale.get("specReplicasPath"):
            errors.append(("FieldValueRequired", f"{path}.subresources.scale.specReplicasPath", "Required value"))
    return errors + as_causes(conversion_errors(spec)) + crd_rule_errors(crd)


def _condition(kind: str, reason: str, message: str, old: list[dict[str, Any]], status: str = "True"
               ) -> dict[str, Any]:
    prev = next((c for c in old if c.get("type") == kind), None)
    stamp = prev["lastTransitionTime"] if prev and prev.get("status") == status else now_rfc3339()
    return {"type": kind, "status": status, "lastTransitionTime": stamp, "reason": reason, "message": message}


class Crds:
    """The CRD side of the server; every method runs under the store's lock."""

    def __init__(self, registry: Registry, client: WebhookClient | None = None) -> None:
        self.registry = registry
        self.client = client or WebhookClient()  # calls the conversion webhooks (``_conversion``)

    def admit(self, crd: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        """``crd`` defaulted, validated (422 naming the fields) and with the status kube's controllers set."""
        crd = dict(crd)
        spec = crd["spec"] = dict(_spec(crd))
        names = spec["names"] = dict(spec.get("names") or {})
        if names.get("kind"):
            names.setdefault("singular", str(names["kind"]).lower())
            names.setdefault("listKind", f"{names['kind']}List")
        spec.setdefault("conversion", {"strategy": "None"})
        errors = _validate(crd)
        if errors:
            raise ApiError.invalid_fields(_GROUP, _KIND, (crd.get("metadata") or {}).get("name", ""), errors)
        old_status = (old or {}).get("status") or {}
        conditions = old_status.get("conditions") or []
        conflict = self._conflict(spec, names)
        stored = list(old_status.get("storedVersions") or [])
        if _storage_version(crd) not in stored:
            stored.append(_storage_version(crd))
        if conflict:
            new_conditions = [_condition("NamesAccepted", "KindConflict", conflict, conditions, "False"),
                              _condition("Established", "NotAccepted", "not all names are accepted", conditions,
                                         "False")]
            accepted = old_status.get("acceptedNames") or {"plural": "", "kind": ""}
        else:
            new_conditions = [_condition("NamesAccepted", "NoConflicts", "no conflicts found", conditions),
                              _condition("Established", "InitialNamesAccepted",
                                         "the initial names have been accepted", conditions)]
            accepted = {k: names[k] for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories")
                        if names.get(k)}
        crd["status"] = {"conditions": new_conditions, "acceptedNames": accepted, "storedVersions": stored}
        return crd

    def _conflict(self, spec: dict[str, Any], names: dict[str, Any]) -> str:
        """Why the names clash with another resource of the group (kube's NamesAccepted=False), or ""."""
        for res in self.registry.resources():
            if res.group != spec.get("group") or res.plural == names.get("plural"):
                continue
            if res.kind == names.get("kind"):
                return f'"{names["kind"]}" is already in use'
            taken = set(names.get("shortNames") or ()) & set(res.short_names)
            if taken:
                return f'"{sorted(taken)[0]}" is already in use'
        return ""

    def sync(self, crd: dict[str, Any]) -> None:
        """Serve the CRD's served versions as they are now (and nothing it no longer serves)."""
        spec, names = _spec(crd), _spec(crd).get("names") or {}
        self.registry.unregister(spec.get("group", ""), names.get("plural", ""))
        established = any(c.get("type") == "Established" and c.get("status") == "True"
                          for c in (crd.get("status") or {}).get("conditions") or ())
        if not established:
            return
        resources = [self._resource(spec, names, v, converter_for(crd, v["name"], self.client))
                     for v in spec.get("versions") or () if v.get("served")]
        self.registry.register(*resources)

    @staticmethod
    def _resource(spec: dict[str, Any], names: dict[str, Any], version: dict[str, Any], convert: Converter
                  ) -> Resource:
        group = spec["group"]
        subs = version.get("subresources") or {}
        scale = subs.get("scale")
        return Resource(
            group, version["name"], names["kind"], names["plural"], spec["scope"] == "Namespaced",
            singular=names.get("singular", ""), short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()), verbs=CRUD_VERBS,
            subresources=("status",) if isinstance(subs.get("status"), dict) else (),
            scale=ScalePaths(scale["specReplicasPath"], scale.get("statusReplicasPath") or ".status.replicas",
                        scale.get("labelSelectorPath") or "") if isinstance(scale, dict) else None,
            convert=convert,
            schema=(version.get("schema") or {}).get("openAPIV3Schema"),
            selectable_fields=tuple(str(f.get("jsonPath", "")).lstrip(".")
                                    for f in version.get("selectableFields") or () if isinstance(f, dict)))

    def bucket(self, crd: dict[str, Any]) -> Resource | None:
        """A served resource of the CRD, through which its stored objects can be removed."""
        spec = _spec(crd)
        for res in self.registry.resources():
            if res.group == spec.get("group") and res.plural == (spec.get("names") or {}).get("plural"):
                return res
        return None

    def forget(self, crd: dict[str, Any]) -> None:
        spec = _spec(crd)
        self.registry.unregister(spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))


def read_crd_files(paths: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every CustomResourceDefinition in the YAML or JSON files of ``paths`` (folders or files), in name
    order, with the file each came from; other kinds are skipped, as envtest skips them. ValueError names
    the file that cannot be read."""
    import yaml  # type: ignore[import-untyped]  # PyYAML, a dependency of kubernetes; only with CRD files

    # libyaml's loader: big generated CRDs take milliseconds, not the tenths of a second a pure-Python
    # parser takes; YAML 1.1, as kubectl's own YAML reader
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            files += [os.path.join(path, n) for n in sorted(os.listdir(path))
                      if n.endswith((".yaml", ".yml", ".json"))]
        elif os.path.exists(path):
            files.append(path)
        else:
            raise ValueError(f"{path}: no such file or directory")
    out = []
    for file in files:
        try:
            with open(file, encoding="utf-8") as f:
                docs = list(yaml.load_all(f, Loader=loader))
        except (OSError, yaml.YAMLError, UnicodeDecodeError) as err:
            mark = getattr(err, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark is not None else ""
            raise ValueError(f"{file}: {where}{getattr(err, 'problem', None) or err}") from None
        for doc in docs:
            items = doc.get("items") if isinstance(doc, dict) and doc.get("kind", "").endswith("List") else [doc]
            for item in items or ():
                if isinstance(item, dict) and item.get("kind") == _KIND:
                    out.append((file, loads(json.dumps(item, default=str).encode())))
    return out
