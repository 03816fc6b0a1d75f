"""The one check kube's typed objects make that ``map(string, dyn)`` cannot: a field the schema does not
declare. kube compiles a rule against a type per schema node, so ``self.replicsa`` is refused when the CRD
is written (``undefined field 'replicsa'``); the maps this server types objects as would let it through
until evaluated. This walks the rule's ``self.a.b`` chains (and those of comprehension variables) against
the schema and words what it finds as cel-go's checker does."""

from __future__ import annotations

import re
from typing import Any

from ._cost import MACRO, span
from ._values import cel_names

__all__ = ["undefined_field"]

_LITERALS = re.compile(r"""[rRbB]{0,2}(\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')""")
_CHAIN = re.compile(r"(?<![\w.])(self|oldSelf|[A-Za-z_]\w*)((?:\s*\.\s*[A-Za-z_]\w*)+)")
_SEGMENT = re.compile(r"\.\s*([A-Za-z_]\w*)")
_ROOT_META = {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}


def _blank(text: str) -> str:
    """``text`` with the inside of string literals blanked, offsets kept."""
    return _LITERALS.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], text)


def _fields(node: dict[str, Any], root: bool) -> dict[str, Any] | None:
    """The fields CEL knows on ``node`` by their escaped names; None where any name goes (maps, dyn)."""
    props = node.get("properties")
    if node.get("type") != "object" or not isinstance(props, dict) or node.get("x-kubernetes-preserve-unknown-fields"):
        return None
    out: dict[str, Any] = {}
    for name, child in props.items():
        for key in cel_names(name):
            out[key] = child
    if root or node.get("x-kubernetes-embedded-resource"):
        out.update({"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": _ROOT_META})
    return out


def _step(node: Any, name: str, root: bool) -> tuple[Any, bool]:
    """The schema of ``node.name`` and whether the name is known (unknowable names are known)."""
    if not isinstance(node, dict):
        return None, True
    fields = _fields(node, root)
    if fields is None:
        extra = node.get("additionalProperties")
        return (extra if isinstance(extra, dict) else None), True
    return fields.get(name), name in fields


def _element(node: Any) -> Any:
    if not isinstance(node, dict):
        return None
    return node.get("items") if node.get("type") == "array" else node.get("additionalProperties")


def _issue(text: str, offset: int, name: str) -> str:
    line_no = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    line = text[start:end if end >= 0 else len(text)]
    column = offset - start
    return (f"ERROR: <input>:{line_no}:{column + 1}: undefined field '{name}'\n | {line}\n | {'.' * column}^")


def undefined_field(schema: dict[str, Any], text: str, root: bool) -> str | None:
    """cel-go's issue for the first field ``text`` selects that ``schema`` does not declare, or None."""
    plain = _blank(text)
    scopes = []  # (start, end, variable, schema of its elements) of each comprehension
    for m in MACRO.finditer(plain):
        scopes.append((m.end(), span(plain, m.end()), m.group(3), m.group(1), m.start()))
    for m in _CHAIN.finditer(plain):
        head = m.group(1)
        node, at_root = None, False
        if head in ("self", "oldSelf"):
            node, at_root = schema, root
        else:
            inner = [s for s in scopes if s[0] <= m.start() < s[1] and s[2] == head]
            if not inner:
                continue
            receiver = max(inner, key=lambda s: s[0])
            node = _element(_resolve_path(schema, root, receiver[3], scopes, receiver[4]))
        offset = m.start(2)
        for seg in _SEGMENT.finditer(m.group(2)):
            after = m.end(2) if seg.end() == len(m.group(2)) else m.start(2) + seg.end()
            if seg.end() == len(m.group(2)) and plain[after:].lstrip().startswith("("):
                break  # a method call, not a field
            node, known = _step(node, seg.group(1), at_root)
            if not known:
                return _issue(text, offset + seg.start(), seg.group(1))
            at_root = False
            if node is None:
                break
    return None


def _resolve_path(schema: dict[str, Any], root: bool, path: str, scopes: list[Any], pos: int) -> Any:
    head, *rest = [p.strip() for p in path.split(".")]
    if head in ("self", "oldSelf"):
        node: Any = schema
    else:
        inner = [s for s in scopes if s[0] <= pos < s[1] and s[2] == head]
        if not inner:
            return None
        outer = max(inner, key=lambda s: s[0])
        node = _element(_resolve_path(schema, root, outer[3], scopes, outer[4]))
    at_root = root and head in ("self", "oldSelf")
    for name in rest:
        node, _ = _step(node, name, at_root)
        at_root = False
    return node
