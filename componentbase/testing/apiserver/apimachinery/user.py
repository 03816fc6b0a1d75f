"""Who asks and what they ask to do: kube's ``user.Info`` (apiserver/pkg/authentication/user) and
``authorizer.Attributes``, read by every layer that carries a request, so they sit below all of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Attributes", "User"]


@dataclass(frozen=True, slots=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()

    def to_user_info(self) -> dict[str, Any]:
        return {"username": self.name, "uid": self.uid, "groups": list(self.groups)}


@dataclass(frozen=True, slots=True)
class Attributes:
    """What a request (or a SubjectAccessReview) asks to do."""

    verb: str
    resource: str = ""
    subresource: str = ""
    group: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""

    def describe(self, user: str) -> str:
        if not self.resource:
            return f'User "{user}" cannot {self.verb} path "{self.path}"'
        what = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f' in the namespace "{self.namespace}"' if self.namespace else " at the cluster scope"
        return f'User "{user}" cannot {self.verb} resource "{what}" in API group "{self.group}"{where}'
