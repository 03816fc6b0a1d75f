"""ServiceAccount tokens: the TokenRequest API's JWTs, signed by the server and accepted as bearer tokens.

A token authenticates as ``system:serviceaccount:NS:NAME`` in the groups ``system:serviceaccounts`` and
``system:serviceaccounts:NS``, as kube-apiserver's service account authenticator does, while it has not
expired, names the API server's audience (the issuer, kube's default ``--api-audiences``) and its
ServiceAccount still exists with the same uid. The key (HMAC-SHA256) is made per server, so a token
outlives neither the server nor its service account.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from ..apimachinery.user import User
from ..storage.store import Store

__all__ = ["ServiceAccountTokens", "service_account_groups"]


def service_account_groups(namespace: str) -> list[str]:
    """The groups a ServiceAccount of ``namespace`` is in (kube's ``serviceaccount.MakeGroupNames``)."""
    return ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class ServiceAccountTokens:
    """Signs the tokens ``serviceaccounts/token`` issues and authenticates them."""

    def __init__(self, store: Store, bucket: str, issuer: str) -> None:
        self._key = secrets.token_bytes(32)
        self._store = store
        self._bucket = bucket
        self._issuer = issuer

    def sign(self, unsigned: str) -> str:
        """The JWS signature of ``header.claims`` (base64url, unpadded)."""
        digest = hmac.new(self._key, unsigned.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    def authenticate(self, token: str) -> User | None:
        """The service account ``token`` names, or None when it is not one of ours or no longer valid."""
        parts = token.split(".")
        if len(parts) != 3 or not hmac.compare_digest(self.sign(f"{parts[0]}.{parts[1]}"), parts[2]):
            return None
        try:
            claims: Any = json.loads(_b64decode(parts[1]))
        except (ValueError, binascii.Error):
            return None
        kube = claims.get("kubernetes.io") if isinstance(claims, dict) else None
        if not isinstance(kube, dict) or not isinstance(kube.get("serviceaccount"), dict):
            return None
        audiences = claims.get("aud") or []
        if claims.get("exp", 0) <= time.time() or self._issuer not in audiences:
            return None
        namespace, sa = str(kube.get("namespace") or ""), kube["serviceaccount"]
        with self._store.cond:
            entry = self._store.get(self._bucket, namespace, str(sa.get("name") or ""))
        if entry is None or entry.obj["metadata"].get("uid") != sa.get("uid"):
            return None
        return User(f"system:serviceaccount:{namespace}:{sa.get('name')}", str(sa.get("uid") or ""),
                    (*service_account_groups(namespace), "system:authenticated"))
