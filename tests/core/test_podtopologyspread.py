"""PodTopologySpread: constraint selection, PreFilter/Filter (with AddPod/RemovePod), PreScore/Score/Normalize.

Cases follow kube's podtopologyspread filtering_test.go / scoring_test.go and helper/spread_test.go.
"""
from __future__ import annotations

import math

import pytest

from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.profile import FrameworkError
from scheduler_core.framework.snapshot import ClusterObjects, Snapshot
from scheduler_core.framework.status import Code
from scheduler_core.objects import Node, Pod
from scheduler_core.plugins.podtopologyspread import PodTopologySpread, validate_args
from scheduler_core.plugins.podtopologyspread.common import default_selector
from scheduler_core.plugins.podtopologyspread.filtering import (MAX_INT32, new_critical_paths,
                                                                 update_critical_paths)

HOST = "kubernetes.io/hostname"
ZONE = "zone"
FOO = {"matchLabels": {"foo": ""}}
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
NOT_MATCH = "node(s) didn't match pod topology spread constraints"


def node(name, labels=None, taints=None, zone=None, host=True):
    labels = dict(labels or {})
    if host:
        labels.setdefault(HOST, name)
    if zone is not None:
        labels[ZONE] = zone
    return Node({"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints or []},
                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def spread(skew, key, when="DoNotSchedule", selector=FOO, **extra):
    c = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, "labelSelector": selector}
    c.update(extra)
    return c


def pod(name, labels=None, on=None, ns="default", constraints=(), node_selector=None, tolerations=None,
        owners=None, deleting=False):
    meta = {"name": name, "namespace": ns, "labels": dict(labels or {})}
    if owners:
        meta["ownerReferences"] = owners
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec = {"containers": [{"name": "c"}]}
    if on:
        spec["nodeName"] = on
    if constraints:
        spec["topologySpreadConstraints"] = list(constraints)
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    return Pod({"metadata": meta, "spec": spec})


def foo_pods(spec):
    """{node name: n} -> n pods labelled foo="" on each node."""
    return [pod(f"p-{n}{i}", {"foo": ""}, on=n) for n, k in spec.items() for i in range(k)]


def plugin(nodes, pods=(), args=None, **objects):
    infos = [NodeInfo(n) for n in nodes]
    by_name = {ni.name: ni for ni in infos}
    for p in pods:
        by_name[p.node_name].add_pod(p)
    snap = Snapshot(infos, ClusterObjects(**objects))
    return PodTopologySpread.new(args, Handle(snapshot=snap)), snap


def run_filter(pl, snap, p):
    state = CycleState()
    _res, st = pl.pre_filter(state, p)
    assert st is None
    out = {}
    for ni in snap.node_infos:
        s = pl.filter(state, p, ni)
        out[ni.name] = "ok" if s is None else (str(s.code), s.message())
    return out, state


def run_score(pl, snap, p, feasible_names):
    state = CycleState()
    feasible = [snap.get(n) for n in feasible_names]
    assert pl.pre_score(state, p, feasible) is None
    raw = [pl.score(state, p, ni)[0] for ni in feasible]
    batch, st = pl.score_nodes(state, p, feasible)
    assert st is None and batch == raw
    pairs = [[ni.name, s] for ni, s in zip(feasible, raw)]
    assert pl.normalize_score(state, p, pairs) is None
    return dict(pairs)


# -- constraint selection ----------------------------------------------------------------------

def test_prefilter_skips_without_hard_constraints():
    pl, _snap = plugin([node("a", zone="z1")])
    assert pl.pre_filter(CycleState(), pod("p", {"foo": ""}))[1].code == Code.SKIP
    soft = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, "ScheduleAnyway")])
    assert pl.pre_filter(CycleState(), soft)[1].code == Code.SKIP


def test_system_defaults_never_filter():
    svc = {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"foo": ""}}}
    pl, _snap = plugin([node("a", zone="z1")], foo_pods({"a": 9}), services=[svc])
    assert pl.pre_filter(CycleState(), pod("p", {"foo": ""}))[1].code == Code.SKIP


def test_list_default_constraints_filter_with_service_selector():
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]}
    svc = {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"foo": ""}}}
    nodes = [node("a", zone="z1"), node("b", zone="z2")]
    pl, snap = plugin(nodes, foo_pods({"a": 2}), args=args, services=[svc])
    out, _ = run_filter(pl, snap, pod("p", {"foo": ""}))
    assert out == {"a": ("Unschedulable", NOT_MATCH), "b": "ok"}
    # Without a selecting Service there is no default selector, hence no constraint.
    pl, _snap = plugin(nodes, foo_pods({"a": 2}), args=args)
    assert pl.pre_filter(CycleState(), pod("p", {"foo": ""}))[1].code == Code.SKIP


def test_default_selector_sources():
    rs = {"metadata": {"name": "rs1", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"foo": "tar"}, "matchExpressions": [
              {"key": "baz", "operator": "Exists"}]}}}
    svc = {"metadata": {"name": "s"}, "spec": {"selector": {"team": "x"}}}
    other_ns = {"metadata": {"name": "s2", "namespace": "other"}, "spec": {"selector": {"zz": "1"}}}
    no_sel = {"metadata": {"name": "s3"}, "spec": {}}
    objs = ClusterObjects(services=[svc, other_ns, no_sel], replicasets=[rs])
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1", "controller": True}]
    p = pod("p", {"foo": "tar", "baz": "sup", "team": "x"}, owners=owner)
    sel = default_selector(p, objs)
    assert sel.matches({"foo": "tar", "baz": "1", "team": "x"})
    assert not sel.matches({"foo": "tar", "team": "x"})
    assert not sel.matches({"foo": "tar", "baz": "1"})
    # A non-controller reference or another API group is not an owner for spreading.
    for ref in ({**owner[0], "controller": False}, {**owner[0], "apiVersion": "extensions/v1beta1"}):
        sel = default_selector(pod("p", {"foo": "tar"}, owners=[ref]), objs)
        assert sel.is_empty()


def test_default_selector_rc_and_statefulset():
    rc = {"metadata": {"name": "rc1", "namespace": "default"}, "spec": {"selector": {"app": "db"}}}
    ss = {"metadata": {"name": "ss1", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "web"}}}}
    objs = ClusterObjects(replication_controllers=[rc], statefulsets=[ss])
    p = pod("p", {"app": "db"}, owners=[{"apiVersion": "v1", "kind": "ReplicationController", "name": "rc1",
                                         "controller": True}])
    assert default_selector(p, objs).match_labels == (("app", "db"),)
    p = pod("p", {"app": "web"}, owners=[{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "ss1",
                                          "controller": True}])
    sel = default_selector(p, objs)
    assert sel.matches({"app": "web"}) and not sel.matches({"app": "db"})


# -- Filter ------------------------------------------------------------------------------------

def test_single_zone_constraint_and_missing_label():
    nodes = [node("a", zone="z1"), node("b", zone="z1"), node("x", zone="z2"), node("y", zone="z2"),
             node("nolabel")]
    pods = foo_pods({"a": 1, "b": 1, "x": 1})
    pl, snap = plugin(nodes, pods)
    out, _ = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE)]))
    assert out == {"a": ("Unschedulable", NOT_MATCH), "b": ("Unschedulable", NOT_MATCH), "x": "ok",
                   "y": "ok", "nolabel": ("UnschedulableAndUnresolvable", MISSING)}


def test_incoming_pod_not_matching_selector_has_no_self_match():
    nodes = [node("a", zone="z1"), node("x", zone="z2")]
    pl, snap = plugin(nodes, foo_pods({"a": 1}))
    out, _ = run_filter(pl, snap, pod("p", {"bar": ""}, constraints=[spread(1, ZONE)]))
    assert out == {"a": "ok", "x": "ok"}


def test_hostname_constraint_multiple_constraints():
    nodes = [node("a", zone="z1"), node("b", zone="z1"), node("x", zone="z2"), node("y", zone="z2")]
    pods = foo_pods({"a": 3, "b": 1, "x": 1, "y": 0})
    pl, snap = plugin(nodes, pods)
    p = pod("p", {"foo": ""}, constraints=[spread(1, ZONE), spread(1, HOST)])
    out, _ = run_filter(pl, snap, p)
    # zone z1 has 4, z2 has 1: z1 fails the zone constraint; x has 1 vs min 0 on y: 1+1-0 > 1.
    assert out == {"a": ("Unschedulable", NOT_MATCH), "b": ("Unschedulable", NOT_MATCH),
                   "x": ("Unschedulable", NOT_MATCH), "y": "ok"}


def test_terminating_and_other_namespace_pods_are_ignored():
    nodes = [node("a", zone="z1"), node("x", zone="z2")]
    pods = [pod("t", {"foo": ""}, on="a", deleting=True), pod("o", {"foo": ""}, on="a", ns="other"),
            pod("t2", {"foo": ""}, on="a", deleting=True)]
    pl, snap = plugin(nodes, pods)
    out, _ = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE)]))
    assert out == {"a": "ok", "x": "ok"}


def test_min_domains_treats_global_minimum_as_zero():
    nodes = [node("a", zone="z1"), node("x", zone="z2")]
    pods = foo_pods({"a": 1, "x": 1})
    pl, snap = plugin(nodes, pods)
    out, _ = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE, minDomains=2)]))
    assert out == {"a": "ok", "x": "ok"}
    out, _ = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE, minDomains=3)]))
    assert out == {"a": ("Unschedulable", NOT_MATCH), "x": ("Unschedulable", NOT_MATCH)}


def test_node_affinity_policy():
    nodes = [node("a", zone="z1"), node("b", zone="z1"), node("x", zone="z2")]
    pods = foo_pods({"a": 1, "b": 1})
    pl, snap = plugin(nodes, pods)
    honor = pod("p", {"foo": ""}, constraints=[spread(1, ZONE)], node_selector={ZONE: "z1"})
    out, _ = run_filter(pl, snap, honor)
    assert out["a"] == "ok"           # only z1 is a domain: 2 + 1 - 2 <= 1
    ignore = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, nodeAffinityPolicy="Ignore")],
                 node_selector={ZONE: "z1"})
    out, _ = run_filter(pl, snap, ignore)
    assert out["a"] == ("Unschedulable", NOT_MATCH)


def test_node_taints_policy():
    taint = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    nodes = [node("a", zone="z1"), node("x", zone="z2", taints=taint)]
    pods = foo_pods({"a": 1})
    pl, snap = plugin(nodes, pods)
    out, _ = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE)]))
    assert out["a"] == ("Unschedulable", NOT_MATCH)   # Ignore: z2 (0 pods) is a domain
    out, _ = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE, nodeTaintsPolicy="Honor")]))
    assert out["a"] == "ok"
    tolerating = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, nodeTaintsPolicy="Honor")],
                     tolerations=[{"key": "k", "operator": "Exists"}])
    out, _ = run_filter(pl, snap, tolerating)
    assert out["a"] == ("Unschedulable", NOT_MATCH)


def test_no_eligible_domain_ignores_constraint():
    nodes = [node("a", zone="z1"), node("x", zone="z2")]
    pl, snap = plugin(nodes, foo_pods({"a": 5}))
    p = pod("p", {"foo": ""}, constraints=[spread(1, ZONE)], node_selector={"nowhere": "x"})
    out, _ = run_filter(pl, snap, p)
    assert out == {"a": "ok", "x": "ok"}


def test_match_label_keys_are_anded_into_the_selector():
    nodes = [node("a", zone="z1"), node("x", zone="z2")]
    pods = [pod("old1", {"foo": "", "rev": "1"}, on="a"), pod("old2", {"foo": "", "rev": "1"}, on="a")]
    pl, snap = plugin(nodes, pods)
    p = pod("p", {"foo": "", "rev": "2"}, constraints=[spread(1, ZONE, matchLabelKeys=["rev"])])
    out, _ = run_filter(pl, snap, p)
    assert out == {"a": "ok", "x": "ok"}
    # The merged requirement does not replace the selector's own: app=a AND app=b selects nothing.
    sel = {"matchLabels": {"app": "a"}}
    p = pod("p", {"app": "b"}, constraints=[spread(1, ZONE, selector=sel, matchLabelKeys=["app"])])
    _out, state = run_filter(pl, snap, p)
    assert state.read("PreFilterPodTopologySpread").self_match == (0,)


def test_empty_selector_counts_nothing_but_matches_incoming_pod():
    nodes = [node("a", zone="z1"), node("x", zone="z2")]
    pl, snap = plugin(nodes, foo_pods({"a": 3}))
    out, state = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE, selector={})]))
    s = state.read("PreFilterPodTopologySpread")
    assert s.counts == {ZONE: {"z1": 0, "z2": 0}} and s.self_match == (1,)
    assert out == {"a": "ok", "x": "ok"}


def test_constraints_sharing_a_key_share_counts():
    # v1.30 keys counts by (key, value): per node the last constraint on a key wins.
    nodes = [node("a", zone="z1"), node("x", zone="z2")]
    pods = [pod("f", {"foo": ""}, on="a"), pod("b1", {"bar": ""}, on="x"), pod("b2", {"bar": ""}, on="x")]
    pl, snap = plugin(nodes, pods)
    p = pod("p", {"foo": "", "bar": ""},
            constraints=[spread(5, ZONE), spread(5, ZONE, selector={"matchLabels": {"bar": ""}})])
    _out, state = run_filter(pl, snap, p)
    assert state.read("PreFilterPodTopologySpread").counts == {ZONE: {"z1": 0, "z2": 2}}


def test_fast_and_general_prefilter_paths_agree():
    nodes = [node(f"n{i}", zone=f"z{i % 3}") for i in range(9)] + [node("bare")]
    pods = foo_pods({"n0": 2, "n1": 1, "n4": 3, "bare": 4})
    pl, snap = plugin(nodes, pods)
    fast, s1 = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE)]))
    general, s2 = run_filter(pl, snap, pod("p", {"foo": ""}, constraints=[spread(1, ZONE, nodeTaintsPolicy="Honor")]))
    assert fast == general
    assert s1.read("PreFilterPodTopologySpread").counts == s2.read("PreFilterPodTopologySpread").counts


def test_filter_without_prefilter_state_is_an_error():
    pl, snap = plugin([node("a", zone="z1")])
    st = pl.filter(CycleState(), pod("p", constraints=[spread(1, ZONE)]), snap.node_infos[0])
    assert st.code == Code.ERROR and st.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# -- AddPod / RemovePod and clone ---------------------------------------------------------------

def test_add_and_remove_pod_on_cloned_state():
    nodes = [node("a", zone="z1"), node("b", zone="z1"), node("x", zone="z2")]
    pl, snap = plugin(nodes, foo_pods({"a": 1}))
    p = pod("p", {"foo": ""}, constraints=[spread(1, ZONE), spread(1, HOST)])
    _out, state = run_filter(pl, snap, p)
    assert pl.filter(state, p, snap.get("x")) is None
    dry = state.clone()
    assert pl.add_pod(dry, p, pod("n", {"foo": ""}, on="x"), snap.get("x")) is None
    s = dry.read("PreFilterPodTopologySpread")
    assert s.counts[ZONE] == {"z1": 1, "z2": 1} and s.counts[HOST]["x"] == 1
    assert pl.filter(dry, p, snap.get("x")).code == Code.UNSCHEDULABLE
    orig = state.read("PreFilterPodTopologySpread")
    assert orig.counts[ZONE] == {"z1": 1, "z2": 0} and orig.critical_paths[ZONE][:2] == ["z2", 0]
    victim = snap.get("a").pods[0]
    assert pl.remove_pod(state, p, victim, snap.get("a")) is None
    assert orig.counts[ZONE] == {"z1": 0, "z2": 0}
    assert pl.filter(state, p, snap.get("a")) is None
    # Pods of other namespaces or not selected do not change counts.
    pl.add_pod(state, p, pod("o", {"foo": ""}, ns="other", on="a"), snap.get("a"))
    pl.add_pod(state, p, pod("q", {"bar": ""}, on="a"), snap.get("a"))
    assert orig.counts[ZONE] == {"z1": 0, "z2": 0}


def test_add_pod_without_state_is_an_error():
    pl, snap = plugin([node("a", zone="z1")])
    st = pl.add_pod(CycleState(), pod("p"), pod("q", on="a"), snap.get("a"))
    assert st.code == Code.ERROR


def test_critical_paths_update():
    p = new_critical_paths()
    assert p == ["", MAX_INT32, "", MAX_INT32]
    for value, n in (("z1", 3), ("z2", 1), ("z3", 2)):
        update_critical_paths(p, value, n)
    assert p == ["z2", 1, "z3", 2]
    update_critical_paths(p, "z2", 5)            # the minimum grows past the second path: swap
    assert p == ["z3", 2, "z2", 5]
    update_critical_paths(p, "z1", 4)            # an untracked value between the two
    assert p == ["z3", 2, "z1", 4]


# -- PreScore / Score / NormalizeScore ---------------------------------------------------------

HOSTS4 = ["node-a", "node-b", "node-c", "node-d"]


@pytest.mark.parametrize("skew,spec,want", [
    (1, {}, [100, 100, 100, 100]),
    (1, {"node-a": 1, "node-b": 1, "node-c": 1, "node-d": 1}, [100, 100, 100, 100]),
    (1, {"node-a": 2, "node-b": 1, "node-d": 3}, [20, 60, 100, 0]),
    (2, {"node-a": 2, "node-b": 1, "node-d": 3}, [33, 66, 100, 16]),
    (3, {"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}, [44, 66, 77, 100]),
])
def test_score_one_hostname_constraint(skew, spec, want):
    pl, snap = plugin([node(n) for n in HOSTS4], foo_pods(spec))
    p = pod("p", {"foo": ""}, constraints=[spread(skew, HOST, "ScheduleAnyway")])
    assert list(run_score(pl, snap, p, HOSTS4).values()) == want


def test_score_null_selector_gives_all_max():
    pl, snap = plugin([node(n) for n in HOSTS4], foo_pods({"node-a": 2, "node-d": 3}))
    p = pod("p", {"foo": ""}, constraints=[spread(1, HOST, "ScheduleAnyway", selector=None)])
    assert set(run_score(pl, snap, p, HOSTS4).values()) == {100}


def test_score_system_defaulting_with_service():
    svc = {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"foo": ""}}}
    pl, snap = plugin([node(n) for n in HOSTS4],
                      foo_pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}), services=[svc])
    assert list(run_score(pl, snap, pod("p", {"foo": ""}), HOSTS4).values()) == [44, 66, 77, 100]


def test_score_with_non_candidate_and_unlabelled_nodes():
    spec = {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}
    p = pod("p", {"foo": ""}, constraints=[spread(1, HOST, "ScheduleAnyway")])
    pl, snap = plugin([node("node-a"), node("node-b"), node("node-x"), node("node-y")], foo_pods(spec))
    assert run_score(pl, snap, p, ["node-a", "node-b", "node-x"]) == {"node-a": 33, "node-b": 83, "node-x": 100}
    nodes = [node("node-a"), node("node-b", {"n": "node-b"}, host=False), node("node-x"), node("node-y")]
    pl, snap = plugin(nodes, foo_pods(spec))
    assert run_score(pl, snap, p, ["node-a", "node-b", "node-x"]) == {"node-a": 16, "node-b": 0, "node-x": 100}


def test_score_zone_constraint_counts_all_nodes_of_candidate_zones():
    nodes = [node("node-a", zone="zone1"), node("node-b", zone="zone1"), node("node-x", zone="zone2"),
             node("node-y", zone="zone2")]
    pl, snap = plugin(nodes, foo_pods({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}))
    p = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, "ScheduleAnyway")])
    assert run_score(pl, snap, p, ["node-a", "node-b", "node-x"]) == {"node-a": 75, "node-b": 75, "node-x": 100}


def test_score_two_constraints_zone_and_node():
    nodes = [node("node-a", zone="zone1"), node("node-b", zone="zone1"), node("node-x", zone="zone2"),
             node("node-y", zone="zone2")]
    pl, snap = plugin(nodes, foo_pods({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}))
    p = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, "ScheduleAnyway"), spread(1, HOST, "ScheduleAnyway")])
    assert run_score(pl, snap, p, ["node-a", "node-x"]) == {"node-a": 100, "node-x": 63}
    # The general (inclusion-policy) path gives the same result as the fast path.
    p2 = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, "ScheduleAnyway", nodeTaintsPolicy="Honor"),
                                           spread(1, HOST, "ScheduleAnyway")])
    assert run_score(pl, snap, p2, ["node-a", "node-x"]) == {"node-a": 100, "node-x": 63}


def test_prescore_state_weights_and_ignored_nodes():
    nodes = [node("node-a", zone="zone1"), node("node-b", zone="zone1"), node("node-x")]
    pl, snap = plugin(nodes)
    p = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, "ScheduleAnyway"),
                                          spread(1, HOST, "ScheduleAnyway", selector={"matchLabels": {"bar": ""}})])
    state = CycleState()
    assert pl.pre_score(state, p, snap.node_infos) is None
    s = state.read("PreScorePodTopologySpread")
    assert s.ignored_nodes == {"node-x"} and s.counts == {ZONE: {"zone1": 0}}
    assert [t[2] for t in s.terms] == [math.log(3), math.log(4)]


def test_prescore_system_defaults_keep_nodes_without_zone():
    rs = {"metadata": {"name": "rs1", "namespace": "default"}, "spec": {"selector": FOO}}
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1", "controller": True}]
    mars = {"topology.kubernetes.io/zone": "mars"}
    nodes = [node("node-a", mars), node("node-b", mars), node("node-c"), node("node-d")]
    pl, snap = plugin(nodes, replicasets=[rs])
    state = CycleState()
    assert pl.pre_score(state, pod("p", {"foo": ""}, owners=owner), snap.node_infos) is None
    s = state.read("PreScorePodTopologySpread")
    assert not s.ignored_nodes and s.counts == {"topology.kubernetes.io/zone": {"mars": 0, "": 0}}
    assert [t[0] for t in s.terms] == [HOST, "topology.kubernetes.io/zone"]
    assert [t[2] for t in s.terms] == [math.log(6), math.log(4)]


def test_prescore_skips():
    pl, snap = plugin([node("a")], args={"defaultingType": "List"})
    assert pl.pre_score(CycleState(), pod("p"), snap.node_infos).code == Code.SKIP
    hard_only = pod("p", {"foo": ""}, constraints=[spread(1, HOST)])
    assert pl.pre_score(CycleState(), hard_only, snap.node_infos).code == Code.SKIP
    pl, snap = plugin([])
    soft = pod("p", {"foo": ""}, constraints=[spread(1, HOST, "ScheduleAnyway")])
    assert pl.pre_score(CycleState(), soft, []).code == Code.SKIP


def test_score_without_prescore_state_is_an_error():
    pl, snap = plugin([node("a")])
    _s, st = pl.score(CycleState(), pod("p"), snap.node_infos[0])
    assert st.code == Code.ERROR
    assert pl.normalize_score(CycleState(), pod("p"), [["a", 0]]).code == Code.ERROR


# -- args -------------------------------------------------------------------------------------

def test_args_validation_messages():
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 0, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "Sometimes",
         "labelSelector": {"matchLabels": {"app": "web"}}}]}
    with pytest.raises(FrameworkError) as err:
        plugin([node("a")], args=args)
    assert str(err.value) == (
        '[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), '
        'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: '
        '"DoNotSchedule", "ScheduleAnyway", defaultConstraints[0].labelSelector: Forbidden: constraint must '
        'not define a selector, as they deduced for each pod]')


def test_args_validation_other_rules():
    c = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
    errs = [str(e) for e in validate_args({"defaultingType": "System", "defaultConstraints": [c]}, "args")]
    assert errs == ['args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty']
    errs = [str(e) for e in validate_args({"defaultingType": "List", "defaultConstraints": [c, dict(c)]})]
    assert errs == ['defaultConstraints[1]: Duplicate value: "{zone, ScheduleAnyway}"']
    errs = [str(e) for e in validate_args({"defaultingType": "Other"})]
    assert errs == ['defaultingType: Unsupported value: "Other": supported values: "System", "List"']
    bad = dict(c, topologyKey="-bad", whenUnsatisfiable="")
    errs = [str(e) for e in validate_args({"defaultingType": "List", "defaultConstraints": [bad]})]
    assert errs[0].startswith('defaultConstraints[0].topologyKey: Invalid value: "-bad": name part must consist')
    assert errs[1] == "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"
    errs = [str(e) for e in validate_args({"defaultingType": "List",
                                           "defaultConstraints": [dict(c, topologyKey="")]})]
    assert errs == ["defaultConstraints[0].topologyKey: Required value: can not be empty"]


# -- selectors that are not label syntax (metav1.LabelSelectorAsSelector fails) ---------------------

BAD_VALUE = {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["{{.bad-value.}}"]}]}
BAD_VALUE_ERROR = ('values[0][foo]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or '
                   "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                   "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                   "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def test_prefilter_errors_on_a_hard_constraint_selector_that_does_not_convert():
    pl, _snap = plugin([node("a", zone="z1")])
    p = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, selector=BAD_VALUE)])
    _res, st = pl.pre_filter(CycleState(), p)
    assert (st.code, st.message()) == (
        Code.ERROR, "get constraints from pod: obtaining pod's hard topology spread constraints: " + BAD_VALUE_ERROR)


def test_prescore_errors_on_a_soft_constraint_selector_that_does_not_convert_and_prefilter_ignores_it():
    pl, snap = plugin([node("a", zone="z1")])
    p = pod("p", {"foo": ""}, constraints=[spread(1, ZONE, "ScheduleAnyway", selector=BAD_VALUE)])
    assert pl.pre_filter(CycleState(), p)[1].code == Code.SKIP
    st = pl.pre_score(CycleState(), p, snap.node_infos)
    assert (st.code, st.message()) == (
        Code.ERROR, "calculating preScoreState: obtaining pod's soft topology spread constraints: " + BAD_VALUE_ERROR)


def test_default_selector_ignores_a_controller_selector_that_does_not_convert():
    """DefaultSelector drops the ReplicaSet's requirements when LabelSelectorAsSelector fails."""
    rs = {"metadata": {"name": "rs1", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "web"},
                                "matchExpressions": [{"key": "bad key", "operator": "Exists"}]}}}
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1", "controller": True}]
    sel = default_selector(pod("p", {"app": "web"}, owners=owner), ClusterObjects(replicasets=[rs]))
    assert sel.is_empty()
