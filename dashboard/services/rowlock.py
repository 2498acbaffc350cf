"""One lock order for a cluster's rows.

Every transaction that writes a cluster's nodes or pods (scenario loads, node and pod changes from the pages and
the REST API, the workload generator's pods, the recorder's bindings, deletions and pod states, a real cluster's
mirror) takes the cluster's row first, with ``lock_cluster``. Writers of one cluster then queue on that row
instead of each holding rows the other needs: a scenario load that deleted pods and then bumped the cluster's
version, against the recorder that locked the cluster and then deleted pods, was PostgreSQL's DeadlockDetected.

FOR NO KEY UPDATE: it excludes the other writers (and the plain UPDATEs of the cluster row, which take the same
lock) but not the foreign-key checks of rows inserted elsewhere (cycles, events), which take FOR KEY SHARE.
SQLite (embedded mode) has one writer at a time anyway and ignores it.
"""
from __future__ import annotations

from contextlib import contextmanager

from django.db import connection, transaction

from ..models import Cluster, StoreCounter


def lock_cluster(cluster_id: int) -> tuple | None:
    """Lock the cluster's row until the current transaction ends; returns its ``runner`` ("" when no loop has
    claimed it), its store's newest resourceVersion, how many pods it holds and the bytes of its objects
    (StoreCounter), or None when the cluster is gone. Must run inside ``transaction.atomic()``, before any other write of the cluster's rows. Its own SQL: the ORM's compiling
    costs more than the query, and the store takes this lock once per write."""
    lock = " FOR NO KEY UPDATE" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cur:
        cur.execute(f'SELECT "runner" FROM "{Cluster._meta.db_table}" WHERE "id" = %s{lock}', [cluster_id])
        row = cur.fetchone()
        if row is None:
            return None
        # read after the lock is held, in a statement of its own: a statement that waited for the lock still
        # sees the other tables as they were when it began (the counter before the previous writer's commit)
        cur.execute(f'SELECT "resource_version", "pods", "bytes" FROM "{StoreCounter._meta.db_table}" '
                    f'WHERE "cluster_id" = %s', [cluster_id])
        counter = cur.fetchone() or (0, 0, 0)
        return row[0], *counter


@contextmanager
def cluster_writes(cluster_id: int):
    """A transaction that writes a cluster's rows, holding the cluster's row lock from its start; yields the
    cluster's ``runner`` ("" when no loop has claimed it, None when the cluster is gone)."""
    with transaction.atomic():
        row = lock_cluster(cluster_id)
        yield None if row is None else row[0]
