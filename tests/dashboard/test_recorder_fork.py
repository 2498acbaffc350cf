"""The recorder's forked writer (real PostgreSQL, real fork): a big batch is written by a child process exactly as
the writer thread writes it, the parent's own session survives every child, and a child that fails or dies
costs nothing but a retry. A batch that a flush waits for is written by the thread: the tests that need a child
let the writer take its batches on its own (``_written``) before they flush."""
from __future__ import annotations

import os
import signal
import time

import pytest

from dashboard.models import Cluster, Node, Pod, SchedulingCycle
from dashboard.services import objectstore, recorder as recorder_module
from dashboard.services.recorder import CYCLE, Recorder

from .test_recorder import traces

pytestmark = pytest.mark.django_db(transaction=True)

# a cycle's row but for its timings (each recorder here records traces made for it)
ROW_FIELDS = ("seq", "pod_uid", "pod_namespace", "pod_name", "profile", "attempt", "result", "node", "message",
              "num_nodes", "num_feasible", "failing_plugins", "failing_reasons", "matrix", "preemption")


def _written(rec: Recorder, cycles: int, timeout: float = 30.0) -> None:
    """Wait, without a flush, until the writer has taken and written ``cycles`` cycles and nothing is left."""
    deadline = time.monotonic() + timeout
    while rec.written_cycles < cycles or rec.buffered:
        assert time.monotonic() < deadline, (rec.written_cycles, rec.buffered, rec.last_error)
        time.sleep(0.01)


def _record(name: str, fork_cycles: int, batch_size: int = 50) -> tuple:
    """Every trace of ``traces(30)`` recorded for a new cluster, the batches taken by the writer on its own;
    (recorder, committed on_commit records)."""
    committed = []
    rec = Recorder(Cluster.objects.create(name=name), batch_size=batch_size, flush_interval=0.05,
                   fork_cycles=fork_cycles, on_commit=committed.extend)
    trs = traces(30)
    for tr in trs:
        rec.emit(tr)
    _written(rec, len(trs))
    assert rec.flush(30)
    rec.close()
    return rec, committed


def _rows(name: str) -> list:
    return list(SchedulingCycle.objects.filter(cluster__name=name).order_by("seq").values_list(*ROW_FIELDS))


def test_a_forked_batch_stores_what_the_thread_stores():
    by_thread, seen_by_thread = _record("by-thread", fork_cycles=0)
    by_child, seen_by_child = _record("by-child", fork_cycles=1)
    assert by_thread.forked == 0 and by_child.forked >= 1 and by_child.failures == 0
    assert len(_rows("by-child")) == len(traces(30)) == 33
    assert _rows("by-child") == _rows("by-thread")
    # the summaries the child made reach on_commit in the parent
    def summaries(records):
        return [{k: v for k, v in p.items() if k != "durations_ms"} for kind, p in records if kind == CYCLE]
    assert [s["seq"] for s in summaries(seen_by_child)] == list(range(1, 34))
    assert summaries(seen_by_child) == summaries(seen_by_thread)


def _keep_busy(rec: Recorder, tr, seconds: float, every: float = 0.02) -> None:
    """A busy loop: ``tr`` recorded again (a new attempt) every ``every`` seconds, far less than the recorder's
    ``flush_interval`` apart, for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rec.record_trace(tr, attempt=2)
        time.sleep(every)


def test_under_load_a_forked_batch_waits_until_its_oldest_record_is_fork_spacing_old():
    """Fewer cycles than ``fork_cycles`` go by the thread within ``flush_interval``; while the loop keeps recording,
    a batch a child writes waits until its oldest record is ``fork_spacing`` seconds old (one fork a second under
    load, not four); a flush does not wait for it."""
    cluster = Cluster.objects.create(name="spaced")
    rec = Recorder(cluster, batch_size=1000, flush_interval=0.5, fork_cycles=10, fork_spacing=2.0)
    trs = traces(30)
    start = time.monotonic()
    for tr in trs[:3]:
        rec.emit(tr)
    _written(rec, 3)
    assert rec.forked == 0 and time.monotonic() - start < 1.5
    start = time.monotonic()
    for tr in trs[3:20]:
        rec.emit(tr)
    _keep_busy(rec, trs[19], 1.5)
    assert rec.written_cycles == 3 and rec.forked == 0
    while rec.forked == 0:
        assert time.monotonic() - start < 30, rec.last_error
        _keep_busy(rec, trs[19], 0.05)
    assert time.monotonic() - start >= 2.0
    for tr in trs[20:]:
        rec.emit(tr)
    start = time.monotonic()
    assert rec.flush(30)
    assert time.monotonic() - start < 1.5 and rec.forked == 1
    rec.close()
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == rec.written_cycles == rec.next_seq - 1


def test_a_quiet_loop_is_written_without_waiting_for_the_spacing():
    """A loop that stops recording cycles (it waits out a backoff, or has nothing left to schedule) has its
    batch forked once no cycle came for ``flush_interval``, not when the oldest record is ``fork_spacing`` old."""
    cluster = Cluster.objects.create(name="quiet")
    rec = Recorder(cluster, batch_size=1000, flush_interval=0.5, fork_cycles=10, fork_spacing=5.0)
    trs = traces(30)
    for tr in trs:
        rec.emit(tr)
    _keep_busy(rec, trs[-1], 1.0)
    assert rec.forked == 0 and rec.written_cycles == 0
    quiet = time.monotonic()
    _written(rec, rec.next_seq - 1)
    assert rec.forked == 1 and time.monotonic() - quiet < 3.0
    rec.close()
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == rec.written_cycles == rec.next_seq - 1


def test_the_parents_session_survives_its_children():
    """Small batches (the thread, on its own session) between big ones (a child each): a child that ended the
    parent's session would make the next small batch fail."""
    cluster = Cluster.objects.create(name="alternating")
    rec = Recorder(cluster, batch_size=1000, flush_interval=0.05, fork_cycles=10)
    trs = traces(30)
    done = 0
    for chunk in (trs[:3], trs[3:15], trs[15:17], trs[17:30], trs[30:]):
        for tr in chunk:
            rec.emit(tr)
        done += len(chunk)
        _written(rec, done)
    rec.close()
    assert rec.forked == 2 and rec.failures == 0
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == len(trs)


def test_a_batch_a_flush_waits_for_is_written_by_the_thread():
    """Whoever flushes waits for the batch (the loop thread is idle meanwhile): no child, no fork."""
    cluster = Cluster.objects.create(name="flushed")
    rec = Recorder(cluster, batch_size=1000, flush_interval=60, fork_cycles=1)
    trs = traces(30)
    for tr in trs:
        rec.emit(tr)
    assert rec.flush(30)
    assert rec.forked == 0 and rec.written_cycles == len(trs) and rec.failures == 0
    rec.close()
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == len(trs)


def test_a_child_that_dies_is_retried(tmp_path, monkeypatch):
    """The first child is killed before it writes (SIGKILL: no report); the parent retries the batch."""
    marker = tmp_path / "killed"
    real = Recorder._write_here

    def dies_first(self, batch, states):
        if os.getpid() != parent and not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        real(self, batch, states)
    parent = os.getpid()
    monkeypatch.setattr(Recorder, "_write_here", dies_first)
    rec, _committed = _record("killed-child", fork_cycles=1)
    assert marker.exists() and rec.failures == 1 and "killed by signal 9" in rec.last_error
    assert len(_rows("killed-child")) == 33


def test_a_childs_errors_reach_the_parent():
    """A fence lost (another loop claimed the cluster) is seen in the parent as Deposed: nothing written."""
    cluster = Cluster.objects.create(name="fenced-child", runner="someone-else")
    rec = Recorder(cluster, batch_size=50, flush_interval=0.05, fork_cycles=1, fence="mine")
    for tr in traces(30):
        rec.emit(tr)
    rec.flush(30)
    rec.close()
    assert rec.deposed and rec.fenced == 33 and rec.forked == 0
    assert not SchedulingCycle.objects.filter(cluster=cluster).exists()


def test_a_bug_in_the_child_is_retried(tmp_path, monkeypatch):
    marker = tmp_path / "failed"
    real = recorder_module.insert_cycles

    def fails_first(rows):
        if not marker.exists():
            marker.touch()
            raise RuntimeError("a bug while writing in the child")
        real(rows)
    monkeypatch.setattr(recorder_module, "insert_cycles", fails_first)
    rec, _committed = _record("bug-child", fork_cycles=1)
    assert rec.failures == 1 and rec.last_error == "a bug while writing in the child"
    assert len(_rows("bug-child")) == 33


@pytest.mark.parametrize("fork_cycles", [0, 1])
def test_a_binding_reports_the_nodes_internal_ip_as_the_pods_host_ip(fork_cycles):
    """The simulated kubelet's status of a bound pod, written by the thread or by a child."""
    cluster = Cluster.objects.create(name=f"host-ip-{fork_cycles}")
    Node.objects.bulk_create([
        Node(cluster=cluster, name="with-ip", raw={"metadata": {"name": "with-ip"}, "status": {"addresses": [
            {"type": "Hostname", "address": "with-ip"}, {"type": "InternalIP", "address": "192.0.2.7"}]}}),
        Node(cluster=cluster, name="without", raw={"metadata": {"name": "without"}})])
    Pod.objects.bulk_create([Pod(cluster=cluster, uid=f"p-{i}", namespace="default", name=f"p-{i}",
                                 raw={"metadata": {"name": f"p-{i}", "uid": f"p-{i}"}}) for i in range(2)])
    rec = Recorder(cluster, batch_size=10_000, flush_interval=0.05, fork_cycles=fork_cycles)
    seq = rec.record_trace(traces()[0])
    rec.record_binding("p-0", "with-ip", seq)
    rec.record_binding("p-1", "without", seq)
    _written(rec, 1)
    assert rec.close(20) and rec.failures == 0 and rec.forked == fork_cycles
    status = {p.uid: p.raw["status"] for p in Pod.objects.filter(cluster=cluster)}
    assert status["p-0"]["hostIP"] == "192.0.2.7" and status["p-0"]["phase"] == "Running"
    assert status["p-1"]["hostIP"] == objectstore.node_ip(None, "without")


def test_cycles_written_again_are_not_duplicated():
    """A batch retried after its commit's acknowledgement was lost: the rows already in are skipped, the others
    inserted (the direct COPY fails on the first duplicate and the batch takes the ON CONFLICT path)."""
    from django.db import transaction

    from dashboard.services.tracecodec import trace_fields
    cluster = Cluster.objects.create(name="again")
    rows = [dict(trace_fields(tr), cluster_id=cluster.id, seq=seq) for seq, tr in enumerate(traces(), 1)]
    with transaction.atomic():
        recorder_module.insert_cycles(rows[:5])
    with transaction.atomic():
        recorder_module.insert_cycles(rows)
    assert list(SchedulingCycle.objects.filter(cluster=cluster).order_by("seq").values_list("seq", flat=True)) == \
        list(range(1, len(rows) + 1))
