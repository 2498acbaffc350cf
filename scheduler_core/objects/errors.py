"""Errors raised while parsing Kubernetes objects: they carry the field path."""


class ParseError(ValueError):
    """Malformed input at a field path (e.g. ``spec.containers[0].resources.requests.cpu``)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def expect(value, kind, path: str, what: str):
    """Return value if it is of the given type (None allowed), else raise a ParseError."""
    if value is None or isinstance(value, kind):
        return value
    raise ParseError(path, f"expected {what}, got {type(value).__name__}")


def object_meta(raw, kind: str):
    """Validate an API object's shape and return (metadata, name, labels, annotations)."""
    if not isinstance(raw, dict):
        raise ParseError("", f"expected a {kind} object")
    meta = expect(raw.get("metadata"), dict, "metadata", "object") or {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ParseError("metadata.name", "required value")
    labels = dict(expect(meta.get("labels"), dict, "metadata.labels", "object") or {})
    annotations = dict(expect(meta.get("annotations"), dict, "metadata.annotations", "object") or {})
    return meta, name, labels, annotations
