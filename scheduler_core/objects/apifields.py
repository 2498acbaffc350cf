"""The fields kube-apiserver knows of an object at a version (``versions``: the base field tables and each later
version's differences), and what its JSON decoder does with the others.

kube-apiserver decodes a write into its Go type: a field the type does not have is dropped; under strict field
validation (sigs.k8s.io/json's strict decoding) it is reported as ``unknown field "spec.foo"``, and a name given
twice in one JSON object as ``duplicate field "spec.containers[0].name"``, with the path that decoder builds (field
names and map keys joined by ".", list items as "[i]"; at most 100 errors, each once). Values of opaque types
(quantities, times, raw extensions) are not looked into, nor values of a type the decoder would refuse (that is
validation's to say).
"""
from __future__ import annotations

from decimal import Decimal

from ..documents import load_json
from .protoschema import ROOTS

MAX_ERRORS = 100       # sigs.k8s.io/json keeps at most this many strict errors
TYPE_META = ("apiVersion", "kind")
_INDEXES = {}          # version name -> {message: {JSON name: (type, mode)}}


def _index(kube_version) -> dict:
    """{message: {JSON name: (type, mode)}} of a KubeVersion's field tables, embedded (inline) fields flattened."""
    index = _INDEXES.get(kube_version.name)
    if index is not None:
        return index
    tables = kube_version.api_fields

    def names(message: str) -> dict:
        out = {}
        for json_name, typ, mode in tables.get(message, {}).values():
            if "I" in mode:
                out.update(names(typ))
            else:
                out[json_name] = (typ, mode)
        return out

    index = _INDEXES[kube_version.name] = {message: names(message) for message in tables}
    return index


def load_with_duplicates(text):
    """A JSON document (``documents.load_json``) and, for each of its objects that gives a name more than once,
    every (name, value) pair in order: ``{id(object): [(name, value), ...]}`` (the object keeps the last value of a
    name, as Go's decoder does; the strict decoder reads every one)."""
    duplicates = {}

    def pairs(items):
        obj = dict(items)
        if len(obj) < len(items):
            duplicates[id(obj)] = items
        return obj

    return load_json(text, object_pairs_hook=pairs), duplicates


class Decoded:
    """An object as a version's kube-apiserver decodes it: ``obj`` without the fields it does not know (the
    object itself when it has none), ``errors`` its strict decoder's, in document order."""

    __slots__ = ("obj", "errors")

    def __init__(self, obj, errors: list):
        self.obj, self.errors = obj, errors


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Walk:
    def __init__(self, index: dict, duplicates: dict):
        self.index, self.duplicates, self.errors, self.seen = index, duplicates, [], set()

    def error(self, kind: str, path: str) -> None:
        text = f'{kind} "{path}"'
        if text not in self.seen and len(self.errors) < MAX_ERRORS:
            self.seen.add(text)
            self.errors.append(text)

    def pairs(self, obj: dict):
        """(name, value, whether the name came before, whether the value is the one kept) in the body's order."""
        given = self.duplicates.get(id(obj))
        if given is None:
            return ((k, v, False, True) for k, v in obj.items())
        seen = set()
        out = []
        for k, v in given:
            out.append((k, v, k in seen, v is obj[k]))
            seen.add(k)
        return out

    def value(self, typ: str, mode: str, value, path: str):
        if "R" in mode and isinstance(value, list):
            if typ not in self.index:
                return value
            out = value
            for i, item in enumerate(value):
                new = self.object(typ, item, f"{path}[{i}]")
                if new is not item:
                    out = list(value) if out is value else out
                    out[i] = new
            return out
        if "M" in mode and isinstance(value, dict):
            out = value
            for key, item, again, kept in self.pairs(value):
                at = _join(path, key)
                if again:
                    self.error("duplicate field", at)
                new = self.object(typ, item, at) if typ in self.index else item
                if kept and new is not item:
                    out = dict(value) if out is value else out
                    out[key] = new
            return out
        return self.object(typ, value, path) if typ in self.index else value

    def object(self, message: str, value, path: str, root: bool = False):
        if not isinstance(value, dict):
            return value
        fields = self.index[message]
        out = value
        for key, item, again, kept in self.pairs(value):
            at = _join(path, key)
            field = fields.get(key)
            if field is None:
                if root and key in TYPE_META:
                    if again:
                        self.error("duplicate field", at)
                    continue
                self.error("unknown field", at)
                if key in out:
                    out = dict(value) if out is value else out
                    del out[key]
                continue
            if again:
                self.error("duplicate field", at)
            new = self.value(field[0], field[1], item, at)
            if kept and new is not item:
                out = dict(value) if out is value else out
                out[key] = new
        return out


def decode(kube_version, api_version: str, kind: str, obj, duplicates: dict | None = None) -> Decoded:
    """``obj`` (a ``kind`` of ``api_version``) as ``kube_version``'s kube-apiserver decodes it (``Decoded``);
    ``duplicates``: ``load_with_duplicates``' of the body it was read from. A kind without a table is kept whole."""
    message = ROOTS.get((api_version, kind))
    index = _index(kube_version)
    if message not in index:
        return Decoded(obj, [])
    walk = _Walk(index, duplicates or {})
    out = walk.object(message, obj, "", root=True)
    return Decoded(out, walk.errors)


def served(kube_version, api_version: str) -> bool:
    """Whether ``kube_version``'s kube-apiserver serves a group version ("v1", "resource.k8s.io/v1")."""
    return api_version in kube_version.api_group_versions


def duplicate_fields(obj, duplicates: dict, path: str = "") -> list:
    """The ``duplicate field "..."`` errors of a JSON document decoded without a schema (a patch, as
    sigs.k8s.io/json's UnmarshalStrict into a map reads it), in document order."""
    out = []
    if isinstance(obj, dict):
        seen = set()
        for key, value in duplicates.get(id(obj), obj.items()):
            at = _join(path, key)
            if key in seen:
                out.append(f'duplicate field "{at}"')
            seen.add(key)
            out.extend(duplicate_fields(value, duplicates, at))
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            out.extend(duplicate_fields(item, duplicates, f"{path}[{i}]"))
    return out


def go_format(value) -> str:
    """A decoded JSON value as Go's fmt prints it with %+v (map keys sorted, strings bare, <nil>)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _go_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64): the shortest digits, in exponent form when the exponent is below -4 or
    6 and above."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    if value == 0:
        return "-0" if repr(value).startswith("-") else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    exp = len(digits) + exponent - 1          # the decimal exponent of the first digit
    text = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{text}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{text}0.{'0' * (-exp - 1)}{digits}"
    if exp + 1 >= len(digits):
        return f"{text}{digits}{'0' * (exp + 1 - len(digits))}"
    return f"{text}{digits[:exp + 1]}.{digits[exp + 1:]}"
