"""The reference encoding of a stored cycle: the SchedulingCycle fields of a CycleTrace.to_dict() record.

What the recorder stored before it encoded traces directly (dashboard.services.tracecodec.trace_fields);
kept here as the plain, per-node-dict definition that trace_fields must match exactly.
"""
from __future__ import annotations

from datetime import datetime, timezone

from dashboard.services.tracecodec import NOT_RUN, PASS


def encode_matrix(rec: dict) -> dict:
    """The compact matrix of one CycleTrace.to_dict() record."""
    statuses, index = [], {}

    def intern(st) -> int:
        if st is None:
            return PASS
        code = st["code"]
        if code == "Success":
            return PASS
        key = (code, tuple(st["reasons"]))
        i = index.get(key)
        if i is None:
            statuses.append({"code": code, "reasons": list(key[1])})
            i = index[key] = len(statuses)
        return i

    filt = rec.get("filter") or {}
    final = rec.get("filter_framework") or {}
    nodes = list(rec.get("evaluated_nodes") or ())
    visited = len(nodes)
    seen = set(nodes)
    for name in list(final) + list(filt):
        if name not in seen:
            seen.add(name)
            nodes.append(name)
    plugins = []
    for per_plugin in filt.values():
        for p in per_plugin:
            if p not in plugins:
                plugins.append(p)
    pidx = {p: i for i, p in enumerate(plugins)}
    cells, final_cells, stopped, stop_plugins = [], [], [], []
    for name in nodes:
        per_plugin = filt.get(name)
        if per_plugin is None:
            cells.append(None)
        else:
            row = [NOT_RUN] * len(plugins)
            for p, st in per_plugin.items():
                row[pidx[p]] = PASS if st is None or st["code"] == "Success" else intern(st)
            cells.append(row)
        fst = final.get(name, False)
        final_cells.append(NOT_RUN if fst is False else intern(fst))
        plugin = fst.get("plugin") if fst else None
        if plugin and plugin not in stop_plugins:
            stop_plugins.append(plugin)
        stopped.append(stop_plugins.index(plugin) if plugin else NOT_RUN)
    out = {"nodes": nodes, "visited": visited, "filter_plugins": plugins, "statuses": statuses, "filter": cells,
           "final": final_cells, "stop_plugins": stop_plugins, "stopped": stopped, "prefilter": rec.get("prefilter"),
           "feasible": rec.get("feasible_nodes") or [], "top_nodes": rec.get("top_nodes") or [],
           "prescore_skip": rec.get("prescore_skip_plugins") or [],
           "unschedulable_plugins": rec.get("unschedulable_plugins") or []}
    scores = rec.get("scores") or {}
    if scores:
        snodes = [n for n in nodes if n in scores] + [n for n in scores if n not in seen]
        splugins, weights = [], {}
        for per in scores.values():
            for p, v in per.items():
                if p != "_total" and p not in weights:
                    splugins.append(p)
                    weights[p] = v["weight"]
        raw = [[scores[n].get(p, {}).get("raw") for n in snodes] for p in splugins]
        norm = [[scores[n].get(p, {}).get("normalized") for n in snodes] for p in splugins]
        out["score"] = {"nodes": snodes, "plugins": splugins, "weights": [weights[p] for p in splugins],
                        "raw": raw, "normalized": norm, "totals": [scores[n].get("_total") for n in snodes]}
    for key in ("reserve", "error", "extender_filter", "extender_scores", "suggestions"):
        if rec.get(key):
            out[key] = rec[key]
    return out


def failing_plugins(rec: dict) -> dict:
    """{plugin: nodes it rejected} as kube's short-circuit reports it."""
    out = {}
    for st in (rec.get("filter_framework") or {}).values():
        p = st.get("plugin") if st else None
        if p and st.get("code") != "Success":
            out[p] = out.get(p, 0) + 1
    return out


def failing_reasons(rec: dict) -> dict:
    """{reason: nodes} over the framework statuses (the FitError histogram)."""
    out = {}
    for st in (rec.get("filter_framework") or {}).values():
        if st and st.get("code") != "Success":
            for r in st.get("reasons") or ():
                out[r] = out.get(r, 0) + 1
    return out


def cycle_fields(rec: dict) -> dict:
    """Model field values of a SchedulingCycle row for one record (cluster and seq excluded)."""
    ns, _, name = rec["pod"].partition("/")
    durations = rec.get("durations_ms") or {}
    return {
        "pod_uid": rec.get("uid") or rec["pod"], "pod_namespace": ns, "pod_name": name,
        "profile": rec.get("profile") or "default-scheduler", "attempt": rec.get("attempt") or 1,
        "started": datetime.fromtimestamp(rec.get("started_at") or 0, tz=timezone.utc),
        "result": rec.get("result") or "unschedulable", "node": rec.get("bound_node") or "",
        "message": rec.get("error") or rec.get("message") or "",
        "num_nodes": rec.get("num_all_nodes") or 0, "num_feasible": len(rec.get("feasible_nodes") or ()),
        "duration_ms": durations.get("total", 0.0), "durations": durations,
        "failing_plugins": failing_plugins(rec), "failing_reasons": failing_reasons(rec),
        "matrix": encode_matrix(rec), "preemption": rec.get("preemption"),
    }
