"""The recorder against real PostgreSQL: batched writes, the stored matrix, and a real database outage."""
from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone

import psycopg
import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections

from dashboard.models import Cluster, Pod, SchedulingCycle, SchedulingEvent, StoreChange
from dashboard.services.recorder import Recorder
from dashboard.services.traceview import filter_matrix, score_table
from scheduler_core.scenario import scenario_from_data
from scheduler_core.simulate import Simulation

from .conftest import small_scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def traces(n_web=12):
    sim = Simulation(scenario_from_data(small_scenario(n_web)), tie_break="name")
    return list(sim.run())


def record_all(cluster, batch_size: int = 50) -> Recorder:
    """Record the traces of ``traces()`` for ``cluster`` and wait until they are committed; the closed recorder."""
    rec = Recorder(cluster, batch_size=batch_size, flush_interval=0.05)
    for tr in traces():
        rec.emit(tr)
    assert rec.flush(20)
    rec.close()
    return rec


def test_cycles_are_written_in_batches_with_their_matrix():
    cluster = Cluster.objects.create(name="rec")
    record_all(cluster, batch_size=4)
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == len(traces()) == 15
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


def test_a_failing_column_form_falls_back_to_the_row_form(monkeypatch, caplog):
    from dashboard.services import tracecodec

    def broken(*_a):
        raise IndexError("a bug in the column form")
    monkeypatch.setattr(tracecodec, "_columns_matrix", broken)
    cluster = Cluster.objects.create(name="rec-rows")
    record_all(cluster, batch_size=4)
    big = SchedulingCycle.objects.get(cluster=cluster, pod_name="too-big")
    assert "format" not in big.matrix and big.matrix["nodes"]   # the row form: node names inline
    assert big.failing_plugins == {"NodeResourcesFit": 5, "TaintToleration": 1}
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == len(traces())
    assert "the column form failed; stored in the row form" in caplog.text


def test_the_writer_survives_a_bug_and_writes_the_batch_again(monkeypatch, caplog):
    from dashboard.services import recorder as recorder_module
    real, calls = recorder_module.insert_cycles, []

    def fails_once(rows):
        calls.append(len(rows))
        if len(calls) == 1:
            raise RuntimeError("a bug while writing")
        real(rows)
    monkeypatch.setattr(recorder_module, "insert_cycles", fails_once)
    cluster = Cluster.objects.create(name="rec-bug")
    rec = record_all(cluster, batch_size=4)
    assert rec.failures == 1 and rec.last_error == "a bug while writing"
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == len(traces())
    assert "writing a batch of" in caplog.text and "RuntimeError" in caplog.text


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
        # the outage also ended the connection of asgiref's thread that serves the later tests' async requests
        asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())
    assert rec.flush(30), rec.last_error
    rec.close()
    connection.close()
    assert SchedulingCycle.objects.filter(cluster_id=cluster_id).count() == 10 + 40
    assert rec.written_cycles == 50
    # emit() never waited for the database: 99 emits, each converting a trace, take well under a second on a quiet
    # machine; waiting for the unreachable database would take seconds per emit
    assert emit_seconds < 5.0, emit_seconds
    assert SchedulingEvent.objects.filter(cluster_id=cluster_id).count() == 0


def test_retention_keeps_the_newest_cycles():
    from datetime import datetime, timedelta, timezone

    from dashboard.services.retention import prune
    cluster = Cluster.objects.create(name="keep")
    record_all(cluster)
    assert prune(cluster.id, days=0, max_cycles=10) == 5
    assert list(SchedulingCycle.objects.filter(cluster=cluster).order_by("seq").values_list("seq", flat=True)) == \
        list(range(6, 16))
    SchedulingCycle.objects.filter(cluster=cluster, seq__lt=8).update(
        started=datetime.now(timezone.utc) - timedelta(days=30))
    assert prune(cluster.id, days=7, max_cycles=0) == 2
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == 8


def test_node_lists_are_pruned_when_no_cycle_or_what_if_run_uses_them(client):
    """Full traces refer to one stored node list; retention deletes a list no cycle was written with since its
    cutoff, unless a what-if trace refers to it; a cycle whose list is gone reads as one without nodes."""
    from datetime import timedelta

    from django.contrib.auth.models import User

    from dashboard import fields
    from dashboard.models import NodeList, WhatIfRun, WhatIfTrace
    from dashboard.services.retention import prune
    cluster = Cluster.objects.create(name="lists")
    record_all(cluster)
    (used,) = NodeList.objects.values_list("key", flat=True)
    cycle = SchedulingCycle.objects.filter(cluster=cluster, result="scheduled").first()
    assert len(cycle.matrix["nodes"]) == 6 and all(cycle.matrix["filter"]) and cycle.matrix["score"]["nodes"]
    month_ago = datetime.now(timezone.utc) - timedelta(days=30)
    kept = NodeList.objects.create(key="f" * 32, names=["n-1"], last_used=month_ago)
    run = WhatIfRun.objects.create(cluster=cluster, kind=WhatIfRun.CAPACITY)
    WhatIfTrace.objects.create(run=run, number=1, pod_namespace="default", pod_name="p", profile="default-scheduler",
                               result="scheduled", node_list=kept.key)
    NodeList.objects.filter(key=used).update(last_used=month_ago)
    assert prune(cluster.id, days=7, max_cycles=0) == 0   # the cycles are recent; the list is not
    assert list(NodeList.objects.values_list("key", flat=True)) == [kept.key]
    fields._NODE_LISTS.clear()
    gone = SchedulingCycle.objects.get(pk=cycle.pk).matrix
    assert gone["node_list_missing"] and gone["nodes"] == [] and "score" not in gone
    client.force_login(User.objects.create_user("reader"))
    page = client.get(f"/clusters/lists/pods/{cycle.pod_namespace}/{cycle.pod_name}/?cycle={cycle.seq}")
    assert page.status_code == 200 and "names of the nodes this cycle was recorded against are gone" in \
        page.content.decode()


def _pending_pods(cluster, n):
    """n unschedulable pods p-0 .. p-(n-1), each with 2 attempts, latest cycle 900 and a rejection."""
    Pod.objects.bulk_create([Pod(cluster=cluster, uid=f"p-{i}", namespace="default", name=f"p-{i}", raw={},
                                 queue=Pod.UNSCHEDULABLE, attempts=2, last_cycle=900, reason="0/6 nodes",
                                 plugins=",NodeResourcesFit,") for i in range(n)])


def _one_batch(cluster):
    """A recorder whose writer sleeps until ``_commit_one_batch`` wakes it; and the list of batches it
    committed."""
    batches = []
    rec = Recorder(cluster, batch_size=10_000, flush_interval=60, on_commit=batches.append)
    return rec, batches


def _commit_one_batch(rec, batches):
    """Wake the writer: it takes everything recorded so far as one batch. Wait for the commit, close."""
    rec.flush(0)
    wait_for(lambda: batches, 20, what="the batch")
    assert rec.close(20)
    assert len(batches) == 1 and rec.failures == 0


def test_bindings_mixed_with_cycles_and_events_land_in_one_batch():
    cluster = Cluster.objects.create(name="binds")
    _pending_pods(cluster, 40)
    rec, batches = _one_batch(cluster)
    trs = traces()
    t0 = datetime.now(timezone.utc)
    seqs = []
    for i in range(40):     # cycle, event, bind, cycle, event, bind...
        seqs.append(rec.record_trace(trs[i % len(trs)]))
        rec.record_event("Scheduled", f"bound p-{i}", node=f"node-{i % 7}", cycle_seq=seqs[-1])
        rec.record_binding(f"p-{i}", f"node-{i % 7}", seqs[-1], attempts=i % 4 + 1)
    t1 = datetime.now(timezone.utc)
    _commit_one_batch(rec, batches)
    assert len(batches[0]) == 120
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == 40
    # the events about one node are one Event each, their series counting the others (kube's event series)
    events = SchedulingEvent.objects.filter(cluster=cluster)
    assert events.count() == 7
    assert sorted((e.raw.get("series") or {}).get("count", 1) for e in events) == [5, 5, 6, 6, 6, 6, 6]
    # what the broadcast gets of each event names the Event stored for it (a repeat: its series' first Event)
    committed = [p for kind, p in batches[0] if kind == "event"]
    assert len(committed) == 40
    assert {p["key"] for p in committed} == {e.key for e in events} and all(e.key for e in events)
    assert all(p["key"] == events.get(node=p["node"]).key for p in committed)
    pods = {p.uid: p for p in Pod.objects.filter(cluster=cluster)}
    bound_at = []
    for i, seq in enumerate(seqs):
        pod = pods[f"p-{i}"]
        assert (pod.node_name, pod.queue, pod.last_cycle, pod.attempts, pod.reason, pod.plugins) == \
            (f"node-{i % 7}", Pod.BOUND, seq, i % 4 + 1, "", ""), pod.uid
        bound_at.append(pod.bound_at)
    assert t0 <= bound_at[0] and bound_at == sorted(bound_at) and bound_at[-1] <= t1
    assert len(set(bound_at)) == 40


def test_a_batchs_bindings_and_events_are_logged_once_each_as_stored():
    """The change log gets one row per binding and per event of a batch (on PostgreSQL inserted from the rows
    the batch loaded, not sent again): its key, type and object are those stored, with the object's
    resourceVersion; the rvs follow each other and the cluster's counter ends at the last."""
    from dashboard.models import StoreCounter
    cluster = Cluster.objects.create(name="logged")
    Pod.objects.bulk_create([Pod(cluster=cluster, uid=f"u-{i}", namespace="ns", name=f"p-{i}", queue=Pod.ACTIVE,
                                 raw={"metadata": {"name": f"p-{i}", "namespace": "ns", "uid": f"u-{i}"},
                                      "spec": {"containers": [{"name": "c", "image": "img"}]}}) for i in range(6)])
    rec, batches = _one_batch(cluster)
    trs = traces()
    for i in range(6):
        seq = rec.record_trace(trs[i])
        pod = type("P", (), {"uid": f"u-{i}", "namespace": "ns", "name": f"p-{i}", "raw": {
            "metadata": {"name": f"p-{i}", "namespace": "ns", "uid": f"u-{i}"}}, "scheduler_name": ""})()
        rec.record_event("Scheduled", f"bound p-{i}", pod=pod, node="node-a", cycle_seq=seq)
        rec.record_binding(f"u-{i}", "node-a", seq, attempts=1)
    _commit_one_batch(rec, batches)
    changes = list(StoreChange.objects.filter(cluster=cluster).order_by("rv"))
    assert [c.rv for c in changes] == list(range(changes[0].rv, changes[0].rv + 12))
    assert StoreCounter.objects.get(cluster=cluster).resource_version == changes[-1].rv
    pods = {p.name: p for p in Pod.objects.filter(cluster=cluster)}
    logged_pods = {c.key: c for c in changes if c.kind == "pods"}
    assert sorted(logged_pods) == [f"ns/p-{i}" for i in range(6)]
    for i in range(6):
        change, pod = logged_pods[f"ns/p-{i}"], pods[f"p-{i}"]
        assert (change.type, change.rv, change.writer) == (StoreChange.MODIFIED, pod.rv, "")
        assert change.raw == pod.raw and pod.raw["metadata"]["resourceVersion"] == str(pod.rv)
        assert pod.raw["spec"]["nodeName"] == "node-a" and pod.raw["status"]["phase"] == "Running"
    events = {e.rv: e for e in SchedulingEvent.objects.filter(cluster=cluster)}
    logged_events = [c for c in changes if c.kind == "Event"]
    assert len(logged_events) == 6 and set(events) == {c.rv for c in logged_events}
    for change in logged_events:
        ev = events[change.rv]
        assert change.type == StoreChange.ADDED and change.raw == ev.raw
        assert change.key == f'ns/{ev.raw["metadata"]["name"]}' and ev.raw["metadata"]["resourceVersion"] == str(ev.rv)
        assert ev.raw["involvedObject"]["name"] == ev.pod_name and ev.reason == "Scheduled"


def test_binding_without_attempts_keeps_the_pods_cycle_and_attempts():
    cluster = Cluster.objects.create(name="manual")
    _pending_pods(cluster, 3)
    rec, batches = _one_batch(cluster)
    seq = rec.record_trace(traces()[0])
    rec.record_binding("p-0", "node-a", attempts=None)              # e.g. a manual binding
    rec.record_binding("p-1", "node-b", seq, attempts=5)
    rec.record_binding("p-2", "node-c", seq, attempts=5)            # decided by a cycle, then rebound manually:
    rec.record_binding("p-2", "node-d", attempts=None)              # the cycle's seq and attempts stay
    _commit_one_batch(rec, batches)
    got = {p.uid: (p.node_name, p.queue, p.last_cycle, p.attempts, p.reason)
           for p in Pod.objects.filter(cluster=cluster)}
    assert got == {"p-0": ("node-a", Pod.BOUND, 900, 2, ""), "p-1": ("node-b", Pod.BOUND, seq, 5, ""),
                   "p-2": ("node-d", Pod.BOUND, seq, 5, "")}


def test_the_last_binding_of_a_pod_in_a_batch_wins():
    cluster = Cluster.objects.create(name="twice")
    _pending_pods(cluster, 2)
    rec, batches = _one_batch(cluster)
    trs = traces()
    first, second = rec.record_trace(trs[0]), rec.record_trace(trs[1])
    rec.record_binding("p-0", "node-a", first, attempts=1)
    rec.record_binding("p-1", "node-x", first, attempts=1)
    rec.record_binding("p-0", "node-b", second, attempts=2)
    rec.record_binding("p-0", "node-c", None, attempts=3)          # its cycle overflowed: no latest cycle
    _commit_one_batch(rec, batches)
    got = {p.uid: (p.node_name, p.last_cycle, p.attempts) for p in Pod.objects.filter(cluster=cluster)}
    assert got == {"p-0": ("node-c", None, 3), "p-1": ("node-x", first, 1)}


def test_deletions_and_bindings_of_the_same_pod_in_one_batch():
    cluster = Cluster.objects.create(name="deleted")
    _pending_pods(cluster, 4)
    rec, batches = _one_batch(cluster)
    seq = rec.record_trace(traces()[0])
    rec.record_binding("p-0", "node-a", seq, attempts=1)
    rec.record_deletion("p-0")                                      # bound, then deleted: gone
    rec.record_deletion("p-1")                                      # deleted, then a late binding: nothing
    rec.record_binding("p-1", "node-b", seq, attempts=1)
    rec.record_deletion("p-2")
    rec.record_binding("p-3", "node-c", seq, attempts=1)
    _commit_one_batch(rec, batches)
    assert list(Pod.objects.filter(cluster=cluster).values_list("uid", "node_name")) == [("p-3", "node-c")]


def test_queue_states_of_a_batch_are_stored_and_a_bound_pod_keeps_its_own():
    """A batch's pod states (some with every field, some with the queue only) land as one UPDATE per set of
    fields; a pod bound meanwhile keeps what its binding left, and other clusters' pods are not touched."""
    cluster, other = Cluster.objects.create(name="states"), Cluster.objects.create(name="other-states")
    _pending_pods(cluster, 5)
    _pending_pods(other, 2)
    rec, batches = _one_batch(cluster)
    seq = rec.record_trace(traces()[0])
    rec.record_pod_state("p-0", queue=Pod.BACKOFF, attempts=3, reason="0/6 nodes: 'it''s full' 100%",
                         plugins=",TaintToleration,", last_cycle=seq)
    rec.record_pod_state("p-1", queue=Pod.ACTIVE)
    rec.record_pod_state("p-2", queue=Pod.ACTIVE)
    rec.record_pod_state("p-2", queue=Pod.UNSCHEDULABLE, attempts=4, reason="", plugins="", last_cycle=seq)
    rec.record_binding("p-3", "node-a", seq, attempts=3)
    rec.record_pod_state("p-3", queue=Pod.ACTIVE)                # a late queue sync of a pod bound meanwhile
    rec.record_pod_state("p-ghost", queue=Pod.ACTIVE)            # deleted meanwhile: nothing to update
    _commit_one_batch(rec, batches)
    got = {p.uid: (p.queue, p.attempts, p.reason, p.plugins, p.last_cycle, p.node_name)
           for p in Pod.objects.filter(cluster=cluster)}
    assert got == {
        "p-0": (Pod.BACKOFF, 3, "0/6 nodes: 'it''s full' 100%", ",TaintToleration,", seq, ""),
        "p-1": (Pod.ACTIVE, 2, "0/6 nodes", ",NodeResourcesFit,", 900, ""),
        "p-2": (Pod.UNSCHEDULABLE, 4, "", "", seq, ""),
        "p-3": (Pod.BOUND, 3, "", "", seq, "node-a"),
        "p-4": (Pod.UNSCHEDULABLE, 2, "0/6 nodes", ",NodeResourcesFit,", 900, ""),
    }
    assert set(Pod.objects.filter(cluster=other).values_list("queue", "attempts")) == {(Pod.UNSCHEDULABLE, 2)}


def test_status_patches_of_a_batch_land_in_one_update():
    """Pending pods' status patches (nominatedNodeName, PodScheduled) are stored with a new resourceVersion each
    and logged; a pod bound in the same batch keeps what its binding left."""
    cluster = Cluster.objects.create(name="statuses")
    _pending_pods(cluster, 3)
    rec, batches = _one_batch(cluster)
    seq = rec.record_trace(traces()[0])
    for i in range(3):
        rec.record_pod_status(f"p-{i}", {"phase": "Pending", "nominatedNodeName": f"node-{i}"})
    rec.record_binding("p-2", "node-z", seq, attempts=1)
    _commit_one_batch(rec, batches)
    pods = {p.uid: p for p in Pod.objects.filter(cluster=cluster)}
    for i in range(2):
        raw = pods[f"p-{i}"].raw
        assert raw["status"] == {"phase": "Pending", "nominatedNodeName": f"node-{i}"}
        assert raw["metadata"]["resourceVersion"] == str(pods[f"p-{i}"].rv)
    assert pods["p-2"].node_name == "node-z" and pods["p-2"].raw["spec"]["nodeName"] == "node-z"
    logged = StoreChange.objects.filter(cluster=cluster, kind="pods").values_list("rv", flat=True)
    assert {pods["p-0"].rv, pods["p-1"].rv, pods["p-2"].rv} <= set(logged)


@pytest.mark.parametrize("version, gates, kept", [("1.36", "", False),
                                                  ("1.36", "ClearingNominatedNodeNameAfterBinding=false", True),
                                                  ("1.30", "", True)])
def test_a_binding_clears_nominated_node_name_at_1_36(version, gates, kept):
    """A binding of the scheduler loop clears the pod's stored status.nominatedNodeName where kube-apiserver has
    ClearingNominatedNodeNameAfterBinding (1.36 by default); 1.30, or the gate off, keeps it."""
    cluster = Cluster.objects.create(name="nominated", kube_version=version, feature_gates=gates)
    _pending_pods(cluster, 1)
    rec, batches = _one_batch(cluster)
    seq = rec.record_trace(traces()[0])
    rec.record_pod_status("p-0", {"phase": "Pending", "nominatedNodeName": "node-y"})
    rec.record_binding("p-0", "node-z", seq, attempts=1)
    _commit_one_batch(rec, batches)
    raw = Pod.objects.get(cluster=cluster, uid="p-0").raw
    assert raw["spec"]["nodeName"] == "node-z"
    assert raw["status"].get("nominatedNodeName") == ("node-y" if kept else None)


def test_an_event_series_ends_six_minutes_after_its_last_event():
    """client-go's series: isomorphic Events (the note aside) count in the first one's series while each comes
    within six minutes of the one before; after a longer pause the next one is a new Event."""
    from dashboard.services.objectstore import EventSeries, event_object
    series = EventSeries()
    ref = {"kind": "Pod", "apiVersion": "v1", "namespace": "ns", "name": "p", "uid": "u", "resourceVersion": "7"}

    def ev(now, note="0/3 nodes are available", reason="FailedScheduling", ref=ref):
        return series.observe(event_object("p", ref, "Warning", reason, "Scheduling", note, "default-scheduler",
                                           now), now)
    first, repeat = ev(1000.0)
    assert not repeat and "series" not in first
    second, repeat = ev(1000.0 + 359, note="0/4 nodes are available")
    assert repeat and second["series"]["count"] == 2 and second["message"] == "0/3 nodes are available"
    assert second["metadata"]["name"] == first["metadata"]["name"]
    assert ev(1000.0 + 2 * 359)[0]["series"]["count"] == 3
    assert not ev(1000.0 + 2 * 359, reason="Preempted")[1]   # another reason, another Event
    assert not ev(1000.0 + 2 * 359, ref=dict(ref, resourceVersion="8"))[1]   # the pod changed since
    fresh, repeat = ev(1000.0 + 2 * 359 + 361)
    assert not repeat and "series" not in fresh and fresh["metadata"]["name"] != first["metadata"]["name"]
