"""The recorder against real PostgreSQL: batched writes, the stored matrix, and a real database outage."""
from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection

from dashboard.models import Cluster, SchedulingCycle, SchedulingEvent
from dashboard.services.recorder import Recorder
from dashboard.services.traceview import filter_matrix, score_table
from scheduler_core.scenario import scenario_from_data
from scheduler_core.simulate import Simulation

from .conftest import small_scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def traces(n_web=12):
    sim = Simulation(scenario_from_data(small_scenario(n_web)), tie_break="name")
    return list(sim.run())


def test_cycles_are_written_in_batches_with_their_matrix():
    cluster = Cluster.objects.create(name="rec")
    rec = Recorder(cluster, batch_size=4, flush_interval=0.05)
    trs = traces()
    for tr in trs:
        rec.emit(tr)
    assert rec.flush(20)
    rec.close()
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == len(trs) == 15
    assert list(SchedulingCycle.objects.filter(cluster=cluster).order_by("seq").values_list("seq", flat=True)) == \
        list(range(1, 16))
    big = SchedulingCycle.objects.get(cluster=cluster, pod_name="too-big")
    assert big.result == "unschedulable"
    assert big.message.startswith("0/6 nodes are available: 1 node(s) had untolerated taint {gpu: true}, "
                                  "5 Insufficient cpu.")
    assert big.failing_plugins == {"NodeResourcesFit": 5, "TaintToleration": 1}
    assert big.failing_reasons == {"Insufficient cpu": 5, "node(s) had untolerated taint {gpu: true}": 1}
    fm = filter_matrix(big.matrix, group=False)
    gpu = next(r for r in fm["rows"] if r["nodes"] == ["gpu-0"])
    cells = dict(zip(fm["plugins"], gpu["cells"]))
    assert cells["TaintToleration"]["state"] == "fail" and cells["TaintToleration"]["stopped"]
    # trace mode runs every plugin: NodeResourcesFit also rejects gpu-0, but kube stopped before it
    assert cells["NodeResourcesFit"]["state"] == "fail" and not cells["NodeResourcesFit"]["stopped"]
    assert gpu["stopped_at"] == "TaintToleration"
    grouped = filter_matrix(big.matrix)
    assert sorted(len(r["nodes"]) for r in grouped["rows"]) == [1, 5]

    web = SchedulingCycle.objects.get(cluster=cluster, pod_name="web-0")
    assert web.result == "scheduled" and web.node
    table = score_table(web.matrix, web.node)
    assert table["rows"][0]["rank"] == 1 and any(r["chosen"] for r in table["rows"])
    assert "NodeResourcesFit" in table["plugins"]
    assert all(r["total"] == sum(c["weighted"] for c in r["cells"]) for r in table["rows"])


def _admin():
    d = connection.settings_dict
    return psycopg.connect(host=d["HOST"] or "127.0.0.1", port=d["PORT"] or 5432, user=d["USER"] or "postgres",
                           dbname="postgres", autocommit=True)


def _outage(admin, name, on: bool):
    admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"false" if on else "true"}')
    if on:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))


def test_database_outage_buffers_retries_and_counts_overflow():
    cluster = Cluster.objects.create(name="outage")
    cluster_id = cluster.id
    name = connection.settings_dict["NAME"]
    rec = Recorder(cluster, batch_size=10, max_buffer=40, flush_interval=0.05, retry_max=0.3)
    trs = traces(30)
    for tr in trs[:10]:
        rec.emit(tr)
    assert rec.flush(20)
    admin = _admin()
    try:
        _outage(admin, name, True)
        connection.close()
        t0 = time.perf_counter()
        for _ in range(3):                      # 3 x 33 records while the database refuses connections
            for tr in trs[:33]:
                rec.emit(tr)
        emit_seconds = time.perf_counter() - t0
        wait_for(lambda: rec.failures >= 1, 20, what="a failed write")
        assert rec.overflow == 99 - 40          # bounded: the rest is dropped and counted
        assert rec.buffered == 40
        time.sleep(0.5)
    finally:
        _outage(admin, name, False)
        admin.close()
    assert rec.flush(30), rec.last_error
    rec.close()
    connection.close()
    assert SchedulingCycle.objects.filter(cluster_id=cluster_id).count() == 10 + 40
    assert rec.written_cycles == 50
    # emit() never waited for the database: 99 emits, each converting a trace, in well under a second
    assert emit_seconds < 1.0
    assert SchedulingEvent.objects.filter(cluster_id=cluster_id).count() == 0


def test_retention_keeps_the_newest_cycles():
    from datetime import datetime, timedelta, timezone

    from dashboard.services.retention import prune
    cluster = Cluster.objects.create(name="keep")
    rec = Recorder(cluster, batch_size=50, flush_interval=0.05)
    for tr in traces():
        rec.emit(tr)
    assert rec.flush(20)
    rec.close()
    assert prune(cluster.id, days=0, max_cycles=10) == 5
    assert list(SchedulingCycle.objects.filter(cluster=cluster).order_by("seq").values_list("seq", flat=True)) == \
        list(range(6, 16))
    SchedulingCycle.objects.filter(cluster=cluster, seq__lt=8).update(
        started=datetime.now(timezone.utc) - timedelta(days=30))
    assert prune(cluster.id, days=7, max_cycles=0) == 2
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == 8
