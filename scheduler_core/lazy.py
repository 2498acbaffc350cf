"""A dict and a list that are built only when first read.

A kube-mode cycle on a big cluster can reject thousands of nodes. Their statuses, the node names in
visiting order and the plugins that stopped them are kept as NumPy arrays and shared Status objects, and
turned into the trace's dict and list only when something reads them (a FitError message, PostFilter, a
recorder). The builder must depend only on values fixed when it was made.
"""
from __future__ import annotations

from collections.abc import MutableMapping, Sequence


class LazyDict(MutableMapping):
    """A dict made by ``build()`` on first use. ``size``, when given, answers ``len`` and ``distinct``
    (every value, each once) answers ``distinct_values`` without building it. ``source``: what ``build`` reads
    (``unbuilt_source`` gives it while the dict is not built, for readers that can use it as it is)."""

    __slots__ = ("_build", "_data", "_size", "_distinct", "_source")

    def __init__(self, build, size: int | None = None, distinct=None, source=None):
        self._build = build
        self._data = None
        self._size = size
        self._distinct = distinct
        self._source = source

    def unbuilt_source(self):
        """``source`` while the dict is not built (then it holds exactly what ``source`` gives), else None."""
        return self._source if self._data is None else None

    def distinct_values(self):
        """The values, each at least once (all of them once built or without ``distinct``)."""
        if self._data is None and self._distinct is not None:
            return self._distinct
        return self.data.values()

    @property
    def data(self) -> dict:
        """The built dict (built now if it was not yet)."""
        if self._data is None:
            self._data = self._build()
            self._build = None
        return self._data

    def __getitem__(self, key):
        return self.data[key]

    def get(self, key, default=None):
        return self.data.get(key, default)

    def __setitem__(self, key, value):
        self.data[key] = value

    def __delitem__(self, key):
        del self.data[key]

    def __contains__(self, key):
        return key in self.data

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        if self._data is None and self._size is not None:
            return self._size
        return len(self.data)

    def keys(self):
        return self.data.keys()

    def values(self):
        return self.data.values()

    def items(self):
        return self.data.items()

    def __repr__(self):
        return f"LazyDict({self.data!r})"


class LazyList(Sequence):
    """A list made by ``build()`` on first use; ``size`` answers ``len`` without building it."""

    __slots__ = ("_build", "_data", "_size")

    def __init__(self, build, size: int):
        self._build = build
        self._data = None
        self._size = size

    @property
    def data(self) -> list:
        """The built list (built now if it was not yet)."""
        if self._data is None:
            self._data = self._build()
            self._build = None
        return self._data

    def __getitem__(self, i):
        return self.data[i]

    def __iter__(self):
        return iter(self.data)

    def __contains__(self, value):
        return value in self.data

    def __len__(self):
        return self._size if self._data is None else len(self._data)

    def __eq__(self, other):
        if isinstance(other, (list, LazyList)):
            return self.data == list(other)
        return NotImplemented

    def __repr__(self):
        return f"LazyList({self.data!r})"
