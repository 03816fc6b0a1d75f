"""Label selectors parsed as apimachinery's ``labels.Parse`` parses them, with its error messages.

A lexer of identifiers, the keywords ``in``/``notin`` and the symbols ``= == != ! ( ) , > <``, then a
parser of comma-separated requirements, each checked as ``labels.NewRequirement`` checks it: a qualified
key, valid label values, one integer for ``>``/``<``. The server's list, watch and delete-collection
answers a 400 with ``unable to parse requirement: ...`` where kube does, so a controller's malformed
selector fails here as on a cluster instead of matching nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from componentbase.util import field
from componentbase.util.validation import label_key, label_value

from .errors import ApiError

__all__ = ["parse_label_selector"]

Match = Callable[[dict[str, str]], bool]

_SYMBOLS = frozenset({")", ",", "!", "==", "=", ">", "<", "!=", "("})
_SPECIAL = set("=!(),><")
_KEYWORDS = ("in", "notin")
_BINARY = "in, notin, =, ==, !=, gt, lt"
_ID, _END, _ERROR = "id", "end", "error"
_INTEGER = re.compile(r"^[+-]?[0-9]+$")


def _lex(text: str) -> list[tuple[str, str]]:
    """(token, literal) pairs: a symbol's token is itself, ``in``/``notin`` their own, the rest identifiers."""
    tokens, i = [], 0
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i == len(text):
            tokens.append((_END, ""))
            return tokens
        if text[i] in _SPECIAL:
            j, last = i, None
            while j < len(text) and text[j] in _SPECIAL:
                if text[i:j + 1] in _SYMBOLS:
                    last = j + 1
                elif last is not None:
                    break
                j += 1
            if last is None:
                tokens.append((_ERROR, f"error expected: keyword found '{text[i:j]}'"))
                return tokens
            tokens.append((text[i:last], text[i:last]))
            i = last
            continue
        j = i
        while j < len(text) and text[j] not in _SPECIAL and text[j] not in " \t\r\n":
            j += 1
        word = text[i:j]
        tokens.append((word if word in _KEYWORDS else _ID, word))
        i = j


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[str, str]:
        tok, lit = self.tokens[min(self.pos, len(self.tokens) - 1)]
        return (_ID, lit) if values and tok in _KEYWORDS else (tok, lit)

    def take(self, values: bool = True) -> tuple[str, str]:
        got = self.peek(values)
        self.pos += 1
        return got

    def requirements(self) -> list[Match]:
        found: list[Match] = []
        while True:
            tok, lit = self.peek()
            if tok == _END:
                return found
            if tok not in (_ID, "!"):
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                found.append(self.requirement())
            except ValueError as err:
                raise ValueError(f"unable to parse requirement: {err}") from None
            tok, lit = self.take()
            if tok == _END:
                return found
            if tok != ",":
                raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            if self.peek()[0] not in (_ID, "!"):
                raise ValueError(f"found '{self.peek()[1]}', expected: identifier after ','")

    def requirement(self) -> Match:
        negated = self.peek()[0] == "!"
        if negated:
            self.take()
        tok, key = self.take()
        if tok != _ID:
            raise ValueError(f"found '{key}', expected: identifier")
        if errors := label_key(key):  # kube's parser has no path for the key: Go prints a nil one as <nil>
            raise ValueError(str(field.invalid("<nil>", key, "; ".join(errors))))
        if negated or self.peek()[0] in (_END, ","):
            return (lambda labels: key not in labels) if negated else (lambda labels: key in labels)
        op, lit = self.take(values=False)
        if op not in ("in", "notin", "=", "==", "!=", ">", "<"):
            raise ValueError(f"found '{lit}', expected: {_BINARY}")
        values = self.values() if op in _KEYWORDS else [self.exact()]
        return _requirement(key, op, values)

    def values(self) -> list[str]:
        tok, lit = self.take()
        if tok != "(":
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok == ")":
            self.take()
            return [""]
        if tok not in (_ID, ","):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        found = self.identifiers()
        tok, lit = self.take()
        if tok != ")":
            raise ValueError(f"found '{lit}', expected: ')'")
        return found

    def identifiers(self) -> list[str]:
        """kube's parseIdentifiersList: ``a,b``, with an empty value wherever a comma has nothing beside it."""
        found: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _ID:
                found.add(lit)
                after, lit = self.peek()
                if after == ")":
                    return sorted(found)
                if after != ",":
                    raise ValueError(f"found '{lit}', expected: ',' or ')'")
            elif tok == ",":
                if not found:
                    found.add("")
                after = self.peek()[0]
                if after == ")":
                    found.add("")
                    return sorted(found)
                if after == ",":
                    self.take()
                    found.add("")
            else:
                raise ValueError(f"found '{lit}', expected: ',', or identifier")

    def exact(self) -> str:
        if self.peek()[0] in (_END, ","):
            return ""
        tok, lit = self.take()
        if tok != _ID:
            raise ValueError(f"found '{lit}', expected: identifier")
        return lit


def _requirement(key: str, op: str, values: list[str]) -> Match:
    problems = []
    if op in ("<", ">"):
        problems += [field.invalid(field.Path("values").index(i), v,
                                   "for 'Gt', 'Lt' operators, the value must be an integer")
                     for i, v in enumerate(values) if not _INTEGER.match(v)]
    for i, v in enumerate(values):
        if errors := label_value(v):
            problems.append(field.invalid(field.Path("values").index(i).key(key), v, "; ".join(errors)))
    if problems:
        raise ValueError(str(problems[0]) if len(problems) == 1 else "[" + ", ".join(map(str, problems)) + "]")
    if op in ("=", "=="):
        return lambda labels: labels.get(key) == values[0]
    if op == "!=":
        return lambda labels: labels.get(key) != values[0]
    if op == "in":
        return lambda labels: key in labels and labels[key] in values
    if op == "notin":
        return lambda labels: labels.get(key) not in values
    bound = int(values[0])
    return lambda labels: _compare(labels.get(key), bound, op)


def _compare(value: str | None, bound: int, op: str) -> bool:
    try:
        number = int(value or "")
    except ValueError:
        return False
    return number > bound if op == ">" else number < bound


def parse_label_selector(text: str) -> list[Match]:
    """The requirements of ``text``, each a test of an object's labels; kube's 400 when it does not parse."""
    try:
        return _Parser(text).requirements()
    except ValueError as err:
        raise ApiError.bad_request(str(err)) from None
