"""CycleState: per-attempt key/value store owned by plugins."""
from __future__ import annotations


class CycleState:
    """Plugin data for one scheduling attempt. Values may define ``clone()`` for preemption dry runs."""

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins", "skip_pre_bind_plugins", "pods_to_activate")

    def __init__(self):
        self._data = {}
        self.skip_filter_plugins = set()
        self.skip_score_plugins = set()
        self.skip_pre_bind_plugins = set()
        self.pods_to_activate = {}

    def read(self, key):
        return self._data[key]

    def get(self, key, default=None):
        return self._data.get(key, default)

    def write(self, key, value):
        self._data[key] = value

    def delete(self, key):
        self._data.pop(key, None)

    def clone(self) -> "CycleState":
        c = CycleState()
        c._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.pods_to_activate = dict(self.pods_to_activate)
        return c
