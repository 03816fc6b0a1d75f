"""The CEL environment kube-apiserver compiles CRD rules in: ``self`` (and ``oldSelf``) typed from the
schema node, the standard library with its macros, the optional and bindings extensions, and
Kubernetes' libraries (``_strings``, ``_k8slib``).

Object nodes are typed ``map(string, dyn)``, not kube's per-schema object types, so a rule naming a field
the schema lacks compiles here and fails when evaluated (``no such key``); everything else the checker
refuses (unknown functions, wrong argument types on typed values, syntax) is refused here too, with cel-go's
wording, which cel-cpp shares.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]  # ships .pyi files but no py.typed
from cel_expr_python.ext import ext_bindings, ext_math, ext_optional  # type: ignore[import-untyped]

from ._format import FORMAT_FUNCTIONS, rewrite
from ._k8slib import K8S_FUNCTIONS
from ._strings import LIST_FUNCTIONS, STRING_FUNCTIONS, CelError

__all__ = ["OLD_LIST", "CelError", "cel_type", "compile_expr", "compile_in", "env_for", "policy_env"]

T = cel.Type
#: the variable optionalOldSelf rules read oldSelf from: a list of zero or one old value
OLD_LIST = "__oldSelves"
_KINDS = {"s": T.STRING, "i": T.INT, "u": T.UINT, "f": T.DOUBLE, "b": T.BOOL, "y": T.BYTES, "l": T.List(T.DYN),
          "m": T.Map(T.STRING, T.DYN), "t": T.TIMESTAMP, "r": T.DURATION}
_ANY = "siufbylmtr"  # a parameter of any kind: one overload per kind, as cel-cpp dispatches on the kind


def _guard(impl: Callable[..., Any]) -> Callable[..., Any]:
    """Errors of a library function become CEL errors with their message, never a Python traceback."""
    def call(*args: Any) -> Any:
        try:
            return impl(*args)
        except CelError:
            raise
        except (ValueError, TypeError, ArithmeticError, KeyError, IndexError) as err:
            raise CelError(str(err)) from None
    return call


def _declarations() -> list[Any]:
    decls = []
    for table in (STRING_FUNCTIONS, LIST_FUNCTIONS, K8S_FUNCTIONS, FORMAT_FUNCTIONS):
        for name, overloads in table.items():
            expanded = [(f"{oid}_{k}", kinds.replace("*", k), member, impl) if "*" in kinds else
                        (oid, kinds, member, impl) for oid, kinds, member, impl in overloads for k in _ANY]
            unique = {o[0]: o for o in expanded}
            decls.append(cel.FunctionDecl(name, [_overload(o) for o in unique.values()]))
    return decls


def _overload(spec: tuple[str, str, bool, Callable[..., Any]]) -> Any:
    oid, kinds, member, impl = spec
    result = T.DYN
    return cel.Overload(oid, result, [_KINDS[k] for k in kinds], is_member=member, impl=_guard(impl))


def cel_type(node: dict[str, Any]) -> Any:
    """The CEL type kube gives a value of schema ``node`` (SchemaDeclType), objects as string-keyed maps."""
    if node.get("x-kubernetes-int-or-string"):
        return T.DYN
    kind = node.get("type")
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and not node.get("properties"):
            return T.Map(T.STRING, cel_type(extra))
        return T.Map(T.STRING, T.DYN)
    if kind == "array":
        items = node.get("items")
        return T.List(cel_type(items) if isinstance(items, dict) else T.DYN)
    if kind == "string":
        return {"byte": T.BYTES, "duration": T.DURATION, "date": T.TIMESTAMP,
                "date-time": T.TIMESTAMP}.get(str(node.get("format") or ""), T.STRING)
    return {"integer": T.INT, "number": T.DOUBLE, "boolean": T.BOOL}.get(str(kind), T.DYN)


@functools.lru_cache(maxsize=256)
def env_for(type_name: str, with_old: bool) -> Any:
    """An environment with ``self`` of the named type (see ``cel_type``; cached by its name)."""
    self_type = _TYPES[type_name]
    variables = {"self": self_type}
    if with_old:
        variables["oldSelf"] = self_type
    else:
        variables[OLD_LIST] = T.List(self_type)
    return cel.NewEnv(variables=variables, functions=_FUNCTIONS,
                      extensions=[ext_optional.ExtOptional(), ext_bindings.ExtBindings(), ext_math.ExtMath()])


_TYPES: dict[str, Any] = {}
_FUNCTIONS = _declarations()


def compile_expr(node: dict[str, Any], expression: str, with_old: bool = True) -> Any:
    """``expression`` compiled for schema ``node``; RuntimeError with the checker's issues if it does not."""
    self_type = cel_type(node)
    name = _type_name(self_type)
    _TYPES.setdefault(name, self_type)
    return compile_in(env_for(name, with_old), expression)


def compile_in(env: Any, expression: str) -> Any:
    """``expression`` type-checked as written, and the program that runs it (see ``_format.rewrite``)."""
    program = env.compile(expression)
    evaluated = rewrite(expression)
    return program if evaluated == expression else env.compile(evaluated)


@functools.lru_cache(maxsize=1)
def policy_env() -> Any:
    """The environment of ValidatingAdmissionPolicy expressions: the request's objects, params and
    namespace as ``dyn``, ``request`` and ``variables`` as maps (kube also declares ``authorizer``)."""
    dyn_map = T.Map(T.STRING, T.DYN)
    variables = {"object": T.DYN, "oldObject": T.DYN, "params": T.DYN, "namespaceObject": T.DYN,
                 "request": dyn_map, "variables": dyn_map}
    return cel.NewEnv(variables=variables, functions=_FUNCTIONS,
                      extensions=[ext_optional.ExtOptional(), ext_bindings.ExtBindings(), ext_math.ExtMath()])


def _type_name(t: Any) -> str:
    return str(t.name()) + repr(t)
