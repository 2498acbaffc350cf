"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``), decoded into the JSON dicts the
JSON path produces, so that every handler stays JSON-based.

A body is the magic ``k8s\\x00`` and a ``runtime.Unknown`` envelope: typeMeta {apiVersion, kind}, raw (the
object's message), contentEncoding, contentType. The object's message is read with the field tables of the
cluster's version (``KubeVersion.api_fields``: ``scheduler_core.objects.protoschema`` and the version's
differences) and written as Go's encoding/json would write the same Go object: JSON names from the struct
tags, ``omitempty`` zero values left out, unset pointers left out (a set pointer is kept even when zero), structs
always written (a zero metav1.Time as null), embedded ``inline`` structs merged into their parent,
resource.Quantity as its string, IntOrString as a number or a string, FieldsV1 as its JSON. A field number the
table does not know is an error (ProtobufError), not a silent loss.
"""
from __future__ import annotations

import base64
import datetime
import struct

from scheduler_core.documents import load_json

from scheduler_core.objects.protoschema import ROOTS

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
META = "k8s.io.apimachinery.pkg.apis.meta.v1."

DELETE_OPTIONS = META + "DeleteOptions"

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
WIRE_TYPES = {"string": BYTES, "bytes": BYTES, "int32": VARINT, "int64": VARINT, "bool": VARINT,
              "double": FIXED64}


class ProtobufError(ValueError):
    """A body that is not a Kubernetes protobuf encoding this server can read; the text says why."""


def _varint(data: bytes, pos: int) -> tuple:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint longer than 10 bytes")


def fields(data: bytes):
    """(field number, wire type, value) of each field of a message, in wire order (value: int or bytes)."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        if wire == VARINT:
            value, pos = _varint(data, pos)
        elif wire == BYTES:
            size, pos = _varint(data, pos)
            if pos + size > end:
                raise ProtobufError(f"field {number}: length {size} runs past the end of the message")
            value, pos = data[pos:pos + size], pos + size
        elif wire in (FIXED64, FIXED32):
            width = 8 if wire == FIXED64 else 4
            if pos + width > end:
                raise ProtobufError(f"field {number}: truncated fixed-width value")
            value, pos = data[pos:pos + width], pos + width
        else:
            raise ProtobufError(f"field {number}: unsupported wire type {wire}")
        yield number, wire, value


def _signed(value: int, bits: int) -> int:
    """A varint as Go's int32/int64 (negative numbers are sent as 64-bit two's complement)."""
    value &= (1 << 64) - 1
    if value >= 1 << 63:
        value -= 1 << 64
    if bits == 32 and not -(1 << 31) <= value < 1 << 31:
        raise ProtobufError(f"int32 value {value} out of range")
    return value


def _time(data: bytes, micro: bool):
    seconds = nanos = 0
    for number, wire, value in fields(data):
        if wire != VARINT or number not in (1, 2):
            raise ProtobufError(f"field {number} of {'MicroTime' if micro else 'Time'} is not known")
        if number == 1:
            seconds = _signed(value, 64)
        else:
            nanos = _signed(value, 32)
    if seconds == 0 and nanos == 0:
        return None      # the zero time: JSON null
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")   # metav1.Time has second precision; nanos are ignored


def _single_string(data: bytes, what: str) -> str:
    out = ""
    for number, wire, value in fields(data):
        if number != 1 or wire != BYTES:
            raise ProtobufError(f"field {number} of {what} is not known")
        out = _text(value, what)
    return out


def _int_or_string(data: bytes):
    kind, int_val, str_val = 0, 0, ""
    for number, wire, value in fields(data):
        if number == 1 and wire == VARINT:
            kind = value
        elif number == 2 and wire == VARINT:
            int_val = _signed(value, 32)
        elif number == 3 and wire == BYTES:
            str_val = _text(value, "IntOrString.strVal")
        else:
            raise ProtobufError(f"field {number} of IntOrString is not known")
    return str_val if kind == 1 else int_val


def _raw_json(data: bytes, what: str):
    raw = b""
    for number, wire, value in fields(data):
        if number != 1 or wire != BYTES:
            raise ProtobufError(f"field {number} of {what} is not known")
        raw = value
    if not raw:
        return None
    if raw.startswith(MAGIC):
        return decode(raw)
    try:
        return load_json(raw)   # nested at most 100 deep, as every document
    except ValueError as err:
        raise ProtobufError(f"{what} does not hold JSON: {err}") from None


def _text(value: bytes, what: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError(f"{what}: a string that is not UTF-8") from None


SPECIAL = {
    META + "Time": lambda data: _time(data, False),
    META + "MicroTime": lambda data: _time(data, True),
    "k8s.io.apimachinery.pkg.api.resource.Quantity": lambda data: _single_string(data, "Quantity") or "0",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string,
    META + "FieldsV1": lambda data: _raw_json(data, "FieldsV1"),
    "k8s.io.apimachinery.pkg.runtime.RawExtension": lambda data: _raw_json(data, "RawExtension"),
}


def _value(type_: str, wire: int, value, where: str, kube):
    """One wire value as JSON (a message type: its bytes decoded)."""
    if type_ in SPECIAL or type_ in kube.api_fields:
        if wire != BYTES:
            raise ProtobufError(f"{where}: wire type {wire}, expected a message")
        return SPECIAL[type_](value) if type_ in SPECIAL else message(type_, value, kube)
    if wire != WIRE_TYPES[type_]:
        raise ProtobufError(f"{where}: wire type {wire}, expected {WIRE_TYPES[type_]} ({type_})")
    if type_ == "string":
        return _text(value, where)
    if type_ == "bytes":
        return base64.b64encode(value).decode()
    if type_ == "bool":
        return bool(value)
    if type_ == "double":
        return struct.unpack("<d", value)[0]
    return _signed(value, 32 if type_ == "int32" else 64)


def _zero(type_: str, kube):
    if type_ in SPECIAL or type_ in kube.api_fields:
        return SPECIAL[type_](b"") if type_ in SPECIAL else message(type_, b"", kube)
    return {"string": "", "bytes": None, "bool": False, "double": 0.0}.get(type_, 0)


def _repeated(type_: str, wire: int, value, where: str, kube) -> list:
    """The elements of one occurrence of a repeated field (numbers may also come packed)."""
    if wire == BYTES and WIRE_TYPES.get(type_) in (VARINT, FIXED64):
        out, pos = [], 0
        while pos < len(value):
            if type_ == "double":
                out.append(struct.unpack("<d", value[pos:pos + 8])[0])
                pos += 8
            else:
                n, pos = _varint(value, pos)
                out.append(_value(type_, VARINT, n, where, kube))
        return out
    return [_value(type_, wire, value, where, kube)]


def _map_entry(type_: str, wire: int, value, where: str, kube) -> tuple:
    if wire != BYTES:
        raise ProtobufError(f"{where}: a map entry must be a message")
    key, val, seen = "", None, False
    for number, w, v in fields(value):
        if number == 1 and w == BYTES:
            key = _text(v, where)
        elif number == 2:
            val, seen = _value(type_, w, v, where, kube), True
        else:
            raise ProtobufError(f"{where}: field {number} of a map entry is not known")
    return key, val if seen else _zero(type_, kube)


def _empty(value) -> bool:
    """Go's zero values that ``omitempty`` leaves out (structs are never left out)."""
    return value is None or value == "" or value == [] or value == {} or (
        isinstance(value, (int, float)) and value == 0)


def message(name: str, data: bytes, kube) -> dict:
    """The JSON object of one message (see the module doc for the rules), with the field tables of ``kube`` (the
    cluster's versions.KubeVersion)."""
    table = kube.api_fields[name]
    short = name.rsplit(".", 1)[-1]
    seen = {}
    for number, wire, value in fields(data):
        spec = table.get(number)
        if spec is None:
            raise ProtobufError(f"field {number} of {name} is not known to Kubernetes {kube.name} (this "
                                f"cluster's version); send the object as application/json")
        json_name, type_, mode = spec
        where = f"{short}.{json_name or type_.rsplit('.', 1)[-1]}"
        if "R" in mode:
            seen.setdefault(number, []).extend(_repeated(type_, wire, value, where, kube))
        elif "M" in mode:
            k, v = _map_entry(type_, wire, value, where, kube)
            seen.setdefault(number, {})[k] = v
        else:
            seen[number] = _value(type_, wire, value, where, kube)
    out = {}
    for number, (json_name, type_, mode) in table.items():
        present = number in seen
        if present:
            value = seen[number]
        elif "R" in mode or "M" in mode or "P" in mode:
            value = None
        else:
            value = _zero(type_, kube)
        if "I" in mode:
            out.update(value)
            continue
        if "O" in mode:
            if "P" in mode and not present:
                continue
            is_struct = (type_ in kube.api_fields or type_ in SPECIAL) and "R" not in mode and "M" not in mode
            if "P" not in mode and not is_struct and _empty(value):
                continue
        out[json_name] = value
    return out


def _unknown(body: bytes, kube) -> tuple:
    """(apiVersion, kind, raw, contentEncoding) of a ``k8s\\x00`` + runtime.Unknown body."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf magic k8s\\x00")
    type_meta, raw, encoding = {}, b"", ""
    for number, wire, value in fields(body[len(MAGIC):]):
        if wire != BYTES or number not in (1, 2, 3, 4):
            raise ProtobufError(f"field {number} of runtime.Unknown is not known")
        if number == 1:
            type_meta = message("k8s.io.apimachinery.pkg.runtime.TypeMeta", value, kube)
        elif number == 2:
            raw = value
        elif number == 3:
            encoding = _text(value, "Unknown.contentEncoding")
    return type_meta.get("apiVersion", ""), type_meta.get("kind", ""), raw, encoding


def decode(body: bytes, kube) -> dict:
    """A protobuf request body as the JSON object of the same Kubernetes object (kind and apiVersion first), read
    with the field tables of ``kube`` (the cluster's versions.KubeVersion: a 1.36 cluster reads 1.36's fields)."""
    api_version, kind, raw, encoding = _unknown(body, kube)
    if encoding:
        raise ProtobufError(f"content encoding {encoding!r} is not supported")
    name = DELETE_OPTIONS if kind == "DeleteOptions" else ROOTS.get((api_version, kind))
    if name is None:
        raise ProtobufError(f"no kind {kind!r} of version {api_version!r} is known to this server")
    return {"kind": kind, "apiVersion": api_version, **message(name, raw, kube)}
