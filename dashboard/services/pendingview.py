"""The pending page: a page of pending pods with the chips of their latest attempt, the groups by blocking
reason and the counts, all read in one snapshot of the database, so the header count, the rows and the pager
agree with each other however fast the recorder commits."""
from __future__ import annotations

from contextlib import contextmanager

from django.db import connection, transaction

from ..models import Pod
from . import queries, rejections

GROUPS_SHOWN = 10


@contextmanager
def snapshot():
    """Reads inside see one state of the database: a REPEATABLE READ transaction on PostgreSQL (unless already
    inside a transaction, which then decides); SQLite's read transaction is one snapshot already."""
    nested = connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and not nested:
            with connection.cursor() as cur:
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def page_context(cluster, query: dict) -> dict:
    """page (its rows evaluated, each with ``chips`` and ``unserved``: no profile serves its schedulerName), groups, queue counts and the filters' choices."""
    with snapshot():
        page = queries.pending_pods(cluster, **query)
        rows = list(page.object_list)
        page.object_list = rows
        chips = rejections.chips_of_cycles(cluster, [p.last_cycle for p in rows])
        served = queries.served_scheduler_names(cluster)
        for p in rows:
            # a gated pod's reason is its PreEnqueue plugin's status (kube's text), whatever it was tried for before
            p.chips = ([rejections.Chip(p.plugins, p.reason, 0)] if p.queue == Pod.GATED and p.reason
                       else chips.get(p.last_cycle, []))
            p.unserved = p.scheduler_name not in served
        return {"page": page, "groups": rejections.pending_groups(cluster, GROUPS_SHOWN, query.get("namespace") or ""),
                "groups_namespace": query.get("namespace") or "",
                "counts": queries.queue_counts(cluster), "plugins": queries.blocking_plugins(cluster, 30),
                "namespaces": queries.pending_namespaces(cluster),
                "group_filter": [rejections.Chip(p, r, 0) for p, r in query.get("group") or ()],
                "last_cycle_seq": queries.latest_cycle_seq(cluster) or 0}
