"""Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library): regex, url, ip, cidr, quantity, semver.

cel-expr-python cannot hand a Python object back to CEL as an opaque type, so a Quantity, URL, IP, CIDR or
Semver is a one-key map (``{"\\x01quantity": "3/2"}``) holding a canonical form: equal values compare equal, as
kube's do, and member functions dispatch on the key. The checker sees them as ``dyn``: a call on the wrong
kind fails when evaluated, not when the rule is compiled (kube refuses it at compile time).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ._strings import CelError, Overloads

__all__ = ["K8S_FUNCTIONS"]

_Q, _URL, _IP, _CIDR, _SEMVER = "\x01quantity", "\x01url", "\x01ip", "\x01cidr", "\x01semver"
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_SUFFIX: dict[str, Fraction | int] = {
    "": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_SEMVER_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$")


def _parse_quantity(s: str) -> Fraction:
    m = _QUANTITY.match(s)
    try:
        if not m:
            raise ValueError
        number, suffix = m.group(1), m.group(2)
        if suffix in _SUFFIX:
            return Fraction(number) * _SUFFIX[suffix]
        if suffix[:1] in "eE":
            return Fraction(number) * Fraction(10) ** int(suffix[1:])
        raise ValueError
    except (ValueError, ZeroDivisionError):
        raise CelError("quantities must match the regular expression "
                       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None


def _q(value: Fraction) -> dict[str, str]:
    return {_Q: f"{value.numerator}/{value.denominator}"}


def _val(x: Any, key: str) -> str:
    if isinstance(x, dict) and key in x:
        return str(x[key])
    raise CelError("no such overload")


def _qv(x: Any) -> Fraction:
    return Fraction(x) if isinstance(x, int) and not isinstance(x, bool) else Fraction(_val(x, _Q))


def _kind(x: Any) -> str:
    return next(iter(x)) if isinstance(x, dict) and len(x) == 1 and str(next(iter(x))).startswith("\x01") else ""


def _semver(s: str) -> tuple[int, int, int, str]:
    m = _SEMVER_RE.match(s)
    if not m:
        raise CelError(f"Invalid semver: {s}" if s else "Version string empty")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def _semver_key(s: str) -> tuple[Any, ...]:
    major, minor, patch, pre = _semver(s)
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")) if pre else ()
    return major, minor, patch, 0 if pre else 1, parts


def _compare(a: Any, b: Any) -> int:
    kind = _kind(a)
    if kind == _SEMVER:
        ka, kb = _semver_key(_val(a, _SEMVER)), _semver_key(_val(b, _SEMVER))
    else:
        ka, kb = _qv(a), _qv(b)  # type: ignore[assignment]
    return (ka > kb) - (ka < kb)


def _ip(s: str) -> dict[str, str]:
    try:
        if "%" in s:
            raise ValueError("IP address with zone value is not allowed")
        addr = ipaddress.ip_address(s)
    except ValueError as err:
        raise CelError(f'IP Address "{s}" parse error during conversion from string: {err}') from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
        raise CelError(f'IP Address "{s}" parse error during conversion from string: '
                       "IPv4-mapped IPv6 address is not allowed")
    return {_IP: str(addr)}


def _cidr(s: str) -> dict[str, str]:
    try:
        net = ipaddress.ip_interface(s)
        if "/" not in s:
            raise ValueError("missing prefix length")
    except ValueError as err:
        raise CelError(f'network address "{s}" parse error during conversion from string: {err}') from None
    return {_CIDR: str(net)}


def _addr(x: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(_val(_ip(x) if isinstance(x, str) else x, _IP))


def _net(x: Any) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(_val(_cidr(x) if isinstance(x, str) else x, _CIDR))


def _url(s: str) -> dict[str, str]:
    parts = urlsplit(s)
    if not (parts.scheme or s.startswith("/")) or " " in s:
        raise CelError(f"URL parse error during conversion from string: parse {s!r}: invalid URI for request")
    return {_URL: s}


def _ok(parse: Callable[[str], Any]) -> Callable[[str], bool]:
    def check(s: str) -> bool:
        try:
            parse(s)
        except CelError:
            return False
        return True
    return check


def _host(u: Any) -> str:
    netloc = urlsplit(_val(u, _URL)).netloc.rpartition("@")[2]
    return netloc


def _hostname(u: Any) -> str:
    host = _host(u)
    if host.startswith("["):
        return host[1:host.index("]")] if "]" in host else host
    return host.rpartition(":")[0] if ":" in host else host


def _port(u: Any) -> str:
    host = _host(u)
    tail = host.rpartition("]")[2] if host.startswith("[") else host
    return tail.rpartition(":")[2] if ":" in tail else ""


def _find(s: str, pattern: str) -> str:
    m = re.search(pattern, s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    found = [m.group(0) for m in re.finditer(pattern, s)]
    return found if n < 0 else found[:n]


def _add(a: Any, b: Any) -> dict[str, str]:
    return _q(_qv(a) + _qv(b))


def _sub(a: Any, b: Any) -> dict[str, str]:
    return _q(_qv(a) - _qv(b))


def _as_integer(a: Any) -> int:
    v = _qv(a)
    if v.denominator != 1 or not -2**63 <= v.numerator < 2**63:
        raise CelError("cannot convert value to integer")
    return v.numerator


_MEMBER_IP: dict[str, Callable[[Any], Any]] = {
    "family": lambda a: _addr(a).version,
    "isUnspecified": lambda a: _addr(a).is_unspecified,
    "isLoopback": lambda a: _addr(a).is_loopback,
    "isLinkLocalMulticast": lambda a: _addr(a) in ipaddress.ip_network("224.0.0.0/24") or (
        _addr(a).version == 6 and _addr(a) in ipaddress.ip_network("ff02::/16")),
    "isLinkLocalUnicast": lambda a: _addr(a).is_link_local and not _addr(a).is_multicast,
    "isGlobalUnicast": lambda a: not (_addr(a).is_unspecified or _addr(a).is_loopback or _addr(a).is_multicast
                                      or _addr(a).is_link_local or str(_addr(a)) == "255.255.255.255"),
}


def _unary(name: str) -> Callable[[Any], Any]:
    """A member function of no arguments on a Quantity, URL, IP, CIDR or Semver."""
    def call(x: Any) -> Any:
        kind = _kind(x)
        if kind == _Q:
            v = _qv(x)
            ops: dict[str, Callable[[], Any]] = {"isInteger": lambda: v.denominator == 1,
                                                 "asInteger": lambda: _as_integer(x),
                                                 "asApproximateFloat": lambda: float(v),
                                                 "sign": lambda: (v > 0) - (v < 0)}
        elif kind == _SEMVER:
            major, minor, patch, _ = _semver(_val(x, _SEMVER))
            ops = {"major": lambda: major, "minor": lambda: minor, "patch": lambda: patch}
        elif kind == _URL:
            parts = urlsplit(_val(x, _URL))
            ops = {"getScheme": lambda: parts.scheme, "getHost": lambda: _host(x), "getHostname": lambda: _hostname(x),
                   "getPort": lambda: _port(x), "getEscapedPath": lambda: parts.path,
                   "getQuery": lambda: parse_qs(parts.query, keep_blank_values=True)}
        elif kind == _IP:
            ops = {k: (lambda f=f: f(x)) for k, f in _MEMBER_IP.items()}  # type: ignore[misc]
        elif kind == _CIDR:
            net = _net(x)
            ops = {"ip": lambda: {_IP: str(net.ip)}, "masked": lambda: {_CIDR: str(net.network)},
                   "prefixLength": lambda: net.network.prefixlen}
        else:
            ops = {}
        if name not in ops:
            raise CelError("no such overload")
        return ops[name]()
    return call


def _contains(kind: str) -> Callable[[Any, Any], bool]:
    def call(c: Any, other: Any) -> bool:
        net = _net(c).network
        if kind == "ip":
            addr = _addr(other)
            return addr.version == net.version and addr in net
        sub = _net(other).network
        return sub.version == net.version and sub.subnet_of(net)  # type: ignore[arg-type]
    return call


_UNARY = ("isInteger", "asInteger", "asApproximateFloat", "sign", "major", "minor", "patch", "getScheme",
          "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery", *_MEMBER_IP, "masked", "prefixLength")
K8S_FUNCTIONS: dict[str, Overloads] = {
    "find": [("string_find_string", "ss", True, _find)],
    "findAll": [("string_find_all_string", "ss", True, _find_all),
                ("string_find_all_string_int", "ssi", True, _find_all)],
    "quantity": [("string_to_quantity", "s", False, lambda s: _q(_parse_quantity(s)))],
    "isQuantity": [("is_quantity_string", "s", False, _ok(_parse_quantity))],
    "semver": [("string_to_semver", "s", False, lambda s: (_semver(s), {_SEMVER: s})[1])],
    "isSemver": [("is_semver_string", "s", False, _ok(_semver))],
    "url": [("string_to_url", "s", False, _url)],
    "isURL": [("is_url_string", "s", False, _ok(_url))],
    "ip": [("string_to_ip", "s", False, _ip), ("cidr_ip", "m", True, _unary("ip"))],
    "isIP": [("is_ip", "s", False, _ok(_ip))],
    "ip.isCanonical": [("ip_is_canonical", "s", False, lambda s: _val(_ip(s), _IP) == s)],
    "cidr": [("string_to_cidr", "s", False, _cidr)],
    "isCIDR": [("is_cidr", "s", False, _ok(_cidr))],
    "containsIP": [("cidr_contains_ip", "mm", True, _contains("ip")),
                   ("cidr_contains_ip_string", "ms", True, _contains("ip"))],
    "containsCIDR": [("cidr_contains_cidr", "mm", True, _contains("cidr")),
                     ("cidr_contains_cidr_string", "ms", True, _contains("cidr"))],
    "isGreaterThan": [("k8s_is_greater_than", "mm", True, lambda a, b: _compare(a, b) > 0)],
    "isLessThan": [("k8s_is_less_than", "mm", True, lambda a, b: _compare(a, b) < 0)],
    "compareTo": [("k8s_compare_to", "mm", True, _compare)],
    "add": [("quantity_add", "mm", True, _add), ("quantity_add_int", "mi", True, _add)],
    "sub": [("quantity_sub", "mm", True, _sub), ("quantity_sub_int", "mi", True, _sub)],
    **{name: [(f"k8s_{name}", "m", True, _unary(name))] for name in _UNARY},
}
