"""Every writer of one cluster's rows at once, for a minute (SCHEDSCOPE_WRITERS_SECONDS): scenario loads, the
workload generator's pod inserts, the REST API's node and pod changes, the recorder's bindings (the scheduler's
and manual ones), deletions and pod states, a cluster-row update and a deletion of a second cluster. They take
the cluster's row first (``services.rowlock``), so PostgreSQL detects no deadlock, no writer fails and every
record the recorder was given is committed. Before the lock order, a scenario load (pods deleted, then the
cluster's version bumped) against the recorder (cluster locked, then pods deleted) was DeadlockDetected."""
from __future__ import annotations

import os
import threading
import time
import uuid

import pytest
from django.db import connection

from dashboard.models import Cluster, Pod, SchedulingEvent
from dashboard.services import clusters as svc
from dashboard.services import objectstore
from dashboard.services.recorder import Recorder
from dashboard.services.workload import pod_manifest

from .conftest import api_client, make_user, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)

SECONDS = float(os.environ.get("SCHEDSCOPE_WRITERS_SECONDS", "60"))


def _deadlocks() -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_stat_clear_snapshot()")
        cur.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cur.fetchone()[0]


def test_all_writers_of_one_cluster_never_deadlock():
    cluster = Cluster.objects.create(name="writers", runner="loop-token")
    svc.load_scenario(cluster, small_scenario(40), "writers")
    editor = make_user("writer", "editor")
    recorder = Recorder(cluster, fence="loop-token", flush_interval=0.01, batch_size=50, observe=False)
    deadlocks_before = _deadlocks()
    errors, counts, stop = [], {}, threading.Event()

    def writer(name):
        def wrap(body):
            def run():
                n = 0
                try:
                    while not stop.is_set():
                        body(n)
                        n += 1
                except Exception as err:  # every failure is the test's finding
                    errors.append(f"{name}: {type(err).__name__}: {err}")
                finally:
                    counts[name] = n
                    connection.close()
            return threading.Thread(target=run, name=name)
        return wrap

    @writer("scenario loads")
    def loads(n):
        svc.load_scenario(cluster, small_scenario(40), f"load-{n}")

    @writer("workload generator")
    def workload(n):
        raws = [pod_manifest(f"gen-{uuid.uuid4().hex[:10]}", "demo", "web", "100m", "64Mi", {}) for _ in range(5)]
        svc.insert_pods(cluster, raws)
        for raw in raws[:3]:   # the generator's deletions go through the loop's recorder
            recorder.record_deletion(raw["metadata"]["uid"])

    api = api_client(editor)

    @writer("REST API")
    def rest(n):
        node = {"metadata": {"name": f"api-{n}", "labels": {"topology.kubernetes.io/zone": "a"}},
                "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
        pod = {"metadata": {"name": f"api-{n}", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "c:1"}]}}
        codes = [api.post("/api/clusters/writers/nodes/", {"manifest": node}, format="json").status_code,
                 api.post("/api/clusters/writers/pods/", {"manifest": pod}, format="json").status_code,
                 # a scenario load may have replaced them meanwhile: 404 is an answer, not an error
                 api.delete(f"/api/clusters/writers/pods/default/api-{n}/").status_code in (204, 404),
                 api.delete(f"/api/clusters/writers/nodes/api-{n}/").status_code in (204, 404)]
        assert codes == [201, 201, True, True], codes

    @writer("bindings")
    def bindings(n):
        pending = list(Pod.objects.filter(cluster=cluster, node_name="").values_list("uid", flat=True)[:20])
        for i, uid in enumerate(pending):
            if i % 2:
                recorder.record_binding(uid, "n-1", cycle_seq=n, attempts=1)   # the scheduler's
            elif i % 4:
                recorder.record_binding(uid, "n-2", attempts=None)             # a manual one, through the loop
            else:
                recorder.record_pod_state(uid, queue=Pod.BACKOFF, attempts=n, reason="busy")
        recorder.record_event("Writers", f"round {n}")
        time.sleep(0.01)

    @writer("cluster row")
    def cluster_row(n):
        Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.PAUSED if n % 2 else Cluster.STOPPED)
        other = Cluster.objects.create(name=f"gone-{n}")
        svc.load_scenario(other, small_scenario(2), "gone")
        svc.delete_cluster(other)

    threads = [loads, workload, rest, bindings, cluster_row]
    for t in threads:
        t.start()
    time.sleep(SECONDS)
    stop.set()
    for t in threads:
        t.join(60)
    assert recorder.close(60)
    time.sleep(1)   # statistics reach pg_stat_database when a backend's transaction ends, within a second
    assert errors == []
    assert _deadlocks() - deadlocks_before == 0
    assert (recorder.failures, recorder.rejected, recorder.overflow, recorder.fenced) == (0, 0, 0, 0), \
        recorder.last_error
    assert min(counts.values()) > 0, counts
    # kube's event series: a repeat counts on the series' first Event (series.count) instead of adding a row
    writers = SchedulingEvent.objects.filter(cluster=cluster, reason="Writers")
    assert sum(e.series_count or 1 for e in writers) == counts["bindings"]
    assert objectstore.pod_count(cluster.pk) == Pod.objects.filter(cluster=cluster).count()   # the triggers' count
