"""PostgreSQL stopped for 30 s mid-run: scheduling goes on, the recorder buffers, nothing is lost."""
from __future__ import annotations

import os
import re
import time

import pytest
from django.db import connection
from django.db.models import Max

from dashboard.models import Cluster, Pod, SchedulingCycle
from dashboard.services import clusters as svc

from .conftest import Listener, check_invariants, scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

OUTAGE = float(os.environ.get("FAULT_OUTAGE_SECONDS", "30"))
PODS = int(os.environ.get("FAULT_PG_PODS", "3000"))


def test_postgresql_outage(workers, services):
    cluster = Cluster.objects.create(name="pgdown", tie_break="random")
    cluster_id = cluster.id
    svc.load_scenario(cluster, scenario(100, PODS), "faults")
    worker = workers(lock_ttl=5.0, SCHEDSCOPE_RECORDER_BATCH="100")
    listener = Listener(cluster_id)
    try:
        svc.set_state(cluster, Cluster.RUNNING)
        # the scheduler's own count (live updates), not the database's: the recorder may lag behind it
        wait_for(lambda: listener.bound() >= 200, 120, 0.1, "the first bindings")
        connection.close()
        services.pg_stop()
        down_at = time.monotonic()
        bound_at_stop = listener.bound()
        time.sleep(OUTAGE)
        bound_in_outage = listener.bound() - bound_at_stop
        services.pg_start()
        outage = time.monotonic() - down_at
    finally:
        listener.close()
    wait_for(lambda: Pod.objects.filter(cluster_id=cluster_id, queue=Pod.BOUND).count() == PODS, 300, 0.3,
             "every pod bound")
    wait_for(lambda: SchedulingCycle.objects.filter(cluster_id=cluster_id).count() >= PODS, 60, 0.3,
             "every cycle stored")
    stored = SchedulingCycle.objects.filter(cluster_id=cluster_id).count()
    max_seq = SchedulingCycle.objects.filter(cluster_id=cluster_id).aggregate(m=Max("seq"))["m"]
    inv = check_invariants(cluster)
    marks = [int(m) for m in re.findall(r"buffer high-water mark (\d+)", worker.text())]
    print(f"\nFAULT postgresql-outage: down={outage:.1f}s pods={PODS} bound_during_outage={bound_in_outage} "
          f"cycles_stored={stored} max_seq={max_seq} lost={max_seq - stored} "
          f"buffer_high_water={max(marks) if marks else 'n/a'} bound_twice={inv['bound_twice']} "
          f"over_allocatable={inv['over_allocatable']} bindings_without_cycle={inv['bindings_without_cycle']} "
          f"live_messages={len(listener.messages)} layer_errors={listener.errors}")
    assert bound_in_outage > 0, "scheduling stopped while the database was down"
    assert stored == max_seq == PODS, "cycle records lost"
    assert marks, "the recorder never reported recovering"
    assert inv == {"bound": PODS, "bound_twice": 0, "over_allocatable": 0, "bindings_without_cycle": 0}
    svc.set_state(cluster, Cluster.STOPPED)
