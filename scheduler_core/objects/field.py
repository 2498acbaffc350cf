"""Field errors in the format of k8s.io/apimachinery/pkg/util/validation/field and util/errors."""
from __future__ import annotations

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\", '"': '\\"'}


def go_quote(s: str) -> str:
    """strconv.Quote: a double-quoted Go string literal (printable Unicode is kept as is)."""
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch == " " or ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


class GoValue:
    """A value whose Go rendering (``%#v`` or ``%s``) is already known, e.g. ``[]string{"a"}``."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __str__(self):
        return self.text


def go_string_slice(values) -> GoValue:
    """``%#v`` of a []string: ``[]string(nil)`` for nil, else ``[]string{"a", "b"}``."""
    if values is None:
        return GoValue("[]string(nil)")
    return GoValue("[]string{" + ", ".join(go_quote(v) for v in values) + "}")


def fmt_value(v) -> str:
    """field.Error's rendering of a bad value: simple types with %v, strings with %q, the rest as given."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, str):
        return go_quote(v)
    return str(v)


class FieldError:
    """One field.Error: path, type (Invalid, NotSupported, Duplicate, Required, Forbidden, TooLong, TooMany), value,
    detail."""

    __slots__ = ("path", "kind", "value", "detail")

    def __init__(self, path: str, kind: str, value=None, detail: str = ""):
        self.path, self.kind, self.value, self.detail = path, kind, value, detail

    @property
    def reason(self) -> str:
        """The CauseType of a Status cause (``FieldValueInvalid``, ...)."""
        return f"FieldValue{self.kind}"

    def body(self) -> str:
        """ErrorBody(): the message without the path."""
        if self.kind == "Invalid":
            s = f"Invalid value: {fmt_value(self.value)}"
        elif self.kind == "NotSupported":
            s = f"Unsupported value: {fmt_value(self.value)}"
        elif self.kind == "Duplicate":
            s = f"Duplicate value: {fmt_value(self.value)}"
        elif self.kind == "TooMany":
            s = f"Too many: {fmt_value(self.value)}"
        elif self.kind == "Required":
            s = "Required value"
        elif self.kind == "TooLong":
            s = "Too long"
        else:
            s = self.kind
        return f"{s}: {self.detail}" if self.detail else s

    def __str__(self):
        return f"{self.path}: {self.body()}"

    def __repr__(self):
        return f"FieldError({self})"


def invalid(path, value, detail):
    return FieldError(path, "Invalid", value, detail)


def not_supported(path, value, supported):
    detail = "supported values: " + ", ".join(go_quote(str(s)) for s in supported) if supported else ""
    return FieldError(path, "NotSupported", value, detail)


def required(path, detail=""):
    return FieldError(path, "Required", None, detail)


def forbidden(path, detail=""):
    return FieldError(path, "Forbidden", None, detail)


def too_long(path, detail=""):
    return FieldError(path, "TooLong", None, detail)


def too_many(path, actual: int, maximum: int):
    """field.TooMany with a known maximum."""
    return FieldError(path, "TooMany", actual, f"must have at most {maximum} items")


def duplicate(path, value, detail=""):
    return FieldError(path, "Duplicate", value, detail)


def aggregate(errors) -> str:
    """utilerrors.Aggregate.Error(): repeated messages once; one message bare, several as [e1, e2]."""
    texts = []
    for e in errors:
        t = str(e)
        if t not in texts:
            texts.append(t)
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
