"""A cycle kube evaluated on part of a big cluster, recomputed over every node on demand (page and API)."""
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
    assert full["seq"] == second.seq and full["nodes"] == NODES and full["profile"] == "kube's default configuration"
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


def test_pod_page_offers_and_shows_the_full_matrix(client, big):
    second = SchedulingCycle.objects.get(cluster=big, pod_name="second")
    page = client.get(f"/clusters/big/pods/default/second/?cycle={second.seq}").content.decode()
    assert f"kube's search visited 101 of {NODES} nodes" in page
    assert f"?cycle={second.seq}&amp;full=1" in page
    full = client.get(f"/clusters/big/pods/default/second/?cycle={second.seq}&full=1").content.decode()
    assert f"Recomputed over all {NODES} nodes" in full and "the 1 pod bound up to it" in full
    assert f"{NODES} nodes in" in full  # the Filter header counts every node now
    assert 'name="full" value="1"' in full  # the matrix filters keep the full view


def test_a_deleted_pod_cannot_be_recomputed(api, client, big):
    third = SchedulingCycle.objects.get(cluster=big, pod_name="third")
    Pod.objects.filter(cluster=big, name="third").delete()
    r = api.get(f"/api/clusters/big/cycles/{third.seq}/full-matrix/")
    assert r.status_code == 409 and "default/third no longer exists" in r.json()["detail"]
    page = client.get(f"/clusters/big/pods/default/third/?cycle={third.seq}&full=1").content.decode()
    assert "no longer exists" in page


def test_small_clusters_need_no_recompute(client, api):
    load_cluster(api, small_scenario(2), steps=2)
    page = client.get("/clusters/small/pods/default/web-0/").content.decode()
    assert "Evaluate all" not in page and "search visited" not in page


def test_clusters_above_the_trace_limit_record_what_kube_visited(api, settings):
    """Above SCHEDSCOPE_TRACE_ALL_FILTERS_MAX_NODES the loop runs kube's search as is (no per-plugin verdict on every
    node); at or below it, every node gets every Filter plugin's verdict. The full matrix is there on demand."""
    settings.SCHEDSCOPE = dict(settings.SCHEDSCOPE, TRACE_ALL_FILTERS_MAX_NODES=NODES - 1)
    cluster = load_cluster(api, big_scenario(), steps=3)
    second = SchedulingCycle.objects.get(cluster=cluster, pod_name="second")
    m = second.matrix
    assert second.result == "scheduled" and m["visited"] == 101
    assert len(m["nodes"]) == 101 and not any(m["filter"])  # only the visited nodes, no per-plugin cells
    full = api.get(f"/api/clusters/big/cycles/{second.seq}/full-matrix/").json()
    assert len(full["matrix"]["nodes"]) == NODES and all(full["matrix"]["filter"])


def test_clusters_up_to_the_trace_limit_record_every_plugin_on_every_node(big):
    m = SchedulingCycle.objects.get(cluster=big, pod_name="second").matrix
    assert len(m["nodes"]) == NODES and all(m["filter"])
