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

from datetime import datetime, timezone
from itertools import chain

from scheduler_core.framework.status import Code
from scheduler_core.lazy import LazyDict, LazyList

PASS = 0        # filter cell: the plugin passed the node
NOT_RUN = -1    # filter cell: the plugin did not run on the node


def _unshared(value):
    """The dict or list behind a LazyDict / LazyList, built here without storing it if it was not built
    yet: the scheduling thread may build it at the same time. A builder sets ``_data`` before clearing
    ``_build``, so reading ``_build`` first always finds one of them."""
    if not isinstance(value, (LazyDict, LazyList)):
        return value
    build = value._build
    data = value._data
    return data if data is not None else build()


def _ints(values) -> list:
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _score_block(tr, nodes: list, seen: set):
    """The matrix's "score" part (or None), from the score arrays when the trace still has them."""
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


def trace_fields(tr) -> dict:
    """The SchedulingCycle field values of a trace (cluster and seq excluded), from the CycleTrace itself
    (not mutated meanwhile, apart from building its lazy parts, which this never stores)."""
    statuses = _unshared(tr.node_statuses)
    filt = tr.filter
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

    interned, by_id, by_key = [], {}, {}
    success = Code.SUCCESS

    def intern(st) -> int:  # st: a Status that is not Success
        i = by_id.get(id(st))
        if i is None:
            key = (str(st.code), tuple(st.reasons))
            i = by_key.get(key)
            if i is None:
                interned.append({"code": key[0], "reasons": list(key[1])})
                i = by_key[key] = len(interned)
            by_id[id(st)] = i
        return i

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

    matrix = {"nodes": nodes, "visited": visited, "filter_plugins": plugins, "statuses": interned, "filter": cells,
              "final": final_cells, "stop_plugins": stop_plugins, "stopped": stopped,
              "prefilter": tr.prefilter_dict(), "feasible": sorted(tr.feasible), "top_nodes": sorted(tr.top_nodes),
              "prescore_skip": sorted(tr.prescore_skip_plugins),
              "unschedulable_plugins": sorted(tr.unschedulable_plugins)}
    score = _score_block(tr, nodes, seen)
    if score is not None:
        matrix["score"] = score
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
