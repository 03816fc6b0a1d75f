"""The string formats kube-apiserver checks names, label keys and values against, with apimachinery's words.

Each check returns the messages apimachinery's ``util/validation`` gives (``[]`` when the value is fine),
so a refused object reads here as it does on a cluster:
``a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ...``.
``NAME_RULES`` maps the rule a resource declares for its object names to its check.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["NAME_RULES", "config_key", "dns1035_label", "dns1123_label", "dns1123_subdomain", "label_value",
           "port_name", "qualified_name"]

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE = "(" + _KEY + ")?"
_KEY_WORDS = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")


def _regex_error(words: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError: the rule, examples, and the regex itself."""
    shown = "".join(f"'{e}', " if i == 0 else f" or '{e}', " for i, e in enumerate(examples))
    return f"{words} (e.g. {shown}regex used for validation is '{fmt}')"


def _full(fmt: str) -> re.Pattern[str]:
    return re.compile(f"^{fmt}$")


_LABEL_RE, _SUBDOMAIN_RE, _DNS1035_RE = _full(_LABEL), _full(_SUBDOMAIN), _full(_DNS1035)
_KEY_RE, _VALUE_RE, _CONFIG_KEY_RE = _full(_KEY), _full(_VALUE), _full("[-._a-zA-Z0-9]+")


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _checked(value: str, limit: int, pattern: re.Pattern[str], words: str, fmt: str, *examples: str) -> list[str]:
    """The length and pattern messages apimachinery gives for ``value``, in its order."""
    errs = [_max_len(limit)] if len(value) > limit else []
    if not pattern.match(value):
        errs.append(_regex_error(words, fmt, *examples))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    return _checked(value, 253, _SUBDOMAIN_RE, "a lowercase RFC 1123 subdomain must consist of lower case "
                    "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                    _SUBDOMAIN, "example.com")


def dns1123_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _LABEL_RE.match(value):
        if _SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                                     "characters or '-', and must start and end with an alphanumeric character",
                                     _LABEL, "my-name", "123-abc"))
    return errs


def dns1035_label(value: str) -> list[str]:
    return _checked(value, 63, _DNS1035_RE, "a DNS-1035 label must consist of lower case alphanumeric characters "
                    "or '-', start with an alphabetic character, and end with an alphanumeric character",
                    _DNS1035, "my-name", "abc-123")


def config_key(value: str) -> list[str]:
    """A ConfigMap or Secret data key (IsConfigMapKey)."""
    errs = _checked(value, 253, _CONFIG_KEY_RE, "a valid config key must consist of alphanumeric characters, "
                    "'-', '_' or '.'", "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME", "key-name")
    if value in (".", ".."):
        errs.append(f"must not be '{value}'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def _path_segment(value: str) -> list[str]:
    """apimachinery's IsValidPathSegmentName: RBAC objects may be named anything a URL path can carry."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def qualified_name(value: str) -> list[str]:
    """A label key (also an annotation key or a finalizer name): an optional DNS subdomain prefix and '/'."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a valid label key " + _regex_error(_KEY_WORDS, _KEY, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _KEY_RE.match(name):
        errs.append("name part " + _regex_error(_KEY_WORDS, _KEY, "MyName", "my.name", "123-abc"))
    return errs


def label_value(value: str) -> list[str]:
    return _checked(value, 63, _VALUE_RE, "a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                    _VALUE, "MyValue", "my_value", "12345")


def port_name(value: str) -> list[str]:
    """An IANA service name, as container and service port names must be."""
    errs = [_max_len(15)] if len(value) > 15 else []
    if not re.match(r"^[-a-z0-9]+$", value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _cronjob_name(value: str) -> list[str]:
    """A CronJob's name leaves room for the 11 characters its Jobs' names add."""
    return dns1123_subdomain(value) + ([_max_len(52)] if len(value) > 52 else [])


#: a resource's ``name_rule`` -> the check of its object names
NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "subdomain": dns1123_subdomain,
    "label": dns1123_label,
    "dns1035": dns1035_label,
    "path": _path_segment,
    "cronjob": _cronjob_name,
}
