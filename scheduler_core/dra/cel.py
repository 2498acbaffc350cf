"""CEL device selectors (k8s.io/dynamic-resource-allocation/cel) on cel-python, wrapped to kube's semantics.

A selector sees ``device.driver``, ``device.allowMultipleAllocations``, ``device.attributes[domain].id`` and
``device.capacity[domain].id`` (a quantity), with cel-go's ``cel.bind`` and heterogeneous equality (values of
different types are unequal; ordering them is "no such overload"). Attributes and capacities without a domain belong to the driver's
domain. A domain the device does not have is an empty map; an id it does not have is the runtime error
``no such key: ID`` (kube aborts the allocation with it). Version attributes are semvers (``semver(s)``,
``isGreaterThan``, ``isLessThan``, ``compareTo``, ``major()``, ...), capacities are quantities (``quantity(s)``,
``compareTo``, ``isGreaterThan``, ``isLessThan``, ``add``, ``sub``, ``asInteger()``, ...), as in the apiserver's
CEL libraries. Compiled programs are cached by expression (kube's cel.Cache).

cel-python is imported when the first selector is compiled or the first device variable is made (celenv): a
scheduler that meets no DRA object never loads it.
"""
from __future__ import annotations

import functools
import re
from fractions import Fraction


class CELError(ValueError):
    """A compile or runtime error, with kube's text (``str(err)``)."""


# -- semver (apiserver/pkg/cel/library/semverlib.go, blang/semver strict parsing) ----------------------------
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
                     r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")


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


@functools.lru_cache(maxsize=1024)
def compile_selector(expression: str):
    """GetOrCompile: the program for an expression (celenv.Program), or one whose ``error`` says why it does not
    compile."""
    from . import celenv
    return celenv.compile_selector(expression)


def device_activation(driver: str, device: dict) -> dict:
    """The ``device`` variable for one ResourceSlice device (its raw dict)."""
    from . import celenv
    return celenv.device_activation(driver, device)
