"""The RBAC of rendered manifests, as the loopback server's allow-list policy for one ServiceAccount.

The loopback server on main enforces a policy file of allow rules (docs/testing.md), not RBAC objects. Until
it authorizes with RBAC itself (another branch adds that), the roles the manifests bind to a ServiceAccount
are turned into those rules, so a component runs with exactly the permissions the manifests grant. Two
things are looser than RBAC: ``resourceNames`` are not narrowed to (the rule allows every name), and
aggregated ClusterRoles are not supported (the manifests have none).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def service_account_user(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def policy_for(docs: Iterable[dict[str, Any]], namespace: str, name: str) -> list[dict[str, Any]]:
    """Allow rules for the ServiceAccount ``namespace/name`` from the (Cluster)Roles its bindings in ``docs`` name."""
    docs = list(docs)
    roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in docs
             if d["kind"] in ("ClusterRole", "Role")}
    user = service_account_user(namespace, name)
    rules: list[dict[str, Any]] = []
    for binding in docs:
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if not any(s.get("kind") == "ServiceAccount" and s.get("name") == name and s.get("namespace") == namespace
                   for s in binding.get("subjects") or []):
            continue
        where = binding["metadata"].get("namespace", "") if binding["kind"] == "RoleBinding" else ""
        ref = binding["roleRef"]
        role = roles.get((ref["kind"], where if ref["kind"] == "Role" else "", ref["name"]))
        if role is None:
            raise ValueError(f"{binding['kind']} {binding['metadata']['name']} names a missing {ref['kind']} "
                             f"{ref['name']}")
        for rule in role.get("rules") or []:
            allow: dict[str, Any] = {"user": user, "verbs": rule["verbs"]}
            if rule.get("nonResourceURLs"):
                allow["paths"] = rule["nonResourceURLs"]
            else:
                allow.update(resources=rule["resources"], apiGroups=rule.get("apiGroups") or [""])
                if where:
                    allow["namespaces"] = [where]
            rules.append(allow)
    return rules
