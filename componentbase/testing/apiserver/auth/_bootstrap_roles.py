"""kube-apiserver's default RBAC policy (bootstrappolicy), as data, turned into the objects it stores at start.

Read from kube's policy; the roles components and users reach for are here, the controllers' own
``system:controller:*`` roles are not. ``clusterrole NAME`` opens a role; ``+key=value`` adds a label
and ``<key=value`` an aggregationRule selector (matchLabels). ``role NS/NAME`` opens a namespaced Role.
Rule lines read ``VERBS GROUPS RESOURCES [RESOURCE_NAMES]`` (comma lists, ``core`` for the legacy
group) or ``VERBS url PATHS``; an indented line continues the one before. ``clusterrolebinding NAME
ROLE SUBJECT...`` and ``rolebinding NS/NAME ROLE SUBJECT...`` bind ``user:X``, ``group:X`` or
``sa:NS:NAME``.
"""

from __future__ import annotations

from typing import Any

from ._rbac import cluster_role_rules

__all__ = ["bootstrap_objects"]

_AGG = "rbac.authorization.k8s.io/aggregate-to-"
_RW = "create,delete,deletecollection,patch,update"
_R = "get,list,watch"
_EVENTS = "create,patch,update core,events.k8s.io events"

_POLICY = f"""
clusterrole cluster-admin
* * *
* url *
clusterrole system:discovery
get url /api,/api/*,/apis,/apis/*,/healthz,/livez,/openapi,/openapi/*,/readyz,/version,/version/
clusterrole system:public-info-viewer
get url /healthz,/livez,/readyz,/version,/version/
clusterrole system:monitoring
get url /healthz,/healthz/*,/livez,/livez/*,/metrics,/metrics/slis,/readyz,/readyz/*
clusterrole system:basic-user
create authorization.k8s.io selfsubjectaccessreviews,selfsubjectrulesreviews
create authentication.k8s.io selfsubjectreviews
clusterrole system:auth-delegator
create authentication.k8s.io tokenreviews
create authorization.k8s.io subjectaccessreviews
clusterrole admin <{_AGG}admin=true
clusterrole edit +{_AGG}admin=true <{_AGG}edit=true
clusterrole view +{_AGG}edit=true <{_AGG}view=true
clusterrole system:aggregate-to-admin +{_AGG}admin=true
create authorization.k8s.io localsubjectaccessreviews
{_RW},get,list,watch rbac.authorization.k8s.io rolebindings,roles
clusterrole system:aggregate-to-edit +{_AGG}edit=true
{_R} core pods/attach,pods/exec,pods/portforward,pods/proxy,secrets,services/proxy
impersonate core serviceaccounts
{_RW} core pods,pods/attach,pods/exec,pods/portforward,pods/proxy
create core pods/eviction
{_RW} core configmaps,events,persistentvolumeclaims,replicationcontrollers,replicationcontrollers/scale,secrets,
    serviceaccounts,services,services/proxy
create core serviceaccounts/token
{_RW} apps daemonsets,deployments,deployments/rollback,deployments/scale,replicasets,replicasets/scale,
    statefulsets,statefulsets/scale
{_RW} autoscaling horizontalpodautoscalers
{_RW} batch cronjobs,jobs
{_RW} policy poddisruptionbudgets
{_RW} networking.k8s.io ingresses,networkpolicies
{_RW},get,list,watch coordination.k8s.io leases
clusterrole system:aggregate-to-view +{_AGG}view=true
{_R} core configmaps,endpoints,persistentvolumeclaims,persistentvolumeclaims/status,pods,replicationcontrollers,
    replicationcontrollers/scale,serviceaccounts,services,services/status
{_R} core bindings,events,limitranges,namespaces/status,pods/log,pods/status,replicationcontrollers/status,
    resourcequotas,resourcequotas/status
{_R} core namespaces
{_R} discovery.k8s.io endpointslices
{_R} apps controllerrevisions,daemonsets,daemonsets/status,deployments,deployments/scale,deployments/status,
    replicasets,replicasets/scale,replicasets/status,statefulsets,statefulsets/scale,statefulsets/status
{_R} autoscaling horizontalpodautoscalers,horizontalpodautoscalers/status
{_R} batch cronjobs,cronjobs/status,jobs,jobs/status
{_R} policy poddisruptionbudgets,poddisruptionbudgets/status
{_R} networking.k8s.io ingresses,ingresses/status,networkpolicies
clusterrole system:kube-scheduler
{_EVENTS}
create coordination.k8s.io leases
get,update coordination.k8s.io leases kube-scheduler
{_R} core nodes
delete,get,list,watch core pods
create core bindings,pods/binding
patch,update core pods/status
{_R} core replicationcontrollers,services
{_R} apps,extensions replicasets
{_R} apps statefulsets
{_R} policy poddisruptionbudgets
{_R} core persistentvolumeclaims,persistentvolumes
create authentication.k8s.io tokenreviews
create authorization.k8s.io subjectaccessreviews
{_R} storage.k8s.io csinodes
{_R} core namespaces
{_R} storage.k8s.io csidrivers
{_R} storage.k8s.io csistoragecapacities
clusterrole system:volume-scheduler
get,list,patch,update,watch core persistentvolumes
{_R} storage.k8s.io storageclasses
get,list,patch,update,watch core persistentvolumeclaims
clusterrole system:kube-controller-manager
{_EVENTS}
create coordination.k8s.io leases
get,update coordination.k8s.io leases kube-controller-manager
create core secrets,serviceaccounts
delete core secrets
get core configmaps,namespaces,secrets,serviceaccounts
update core secrets,serviceaccounts
create authentication.k8s.io tokenreviews
create authorization.k8s.io subjectaccessreviews
list,watch * *
create core serviceaccounts/token
clusterrole system:node
create authentication.k8s.io tokenreviews
create authorization.k8s.io localsubjectaccessreviews,subjectaccessreviews
{_R} core services
create,get,list,watch core nodes
patch,update core nodes/status
patch,update core nodes
create,patch,update core events
{_R} core pods
create,delete core pods
patch,update core pods/status
create core pods/eviction
{_R} core configmaps,secrets
get core persistentvolumeclaims,persistentvolumes
get core endpoints
create,get,list,watch certificates.k8s.io certificatesigningrequests
create,delete,get,patch,update coordination.k8s.io leases
get storage.k8s.io volumeattachments
create core serviceaccounts/token
get,patch,update core persistentvolumeclaims/status
{_R} storage.k8s.io csidrivers
create,delete,get,patch,update storage.k8s.io csinodes
{_R} node.k8s.io runtimeclasses
clusterrole system:node-proxier
list,watch core endpoints,services
{_R} core nodes
{_EVENTS}
list,watch discovery.k8s.io endpointslices
clusterrole system:kubelet-api-admin
{_R} core nodes
proxy core nodes
* core nodes/log,nodes/metrics,nodes/proxy,nodes/stats
clusterrole system:service-account-issuer-discovery
get url /.well-known/openid-configuration,/openid/v1/jwks
role kube-system/extension-apiserver-authentication-reader
{_R} core configmaps extension-apiserver-authentication
role kube-system/system::leader-locking-kube-scheduler
watch core configmaps
get,update core configmaps kube-scheduler
role kube-system/system::leader-locking-kube-controller-manager
watch core configmaps
get,update core configmaps kube-controller-manager
clusterrolebinding cluster-admin cluster-admin group:system:masters
clusterrolebinding system:monitoring system:monitoring group:system:monitoring
clusterrolebinding system:discovery system:discovery group:system:authenticated
clusterrolebinding system:basic-user system:basic-user group:system:authenticated
clusterrolebinding system:public-info-viewer system:public-info-viewer group:system:authenticated
    group:system:unauthenticated
clusterrolebinding system:node-proxier system:node-proxier user:system:kube-proxy
clusterrolebinding system:kube-controller-manager system:kube-controller-manager user:system:kube-controller-manager
clusterrolebinding system:kube-scheduler system:kube-scheduler user:system:kube-scheduler
clusterrolebinding system:volume-scheduler system:volume-scheduler user:system:kube-scheduler
clusterrolebinding system:node system:node
clusterrolebinding system:service-account-issuer-discovery system:service-account-issuer-discovery
    group:system:serviceaccounts
rolebinding kube-system/system::extension-apiserver-authentication-reader
    extension-apiserver-authentication-reader user:system:kube-controller-manager user:system:kube-scheduler
rolebinding kube-system/system::leader-locking-kube-scheduler system::leader-locking-kube-scheduler
    user:system:kube-scheduler sa:kube-system:kube-scheduler
rolebinding kube-system/system::leader-locking-kube-controller-manager
    system::leader-locking-kube-controller-manager user:system:kube-controller-manager
    sa:kube-system:kube-controller-manager
"""

_RBAC = "rbac.authorization.k8s.io"
_META = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}


def _split(column: str) -> list[str]:
    return ["" if c == "core" else c for c in column.split(",")]


def _rule(line: str) -> dict[str, Any]:
    words = line.split()
    if words[1] == "url":
        return {"verbs": _split(words[0]), "nonResourceURLs": words[2].split(",")}
    rule: dict[str, Any] = {"verbs": _split(words[0]), "apiGroups": _split(words[1]),
                            "resources": words[2].split(",")}
    if len(words) > 3:
        rule["resourceNames"] = words[3].split(",")
    return rule


def _meta(qualified: str) -> dict[str, Any]:
    namespace, _, name = qualified.rpartition("/")
    meta: dict[str, Any] = {"name": name, "labels": dict(_META["labels"]),
                            "annotations": dict(_META["annotations"])}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _subject(word: str) -> dict[str, Any]:
    kind, _, rest = word.partition(":")
    if kind == "sa":
        namespace, _, name = rest.partition(":")
        return {"kind": "ServiceAccount", "name": name, "namespace": namespace}
    return {"kind": kind.capitalize(), "apiGroup": _RBAC, "name": rest}


def _lines() -> list[str]:
    """The policy's lines, an indented line continuing the one before (after a comma: the same list)."""
    lines: list[str] = []
    for line in _POLICY.strip().splitlines():
        if line.startswith(" "):
            lines[-1] += ("" if lines[-1].endswith(",") else " ") + line.strip()
        else:
            lines.append(line)
    return lines


def bootstrap_objects() -> list[tuple[str, dict[str, Any]]]:
    """(plural, object) for every default role and binding, in the order they must be created; the
    aggregated ClusterRoles (admin, edit, view) carry the rules kube's aggregation controller writes."""
    objects = _objects()
    roles = {o["metadata"]["name"]: o for plural, o in objects if plural == "clusterroles"}
    for name, role in roles.items():
        if "aggregationRule" in role:
            role["rules"] = cluster_role_rules(name, roles)
    return objects


def _objects() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    role: dict[str, Any] = {}
    for line in _lines():
        words = line.split()
        if words[0] in ("clusterrole", "role"):
            kind = "ClusterRole" if words[0] == "clusterrole" else "Role"
            role = {"kind": kind, "apiVersion": f"{_RBAC}/v1", "metadata": _meta(words[1]), "rules": []}
            selectors = [dict([w[1:].split("=", 1)]) for w in words[2:] if w.startswith("<")]
            role["metadata"]["labels"].update(w[1:].split("=", 1) for w in words[2:] if w.startswith("+"))
            if selectors:
                role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": s} for s in selectors]}
            out.append(("clusterroles" if kind == "ClusterRole" else "roles", role))
        elif words[0] in ("clusterrolebinding", "rolebinding"):
            cluster = words[0] == "clusterrolebinding"
            binding = {"kind": "ClusterRoleBinding" if cluster else "RoleBinding", "apiVersion": f"{_RBAC}/v1",
                       "metadata": _meta(words[1]),
                       "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole" if cluster else "Role",
                                   "name": words[2]},
                       "subjects": [_subject(w) for w in words[3:]]}
            out.append(("clusterrolebindings" if cluster else "rolebindings", binding))
        else:
            role["rules"].append(_rule(line))
    return out
