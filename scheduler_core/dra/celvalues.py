"""The values of CEL device selectors that do not need cel-python: the error with kube's text, semvers and
quantities (apiserver/pkg/cel/library). Loaded without cel-python, so validation and explanations can name them."""
from __future__ import annotations

import functools
import re
from fractions import Fraction

from ..objects.field import go_quote


class CELError(ValueError):
    """A compile or runtime error, with kube's text (``str(err)``)."""


# -- semver (apiserver/pkg/cel/library/semverlib.go, blang/semver strict parsing) ----------------------------
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
                     r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")


def semver_parse_error(text: str) -> str | None:
    """blang/semver v4's Parse error for ``text`` (kube's ``semver()``), None when it parses."""
    def only(part, allowed):
        return all(c in allowed for c in part)

    def number_error(label, part):
        if not only(part, _DIGITS):
            return f"Invalid character(s) found in {label} number {go_quote(part)}"
        if len(part) > 1 and part[0] == "0":
            return f"{label.capitalize()} number must not contain leading zeroes {go_quote(part)}"
        if part == "" or int(part) > 2**64 - 1:
            return (f"strconv.ParseUint: parsing {go_quote(part)}: "
                    + ("invalid syntax" if part == "" else "value out of range"))
        return None

    if not text:
        return "Version string empty"
    parts = text.split(".", 2)
    if len(parts) != 3:
        return "No Major.Minor.Patch elements found"
    err = number_error("major", parts[0]) or number_error("minor", parts[1])
    if err:
        return err
    patch, build, pre = parts[2], [], []
    if "+" in patch:
        patch, _, meta = patch.partition("+")
        build = meta.split(".")
    if "-" in patch:
        patch, _, release = patch.partition("-")
        pre = release.split(".")
    err = number_error("patch", patch)
    if err:
        return err
    for p in pre:
        if not p:
            return "Prerelease is empty"
        if only(p, _DIGITS):
            if len(p) > 1 and p[0] == "0":
                return f"Numeric PreRelease version must not contain leading zeroes {go_quote(p)}"
        elif not only(p, _ALPHANUM):
            return f"Invalid character(s) found in prerelease {go_quote(p)}"
    for b in build:
        if not b:
            return "Build meta data is empty"
        if not only(b, _ALPHANUM):
            return f"Invalid character(s) found in build meta data {go_quote(b)}"
    return None


_DIGITS = frozenset("0123456789")
_ALPHANUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


@functools.total_ordering
class Semver:
    """A semantic version 2.0.0, ordered as semver orders (build metadata ignored)."""

    __slots__ = ("text", "major", "minor", "patch", "pre")

    def __init__(self, text: str):
        m = SEMVER.match(text)
        if m is None:
            raise CELError(f"could not parse {text!r} as semver")
        self.text = text
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m.group(4) else ()

    def _key(self):
        # a release sorts after its pre-releases; numeric identifiers sort before alphanumeric ones
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, not self.pre, pre)

    def __eq__(self, other):
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other):
        if not isinstance(other, Semver):
            return NotImplemented   # cel-go: no such overload
        return self._key() < other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Semver({self.text})"


class Quantity:
    """A resource.Quantity in CEL (apiserver/pkg/cel/library/quantity.go)."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"Quantity({self.value})"
