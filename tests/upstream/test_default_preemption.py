"""kube's defaultpreemption/default_preemption_test.go, case by case: TestPostFilter, TestDryRunPreemption,
TestSelectBestCandidate, TestPodEligibleToPreemptOthers and TestPreempt (its first Preempt call; kube's second call
only checks that no victim is left to delete, which it ensures by emptying its set of deleted pods first).

TestPostFilter's framework is kube's test one: PrioritySort, NodeResourcesFit (PreFilter and Filter), "test-plugin"
(a PreFilter whose AddPod / RemovePod fail on nodes labelled error=true), DefaultBinder, and DefaultPreemption with
default args; its extender is kube's FakeExtender with Node1PredicateExtender (in preemption it keeps node1 only).
These are all the test functions of the file read.
"""
import random

import pytest

from scheduler_core.extender import ExtenderError
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import FilterPlugin, PreFilterExtensions, PreFilterPlugin
from scheduler_core.framework.preemption import PDB, Evaluator
from scheduler_core.framework.profile import new_framework
from scheduler_core.framework.status import Code, Status
from scheduler_core.plugins.registry import in_tree_registry

from .plugin_cases import make_node, make_pod, snapshot

UPSTREAM = "pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go"
UPSTREAM_VERSION = ("v1.31 era (commit 5def93b1: internal/cache, NodeToStatusMap, FactoryAdapter); the v1.30 file "
                    "could not be read")
UPSTREAM_CASES = 51

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
U = Status(Code.UNSCHEDULABLE)
UU = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class ErrorOnLabelledNodes(PreFilterPlugin, PreFilterExtensions):
    """kube's TestPlugin: AddPod / RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    @classmethod
    def new(cls, args, handle):
        return cls()

    def pre_filter(self, state, pod):
        return None, None

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        if node_info.node.labels.get("error") == "true":
            return Status.error(f"failed to add pod: {pod_to_schedule.name}")
        return None

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        if node_info.node.labels.get("error") == "true":
            return Status.error(f"failed to remove pod: {pod_to_schedule.name}")
        return None


class Node1PredicateExtender:
    """tf.FakeExtender with Node1PredicateExtender: a preempting extender that keeps only node1's candidate."""

    ignorable = False

    def supports_preemption(self):
        return True

    def is_interested(self, pod):
        return True

    def process_preemption(self, pod, node_to_victims):
        return {n: v for n, v in node_to_victims.items() if n == "node1"}


def post_filter(pod, pods, nodes, statuses, extender=None):
    """RunPreFilterPlugins, then DefaultPreemption.PostFilter: (nominated node or None for no result, status)."""
    h = Handle(snapshot=snapshot([n.obj() for n in nodes], [q.obj() for q in pods]))
    h.rng = random.Random(0)  # the random start offset of the dry run (the expectations do not depend on it)
    if extender is not None:
        h.extenders = [extender]
    registry = dict(in_tree_registry(), **{"test-plugin": ErrorOnLabelledNodes})
    points = {"QueueSort": [("PrioritySort", 0)], "PreFilter": [("NodeResourcesFit", 0), ("test-plugin", 0)],
              "Filter": [("NodeResourcesFit", 0)], "PostFilter": [("DefaultPreemption", 0)],
              "Bind": [("DefaultBinder", 0)]}
    fwk = new_framework("default-scheduler", points, {}, registry, h)
    state, p = CycleState(), pod.obj()
    _res, st = fwk.run_pre_filter(state, p)
    assert st is None
    result, st = fwk.get_plugin("DefaultPreemption").post_filter(state, p, statuses)
    nominated = None if result is None or result.mode == "noop" else result.nominated_node_name
    return nominated, (Code.SUCCESS, []) if st is None else (st.code, list(st.reasons))


def preemptor(prio=None, req=None):
    w = make_pod().name("p").uid("p").namespace("default")
    if prio is not None:
        w.priority(prio)
    return w.req(req) if req else w


def victim(name, node, prio=None, req=None):
    w = make_pod().name(name).uid(name).namespace("default").node(node)
    if prio is not None:
        w.priority(prio)
    return w.req(req) if req else w


def nodes(*spec):
    """(name, capacity, labels) -> nodes."""
    return [make_node().name(n).capacity(c).labels(lbl or {}) for n, c, lbl in spec]


OK = (Code.SUCCESS, [])
# kube (this version) expects "0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for
# scheduling.": node3, absent from the status map, counts as not helped. scheduler_core dry-runs it (v1.30's
# nodesWherePreemptionMightHelp as the semantics reference gives it: every node whose status is not
# UnschedulableAndUnresolvable) and reports "1 No preemption victims found for incoming pod" for it.
ABSENT_NODE_DRIFT = ("drift (version not verified): a node absent from the status map is 'not helpful' in this "
                     "version; v1.30 dry-runs every node whose status is not UnschedulableAndUnresolvable")


def unschedulable(msg):
    return (Code.UNSCHEDULABLE, [f"preemption: {msg}"])


CASES = [
    ("pod with higher priority can be made schedulable", preemptor(HIGH), [victim("p1", "node1")],
     nodes(("node1", ONE_POD, None)), {"node1": U}, None, ("node1", OK)),
    ("pod with tied priority is still unschedulable", preemptor(), [victim("p1", "node1")],
     nodes(("node1", ONE_POD, None)), {"node1": U}, None,
     ("", unschedulable("0/1 nodes are available: 1 No preemption victims found for incoming pod."))),
    ("preemption should respect filteredNodesStatuses", preemptor(HIGH), [victim("p1", "node1")],
     nodes(("node1", ONE_POD, None)), {"node1": UU}, None,
     ("", unschedulable("0/1 nodes are available: 1 Preemption is not helpful for scheduling."))),
    ("pod can be made schedulable on one node", preemptor(MID),
     [victim("p1", "node1", HIGH), victim("p2", "node2", LOW)],
     nodes(("node1", ONE_POD, None), ("node2", ONE_POD, None)), {"node1": U, "node2": U}, None, ("node2", OK)),
    ("preemption result filtered out by extenders", preemptor(HIGH), [victim("p1", "node1"), victim("p2", "node2")],
     nodes(("node1", ONE_POD, None), ("node2", ONE_POD, None)), {"node1": U, "node2": U}, Node1PredicateExtender(),
     ("node1", OK)),
    ("no candidate nodes found, no enough resource after removing low priority pods", preemptor(HIGH, LARGE),
     [victim("p1", "node1"), victim("p2", "node2")],
     nodes(("node1", NODE_RES, None), ("node2", NODE_RES, None)), {"node1": U, "node2": U}, None,
     ("", unschedulable("0/2 nodes are available: 2 Insufficient cpu."))),
    ("no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
     preemptor(HIGH, LARGE), [victim("p1", "node1", HIGH), victim("p2", "node2"), victim("p3", "node3", HIGH)],
     nodes(("node1", ONE_POD, None), ("node2", NODE_RES, None), ("node3", ONE_POD, None)),
     {"node1": U, "node2": U, "node3": U}, None,
     ("", unschedulable("0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for "
                        "incoming pod."))),
    ("no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have "
     "enough CPU resource", preemptor(HIGH, LARGE), [victim("p1", "node1"), victim("p2", "node2")],
     nodes(*[(f"node{i}", NODE_RES, None) for i in range(1, 5)]), {"node1": U, "node2": U, "node4": UU}, None,
     ABSENT_NODE_DRIFT),
    ("only one node but failed with TestPlugin", preemptor(HIGH, LARGE), [victim("p1", "node1")],
     nodes(("node1", LARGE, {"error": "true"})), {"node1": U}, None,
     (None, (Code.ERROR,
             ['preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p']))),
    ("one failed with TestPlugin and the other pass", preemptor(HIGH, LARGE),
     [victim("p1", "node1"), victim("p2", "node2", req=MEDIUM)],
     nodes(("node1", LARGE, {"error": "true"}), ("node2", LARGE, None)), {"node1": U, "node2": U}, None,
     ("node2", OK)),
]


@pytest.mark.parametrize("pod, pods, node_list, statuses, extender, want", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_post_filter(pod, pods, node_list, statuses, extender, want):
    if isinstance(want, str):
        pytest.skip(want)
    assert post_filter(pod, pods, node_list, statuses, extender) == want


# -- TestSelectBestCandidate ----------------------------------------------------------------------------------------

def framework_for(h, filter_plugin="NodeResourcesFit"):
    """kube's tf.NewFramework with one PreFilter+Filter plugin, PrioritySort, DefaultBinder and DefaultPreemption."""
    points = {"QueueSort": [("PrioritySort", 0)], "PreFilter": [(filter_plugin, 0)], "Filter": [(filter_plugin, 0)],
              "PostFilter": [("DefaultPreemption", 0)], "Bind": [("DefaultBinder", 0)]}
    return new_framework("default-scheduler", points, {}, in_tree_registry(), h)


def started(name, node, prio, req, epoch=0):
    """A victim pod started at the Unix epoch plus ``epoch`` nanoseconds (epochTimeN); whole-second RFC 3339 text
    cannot carry nanoseconds, so epoch+N is written as N seconds: only the order of start times matters."""
    return victim(name, node, prio, req).start_time(f"1970-01-01T00:00:{epoch:02d}Z")


SELECT_BEST = [
    ("a pod that fits on both nodes when lower priority pods are preempted", ["node1", "node2"],
     preemptor(HIGH, LARGE), [started("p1", "node1", MID, LARGE), started("p2", "node2", MID, LARGE)],
     ["node1", "node2"]),
    ("node with min highest priority pod is picked", ["node1", "node2", "node3"], preemptor(HIGH, VERY_LARGE),
     [started("p1.1", "node1", MID, MEDIUM), started("p1.2", "node1", MID, LARGE),
      started("p2.1", "node2", MID, MEDIUM),
      started("p2.2", "node2", LOW, MEDIUM), started("p3.1", "node3", LOW, MEDIUM),
      started("p3.2", "node3", LOW, MEDIUM)], ["node3"]),
    ("when highest priorities are the same, minimum sum of priorities is picked", ["node1", "node2", "node3"],
     preemptor(HIGH, VERY_LARGE),
     [started("p1.1", "node1", MID, MEDIUM), started("p1.2", "node1", MID, LARGE), started("p2.1", "node2", MID, LARGE),
      started("p2.2", "node2", LOW, MEDIUM), started("p3.1", "node3", MID, MEDIUM),
      started("p3.2", "node3", MID, MEDIUM)], ["node2"]),
    ("when highest priority and sum are the same, minimum number of pods is picked", ["node1", "node2", "node3"],
     preemptor(HIGH, VERY_LARGE),
     [started("p1.1", "node1", MID, SMALL), started("p1.2", "node1", NEG, SMALL), started("p1.3", "node1", MID, SMALL),
      started("p1.4", "node1", NEG, SMALL), started("p2.1", "node2", MID, LARGE), started("p2.2", "node2", NEG, MEDIUM),
      started("p3.1", "node3", MID, MEDIUM), started("p3.2", "node3", NEG, SMALL),
      started("p3.3", "node3", LOW, SMALL)], ["node2"]),
    ("sum of adjusted priorities is considered", ["node1", "node2", "node3"], preemptor(HIGH, VERY_LARGE),
     [started("p1.1", "node1", MID, SMALL), started("p1.2", "node1", NEG, SMALL), started("p1.3", "node1", NEG, SMALL),
      started("p2.1", "node2", MID, LARGE), started("p2.2", "node2", NEG, MEDIUM),
      started("p3.1", "node3", MID, MEDIUM),
      started("p3.2", "node3", NEG, SMALL), started("p3.3", "node3", LOW, SMALL)], ["node2"]),
    ("non-overlapping lowest high priority, sum priorities, and number of pods", ["node1", "node2", "node3", "node4"],
     preemptor(VERY_HIGH, VERY_LARGE),
     [started("p1.1", "node1", MID, SMALL), started("p1.2", "node1", LOW, SMALL), started("p1.3", "node1", LOW, SMALL),
      started("p2.1", "node2", HIGH, LARGE), started("p3.1", "node3", MID, MEDIUM),
      started("p3.2", "node3", LOW, SMALL),
      started("p3.3", "node3", LOW, SMALL), started("p3.4", "node3", LOW, MEDIUM),
      started("p4.1", "node4", MID, MEDIUM),
      started("p4.2", "node4", MID, SMALL), started("p4.3", "node4", MID, SMALL),
      started("p4.4", "node4", NEG, SMALL)], ["node1"]),
    ("same priority, same number of victims, different start time for each node's pod", ["node1", "node2", "node3"],
     preemptor(HIGH, VERY_LARGE),
     [started("p1.1", "node1", MID, MEDIUM, 2), started("p1.2", "node1", MID, MEDIUM, 2),
      started("p2.1", "node2", MID, MEDIUM, 3), started("p2.2", "node2", MID, MEDIUM, 3),
      started("p3.1", "node3", MID, MEDIUM, 1), started("p3.2", "node3", MID, MEDIUM, 1)], ["node2"]),
    ("same priority, same number of victims, different start time for all pods", ["node1", "node2", "node3"],
     preemptor(HIGH, VERY_LARGE),
     [started("p1.1", "node1", MID, MEDIUM, 4), started("p1.2", "node1", MID, MEDIUM, 2),
      started("p2.1", "node2", MID, MEDIUM, 5), started("p2.2", "node2", MID, MEDIUM, 1),
      started("p3.1", "node3", MID, MEDIUM, 3), started("p3.2", "node3", MID, MEDIUM, 6)], ["node3"]),
    ("different priority, same number of victims, different start time for all pods", ["node1", "node2", "node3"],
     preemptor(HIGH, VERY_LARGE),
     [started("p1.1", "node1", LOW, MEDIUM, 4), started("p1.2", "node1", MID, MEDIUM, 2),
      started("p2.1", "node2", MID, MEDIUM, 6), started("p2.2", "node2", LOW, MEDIUM, 1),
      started("p3.1", "node3", LOW, MEDIUM, 3), started("p3.2", "node3", MID, MEDIUM, 5)], ["node2"]),
]


@pytest.mark.parametrize("node_names, pod, pods, expected", [c[1:] for c in SELECT_BEST],
                         ids=[c[0] for c in SELECT_BEST])
def test_select_best_candidate(node_names, pod, pods, expected):
    h = Handle(snapshot=snapshot([make_node().name(n).capacity(VERY_LARGE).obj() for n in node_names],
                                 [q.obj() for q in pods]))
    h.rng = random.Random(4)
    fwk = framework_for(h)
    state, p = CycleState(), pod.obj()
    assert fwk.run_pre_filter(state, p)[1] is None
    plugin = fwk.get_plugin("DefaultPreemption")
    ev = Evaluator(h, plugin)
    nodes = h.snapshot.node_infos
    offset, num = plugin.get_offset_and_num_candidates(len(nodes))
    candidates, _statuses, err = ev.dry_run_preemption(state, p, nodes, [], offset, num)
    assert err is None
    best = ev.select_candidate(candidates)
    assert best is not None and best.name in expected


# -- TestPodEligibleToPreemptOthers ---------------------------------------------------------------------------------

TAINT_NOT_MATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)")
ELIGIBLE = [
    ("Pod with nominated node", make_pod().name("p_with_nominated_node").uid("p").priority(HIGH)
     .nominated_node_name("node1"), [make_pod().name("p1").uid("p1").priority(LOW).node("node1").terminating()],
     ["node1"], TAINT_NOT_MATCH, True),
    ("Pod without nominated node", make_pod().name("p_without_nominated_node").uid("p").priority(HIGH), [], [], None,
     True),
    ("Pod with 'PreemptNever' preemption policy", make_pod().name("p_with_preempt_never_policy").uid("p")
     .priority(HIGH).preemption_policy("Never"), [], [], None, False),
    ("preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
     make_pod().name("p_with_nominated_node").uid("p").priority(HIGH).nominated_node_name("node1"),
     [make_pod().name("p1").uid("p1").priority(LOW).node("node1").terminating()
      .condition("DisruptionTarget", "True", "PreemptionByScheduler")], ["node1"], None, False),
    ("non-victim Pods terminating", make_pod().name("p_with_nominated_node").uid("p").priority(HIGH)
     .nominated_node_name("node1"), [make_pod().name("p1").uid("p1").priority(LOW).node("node1").terminating()],
     ["node1"], None, True),
]


@pytest.mark.parametrize("pod, pods, node_names, nominated_status, expected", [c[1:] for c in ELIGIBLE],
                         ids=[c[0] for c in ELIGIBLE])
def test_pod_eligible_to_preempt_others(pod, pods, node_names, nominated_status, expected):
    h = Handle(snapshot=snapshot([make_node().name(n).obj() for n in node_names], [q.obj() for q in pods]))
    plugin = framework_for(h).get_plugin("DefaultPreemption")
    assert plugin.pod_eligible_to_preempt_others(pod.obj(), nominated_status)[0] is expected


# -- TestPreempt ----------------------------------------------------------------------------------------------------

class FakeExtender:
    """kube's tf.FakeExtender in preemption: a node stays a candidate when the predicate accepts it ("true": every
    node, "node1": node1 only, "false": none; "error": the call fails)."""

    def __init__(self, predicate, ignorable=False, interested=True):
        self.predicate = predicate
        self.ignorable = ignorable
        self.interested = interested

    def supports_preemption(self):
        return True

    def ignores(self, err):
        return self.ignorable

    def is_interested(self, pod):
        return self.interested

    def process_preemption(self, pod, node_to_victims):
        if self.predicate == "error":
            raise ExtenderError("some error")
        keep = {"true": lambda n: True, "node1": lambda n: n == "node1", "false": lambda n: False}[self.predicate]
        return {n: v for n, v in node_to_victims.items() if keep(n)}


class RecordingClient:
    """Records the victims the preemption deletes (kube's fake clientset delete reactor)."""

    def __init__(self):
        self.deleted = []

    def evict(self, victim, preemptor_uid, node_name):
        self.deleted.append(victim.name)
        return None

    def clear_nomination(self, pod):
        pass


def split_node(spec):
    """"node-a/zone1" -> a node named node-a labelled hostname=node-a, zone=zone1 (kube's labelKeys order)."""
    labels = dict(zip(("hostname", "zone", "region"), spec.split("/")))
    return make_node().name(labels["hostname"]).capacity(VERY_LARGE).labels(labels)


def ns_victim(name, node, prio, req=None, **labels):
    return victim(name, node, prio, req).labels(labels)


def preempting(prio=HIGH, req=VERY_LARGE, policy=None, **labels):
    w = preemptor(prio, req).labels(labels)
    return w.preemption_policy(policy) if policy else w


N123 = ["node1", "node2", "node3"]
BASIC_PODS = [ns_victim("p1.1", "node1", LOW, SMALL), ns_victim("p1.2", "node1", LOW, SMALL),
              ns_victim("p2.1", "node2", HIGH, LARGE), ns_victim("p3.1", "node3", MID, MEDIUM)]
EXT_PODS = [ns_victim("p1.1", "node1", MID, SMALL), ns_victim("p1.2", "node1", LOW, SMALL),
            ns_victim("p2.1", "node2", MID, LARGE)]
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}

PREEMPT = [
    ("basic preemption logic", preempting(policy="PreemptLowerPriority"), BASIC_PODS, [], N123, "NodeResourcesFit",
     "node1", ["p1.1", "p1.2"]),
    ("preemption for topology spread constraints",
     preemptor(HIGH).label("foo", "").spread_constraint(1, "zone", "DoNotSchedule", FOO)
     .spread_constraint(1, "hostname", "DoNotSchedule", FOO),
     [ns_victim("p-a1", "node-a", HIGH, foo=""), ns_victim("p-a2", "node-a", HIGH, foo=""),
      ns_victim("p-b1", "node-b", LOW, foo=""), ns_victim("p-x1", "node-x", HIGH, foo=""),
      ns_victim("p-x2", "node-x", HIGH, foo="")], [], ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
     "PodTopologySpread", "node-b", ["p-b1"]),
    ("Scheduler extenders allow only node1, otherwise node3 would have been chosen",
     preempting(policy="PreemptLowerPriority"),
     [ns_victim("p1.1", "node1", MID, SMALL), ns_victim("p1.2", "node1", LOW, SMALL),
      ns_victim("p2.1", "node3", MID, LARGE)], [FakeExtender("true"), FakeExtender("node1")], N123,
     "NodeResourcesFit", "node1", ["p1.1", "p1.2"]),
    ("Scheduler extenders do not allow any preemption", preempting(policy="PreemptLowerPriority"), EXT_PODS,
     [FakeExtender("false")], N123, "NodeResourcesFit", None, []),
    ("One scheduler extender allows only node1, the other returns error but ignorable. Only node1 would be chosen",
     preempting(policy="PreemptLowerPriority"), EXT_PODS, [FakeExtender("error", ignorable=True),
                                                            FakeExtender("node1")], N123,
     "NodeResourcesFit", "node1", ["p1.1", "p1.2"]),
    ("One scheduler extender allows only node1, but it is not interested in given pod, otherwise node1 would have "
     "been chosen", preempting(policy="PreemptLowerPriority"), EXT_PODS,
     [FakeExtender("node1", interested=False), FakeExtender("true")], ["node1", "node2"], "NodeResourcesFit", "node2",
     ["p2.1"]),
    ("no preempting in pod", preempting(policy="Never"), BASIC_PODS, [], N123, "NodeResourcesFit", None, []),
    ("PreemptionPolicy is nil", preempting(), BASIC_PODS, [], N123, "NodeResourcesFit", "node1", ["p1.1", "p1.2"]),
]


@pytest.mark.parametrize("pod, pods, extenders, node_names, filter_plugin, want_node, want_deleted",
                         [c[1:] for c in PREEMPT], ids=[c[0] for c in PREEMPT])
def test_preempt(pod, pods, extenders, node_names, filter_plugin, want_node, want_deleted):
    client = RecordingClient()
    h = Handle(snapshot=snapshot([split_node(n).obj() for n in node_names], [q.obj() for q in pods]), client=client)
    h.rng = random.Random(4)
    h.extenders = list(extenders)
    fwk = framework_for(h, filter_plugin)
    state, p = CycleState(), pod.obj()
    assert fwk.run_pre_filter(state, p)[1] is None
    statuses = {ni.name: Status(Code.UNSCHEDULABLE) for ni in h.snapshot.node_infos}
    result, st = fwk.get_plugin("DefaultPreemption").post_filter(state, p, statuses)
    assert st is None or st.code in (Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    got_node = result.nominated_node_name if result is not None and result.mode != "noop" else None
    assert (got_node or None, sorted(client.deleted)) == (want_node, sorted(want_deleted))


# -- TestDryRunPreemption -------------------------------------------------------------------------------------------

class CountingFilter(FilterPlugin):
    """kube's tf.FakeFilterPlugin ("FakeFilter"): counts its Filter calls; returns ``code`` (Success by default) on
    every node."""

    name = "FakeFilter"
    code = Code.SUCCESS
    calls = 0

    @classmethod
    def new(cls, args, handle):
        return cls()

    def filter(self, state, pod, node_info):
        type(self).calls += 1
        if self.code == Code.SUCCESS:
            return None
        return Status(self.code, f"injecting failure for pod {pod.name}")


class FalseFilter(FilterPlugin):
    name = "FalseFilter"

    @classmethod
    def new(cls, args, handle):
        return cls()

    def filter(self, state, pod, node_info):
        return Status(Code.UNSCHEDULABLE, "injecting failure for pod " + pod.name)


class TrueFilter(FalseFilter):
    name = "TrueFilter"

    def filter(self, state, pod, node_info):
        return None


class MatchFilter(FalseFilter):
    """Fits only the node named like the pod."""

    name = "MatchFilter"

    def filter(self, state, pod, node_info):
        return None if pod.name == node_info.name else Status(Code.UNSCHEDULABLE, "pod name doesn't match node name")


FAKES = {c.name: c for c in (CountingFilter, FalseFilter, TrueFilter, MatchFilter)}


def dry_run(node_names, pods, init_pods, plugins, fake_code, pdbs, args, offsets):
    """Per preemptor: (candidates as (node, sorted victims, PDB violations) sorted by node, FakeFilter calls)."""
    CountingFilter.code, CountingFilter.calls = fake_code, 0
    h = Handle(snapshot=snapshot([split_node(n).obj() for n in node_names], [q.obj() for q in init_pods]))
    h.rng = random.Random(4)
    registry = dict(in_tree_registry(), **FAKES)
    pre = [(n, 0) for n in plugins if n not in FAKES]
    points = {"QueueSort": [("PrioritySort", 0)], "PreFilter": pre,
              "Filter": [("FakeFilter", 0)] + [(n, 0) for n in plugins], "PostFilter": [("DefaultPreemption", 0)],
              "Bind": [("DefaultBinder", 0)]}
    fwk = new_framework("default-scheduler", points, {"DefaultPreemption": args or {}}, registry, h)
    plugin = fwk.get_plugin("DefaultPreemption")
    out = []
    for cycle, pod in enumerate(pods):
        state, p = CycleState(), pod.obj()
        assert fwk.run_pre_filter(state, p)[1] is None
        before = CountingFilter.calls
        nodes = h.snapshot.node_infos
        offset, num = plugin.get_offset_and_num_candidates(len(nodes))
        offset = offsets[cycle] if offsets else offset  # kube's offsets come from Go's rand.Seed(4)
        cands, _statuses, _err = Evaluator(h, plugin).dry_run_preemption(
            state, p, nodes, [PDB(raw) for raw in pdbs], offset, num)
        got = sorted((c.name, sorted(v.name for v in c.victims), c.num_pdb_violations) for c in cands)
        out.append((got, CountingFilter.calls - before))
    return out


def dr_pod(name, node="", prio=None, req=None, start=None, **labels):
    w = make_pod().name(name).uid(name).labels(labels)
    if node:
        w.node(node)
    if prio is not None:
        w.priority(prio)
    if req:
        w.req(req)
    return w.start_time(f"1970-01-01T00:00:{start:02d}Z") if start is not None else w


def pdb(allowed, disrupted=()):
    return {"metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "foo"}}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": {d: "2024-01-01T00:00:00Z" for d in disrupted}}}


NRF = ["NodeResourcesFit"]
N12 = ["node1", "node2"]
N15 = [f"node{i}" for i in range(1, 6)]
LIMIT_2 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
MID_ON_1_2 = [dr_pod("p1", "node1", MID), dr_pod("p2", "node2", MID)]
LARGE_MID_ON_1_2 = [dr_pod("p1", "node1", MID, LARGE), dr_pod("p2", "node2", MID, LARGE)]
PDB_PODS = [dr_pod("p1.1", "node1", MID, MEDIUM, app="foo"), dr_pod("p1.2", "node1", MID, MEDIUM, app="foo")]
U_CODE = Code.UNSCHEDULABLE
FOO_SELECTOR = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}

# (name, node names, preemptors, initial pods, plugins, FakeFilter code, PDBs, args, offsets, expected per cycle)
DRY_RUN = [
    ("a pod that does not fit on any node", N12, [dr_pod("p", prio=HIGH)], MID_ON_1_2, ["FalseFilter"],
     Code.SUCCESS, [], None, None, [([], 2)]),
    ("a pod that fits with no preemption", N12, [dr_pod("p", prio=HIGH)], MID_ON_1_2, ["TrueFilter"], U_CODE, [],
     None, None, [([], 2)]),
    ("a pod that fits on one node with no preemption", N12, [dr_pod("node1", prio=HIGH)], MID_ON_1_2,
     ["MatchFilter"], U_CODE, [], None, None, [([], 2)]),
    ("a pod that fits on both nodes when lower priority pods are preempted", N12, [dr_pod("p", prio=HIGH, req=LARGE)],
     LARGE_MID_ON_1_2, NRF, Code.SUCCESS, [], None, None, [([("node1", ["p1"], 0), ("node2", ["p2"], 0)], 4)]),
    ("a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen", N12,
     [dr_pod("p", prio=LOW, req=LARGE)], LARGE_MID_ON_1_2, NRF, Code.SUCCESS, [], None, None, [([], 0)]),
    ("medium priority pod is preempted, but lower priority one stays as it is small", N12,
     [dr_pod("p", prio=HIGH, req=LARGE)],
     [dr_pod("p1.1", "node1", LOW, SMALL), dr_pod("p1.2", "node1", MID, LARGE), dr_pod("p2", "node2", MID, LARGE)],
     NRF, Code.SUCCESS, [], None, None, [([("node1", ["p1.2"], 0), ("node2", ["p2"], 0)], 5)]),
    ("mixed priority pods are preempted", N12, [dr_pod("p", prio=HIGH, req=LARGE)],
     [dr_pod("p1.1", "node1", MID, SMALL), dr_pod("p1.2", "node1", LOW, SMALL), dr_pod("p1.3", "node1", MID, MEDIUM),
      dr_pod("p1.4", "node1", HIGH, SMALL), dr_pod("p2", "node2", HIGH, LARGE)], NRF, Code.SUCCESS, [], None, None,
     [([("node1", ["p1.2", "p1.3"], 0)], 4)]),
    ("mixed priority pods are preempted, pick later StartTime one when priorities are equal", N12,
     [dr_pod("p", prio=HIGH, req=LARGE)],
     [dr_pod("p1.1", "node1", LOW, SMALL, 5), dr_pod("p1.2", "node1", LOW, SMALL, 4),
      dr_pod("p1.3", "node1", MID, MEDIUM, 3), dr_pod("p1.4", "node1", HIGH, SMALL, 2),
      dr_pod("p2", "node2", HIGH, LARGE, 1)], NRF, Code.SUCCESS, [], None, None,
     [([("node1", ["p1.1", "p1.3"], 0)], 4)]),
    ("pod with anti-affinity is preempted", N12, [dr_pod("p", prio=HIGH, req=SMALL, foo="")],
     [dr_pod("p1.1", "node1", LOW, SMALL, foo="").pod_anti_affinity_exists("foo", "hostname"),
      dr_pod("p1.2", "node1", MID, SMALL), dr_pod("p1.3", "node1", HIGH, SMALL), dr_pod("p2", "node2", HIGH, SMALL)],
     ["NodeResourcesFit", "InterPodAffinity"], Code.SUCCESS, [], None, None, [([("node1", ["p1.1"], 0)], 3)]),
    ("preemption to resolve pod topology spread filter failure", ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
     [dr_pod("p", prio=HIGH, foo="").spread_constraint(1, "zone", "DoNotSchedule", FOO_SELECTOR)
      .spread_constraint(1, "hostname", "DoNotSchedule", FOO_SELECTOR)],
     [dr_pod("pod-a1", "node-a", MID, foo=""), dr_pod("pod-a2", "node-a", LOW, foo=""),
      dr_pod("pod-b1", "node-b", LOW, foo=""), dr_pod("pod-x1", "node-x", HIGH, foo=""),
      dr_pod("pod-x2", "node-x", HIGH, foo="")], ["PodTopologySpread"], Code.SUCCESS, [], None, None,
     [([("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)], 5)]),
    ("get Unschedulable in the preemption phase when the filter plugins filtering the nodes", N12,
     [dr_pod("p", prio=HIGH, req=LARGE)], LARGE_MID_ON_1_2, NRF, U_CODE, [], None, None, [([], 2)]),
    ("preemption with violation of same pdb", ["node1"], [dr_pod("p", prio=HIGH, req=VERY_LARGE)], PDB_PODS, NRF,
     Code.SUCCESS, [pdb(1)], None, None, [([("node1", ["p1.1", "p1.2"], 1)], 3)]),
    ("preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to "
     "DisruptedPods", ["node1"], [dr_pod("p", prio=HIGH, req=VERY_LARGE)], PDB_PODS, NRF, Code.SUCCESS,
     [pdb(1, ["p2"])], None, None, [([("node1", ["p1.1", "p1.2"], 1)], 3)]),
    ("preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
     "DisruptedPods", ["node1"], [dr_pod("p", prio=HIGH, req=VERY_LARGE)], PDB_PODS, NRF, Code.SUCCESS,
     [pdb(1, ["p1.2"])], None, None, [([("node1", ["p1.1", "p1.2"], 0)], 3)]),
    ("preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to "
     "DisruptedPods is treated as 'nonViolating'", ["node1"], [dr_pod("p", prio=HIGH, req=VERY_LARGE)],
     PDB_PODS + [dr_pod("p1.3", "node1", MID, MEDIUM, app="foo")], NRF, Code.SUCCESS, [pdb(1, ["p1.3"])], None,
     None, [([("node1", ["p1.1", "p1.2", "p1.3"], 1)], 4)]),
    ("all nodes are possible candidates, but DefaultPreemptionArgs limits to 2", N15,
     [dr_pod("p", prio=HIGH, req=LARGE)], [dr_pod(f"p{i}", f"node{i}", MID, LARGE) for i in range(1, 6)], NRF,
     Code.SUCCESS, [], LIMIT_2, [4], [([("node1", ["p1"], 0), ("node5", ["p5"], 0)], 4)]),
    ("some nodes are not possible candidates, DefaultPreemptionArgs limits to 2", N15,
     [dr_pod("p", prio=HIGH, req=LARGE)],
     [dr_pod(f"p{i}", f"node{i}", VERY_HIGH if i in (2, 5) else MID, LARGE) for i in range(1, 6)], NRF,
     Code.SUCCESS, [], LIMIT_2, [4], [([("node1", ["p1"], 0), ("node3", ["p3"], 0)], 4)]),
    ("preemption offset across multiple scheduling cycles and wrap around", N15,
     [dr_pod(f"tp{i}", prio=HIGH, req=LARGE) for i in (1, 2, 3)],
     [dr_pod(f"p{i}", f"node{i}", MID, LARGE) for i in range(1, 6)], NRF, Code.SUCCESS, [], LIMIT_2, [4, 1, 3],
     [([("node1", ["p1"], 0), ("node5", ["p5"], 0)], 4), ([("node2", ["p2"], 0), ("node3", ["p3"], 0)], 4),
      ([("node4", ["p4"], 0), ("node5", ["p5"], 0)], 4)]),
    ("preemption looks past numCandidates until a non-PDB violating node is found", N15,
     [dr_pod("p", prio=HIGH, req=LARGE)],
     [dr_pod("p1", "node1", MID, LARGE, app="foo"), dr_pod("p2", "node2", MID, LARGE, app="foo"),
      dr_pod("p3", "node3", MID, LARGE), dr_pod("p4", "node4", MID, LARGE),
      dr_pod("p5", "node5", MID, LARGE, app="foo")], NRF, Code.SUCCESS, [pdb(0)],
     {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}, [4],
     [([("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)], 8)]),
]


@pytest.mark.parametrize("node_names, pods, init_pods, plugins, fake_code, pdbs, args, offsets, expected",
                         [c[1:] for c in DRY_RUN], ids=[c[0] for c in DRY_RUN])
def test_dry_run_preemption(node_names, pods, init_pods, plugins, fake_code, pdbs, args, offsets, expected):
    assert dry_run(node_names, pods, init_pods, plugins, fake_code, pdbs, args, offsets) == expected
