"""Everything the pod page shows: attempts on a timeline, one cycle's decision trace (paged matrices),
what would fix it, the diff between two attempts, and its DRA claims (claimsview)."""
from __future__ import annotations

from datetime import datetime

from django.core.paginator import Paginator

from ..models import Pod, SchedulingCycle, SchedulingEvent, ShadowDecision
from . import claimsview, fullmatrix, queries, traceview

ATTEMPT_GROUPS_PER_PAGE = 20
EVENTS_PER_PAGE = 20


def _cycle(cluster, namespace, name, seq: int | None):
    if seq is None:
        return None
    return SchedulingCycle.objects.filter(cluster=cluster, seq=seq, pod_namespace=namespace, pod_name=name).first()


def pod_context(cluster, namespace: str, name: str, params) -> dict | None:
    """The pod page's context, or None when neither the pod nor any of its cycles exists.

    ``params`` (checked values, dashboard.queryforms.PodQuery): cycle (seq shown; default the latest), attempt (the
    attempt shown, of the latest pod of the name, when no cycle is given), apage and epage (the pages of attempts,
    identical consecutive ones grouped, and of events), diff (seq compared with it), group (0: one row
    per node), full (1: the matrices recomputed over every node, for a cycle recorded without every node), and the
    matrix controls nq, plugin, show, sort, fpage (Filter) and spage (Score).
    """
    pod_row = Pod.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
    cycles = queries.cycles_of_pod(cluster, namespace, name)
    if pod_row is None and not cycles:
        return None
    chosen = _cycle(cluster, namespace, name, params.get("cycle"))
    if chosen is None and cycles and params.get("attempt"):
        chosen = _cycle(cluster, namespace, name, next(
            (c.seq for c in cycles if c.pod_uid == cycles[0].pod_uid and c.attempt == params["attempt"]), None))
    if chosen is None and cycles:
        chosen = SchedulingCycle.objects.get(pk=cycles[0].pk)
    groups = traceview.group_attempts(traceview.attempt_timeline(cycles))
    apage = params.get("apage")
    if apage is None and chosen is not None:   # the page that holds the cycle shown
        apage = 1 + next((i for i, g in enumerate(groups) if g["first"]["cycle"].seq <= chosen.seq), 0) \
            // ATTEMPT_GROUPS_PER_PAGE
    events = SchedulingEvent.objects.filter(cluster=cluster, pod_namespace=namespace, pod_name=name)
    ctx = {"pod": pod_row, "key": f"{namespace}/{name}", "cycle": chosen,
           "unserved": pod_row is not None and not pod_row.node_name
           and pod_row.scheduler_name not in queries.served_scheduler_names(cluster),
           "attempts": Paginator(groups, ATTEMPT_GROUPS_PER_PAGE).get_page(apage or 1),
           "latest_uid": cycles[0].pod_uid if cycles else "",
           "events": Paginator(events.order_by("-time", "-id"), EVENTS_PER_PAGE).get_page(params.get("epage", 1)),
           "shadow": ShadowDecision.objects.filter(cluster=cluster, pod_namespace=namespace,
                                                   pod_name=name).order_by("-time", "-id").first(),
           "claims": claimsview.pod_claims(cluster, pod_row) if pod_row is not None else None}
    if chosen is None:
        return ctx
    m = chosen.matrix
    ctx["visited"] = fullmatrix.visited(chosen)
    ctx["recorded_nodes"] = len(m.get("nodes") or ())
    if ctx["recorded_nodes"] < chosen.num_nodes and params.get("full") == "1":
        try:
            ctx["full"] = fullmatrix.recompute(chosen)
            m = ctx["full"]["matrix"]
        except fullmatrix.FullMatrixError as err:
            ctx["full_error"] = str(err)
    ctx["filter"] = traceview.filter_matrix(
        m, group=params.get("group", "1") != "0", q=params.get("nq", ""), plugin=params.get("plugin", ""),
        show=params.get("show", ""), sort=params.get("sort", ""), page=params.get("fpage", 1))
    chosen_node = ctx["full"]["node"] if "full" in ctx else chosen.node
    ctx["score"] = traceview.score_table(m, chosen_node, q=params.get("nq", ""), page=params.get("spage", 1))
    ctx["durations"] = traceview.durations(chosen.durations)
    ctx["prefilter"] = (m.get("prefilter") or {}).get("plugins") or {}
    ctx["suggestions"] = m.get("suggestions") or []
    basis = m.get("suggestions_basis")
    if ctx["suggestions"] and basis:
        ctx["suggestions_basis"] = dict(basis, started=datetime.fromisoformat(basis["started"]))
    ctx["extender_filter"] = m.get("extender_filter") or []
    ctx["extender_scores"] = m.get("extender_scores") or []
    other = _cycle(cluster, namespace, name, params.get("diff"))
    if other is not None and other.pk != chosen.pk:
        a, b = (other, chosen) if other.seq < chosen.seq else (chosen, other)
        ctx["diff"] = traceview.diff_cycles(a, b)
    return ctx
