"""History retention: cycles, events, queue snapshots and shadow decisions older than N days, or beyond N
cycles."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from django.conf import settings

from ..models import NodeList, QueueSnapshot, SchedulingCycle, SchedulingEvent, ShadowDecision, WhatIfTrace


def prune(cluster_id: int, days: float | None = None, max_cycles: int | None = None) -> int:
    """Delete old history of one cluster; returns the number of cycles deleted."""
    conf = settings.SCHEDSCOPE
    days = conf["RETENTION_DAYS"] if days is None else days
    max_cycles = conf["RETENTION_CYCLES"] if max_cycles is None else max_cycles
    deleted = 0
    if days and days > 0:
        cutoff = datetime.now(timezone.utc) - timedelta(days=days)
        deleted += SchedulingCycle.objects.filter(cluster_id=cluster_id, started__lt=cutoff).delete()[0]
        SchedulingEvent.objects.filter(cluster_id=cluster_id, time__lt=cutoff).delete()
        QueueSnapshot.objects.filter(cluster_id=cluster_id, time__lt=cutoff).delete()
        ShadowDecision.objects.filter(cluster_id=cluster_id, time__lt=cutoff).delete()
        # Node lists are shared by content: one no cycle was written with since the cutoff only serves
        # cycles started before it, in every cluster, and what-if runs (kept until deleted).
        NodeList.objects.filter(last_used__lt=cutoff).exclude(
            key__in=WhatIfTrace.objects.exclude(node_list="").values("node_list")).delete()
    if max_cycles and max_cycles > 0:
        edge = (SchedulingCycle.objects.filter(cluster_id=cluster_id).order_by("-seq")
                .values_list("seq", flat=True)[max_cycles:max_cycles + 1])
        if edge:
            deleted += SchedulingCycle.objects.filter(cluster_id=cluster_id, seq__lte=edge[0]).delete()[0]
    return deleted
