"""Label and field selectors in kube's query-string syntax (k8s.io/apimachinery labels.Parse, fields.ParseSelector)."""
from __future__ import annotations

import re

from .errors import ApiError

_KEY_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_FIELD_TERM = re.compile(r"^([^=!]+)(!=|==|=)(.*)$", re.S)
_TOKEN = re.compile(r"\s*(==|!=|=|!|\(|\)|,|>|<|[^\s=!(),<>]+)")


def _check_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if not name or len(name) > 63 or not _KEY_NAME.match(name) or (
            prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix))) or key.startswith("/"):
        raise ApiError.bad_request(f'unable to parse requirement: invalid label key "{key}": name part must consist '
                                   "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                                   "alphanumeric character")


def _check_value(value: str) -> None:
    if len(value) > 63 or not _VALUE.match(value):
        raise ApiError.bad_request(f'unable to parse requirement: invalid label value: "{value}": a valid label '
                                   "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                                   "and must start and end with an alphanumeric character")


class LabelSelector:
    """A parsed ``labelSelector`` query: requirements (key, operator, values), all of which must hold."""

    __slots__ = ("requirements",)

    def __init__(self, text: str | None):
        self.requirements = _parse_labels(text or "")

    def matches(self, labels: dict | None) -> bool:
        labels = labels or {}
        for key, op, values in self.requirements:
            present = key in labels
            value = labels.get(key)
            if op == "exists":
                ok = present
            elif op == "!":
                ok = not present
            elif op in ("=", "==", "in"):
                ok = present and value in values
            elif op in ("!=", "notin"):
                ok = not present or value not in values
            else:  # > and <: both sides integers
                try:
                    ok = present and (int(value) > values[0] if op == ">" else int(value) < values[0])
                except ValueError:
                    ok = False
            if not ok:
                return False
        return True


def _parse_labels(text: str) -> list:
    tokens = _TOKEN.findall(text)
    if "".join(tokens).replace(" ", "") != re.sub(r"\s+", "", text):
        raise ApiError.bad_request(f"unable to parse requirement: found unexpected characters in {text!r}")
    reqs, i, n = [], 0, len(tokens)

    def expect_value(j):
        if j >= n or tokens[j] in ("(", ")", ",", "=", "==", "!=", "!", ">", "<"):
            found = tokens[j] if j < n else "end of string"
            raise ApiError.bad_request(f"unable to parse requirement: found '{found}', expected: identifier")
        return tokens[j]

    while i < n:
        if tokens[i] == "!":
            key = expect_value(i + 1)
            _check_key(key)
            reqs.append((key, "!", ()))
            i += 2
        else:
            key = expect_value(i)
            _check_key(key)
            op = tokens[i + 1] if i + 1 < n else ","
            if op == ",":
                reqs.append((key, "exists", ()))
                i += 1
            elif op in ("=", "==", "!="):
                value = tokens[i + 2] if i + 2 < n and tokens[i + 2] != "," else ""
                _check_value(value)
                reqs.append((key, op, frozenset((value,))))
                i += 3 if value else 2
            elif op in ("in", "notin"):
                if i + 2 >= n or tokens[i + 2] != "(":
                    raise ApiError.bad_request("unable to parse requirement: found '"
                                               f"{tokens[i + 2] if i + 2 < n else ''}', expected: '('")
                j, values = i + 3, []
                while j < n and tokens[j] != ")":
                    if tokens[j] != ",":
                        _check_value(tokens[j])
                        values.append(tokens[j])
                    j += 1
                if j >= n:
                    raise ApiError.bad_request("unable to parse requirement: found 'end of string', expected: ')'")
                reqs.append((key, op, frozenset(values)))
                i = j + 1
            elif op in (">", "<"):
                raw = expect_value(i + 2)
                try:
                    reqs.append((key, op, (int(raw),)))
                except ValueError:
                    raise ApiError.bad_request("unable to parse requirement: for 'Gt', 'Lt' operators, the value "
                                               "must be an integer") from None
                i += 3
            else:
                raise ApiError.bad_request(f"unable to parse requirement: found '{op}', expected: in, notin, =, ==, "
                                           "!=, gt, lt")
        if i < n:
            if tokens[i] != ",":
                raise ApiError.bad_request(f"found '{tokens[i]}', expected: ',' or 'end of string'")
            i += 1
            if i == n:
                raise ApiError.bad_request("found 'end of string', expected: identifier")
    return reqs


def _split_unescaped(text: str, sep: str) -> list:
    parts, cur, escaped = [], [], False
    for ch in text:
        if escaped:
            cur.append("\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _unescape(value: str) -> str:
    out, escaped = [], False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise ApiError.bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            out.append(ch)
    return "".join(out)


class FieldSelector:
    """A parsed ``fieldSelector`` query: (field, equal?, value) terms over a resource's selectable fields."""

    __slots__ = ("terms",)

    def __init__(self, text: str | None, labels: tuple):
        self.terms = []
        for part in _split_unescaped(text or "", ","):
            if not part.strip():
                continue
            m = _FIELD_TERM.match(part)
            if m is None:
                raise ApiError.bad_request(f"invalid field selector: invalid selector: '{part}'; can't understand "
                                           f"'{part}'")
            field, op, value = m.group(1).strip(), m.group(2), m.group(3)
            if field not in labels:
                raise ApiError.bad_request(f"field label not supported: {field}")
            self.terms.append((field, op != "!=", _unescape(value)))

    def matches(self, fields: dict) -> bool:
        for field, equal, value in self.terms:
            if (fields.get(field, "") == value) != equal:
                return False
        return True

    def exact(self, field: str):
        """The value an ``=`` term requires of ``field``, if there is one (for cheap pre-filtering)."""
        for f, equal, value in self.terms:
            if f == field and equal:
                return value
        return None
