"""NodeTable: the snapshot's NodeInfo aggregates as NumPy columns, for the batch Filter and Score paths.

Row ``i`` is ``snapshot.node_infos[i]`` (``NodeInfo.index``). The table is owned by its Snapshot and kept
current incrementally: a NodeInfo the snapshot owns records its index in the snapshot's dirty set when
its pods or its node change, and ``Snapshot.table()`` refreshes only those rows before handing the
table out. Label columns (one integer code per distinct value, -1 when the label is absent) are built
on first use per label key and kept current the same way.

Values are Python ints in the NodeInfos; the table holds them as int64. ``exact`` is False when some
value's magnitude is 2**53 or more: int64 products could then overflow and float64 arithmetic would
round differently from Python's, so batch plugins fall back to the per-node path.
"""
from __future__ import annotations

import copy

import numpy as np

EXACT_LIMIT = 2**53
_COLUMNS = ("alloc_cpu", "alloc_memory", "alloc_ephemeral", "alloc_pods", "req_cpu", "req_memory", "req_ephemeral",
            "nonzero_cpu", "nonzero_memory", "summed_nonzero_cpu", "summed_nonzero_memory", "pod_count",
            "unschedulable", "hard_taints", "prefer_taints", "has_images", "generation", "_wide")
MAX_INDEXES = 256
HARD_EFFECTS = ("NoSchedule", "NoExecute")


class NodeTable:
    """Per-node columns (int64 resources, bool flags, lazily built label code columns)."""

    def __init__(self, node_infos):
        n = len(node_infos)
        self.infos = node_infos
        self.n = n
        self.names = [ni.name for ni in node_infos]  # a row's NodeInfo keeps its node name
        self.rows = np.arange(n, dtype=np.int64)
        i64 = np.int64
        self.alloc_cpu = np.zeros(n, i64)
        self.alloc_memory = np.zeros(n, i64)
        self.alloc_ephemeral = np.zeros(n, i64)
        self.alloc_pods = np.zeros(n, i64)
        self.req_cpu = np.zeros(n, i64)
        self.req_memory = np.zeros(n, i64)
        self.req_ephemeral = np.zeros(n, i64)
        self.nonzero_cpu = np.zeros(n, i64)
        self.nonzero_memory = np.zeros(n, i64)
        self.summed_nonzero_cpu = np.zeros(n, i64)
        self.summed_nonzero_memory = np.zeros(n, i64)
        self.pod_count = np.zeros(n, i64)
        self.unschedulable = np.zeros(n, bool)
        self.hard_taints = np.zeros(n, bool)      # has NoSchedule or NoExecute taints
        self.prefer_taints = np.zeros(n, bool)    # has PreferNoSchedule taints
        self.has_images = np.zeros(n, bool)
        self.generation = np.zeros(n, i64)        # NodeInfo.generation: changes whenever the node's pods do
        self.indexes = {}                         # pod_index caches kept with this table (see index())
        self._wide = np.zeros(n, bool)            # a value of magnitude 2**53 or more
        self._labels = {}                         # key -> (value -> code, int32 code column)
        self._row_of = None
        for i, ni in enumerate(node_infos):
            self._fill(i, ni)
        self._recount()

    def derived(self, infos, rows) -> "NodeTable":
        """A copy for ``infos``, a node list of the same length that differs from this table's only at ``rows``
        (same node names there): those rows are re-read, the rest is copied, the pod indexes too."""
        t = copy.copy(self)
        for name in _COLUMNS:
            setattr(t, name, getattr(self, name).copy())
        t.infos = infos
        t._labels = {key: (dict(codes), column.copy()) for key, (codes, column) in self._labels.items()}
        t.indexes = {key: idx.copy() for key, idx in self.indexes.items()}
        t._row_of = None
        for i in rows:
            t._fill(i, infos[i])
        t._recount()
        return t

    def _recount(self):
        self.exact = not np.count_nonzero(self._wide)

    def _fill(self, i: int, ni) -> None:
        node = ni.node
        alloc = node.allocatable
        req = ni.requested
        values = (alloc.get("cpu", 0), alloc.get("memory", 0), alloc.get("ephemeral-storage", 0),
                  alloc.get("pods", 0), req.get("cpu", 0), req.get("memory", 0), req.get("ephemeral-storage", 0),
                  ni.nonzero_cpu, ni.nonzero_memory, ni.summed_nonzero_cpu, ni.summed_nonzero_memory)
        wide = False
        for v in values:
            if v >= EXACT_LIMIT or v <= -EXACT_LIMIT:
                wide = True
        self._wide[i] = wide
        if wide:
            values = (0,) * len(values)
        (self.alloc_cpu[i], self.alloc_memory[i], self.alloc_ephemeral[i], self.alloc_pods[i], self.req_cpu[i],
         self.req_memory[i], self.req_ephemeral[i], self.nonzero_cpu[i], self.nonzero_memory[i],
         self.summed_nonzero_cpu[i], self.summed_nonzero_memory[i]) = values
        self.pod_count[i] = len(ni.pods)
        self.generation[i] = ni.generation
        self.unschedulable[i] = node.unschedulable
        hard = prefer = False
        for t in node.taints:
            if t.effect in HARD_EFFECTS:
                hard = True
            elif t.effect == "PreferNoSchedule":
                prefer = True
        self.hard_taints[i] = hard
        self.prefer_taints[i] = prefer
        self.has_images[i] = bool(ni.image_states)
        if self._labels:
            labels = node.labels
            for key, (codes, column) in self._labels.items():
                column[i] = _code(codes, labels.get(key))
        if self._row_of is not None:
            self._row_of[node.name] = i

    def refresh(self, dirty) -> None:
        """Re-read the rows in ``dirty`` (an iterable of row indexes) from their NodeInfos."""
        infos = self.infos
        for i in dirty:
            self._fill(i, infos[i])
        self._recount()

    def index(self, key, make):
        """The per-row index cached under ``key`` (``make(table)`` builds it on first use).

        Indexes live as long as the table (until the snapshot's node list changes); at most
        MAX_INDEXES are kept, the oldest dropped first.
        """
        idx = self.indexes.get(key)
        if idx is None:
            if len(self.indexes) >= MAX_INDEXES:
                del self.indexes[next(iter(self.indexes))]
            idx = self.indexes[key] = make(self)
        return idx

    def domain_sums(self, key: str, per_row):
        """Sum ``per_row`` (int64 per row) per value of label ``key``: an int64 array over the label's codes,
        one spare slot longer and 0 there (as ``counts_by_code``); rows without the label add nothing."""
        codes, column = self.label_column(key)
        spare = len(codes)
        slots = np.where(column < 0, spare, column)
        out = np.bincount(slots, weights=per_row, minlength=spare + 1)
        out[spare] = 0
        return out.astype(np.int64)

    # -- labels and names ----------------------------------------------------------------------
    def label_column(self, key: str):
        """(value -> code dict, int32 column of codes, -1 where the node lacks the label)."""
        entry = self._labels.get(key)
        if entry is None:
            codes = {}
            column = np.fromiter((_code(codes, ni.node.labels.get(key)) for ni in self.infos),
                                 dtype=np.int32, count=self.n)
            entry = self._labels[key] = (codes, column)
        return entry

    def label_code(self, key: str, value: str) -> int:
        """The code of ``value`` in label ``key``'s column, allocated if no node has that value yet."""
        return _code(self.label_column(key)[0], value)

    def row_of(self, name: str) -> int:
        """The row of the node called ``name``, or -1."""
        if self._row_of is None:
            self._row_of = {ni.name: i for i, ni in enumerate(self.infos)}
        return self._row_of.get(name, -1)


def _code(codes: dict, value) -> int:
    if value is None:
        return -1
    c = codes.get(value)
    if c is None:
        c = codes[value] = len(codes)
    return c


# -- vectorized selectors -------------------------------------------------------------------------
def row_mask(n: int, rows):
    """A boolean column over a table of ``n`` rows, True at ``rows``."""
    mask = np.zeros(n, bool)
    mask[rows] = True
    return mask


def requirement_mask(table: NodeTable, rows, key: str, op: str, values):
    """A node selector requirement over the rows' labels, or None for Gt/Lt (the per-node path decides)."""
    codes, column = table.label_column(key)
    col = column[rows]
    if op == "Exists":
        return col >= 0
    if op == "DoesNotExist":
        return col < 0
    if op in ("In", "NotIn"):
        wanted = [codes[v] for v in values if v in codes]
        hit = np.isin(col, wanted) if wanted else np.zeros(len(rows), bool)
        return hit if op == "In" else ~hit
    return None


def node_selector_term_mask(table: NodeTable, rows, term):
    """NodeSelectorTerm.matches over rows (None when a requirement cannot be vectorized)."""
    if not term.valid:
        return np.zeros(len(rows), bool)
    mask = np.ones(len(rows), bool)
    for key, op, values in term.expressions:
        m = requirement_mask(table, rows, key, op, values)
        if m is None:
            return None
        mask &= m
    for _key, op, values in term.fields:
        hit = rows == table.row_of(values[0])
        mask &= hit if op == "In" else ~hit
    return mask


def node_selector_mask(table: NodeTable, rows, selector):
    """NodeSelector.matches (OR over terms) over rows, or None."""
    mask = np.zeros(len(rows), bool)
    for term in selector.terms:
        m = node_selector_term_mask(table, rows, term)
        if m is None:
            return None
        mask |= m
    return mask


def counts_by_code(codes: dict, per_value: dict):
    """``{label value: count}`` as an int64 array indexed by the label column's codes, one slot longer.

    The last slot is 0, so gathering with a code column (where -1 marks a missing label) gives 0 for
    nodes without the label; values no node carries are dropped.
    """
    n = len(codes)
    out = np.zeros(n + 1, np.int64)
    if per_value:
        idx = np.fromiter((codes.get(v, n) for v in per_value), np.int64, len(per_value))
        out[idx] = np.fromiter(per_value.values(), np.int64, len(per_value))
        out[n] = 0
    return out
