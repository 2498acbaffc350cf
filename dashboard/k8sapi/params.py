"""Query parameters of the Kubernetes API read as kube-apiserver reads them (metav1.ListOptions through
apimachinery's parameter codec): integers by Go's ``strconv.ParseInt(s, 10, 64)``, a failure a 400 BadRequest
with Go's error text."""
from __future__ import annotations

import json

from .errors import ApiError

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def _go_quote(text: str) -> str:
    """``text`` quoted about as Go's strconv.Quote does (printable Unicode kept, controls escaped)."""
    return json.dumps(text, ensure_ascii=False)


def parse_int64(text: str) -> int:
    """Go's ``strconv.ParseInt(text, 10, 64)``: an optional sign and ASCII digits only, within int64; otherwise
    ApiError 400 "strconv.ParseInt: parsing "abc": invalid syntax" (or "value out of range")."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        raise ApiError.bad_request(f"strconv.ParseInt: parsing {_go_quote(text)}: invalid syntax")
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ApiError.bad_request(f"strconv.ParseInt: parsing {_go_quote(text)}: value out of range")
    return value


def _int64_param(query, name: str) -> int | None:
    raw = query.get(name)
    return None if raw is None else parse_int64(raw)


class ListOptions:
    """The integer fields of metav1.ListOptions from a list, watch or deletecollection request's query (all are
    decoded, as kube decodes the whole ListOptions, whichever the request uses): ``limit`` (0: all),
    ``timeout_seconds`` (None: not given)."""

    __slots__ = ("limit", "timeout_seconds")

    def __init__(self, query):
        self.limit = _int64_param(query, "limit") or 0
        self.timeout_seconds = _int64_param(query, "timeoutSeconds")
