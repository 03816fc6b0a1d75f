"""Static-token authentication (kube-apiserver's --token-auth-file) and a tiny allow-list authorizer.

Policy file: a JSON or YAML list of rules, each naming exactly one of ``user`` or ``group``, plus
``verbs`` (list or ``"*"``) and either ``resources`` (``"pods"``, ``"pods/status"``, ``"*"``; with
optional ``apiGroups`` and ``namespaces``) or ``paths`` (non-resource URLs, a trailing ``*`` matches a
prefix). Members of ``system:masters`` may do everything; everybody else only what a rule allows.

The package ``auth`` holds the rest of authentication and authorization: the union authenticator, client
certificates and the server's CA, ServiceAccount tokens, impersonation, RBAC and its bootstrap policy, and
the review APIs.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery.user import Attributes, User

__all__ = ["Attributes", "Authorizer", "User", "load_policy", "parse_token_file", "read_token_file"]


def parse_token_file(text: str) -> dict[str, User]:
    """Parse ``token,user,uid[,"group1,group2"]`` lines; raise ValueError naming the bad line."""
    tokens: dict[str, User] = {}
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if len(row) < 3 or not row[0].strip() or not row[1].strip():
            raise ValueError(f"line {number}: want token,user,uid[,\"group1,group2\"]")
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        token = row[0].strip()
        if token not in tokens:
            tokens[token] = User(row[1].strip(), row[2].strip(), (*groups, "system:authenticated"))
    if not tokens:
        raise ValueError("no tokens in file")
    return tokens


def read_token_file(path: str) -> dict[str, User]:
    with open(path, encoding="utf-8") as f:
        return parse_token_file(f.read())


def _as_set(value: Any, what: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset([value])
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    raise ValueError(f"{what} must be a string or a list of strings")


@dataclass(frozen=True, slots=True)
class Rule:
    user: str = ""
    group: str = ""
    verbs: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    api_groups: frozenset[str] = frozenset()
    namespaces: frozenset[str] = frozenset()
    paths: frozenset[str] = frozenset()

    def applies_to(self, user: User) -> bool:
        return user.name == self.user if self.user else self.group in user.groups

    def allows(self, a: Attributes) -> bool:
        if "*" not in self.verbs and a.verb not in self.verbs:
            return False
        if not a.resource:
            return any(p == a.path or (p.endswith("*") and a.path.startswith(p[:-1])) for p in self.paths)
        what = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        if "*" not in self.resources and what not in self.resources:
            return False
        if self.api_groups and "*" not in self.api_groups and a.group not in self.api_groups:
            return False
        return not self.namespaces or a.namespace in self.namespaces


def _rule(data: Mapping[str, Any]) -> Rule:
    known = {"user", "group", "verbs", "resources", "apiGroups", "namespaces", "paths"}
    if set(data) - known:
        raise ValueError(f"unknown keys {sorted(set(data) - known)}")
    if bool(data.get("user")) == bool(data.get("group")):
        raise ValueError("name exactly one of user or group")
    rule = Rule(
        user=str(data.get("user") or ""),
        group=str(data.get("group") or ""),
        verbs=_as_set(data.get("verbs"), "verbs"),
        resources=_as_set(data.get("resources"), "resources"),
        api_groups=_as_set(data.get("apiGroups"), "apiGroups"),
        namespaces=_as_set(data.get("namespaces"), "namespaces"),
        paths=_as_set(data.get("paths"), "paths"),
    )
    if not rule.verbs or not (rule.resources or rule.paths):
        raise ValueError("a rule needs verbs and resources or paths")
    return rule


def load_policy(path: str) -> list[Rule]:
    """Read a policy file (JSON, or YAML when it is not JSON); raise ValueError on bad content."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        from ruamel.yaml import YAML  # only policy files written as YAML pay for the import

        data = YAML(typ="safe").load(text)
    if not isinstance(data, list):
        raise ValueError(f"{path}: want a list of rules")
    rules = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise ValueError(f"{path}: rule {i}: want a mapping")
        try:
            rules.append(_rule(item))
        except ValueError as err:
            raise ValueError(f"{path}: rule {i}: {err}") from None
    return rules


@dataclass
class Authorizer:
    rules: list[Rule] = field(default_factory=list)

    @classmethod
    def from_rules(cls, rules: Iterable[Rule]) -> Authorizer:
        return cls(list(rules))

    def decide(self, user: User, a: Attributes) -> tuple[bool, str]:
        if "system:masters" in user.groups:
            return True, "member of system:masters"
        for rule in self.rules:
            if rule.applies_to(user) and rule.allows(a):
                return True, "allowed by policy rule"
        return False, a.describe(user.name)
