"""Kubernetes' ``format`` library (k8s.io/apiserver/pkg/cel/library/format.go): ``format.dns1123Label()``
and its siblings, ``format.named("...")`` and ``<format>.validate(s)``, with apimachinery's messages.

kube's ``validate`` returns ``optional<list<string>>`` (none when valid) and ``format.named`` an optional
format. cel-expr-python cannot return an optional from a Python function, so the evaluated rule is rewritten
(``rewrite``): the Python functions return a list (empty when valid) or a format, and the rule wraps them in
CEL's own optionals, ``optional.ofNonZeroValue(...)`` and ``... ? optional.of(...) : optional.none()``, so
``hasValue()``, ``value()`` and ``orValue()`` behave as kube's. The rule as written is what gets type-checked,
so its compile errors keep their columns.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import re
from collections.abc import Callable

from ._cost import span
from ._strings import CelError, Overloads

__all__ = ["FORMAT_FUNCTIONS", "rewrite"]

_F = "\x01format"
_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + r"(\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QNAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " \
             "character"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}", re.IGNORECASE)
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError, its double space before ``or`` included."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _matches(fmt: str, value: str) -> bool:
    return re.fullmatch(fmt, value) is not None


def _dns1123_label(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _matches(_LABEL, value):
        errs.append("must not contain dots" if _matches(_SUBDOMAIN, value) else _regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
            "and end with an alphanumeric character", _LABEL, "my-name", "123-abc"))
    return errs


def _dns1123_subdomain(value: str) -> list[str]:
    errs = ["must be no more than 253 characters"] if len(value) > 253 else []
    if not _matches(_SUBDOMAIN, value):
        errs.append(_regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                                 "'-' or '.', and must start and end with an alphanumeric character",
                                 _SUBDOMAIN, "example.com"))
    return errs


def _dns1035_label(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _matches(_DNS1035, value):
        errs.append(_regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                                 "with an alphabetic character, and end with an alphanumeric character",
                                 _DNS1035, "my-name", "abc-123"))
    return errs


def _qualified_name(value: str) -> list[str]:
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a qualified name " + _regex_error(_QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        errs += ["prefix part must be non-empty"] if not prefix else \
            ["prefix part " + e for e in _dns1123_subdomain(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _matches(_QNAME, name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc"))
    return errs


def _label_value(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _matches(f"({_QNAME})?", value):
        errs.append(_regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                                 "'_' or '.', and must start and end with an alphanumeric character",
                                 f"({_QNAME})?", "MyValue", "my_value", "12345"))
    return errs


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A name prefix as generateName's: a trailing dash stands for the generated suffix (maskTrailingDash)."""
    return lambda v: check(v[:-2] + "a" if len(v) > 1 and v.endswith("-") else v)


def _uri(value: str) -> list[str]:
    """Go's url.ParseRequestURI's refusals, as its url.Error prints them."""
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", value)
    why = ("empty url" if not value else
           "net/url: invalid control character in URL" if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value) else
           "missing protocol scheme" if value.startswith(":") else
           "invalid URI for request" if not scheme and not value.startswith("/") else "")
    return [f"parse {json.dumps(value)}: {why}"] if why else []


def _base64(value: str) -> list[str]:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


def _date(value: str) -> list[str]:
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            datetime.date.fromisoformat(value)
            return []
    except ValueError:
        pass
    return ["invalid date"]


def _datetime(value: str) -> list[str]:
    if not _DATE_TIME.fullmatch(value):
        return ["invalid datetime"]
    try:
        datetime.date.fromisoformat(value[:10])
    except ValueError:
        return ["invalid datetime"]
    return []


_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _dns1123_label, "dns1123Subdomain": _dns1123_subdomain, "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name, "dns1123LabelPrefix": _prefix(_dns1123_label),
    "dns1123SubdomainPrefix": _prefix(_dns1123_subdomain), "dns1035LabelPrefix": _prefix(_dns1035_label),
    "labelValue": _label_value, "uri": _uri, "uuid": lambda v: [] if _UUID.fullmatch(v) else
    ["does not match the UUID format"], "byte": _base64, "date": _date, "datetime": _datetime,
}


def _validate(fmt: object, value: str) -> list[str]:
    if not isinstance(fmt, dict) or fmt.get(_F) not in _FORMATS:
        raise CelError("no such overload")
    return _FORMATS[str(fmt[_F])](value)


def _named(name: str) -> dict[str, str]:
    if name not in _FORMATS:
        raise CelError(f"no such format: {name}")  # the rewritten rule asks format.__known first
    return {_F: name}


FORMAT_FUNCTIONS: dict[str, Overloads] = {
    "validate": [("format_validate", "ms", True, _validate)],
    "format.named": [("format_named", "s", False, _named)],
    "format.__known": [("format_known", "s", False, lambda name: name in _FORMATS)],
    **{f"format.{name}": [(f"format_{name}", "", False, lambda name=name: {_F: name})] for name in _FORMATS},
}
_CALL = re.compile(r"(?<![\w.])format\s*\.\s*(\w+)\s*\(")
_MEMBER = re.compile(r"\s*\.\s*(\w+)\s*\(")
_LITERALS = re.compile(r"""[rRbB]{0,2}(\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')""")


def _blank(text: str) -> str:
    return _LITERALS.sub(lambda m: m.group(0)[0] + "_" * (len(m.group(0)) - 2) + m.group(0)[-1], text)


def rewrite(text: str) -> str:
    """``text`` with kube's optionals built in CEL around the format functions (see the module's docstring);
    ``text`` itself when it calls none."""
    if "format" not in text:
        return text
    return _rewrite(text, _blank(text))


def _rewrite(text: str, blank: str) -> str:
    out, pos = [], 0
    for m in _CALL.finditer(blank):
        if m.start() < pos:
            continue
        end = span(blank, m.end())
        chain_end, validated = end, False
        while (member := _MEMBER.match(blank, chain_end)) is not None:
            chain_end = span(blank, member.end())
            if member.group(1) == "validate":
                validated = True
                break
        if not validated:
            chain_end = end
        chain = _named_call(text[m.start():chain_end], blank[m.start():chain_end], m)
        out += [text[pos:m.start()], f"optional.ofNonZeroValue({chain})" if validated else chain]
        pos = chain_end
    return "".join(out) + text[pos:]


def _named_call(chain: str, blank: str, m: re.Match[str]) -> str:
    """``format.named(x)...`` with its head as an optional built in CEL; the inner text rewritten too."""
    head_end = span(blank, m.end() - m.start())
    args = _rewrite(chain[m.end() - m.start():head_end - 1], blank[m.end() - m.start():head_end - 1])
    rest = _rewrite(chain[head_end:], blank[head_end:])
    if m.group(1) != "named":
        return chain[:m.end() - m.start()] + args + ")" + rest
    head = f"(cel.bind(__fmt, {args}, format.__known(__fmt) ? optional.of(format.named(__fmt)) : optional.none()))"
    return head + rest
