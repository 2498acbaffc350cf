"""Reading a stored cycle back: the Filter matrix (with kube's stopping plugin), the Score table, text."""
from __future__ import annotations

from .tracecodec import NOT_RUN, PASS


def _status(statuses, i):
    if i == PASS:
        return None
    return statuses[i - 1]


def filter_matrix(matrix: dict, group: bool = True) -> dict:
    """{"plugins", "rows"}: one row per node, or per group of nodes with identical results.

    A cell is {"state": pass|fail|skip|notrun, "text", "stopped"}; ``stopped`` marks the plugin kube's
    short-circuit stopped at (the reason kube reports for that node).
    """
    plugins = matrix.get("filter_plugins") or []
    statuses = matrix.get("statuses") or []
    stop_plugins = matrix.get("stop_plugins") or []
    feasible = set(matrix.get("feasible") or ())
    rows, by_sig = [], {}
    for i, node in enumerate(matrix.get("nodes") or ()):
        cells_idx = (matrix.get("filter") or [None] * (i + 1))[i]
        stop_i = (matrix.get("stopped") or [NOT_RUN] * (i + 1))[i]
        stop = stop_plugins[stop_i] if stop_i != NOT_RUN else ""
        final_i = (matrix.get("final") or [NOT_RUN] * (i + 1))[i]
        sig = (tuple(cells_idx or ()), final_i, stop, node in feasible)
        if group and sig in by_sig:
            by_sig[sig]["nodes"].append(node)
            continue
        cells = []
        for j, p in enumerate(plugins):
            ci = cells_idx[j] if cells_idx is not None else NOT_RUN
            if ci == NOT_RUN:
                cells.append({"state": "notrun", "text": "", "stopped": False})
                continue
            st = _status(statuses, ci)
            if st is None:
                cells.append({"state": "pass", "text": "", "stopped": False})
            elif st["code"] == "Skip":
                cells.append({"state": "skip", "text": "skipped", "stopped": False})
            else:
                cells.append({"state": "fail", "text": ", ".join(st["reasons"]) or st["code"],
                              "code": st["code"], "stopped": p == stop})
        final = _status(statuses, final_i) if final_i != NOT_RUN else None
        row = {"nodes": [node], "cells": cells, "feasible": node in feasible, "stopped_at": stop,
               "evaluated": final_i != NOT_RUN,
               "reason": ", ".join(final["reasons"]) if final else ""}
        rows.append(row)
        by_sig[sig] = row
    return {"plugins": plugins, "rows": rows}


def score_table(matrix: dict, chosen: str = "") -> dict:
    """{"plugins", "weights", "rows"} with rows sorted by total (rank 1 first)."""
    sc = matrix.get("score")
    if not sc:
        return {"plugins": [], "weights": [], "rows": []}
    rows = []
    for i, node in enumerate(sc["nodes"]):
        cells = []
        for j, _p in enumerate(sc["plugins"]):
            raw, norm = sc["raw"][j][i], sc["normalized"][j][i]
            cells.append({"raw": raw, "normalized": norm,
                          "weighted": None if norm is None else norm * sc["weights"][j]})
        rows.append({"node": node, "cells": cells, "total": sc["totals"][i], "chosen": node == chosen,
                     "top": node in (matrix.get("top_nodes") or ())})
    rows.sort(key=lambda r: (-(r["total"] if r["total"] is not None else -1), r["node"]))
    for rank, r in enumerate(rows, 1):
        r["rank"] = rank
    return {"plugins": sc["plugins"], "weights": sc["weights"], "rows": rows}


POINT_ORDER = ("total", "PreFilter", "Filter", "PostFilter", "PreScore", "Score")


def durations(ms: dict) -> dict:
    """{"points": [(extension point, ms)] in cycle order, "plugins": [(plugin, ms)] slowest first}."""
    points = [(k, ms[k]) for k in POINT_ORDER if k in ms]
    plugins = {}
    for k, v in ms.items():
        if k not in POINT_ORDER:
            name = k.split("/", 1)[-1]
            plugins[name] = plugins.get(name, 0.0) + v
    return {"points": points, "plugins": sorted(plugins.items(), key=lambda x: -x[1])}


def explain_text(cycle, priority=None) -> str:
    """The CLI-style explanation of one stored cycle."""
    head = f"{cycle.pod_key} (attempt {cycle.attempt}, profile {cycle.profile}, cycle {cycle.seq}"
    head += f", priority {priority})" if priority is not None else ")"
    lines = []
    if cycle.result == "scheduled":
        lines.append(f"{head}: scheduled on {cycle.node}")
    elif cycle.result == "error":
        lines.append(f"{head}: error: {cycle.message}")
    else:
        lines.append(f"{head}: unschedulable: {cycle.message}")
    if cycle.failing_plugins:
        blame = ", ".join(f"{p} rejected {n}" for p, n in sorted(cycle.failing_plugins.items(), key=lambda x: -x[1]))
        lines.append(f"  rejected by: {blame}")
    pre = cycle.preemption or {}
    if pre.get("nominated_node"):
        lines.append(f"  preemption: nominated {pre['nominated_node']}, victims: "
                     f"{', '.join(pre.get('victims') or []) or 'none'}")
    totals = {r["node"]: r["total"] for r in score_table(cycle.matrix, cycle.node)["rows"]}
    rows = []
    for r in filter_matrix(cycle.matrix, group=False)["rows"]:
        node = r["nodes"][0]
        if r["feasible"]:
            mark = "*" if node == cycle.node else " "
            total = totals.get(node)
            rows.append((node, f"{mark} feasible" + (f"  score {total}" if total is not None else "")))
        elif r["evaluated"]:
            rows.append((node, f"  {r['stopped_at'] or '-'}: {r['reason']}"))
    width = max((len(n) for n, _ in rows), default=0)
    for node, text in sorted(rows, key=lambda x: (-(totals.get(x[0]) if totals.get(x[0]) is not None else -1), x[0])):
        lines.append(f"    {node.ljust(width)} {text}")
    return "\n".join(lines) + "\n"
