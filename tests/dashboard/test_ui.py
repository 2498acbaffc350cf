"""The pages behind the why-pending explorer (server side, PostgreSQL): the pod page's timeline, paged and
filtered matrices, fix suggestions and diff; the pending list's filters; the event timeline."""
from __future__ import annotations

import pytest

from dashboard.models import SchedulingCycle
from dashboard.services import traceview
from dashboard.services.runner import Runner

from .conftest import load_cluster, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def loaded(api):
    return load_cluster(api, small_scenario(), steps=20)


def test_unschedulable_cycle_stores_verified_suggestions(loaded, client):
    c = SchedulingCycle.objects.filter(cluster=loaded, pod_name="wants-ssd").order_by("-seq").first()
    kinds = {s["kind"]: s for s in c.matrix["suggestions"]}
    assert kinds, c.matrix.get("suggestions")
    assert all(s["text"] for s in c.matrix["suggestions"])
    assert any(s["num_fits"] > 0 for s in c.matrix["suggestions"])
    html = client.get("/clusters/small/pods/default/wants-ssd/").content.decode()
    assert 'id="suggestions"' in html and "What would fix it" in html
    assert "disk" in html
    big = SchedulingCycle.objects.filter(cluster=loaded, pod_name="too-big").order_by("-seq").first()
    assert any("cpu" in s["text"] for s in big.matrix["suggestions"])
    ok = SchedulingCycle.objects.filter(cluster=loaded, result="scheduled").first()
    assert "suggestions" not in ok.matrix


def test_filter_matrix_server_side_filter_sort_and_paging(loaded):
    c = SchedulingCycle.objects.filter(cluster=loaded, pod_name="wants-ssd").order_by("-seq").first()
    full = traceview.filter_matrix(c.matrix, group=False)
    assert full["total"] == 6 and full["nodes"] == 6
    grouped = traceview.filter_matrix(c.matrix, group=True, sort="count")
    assert grouped["nodes"] == 6 and grouped["total"] < 6
    assert len(grouped["rows"][0]["nodes"]) >= len(grouped["rows"][-1]["nodes"])
    one = traceview.filter_matrix(c.matrix, group=False, q="gpu")
    assert [r["nodes"] for r in one["rows"]] == [["gpu-0"]]
    paged = traceview.filter_matrix(c.matrix, group=False, per_page=4, page=2)
    assert paged["pages"] == 2 and len(paged["rows"]) == 2 and paged["page"] == 2
    by_plugin = traceview.filter_matrix(c.matrix, group=False, plugin="TaintToleration")
    assert [r["nodes"][0] for r in by_plugin["rows"]] == ["gpu-0"]
    assert traceview.filter_matrix(c.matrix, show="feasible")["total"] == 0


def test_score_table_ranks_and_pages(loaded):
    c = SchedulingCycle.objects.filter(cluster=loaded, result="scheduled").order_by("seq").first()
    t = traceview.score_table(c.matrix, c.node, per_page=2)
    assert [r["rank"] for r in t["rows"]] == [1, 2] and t["pages"] == -(-t["total"] // 2)
    assert t["rows"][0]["total"] >= t["rows"][1]["total"]
    assert traceview.score_table(c.matrix, c.node, per_page=2, page=2)["rows"][0]["rank"] == 3


def test_pod_page_timeline_and_diff(loaded, client, api):
    cluster = loaded
    Runner(cluster.id, steps=0).run()
    node = {"metadata": {"name": "ssd-1", "labels": {"disk": "ssd", "topology.kubernetes.io/zone": "a"}},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
    assert api.post("/api/clusters/small/nodes/", {"manifest": node}, format="json").status_code == 201
    assert Runner(cluster.id, steps=20).run()
    cycles = list(SchedulingCycle.objects.filter(cluster=cluster, pod_name="wants-ssd").order_by("seq"))
    assert len(cycles) >= 2 and cycles[-1].result == "scheduled", [(c.seq, c.result) for c in cycles]
    first, last = cycles[0], cycles[-1]
    d = traceview.diff_cycles(first, last)
    assert ("result", "unschedulable", "scheduled") in d["fields"]
    assert "ssd-1" in d["added"]
    html = client.get(f"/clusters/small/pods/default/wants-ssd/?cycle={last.seq}&diff={first.seq}").content.decode()
    assert 'id="diff"' in html and "ssd-1" in html
    assert "waited" in html and "unschedulablePods" in html
    html = client.get(f"/clusters/small/pods/default/wants-ssd/?cycle={first.seq}&nq=gpu&group=0").content.decode()
    assert "gpu-0" in html and ">n-1<" not in html


def test_pages_carry_the_latest_cycle_for_the_live_stream(loaded, client):
    """live.js refetches the page when the websocket's hello reports a later cycle than the page showed."""
    last = SchedulingCycle.objects.filter(cluster=loaded).order_by("-seq").first().seq
    for path in ("/clusters/small/", "/clusters/small/pending/", "/clusters/small/pods/default/web-0/"):
        assert f'data-last-cycle="{last}"' in client.get(path).content.decode()


def test_the_queue_chart_breaks_where_the_loop_took_no_snapshot(loaded, client):
    """Snapshots come every QUEUE_SNAPSHOT_SECONDS (5 s) while the loop runs; across a longer silence (the loop
    stopped or down) the overview's chart data carry an entry of nulls, so the lines break there."""
    import json
    import re
    from datetime import datetime, timedelta, timezone

    from dashboard.models import QueueSnapshot

    QueueSnapshot.objects.filter(cluster=loaded).delete()
    start = datetime(2026, 12, 6, 12, 0, tzinfo=timezone.utc)
    for offset in (0, 5, 10, 15, 920, 925):   # 15 minutes without a snapshot after the fourth
        QueueSnapshot.objects.create(cluster=loaded, time=start + timedelta(seconds=offset), active=offset,
                                     unschedulable=1, bound=2, cycles_per_second=1.0, p50_ms=0.5, p99_ms=1.0)
    body = client.get("/clusters/small/").content.decode()
    data = json.loads(re.search(r'<script id="snapshot-data" type="application/json">(.*?)</script>', body,
                                re.DOTALL).group(1))
    assert [d["active"] for d in data] == [0, 5, 10, 15, None, 920, 925]
    assert data[4]["t"] == (start + timedelta(seconds=467.5)).isoformat()
    assert all(data[4][key] is None for key in ("backoff", "unschedulable", "rate", "p50", "p99"))


def test_pending_filters_and_events_page(loaded, client):
    r = client.get("/clusters/small/pending/?attempts=1&sort=attempts")
    assert r.status_code == 200 and "too-big" in r.content.decode()
    r = client.get("/clusters/small/pending/?labels=app=nothing")
    assert "No pending pod matches." in r.content.decode()
    r = client.get("/clusters/small/pending/?namespace=default&priority=0&age=0")
    assert "wants-ssd" in r.content.decode()
    r = client.get("/clusters/small/events/?reason=FailedScheduling")
    body = r.content.decode()
    assert r.status_code == 200 and "FailedScheduling" in body and "event-chart-data" in body
    r = client.get("/clusters/small/events/?pod=default/web&window=15")
    assert "Scheduled" in r.content.decode()


def test_backoff_formula():
    assert [traceview.backoff_seconds(n) for n in (1, 2, 3, 4, 5, 9)] == [1, 2, 4, 8, 10, 10]


def test_nodes_page_and_what_a_node_rejects(loaded, client):
    body = client.get("/clusters/small/nodes/").content.decode()
    assert 'id="node-table"' in body and "gpu-0" in body
    body = client.get("/clusters/small/nodes/n-1/").content.decode()
    assert "default/wants-ssd" in body and "NodeAffinity" in body and "default/too-big" in body
    body = client.get("/clusters/small/nodes/gpu-0/").content.decode()
    assert "TaintToleration" in body


@pytest.fixture
def explained(monkeypatch) -> list:
    """The names of the pods the engine runs scheduler_core.explain for, in order; an explanation shared by
    the pods of a template is never refreshed (by default, one computed on another cluster state is, once 20
    times its cost has passed: with a loaded machine's timing, the count would vary)."""
    from dashboard.services import engine as engine_module
    monkeypatch.setattr(engine_module, "REFRESH_FACTOR", float("inf"))
    calls = []
    real = engine_module.explain

    def counting(fwk, snapshot, pod, trace=None, **kw):
        calls.append(pod.name)
        return real(fwk, snapshot, pod, trace, **kw)
    monkeypatch.setattr(engine_module, "explain", counting)
    return calls


def test_replicas_of_one_template_share_one_explanation(api, explained):
    """Five pods with the same spec and labels failing alike are explained once; a pod of another spec on its own."""
    scenario = small_scenario(0)
    scenario["name"] = "replicas"
    big = next(p for p in scenario["pending"] if p["metadata"]["name"] == "too-big")
    for i in range(5):
        scenario["pending"].append(dict(big, metadata=dict(big["metadata"], name=f"replica-{i}", uid=f"replica-{i}")))
    cluster = load_cluster(api, scenario, steps=40)
    replicas = ["too-big"] + [f"replica-{i}" for i in range(5)]
    assert sum(1 for name in explained if name in replicas) == 1, explained
    assert {"wants-ssd", "also-big"} <= set(explained)
    stored = {c.pod_name: c.matrix["suggestions"] for c in SchedulingCycle.objects.filter(
        cluster=cluster, pod_name__in=replicas, result="unschedulable")}
    assert set(stored) == set(replicas) and all(s == stored["too-big"] and s for s in stored.values())


def test_replicas_that_preempt_each_get_their_own_preemption_diagnosis(api, explained):
    """Replicas of one template share the explanation of their spec, but what each attempt's preemption did is
    its own: every replica's suggestions name the node it was nominated to and the pods evicted there (all of
    them named the first replica's node before)."""
    def node(name):
        alloc = {"cpu": "2", "memory": "8Gi", "pods": "110"}
        return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"capacity": alloc, "allocatable": alloc}}

    def pod(name, priority, node_name=None):
        spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}], "priority": priority}
        if node_name:
            spec["nodeName"] = node_name
        return {"metadata": {"name": name, "namespace": "default", "uid": name, "labels": {"app": "big"}},
                "spec": spec}
    scenario = {"name": "preempting", "nodes": [node(f"n-{i}") for i in range(3)],
                "pods": [pod(f"low-{i}", 0, f"n-{i}") for i in range(3)],
                "pending": [pod(f"big-{i}", 100) for i in range(3)]}
    cluster = load_cluster(api, scenario, steps=3)
    cycles = list(SchedulingCycle.objects.filter(cluster=cluster, pod_name__startswith="big-", result="unschedulable"))
    assert len(cycles) == 3 and len(explained) == 1, explained
    nominated = set()
    for c in cycles:
        node = c.preemption["nominated_node"]
        nominated.add(node)
        diagnosis = [s for s in c.matrix["suggestions"] if s["kind"] == "preemption"]
        assert [s["nodes"] for s in diagnosis] == [[node]], (c.pod_name, c.matrix["suggestions"])
        assert diagnosis[0]["change"]["evict"] == c.preemption["victims"] and diagnosis[0]["fits"] == [node]
    assert nominated == {"n-0", "n-1", "n-2"}


def test_a_node_deleted_between_the_nodes_page_reads_is_left_out():
    from dashboard.models import Cluster, Node
    from dashboard.services import clusters as svc
    from dashboard.services import queries
    cluster = Cluster.objects.create(name="racy")
    svc.load_scenario(cluster, small_scenario(2), "racy")
    rows = queries._usage_rows(cluster, "name", "")
    gone = rows[1]["name"]
    Node.objects.filter(pk=rows[1]["pk"]).delete()   # deleted by another writer after the first read
    shown = queries._with_nodes(rows)
    assert gone not in [r["name"] for r in shown] and len(shown) == len(rows) and len(shown) >= 1
    assert all(r["node"].name == r["name"] for r in shown)


def test_the_attempts_of_a_pod_created_again_under_its_name_start_without_a_wait():
    """A name's cycles can belong to a deleted pod and to the pod created after it: the new pod's first attempt
    has no wait since the old pod's last one (the page said "waited 470.9 s in" after a bound pod)."""
    from datetime import datetime, timedelta, timezone
    from types import SimpleNamespace

    t0 = datetime(2026, 12, 6, 17, 0, tzinfo=timezone.utc)

    def cycle(seq, uid, result, seconds, attempt):
        return SimpleNamespace(seq=seq, pod_uid=uid, result=result, started=t0 + timedelta(seconds=seconds),
                               attempt=attempt, failing_plugins=["NodeResourcesFit"])
    cycles = [cycle(1, "old", "unschedulable", 0, 1), cycle(2, "old", "scheduled", 1.5, 2),
              cycle(3, "new", "unschedulable", 470, 1), cycle(4, "new", "scheduled", 472, 2)]
    got = [(t["cycle"].seq, t["waited"], t["after"], t["why"].split(";")[0])
           for t in traceview.attempt_timeline(cycles)]
    assert got == [
        (1, None, "activeQ", "first attempt after the pod was created"),
        (2, 1.5, "unschedulablePods → backoffQ → activeQ", "rejected by NodeResourcesFit"),
        (3, None, "activeQ", "first attempt after the pod was created (the attempts below are an earlier pod of "
                             "this name)"),
        (4, 2.0, "unschedulablePods → backoffQ → activeQ", "rejected by NodeResourcesFit"),
    ]


def _filling_scenario() -> dict:
    """Three empty 4-cpu nodes, a 6-cpu pod tried first, then three 3600m pods that fill them."""
    def node(name):
        alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
        return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"capacity": alloc, "allocatable": alloc}}

    def pod(name, cpu):
        return {"metadata": {"name": name, "namespace": "default", "uid": name},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}
    return {"name": "filling", "nodes": [node(f"n-{i}") for i in range(3)], "pods": [],
            "pending": [pod("big", "6")] + [pod(f"hog-{i}", "3600m") for i in range(3)]}


def _attempts_of_big(api, refresh_factor: float, monkeypatch):
    """The filling cluster's 6-cpu pod tried on the empty nodes, then again by the same loop after the hogs
    filled them and one of them was deleted (a pod deletion requeues it): its two unschedulable cycles."""
    from dashboard.models import Cluster
    from dashboard.services import engine as engine_module
    from .conftest import wait_for
    from .test_real_cluster import LoopThread
    monkeypatch.setattr(engine_module, "REFRESH_FACTOR", refresh_factor)
    cluster = load_cluster(api, _filling_scenario())
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.RUNNING)
    loop = LoopThread(cluster)
    cycles = SchedulingCycle.objects.filter(cluster=cluster, pod_name="big").order_by("seq")
    try:
        wait_for(lambda: SchedulingCycle.objects.filter(cluster=cluster, pod_name="hog-2").exists()
                 and cycles.exists(), 30, what="the first attempt and the hogs bound")
        assert api.delete(f"/api/clusters/{cluster.name}/pods/default/hog-2/").status_code in (200, 204)
        wait_for(lambda: cycles.count() == 2, 30, what="the second attempt")
    finally:
        loop.stop()
    cycles = list(cycles)
    assert [c.attempt for c in cycles] == [1, 2] and {c.result for c in cycles} == {"unschedulable"}
    return cluster, cycles


def _fits(cycle) -> dict:
    return {s["text"]: s["num_fits"] for s in cycle.matrix["suggestions"] if s["kind"] == "request"}


def test_a_later_attempt_on_a_changed_cluster_gets_advice_computed_on_it(api, client, monkeypatch):
    """What would fix it is computed again for an attempt whose cluster changed (the message and the node count
    are the same): attempt 2 is not told what fitted the empty nodes of attempt 1."""
    cluster, (first, second) = _attempts_of_big(api, 0.0, monkeypatch)
    assert _fits(first) == {"lowering the pod's cpu request from 6 to 4 would fit 3 nodes (n-0, n-1 and n-2)": 3}
    assert _fits(second) == {"lowering the pod's cpu request from 6 to 4 would fit 1 node (n-2)": 1,
                             "lowering the pod's cpu request from 6 to 400m would fit 3 nodes (n-0, n-1 and n-2)": 3}
    assert "suggestions_basis" not in first.matrix and "suggestions_basis" not in second.matrix
    page = client.get(f"/clusters/{cluster.name}/pods/default/big/?cycle={second.seq}").content.decode()
    assert 'id="suggestions"' in page and 'id="suggestions-basis"' not in page


def test_advice_shared_from_another_cluster_state_names_that_state(api, client, monkeypatch):
    """Not refreshed (its refresh not yet due), the advice of attempt 1 shown for attempt 2 says which attempt's
    cluster it was verified on."""
    cluster, (first, second) = _attempts_of_big(api, float("inf"), monkeypatch)
    assert _fits(second) == _fits(first)
    assert second.matrix["suggestions_basis"]["pod"] == "default/big"
    assert second.matrix["suggestions_basis"]["attempt"] == 1
    page = client.get(f"/clusters/{cluster.name}/pods/default/big/?cycle={second.seq}").content.decode()
    assert 'id="suggestions-basis"' in page and "at attempt 1 of default/big" in page
    page = client.get(f"/clusters/{cluster.name}/pods/default/big/?cycle={first.seq}").content.decode()
    assert 'id="suggestions"' in page and 'id="suggestions-basis"' not in page


def test_a_pod_no_profile_serves_says_so_on_every_page(api, client):
    """A pod whose schedulerName no profile of the cluster serves is never tried: the pending list, the pod page
    and the queue counts say so instead of "active · not tried yet"; the loop's own counts agree."""
    from dashboard.services import queries
    scenario = small_scenario(2)
    scenario["pending"].append({"metadata": {"name": "nobodys", "namespace": "default", "uid": "nobodys"},
                                "spec": {"schedulerName": "nobody-scheduler",
                                         "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})
    cluster = load_cluster(api, scenario, steps=20)
    counts = queries.queue_counts(cluster)
    assert counts["unserved"] == 1 and counts == dict(queries.queue_counts(cluster.id))
    runner = Runner(cluster.id, steps=1)
    assert runner.run()
    runner.engine.sync_queue_states()
    assert runner.engine.queue_counts()["unserved"] == 1
    pending = client.get("/clusters/small/pending/").content.decode()
    row = pending[pending.index('data-pod="default/nobodys"'):]
    row = row[:row.index("</tr>")]
    assert "no profile serves schedulerName <b class=\"mono\">nobody-scheduler</b>" in row and "not tried" not in row
    pod = client.get("/clusters/small/pods/default/nobodys/").content.decode()
    assert 'id="unserved"' in pod and "in no queue" in pod and "Now in" not in pod
    assert 'id="unserved-card"' in client.get("/clusters/small/").content.decode()
    served = client.get("/clusters/small/pods/default/too-big/").content.decode()
    assert 'id="unserved"' not in served
