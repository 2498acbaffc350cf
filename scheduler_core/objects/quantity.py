"""Kubernetes resource quantities ("100m", "1Gi", "1e3") parsed exactly.

CPU is kept in millicores (``Quantity.MilliValue()``, rounded up) and every other
resource in base units (``Quantity.Value()``, rounded up), as kube-scheduler does.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_QUANTITY_RE = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$")


class QuantityError(ValueError):
    """A string that is not a valid Kubernetes quantity."""


def parse_quantity(text) -> Fraction:
    """Return the exact value of a quantity string (or number) as a Fraction."""
    if isinstance(text, bool):
        raise QuantityError(f'invalid quantity "{text}"')
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(str(text))
    if not isinstance(text, str):
        raise QuantityError(f'invalid quantity "{text}"')
    m = _QUANTITY_RE.match(text.strip())
    if not m:
        raise QuantityError(f'invalid quantity "{text}"')
    sign, number, suffix, exponent = m.groups()
    value = Fraction(number)
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix is not None:
        value *= _DECIMAL[suffix]
    elif exponent is not None:
        value *= Fraction(10) ** int(exponent)
    return -value if sign == "-" else value


def milli_value(text) -> int:
    """``Quantity.MilliValue()``: value x 1000, rounded up."""
    return math.ceil(parse_quantity(text) * 1000)


def value(text) -> int:
    """``Quantity.Value()``: value rounded up to an integer."""
    return math.ceil(parse_quantity(text))


def resource_amount(name: str, text) -> int:
    """Scheduler units for a resource: millicores for cpu, base units otherwise."""
    return milli_value(text) if name == "cpu" else value(text)
