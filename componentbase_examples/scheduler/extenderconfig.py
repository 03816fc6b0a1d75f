"""The ``extenders`` section of ``KubeSchedulerConfiguration`` v1: its types and kube's validation.

The config is accepted, defaulted and validated as kube-scheduler does; calling the extenders is the
scheduler's business, not the config's.
"""

from __future__ import annotations

import attrs

import componentbase
from componentbase import field
from componentbase.componentconfig import Int64, pointer
from componentbase_examples.scheduler.podinfo import is_extended_resource_name

__all__ = ["Extender", "ExtenderManagedResource", "ExtenderTLSConfig", "validate_extenders"]


@attrs.define(kw_only=True)
class ExtenderTLSConfig:
    """TLS to an extender; the ``*Data`` fields hold PEM as base64 text, as Go's ``[]byte`` in JSON."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = ""


@attrs.define(kw_only=True)
class ExtenderManagedResource:
    name: str = ""
    ignored_by_scheduler: bool = False


@attrs.define(kw_only=True)
class Extender:
    """An HTTP scheduler extender (kube's ``Extender``); an empty verb means the extender does not do it."""

    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: Int64 = Int64(0)
    bind_verb: str = ""
    enable_https: bool = attrs.field(default=False, metadata={componentbase.componentconfig.JSON_NAME: "enableHTTPS"})
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: componentbase.Duration = attrs.field(default=componentbase.Duration(0),
                                                       converter=componentbase.Duration)
    node_cache_capable: bool = False
    managed_resources: list[ExtenderManagedResource] = pointer(factory=list)
    ignorable: bool = False


def _extended_resource_name_errors(path: field.Path, name: str) -> list[field.FieldError]:
    """kube's ``validateExtendedResourceName``: a qualified name, and an extended (not native) resource."""
    problems = componentbase.util.validation.qualified_name(name)
    if problems:
        return [field.invalid(path, name, msg) for msg in problems]
    if not is_extended_resource_name(name):
        return [field.invalid(path, name, "is an invalid extended resource name")]
    return []


def validate_extenders(path: field.Path, extenders: list[Extender]) -> list[field.FieldError]:
    """kube's ``validateExtenders``: prioritizers need a weight, names are extended resources, one binder."""
    errs: list[field.FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, extender in enumerate(extenders):
        epath = path.index(i)
        if extender.prioritize_verb and extender.weight <= 0:
            errs.append(field.invalid(epath.child("weight"), extender.weight,
                                      "must have a positive weight applied to it"))
        if extender.bind_verb:
            binders += 1
        for j, resource in enumerate(extender.managed_resources):
            npath = epath.child("managedResources").index(j).child("name")
            errs += _extended_resource_name_errors(npath, resource.name)
            if resource.name in managed:
                errs.append(field.invalid(npath, resource.name, "duplicate extender managed resource name"))
            managed.add(resource.name)
    if binders > 1:
        errs.append(field.invalid(path, f"found {binders} extenders implementing bind",
                                  "only one extender can implement bind"))
    return errs
