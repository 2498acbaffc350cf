"""DefaultPreemption and the preemption evaluator: the cases of kube's default_preemption_test.go
(PostFilter, DryRunPreemption, SelectCandidate, PodEligibleToPreemptOthers, calculateNumCandidates)
and preemption_test.go, plus the Go sort.Slice port."""
import random

import numpy as np
import pytest

from scheduler_core.framework.candidates import RowCandidates
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.gosort import sort_slice
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import extension_points_of
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.preemption import (PDB, Candidate, Evaluator, filter_pods_with_pdb_violation,
                                                 more_important_pod, pick_one_node_for_preemption)
from scheduler_core.framework.preemption_batch import PRIORITY_SHIFT
from scheduler_core.framework.profile import FrameworkError, new_framework
from scheduler_core.framework.snapshot import ClusterObjects, Snapshot
from scheduler_core.framework.status import Code, Status
from scheduler_core.objects.node import Node
from scheduler_core.objects.pod import Pod
from scheduler_core.plugins.defaultpreemption import DefaultPreemption
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.schedule_one import SchedulerContext, schedule_pod

HOST = "kubernetes.io/hostname"
LOW, MID, HIGH, VERY_HIGH = 0, 100, 1000, 10000
T0 = "2024-06-01T08:00:00Z"


def ts(minute: int) -> str:
    return f"2024-06-01T08:{minute:02d}:00Z"


def make_node(name, cpu="4", mem="8Gi", pods="110", labels=None):
    lbl = {HOST: name}
    lbl.update(labels or {})
    return Node({"metadata": {"name": name, "labels": lbl},
                 "status": {"allocatable": {"cpu": cpu, "memory": mem, "pods": pods}}})


def make_pod(name, prio=0, cpu="1", mem="1Gi", node="", start=T0, ns="default", labels=None,
             never=False, nominated="", deleted=False, conditions=None, affinity=None, uid=None):
    spec = {"priority": prio, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    if node:
        spec["nodeName"] = node
    if never:
        spec["preemptionPolicy"] = "Never"
    if affinity:
        spec["affinity"] = affinity
    meta = {"name": name, "namespace": ns, "labels": labels or {}}
    if uid:
        meta["uid"] = uid
    if deleted:
        meta["deletionTimestamp"] = "2024-06-01T09:00:00Z"
    status = {"phase": "Running" if node else "Pending"}
    if start and node:
        status["startTime"] = start
    if nominated:
        status["nominatedNodeName"] = nominated
    if conditions:
        status["conditions"] = conditions
    return Pod({"metadata": meta, "spec": spec, "status": status})


def pdb(name, selector, allowed, ns="default", disrupted=()):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": selector},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": {p: T0 for p in disrupted}}}


class FakeClient:
    """Records the evictions and nomination clears the plugin asks for."""

    def __init__(self, fail_on=None):
        self.evicted = []
        self.cleared = []
        self.fail_on = fail_on

    def evict(self, victim, preemptor_uid, node_name):
        if victim.name == self.fail_on:
            return f'pods "{victim.name}" is forbidden'
        self.evicted.append((victim.key, preemptor_uid, node_name))
        return None

    def clear_nomination(self, pod):
        self.cleared.append(pod.key)


class Env:
    """A framework with PrioritySort, the given filters, DefaultPreemption and DefaultBinder."""

    def __init__(self, nodes, pods=(), filters=("NodeResourcesFit",), pdbs=(), args=None, tie_break="name",
                 client=None, nominated=None, seed=0):
        infos = [NodeInfo(n) for n in nodes]
        by_name = {ni.name: ni for ni in infos}
        for p in pods:
            by_name[p.node_name].add_pod(p)
        self.snapshot = Snapshot(infos, ClusterObjects(pod_disruption_budgets=pdbs))
        self.nominated = nominated or {}
        nominated_fn = (lambda n: list(self.nominated.get(n, ()))) if nominated is not None else None
        self.handle = Handle(snapshot=self.snapshot, client=client, nominated_pods_for_node=nominated_fn)
        self.handle.rng = random.Random(seed)
        self.handle.tie_break = tie_break
        registry = in_tree_registry()
        points = {"QueueSort": [("PrioritySort", 0)],
                  "PreFilter": [(f, 0) for f in filters if "PreFilter" in extension_points_of(registry[f])],
                  "Filter": [(f, 0) for f in filters], "PostFilter": [("DefaultPreemption", 0)],
                  "Bind": [("DefaultBinder", 0)]}
        self.fwk = new_framework("default-scheduler", points, {"DefaultPreemption": args or {}}, registry,
                                 self.handle)
        self.plugin = self.fwk.get_plugin("DefaultPreemption")
        self.ctx = SchedulerContext(tie_break=tie_break, nominated_pods_for_node=nominated_fn,
                                    trace_all_filters=False)

    def schedule(self, pod):
        """One cycle; returns the trace (PostFilter ran when no node fit)."""
        tr, _state = schedule_pod(self.fwk, self.ctx, pod, self.snapshot, CycleState())
        return tr

    def prefiltered(self, pod):
        state = CycleState()
        _res, st = self.fwk.run_pre_filter(state, pod)
        assert st is None
        return state

    def dry_run(self, pod, offset=0, num_candidates=None):
        """Evaluator.dry_run_preemption over every node: (candidates, statuses)."""
        state = self.prefiltered(pod)
        ev = Evaluator(self.handle, self.plugin)
        pdbs = [PDB(raw) for raw in self.snapshot.objects.pod_disruption_budgets]
        nodes = self.snapshot.node_infos
        cands, statuses, err = ev.dry_run_preemption(state, pod, nodes, pdbs, offset,
                                                     num_candidates or len(nodes))
        assert err is None
        return cands, statuses


def victims_of(cands):
    return {c.name: ([p.name for p in c.victims], c.num_pdb_violations) for c in cands}


# -- PostFilter (TestPostFilter) ---------------------------------------------------------------
def test_higher_priority_pod_preempts():
    env = Env([make_node("node1", cpu="1")], [make_pod("p1", LOW, cpu="1", node="node1")])
    tr = env.schedule(make_pod("p", HIGH, cpu="1"))
    assert tr.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert tr.preemption == {"attempted": True, "code": "Success", "message": "", "nominated_node": "node1",
                             "victims": ["default/p1"]}


def test_tied_priority_is_still_unschedulable():
    env = Env([make_node("node1", cpu="1")], [make_pod("p1", HIGH, cpu="1", node="node1")])
    tr = env.schedule(make_pod("p", HIGH, cpu="1"))
    assert tr.message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                          "1 No preemption victims found for incoming pod.")
    assert tr.preemption["code"] == "Unschedulable"
    assert tr.preemption["nominated_node"] is None


def test_unresolvable_nodes_are_not_helped():
    env = Env([make_node("node1", cpu="1")], [make_pod("p1", LOW, cpu="1", node="node1")])
    state = env.prefiltered(make_pod("p", HIGH))
    statuses = {"node1": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "some reason")}
    res, st = env.plugin.post_filter(state, make_pod("p", HIGH), statuses)
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]
    assert res.nominated_node_name == "" and res.mode == "override"


def test_no_enough_resource_after_removing_low_priority_pods():
    env = Env([make_node("node1", cpu="1"), make_node("node2", cpu="1")],
              [make_pod("p1", LOW, cpu="1", node="node1"), make_pod("p2", LOW, cpu="1", node="node2")])
    tr = env.schedule(make_pod("p", HIGH, cpu="2"))
    assert tr.message.endswith("preemption: 0/2 nodes are available: 2 Insufficient cpu.")


def test_mixed_reasons_no_victims_and_not_enough_cpu():
    nodes = [make_node(f"node{i}", cpu="1") for i in range(1, 5)]
    pods = [make_pod("p1", LOW, cpu="1", node="node1")] + [
        make_pod(f"p{i}", HIGH, cpu="1", node=f"node{i}") for i in (2, 3, 4)]
    env = Env(nodes, pods)
    tr = env.schedule(make_pod("p", HIGH, cpu="2"))
    assert tr.message == ("0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: "
                          "1 Insufficient cpu, 3 No preemption victims found for incoming pod.")


def test_mixed_reasons_unresolvable_and_not_enough_cpu():
    nodes = [make_node(f"node{i}", cpu="1") for i in range(1, 5)]
    pods = [make_pod(f"p{i}", LOW, cpu="1", node=f"node{i}") for i in range(1, 5)]
    env = Env(nodes, pods)
    p = make_pod("p", HIGH, cpu="2")
    statuses = {"node1": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x"),
                "node2": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x"),
                "node3": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
                "node4": Status(Code.UNSCHEDULABLE, "Insufficient cpu")}
    _res, st = env.plugin.post_filter(env.prefiltered(p), p, statuses)
    assert st.reasons == ["preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                          "2 Preemption is not helpful for scheduling."]


def test_preemption_policy_never():
    env = Env([make_node("node1", cpu="1")], [make_pod("p1", LOW, cpu="1", node="node1")])
    tr = env.schedule(make_pod("p", HIGH, cpu="1", never=True))
    assert tr.message == ("0/1 nodes are available: 1 Insufficient cpu. "
                          "preemption: not eligible due to preemptionPolicy=Never.")
    assert tr.preemption == {"attempted": True, "code": "Unschedulable",
                             "message": "preemption: not eligible due to preemptionPolicy=Never.",
                             "nominated_node": None, "victims": []}
    p = make_pod("p", HIGH, cpu="1", never=True)
    res, _st = env.plugin.post_filter(env.prefiltered(p), p, {"node1": Status(Code.UNSCHEDULABLE, "x")})
    assert res.mode == "noop"


def test_simulation_does_not_evict():
    env = Env([make_node("node1", cpu="1")], [make_pod("p1", LOW, cpu="1", node="node1")])
    env.schedule(make_pod("p", HIGH, cpu="1"))
    assert [p.name for p in env.snapshot.get("node1").pods] == ["p1"]


@pytest.mark.parametrize("nominee_prio, candidate", [(10, False), (5, True)])
def test_dry_run_counts_nominated_pods_of_equal_or_higher_priority(nominee_prio, candidate):
    """The dry run filters with the node's nominated pods of priority >= the preemptor's (and only those):
    with the 2-cpu nominee of equal priority the 3-cpu preemptor cannot fit even with both low pods gone."""
    low = [make_pod(f"low{i}", 0, cpu="1", node="node1") for i in range(2)]
    nominee = make_pod("nominee", nominee_prio, cpu="2", nominated="node1")
    env = Env([make_node("node1")], low, nominated={"node1": [nominee]})
    cands, statuses = env.dry_run(make_pod("hi", 10, cpu="3"))
    if candidate:
        assert victims_of(cands) == {"node1": (["low1"], 0)}  # low0 is reprieved: 3 cpus are enough
    else:
        assert cands == [] and statuses["node1"].reasons == ["Insufficient cpu"]


# -- the cluster client: evictions and nomination clearing -------------------------------------
def test_client_evicts_victims_and_clears_lower_nominations():
    client = FakeClient()
    low_nominee = make_pod("nominee-low", MID, cpu="1", nominated="node1")
    env = Env([make_node("node1", cpu="2"), make_node("node2", cpu="1")],
              [make_pod("a", LOW, cpu="1", node="node1"), make_pod("b", LOW, cpu="1", node="node1"),
               make_pod("c", MID, cpu="1", node="node2")],
              client=client, nominated={"node1": [low_nominee]})
    tr = env.schedule(make_pod("p", HIGH, cpu="1", uid="uid-p"))
    # The MID nominee does not hold room against a HIGH pod; a is reprieved, b is the only victim, and
    # node1 (lowest victim priority) beats node2.
    assert tr.preemption["nominated_node"] == "node1"
    assert client.evicted == [("default/b", "uid-p", "node1")]
    assert client.cleared == ["default/nominee-low"]


def test_client_eviction_error_is_an_error_status():
    client = FakeClient(fail_on="p1")
    env = Env([make_node("node1", cpu="1")], [make_pod("p1", LOW, cpu="1", node="node1")], client=client)
    p = make_pod("p", HIGH, cpu="1")
    res, st = env.plugin.post_filter(env.prefiltered(p), p, {"node1": Status(Code.UNSCHEDULABLE, "x")})
    assert st.code == Code.ERROR
    assert st.message() == 'preemption: pods "p1" is forbidden'
    assert res.mode == "noop"


def test_client_clears_preemptor_nomination_when_nothing_can_help():
    client = FakeClient()
    env = Env([make_node("node1", cpu="1")], [make_pod("p1", LOW, cpu="1", node="node1")], client=client)
    p = make_pod("p", HIGH, cpu="1", nominated="node1")
    env.plugin.post_filter(env.prefiltered(p), p, {"node1": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x")})
    assert client.cleared == ["default/p"]


# -- DryRunPreemption / SelectVictimsOnNode -----------------------------------------------------
def two_nodes(pods, cpu="3"):
    return [make_node("node1", cpu=cpu), make_node("node2", cpu=cpu)], pods


def test_pod_that_does_not_fit_anywhere():
    nodes, pods = two_nodes([make_pod("p1", LOW, cpu="1", node="node1"), make_pod("p2", LOW, cpu="1", node="node2")])
    cands, statuses = Env(nodes, pods).dry_run(make_pod("p", HIGH, cpu="4"))
    assert cands == []
    assert {n: (s.code, s.reasons) for n, s in statuses.items()} == {
        "node1": (Code.UNSCHEDULABLE, ["Insufficient cpu"]), "node2": (Code.UNSCHEDULABLE, ["Insufficient cpu"])}


def test_fits_on_both_nodes_when_lower_priority_pods_are_preempted():
    nodes, pods = two_nodes([make_pod("p1", MID, cpu="2", node="node1"), make_pod("p2", MID, cpu="2", node="node2")])
    cands, _ = Env(nodes, pods).dry_run(make_pod("p", HIGH, cpu="2"))
    assert victims_of(cands) == {"node1": (["p1"], 0), "node2": (["p2"], 0)}


def test_higher_priority_pods_are_never_victims():
    nodes, pods = two_nodes([make_pod("p1", HIGH, cpu="2", node="node1"), make_pod("p2", HIGH, cpu="2", node="node2")])
    cands, statuses = Env(nodes, pods).dry_run(make_pod("p", HIGH, cpu="2"))
    assert cands == []
    assert all(s.reasons == ["No preemption victims found for incoming pod"] and
               s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE for s in statuses.values())


def test_medium_victim_preempted_small_low_one_reprieved():
    # Reprieve goes by importance: the MID pod is tried first and must go, the small LOW pod can stay.
    nodes = [make_node("node1", cpu="4")]
    pods = [make_pod("small-low", LOW, cpu="1", node="node1"), make_pod("big-mid", MID, cpu="2", node="node1"),
            make_pod("high", HIGH, cpu="1", node="node1")]
    cands, _ = Env(nodes, pods).dry_run(make_pod("p", VERY_HIGH, cpu="2"))
    assert victims_of(cands) == {"node1": (["big-mid"], 0)}


def test_mixed_priorities_victims_in_importance_order():
    nodes = [make_node("node1", cpu="5")]
    pods = [make_pod("a", LOW, cpu="1", node="node1"), make_pod("b", MID, cpu="1", node="node1"),
            make_pod("c", LOW, cpu="1", node="node1"), make_pod("d", VERY_HIGH, cpu="1", node="node1"),
            make_pod("e", MID, cpu="1", node="node1")]
    cands, _ = Env(nodes, pods).dry_run(make_pod("p", HIGH, cpu="3"))
    # d is not lower. Reprieve order b, e (MID), a, c (LOW): only b can stay.
    assert victims_of(cands) == {"node1": (["e", "a", "c"], 0)}


def test_equal_priority_later_start_time_is_preempted_first():
    nodes = [make_node("node1", cpu="3")]
    pods = [make_pod("old", MID, cpu="2", node="node1", start=ts(1)),
            make_pod("new", MID, cpu="2", node="node1", start=ts(5))]
    cands, _ = Env(nodes, pods).dry_run(make_pod("p", HIGH, cpu="1"))
    # 3 cpu, 2+2 used: the older pod is more important, reprieved first, so the newer one is the victim.
    assert victims_of(cands) == {"node1": (["new"], 0)}


def test_pod_with_anti_affinity_is_preempted():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "p"}}, "topologyKey": HOST}]}}
    nodes = [make_node("node1", cpu="4"), make_node("node2", cpu="4")]
    pods = [make_pod("anti", LOW, cpu="1", node="node1", affinity=anti),
            make_pod("other", LOW, cpu="1", node="node1"),
            make_pod("blocker", HIGH, cpu="4", node="node2")]
    env = Env(nodes, pods, filters=("NodeResourcesFit", "InterPodAffinity"))
    tr = env.schedule(make_pod("p", MID, cpu="1", labels={"app": "p"}))
    assert tr.message.startswith("0/2 nodes are available: 1 Insufficient cpu, "
                                 "1 node(s) didn't satisfy existing pods anti-affinity rules.")
    assert tr.preemption["nominated_node"] == "node1"
    assert tr.preemption["victims"] == ["default/anti"]


def test_filter_failure_after_removal_is_reported():
    # A node failing NodeResourcesFit first is a candidate even if a later filter would be unresolvable.
    nodes = [make_node("node1", cpu="1", labels={"zone": "a"}), make_node("node2", cpu="1")]
    pods = [make_pod("p1", LOW, cpu="1", node="node1"), make_pod("p2", LOW, cpu="1", node="node2")]
    env = Env(nodes, pods, filters=("NodeResourcesFit", "NodeAffinity"))
    p = Pod({"metadata": {"name": "p", "namespace": "default"},
             "spec": {"priority": HIGH, "nodeSelector": {"zone": "b"},
                      "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})
    tr = env.schedule(p)
    assert tr.message == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                          "2 node(s) didn't match Pod's node affinity/selector.")


def test_pdb_violation_same_pdb():
    nodes = [make_node("node1", cpu="2")]
    pods = [make_pod("a", LOW, cpu="1", node="node1", labels={"app": "foo"}, start=ts(1)),
            make_pod("b", LOW, cpu="1", node="node1", labels={"app": "foo"}, start=ts(2))]
    env = Env(nodes, pods, pdbs=[pdb("pdb", {"matchLabels": {"app": "foo"}}, 1)])
    cands, _ = env.dry_run(make_pod("p", HIGH, cpu="2"))
    # a (older, more important) uses the one allowed disruption; b violates. Violating ones are reprieved
    # first, so b comes first in the victims, and is counted as a violation.
    assert victims_of(cands) == {"node1": (["b", "a"], 1)}


def test_pdb_disrupted_pod_is_not_counted():
    nodes = [make_node("node1", cpu="2")]
    pods = [make_pod("a", LOW, cpu="1", node="node1", labels={"app": "foo"}, start=ts(1)),
            make_pod("b", LOW, cpu="1", node="node1", labels={"app": "foo"}, start=ts(2))]
    env = Env(nodes, pods, pdbs=[pdb("pdb", {"matchLabels": {"app": "foo"}}, 1, disrupted=["a"])])
    cands, _ = env.dry_run(make_pod("p", HIGH, cpu="2"))
    assert victims_of(cands) == {"node1": (["a", "b"], 0)}


def test_pdb_disrupted_pod_and_another_eviction_violates():
    nodes = [make_node("node1", cpu="3")]
    pods = [make_pod(n, LOW, cpu="1", node="node1", labels={"app": "foo"}, start=ts(i))
            for i, n in enumerate(("a", "b", "c"), 1)]
    env = Env(nodes, pods, pdbs=[pdb("pdb", {"matchLabels": {"app": "foo"}}, 1, disrupted=["a"])])
    cands, _ = env.dry_run(make_pod("p", HIGH, cpu="3"))
    assert victims_of(cands) == {"node1": (["c", "a", "b"], 1)}


def test_filter_pods_with_pdb_violation_matching_rules():
    pods = [make_pod("nolabels", node="n"), make_pod("other-ns", node="n", ns="prod", labels={"app": "foo"}),
            make_pod("match", node="n", labels={"app": "foo"}), make_pod("match2", node="n", labels={"app": "foo"})]
    pdbs = [PDB(pdb("ok", {"matchLabels": {"app": "foo"}}, 1)), PDB(pdb("empty", {}, 0)),
            PDB({"metadata": {"name": "nil"}, "spec": {}, "status": {}}),
            PDB(pdb("bad", {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}, 0))]
    violating, ok = filter_pods_with_pdb_violation(pods, pdbs)
    assert [p.name for p in violating] == ["match2"]
    assert [p.name for p in ok] == ["nolabels", "other-ns", "match"]


def test_num_candidates_stops_the_dry_run():
    nodes = [make_node(f"node{i}", cpu="1") for i in range(1, 6)]
    pods = [make_pod(f"p{i}", LOW, cpu="1", node=f"node{i}") for i in range(1, 6)]
    env = Env(nodes, pods)
    cands, _ = env.dry_run(make_pod("p", HIGH, cpu="1"), offset=3, num_candidates=2)
    assert [c.name for c in cands] == ["node4", "node5"]


def test_dry_run_keeps_going_until_a_non_violating_candidate():
    nodes = [make_node(f"node{i}", cpu="1") for i in range(1, 4)]
    pods = [make_pod("g1", LOW, cpu="1", node="node1", labels={"app": "g"}),
            make_pod("g2", LOW, cpu="1", node="node2", labels={"app": "g"}),
            make_pod("free", LOW, cpu="1", node="node3")]
    env = Env(nodes, pods, pdbs=[pdb("pdb", {"matchLabels": {"app": "g"}}, 0)])
    cands, _ = env.dry_run(make_pod("p", HIGH, cpu="1"), num_candidates=1)
    # The violating list is full after node1, yet the run goes on until node3, a non-violating one.
    assert [(c.name, c.num_pdb_violations) for c in cands] == [("node3", 0), ("node1", 1)]


def test_preemption_prefers_node_without_pdb_violation():
    nodes = [make_node("node1", cpu="1"), make_node("node2", cpu="1")]
    pods = [make_pod("guarded", LOW, cpu="1", node="node1", labels={"app": "g"}),
            make_pod("web", MID, cpu="1", node="node2")]
    env = Env(nodes, pods, pdbs=[pdb("pdb", {"matchLabels": {"app": "g"}}, 0)])
    tr = env.schedule(make_pod("p", HIGH, cpu="1"))
    assert tr.preemption["nominated_node"] == "node2"


def test_nominated_pods_are_held_during_the_dry_run():
    nominee = make_pod("nominee", HIGH, cpu="1", nominated="node1")
    nodes = [make_node("node1", cpu="2"), make_node("node2", cpu="2")]
    pods = [make_pod("a", LOW, cpu="1", node="node1"), make_pod("b", LOW, cpu="1", node="node2"),
            make_pod("c", LOW, cpu="1", node="node2")]
    env = Env(nodes, pods, nominated={"node1": [nominee]})
    tr = env.schedule(make_pod("p", HIGH, cpu="2"))
    # node1 would need the nominee's cpu as well: only node2 can host the pod.
    assert tr.preemption["nominated_node"] == "node2"
    assert sorted(tr.preemption["victims"]) == ["default/b", "default/c"]


# -- SelectCandidate / pickOneNodeForPreemption (TestSelectBestCandidate) ------------------------
def cand(name, *victims, pdb_violations=0):
    return Candidate(name, list(victims), pdb_violations)


def pick(*cands):
    by = {c.name: c for c in cands}
    return pick_one_node_for_preemption(by, sorted(by))


def vp(name, prio, start=T0):
    return make_pod(name, prio, node="x", start=start)


def test_pick_fewest_pdb_violations():
    assert pick(cand("n1", vp("a", LOW), pdb_violations=1), cand("n2", vp("b", MID))) == "n2"


def test_pick_min_highest_priority_victim():
    assert pick(cand("n1", vp("a", HIGH), vp("b", LOW)), cand("n2", vp("c", MID), vp("d", MID))) == "n2"


def test_pick_min_sum_of_priorities():
    assert pick(cand("n1", vp("a", MID), vp("b", MID)), cand("n2", vp("c", MID), vp("d", LOW))) == "n2"


def test_pick_sum_uses_adjusted_negative_priorities():
    # -5 + (-5) + 2*2^31 is larger than -5 + 2^31: one victim wins although its raw sum is larger.
    assert pick(cand("n1", vp("a", -5), vp("b", -5)), cand("n2", vp("c", -5))) == "n2"


def test_pick_fewest_victims():
    # Same first-victim priority and the same adjusted sum (3 victims vs 2): the fewer victims win.
    assert pick(cand("n1", vp("a", 2000000000), vp("b", -573741824), vp("c", -573741824)),
                cand("n2", vp("d", 2000000000), vp("e", 1000000000))) == "n2"


def test_pick_latest_start_time_of_highest_priority_victims():
    assert pick(cand("n1", vp("a", MID, ts(5)), vp("b", LOW, ts(50))),
                cand("n2", vp("c", MID, ts(9)), vp("d", LOW, ts(1)))) == "n2"


def test_pick_victims_without_start_time_read_as_now_in_candidate_order():
    # GetPodStartTime gives time.Now() to a pod that has not started: later than any recorded start, and each
    # candidate's read later than the previous candidate's, so the last such candidate in order has the latest.
    assert pick(cand("n1", vp("a", MID, None)), cand("n2", vp("b", MID, None)), cand("n3", vp("c", MID, None))) == "n3"
    assert pick(cand("n1", vp("a", MID, None)), cand("n2", vp("b", MID, ts(9)))) == "n1"
    # among the highest-priority victims a recorded start is earlier than "now"
    assert pick(cand("n1", vp("a", MID, None), vp("b", MID, ts(5))),
                cand("n2", vp("c", MID, ts(9)), vp("d", MID, None))) == "n2"


def test_row_candidates_keep_the_candidates_the_pick_keys_keep():
    # The dry run on rows hands pickOneNodeForPreemption arrays: ``tied`` keeps, in the order given, the candidates
    # whose key (no PDB violation, highest victim priority, shifted sum, victims) is the best, as comparing the
    # Candidates' keys does; also where the sums tie and the counts do not (priorities near the int32 limits).
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(2, 12)
        pods = [[make_pod(f"r{r}v{k}", LOW) for k in range(3)] for r in range(n)]
        marks = np.array([[rng.random() < 0.6 for _k in range(3)] for _r in range(n)])
        marks[:, 0] = True
        rc = RowCandidates([f"n{r}" for r in range(n)], pods, np.arange(n), marks,
                           np.array([rng.choice([LOW, MID]) for _ in range(n)]),
                           np.array([rng.choice([1, 2]) * PRIORITY_SHIFT for _ in range(n)]),
                           np.array([rng.choice([1, 2, 3]) for _ in range(n)]), np.zeros(n, bool))
        order = list(range(n))
        rng.shuffle(order)
        keys = [rc[i].key for i in order]
        assert rc.tied(order) == [i for i, key in zip(order, keys) if key == max(keys)]
        assert [p.name for p in rc[order[0]].victims] == [f"r{order[0]}v{k}" for k in range(3) if marks[order[0], k]]


def test_pick_full_tie_smallest_name_in_deterministic_order():
    assert pick(cand("n2", vp("a", MID)), cand("n1", vp("b", MID))) == "n1"


def test_pick_uses_first_victim_priority_not_max():
    # kube reads victims[0]: a PDB-violating LOW victim listed first hides a HIGH one behind it.
    assert pick(cand("n1", vp("a", LOW), vp("b", HIGH)), cand("n2", vp("c", MID), vp("d", LOW))) == "n1"


def test_select_candidate_random_mode_uses_rng_only_for_ties():
    env = Env([make_node("n1")], tie_break="random", seed=3)
    ev = Evaluator(env.handle, env.plugin)
    picks = {ev.select_candidate([cand("n1", vp("a", MID)), cand("n2", vp("b", MID))]).name for _ in range(40)}
    assert picks == {"n1", "n2"}
    assert ev.select_candidate([cand("n1", vp("a", MID)), cand("n2", vp("b", LOW))]).name == "n2"


# -- PodEligibleToPreemptOthers -----------------------------------------------------------------
DISRUPTION = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]


@pytest.mark.parametrize("victim,status,expected", [
    (make_pod("v", LOW, node="node1"), None, (True, "")),
    (make_pod("v", LOW, node="node1", deleted=True, conditions=DISRUPTION), None,
     (False, "not eligible due to a terminating pod on the nominated node.")),
    (make_pod("v", VERY_HIGH, node="node1", deleted=True, conditions=DISRUPTION), None, (True, "")),
    (make_pod("v", LOW, node="node1", deleted=True), None, (True, "")),
    (make_pod("v", LOW, node="node1", deleted=True, conditions=DISRUPTION),
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x"), (True, "")),
])
def test_pod_eligible_to_preempt_others(victim, status, expected):
    env = Env([make_node("node1")], [victim])
    p = make_pod("p", HIGH, nominated="node1")
    assert env.plugin.pod_eligible_to_preempt_others(p, status) == expected


def test_pod_eligible_never():
    env = Env([make_node("node1")])
    assert env.plugin.pod_eligible_to_preempt_others(make_pod("p", HIGH, never=True), None) == (
        False, "not eligible due to preemptionPolicy=Never.")


# -- args, offset, number of candidates ---------------------------------------------------------
@pytest.mark.parametrize("pct,absolute,nodes,expected", [
    (10, 100, 1, 1), (10, 100, 10, 10), (10, 100, 1000, 100), (40, 100, 1000, 400),
    (10, 50, 1000, 100), (10, 150, 1000, 150), (0, 10, 1000, 10), (100, 0, 37, 37), (1, 0, 150, 1),
])
def test_calculate_num_candidates(pct, absolute, nodes, expected):
    pl = DefaultPreemption(None, pct, absolute)
    assert pl.calculate_num_candidates(nodes) == expected


def test_offset_is_zero_in_deterministic_mode_and_random_otherwise():
    env = Env([make_node("n1")])
    assert env.plugin.get_offset_and_num_candidates(50) == (0, 50)
    env = Env([make_node("n1")], tie_break="random", seed=1)
    offsets = {env.plugin.get_offset_and_num_candidates(50)[0] for _ in range(30)}
    assert len(offsets) > 1 and all(0 <= o < 50 for o in offsets)


def test_args_defaults_and_validation():
    pl = DefaultPreemption.new(None, Handle())
    assert (pl.min_candidate_nodes_percentage, pl.min_candidate_nodes_absolute) == (10, 100)
    with pytest.raises(FrameworkError, match=r"minCandidateNodesPercentage: Invalid value: 101: not in valid "
                                             r"range \[0, 100\]"):
        DefaultPreemption.new({"minCandidateNodesPercentage": 101}, Handle())
    with pytest.raises(FrameworkError, match=r"^\[minCandidateNodesPercentage: Invalid value: 0: cannot be zero"):
        DefaultPreemption.new({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}, Handle())


# -- importance order and the Go sort ----------------------------------------------------------
def test_more_important_pod():
    assert more_important_pod(vp("a", HIGH), vp("b", LOW))
    assert more_important_pod(vp("a", MID, ts(1)), vp("b", MID, ts(2)))
    assert not more_important_pod(vp("a", MID, ts(2)), vp("b", MID, ts(1)))
    not_started = make_pod("n", MID)  # no startTime: reads as "now", later than any recorded start
    assert more_important_pod(vp("a", MID, ts(59)), not_started)
    assert not more_important_pod(not_started, vp("a", MID, ts(59)))


def test_go_sort_matches_a_total_order():
    rng = random.Random(7)
    for n in (0, 1, 5, 12, 13, 40, 60, 200, 1000):
        data = [rng.randrange(50) for _ in range(n)]
        got = list(data)
        sort_slice(got, lambda a, b: a < b)
        assert got == sorted(data)


def test_go_sort_tie_order_is_gos():
    # Equal keys: Go's insertion sort (n <= 12) keeps them in input order; pdqsort on larger inputs moves
    # them. Inputs of (key, id) compared by key only; these orders are what Go's sort.Slice produces.
    data = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    sort_slice(data, lambda x, y: x[0] < y[0])
    assert data == [(0, "b"), (0, "d"), (1, "a"), (1, "c")]
    # A comparator that is always true (two pods without startTime in kube) reverses small inputs.
    data = list(range(6))
    sort_slice(data, lambda x, y: True)
    assert data == [5, 4, 3, 2, 1, 0]


def _ties_doc(starts):
    from scheduler_core.scenario import scenario_from_data
    from scheduler_core.simulate import Simulation, golden_document
    pods = [make_pod(f"low-{i}", LOW, cpu="3", node=f"n{i}", start=s).raw for i, s in enumerate(starts)]
    data = {"nodes": [make_node(f"n{i}").raw for i in range(len(starts))], "pods": pods,
            "pending": [make_pod("urgent", HIGH, cpu="3").raw]}
    sim = Simulation(scenario_from_data(data), kube_version="1.36")
    return golden_document(sim, list(sim.run()))["decisions"][0]["preemption"]


def test_preemption_lists_the_candidates_kube_could_pick_as_well():
    """Two candidates equal on every criterion of pickOneNodeForPreemption (kube breaks the tie by its map order):
    both are possible nominations; an earlier start time makes the other node the only one."""
    tied = _ties_doc([T0, T0, ts(5)])
    assert tied["nominated_node"] == "n2" and "possible_nominations" not in tied
    tied = _ties_doc([T0, T0])
    assert tied["nominated_node"] in ("n0", "n1")
    assert tied["possible_nominations"] == [{"node": "n0", "victims": ["default/low-0"]},
                                            {"node": "n1", "victims": ["default/low-1"]}]
