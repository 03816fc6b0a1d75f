"""The built-in resources, as data: one line each, as ``kubectl api-resources`` would list them.

Under a ``[group/version]`` line, columns: kind, plural, scope (N namespaced, C cluster), short names,
categories, subresources, verbs (``crud`` or a comma list); ``-`` for none. Groups appear in kube-apiserver's
priority order, which is the order ``/apis`` lists them in. Resources that share storage with another
version (events.k8s.io Events, autoscaling/v1 HPAs) get their converter from ``_convert``.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from ..apimachinery.resources import CRUD_VERBS, Resource, ScalePaths

__all__ = ["builtin_resources"]

_TABLE = """
[v1]
Binding bindings N - - - create
ConfigMap configmaps N cm - - crud
Endpoints endpoints N ep - - crud
Event events N ev - - crud
LimitRange limitranges N limits - - crud
Namespace namespaces C ns - status,finalize crud
Node nodes C no - status crud
PersistentVolumeClaim persistentvolumeclaims N pvc - status crud
PersistentVolume persistentvolumes C pv - status crud
Pod pods N po all status,binding,eviction crud
PodTemplate podtemplates N - - - crud
ReplicationController replicationcontrollers N rc all status,scale crud
ResourceQuota resourcequotas N quota - status crud
Secret secrets N - - - crud
ServiceAccount serviceaccounts N sa - token crud
Service services N svc all status crud
[apps/v1]
ControllerRevision controllerrevisions N - - - crud
DaemonSet daemonsets N ds all status crud
Deployment deployments N deploy all status,scale crud
ReplicaSet replicasets N rs all status,scale crud
StatefulSet statefulsets N sts all status,scale crud
[events.k8s.io/v1]
Event events N ev - - crud
[authentication.k8s.io/v1]
SelfSubjectReview selfsubjectreviews C - - - create
TokenReview tokenreviews C - - - create
[authorization.k8s.io/v1]
LocalSubjectAccessReview localsubjectaccessreviews N - - - create
SelfSubjectAccessReview selfsubjectaccessreviews C - - - create
SelfSubjectRulesReview selfsubjectrulesreviews C - - - create
SubjectAccessReview subjectaccessreviews C - - - create
[autoscaling/v2]
HorizontalPodAutoscaler horizontalpodautoscalers N hpa all status crud
[autoscaling/v1]
HorizontalPodAutoscaler horizontalpodautoscalers N hpa all status crud
[batch/v1]
CronJob cronjobs N cj all status crud
Job jobs N - all status crud
[certificates.k8s.io/v1]
CertificateSigningRequest certificatesigningrequests C csr - status,approval crud
[networking.k8s.io/v1]
IngressClass ingressclasses C - - - crud
Ingress ingresses N ing - status crud
IPAddress ipaddresses C ip - - crud
NetworkPolicy networkpolicies N netpol - - crud
ServiceCIDR servicecidrs C - - status crud
[policy/v1]
PodDisruptionBudget poddisruptionbudgets N pdb - status crud
[rbac.authorization.k8s.io/v1]
ClusterRoleBinding clusterrolebindings C - - - crud
ClusterRole clusterroles C - - - crud
RoleBinding rolebindings N - - - crud
Role roles N - - - crud
[storage.k8s.io/v1]
CSIDriver csidrivers C - - - crud
CSINode csinodes C - - - crud
CSIStorageCapacity csistoragecapacities N - - - crud
StorageClass storageclasses C sc - - crud
VolumeAttachment volumeattachments C - - status crud
VolumeAttributesClass volumeattributesclasses C vac - - crud
[admissionregistration.k8s.io/v1]
MutatingWebhookConfiguration mutatingwebhookconfigurations C - api-extensions - crud
ValidatingAdmissionPolicy validatingadmissionpolicies C - api-extensions status crud
ValidatingAdmissionPolicyBinding validatingadmissionpolicybindings C - api-extensions - crud
ValidatingWebhookConfiguration validatingwebhookconfigurations C - api-extensions - crud
[apiextensions.k8s.io/v1]
CustomResourceDefinition customresourcedefinitions C crd,crds api-extensions status crud
[scheduling.k8s.io/v1]
PriorityClass priorityclasses C pc - - crud
[coordination.k8s.io/v1]
Lease leases N - - - crud
[node.k8s.io/v1]
RuntimeClass runtimeclasses C - - - crud
[discovery.k8s.io/v1]
EndpointSlice endpointslices N - - - crud
"""


# kube's name rule (by plural, each unique among the built-ins) for kinds whose names are not DNS subdomains:
# ValidateNamespaceName, ValidateServiceName, ValidateCronJob's 52 characters, ValidateRBACName
_NAME_RULES = {"namespaces": "label", "services": "dns1035", "cronjobs": "cronjob",
               **dict.fromkeys(("roles", "rolebindings", "clusterroles", "clusterrolebindings"), "path")}


def _names(column: str) -> tuple[str, ...]:
    return () if column == "-" else tuple(column.split(","))


@functools.cache
def builtin_resources() -> tuple[Resource, ...]:
    """The table above as ``Resource``s (immutable, so shared by every server), converters attached."""
    from ..storage._convert import builtin_converter

    out = []
    group = version = ""
    for line in _TABLE.strip().splitlines():
        if line.startswith("["):
            group, _, version = line.strip("[]").rpartition("/")
            continue
        kind, plural, scope, short, categories, subs, verbs = line.split()
        res = Resource(group, version, kind, plural, scope == "N", short_names=_names(short),
                       categories=_names(categories), verbs=CRUD_VERBS if verbs == "crud" else _names(verbs),
                       subresources=_names(subs), scale=ScalePaths() if "scale" in subs else None,
                       name_rule=_NAME_RULES.get(plural, "subdomain"))
        converter = builtin_converter(res)
        out.append(res if converter is None else replace(res, bucket=converter[0], convert=converter[1]))
    return tuple(out)
