"""1.36's sorted node scores and OpportunisticBatching: v1.36.2's schedule_one_test.go Test_SelectHost (and the
host found without building the heap), framework/runtime/batch_test.go TestBatchBasic, SignPod on the in-tree
plugins, and the loop with batching."""
import random

import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.framework.batch import OpportunisticBatch, SortedNodeScores, heap_first, sign_pod
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.status import Code, Status
from scheduler_core.objects import Pod
from scheduler_core.scheduler import Scheduler
from scheduler_core.trace import CallbackSink
from tests.core.loop_fixtures import node, pod_raw
from tests.core.test_scheduler import REGISTRY


# -- Test_SelectHost ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("nodes, want", [
    ([("node1", 1, 0), ("node2", 2, 0)], ["node2", "node1"]),
    ([("node2.2", 2, 2), ("node2.1", 2, 1), ("node2.3", 2, 3)], ["node2.3", "node2.2", "node2.1"]),
    ([("node3.1", 3, 1), ("node2.1", 2, 0), ("node1.1", 1, 0), ("node3.2", 3, 2)],
     ["node3.2", "node3.1", "node2.1", "node1.1"]),
])
def test_sorted_node_scores(nodes, want):
    h = SortedNodeScores([n for n, _t, _r in nodes], [t for _n, t, _r in nodes], [r for _n, _t, r in nodes])
    assert [h.pop() for _ in nodes] == want and len(h) == 0


def test_sorted_node_scores_ties_without_randomizer_follow_the_heap():
    # without an extender every Randomizer is 0: the heap leaves the ties in an order that follows the input
    names = ["a", "b", "c", "d", "e"]
    h = SortedNodeScores(names, [5, 7, 7, 3, 7])
    assert [h.pop() for _ in names] == ["b", "e", "c", "a", "d"]
    by_name = SortedNodeScores(names, [5, 7, 7, 3, 7], by_name=True)
    assert [by_name.pop() for _ in names] == ["b", "c", "e", "a", "d"]


def test_heap_first_is_the_first_pop():
    rng = random.Random(7)
    for trial in range(500):
        n = rng.randint(1, 70)
        totals = [rng.randint(0, 4) for _ in range(n)]
        randomizers = [rng.randint(0, 3) for _ in range(n)] if trial % 2 else None
        assert heap_first(totals, randomizers) == SortedNodeScores(list(range(n)), totals, randomizers).pop()


# -- TestBatchBasic -----------------------------------------------------------------------------------------
class Nodes(list):
    def pop(self):
        return list.pop(self, 0)


class FakeFramework:
    """Filter rejects "blocking" pods on every node (the node chosen last is full for them)."""

    def run_filter(self, state, pod, node_info):
        return Status(Code.UNSCHEDULABLE, "full") if pod.name.startswith("blocking") else None


class FakeSnapshot:
    def get(self, name):
        return object()


def pod(name):
    return Pod(pod_raw(name))


@pytest.mark.parametrize("first, first_sig, scheduled, chosen, others, skip, second, second_sig, want, left", [
    ("blocking1", "sig", True, "n3", ["n1"], False, "blocking2", "sig", "n1", None),
    ("free1", "sig", True, "n3", ["n1"], False, "free2", "sig2", "", None),
    ("free1", "sig", True, "n3", ["n1"], False, "free2", "sig", "", None),       # not 1-pod-per-node
    ("blocking1", "sig", False, "n3", ["n1"], False, "blocking2", "sig", "", None),
    ("blocking1", "sig", True, "n3", [], False, "blocking2", "sig", "", None),    # empty list
    ("blocking1", "sig", True, "n3", None, False, "blocking2", "sig", "", None),  # nil list
    ("blocking1", "sig", True, "n3", ["n1"], True, "blocking2", "sig", "", None),  # another profile's pod between
    ("blocking1", "sig", True, "n3", ["n1", "n2"], False, "blocking2", "sig", "n1", ["n2"]),
])
def test_batch_basic(first, first_sig, scheduled, chosen, others, skip, second, second_sig, want, left):
    batch = OpportunisticBatch(FakeFramework())
    state = CycleState()
    assert batch.node_hint(pod(first), first_sig, state, 1, FakeSnapshot(), 0.0) == ""
    if scheduled:
        batch.store(first_sig, "", chosen, Nodes(others) if others is not None else None, 1, 0.0)
    cycle = 3 if skip else 2
    hint = batch.node_hint(pod(second), second_sig, state, cycle, FakeSnapshot(), 0.1)
    assert hint == want
    batch.store(second_sig, hint, "n1" if want or not others else "n4", None, cycle, 0.1)
    if left is None:
        assert not batch.sorted_nodes
    else:
        assert batch.signature == "sig" and list(batch.sorted_nodes) == left


def test_batch_expires_after_half_a_second():
    batch = OpportunisticBatch(FakeFramework())
    batch.store("sig", "", "n3", Nodes(["n1"]), 1, 10.0)
    assert batch.node_hint(pod("blocking2"), "sig", CycleState(), 2, FakeSnapshot(), 10.6) == ""


# -- SignPod ------------------------------------------------------------------------------------------------
def framework(multi_point_disabled=(), version="1.36"):
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
                           "disabled": [{"name": n} for n in multi_point_disabled]}}}]},
                      REGISTRY, kube_version=version)
    cluster = SimulatedCluster([node("n1")], [], clock=FakeClock(0.0))
    return Scheduler(cluster, cfg, registry=REGISTRY, tie_break="name").profiles["default-scheduler"]


def test_default_profile_signs_no_pod():
    # PodTopologySpread's system default constraints leave every pod unsignable
    assert sign_pod(framework(), pod("a")) is None


def test_signatures_of_alike_and_different_pods():
    fwk = framework(["PodTopologySpread"])
    a = pod_raw("a")
    a["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "x"}}]
    b = pod_raw("b")
    b["spec"]["tolerations"] = []
    assert sign_pod(fwk, Pod(a)) is not None and sign_pod(fwk, Pod(a)) == sign_pod(fwk, Pod(b))
    assert sign_pod(fwk, Pod(pod_raw("c", cpu="200m"))) != sign_pod(fwk, Pod(a))
    assert sign_pod(fwk, Pod(pod_raw("d", labels={"app": "x"}))) != sign_pod(fwk, Pod(a))
    anti = pod_raw("e", affinity={"podAntiAffinity": {}})
    assert sign_pod(fwk, Pod(anti)) is None


# -- the loop -----------------------------------------------------------------------------------------------
def loop(gates=None):
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
                           "disabled": [{"name": "PodTopologySpread"}]}}}]},
                      REGISTRY, kube_version="1.36", feature_gates=gates)
    nodes = [node(f"n{i}", cpu="1") for i in range(5)]
    pending = [Pod(pod_raw(f"p{i}", cpu="600m")) for i in range(6)]
    cluster = SimulatedCluster(nodes, pending, clock=FakeClock(0.0))
    traces = []
    sched = Scheduler(cluster, cfg, registry=REGISTRY, clock=cluster.clock, tie_break="name",
                      trace_sink=CallbackSink(traces.append))
    sched.run_until_idle()
    return cluster, sched, traces


def test_batching_reuses_the_order_and_places_alike():
    cluster, sched, traces = loop()
    plain, _s, plain_traces = loop({"OpportunisticBatching": False})
    assert cluster.placements() == plain.placements()
    hints = [t.node_hint for t in traces]
    assert hints[0] == "" and all(hints[1:5]) and [t.num_nodes for t in traces[1:5]] == [-1] * 4
    assert not any(t.node_hint for t in plain_traces)
    assert sched.profiles["default-scheduler"].batch.batched_pods == 4
    assert traces[5].status_code == "Unschedulable"


# -- out-of-tree plugins ------------------------------------------------------------------------------------
def test_an_out_of_tree_plugin_signs_only_when_it_can():
    from scheduler_core.framework.guard import guard_class
    from scheduler_core.framework.interface import FilterPlugin

    class Plain(FilterPlugin):
        name = "Plain"

        def filter(self, state, pod, node_info):
            return None

    class Signing(Plain):
        def __init__(self, fragments=None):
            self.fragments = fragments

        def sign_pod(self, pod):
            return self.fragments, None

    assert getattr(guard_class("Plain", Plain)(Plain()), "sign_pod", None) is None
    signing = guard_class("Signing", Signing)
    assert signing(Signing([("k", [1, 2])])).sign_pod(pod("a")) == ([("k", [1, 2])], None)
    _f, st = signing(Signing([("k", object())])).sign_pod(pod("a"))
    assert st.code == Code.ERROR and "not JSON" in st.message()
    _f, st = signing(Signing([("k",)])).sign_pod(pod("a"))
    assert st.code == Code.ERROR and "want a pair" in st.message()
