"""kube's tainttoleration/taint_toleration_test.go, TestTaintTolerationScore and TestTaintTolerationFilter, case
by case: PreScore over the nodes, Score per node, NormalizeScore; Filter on one NodeInfo (code and message)."""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.tainttoleration import TaintToleration

from .plugin_cases import SUCCESS, handle, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go"
UPSTREAM_VERSION = ("v1.30-v1.31 era (index id 145891250: Score by node name, internal/cache, messages "
                    "'untolerated taint {key: value}'); the newest file (v1.35, comparison operators, message "
                    "'untolerated taint(s)') was read too, its added cases are later features")
UPSTREAM_CASES = 14
UPSTREAM_NOT_TRANSLATED = {
    "TestIsSchedulableAfterNodeChange, Test_isSchedulableAfterPodChange": "6 + 5 queueing-hint cases; "
    "SchedulerQueueingHints is off in v1.30 and scheduler_core has no queueing hints",
}

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
PREFER = "PreferNoSchedule"


def pod(tolerations):
    """podWithTolerations("pod1", tolerations)."""
    w = make_pod().name("pod1")
    w.raw["spec"]["tolerations"] = [dict(t) for t in tolerations]
    return w


def node(name, taints):
    """nodeWithTaints(name, taints)."""
    return make_node().name(name).taints(taints)


def t(key, value, effect, operator=None):
    out = {"key": key, "value": value, "effect": effect}
    if operator is not None:
        out["operator"] = operator
    return out


def tol(key, value="", effect="", operator=""):
    out = {"key": key}
    if operator:
        out["operator"] = operator
    if value:
        out["value"] = value
    if effect:
        out["effect"] = effect
    return out


ARM = t("cpu-type", "arm64", PREFER)
SSD = t("disk-type", "ssd", PREFER)

SCORE = [
    ("node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
     pod([tol("foo", "bar", PREFER, "Equal")]),
     [node("nodeA", [t("foo", "bar", PREFER)]), node("nodeB", [t("foo", "blah", PREFER)])],
     [("nodeA", 100), ("nodeB", 0)]),
    ("the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable "
     "taints a node has",
     pod([tol("cpu-type", "arm64", PREFER, "Equal"), tol("disk-type", "ssd", PREFER, "Equal")]),
     [node("nodeA", []), node("nodeB", [ARM]), node("nodeC", [ARM, SSD])],
     [("nodeA", 100), ("nodeB", 100), ("nodeC", 100)]),
    ("the more intolerable taints a node has, the lower score it gets.",
     pod([tol("foo", "bar", PREFER, "Equal")]),
     [node("nodeA", []), node("nodeB", [ARM]), node("nodeC", [ARM, SSD])],
     [("nodeA", 100), ("nodeB", 50), ("nodeC", 0)]),
    ("only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority "
     "function",
     pod([tol("cpu-type", "arm64", "NoSchedule", "Equal"), tol("disk-type", "ssd", "NoSchedule", "Equal")]),
     [node("nodeA", []), node("nodeB", [t("cpu-type", "arm64", "NoSchedule")]), node("nodeC", [ARM, SSD])],
     [("nodeA", 100), ("nodeB", 100), ("nodeC", 0)]),
    ("Default behaviour No taints and tolerations, lands on node with no taints",
     pod([]), [node("nodeA", []), node("nodeB", [ARM])], [("nodeA", 100), ("nodeB", 0)]),
]


@pytest.mark.parametrize("p, nodes, want", [c[1:] for c in SCORE], ids=[c[0] for c in SCORE])
def test_taint_toleration_score(p, nodes, want):
    h = handle([n.obj() for n in nodes])
    pl, state, q = TaintToleration.new(None, h), new_state(), p.obj()
    assert pl.pre_score(state, q, h.snapshot.node_infos) is None
    got = []
    for ni in h.snapshot.node_infos:
        score, st = pl.score(state, q, ni)
        assert st is None
        got.append([ni.name, score])
    assert pl.normalize_score(state, q, got) is None
    assert [tuple(x) for x in got] == want


def untolerated(key, value):
    return (UU, [f"node(s) had untolerated taint {{{key}: {value}}}"])


DEDICATED_USER1 = [t("dedicated", "user1", "NoSchedule")]
FOO_BAR = [t("foo", "bar", "NoSchedule")]

FILTER = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints", pod([]),
     node("nodeA", DEDICATED_USER1), untolerated("dedicated", "user1")),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     pod([tol("dedicated", "user1", "NoSchedule")]), node("nodeA", DEDICATED_USER1), SUCCESS),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     pod([tol("dedicated", "user2", "NoSchedule", "Equal")]), node("nodeA", DEDICATED_USER1),
     untolerated("dedicated", "user1")),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the "
     "node", pod([tol("foo", effect="NoSchedule", operator="Exists")]), node("nodeA", FOO_BAR), SUCCESS),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled "
     "onto the node",
     pod([tol("dedicated", "user2", "NoSchedule", "Equal"), tol("foo", effect="NoSchedule", operator="Exists")]),
     node("nodeA", [t("dedicated", "user2", "NoSchedule"), t("foo", "bar", "NoSchedule")]), SUCCESS),
    ("A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, "
     "can't be scheduled onto the node", pod([tol("foo", "bar", PREFER, "Equal")]), node("nodeA", FOO_BAR),
     untolerated("foo", "bar")),
    ("The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, "
     "and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
     pod([tol("foo", "bar", operator="Equal")]), node("nodeA", FOO_BAR), SUCCESS),
    ("The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node "
     "is PreferNoSchedule. Pod can be scheduled onto the node", pod([tol("dedicated", "user2", "NoSchedule", "Equal")]),
     node("nodeA", [t("dedicated", "user1", PREFER)]), SUCCESS),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the "
     "node", pod([]), node("nodeA", [t("dedicated", "user1", PREFER)]), SUCCESS),
]


@pytest.mark.parametrize("p, n, want", [c[1:] for c in FILTER], ids=[c[0] for c in FILTER])
def test_taint_toleration_filter(p, n, want):
    got = TaintToleration.new(None, None).filter(None, p.obj(), node_info(n.obj()))
    assert status_tuple(got) == want
