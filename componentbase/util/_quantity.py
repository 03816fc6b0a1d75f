"""Kubernetes resource quantities (``100m``, ``1Gi``, ``1e3``), parsed exactly as apimachinery's ``resource.Quantity``.

Values are exact fractions, so ``0.1`` CPU is exactly 100 milli-CPU; :func:`quantity_milli_value` and
:func:`quantity_value` round up as ``Quantity.MilliValue()`` and ``Quantity.Value()`` do, which is what
kube-scheduler compares.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

__all__ = ["QuantityError", "parse_quantity", "quantity_milli_value", "quantity_value"]

#: apimachinery's ErrFormatWrong, word for word.
FORMAT_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

_NUMBER = re.compile(r"([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(.*)", re.DOTALL)
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}


class QuantityError(ValueError):
    """A string that is not a quantity; the message says which and why, as apimachinery does."""


def parse_quantity(text: str | int | float) -> Fraction:
    """The exact value of a quantity: ``"100m"`` -> 1/10, ``"1Ki"`` -> 1024, ``2`` -> 2."""
    if isinstance(text, bool):
        raise QuantityError(f"{text!r}: {FORMAT_MESSAGE}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return _parse(repr(text))
    return _parse(text)


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Fraction:
    """Cached: a cluster repeats the same few dozen request strings across thousands of pods."""
    match = _NUMBER.fullmatch(text)
    if match is None:
        raise QuantityError(f'"{text}": {FORMAT_MESSAGE}')
    sign, number, suffix = match.groups()
    amount = Fraction(number.rstrip(".") if number != "." else "0")
    if sign == "-":
        amount = -amount
    return amount * _multiplier(text, suffix)


def _multiplier(text: str, suffix: str) -> Fraction:
    if suffix in _BINARY:
        return Fraction(_BINARY[suffix])
    if suffix in _DECIMAL:
        return _DECIMAL[suffix]
    exponent = _EXPONENT.fullmatch(suffix)
    if exponent is not None:
        return Fraction(10) ** int(exponent.group(1))
    raise QuantityError(f'"{text}": unable to parse quantity\'s suffix')


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def quantity_value(text: str | int | float) -> int:
    """The quantity as a whole number, rounded up (bytes of memory, counts), as ``Quantity.Value()``."""
    return _ceil(parse_quantity(text))


def quantity_milli_value(text: str | int | float) -> int:
    """The quantity in thousandths, rounded up (milli-CPU), as ``Quantity.MilliValue()``."""
    return _ceil(parse_quantity(text) * 1000)
