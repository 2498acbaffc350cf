"""FilterTable: every Filter plugin's verdict on every node of one cycle, as integer columns.

Trace mode records what each Filter plugin says of each node, not only what kube's search needed. Per
plugin that is one column over the NodeTable rows: 0 where the plugin passes the row, ``k`` where it gives
``statuses[k - 1]`` (a rejection, an error, or Skip for a plugin PreFilter skipped); a column that is the
same on every row is kept as that one int. Framework.run_filter_table also gives each node's Filter result
(runFilterPlugins: the first plugin that does not pass, an error wrapped as kube wraps it) as a column of
the same codes, which the search reads and the trace does not keep.
Rows that fail for the same reasons share one Status, so a cycle holds a handful of Status objects
whatever the cluster's size.
"""
from __future__ import annotations

import numpy as np

from .status import Code, Status


class StatusPool:
    """The distinct Statuses of one cycle, each numbered from 1 once per (plugin, code, reasons)."""

    __slots__ = ("statuses", "_index")

    def __init__(self):
        self.statuses = []
        self._index = {}

    def code(self, plugin: str, code, reasons: tuple) -> int:
        key = (plugin, code, reasons)
        k = self._index.get(key)
        if k is None:
            self.statuses.append(Status(code, *reasons, plugin=plugin))
            k = self._index[key] = len(self.statuses)
        return k

    def code_of(self, plugin: str, st) -> int:
        """The code of a Status a plugin returned (0 for None or Success)."""
        if st is None or st.code == Code.SUCCESS:
            return 0
        if st.err is not None:  # an error keeps its own text
            st.plugin = plugin
            return self.add(st)
        return self.code(plugin, st.code, tuple(st.reasons))

    def add(self, st) -> int:
        """A code for ``st`` itself (kept as is, not shared)."""
        self.statuses.append(st)
        return len(self.statuses)


class FilterTable:
    """Per-plugin verdict columns over NodeTable rows (see the module docstring)."""

    __slots__ = ("names", "plugins", "columns", "statuses", "search", "feasible_rows")

    def __init__(self, names: list, plugins: list, columns: list, statuses: list):
        self.names = names          # node name of each row (the NodeTable's list, shared, never changed)
        self.plugins = plugins      # Filter plugin names, in the profile's order
        self.columns = columns      # per plugin: an int (every row) or an int16 array over rows
        self.statuses = statuses    # code k is statuses[k - 1]
        self.search = None          # (rows searched in order or None for all, start, nodes visited): kube's search
        self.feasible_rows = None   # rows of the feasible nodes the search kept, in its order

    def evaluated_rows(self):
        """The rows kube's search visited, in visiting order: a list of [first row, count] runs when it
        searched every row (a rotation: at most two runs), else an array."""
        searched, start, visited = self.search
        n = len(self.names) if searched is None else len(searched)
        if searched is None:
            head = min(visited, n - start)
            return [[start, head]] + ([[0, visited - head]] if visited > head else [])
        return searched[np.arange(start, start + visited, dtype=np.int64) % max(n, 1)]

    def column(self, p: int):
        """Plugin ``p``'s column as an array over rows."""
        col = self.columns[p]
        return np.full(len(self.names), col, np.int16) if isinstance(col, int) else col

    def status(self, k: int):
        return self.statuses[k - 1] if k else None

    def add(self, st) -> int:
        """A code for another Status of this cycle (a node's result with nominated pods)."""
        self.statuses.append(st)
        return len(self.statuses)

    def per_node(self) -> dict:
        """{node: {plugin: Status or None}}, the form of the per-node trace (built only when read)."""
        statuses = [None] + self.statuses
        cols = [self.column(p).tolist() for p in range(len(self.plugins))]
        plugins = self.plugins
        return {name: {plugins[p]: statuses[cols[p][r]] for p in range(len(plugins))}
                for r, name in enumerate(self.names)}


def distinct_codes(codes) -> list:
    """The distinct values of an array of small non-negative integer codes, ascending."""
    return np.flatnonzero(np.bincount(codes)).tolist()


def fill_first(first, col, pool: StatusPool, plugin: str) -> None:
    """Rows of ``first`` still passing take ``col``'s code, an error wrapped as runFilterPlugins wraps it."""
    if isinstance(col, int):
        if col:
            first[first == 0] = _framework_code(col, pool, plugin)
        return
    todo = (first == 0) & (col != 0)
    if not np.count_nonzero(todo):
        return
    got = col[todo]
    for k in distinct_codes(got):
        fk = _framework_code(k, pool, plugin)
        if fk != k:
            got[got == k] = fk
    first[todo] = got


def _framework_code(k: int, pool: StatusPool, plugin: str) -> int:
    st = pool.statuses[k - 1]
    if st.is_rejected():
        return k
    return pool.add(Status.error(f'running "{plugin}" filter plugin: {st.as_error()}', plugin=plugin))
