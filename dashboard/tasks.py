"""Celery tasks: the scheduler loop of a cluster (with its standby), resuming every cluster on worker start, and
what-if questions."""
from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from .models import Cluster
from .services import locks, loops
from .services.runner import Runner

log = logging.getLogger("dashboard.tasks")


@shared_task(bind=True, max_retries=None, acks_late=True, reject_on_worker_lost=True)
def run_cluster(self, cluster_id: int):
    """Drive the cluster until it is stopped. If another worker drives it, stand by: once its lock
    expires (that worker died), this task takes over. Only one standby is kept per cluster. A loop that
    ended while the cluster should still run (it lost its lock after a stall) stands by as well."""
    drove = Runner(cluster_id).run()
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None or cluster.desired_state == Cluster.STOPPED:
        return "stopped" if drove else "not needed"
    ttl = settings.SCHEDSCOPE["LOCK_TTL_SECONDS"]
    client, key, me = locks.redis_client(), f"schedscope:cluster:{cluster_id}:standby", self.request.id or "-"
    holder = client.get(key)
    if holder is not None and holder.decode() != me:
        return "another task stands by"
    client.set(key, me, ex=max(1, int(ttl)))
    raise self.retry(countdown=ttl / 2)


@shared_task
def resume_all():
    """Start (or stand by for) every cluster whose desired state is running or paused."""
    for cid in Cluster.objects.exclude(desired_state=Cluster.STOPPED).values_list("id", flat=True):
        loops.ensure_runner(cid)


@shared_task
def whatif_run(run_id: int):
    """Answer a what-if question (its row shows the progress and, at the end, the answer)."""
    from .services.whatif import execute
    execute(run_id)
    return run_id
