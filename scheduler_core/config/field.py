"""Field errors in the format of k8s.io/apimachinery/pkg/util/validation/field."""
from __future__ import annotations

import json


def _fmt_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if v is None:
        return "null"
    return str(v)


class FieldError:
    __slots__ = ("path", "kind", "value", "detail")

    def __init__(self, path: str, kind: str, value=None, detail: str = ""):
        self.path, self.kind, self.value, self.detail = path, kind, value, detail

    def __str__(self):
        if self.kind == "Invalid":
            s = f"{self.path}: Invalid value: {_fmt_value(self.value)}"
            return f"{s}: {self.detail}" if self.detail else s
        if self.kind == "NotSupported":
            return f"{self.path}: Unsupported value: {_fmt_value(self.value)}: supported values: {self.detail}"
        if self.kind == "Duplicate":
            return f"{self.path}: Duplicate value: {self.detail or _fmt_value(self.value)}"
        if self.kind == "Required":
            return f"{self.path}: Required value" + (f": {self.detail}" if self.detail else "")
        if self.kind == "Forbidden":
            return f"{self.path}: Forbidden" + (f": {self.detail}" if self.detail else "")
        return f"{self.path}: {self.detail}"


def invalid(path, value, detail):
    return FieldError(path, "Invalid", value, detail)


def not_supported(path, value, supported):
    return FieldError(path, "NotSupported", value, ", ".join(json.dumps(s) for s in supported))


def required(path, detail=""):
    return FieldError(path, "Required", None, detail)


def forbidden(path, detail=""):
    return FieldError(path, "Forbidden", None, detail)


def duplicate(path, value, detail=""):
    return FieldError(path, "Duplicate", value, detail)


def aggregate(errors) -> str:
    """utilerrors.Aggregate.Error(): one error bare, several as [e1, e2]."""
    texts = [str(e) for e in errors]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
