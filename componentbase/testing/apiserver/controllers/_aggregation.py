"""kube-controller-manager's ClusterRole aggregation controller: an aggregated ClusterRole's stored rules.

A ClusterRole with an ``aggregationRule`` (``admin``, ``edit``, ``view``, or one of the user's) holds the
rules of every ClusterRole its selectors match. Authorization reads them through the selectors anyway
(``_rbac``); this keeps what is *stored* in step, as kube does, so ``kubectl get clusterrole view -o yaml``
shows the rules a CRD's ``aggregate-to-view`` role added, and a watch sees the role change. Run by the
lifecycle work (``_gc.Collector``) after any ClusterRole is written or removed.
"""

from __future__ import annotations

import copy

from ..auth._rbac import cluster_role_rules
from ..registry._deletion import Deleter

__all__ = ["CLUSTER_ROLES", "aggregate_cluster_roles"]

#: The registry key of ClusterRoles.
CLUSTER_ROLES = "clusterroles.rbac.authorization.k8s.io"


def aggregate_cluster_roles(rest: Deleter) -> None:
    """Rewrite each aggregated ClusterRole whose rules differ from what its selectors collect."""
    res = rest.registry.must("rbac.authorization.k8s.io", "v1", "clusterroles")
    roles = {entry.obj["metadata"]["name"]: entry.obj for entry in rest.store.items(res.bucket, None)}
    for name, role in roles.items():
        if not isinstance(role.get("aggregationRule"), dict):
            continue
        rules = cluster_role_rules(name, roles)  # the stored roles' own rules: copied only to be written
        if rules != (role.get("rules") or []):
            updated = copy.deepcopy(role)
            updated["rules"] = copy.deepcopy(rules)
            rest._write(res, "", updated, dry=False)
