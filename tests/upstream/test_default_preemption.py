"""kube's defaultpreemption/default_preemption_test.go, case by case: TestPostFilter.

The framework is kube's test one: PrioritySort, NodeResourcesFit (PreFilter and Filter), "test-plugin" (a PreFilter
whose AddPod / RemovePod fail on nodes labelled error=true), DefaultBinder, and DefaultPreemption with default args.
The extender is kube's FakeExtender with Node1PredicateExtender: in preemption it keeps the candidate node1 only.
"""
import random

import pytest

from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import PreFilterExtensions, PreFilterPlugin
from scheduler_core.framework.profile import new_framework
from scheduler_core.framework.status import Code, Status
from scheduler_core.plugins.registry import in_tree_registry

from .plugin_cases import make_node, make_pod, snapshot

UPSTREAM = "pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go"
UPSTREAM_VERSION = ("v1.31 era (commit 5def93b1: internal/cache, NodeToStatusMap, FactoryAdapter); the v1.30 file "
                    "could not be read")
UPSTREAM_CASES = 10

LOW, MID, HIGH = 0, 100, 1000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
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
