"""kube's nodeaffinity/node_affinity_test.go, TestNodeAffinity and TestNodeAffinityPriority, case by case.

TestNodeAffinity: PreFilter (status and PreFilterResult node names) when the case runs it, then Filter on a node with
the case's name and labels. TestNodeAffinityPriority: PreScore (when run), Score per node, NormalizeScore.
"""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.nodeaffinity import ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD, NodeAffinity

from .plugin_cases import SUCCESS, handle, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go"
UPSTREAM_VERSION = ("v1.28-v1.29 era (commit 022462cc: QueueAfterBackoff hints, PreScore over []*v1.Node, Score by "
                    "node name); the cases translated have the same expectations in v1.30")
UPSTREAM_CASES = 38
UPSTREAM_NOT_TRANSLATED = {
    "Test_isSchedulableAfterNodeChange": "11 queueing-hint cases; SchedulerQueueingHints is off in v1.30 and "
                                         "scheduler_core has no queueing hints",
}

UU_POD = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_POD])
SKIP = (Code.SKIP, [])
NAME = "metadata.name"


def req(key, op, values=None):
    r = {"key": key, "operator": op}
    if values is not None:
        r["values"] = list(values)
    return r


def term(exprs=None, fields=None):
    t = {}
    if exprs is not None:
        t["matchExpressions"] = exprs
    if fields is not None:
        t["matchFields"] = fields
    return t


def required(*terms):
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def pod(node_affinity=None, node_selector=None):
    w = make_pod()
    if node_selector is not None:
        w.raw["spec"]["nodeSelector"] = dict(node_selector)
    if node_affinity is not None:
        w.raw["spec"]["affinity"] = {"nodeAffinity": node_affinity}
    return w


def added(node_affinity):
    return {"addedAffinity": node_affinity}



GPU_AND_NOT_AMD = required(term([req("GPU", "Exists"), req("GPU", "NotIn", ["AMD", "INTER"])]))
NAME_IS_NODE1 = req(NAME, "In", ["node1"])

# (name, pod, node name, labels, args, run PreFilter, want PreFilter status, want PreFilterResult, want Filter)
FILTER = [
    ("missing labels", pod(node_selector={"foo": "bar"}), "", {}, None, True, SUCCESS, None, UU_POD),
    ("same labels", pod(node_selector={"foo": "bar"}), "", {"foo": "bar"}, None, True, SUCCESS, None, SUCCESS),
    ("node labels are superset", pod(node_selector={"foo": "bar"}), "", {"foo": "bar", "baz": "blah"}, None, True,
     SUCCESS, None, SUCCESS),
    ("node labels are subset", pod(node_selector={"foo": "bar", "baz": "blah"}), "", {"foo": "bar"}, None, True,
     SUCCESS, None, UU_POD),
    ("Pod with matchExpressions using In operator that matches the existing node",
     pod(required(term([req("foo", "In", ["bar", "value2"])]))), "", {"foo": "bar"}, None, True, SUCCESS, None,
     SUCCESS),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     pod(required(term([req("kernel-version", "Gt", ["0204"])]))), "", {"kernel-version": "0206"}, None, True,
     SUCCESS, None, SUCCESS),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     pod(required(term([req("mem-type", "NotIn", ["DDR", "DDR2"])]))), "", {"mem-type": "DDR3"}, None, True, SUCCESS,
     None, SUCCESS),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     pod(required(term([req("GPU", "Exists")]))), "", {"GPU": "NVIDIA-GRID-K1"}, None, True, SUCCESS, None, SUCCESS),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     pod(required(term([req("foo", "In", ["value1", "value2"])]))), "", {"foo": "bar"}, None, True, SUCCESS, None,
     UU_POD),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     pod(required(term([]))), "", {"foo": "bar"}, None, True, SUCCESS, None, UU_POD),
    ("Pod with no Affinity will schedule onto a node", pod(), "", {"foo": "bar"}, None, True, SKIP, None, SUCCESS),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node", pod({}), "", {"foo": "bar"}, None, True, SKIP,
     None, SUCCESS),
    ("Pod with multiple matchExpressions ANDed that matches the existing node", pod(GPU_AND_NOT_AMD), "",
     {"GPU": "NVIDIA-GRID-K1"}, None, True, SUCCESS, None, SUCCESS),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     pod(required(term([req("GPU", "Exists"), req("GPU", "In", ["AMD", "INTER"])]))), "", {"GPU": "NVIDIA-GRID-K1"},
     None, True, SUCCESS, None, UU_POD),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
     pod(required(term([req("foo", "In", ["bar", "value2"])]), term([req("diffkey", "In", ["wrong", "value2"])]))),
     "", {"foo": "bar"}, None, True, SUCCESS, None, SUCCESS),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will "
     "schedule onto the node", pod(required(term([req("foo", "Exists")])), {"foo": "bar"}), "", {"foo": "bar"}, None,
     True, SUCCESS, None, SUCCESS),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) "
     "is not satisfied, won't schedule onto the node", pod(required(term([req("foo", "Exists")])), {"foo": "bar"}), "",
     {"foo": "barrrrrr"}, None, True, SUCCESS, None, UU_POD),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     pod(required(term([req("foo", "NotIn", ["invalid value: ___@#$%^"])]))), "", {"foo": "bar"}, None, True, SUCCESS,
     None, UU_POD),
    ("Pod with matchFields using In operator that matches the existing node",
     pod(required(term(fields=[NAME_IS_NODE1]))), "node1", {}, None, True, SUCCESS, {"node1"}, SUCCESS),
    ("Pod with matchFields using In operator that does not match the existing node",
     pod(required(term(fields=[NAME_IS_NODE1]))), "node2", {}, None, True, SUCCESS, {"node1"}, UU_POD),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     pod(required(term(fields=[NAME_IS_NODE1, req(NAME, "In", ["node2"])]), term([req("foo", "In", ["bar"])]))),
     "node2", {"foo": "bar"}, None, True, SUCCESS, None, SUCCESS),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     pod(required(term([req("foo", "In", ["bar"])], [NAME_IS_NODE1]))), "node2", {"foo": "bar"}, None, True, SUCCESS,
     {"node1"}, UU_POD),
    ("Pod with one term: both matchFields and matchExpressions match",
     pod(required(term([req("foo", "In", ["bar"])], [NAME_IS_NODE1]))), "node1", {"foo": "bar"}, None, True, SUCCESS,
     {"node1"}, SUCCESS),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     pod(required(term(fields=[NAME_IS_NODE1]), term([req("foo", "In", ["not-match-to-bar"])]))), "node2",
     {"foo": "bar"}, None, True, SUCCESS, None, UU_POD),
    ("Pod with two terms of node.Name affinity",
     pod(required(term(fields=[NAME_IS_NODE1]), term(fields=[req(NAME, "In", ["node2"])]))), "node2", {}, None, True,
     SUCCESS, {"node1", "node2"}, SUCCESS),
    ("Pod with two conflicting mach field requirements",
     pod(required(term(fields=[NAME_IS_NODE1, req(NAME, "In", ["node2"])]))), "node2", {"foo": "bar"}, None, True,
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_CONFLICT]), None, UU_POD),
    ("Matches added affinity and Pod's node affinity", pod(required(term([req("zone", "In", ["foo"])]))), "node2",
     {"zone": "foo"}, added(required(term(fields=[req(NAME, "In", ["node2"])]))), True, SUCCESS, None, SUCCESS),
    ("Matches added affinity but not Pod's node affinity", pod(required(term([req("zone", "In", ["bar"])]))), "node2",
     {"zone": "foo"}, added(required(term(fields=[req(NAME, "In", ["node2"])]))), True, SUCCESS, None, UU_POD),
    ("Doesn't match added affinity", pod(), "node2", {"zone": "foo"},
     added(required(term([req("zone", "In", ["bar"])]))), True, SUCCESS, None,
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_ENFORCED])),
    ("Matches node selector correctly even if PreFilter is not called", pod(node_selector={"foo": "bar"}), "",
     {"foo": "bar", "baz": "blah"}, None, False, None, None, SUCCESS),
    ("Matches node affinity correctly even if PreFilter is not called", pod(GPU_AND_NOT_AMD), "",
     {"GPU": "NVIDIA-GRID-K1"}, None, False, None, None, SUCCESS),
]


@pytest.mark.parametrize("case, p, name, labels, args, run_pre_filter, want_pre, want_result, want", FILTER,
                         ids=[c[0] for c in FILTER])
def test_node_affinity(case, p, name, labels, args, run_pre_filter, want_pre, want_result, want):
    n = make_node().name(name).labels(labels).obj()
    pl, state, q = NodeAffinity.new(args, None), new_state(), p.obj()
    if run_pre_filter:
        result, st = pl.pre_filter(state, q)
        assert (status_tuple(st), result) == (want_pre, want_result)
    assert status_tuple(pl.filter(state, q, node_info(n))) == want


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def preferred(*weighted):
    return {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": w, "preference": term(exprs)}
                                                                for w, exprs in weighted]}


AFFINITY1 = preferred((2, [req("foo", "In", ["bar"])]))
AFFINITY2 = preferred((2, [req("foo", "In", ["bar"])]), (4, [req("key", "In", ["value"])]),
                      (5, [req("foo", "In", ["bar"]), req("key", "In", ["value"]), req("az", "In", ["az1"])]))


def nodes(*named):
    return [make_node().name(n).labels(lbl) for n, lbl in named]


# (name, pod, nodes, args, run PreScore, want scores)
PRIORITY = [
    ("all nodes are same priority as NodeAffinity is nil", pod(), nodes(("node1", LABEL1), ("node2", LABEL2),
                                                                         ("node3", LABEL3)), None, True,
     [("node1", 0), ("node2", 0), ("node3", 0)]),
    ("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
     pod(AFFINITY1), nodes(("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)), None, True,
     [("node1", 0), ("node2", 0), ("node3", 0)]),
    ("only node1 matches the preferred scheduling requirements of pod", pod(AFFINITY1),
     nodes(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)), None, True,
     [("node1", 100), ("node2", 0), ("node3", 0)]),
    ("all nodes matches the preferred scheduling requirements of pod but with different priorities ", pod(AFFINITY2),
     nodes(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)), None, True,
     [("node1", 18), ("node5", 100), ("node2", 36)]),
    ("added affinity", pod(), nodes(("node1", LABEL1), ("node2", LABEL2)), added(AFFINITY1), True,
     [("node1", 100), ("node2", 0)]),
    ("added affinity and pod has default affinity", pod(AFFINITY1),
     nodes(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)),
     added(preferred((3, [req("key", "In", ["value"])]))),
     True, [("node1", 40), ("node2", 60), ("node3", 100)]),
    ("calculate the priorities correctly even if PreScore is not called", pod(AFFINITY2),
     nodes(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)), None, True,
     [("node1", 18), ("node5", 100), ("node2", 36)]),
]


@pytest.mark.parametrize("p, ns, args, run_pre_score, want", [c[1:] for c in PRIORITY], ids=[c[0] for c in PRIORITY])
def test_node_affinity_priority(p, ns, args, run_pre_score, want):
    h = handle([n.obj() for n in ns])
    pl, state, q = NodeAffinity.new(args, h), new_state(), p.obj()
    if run_pre_score:
        # kube only checks IsSuccess here; a pod without preferred terms gets Skip, which IsSuccess accepts.
        st = pl.pre_score(state, q, h.snapshot.node_infos)
        assert st is None or st.code == Code.SKIP
    got = []
    for ni in h.snapshot.node_infos:
        score, st = pl.score(state, q, ni)
        assert st is None
        got.append([ni.name, score])
    assert pl.normalize_score(state, q, got) is None
    assert [tuple(x) for x in got] == want
