"""Kubernetes resource quantities ("100m", "1Gi", "1e3") parsed exactly.

Parsing follows ``resource.ParseQuantity``: non-zero values are rounded up (away from zero) to a multiple of 1n
and binary-suffixed ones are capped at 2^63-1. kube keeps larger decimal values as arbitrary-precision
decimals, but kube-scheduler counts every amount as an int64 (``MilliValue()`` for cpu, ``Value()`` otherwise),
where they do not fit; here such quantities are errors, so no value the scheduler cannot count is ever parsed.

CPU is kept in millicores (``Quantity.MilliValue()``, rounded up) and every other
resource in base units (``Quantity.Value()``, rounded up), as kube-scheduler does.
"""
from __future__ import annotations

import decimal
import functools
import math
import re
from decimal import Decimal
from fractions import Fraction

INT64_MAX = 2**63 - 1
FORMAT_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_OF = {e: s for s, e in _DECIMAL.items()}
_QUANTITY_RE = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|([eE])([+-]?\d+))?$")
_CONTEXT = decimal.Context(prec=100, rounding=decimal.ROUND_UP, Emax=10**6, Emin=-10**6)
_NANO = Decimal("1e-9")
# Magnitudes (powers of ten) outside this range are "too large" or "rounds up to 1n" without computing them.
_MAX_EXPONENT = 19
_MIN_EXPONENT = -10


class QuantityError(ValueError):
    """A string that is not a valid Kubernetes quantity, or one too large to count; ``detail`` is the reason
    as kube's field errors word it."""

    def __init__(self, text, detail: str = FORMAT_MESSAGE, message: str | None = None):
        super().__init__(message or f'invalid quantity "{text}"')
        self.text = text
        self.detail = detail


def _too_large(text, limit: str = str(INT64_MAX)) -> QuantityError:
    detail = f"must be less than or equal to {limit}"
    return QuantityError(text, detail, f'quantity "{text}" is too large: {detail}')


def _parse(text) -> tuple:
    """(value as a Fraction, format: "DecimalSI", "DecimalExponent" or "BinarySI")."""
    if isinstance(text, str) and len(text) <= 32:
        return _parse_short(text)
    return _parse_any(text)


def _parse_any(text) -> tuple:
    if isinstance(text, bool):
        raise QuantityError(text)
    if isinstance(text, int):
        if abs(text) > INT64_MAX:
            raise _too_large(text)
        return Fraction(text), "DecimalSI"
    if isinstance(text, float):
        if not math.isfinite(text):
            raise QuantityError(text)
        text = repr(text)
    if not isinstance(text, str):
        raise QuantityError(text)
    m = _QUANTITY_RE.match(text.strip())
    if not m:
        raise QuantityError(text)
    sign, number, suffix, exp_mark, exponent = m.groups()
    amount = Decimal(number)
    if amount == 0:
        return Fraction(0), "DecimalSI"
    if suffix in _BINARY:
        fmt, power10 = "BinarySI", 0
    elif exp_mark:
        fmt = "DecimalExponent"
        power10 = int(exponent) if len(exponent.lstrip("+-")) <= 10 else (
            -10**10 if exponent.startswith("-") else 10**10)
    else:
        fmt, power10 = "DecimalSI", _DECIMAL[suffix or ""]
    magnitude = amount.adjusted() + power10 + (_BINARY[suffix] * 3 // 10 if fmt == "BinarySI" else 0)
    if magnitude >= _MAX_EXPONENT:
        if fmt != "BinarySI":
            raise _too_large(text)
        amount = Decimal(INT64_MAX)                  # kube caps binary-suffixed quantities at 2^63-1
    elif magnitude < _MIN_EXPONENT:
        amount = _NANO                               # non-zero values round up to 1n
    else:
        if fmt == "BinarySI":
            amount = _CONTEXT.multiply(amount, Decimal(2 ** _BINARY[suffix]))
        else:
            amount = _CONTEXT.scaleb(amount, power10)
        if amount.as_tuple().exponent < -9:
            amount = amount.quantize(_NANO, context=_CONTEXT)
        if amount > INT64_MAX:
            if fmt != "BinarySI":
                raise _too_large(text)
            amount = Decimal(INT64_MAX)
    value = Fraction(amount)
    return (-value if sign == "-" else value), fmt


_parse_short = functools.lru_cache(maxsize=4096)(_parse_any)   # clusters repeat the same few quantities


def parse_quantity(text) -> Fraction:
    """Return the value of a quantity string (or number) as a Fraction (see the module doc)."""
    return _parse(text)[0]


def quantity_format(text) -> str:
    """A quantity's format: "DecimalSI", "DecimalExponent" or "BinarySI" (what a sum of quantities keeps)."""
    return _parse(text)[1]


def canonical(text) -> str:
    """``Quantity.String()``: the canonical form kube prints (e.g. "-0.5" -> "-500m", "2048Ki" -> "2Mi")."""
    return format_quantity(*_parse(text))


def format_quantity(value: Fraction, fmt: str) -> str:
    """``Quantity.String()`` of a value in a format (see ``canonical``)."""
    if value == 0:
        return "0"
    sign, value = ("-" if value < 0 else ""), abs(value)
    if fmt == "BinarySI" and value >= 1024 and value.denominator == 1:
        n, exp = int(value), 0
        while n % 1024 == 0 and exp < 60:
            n, exp = n // 1024, exp + 10
        return f"{sign}{n}{next((s for s, e in _BINARY.items() if e == exp), '')}"
    n, exp = math.ceil(value * 10**9), -9
    while n % 1000 == 0 and exp < 18:
        n, exp = n // 1000, exp + 3
    if fmt == "DecimalExponent":
        return f"{sign}{n}" + (f"e{exp}" if exp else "")
    return f"{sign}{n}{_SUFFIX_OF[exp]}"


def milli_value(text) -> int:
    """``Quantity.MilliValue()``: value x 1000, rounded up; QuantityError when it does not fit an int64."""
    out = math.ceil(parse_quantity(text) * 1000)
    if abs(out) > INT64_MAX:
        raise _too_large(text, f"{INT64_MAX}m")
    return out


def value(text) -> int:
    """``Quantity.Value()``: value rounded up to an integer."""
    return math.ceil(parse_quantity(text))


def resource_amount(name: str, text) -> int:
    """Scheduler units for a resource: millicores for cpu, base units otherwise."""
    return milli_value(text) if name == "cpu" else value(text)
