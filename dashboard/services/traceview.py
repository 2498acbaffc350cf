"""Reading a stored cycle back: the Filter matrix (with kube's stopping plugin), the Score table, text."""
from __future__ import annotations

from .tracecodec import NOT_RUN, PASS


def _status(statuses, i):
    if i == PASS:
        return None
    return statuses[i - 1]


MATRIX_PAGE = 100


def _filter_rows(matrix: dict, group: bool) -> list:
    """Every Filter row (one per node, or per group of nodes with identical results), in node order."""
    plugins = matrix.get("filter_plugins") or []
    statuses = matrix.get("statuses") or []
    stop_plugins = matrix.get("stop_plugins") or []
    feasible = set(matrix.get("feasible") or ())
    filt = matrix.get("filter") or []
    stopped = matrix.get("stopped") or []
    final_cells = matrix.get("final") or []
    nodes = matrix.get("nodes") or ()
    visited = matrix.get("visited", len(nodes))   # the matrix's nodes begin with those kube's search visited
    rows, by_sig = [], {}
    for i, node in enumerate(nodes):
        cells_idx = filt[i] if i < len(filt) else None
        stop_i = stopped[i] if i < len(stopped) else NOT_RUN
        stop = stop_plugins[stop_i] if stop_i != NOT_RUN else ""
        final_i = final_cells[i] if i < len(final_cells) else NOT_RUN
        # A node the search did not reach has no result, unless it got one before it (a PreFilterResult, the
        # nominated node): trace mode still records every plugin's verdict on it.
        evaluated = final_i != NOT_RUN and (i < visited or final_i != PASS)
        sig = (tuple(cells_idx or ()), final_i, stop, node in feasible, evaluated)
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
               "evaluated": evaluated,
               "reason": ", ".join(final["reasons"]) if final else ""}
        rows.append(row)
        by_sig[sig] = row
    return rows


FILTER_SORTS = ("count", "node", "plugin")
FILTER_SHOWS = ("feasible", "failed", "notrun")


def filter_matrix(matrix: dict, group: bool = True, q: str = "", plugin: str = "", show: str = "",
                  sort: str = "", page: int = 1, per_page: int = MATRIX_PAGE) -> dict:
    """{"plugins", "rows", "total", "nodes", "page", "pages"}: a page of the Filter matrix.

    A row is one node, or (``group``) every node with identical results. A cell is {"state":
    pass|fail|skip|notrun, "text", "stopped"}; ``stopped`` marks the plugin kube's short-circuit stopped
    at (the reason kube reports for that node). Server-side: ``q`` keeps rows with a node name
    containing it, ``plugin`` rows kube stopped at that plugin, ``show`` feasible|failed|notrun;
    ``sort`` count (largest groups first), node, or plugin (stopping plugin); then paging.
    """
    rows = _filter_rows(matrix, group)
    if q:
        ql = q.lower()
        for r in rows:
            r["nodes"] = [n for n in r["nodes"] if ql in n.lower()]
        rows = [r for r in rows if r["nodes"]]
    if plugin:
        rows = [r for r in rows if r["stopped_at"] == plugin]
    if show == "feasible":
        rows = [r for r in rows if r["feasible"]]
    elif show == "failed":
        rows = [r for r in rows if r["evaluated"] and not r["feasible"]]
    elif show == "notrun":
        rows = [r for r in rows if not r["evaluated"]]
    if sort == "count":
        rows.sort(key=lambda r: -len(r["nodes"]))
    elif sort == "node":
        rows.sort(key=lambda r: r["nodes"][0])
    elif sort == "plugin":
        rows.sort(key=lambda r: (not r["stopped_at"], r["stopped_at"], r["nodes"][0]))
    total = len(rows)
    pages = max(1, -(-total // per_page))
    page = min(max(1, _int(page, 1)), pages)
    return {"plugins": matrix.get("filter_plugins") or [], "rows": rows[(page - 1) * per_page:page * per_page],
            "total": total, "nodes": sum(len(r["nodes"]) for r in rows), "page": page, "pages": pages,
            "stop_plugins": matrix.get("stop_plugins") or []}


def _int(v, default: int) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def score_table(matrix: dict, chosen: str = "", q: str = "", page: int = 1, per_page: int = MATRIX_PAGE) -> dict:
    """{"plugins", "weights", "rows", "total", "page", "pages"}: ranked rows (rank 1 first), a page of them.

    Ranks are over every scored node; ``q`` then keeps nodes whose name contains it.
    """
    sc = matrix.get("score")
    if not sc:
        return {"plugins": [], "weights": [], "rows": [], "total": 0, "page": 1, "pages": 1}
    order = sorted(range(len(sc["nodes"])), key=lambda i: (-(sc["totals"][i] if sc["totals"][i] is not None else -1),
                                                           sc["nodes"][i]))
    if q:
        ql = q.lower()
        ranked = [(rank, i) for rank, i in enumerate(order, 1) if ql in sc["nodes"][i].lower()]
    else:
        ranked = list(enumerate(order, 1))
    total = len(ranked)
    pages = max(1, -(-total // per_page))
    page = min(max(1, _int(page, 1)), pages)
    top = set(matrix.get("top_nodes") or ())
    rows = []
    for rank, i in ranked[(page - 1) * per_page:page * per_page]:
        node = sc["nodes"][i]
        cells = []
        for j, _p in enumerate(sc["plugins"]):
            raw, norm = sc["raw"][j][i], sc["normalized"][j][i]
            cells.append({"raw": raw, "normalized": norm,
                          "weighted": None if norm is None else norm * sc["weights"][j]})
        rows.append({"node": node, "cells": cells, "total": sc["totals"][i], "chosen": node == chosen,
                     "top": node in top, "rank": rank})
    return {"plugins": sc["plugins"], "weights": sc["weights"], "rows": rows, "total": total, "page": page,
            "pages": pages}


def _verdicts(matrix: dict) -> dict:
    """{node: "feasible" | "Plugin: reason" | "not evaluated"} as kube reported each node."""
    statuses = matrix.get("statuses") or []
    stop_plugins = matrix.get("stop_plugins") or []
    feasible = set(matrix.get("feasible") or ())
    final_cells = matrix.get("final") or []
    stopped = matrix.get("stopped") or []
    out = {}
    for i, node in enumerate(matrix.get("nodes") or ()):
        if node in feasible:
            out[node] = "feasible"
            continue
        fi = final_cells[i] if i < len(final_cells) else NOT_RUN
        if fi == NOT_RUN:
            out[node] = "not evaluated"
            continue
        st = _status(statuses, fi)
        si = stopped[i] if i < len(stopped) else NOT_RUN
        plugin = stop_plugins[si] if si != NOT_RUN else ""
        out[node] = f"{plugin}: {', '.join(st['reasons']) if st else 'passed'}" if plugin else \
            (", ".join(st["reasons"]) if st else "passed")
    return out


def diff_cycles(a, b, limit: int = 200) -> dict:
    """What changed from cycle ``a`` to the later cycle ``b`` of the same pod.

    {"fields": [(name, before, after)] that differ, "plugins": [(plugin, nodes before, nodes after)],
    "nodes": [{"node", "before", "after"}] whose verdict changed (first ``limit``), "changed": count,
    "added"/"removed": nodes only in b / only in a, "scores": [(node, total before, total after)]}.
    """
    fields = []
    for name, get in (("result", lambda c: c.result), ("node", lambda c: c.node or "—"),
                      ("message", lambda c: c.message or "—"), ("nodes", lambda c: c.num_nodes),
                      ("feasible nodes", lambda c: c.num_feasible), ("profile", lambda c: c.profile),
                      ("duration (ms)", lambda c: round(c.duration_ms, 2))):
        x, y = get(a), get(b)
        if x != y:
            fields.append((name, x, y))
    plugins = []
    fa, fb = a.failing_plugins or {}, b.failing_plugins or {}
    for p in sorted(set(fa) | set(fb)):
        if fa.get(p, 0) != fb.get(p, 0):
            plugins.append((p, fa.get(p, 0), fb.get(p, 0)))
    va, vb = _verdicts(a.matrix), _verdicts(b.matrix)
    changed = [{"node": n, "before": va[n], "after": vb[n]} for n in vb if n in va and va[n] != vb[n]]
    sa = score_table(a.matrix, per_page=10**9)["rows"]
    sb = {r["node"]: r["total"] for r in score_table(b.matrix, per_page=10**9)["rows"]}
    scores = [(r["node"], r["total"], sb.get(r["node"])) for r in sa if sb.get(r["node"]) != r["total"]]
    return {"a": a, "b": b, "fields": fields, "plugins": plugins, "nodes": changed[:limit], "changed": len(changed),
            "added": [n for n in vb if n not in va][:limit], "removed": [n for n in va if n not in vb][:limit],
            "scores": scores[:limit]}


BACKOFF_INITIAL_S, BACKOFF_MAX_S = 1, 10


def backoff_seconds(attempts: int, initial: int = BACKOFF_INITIAL_S, maximum: int = BACKOFF_MAX_S) -> int:
    """kube's pod backoff after ``attempts`` failed attempts (``initial`` doubling, at most ``maximum``; by default
    podInitialBackoffSeconds 1 and podMaxBackoffSeconds 10)."""
    d = initial
    for _ in range(1, max(1, attempts)):
        if d > maximum - d:
            return maximum
        d += d
    return d


def attempt_timeline(cycles) -> list:
    """Attempts oldest first, each with the wait since the previous one and where the pod waited.

    After an unschedulable attempt kube parks the pod in unschedulablePods until a cluster event that a
    rejecting plugin registered for (or the 5-minute flush) moves it, then it serves the rest of its
    backoff in backoffQ; an error goes to backoffQ directly. The wait shown is measured between the
    recorded attempts; the backoff is kube's default formula for that attempt count. The cycles of a name can
    belong to several pods one after the other (deleted and created again): a pod's first attempt has no wait.
    """
    out, prev = [], None
    for c in sorted(cycles, key=lambda c: c.seq):
        item = {"cycle": c, "waited": None, "after": "activeQ", "why": ""}
        if prev is not None and prev.pod_uid == c.pod_uid:
            item["waited"] = (c.started - prev.started).total_seconds()
            if prev.result == "unschedulable":
                plugins = ", ".join(sorted(prev.failing_plugins or ())) or "the rejecting plugins"
                item["after"] = "unschedulablePods → backoffQ → activeQ"
                item["why"] = (f"rejected by {plugins}; waited for a cluster event those plugins register for "
                               f"(or the 5-minute flush), backoff {backoff_seconds(prev.attempt)} s")
            elif prev.result == "error":
                item["after"] = "backoffQ → activeQ"
                item["why"] = f"error; backoff {backoff_seconds(prev.attempt)} s"
        else:
            item["why"] = "first attempt after the pod was created" + (
                "" if prev is None else " (the attempts below are an earlier pod of this name)")
        out.append(item)
        prev = c
    return out


def _outcome(c) -> tuple:
    return (c.pod_uid, c.result, c.node, c.message, sorted(c.failing_plugins or ()))


def group_attempts(timeline: list) -> list:
    """The attempt timeline (oldest first) as groups of identical consecutive attempts (one pod, same result,
    node, message and rejecting plugins), newest first: {"first", "last": timeline items, "count"}."""
    groups = []
    for item in timeline:
        g = groups[-1] if groups else None
        if g is not None and _outcome(g["last"]["cycle"]) == _outcome(item["cycle"]):
            g["last"], g["count"] = item, g["count"] + 1
        else:
            groups.append({"first": item, "last": item, "count": 1})
    return groups[::-1]


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
    totals = {r["node"]: r["total"] for r in score_table(cycle.matrix, cycle.node, per_page=10**9)["rows"]}
    rows = []
    for r in filter_matrix(cycle.matrix, group=False, per_page=10**9)["rows"]:
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
