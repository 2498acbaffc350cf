"""Model fields of the dashboard."""
from __future__ import annotations

import base64
from collections import OrderedDict

from django.core.exceptions import ValidationError
from django.db import models

from .packing import UNPACK_ERRORS, pack_json, unpack_json
from .services.tracecodec import COLUMNS, expand, unpack_suggestions


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
        except UNPACK_ERRORS as err:
            raise ValidationError(f"not a packed JSON value: {err}") from err

    def get_prep_value(self, value):
        if value is None or isinstance(value, (bytes, memoryview)):
            return value
        return pack_json(value)

    def value_to_string(self, obj):
        return base64.b64encode(self.get_prep_value(self.value_from_object(obj))).decode("ascii")


_NODE_LISTS = OrderedDict()   # key -> names of recently read node lists (a key names one content)
_NODE_LISTS_KEPT = 16


def _node_list(connection, key: str) -> list | None:
    names = _NODE_LISTS.get(key)
    if names is None:
        with connection.cursor() as cur:
            cur.execute("SELECT names FROM dashboard_nodelist WHERE key = %s", [key])
            row = cur.fetchone()
        if row is None:
            return None
        names = _NODE_LISTS[key] = unpack_json(bytes(row[0]))
        while len(_NODE_LISTS) > _NODE_LISTS_KEPT:
            _NODE_LISTS.popitem(last=False)
    return names


class CycleMatrixField(PackedJSONField):
    """A cycle's matrix, read back in the row form whichever form it was stored in: a column-form matrix
    (full trace on big clusters, tracecodec) is expanded with its stored node list."""

    def from_db_value(self, value, expression, connection):
        matrix = super().from_db_value(value, expression, connection)
        if not isinstance(matrix, dict) or matrix.get("format") != COLUMNS:
            return matrix
        names = _node_list(connection, matrix["node_list"])
        if names is None:  # pruned (retention) while a cycle still refers to it
            gone = ("columns", "final", "stopped", "evaluated", "score")
            matrix = {k: v for k, v in matrix.items() if k not in gone} | {
                "nodes": [], "visited": 0, "feasible": [], "node_list_missing": True}
            if matrix.get("suggestions"):
                matrix["suggestions"] = unpack_suggestions(matrix["suggestions"], None)
            return matrix
        return expand(matrix, names)
