"""The full stack: a real Celery worker schedules a scenario into PostgreSQL, live updates arrive over
Channels (Redis layer), and a worker killed mid-run is replaced without double bindings or lost cycles."""
from __future__ import annotations

import asyncio
import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db.models import Count

from dashboard.models import Cluster, Pod, SchedulingCycle, SchedulingEvent
from dashboard.services import clusters as svc
from dashboard.services import control

from .conftest import make_user, session_cookie, small_scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _setup(name, scenario):
    cluster = Cluster.objects.create(name=name, tie_break="name")
    svc.load_scenario(cluster, scenario, "test")
    return cluster


async def _receive_until(comm, predicate, timeout=30.0):
    end = time.monotonic() + timeout
    seen = []
    while time.monotonic() < end:
        try:
            msg = await comm.receive_json_from(timeout=max(0.1, end - time.monotonic()))
        except asyncio.TimeoutError:
            break
        seen.append(msg)
        if predicate(msg):
            return msg, seen
    pytest.fail(f"no matching websocket message within {timeout}s; got {seen[-3:]}")


@pytest.mark.asyncio
async def test_worker_schedules_records_and_streams(worker_factory):
    from dashboard.asgi import application
    await database_sync_to_async(worker_factory)()
    cluster = await database_sync_to_async(_setup)("stream", small_scenario(12))
    cookie = await database_sync_to_async(lambda: session_cookie(make_user("watcher")))()
    comm = WebsocketCommunicator(application, "/ws/clusters/stream/",
                                 headers=[(b"origin", b"http://localhost"), (b"host", b"localhost"),
                                          (b"cookie", cookie)])
    connected, _ = await comm.connect()
    assert connected
    hello = await comm.receive_json_from(timeout=5)
    assert hello["kind"] == "hello" and hello["queue"]["active"] == 15

    await database_sync_to_async(svc.set_state)(cluster, Cluster.RUNNING)
    totals = {"cycles": 0, "done": False}

    def all_in(m):
        if m["kind"] != "update":
            return False
        totals["cycles"] += m["new_cycles"]
        if m["queue"] and m["queue"]["unschedulable"] == 3 and m["queue"]["bound"] == 12:
            totals["done"] = True
        return totals["done"] and totals["cycles"] == 15

    msg, seen = await _receive_until(comm, all_in)
    updates = [m for m in seen if m["kind"] == "update"]
    cycle_msgs = [c for m in updates for c in m["cycles"]]
    assert {"seq", "pod", "result", "node", "message"} <= set(cycle_msgs[0])
    # coalesced: far fewer messages than cycles+events
    assert len(updates) <= sum(m["new_cycles"] + m["new_events"] for m in updates)
    await comm.disconnect()

    def check():
        wait_for(lambda: SchedulingCycle.objects.filter(cluster=cluster).count() == 15, 30, what="15 cycles")
        wait_for(lambda: Pod.objects.filter(cluster=cluster, queue="bound").count() == 12, 30, what="bindings")
        big = SchedulingCycle.objects.get(cluster=cluster, pod_name="too-big")
        assert big.failing_plugins == {"NodeResourcesFit": 5, "TaintToleration": 1}
        assert big.matrix["filter_plugins"][:3] == ["NodeUnschedulable", "NodeName", "TaintToleration"]
        assert len(big.matrix["nodes"]) == 6
        scheduled = SchedulingCycle.objects.filter(cluster=cluster, result="scheduled").first()
        assert scheduled.matrix["score"]["plugins"]
        assert SchedulingEvent.objects.filter(cluster=cluster, reason="Scheduled").count() == 12
        assert Cluster.objects.get(pk=cluster.pk).runner  # the worker's heartbeat
        # paused: a new pod waits; a single step schedules it
        svc.set_state(cluster, Cluster.PAUSED)
        svc.add_pod(cluster, {"metadata": {"name": "late"}, "spec": {"containers": [{"name": "c", "image": "c:1"}]}})
        time.sleep(1.0)
        assert not SchedulingCycle.objects.filter(cluster=cluster, pod_name="late").exists()
        svc.step(cluster, 1)
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="late", queue="bound").exists(), 20,
                 what="the stepped pod to be bound")
        svc.set_state(cluster, Cluster.STOPPED)
        wait_for(lambda: not control.is_driven(cluster.id), 20, what="the loop to stop")
        # stopped: a step runs in a short-lived loop that releases the cluster again
        svc.add_pod(cluster, {"metadata": {"name": "later"}, "spec": {"containers": [{"name": "c", "image": "c:1"}]}})
        svc.step(cluster, 5)
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="later", queue="bound").exists(), 20,
                 what="the pod stepped while stopped")
        wait_for(lambda: not control.is_driven(cluster.id), 20, what="the short-lived loop to end")
    await database_sync_to_async(check)()


def big_scenario(n_nodes=60, n_pods=1200):
    scen = small_scenario(0)
    alloc = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    scen["nodes"] = [{"metadata": {"name": f"node-{i:03d}", "labels": {"topology.kubernetes.io/zone": f"z{i % 3}"}},
                      "status": {"capacity": alloc, "allocatable": alloc}} for i in range(n_nodes)]
    scen["pending"] = [{"metadata": {"name": f"p-{i:05d}", "namespace": "load", "uid": f"load-{i}"},
                        "spec": {"containers": [{"name": "c", "resources": {"requests": {
                            "cpu": "100m" if i % 10 else "1", "memory": "256Mi"}}}]}} for i in range(n_pods)]
    return scen


def test_killed_worker_is_replaced_without_double_binding(worker_factory):
    first = worker_factory(lock_ttl=3.0)
    n_pods = 4000  # several seconds of scheduling, so the first rows are written well before the run ends
    cluster = _setup("crash", big_scenario(n_nodes=150, n_pods=n_pods))
    svc.set_state(cluster, Cluster.RUNNING)
    wait_for(lambda: SchedulingCycle.objects.filter(cluster=cluster).exists(), 60, 0.05, what="first cycles")
    first.kill()
    at_kill = SchedulingCycle.objects.filter(cluster=cluster).count()
    assert at_kill < n_pods, "the run finished before the kill; make the scenario bigger"
    second = worker_factory(lock_ttl=3.0)
    wait_for(lambda: Pod.objects.filter(cluster=cluster, queue="active").count() == 0
             and SchedulingCycle.objects.filter(cluster=cluster).count() > at_kill, 120, 0.2,
             what="the new worker to finish the queue")
    assert "scheduler loop started" in second.text()
    pods = Pod.objects.filter(cluster=cluster)
    bound = list(pods.exclude(node_name="").values_list("uid", "node_name", "last_cycle"))
    assert len(bound) == n_pods
    cycles = {c.seq: c for c in SchedulingCycle.objects.filter(cluster=cluster, result="scheduled")}
    # every committed binding has its cycle, which chose that node
    for uid, node, seq in bound:
        assert seq in cycles and cycles[seq].pod_uid == uid and cycles[seq].node == node
    # no pod was bound twice: one scheduled cycle and one Scheduled event per pod
    dup = (SchedulingCycle.objects.filter(cluster=cluster, result="scheduled").values("pod_uid")
           .annotate(n=Count("id")).filter(n__gt=1))
    assert not dup.exists()
    dup_events = (SchedulingEvent.objects.filter(cluster=cluster, reason="Scheduled").values("pod_uid")
                  .annotate(n=Count("id")).filter(n__gt=1))
    assert not dup_events.exists()
    svc.set_state(cluster, Cluster.STOPPED)
    wait_for(lambda: not control.is_driven(cluster.id), 20, what="the loop to stop")
