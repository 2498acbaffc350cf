"""Redis killed for 30 s mid-run (restarted empty): scheduling goes on, Celery reconnects, live clients
rejoin and see the stream resume (gaps detected by the per-epoch sequence numbers)."""
from __future__ import annotations

import os
import time

import pytest

from dashboard.models import Cluster, Pod, SchedulingCycle
from dashboard.services import clusters as svc

from .conftest import Listener, check_invariants, scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

OUTAGE = float(os.environ.get("FAULT_OUTAGE_SECONDS", "30"))
PODS = int(os.environ.get("FAULT_REDIS_PODS", "3000"))


def test_redis_outage(workers, services):
    cluster = Cluster.objects.create(name="redisdown", tie_break="random")
    svc.load_scenario(cluster, scenario(100, PODS), "faults")
    worker = workers(lock_ttl=5.0)
    listener = Listener(cluster.id)
    bound = lambda: Pod.objects.filter(cluster=cluster, queue=Pod.BOUND).count()  # noqa: E731
    try:
        svc.set_state(cluster, Cluster.RUNNING)
        wait_for(lambda: bound() >= 200, 120, 0.1, "the first bindings")
        services.redis_stop()
        down_at = time.monotonic()
        before = bound()
        time.sleep(OUTAGE)
        during = bound() - before
        services.redis_start()
        up_at = time.monotonic()
        outage = up_at - down_at
        resumed = wait_for(lambda: next((t for t, m in listener.messages if t > up_at), None), 60, 0.1,
                           "live updates after Redis came back") - up_at
        wait_for(lambda: bound() == PODS, 300, 0.3, "every pod bound")
        # Celery reconnected: a command sent through the broker after the outage is executed
        svc.set_state(cluster, Cluster.PAUSED)
        svc.add_pod(cluster, {"metadata": {"name": "after", "uid": "after"}, "spec": {"containers": [{"name": "c"}]}})
        svc.step(cluster, 1)
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="after", queue=Pod.BOUND).exists(), 60, 0.2,
                 "a step after the outage")
    finally:
        listener.close()
    msgs = [m for _t, m in listener.messages if m.get("type") == "cluster.update"]
    gaps = sum(1 for a, b in zip(msgs, msgs[1:]) if a["epoch"] == b["epoch"] and b["seq"] != a["seq"] + 1)
    epochs = len({m["epoch"] for m in msgs})
    inv = check_invariants(cluster)
    print(f"\nFAULT redis-outage: down={outage:.1f}s pods={PODS} bound_during_outage={during} "
          f"live_resumed_after={resumed:.1f}s live_messages={len(msgs)} epochs={epochs} seq_gaps_detected={gaps} "
          f"listener_reconnects={listener.errors} bound_twice={inv['bound_twice']} "
          f"over_allocatable={inv['over_allocatable']} bindings_without_cycle={inv['bindings_without_cycle']} "
          f"cycles={SchedulingCycle.objects.filter(cluster=cluster).count()}")
    assert during > 0, "scheduling stopped while Redis was down"
    assert inv["bound_twice"] == inv["over_allocatable"] == inv["bindings_without_cycle"] == 0
    assert "Redis is back" in worker.text()
    svc.set_state(cluster, Cluster.STOPPED)
