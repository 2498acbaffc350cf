"""A cycle kube evaluated on part of a big cluster: every Filter plugin's verdict on every node is recorded
(full trace); a cycle recorded before that (only the nodes kube visited) is recomputed over every node on demand
(page and API)."""
from __future__ import annotations

import pytest

from dashboard.models import Pod, SchedulingCycle

from .conftest import load_cluster, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)

NODES = 150  # kube's numFeasibleNodesToFind on 150 nodes is 100: a cycle visits about two thirds of them


def big_scenario() -> dict:
    def node(i):
        alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
        return {"metadata": {"name": f"n-{i:03d}", "labels": {"kubernetes.io/hostname": f"n-{i:03d}"}},
                "status": {"capacity": alloc, "allocatable": alloc}}

    def pod(name, cpu):
        spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
        return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}

    return {"name": "big", "nodes": [node(i) for i in range(NODES)], "pods": [],
            "pending": [pod("first", "2"), pod("second", "1"), pod("third", "1")]}


@pytest.fixture
def big(api):
    cluster = load_cluster(api, big_scenario(), steps=3)
    assert SchedulingCycle.objects.filter(cluster=cluster, result="scheduled").count() == 3
    return cluster


def as_older_row(cycle: SchedulingCycle) -> None:
    """Store the cycle as rows recorded before the full trace were: only the nodes kube's search visited,
    without per-plugin cells."""
    m = dict(cycle.matrix)
    n = m["visited"]
    m.update(nodes=m["nodes"][:n], filter=[None] * n, final=m["final"][:n], stopped=m["stopped"][:n])
    SchedulingCycle.objects.filter(pk=cycle.pk).update(matrix=m)


def raw_scores(matrix) -> dict:
    sc = matrix["score"]
    return {(p, node): sc["raw"][i][j] for i, p in enumerate(sc["plugins"]) for j, node in enumerate(sc["nodes"])}


def test_api_recomputes_every_node_on_the_state_of_that_cycle(api, big):
    first = SchedulingCycle.objects.get(cluster=big, pod_name="first")
    second = SchedulingCycle.objects.get(cluster=big, pod_name="second")
    assert second.seq > first.seq
    recorded = second.matrix
    assert recorded["visited"] == 101 and second.num_nodes == NODES  # 100 feasible nodes and one more
    assert len(recorded["score"]["nodes"]) == 100

    r = api.get(f"/api/clusters/big/cycles/{second.seq}/full-matrix/")
    assert r.status_code == 200, r.content
    full = r.json()
    assert full["seq"] == second.seq and full["nodes"] == NODES
    assert full["profile"] == "kube's default configuration at Kubernetes 1.36"
    assert len(full["matrix"]["nodes"]) == NODES and len(full["matrix"]["score"]["nodes"]) == NODES
    # "first" was bound before this cycle, "third" after it: only "first" is on its node
    assert full["bound_pods"] == 1
    # every node kube scored then has the same raw scores now: the state is the cycle's
    again = raw_scores(full["matrix"])
    for key, value in raw_scores(recorded).items():
        assert again[key] == value, key
    assert full["node"] and full["message"] == ""

    before = api.get(f"/api/clusters/big/cycles/{first.seq}/full-matrix/").json()
    assert before["bound_pods"] == 0


def test_pod_page_shows_the_recorded_full_matrix(client, big):
    second = SchedulingCycle.objects.get(cluster=big, pod_name="second")
    page = client.get(f"/clusters/big/pods/default/second/?cycle={second.seq}").content.decode()
    assert f"kube's search visited 101 of {NODES} nodes" in page
    assert f"every Filter plugin's verdict on all {NODES} nodes was recorded" in page
    assert "full=1" not in page and f"{NODES} nodes in" in page
    one_per_node = client.get(f"/clusters/big/pods/default/second/?cycle={second.seq}&group=0&show=notrun").content
    assert one_per_node.decode().count('<span class="muted">not evaluated</span>') == NODES - 101


def test_pod_page_offers_and_shows_the_full_matrix_of_an_older_row(client, big):
    second = SchedulingCycle.objects.get(cluster=big, pod_name="second")
    as_older_row(second)
    page = client.get(f"/clusters/big/pods/default/second/?cycle={second.seq}").content.decode()
    assert f"kube's search visited 101 of {NODES} nodes" in page
    assert f"?cycle={second.seq}&amp;full=1" in page
    full = client.get(f"/clusters/big/pods/default/second/?cycle={second.seq}&full=1").content.decode()
    assert f"Recomputed over all {NODES} nodes" in full and "the 1 pod bound up to it" in full
    assert f"{NODES} nodes in" in full  # the Filter header counts every node now
    assert 'name="full" value="1"' in full  # the matrix filters keep the full view


def test_a_deleted_pod_cannot_be_recomputed(api, client, big):
    third = SchedulingCycle.objects.get(cluster=big, pod_name="third")
    as_older_row(third)
    Pod.objects.filter(cluster=big, name="third").delete()
    r = api.get(f"/api/clusters/big/cycles/{third.seq}/full-matrix/")
    assert r.status_code == 409 and "default/third no longer exists" in r.json()["detail"]
    page = client.get(f"/clusters/big/pods/default/third/?cycle={third.seq}&full=1").content.decode()
    assert "no longer exists" in page


def test_small_clusters_need_no_recompute(client, api):
    load_cluster(api, small_scenario(2), steps=2)
    page = client.get("/clusters/small/pods/default/web-0/").content.decode()
    assert "Evaluate all" not in page and "search visited" not in page


def test_every_cycle_records_every_plugin_on_every_node(big):
    m = SchedulingCycle.objects.get(cluster=big, pod_name="second").matrix
    assert m["visited"] == 101 and len(m["nodes"]) == NODES and all(m["filter"])
