"""``NAME_RULES``: the rule a resource declares for its object names, and its check (``[]`` when the name is
fine, else apimachinery's messages; the common checks are ``componentbase.util.validation``'s)."""

from __future__ import annotations

from collections.abc import Callable

from componentbase.util.validation import dns1035_label, dns1123_label, dns1123_subdomain, max_len_error

__all__ = ["NAME_RULES"]


def _path_segment(value: str) -> list[str]:
    """apimachinery's IsValidPathSegmentName: RBAC objects may be named anything a URL path can carry."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def _cronjob_name(value: str) -> list[str]:
    """A CronJob's name leaves room for the 11 characters its Jobs' names add."""
    return dns1123_subdomain(value) + ([max_len_error(52)] if len(value) > 52 else [])


#: a resource's ``name_rule`` -> the check of its object names
NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "subdomain": dns1123_subdomain,
    "label": dns1123_label,
    "dns1035": dns1035_label,
    "path": _path_segment,
    "cronjob": _cronjob_name,
}
