"""Framework status codes and Status, as in kube-scheduler's framework/interface.go."""
from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def __str__(self):
        return CODE_NAMES[self]


CODE_NAMES = {Code.SUCCESS: "Success", Code.ERROR: "Error", Code.UNSCHEDULABLE: "Unschedulable",
              Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable", Code.WAIT: "Wait",
              Code.SKIP: "Skip", Code.PENDING: "Pending"}
REJECTED = frozenset((Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING))


class Status:
    """A plugin result: code, ordered reasons, the failing plugin and an optional error.

    ``None`` stands for Success everywhere in the framework, to keep the hot path allocation-free.
    """

    __slots__ = ("code", "reasons", "plugin", "err")

    def __init__(self, code: Code, *reasons: str, plugin: str = "", err: str | None = None):
        self.code = code
        self.reasons = list(reasons)
        self.plugin = plugin
        self.err = err

    @classmethod
    def error(cls, err: str, plugin: str = "") -> "Status":
        return cls(Code.ERROR, err, plugin=plugin, err=err)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def is_rejected(self) -> bool:
        return self.code in REJECTED

    def as_error(self) -> str:
        return self.err if self.err is not None else self.message()

    def with_plugin(self, plugin: str) -> "Status":
        self.plugin = plugin
        return self

    def to_dict(self, with_plugin: bool = False) -> dict:
        d = {"code": str(self.code), "reasons": list(self.reasons)}
        if with_plugin and self.plugin:
            d["plugin"] = self.plugin
        return d

    def __repr__(self):
        return f"Status({self.code!s}, {self.reasons!r}, plugin={self.plugin!r})"


def code_of(status) -> Code:
    return Code.SUCCESS if status is None else status.code


def is_success(status) -> bool:
    return status is None or status.code == Code.SUCCESS


SUCCESS_DICT = {"code": "Success", "reasons": []}
