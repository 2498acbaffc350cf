"""Model fields of the dashboard."""
from __future__ import annotations

import base64
import zlib

import orjson
from django.core.exceptions import ValidationError
from django.db import models

PACK_OPTIONS = orjson.OPT_NON_STR_KEYS


def pack_json(value) -> bytes:
    """A JSON value as zlib-compressed UTF-8 JSON (level 1: about 0.1 ms for a 5,000-node cycle's matrix)."""
    return zlib.compress(orjson.dumps(value, option=PACK_OPTIONS), 1)


def unpack_json(data):
    """The JSON value of ``pack_json`` bytes."""
    return orjson.loads(zlib.decompress(data))


class PackedJSONField(models.BinaryField):
    """A JSON value stored compressed (``bytea`` on PostgreSQL), read back as the value.

    For large documents that are written often and never queried inside the database, such as a cycle's
    per-node, per-plugin matrix: encoding and compressing it is several times cheaper than ``json.dumps``,
    and PostgreSQL stores a few kB of bytes instead of parsing and TOAST-compressing 50 kB of ``jsonb``.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def from_db_value(self, value, expression, connection):
        return None if value is None else unpack_json(value)

    def to_python(self, value):
        if value is None or isinstance(value, (dict, list)):
            return value
        if isinstance(value, str):  # serialization (dumpdata) form: base64 of the packed bytes
            value = base64.b64decode(value.encode("ascii"))
        try:
            return unpack_json(value)
        except (zlib.error, orjson.JSONDecodeError, TypeError) as err:
            raise ValidationError(f"not a packed JSON value: {err}") from err

    def get_prep_value(self, value):
        if value is None or isinstance(value, (bytes, memoryview)):
            return value
        return pack_json(value)

    def value_to_string(self, obj):
        return base64.b64encode(self.get_prep_value(self.value_from_object(obj))).decode("ascii")
