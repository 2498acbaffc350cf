"""Compact storage form of a cycle's per-node, per-plugin results, and the row it becomes.

A CycleTrace.to_dict() record repeats {"code": ..., "reasons": [...]} for every node and plugin; at 5,000
nodes that is megabytes per cycle. Here statuses are interned once per cycle and the matrices are lists of
small integers (the row stores them packed: dashboard.fields.PackedJSONField).

``trace_fields(trace)`` builds the row straight from a CycleTrace (what the recorder queues): from its
score arrays and Status objects, each Status interned once, without the per-node dicts of to_dict(). Its
definition is the per-node encoding of a to_dict() record in tests/dashboard/cycle_reference.py, which it
matches exactly.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from datetime import datetime, timezone
from itertools import chain

import numpy as np

from scheduler_core.framework.runtime import status_counts
from scheduler_core.framework.status import Code
from scheduler_core.lazy import LazyDict, LazyList

from ..packing import pack_json

PASS = 0        # filter cell: the plugin passed the node
NOT_RUN = -1    # filter cell: the plugin did not run on the node
COLUMNS = "columns"   # matrix["format"] of the column form


def _unshared(value):
    """The dict or list behind a LazyDict / LazyList, built here without storing it if it was not built
    yet: the scheduling thread may build it at the same time. A builder sets ``_data`` before clearing
    ``_build``, so reading ``_build`` first always finds one of them."""
    if not isinstance(value, (LazyDict, LazyList)):
        return value
    build = value._build
    data = value._data
    return data if data is not None else build()


def _rejections(value):
    """The Rejections (with NodeTable rows) behind a trace's LazyDict that is not built, else None."""
    source = value.unbuilt_source() if isinstance(value, LazyDict) else None
    return source if source is not None and getattr(source, "rows", None) is not None else None


def _ints(values) -> list:
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _score_block(tr, nodes: list, seen: set | None = None):
    """The matrix's "score" part (or None), from the score arrays when the trace still has them. ``nodes``:
    the matrix's nodes in order, ``seen`` the same as a set (made here when needed)."""
    arrays = tr._score_arrays  # read once: the scheduling thread may turn them into dicts meanwhile
    if arrays is not None:
        names, per_plugin, totals = arrays
        if not len(names):
            return None
        columns = {p: (w, _ints(raw), _ints(norm)) for p, (w, raw, norm) in per_plugin.items()}
        totals = _ints(totals)
        names = list(names)
        if nodes[:len(names)] == names:
            # The usual case: the scored nodes are the first evaluated ones, in order (names are unique).
            snodes = names
        else:
            in_scores = set(names)
            seen = set(nodes) if seen is None else seen
            snodes = [n for n in nodes if n in in_scores] + [n for n in names if n not in seen]
        if snodes != names:
            pos = {n: i for i, n in enumerate(names)}
            order = [pos[n] for n in snodes]
            columns = {p: (w, [raw[i] for i in order], [norm[i] for i in order])
                       for p, (w, raw, norm) in columns.items()}
            totals = [totals[i] for i in order]
        splugins = list(columns)
        return {"nodes": snodes, "plugins": splugins, "weights": [columns[p][0] for p in splugins],
                "raw": [columns[p][1] for p in splugins], "normalized": [columns[p][2] for p in splugins],
                "totals": totals}
    by_node = {}
    for plugin, (weight, per_node) in tr._scores.items():
        for node, (raw, norm) in per_node.items():
            by_node.setdefault(node, {})[plugin] = (raw, norm, weight)
    for node, total in tr._totals.items():
        by_node.setdefault(node, {})["_total"] = total
    if not by_node:
        return None
    seen = set(nodes) if seen is None else seen
    snodes = [n for n in nodes if n in by_node] + [n for n in by_node if n not in seen]
    splugins, weights = [], {}
    for per in by_node.values():
        for p, v in per.items():
            if p != "_total" and p not in weights:
                splugins.append(p)
                weights[p] = v[2]
    missing = (None, None)
    raw = [[by_node[n].get(p, missing)[0] for n in snodes] for p in splugins]
    norm = [[by_node[n].get(p, missing)[1] for n in snodes] for p in splugins]
    return {"nodes": snodes, "plugins": splugins, "weights": [weights[p] for p in splugins], "raw": raw,
            "normalized": norm, "totals": [by_node[n].get("_total") for n in snodes]}


class _Statuses(list):
    """A cycle's distinct statuses as {"code", "reasons"} dicts, numbered from 1 (a Status object is looked up
    once; equal code and reasons share a number)."""

    def __init__(self):
        super().__init__()
        self._by_id, self._by_key = {}, {}

    def number(self, st) -> int:
        """The number of ``st`` (a Status that is not Success)."""
        i = self._by_id.get(id(st))
        if i is None:
            key = (str(st.code), tuple(st.reasons))
            i = self._by_key.get(key)
            if i is None:
                self.append({"code": key[0], "reasons": list(key[1])})
                i = self._by_key[key] = len(self)
            self._by_id[id(st)] = i
        return i


def _rows_matrix(tr):
    """(matrix, failing plugins, failing reasons) with a row of cells per node (the node names inline)."""
    statuses = _unshared(tr.node_statuses)
    filt = _unshared(tr.filter)
    nodes = list(_unshared(tr.evaluated_nodes))
    visited = len(nodes)
    seen = set(nodes)
    for name in filt:
        if name not in seen:
            seen.add(name)
            nodes.append(name)
    for name in statuses:
        if name not in seen:
            seen.add(name)
            nodes.append(name)
    plugins, pidx = [], {}
    for per_plugin in filt.values():
        for p in per_plugin:
            if p not in pidx:
                pidx[p] = len(plugins)
                plugins.append(p)

    interned = _Statuses()
    intern = interned.number
    success = Code.SUCCESS

    # failing_plugins / failing_reasons count each node once, in to_dict()'s filter_framework order: the
    # filter's nodes, then the visited ones, then the other rejected ones. Without a filter and without
    # repeated nodes that is the order of ``nodes``, so the main loop counts them.
    rejections = {}                      # id(Status) -> [Status, nodes], in first-seen order
    tally = not filt and len(seen) == len(nodes)

    def tally_status(st) -> None:
        seen_st = rejections.get(id(st))
        if seen_st is None:
            rejections[id(st)] = [st, 1]
        else:
            seen_st[1] += 1

    n = len(nodes)
    cells, final_cells, stopped = [None] * n, [PASS] * n, [NOT_RUN] * n
    stop_index, stop_plugins = {}, []
    bare = {}   # code -> index of its Status without reasons (trace mode makes a new Skip per node and plugin)
    for i, name in enumerate(nodes) if filt or statuses else ():
        per_plugin = filt.get(name)
        if per_plugin is not None:
            row = [NOT_RUN] * len(plugins)
            for p, st in per_plugin.items():
                if st is None or st.code == success:
                    row[pidx[p]] = PASS
                elif st.reasons:
                    row[pidx[p]] = intern(st)
                else:
                    k = bare.get(st.code)
                    row[pidx[p]] = k if k is not None else bare.setdefault(st.code, intern(st))
            cells[i] = row
        st = statuses.get(name)
        if st is None:
            continue
        if st.code != success:
            final_cells[i] = intern(st)
            if tally:
                tally_status(st)
        plugin = st.plugin
        if plugin:
            k = stop_index.get(plugin)
            if k is None:
                k = stop_index[plugin] = len(stop_plugins)
                stop_plugins.append(plugin)
            stopped[i] = k
    if not tally:
        for name in dict.fromkeys(chain(filt, nodes)):
            st = statuses.get(name)
            if st is not None and st.code != success:
                tally_status(st)
    fail_plugins, fail_reasons = {}, {}
    for st, count in rejections.values():
        if st.plugin:
            fail_plugins[st.plugin] = fail_plugins.get(st.plugin, 0) + count
        for r in st.reasons:
            fail_reasons[r] = fail_reasons.get(r, 0) + count

    matrix = {"nodes": nodes, "visited": visited, "filter_plugins": plugins, "statuses": list(interned), "filter": cells,
              "final": final_cells, "stop_plugins": stop_plugins, "stopped": stopped,
              "prefilter": tr.prefilter_dict(), "feasible": sorted(tr.feasible), "top_nodes": sorted(tr.top_nodes),
              "prescore_skip": sorted(tr.prescore_skip_plugins),
              "unschedulable_plugins": sorted(tr.unschedulable_plugins)}
    score = _score_block(tr, nodes, seen)
    if score is not None:
        matrix["score"] = score
    return matrix, fail_plugins, fail_reasons


class _RowMap:
    """{name: row} of a node list, built when first read: most cycles never look a node up by name (a forked
    writer, which starts without the thread's cached maps, would otherwise build one per batch); and the runs of
    rows of name lists read (``ranges``)."""

    __slots__ = ("names", "_rows", "_ranges")
    KEPT_RANGES = 64

    def __init__(self, names: list):
        self.names = names
        self._rows = None
        self._ranges = {}   # id(list of names) -> (that list, its ranges)

    def __getitem__(self, name: str) -> int:
        return self._map()[name]

    def ranges(self, names: list) -> list | None:
        """``names`` as runs of rows (``_ranges``: their order kept), or None if one is not in the list. Kept for
        the list object: the suggestions of one pod template share their lists over many cycles."""
        hit = self._ranges.get(id(names))
        if hit is not None and hit[0] is names:
            return hit[1]
        get = self._map().get
        first = get(names[0]) if names else None
        if first is not None and self.names[first:first + len(names)] == names:
            ranges = [[first, len(names)]]   # one run (most lists: a suggestion's nodes, in the list's order)
        else:
            rows = [get(name) for name in names]
            ranges = None if None in rows else _ranges(rows)
        if len(self._ranges) >= self.KEPT_RANGES:
            self._ranges.clear()
        self._ranges[id(names)] = (names, ranges)   # holds the list: its id stays its own
        return ranges

    def _map(self) -> dict:
        if self._rows is None:
            self._rows = {n: r for r, n in enumerate(self.names)}
        return self._rows


class NodeLists:
    """The node name lists that column-form matrices refer to, each named by a digest of its names.

    ``get(names)`` gives (key, {name: row}) for a NodeTable's name list (the same list object while the
    nodes do not change, so the digest and the row map are made once per list) and notes the list as used;
    ``take_used()`` hands the used lists over ({key: packed names}) for the writer to store with its batch.
    """

    def __init__(self, keep: int = 8):
        self._lists = OrderedDict()   # id(names) -> (names, key, row map, packed names); holds the list
        self._keep = keep
        self._used = {}

    def get(self, names: list) -> tuple:
        hit = self._lists.get(id(names))
        if hit is None or hit[0] is not names:
            key = hashlib.blake2b("\n".join(names).encode(), digest_size=16).hexdigest()
            hit = (names, key, _RowMap(names), pack_json(names))
            self._lists[id(names)] = hit
            while len(self._lists) > self._keep:
                self._lists.popitem(last=False)
        else:
            self._lists.move_to_end(id(names))
        self._used[hit[1]] = hit[3]
        return hit[1], hit[2]

    def take_used(self) -> dict:
        used, self._used = self._used, {}
        return used


def _ranges(rows) -> list:
    """Row numbers as [[first, count], ...] runs of consecutive rows (a rotation is at most two)."""
    rows = np.asarray(rows, np.int64)
    if not len(rows):
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    firsts = np.concatenate(([0], breaks)).tolist()
    ends = np.concatenate((breaks, [len(rows)])).tolist()
    values = rows.tolist()
    return [[values[a], b - a] for a, b in zip(firsts, ends)]


def _unranges(ranges) -> np.ndarray:
    if not ranges:
        return np.zeros(0, np.int64)
    return np.concatenate([np.arange(first, first + count, dtype=np.int64) for first, count in ranges])


def _column(values) -> int | list:
    """An int column as one int when every row has it, else as a list."""
    if not len(values) or (values == values[0]).all():
        return int(values[0]) if len(values) else 0
    return values.tolist()


def _full_column(value, n: int) -> np.ndarray:
    return np.full(n, value, np.int64) if isinstance(value, int) else np.asarray(value, np.int64)


def _columns_matrix(tr, ft, node_list: NodeLists):
    """(matrix, failing plugins, failing reasons) in the column form: per Filter plugin one column of status
    codes over the rows of a stored node list, the visited and scored nodes as runs of rows."""
    key, row_of = node_list.get(ft.names)
    n = len(ft.names)
    interned = _Statuses()
    intern = interned.number
    lut = np.array([PASS] + [intern(st) for st in ft.statuses], np.int64)
    columns = [int(lut[col]) if isinstance(col, int) else _column(lut[col]) for col in ft.columns]
    final = np.zeros(n, np.int64)
    fail_plugins, fail_reasons = {}, {}
    success = Code.SUCCESS
    rejections = _rejections(tr.node_statuses)
    if rejections is not None:   # the search's arrays, without a dict of every rejected node
        final[rejections.rows] = np.array([0 if st.code == success else intern(st) for st in rejections.statuses],
                                          np.int64)[rejections.groups]
        counted = status_counts(tr.node_statuses)
    else:
        by_name = _unshared(tr.node_statuses)
        counted = status_counts(by_name)
        for name, st in by_name.items():
            if st.code != success:
                final[row_of[name]] = intern(st)
    for st, k in counted:
        if st.code == success:
            continue
        if st.plugin:
            fail_plugins[st.plugin] = fail_plugins.get(st.plugin, 0) + k
        for r in st.reasons:
            fail_reasons[r] = fail_reasons.get(r, 0) + k
    feasible_rows = ft.feasible_rows
    if feasible_rows is None or len(feasible_rows) != len(tr.feasible):   # an extender filtered some out
        feasible_rows = np.array([row_of[name] for name in tr.feasible], np.int64)
    stopped = np.full(n, NOT_RUN, np.int64)
    stop_plugins, stop_index = [], {}
    rejections = _rejections(tr.kube_stopped_at)
    if rejections is not None:
        by_group = np.full(len(rejections.statuses), NOT_RUN, np.int64)
        for g, _k in rejections.counts():   # the plugins numbered in the order of their first node
            plugin = rejections.statuses[g].plugin
            if plugin:
                by_group[g] = stop_index.setdefault(plugin, len(stop_index))
        stop_plugins = list(stop_index)
        stopped[rejections.rows] = by_group[rejections.groups]
    else:
        for name, plugin in _unshared(tr.kube_stopped_at).items():
            k = stop_index.get(plugin)
            if k is None:
                k = stop_index[plugin] = len(stop_plugins)
                stop_plugins.append(plugin)
            stopped[row_of[name]] = k
    evaluated = ft.evaluated_rows()
    matrix = {"format": COLUMNS, "node_list": key,
              "evaluated": evaluated if isinstance(evaluated, list) else _ranges(evaluated),
              "filter_plugins": list(ft.plugins), "statuses": list(interned), "columns": columns,
              "final": _column(final), "stop_plugins": stop_plugins, "stopped": _column(stopped),
              "prefilter": tr.prefilter_dict(), "feasible": None,
              "top_nodes": sorted(tr.top_nodes), "prescore_skip": sorted(tr.prescore_skip_plugins),
              "unschedulable_plugins": sorted(tr.unschedulable_plugins)}
    score = _score_block(tr, _unshared(tr.evaluated_nodes))
    if score is not None:
        names = score.pop("nodes")
        same = names == tr.feasible
        score["rows"] = _ranges(feasible_rows if same else [row_of[name] for name in names])
        matrix["score"] = score
    if score is None or not same:   # else the feasible nodes are the scored ones (None)
        matrix["feasible"] = _ranges(np.sort(feasible_rows))
    return matrix, fail_plugins, fail_reasons


def _pack_suggestions(suggestions: list, row_of) -> list:
    """Suggestions (explain's dicts) with their node name lists (``nodes``, ``fits``, ``change.nodes``) as runs of
    rows of the matrix's node list (``<key>_rows``): a suggestion about every node of a 500-node cluster is 36 kB of
    names in each failing cycle, a few runs of rows here. A list naming a node the list lacks stays as it is."""
    packed = []
    for sg in suggestions:
        sg = _rows_for_names(sg, row_of)
        if isinstance(sg.get("change"), dict):
            sg["change"] = _rows_for_names(sg["change"], row_of)
        packed.append(sg)
    return packed


def _rows_for_names(d: dict, row_of) -> dict:
    """A copy of ``d`` (the caller's dicts are shared by many cycles) with its lists of names as runs of rows."""
    d = dict(d)
    for key in ("nodes", "fits"):
        names = d.get(key)
        if names:
            rows = row_of.ranges(names)
            if rows is not None:
                del d[key]
                d[key + "_rows"] = rows
    return d


def unpack_suggestions(suggestions: list, names: list | None) -> list:
    """``_pack_suggestions`` undone; with ``names`` None (the node list was pruned) the packed lists read empty."""
    out = []
    for sg in suggestions:
        sg = _names_for_rows(sg, names)
        if isinstance(sg.get("change"), dict):
            sg["change"] = _names_for_rows(sg["change"], names)
        out.append(sg)
    return out


def _names_for_rows(d: dict, names: list) -> dict:
    if not any(key.endswith("_rows") for key in d):
        return d
    d = dict(d)
    for key in ("nodes", "fits"):
        rows = d.pop(key + "_rows", None)
        if rows is not None:
            d[key] = [names[r] for r in _unranges(rows).tolist()] if names is not None else []
    return d


def expand(matrix: dict, names: list) -> dict:
    """The row form (a row of cells per node, node names inline) of a column-form matrix, whose node list
    is ``names``: what every reader of a matrix reads."""
    n = len(names)
    evaluated = _unranges(matrix["evaluated"])
    rest = np.ones(n, bool)
    rest[evaluated] = False
    order = np.concatenate((evaluated, np.flatnonzero(rest)))
    columns = [_full_column(c, n) for c in matrix["columns"]]
    cells = np.stack(columns, axis=1)[order].tolist() if columns else [[] for _ in range(n)]
    out = {k: v for k, v in matrix.items()
           if k not in ("format", "node_list", "evaluated", "columns", "final", "stopped", "feasible", "score")}
    out.update(nodes=[names[r] for r in order.tolist()], visited=len(evaluated), filter=cells,
               final=_full_column(matrix["final"], n)[order].tolist(),
               stopped=_full_column(matrix["stopped"], n)[order].tolist())
    score = matrix.get("score")
    if score is not None:
        score = dict(score)
        score["nodes"] = [names[r] for r in _unranges(score.pop("rows")).tolist()]
        out["score"] = score
    feasible = matrix["feasible"]
    out["feasible"] = sorted(score["nodes"] if feasible is None else
                             [names[r] for r in _unranges(feasible).tolist()])
    if matrix.get("suggestions"):
        out["suggestions"] = unpack_suggestions(matrix["suggestions"], names)
    return out


def trace_fields(tr, node_list: NodeLists | None = None, suggestions: list | None = None) -> dict:
    """The SchedulingCycle field values of a trace (cluster and seq excluded), from the CycleTrace itself
    (not mutated meanwhile, apart from building its lazy parts, which this never stores), with ``suggestions``
    (explain's dicts) in the matrix.

    With ``node_list`` (NodeLists), a trace-mode trace (one with a FilterTable) gets the column form, which
    refers to its nodes by row in a node list stored once (see ``expand``), the suggestions' node lists too."""
    ft = tr.filter_table
    if ft is not None and node_list is not None:
        matrix, fail_plugins, fail_reasons = _columns_matrix(tr, ft, node_list)
        if suggestions:
            matrix["suggestions"] = _pack_suggestions(suggestions, node_list.get(ft.names)[1])
    else:
        matrix, fail_plugins, fail_reasons = _rows_matrix(tr)
        if suggestions:
            matrix["suggestions"] = suggestions
    if tr.reserve_status is not None:
        matrix["reserve"] = tr.reserve_status.to_dict(with_plugin=True)
    for key, value in (("error", tr.error), ("extender_filter", tr.extender_filter),
                       ("extender_scores", tr.extender_scores)):
        if value:
            matrix[key] = value

    pod = tr.pod
    ns, _, name = pod.key.partition("/")
    durations = tr.durations_ms()
    return {
        "pod_uid": pod.uid or pod.key, "pod_namespace": ns, "pod_name": name,
        "profile": tr.profile or "default-scheduler", "attempt": tr.attempt or 1,
        "started": datetime.fromtimestamp(tr.started_at or 0, tz=timezone.utc),
        "result": tr.result or "unschedulable", "node": tr.chosen or "",
        "message": tr.error or tr.message or "",
        "num_nodes": tr.num_all_nodes or 0, "num_feasible": len(tr.feasible),
        "duration_ms": durations.get("total", 0.0), "durations": durations,
        "failing_plugins": fail_plugins, "failing_reasons": fail_reasons,
        "matrix": matrix, "preemption": tr.preemption,
    }
