"""Scheduler cache: the cases of kube's cache_test.go and node_tree_test.go, plus snapshot consistency."""
import random

import pytest

from scheduler_core.cache import Cache, CacheError, NodeTree, zone_key
from scheduler_core.clock import FakeClock
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.snapshot import Snapshot
from scheduler_core.scheduler import _assumed_copy
from tests.core.loop_fixtures import node, pod, required_pod_affinity

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def zoned(name, zone=None, region=None, **kw):
    labels = {}
    if zone is not None:
        labels[ZONE] = zone
    if region is not None:
        labels[REGION] = region
    return node(name, labels=labels, **kw)


def test_zone_key():
    assert zone_key(node("a")) == ""
    assert zone_key(zoned("a", zone="z1")) == ":\x00:z1"
    assert zone_key(zoned("a", zone="z1", region="r1")) == "r1:\x00:z1"
    beta = node("b", labels={"failure-domain.beta.kubernetes.io/zone": "old", ZONE: "new"})
    assert zone_key(beta) == ":\x00:old"


def test_node_tree_interleaves_zones_in_insertion_order():
    t = NodeTree()
    for name, zone in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("a3", "a"), ("c1", "c"), ("b2", "b")]:
        t.add_node(zoned(name, zone=zone))
    assert t.list() == ["a1", "b1", "c1", "a2", "b2", "a3"]
    t.add_node(zoned("a1", zone="a"))  # duplicate: ignored
    assert t.num_nodes == 6
    t.remove_node(zoned("b1", zone="b"))
    t.remove_node(zoned("b2", zone="b"))
    assert t.zones == [":\x00:a", ":\x00:c"]
    t.add_node(zoned("b3", zone="b"))  # the zone comes back last
    assert t.list() == ["a1", "c1", "b3", "a2", "a3"]
    with pytest.raises(CacheError, match='node "zz" in group'):
        t.remove_node(zoned("zz", zone="a"))


def test_node_tree_update_moves_node_between_zones():
    t = NodeTree()
    t.add_node(zoned("n1", zone="a"))
    t.add_node(zoned("n2", zone="a"))
    t.update_node(zoned("n1", zone="a"), zoned("n1", zone="b"))
    assert t.list() == ["n2", "n1"] and t.num_nodes == 2
    t.update_node(zoned("n2", zone="a"), zoned("n2", zone="a"))
    assert t.list() == ["n2", "n1"]


def test_add_pod_aggregates_and_generation():
    c = Cache()
    ni = c.add_node(node("n1"))
    g0 = ni.generation
    c.add_pod(pod("p1", cpu="500m", memory="1Gi", node_name="n1", ports=[8080]))
    c.add_pod(pod("p2", cpu="250m", node_name="n1"))
    assert ni.generation > g0
    assert ni.requested["cpu"] == 750 and ni.requested["memory"] == 1024 ** 3 + 100 * 1024 ** 2
    assert len(ni.pods) == 2 and ni.used_ports
    c.remove_pod(pod("p1", cpu="500m", memory="1Gi", node_name="n1", ports=[8080]))
    assert ni.requested["cpu"] == 250 and not ni.used_ports
    assert c.pod_count() == 1


def test_assume_confirm_forget():
    c = Cache()
    c.add_node(node("n1"))
    p = pod("p")
    assumed = _assumed_copy(p, "n1")
    c.assume_pod(assumed)
    assert c.is_assumed_pod(p) and c.node_info("n1").requested["cpu"] == 100
    with pytest.raises(CacheError, match="is in the cache, so can't be assumed"):
        c.assume_pod(assumed)
    c.forget_pod(assumed)
    assert not c.is_assumed_pod(p) and c.node_info("n1").requested.get("cpu", 0) == 0
    with pytest.raises(CacheError, match="wasn't assumed so cannot be forgotten"):
        c.forget_pod(assumed)
    c.assume_pod(assumed)
    c.add_pod(pod("p", node_name="n1"))  # the informer confirms the binding
    assert not c.is_assumed_pod(p) and c.get_pod(p).node_name == "n1"
    with pytest.raises(CacheError, match="was already in added state"):
        c.add_pod(pod("p", node_name="n1"))
    with pytest.raises(CacheError, match="wasn't assumed"):
        c.forget_pod(_assumed_copy(p, "n1"))


def test_forget_on_wrong_node_is_an_error():
    c = Cache()
    c.add_node(node("n1"))
    c.add_node(node("n2"))
    c.assume_pod(_assumed_copy(pod("p"), "n1"))
    with pytest.raises(CacheError, match="was assumed on n2 but assigned to n1"):
        c.forget_pod(_assumed_copy(pod("p"), "n2"))


def test_assumed_pod_added_on_another_node_moves():
    c = Cache()
    c.add_node(node("n1"))
    c.add_node(node("n2"))
    c.assume_pod(_assumed_copy(pod("p"), "n1"))
    c.add_pod(pod("p", node_name="n2"))
    assert not c.node_info("n1").pods and [x.name for x in c.node_info("n2").pods] == ["p"]


def test_expire_assumed_pods_after_binding_finished():
    clock = FakeClock(0.0)
    c = Cache(clock, ttl=10.0)
    c.add_node(node("n1"))
    a1, a2 = _assumed_copy(pod("a1"), "n1"), _assumed_copy(pod("a2"), "n1")
    c.assume_pod(a1)
    c.assume_pod(a2)
    c.finish_binding(a1, now=0.0)
    assert c.cleanup_assumed_pods(now=5.0) == []
    expired = c.cleanup_assumed_pods(now=10.5)
    assert [p.name for p in expired] == ["a1"]  # a2's binding never finished: it stays
    assert c.is_assumed_pod(a2) and not c.is_assumed_pod(a1)
    c.add_pod(pod("a1", node_name="n1"))  # an expired pod that shows up is added back
    assert c.get_pod(a1).node_name == "n1"


def test_no_expiry_with_zero_ttl():
    c = Cache(FakeClock(0.0), ttl=0)
    c.add_node(node("n1"))
    a = _assumed_copy(pod("a"), "n1")
    c.assume_pod(a)
    c.finish_binding(a, now=0.0)
    assert c.cleanup_assumed_pods(now=1e9) == [] and c.is_assumed_pod(a)


def test_update_and_remove_errors():
    c = Cache()
    c.add_node(node("n1"))
    with pytest.raises(CacheError, match="is not added to scheduler cache"):
        c.update_pod(pod("x", node_name="n1"), pod("x", node_name="n1"))
    with pytest.raises(CacheError, match="is not found in scheduler cache"):
        c.remove_pod(pod("x", node_name="n1"))
    c.assume_pod(_assumed_copy(pod("a"), "n1"))
    with pytest.raises(CacheError, match="should not be updated"):
        c.update_pod(pod("a", node_name="n1"), pod("a", node_name="n1"))
    c.add_pod(pod("b", node_name="n1", cpu="1"))
    c.update_pod(pod("b", node_name="n1", cpu="1"), pod("b", node_name="n1", cpu="2"))
    assert c.node_info("n1").requested["cpu"] == 2100


def test_pod_before_its_node_and_ghost_nodes():
    c = Cache()
    c.add_pod(pod("p", node_name="n1"))  # pod seen before its node
    snap = Snapshot()
    c.update_snapshot(snap)
    assert snap.node_infos == [] and snap.get("n1") is None
    c.add_node(node("n1"))
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.node_infos] == ["n1"] and len(snap.get("n1").pods) == 1
    c.remove_node(node("n1"))  # pods remain: a ghost NodeInfo, not in snapshots
    assert c.node_count() == 1
    c.update_snapshot(snap)
    assert snap.node_infos == [] and snap.get("n1") is None
    c.remove_pod(pod("p", node_name="n1"))
    assert c.node_count() == 0
    with pytest.raises(CacheError, match="node n1 is not found"):
        c.remove_node(node("n1"))


def test_snapshot_reuses_node_infos_and_copies_only_changes():
    c = Cache()
    for i in range(4):
        c.add_node(zoned(f"n{i}", zone=f"z{i % 2}"))
    snap = Snapshot()
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.node_infos] == ["n0", "n1", "n2", "n3"]
    before = {ni.name: ni for ni in snap.node_infos}
    lst = snap.node_infos
    c.add_pod(pod("p", node_name="n2"))
    c.update_snapshot(snap)
    assert snap.node_infos is lst  # no node added or removed: the list is kept
    assert all(snap.get(n) is before[n] for n in before)  # same objects
    assert len(snap.get("n2").pods) == 1 and snap.get("n2") is not c.node_info("n2")
    # the cache changing does not change the snapshot until the next update
    c.add_pod(pod("q", node_name="n2"))
    assert len(snap.get("n2").pods) == 1
    c.update_snapshot(snap)
    assert len(snap.get("n2").pods) == 2
    c.add_node(zoned("n4", zone="z2"))
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.node_infos] == ["n0", "n1", "n4", "n2", "n3"]
    assert [ni.index for ni in snap.node_infos] == [0, 1, 2, 3, 4]


def test_snapshot_affinity_lists_follow_pods():
    c = Cache()
    c.add_node(node("n1"))
    c.add_node(node("n2"))
    snap = Snapshot()
    c.update_snapshot(snap)
    assert snap.have_pods_with_affinity == []
    aff = pod("a", node_name="n2", affinity=required_pod_affinity({"app": "x"}))
    c.add_pod(aff)
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.have_pods_with_affinity] == ["n2"]
    c.remove_pod(aff)
    c.update_snapshot(snap)
    assert snap.have_pods_with_affinity == []


def test_snapshot_image_states_count_nodes_at_copy_time():
    c = Cache()
    c.add_node(node("n1", images=[(("img:1",), 1000)]))
    snap = Snapshot()
    c.update_snapshot(snap)
    assert snap.get("n1").image_states == {"img:1": (1000, 1)}
    c.add_node(node("n2", images=[(("img:1",), 1000)]))
    c.update_snapshot(snap)
    assert snap.get("n2").image_states == {"img:1": (1000, 2)}
    assert snap.get("n1").image_states == {"img:1": (1000, 1)}  # n1 unchanged since: not re-copied (as kube)
    c.remove_node(node("n2", images=[(("img:1",), 1000)]))
    c.add_pod(pod("p", node_name="n1"))
    c.update_snapshot(snap)
    assert snap.get("n1").image_states == {"img:1": (1000, 1)}


def _fresh(c: Cache) -> dict:
    """What a full rebuild of the snapshot would hold: name -> (pod uids, cpu requested)."""
    out = {}
    for name in c.node_names():
        ni = c.node_info(name)
        out[name] = (sorted(p.uid for p in ni.pods), ni.requested.get("cpu", 0), ni.nonzero_memory)
    return out


def test_snapshot_stays_consistent_under_random_operations():
    rng = random.Random(7)
    c = Cache()
    snap = Snapshot()
    nodes = {}
    pods = {}
    for step in range(600):
        op = rng.random()
        if op < 0.15 or not nodes:
            name = f"n{rng.randrange(30)}"
            if name not in nodes:
                nodes[name] = zoned(name, zone=f"z{rng.randrange(4)}")
                c.add_node(nodes[name])
        elif op < 0.22:
            name = rng.choice(sorted(nodes))
            c.remove_node(nodes.pop(name))
        elif op < 0.7:
            name = f"p{step}"
            target = rng.choice(sorted(nodes))
            p = pod(name, cpu=f"{rng.randrange(1, 9) * 100}m", node_name=target)
            pods[name] = p
            c.add_pod(p)
        elif pods:
            name = rng.choice(sorted(pods))
            c.remove_pod(pods.pop(name))
        if rng.random() < 0.3:
            c.update_snapshot(snap)
            fresh = _fresh(c)
            got = {ni.name: (sorted(p.uid for p in ni.pods), ni.requested.get("cpu", 0), ni.nonzero_memory)
                   for ni in snap.node_infos}
            assert got == fresh
            assert [ni.name for ni in snap.node_infos] == c.node_names()
            assert all(snap.node_infos[i].index == i for i in range(len(snap.node_infos)))


def test_standalone_snapshot_still_builds_from_a_list():
    infos = [NodeInfo(node("a", images=[(("x",), 5)])), NodeInfo(node("b", images=[(("x",), 5)]))]
    snap = Snapshot(infos)
    assert snap.get("a").image_states == {"x": (5, 2)} and snap.num_nodes() == 2
