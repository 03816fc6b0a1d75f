"""The configz redactor: secrets in a config never reach ``/configz``.

The rule, on each key of the JSON document (split into words at camelCase, ``_`` and ``-``): a key is
secret when one of its words is ``token``, ``password``, ``passwd``, ``secret``, ``credential(s)`` or
``bearer``, or its last words are ``private key``, ``api key``, ``key data`` or ``cert data`` (kubeconfig's
``client-key-data``), or it is just ``key``; but not when its last word is ``file``, ``path``, ``dir``,
``name``, ``ref`` or ``ttl``: those point at a secret or tune it, they are not one. A secret's strings (all of
them, when the value is a list or a mapping) become ``<redacted>``; empty strings stay empty, so an operator
can still see that nothing is set.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["REDACTED", "is_secret_key", "redact", "redact_value"]

REDACTED = "<redacted>"

_SECRET_WORDS = frozenset({"token", "tokens", "password", "passwd", "secret", "secrets", "credential",
                           "credentials", "bearer"})
_SECRET_ENDINGS = (("private", "key"), ("api", "key"), ("key", "data"), ("cert", "data"))
_REFERENCE_WORDS = frozenset({"file", "path", "dir", "name", "ref", "ttl"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def _words(key: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(key)]


@functools.lru_cache(maxsize=4096)  # configs repeat their keys on every render
def is_secret_key(key: str) -> bool:
    words = _words(key)
    if not words or words[-1] in _REFERENCE_WORDS:
        return False
    if words == ["key"] or _SECRET_WORDS.intersection(words):
        return True
    return any(tuple(words[-2:]) == ending for ending in _SECRET_ENDINGS)


def redact_value(value: Any) -> Any:
    """Every non-empty string in ``value`` replaced by ``<redacted>``."""
    if isinstance(value, str):
        return REDACTED if value else value
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


def redact(name: str, value: Any) -> Any:
    """A ``configz.Redactor``: ``value`` with every secret field masked, at any depth."""
    if isinstance(value, dict):
        return {k: redact_value(v) if is_secret_key(str(k)) else redact(name, v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(name, v) for v in value]
    return value
