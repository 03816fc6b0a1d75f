"""Which field labels each kind's field selectors accept, and the refusal kube-apiserver gives for the rest.

kube-apiserver converts every field selector label through the kind's field label conversion before
listing or watching: a label the kind does not register is a 400, so a typo in a controller's selector
fails against a real cluster. The kinds below register their own conversion (kube's
``AddFieldLabelConversionFunc`` calls for core/v1, batch/v1 and certificates.k8s.io); every other kind
takes ``DefaultMetaV1FieldSelectorConversion``: ``metadata.name`` and ``metadata.namespace``, plus a custom
resource's ``selectableFields``. apps/v1 ReplicaSets and StatefulSets and events.k8s.io Events, whose
registrations were not checked against kube's source here, accept any label, as before.
"""

from __future__ import annotations

from .errors import ApiError

__all__ = ["field_path"]

_META = ("metadata.name", "metadata.namespace")
_EVENT = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
          "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
          "reportingComponent", "source", "type")
_NOT_SUPPORTED = "field label not supported: {}"

#: (group, kind) -> (the labels it accepts, the refusal of any other).
_REGISTERED: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("", "Pod"): ((*_META, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                   "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName",
                   "spec.host"), _NOT_SUPPORTED),
    ("", "Node"): (("metadata.name", "spec.unschedulable"), _NOT_SUPPORTED),
    ("", "ReplicationController"): ((*_META, "status.replicas"), _NOT_SUPPORTED),
    ("", "Event"): ((*_META, *_EVENT), _NOT_SUPPORTED),
    ("", "Namespace"): (("metadata.name", "status.phase"), _NOT_SUPPORTED),
    ("", "Secret"): ((*_META, "type"), _NOT_SUPPORTED),
    ("", "Service"): ((*_META, "spec.clusterIP", "spec.type"), _NOT_SUPPORTED),
    ("batch", "Job"): ((*_META, "status.successful"), 'field label "{}" not supported for batchv1.Job'),
    ("certificates.k8s.io", "CertificateSigningRequest"): (("metadata.name", "spec.signerName"), _NOT_SUPPORTED),
}
_UNCHECKED = {("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("events.k8s.io", "Event")}
#: Labels that are not their field's JSON path.
_PATHS = {("", "Event", "source"): "source.component", ("", "Pod", "spec.host"): "spec.nodeName"}


def field_path(group: str, kind: str, label: str, selectable: tuple[str, ...] = ()) -> str:
    """The JSON path a field selector's ``label`` reads on a ``kind``; a 400 as kube's when it has no such label.

    ``selectable`` is a custom resource version's ``selectableFields`` (their paths without the leading dot).
    """
    if (group, kind) in _UNCHECKED:
        return label
    registered = _REGISTERED.get((group, kind))
    if registered is None:
        if label in _META or label in selectable:
            return label
        raise ApiError.bad_request(
            f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"')
    labels, refusal = registered
    if label not in labels:
        raise ApiError.bad_request(refusal.format(label))
    return _PATHS.get((group, kind, label), label)
