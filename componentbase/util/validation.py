"""apimachinery's ``util/validation`` string checks, with its words: DNS names, label keys and values.

Each check returns the messages apimachinery gives (``[]`` when the value is fine), so a refusal reads
as it does on a cluster (``a lowercase RFC 1123 subdomain must consist of lower case alphanumeric
characters, '-' or '.', ...``). The loopback API server validates objects with them, and the example
scheduler its config, so the two cannot drift apart.
"""

from __future__ import annotations

import re

__all__ = ["config_key", "dns1035_label", "dns1123_label", "dns1123_subdomain", "label_key", "label_value",
           "max_len_error", "port_name", "qualified_name", "regex_error"]

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE = "(" + _KEY + ")?"
_KEY_WORDS = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")


def regex_error(words: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError: the rule, examples, and the regex itself."""
    shown = "".join(f"'{e}', " if i == 0 else f" or '{e}', " for i, e in enumerate(examples))
    return f"{words} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(n: int) -> str:
    """apimachinery's MaxLenError."""
    return f"must be no more than {n} characters"


def _full(fmt: str) -> re.Pattern[str]:
    """The whole value must match, as Go's ``^fmt$`` (Python's ``$`` would also accept a trailing newline)."""
    return re.compile(f"(?:{fmt})\\Z")


_LABEL_RE, _SUBDOMAIN_RE, _DNS1035_RE = _full(_LABEL), _full(_SUBDOMAIN), _full(_DNS1035)
_KEY_RE, _VALUE_RE, _CONFIG_KEY_RE = _full(_KEY), _full(_VALUE), _full("[-._a-zA-Z0-9]+")


def _checked(value: str, limit: int, pattern: re.Pattern[str], words: str, fmt: str, *examples: str) -> list[str]:
    """The length and pattern messages apimachinery gives for ``value``, in its order."""
    errs = [max_len_error(limit)] if len(value) > limit else []
    if not pattern.match(value):
        errs.append(regex_error(words, fmt, *examples))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    """IsDNS1123Subdomain: most object names."""
    return _checked(value, 253, _SUBDOMAIN_RE, "a lowercase RFC 1123 subdomain must consist of lower case "
                    "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                    _SUBDOMAIN, "example.com")


def dns1123_label(value: str) -> list[str]:
    """IsDNS1123Label: namespaces, container and volume names."""
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _LABEL_RE.match(value):
        if _SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                                    "characters or '-', and must start and end with an alphanumeric character",
                                    _LABEL, "my-name", "123-abc"))
    return errs


def dns1035_label(value: str) -> list[str]:
    """IsDNS1035Label: service names."""
    return _checked(value, 63, _DNS1035_RE, "a DNS-1035 label must consist of lower case alphanumeric characters "
                    "or '-', start with an alphabetic character, and end with an alphanumeric character",
                    _DNS1035, "my-name", "abc-123")


def _prefixed_name(value: str, what: str) -> list[str]:
    """An optional DNS subdomain prefix and '/', then a name of at most 63 characters; ``what`` names the
    whole in the message for more than one '/'."""
    parts = value.split("/")
    if len(parts) > 2:
        return [f"{what} " + regex_error(_KEY_WORDS, _KEY, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    errs: list[str] = []
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
        errs.append("name part " + max_len_error(63))
    if not _KEY_RE.match(name):
        errs.append("name part " + regex_error(_KEY_WORDS, _KEY, "MyName", "my.name", "123-abc"))
    return errs


def qualified_name(value: str) -> list[str]:
    """IsQualifiedName: a topology key, a label selector's key."""
    return _prefixed_name(value, "a qualified name")


def label_key(value: str) -> list[str]:
    """IsLabelKey: a label's key (the loopback server also checks annotation keys and finalizers so)."""
    return _prefixed_name(value, "a valid label key")


def label_value(value: str) -> list[str]:
    """IsValidLabelValue."""
    return _checked(value, 63, _VALUE_RE, "a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                    _VALUE, "MyValue", "my_value", "12345")


def config_key(value: str) -> list[str]:
    """A ConfigMap or Secret data key (IsConfigMapKey)."""
    errs = _checked(value, 253, _CONFIG_KEY_RE, "a valid config key must consist of alphanumeric characters, "
                    "'-', '_' or '.'", "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME", "key-name")
    if value in (".", ".."):
        errs.append(f"must not be '{value}'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def port_name(value: str) -> list[str]:
    """IsValidPortName: an IANA service name, as container and service port names must be."""
    errs = [max_len_error(15)] if len(value) > 15 else []
    if not re.match(r"^[-a-z0-9]+$", value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs
