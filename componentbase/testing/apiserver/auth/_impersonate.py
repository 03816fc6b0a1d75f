"""``Impersonate-User``, ``-Group``, ``-Uid`` and ``-Extra-*``: kubectl's ``--as``, as kube-apiserver takes them.

The requester must be allowed the verb ``impersonate`` on each thing asked for (``users``, ``groups``,
``serviceaccounts`` in their namespace, ``uids`` and ``userextras`` in ``authentication.k8s.io``); the request
then runs as that user: a ServiceAccount with its two groups unless groups were given, everybody but
``system:anonymous`` in ``system:authenticated``. So a test can check a controller's RBAC with
``kubectl auth can-i --as=system:serviceaccount:NS:NAME`` on an admin kubeconfig. Extras are authorized
and then dropped: the server's users carry none.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.user import Attributes, User
from ..wire._http import Headers
from ._authn import check
from ._sa_tokens import service_account_groups

__all__ = ["impersonated"]

_SA_PREFIX = "system:serviceaccount:"
_AUTH_GROUP = "authentication.k8s.io"


def _reference(kind: str, name: str, namespace: str = "", field_path: str = "", api_version: str = "") -> str:
    """A corev1.ObjectReference as Go's ``%v`` prints it, for kube's "without impersonating a user" error."""
    return "{" + " ".join((kind, namespace, name, "", api_version, "", field_path)) + "}"


def impersonated(headers: Headers, user: User, authorizer: Any, enforce: bool) -> User:
    """The user a request acts as: ``user`` itself, or whom its ``Impersonate-*`` headers name if allowed."""
    if not headers.has_prefix("impersonate-"):  # nearly every request: no need to look for each header
        return user
    name = headers.get("Impersonate-User") or ""
    groups = [g for g in headers.get_all("Impersonate-Group") or () if g]
    uid = headers.get("Impersonate-Uid") or ""
    # Impersonate-Extra-<key>: the key is percent-encoded, and compared lower-cased (as kube does)
    extras = [(urllib.parse.unquote(key[len("impersonate-extra-"):]).lower(), value) for key, value in headers.items()
              if key.lower().startswith("impersonate-extra-")]
    if not (name or groups or uid or extras):
        return user
    allow: Callable[[Attributes, str], None] = (
        (lambda attrs, key: check(authorizer, user, attrs, key)) if enforce else (lambda attrs, key: None))
    if not name:
        asked = [_reference("Group", g) for g in groups]
        asked += [_reference("UserExtra", v, field_path=k, api_version=f"{_AUTH_GROUP}/v1") for k, v in extras]
        if uid:
            asked.append(_reference("UID", uid, api_version=f"{_AUTH_GROUP}/v1"))
        raise ApiError(500, "InternalError", f"Internal error occurred: requested [{' '.join(asked)}] without "
                       "impersonating a user")
    if name.startswith(_SA_PREFIX) and name.count(":") == 3:
        namespace, sa = name[len(_SA_PREFIX):].split(":")
        allow(Attributes("impersonate", "serviceaccounts", namespace=namespace, name=sa), "serviceaccounts")
        if not groups:
            groups = service_account_groups(namespace)
    else:
        allow(Attributes("impersonate", "users", name=name), "users")
    for group in groups:
        allow(Attributes("impersonate", "groups", name=group), "groups")
    if uid:
        allow(Attributes("impersonate", "uids", group=_AUTH_GROUP, name=uid), f"uids.{_AUTH_GROUP}")
    for key, value in extras:
        allow(Attributes("impersonate", "userextras", key, _AUTH_GROUP, name=value),
              f"userextras.{_AUTH_GROUP}")
    if name == "system:anonymous":
        groups = groups if "system:unauthenticated" in groups else [*groups, "system:unauthenticated"]
    elif not {"system:authenticated", "system:unauthenticated"} & set(groups):
        groups = [*groups, "system:authenticated"]
    return User(name, uid, tuple(groups))
