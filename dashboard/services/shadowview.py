"""The shadow page: how often the active profile agrees with another scheduler's bindings (ShadowDecision rows),
overall and per time bucket, and every disagreement, paged."""
from __future__ import annotations

from datetime import timedelta

from django.core.paginator import Paginator
from django.db.models import Count, Max, Min, Q
from django.db.models.functions import TruncDay, TruncHour, TruncMinute

from ..models import ShadowDecision

PER_PAGE = 50
_COUNTS = {"decisions": Count("id"), "agreed": Count("id", filter=Q(agree=True)),
           "within_ties": Count("id", filter=Q(within_ties=True)),
           "actual_infeasible": Count("id", filter=Q(actual_feasible=False))}


def _rate(part: int, whole: int):
    return round(100.0 * part / whole, 1) if whole else None


def summary(cluster) -> dict:
    """Counts and rates (percent) of all recorded comparisons, with the first and last time."""
    row = ShadowDecision.objects.filter(cluster=cluster).aggregate(first=Min("time"), last=Max("time"), **_COUNTS)
    row["agreement_rate"] = _rate(row["agreed"], row["decisions"])
    row["within_ties_rate"] = _rate(row["within_ties"], row["decisions"])
    return row


def timeline(cluster, first, last) -> dict:
    """Agreement per minute (history up to 6 hours), hour (up to 7 days) or day, for the chart."""
    span = (last - first) if first and last else timedelta(0)
    trunc, unit = ((TruncMinute, "minute") if span <= timedelta(hours=6) else
                   (TruncHour, "hour") if span <= timedelta(days=7) else (TruncDay, "day"))
    rows = (ShadowDecision.objects.filter(cluster=cluster).annotate(b=trunc("time")).values("b")
            .annotate(**_COUNTS).order_by("b"))
    return {"unit": unit, "buckets": [r["b"].isoformat() for r in rows],
            "decisions": [r["decisions"] for r in rows], "agreed": [r["agreed"] for r in rows],
            "rate": [_rate(r["agreed"], r["decisions"]) for r in rows],
            "within_ties_rate": [_rate(r["within_ties"], r["decisions"]) for r in rows]}


def why(decision: ShadowDecision) -> str:
    """One line: why the profile's choice differs from the other scheduler's."""
    if not decision.shadow_node:
        return f"the profile finds no node: {decision.message}" if decision.message else "the profile finds no node"
    if not decision.actual_feasible:
        reasons = ", ".join(decision.actual_reasons) or "rejected"
        return f"the profile's Filter plugins reject {decision.actual_node}: {reasons}"
    if decision.within_ties:
        return (f"a tie: both nodes score {decision.shadow_score}; kube picks among the best nodes at random")
    if decision.actual_score is None:
        return (f"{decision.actual_node} passes the Filter plugins but was not among the nodes the profile scored "
                f"(percentageOfNodesToScore); {decision.shadow_node} scores {decision.shadow_score}")
    return (f"{decision.shadow_node} scores {decision.shadow_score}, {decision.actual_node} scores "
            f"{decision.actual_score}")


def disagreements(cluster, page=1):
    """The disagreements, newest first, a page of PER_PAGE; each row has ``why``."""
    qs = ShadowDecision.objects.filter(cluster=cluster, agree=False).order_by("-time", "-id")
    page = Paginator(qs, PER_PAGE).get_page(page)
    for d in page:
        d.why = why(d)
    return page


def page_context(cluster, params) -> dict:
    """Everything the shadow page shows."""
    stats = summary(cluster)
    return {"stats": stats, "chart": timeline(cluster, stats["first"], stats["last"]),
            "page": disagreements(cluster, params.get("page", 1))}
