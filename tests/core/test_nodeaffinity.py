"""NodeAffinity plugin: the cases of kube's node_affinity_test.go."""
import pytest

from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.profile import FrameworkError
from scheduler_core.framework.status import Code
from scheduler_core.objects.node import Node
from scheduler_core.objects.pod import Pod
from scheduler_core.plugins.nodeaffinity import (ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD,
                                                 NodeAffinity)

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def make_pod(node_selector=None, required_terms=None, preferred=None, raw_affinity=None):
    spec = {"containers": [{"name": "c"}]}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    na = dict(raw_affinity or {})
    if required_terms is not None:
        na[REQ] = {"nodeSelectorTerms": required_terms}
    if preferred is not None:
        na[PREF] = preferred
    if na:
        spec["affinity"] = {"nodeAffinity": na}
    return Pod({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})


def make_node(name="node1", labels=None):
    return NodeInfo(Node({"metadata": {"name": name, "labels": labels or {}}}))


def expr(key, op, *values):
    return {"key": key, "operator": op, "values": list(values)}


def term(*exprs, fields=()):
    t = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = list(fields)
    return t


def run_filter(pod, node, plugin=None):
    """PreFilter then Filter, the way the framework calls them. Returns (prefilter result, code, reasons)."""
    pl = plugin or NodeAffinity()
    state = CycleState()
    res, st = pl.pre_filter(state, pod)
    if st is not None:
        return res, st.code, st.reasons
    fst = pl.filter(state, pod, node)
    return res, (Code.SUCCESS if fst is None else fst.code), ([] if fst is None else fst.reasons)


FAIL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_POD])
OK = (Code.SUCCESS, [])


@pytest.mark.parametrize("pod_kwargs,labels,want", [
    ({"node_selector": {"foo": "bar"}}, {}, FAIL),                                 # missing labels
    ({"node_selector": {"foo": "bar"}}, {"foo": "bar"}, OK),                       # same labels
    ({"node_selector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, OK),        # node labels superset
    ({"node_selector": {"foo": "bar", "baz": "blah"}}, {"foo": "bar"}, FAIL),      # node labels subset
    ({"required_terms": [term(expr("foo", "In", "bar", "value2"))]}, {"foo": "bar"}, OK),
    ({"required_terms": [term(expr("kernel-version", "Gt", "0204"))]}, {"kernel-version": "0206"}, OK),
    ({"required_terms": [term(expr("kernel-version", "Lt", "0204"))]}, {"kernel-version": "0206"}, FAIL),
    ({"required_terms": [term(expr("mem-type", "NotIn", "DDR", "DDR2"))]}, {"mem-type": "DDR3"}, OK),
    ({"required_terms": [term(expr("GPU", "Exists"))]}, {"GPU": "NVIDIA-GRID-K1"}, OK),
    ({"required_terms": [term(expr("foo", "In", "value1", "value2"))]}, {"foo": "bar"}, FAIL),
    ({"required_terms": []}, {"foo": "bar"}, FAIL),                               # empty term list
    ({"required_terms": [{}]}, {"foo": "bar"}, FAIL),                              # empty term
    ({"required_terms": [term(expr("foo", "DoesNotExist"))]}, {"foo": "bar"}, FAIL),
    ({"required_terms": [term(expr("foo", "DoesNotExist"))]}, {}, OK),
    # terms are ORed, requirements of one term are ANDed
    ({"required_terms": [term(expr("foo", "In", "x")), term(expr("GPU", "Exists"))]}, {"GPU": "a"}, OK),
    ({"required_terms": [term(expr("foo", "In", "bar"), expr("GPU", "Exists"))]}, {"foo": "bar"}, FAIL),
    # nodeSelector and affinity must both hold
    ({"node_selector": {"foo": "bar"}, "required_terms": [term(expr("GPU", "Exists"))]}, {"GPU": "x"}, FAIL),
    ({"node_selector": {"foo": "bar"}, "required_terms": [term(expr("GPU", "Exists"))]},
     {"GPU": "x", "foo": "bar"}, OK),
    # a label value that is not an integer never matches Gt
    ({"required_terms": [term(expr("gen", "Gt", "3"))]}, {"gen": "four"}, FAIL),
])
def test_filter(pod_kwargs, labels, want):
    _res, code, reasons = run_filter(make_pod(**pod_kwargs), make_node(labels=labels))
    assert (code, reasons) == want


def test_prefilter_skip():
    pl = NodeAffinity()
    assert pl.pre_filter(CycleState(), make_pod())[1].code == Code.SKIP
    # An empty (non-nil) nodeSelector is not skipped, as in Go.
    assert pl.pre_filter(CycleState(), make_pod(node_selector={})) == (None, None)
    # addedAffinity required turns Skip off.
    added = NodeAffinity({REQ: {"nodeSelectorTerms": [term(expr("zone", "Exists"))]}})
    assert added.pre_filter(CycleState(), make_pod()) == (None, None)
    # addedAffinity with only preferred terms keeps Skip.
    pref_only = NodeAffinity({PREF: [{"weight": 1, "preference": term(expr("zone", "Exists"))}]})
    assert pref_only.pre_filter(CycleState(), make_pod())[1].code == Code.SKIP


def name_field(op, *values):
    return {"key": "metadata.name", "operator": op, "values": list(values)}


@pytest.mark.parametrize("terms,want_result,want_status", [
    ([term(fields=[name_field("In", "node1")])], {"node1"}, None),
    ([term(fields=[name_field("In", "node1")]), term(fields=[name_field("In", "node2")])],
     {"node1", "node2"}, None),
    # one term without a name field: all nodes are eligible
    ([term(fields=[name_field("In", "node1")]), term(expr("foo", "In", "bar"))], None, None),
    # requirements of a term intersect
    ([term(fields=[name_field("In", "node1", "node2"), name_field("In", "node2", "node3")])], {"node2"}, None),
    ([term(fields=[name_field("In", "node1"), name_field("In", "node2")])], None, ERR_REASON_CONFLICT),
    ([term(fields=[name_field("In", "node1"), name_field("In", "node2")]),
      term(fields=[name_field("In", "node3")])], {"node3"}, None),
    # NotIn does not narrow
    ([term(fields=[name_field("NotIn", "node1")])], None, None),
    ([term(expr("foo", "In", "bar"), fields=[name_field("In", "node1")])], {"node1"}, None),
])
def test_prefilter_result(terms, want_result, want_status):
    res, st = NodeAffinity().pre_filter(CycleState(), make_pod(required_terms=terms))
    assert res == want_result
    if want_status is None:
        assert st is None
    else:
        assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [want_status])


def test_match_fields_filter():
    pod = make_pod(required_terms=[term(fields=[name_field("In", "node1")])])
    assert run_filter(pod, make_node("node1"))[1:] == OK
    assert run_filter(pod, make_node("node2"))[1:] == FAIL
    # metadata.name In with several values is an invalid field selector: the term matches nothing.
    pod = make_pod(required_terms=[term(fields=[name_field("In", "node1", "node2")])])
    assert run_filter(pod, make_node("node1")) == ({"node1", "node2"}, *FAIL)


def test_added_affinity_filter():
    pl = NodeAffinity({REQ: {"nodeSelectorTerms": [term(expr("zone", "In", "foo"))]}})
    enforced = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_ENFORCED])
    assert run_filter(make_pod(), make_node(labels={"zone": "foo"}), pl)[1:] == OK
    assert run_filter(make_pod(), make_node(labels={"zone": "bar"}), pl)[1:] == enforced
    # addedAffinity is checked first; both must match.
    pod = make_pod(node_selector={"foo": "bar"})
    assert run_filter(pod, make_node(labels={"foo": "bar"}), pl)[1:] == enforced
    assert run_filter(pod, make_node(labels={"zone": "foo"}), pl)[1:] == FAIL
    assert run_filter(pod, make_node(labels={"zone": "foo", "foo": "bar"}), pl)[1:] == OK


def test_filter_without_prefilter():
    pod = make_pod(node_selector={"foo": "bar"})
    assert NodeAffinity().filter(CycleState(), pod, make_node(labels={"foo": "bar"})) is None
    st = NodeAffinity().filter(CycleState(), pod, make_node())
    assert (st.code, st.reasons) == FAIL


def weighted(weight, *exprs):
    return {"weight": weight, "preference": term(*exprs)}


def score_all(pl, pod, nodes):
    state = CycleState()
    st = pl.pre_score(state, pod, nodes)
    if st is not None:
        return st
    raw = [[n.name, pl.score(state, pod, n)[0]] for n in nodes]
    normalized = [list(p) for p in raw]
    pl.normalize_score(state, pod, normalized)
    return [s for _n, s in raw], [s for _n, s in normalized]


def test_score():
    preferred = [weighted(2, expr("foo", "In", "bar")), weighted(4, expr("key", "In", "value")),
                 weighted(5, expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))]
    nodes = [make_node("n1", {"foo": "bar"}), make_node("n2", {"key": "value"}),
             make_node("n3", {"foo": "bar", "key": "value", "az": "az1"}), make_node("n4", {})]
    assert score_all(NodeAffinity(), make_pod(preferred=preferred), nodes) == ([2, 4, 11, 0], [18, 36, 100, 0])


def test_score_no_match_stays_zero():
    nodes = [make_node("n1", {"foo": "x"}), make_node("n2", {})]
    pod = make_pod(preferred=[weighted(2, expr("foo", "In", "bar"))])
    assert score_all(NodeAffinity(), pod, nodes) == ([0, 0], [0, 0])


def test_score_drops_zero_weight_and_empty_terms():
    pod = make_pod(preferred=[weighted(0, expr("foo", "Exists")), {"weight": 7, "preference": {}},
                              weighted(3, expr("foo", "Exists"))])
    assert score_all(NodeAffinity(), pod, [make_node("n1", {"foo": "a"}), make_node("n2")]) == (
        [3, 0], [100, 0])


def test_prescore_skip():
    assert score_all(NodeAffinity(), make_pod(), [make_node()]).code == Code.SKIP
    # An empty (non-nil) preferred list is not skipped, as in Go.
    assert score_all(NodeAffinity(), make_pod(preferred=[]), [make_node()]) == ([0], [0])
    # Required-only affinity does not score.
    pod = make_pod(required_terms=[term(expr("foo", "Exists"))])
    assert score_all(NodeAffinity(), pod, [make_node()]).code == Code.SKIP


def test_added_affinity_score():
    pl = NodeAffinity({PREF: [weighted(5, expr("zone", "In", "foo"))]})
    nodes = [make_node("n1", {"zone": "foo"}), make_node("n2", {"zone": "foo", "key": "value"}),
             make_node("n3", {"key": "value"})]
    # no preferred terms of its own: addedAffinity still scores
    assert score_all(pl, make_pod(), nodes) == ([5, 5, 0], [100, 100, 0])
    pod = make_pod(preferred=[weighted(3, expr("key", "In", "value"))])
    assert score_all(pl, pod, nodes) == ([5, 8, 3], [62, 100, 37])


def test_score_without_prescore():
    pod = make_pod(preferred=[weighted(3, expr("key", "In", "value"))])
    pl = NodeAffinity({PREF: [weighted(5, expr("zone", "In", "foo"))]})
    assert pl.score(CycleState(), pod, make_node(labels={"zone": "foo", "key": "value"})) == (8, None)


def test_invalid_preferred_term_is_an_error():
    pod = make_pod(preferred=[weighted(1, expr("foo", "In"))])
    st = NodeAffinity().pre_score(CycleState(), pod, [make_node()])
    assert st.code == Code.ERROR


def test_invalid_added_affinity():
    with pytest.raises(FrameworkError):
        NodeAffinity.new({"addedAffinity": {REQ: {"nodeSelectorTerms": [term(expr("foo", "In"))]}}}, None)
    with pytest.raises(FrameworkError):
        NodeAffinity.new({"addedAffinity": {PREF: [weighted(1, expr("foo", "Gt", "x"))]}}, None)


def test_new_without_args():
    pl = NodeAffinity.new(None, None)
    assert pl.added_selector is None and pl.added_terms == () and not pl.has_added_preferred


def test_events():
    assert NodeAffinity().events_to_register() == (("Node", ("Add", "Update")),)


def test_required_term_with_a_value_that_is_not_label_syntax_never_matches():
    """labels.NewRequirement rejects the value, so the term fails to parse and matches no node (kube's
    "Pod with an invalid value in Affinity term won't be scheduled onto the node")."""
    pod = make_pod(required_terms=[term(expr("foo", "NotIn", "invalid value: ___@#$%^"))])
    assert run_filter(pod, make_node(labels={"foo": "bar"}))[1:] == FAIL


def test_preferred_term_with_a_key_that_is_not_label_syntax_fails_prescore_with_kubes_field_error():
    pod = make_pod(preferred=[weighted(1, expr("invalid key", "In", "bar"))])
    st = NodeAffinity().pre_score(CycleState(), pod, [make_node()])
    assert st.code == Code.ERROR
    assert st.message().startswith('[0].matchExpressions[0].key: Invalid value: "invalid key": name part must '
                                   'consist of alphanumeric characters')


def test_invalid_added_affinity_reports_kubes_parse_errors():
    with pytest.raises(FrameworkError) as err:
        NodeAffinity.new({"addedAffinity": {REQ: {"nodeSelectorTerms": [term(expr("foo", "In"))]}}}, None)
    assert str(err.value) == ("parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                              "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{}: "
                              "for 'in', 'notin' operators, values set can't be empty")
    with pytest.raises(FrameworkError) as err:
        NodeAffinity.new({"addedAffinity": {PREF: [weighted(1, expr("foo", "Gt", "x"))]}}, None)
    assert str(err.value) == ("parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
                              "[0].matchExpressions[0].values[0]: Invalid value: \"x\": "
                              "for 'Gt', 'Lt' operators, the value must be an integer")


@pytest.mark.parametrize("value", ["1_000", " 5", "9223372036854775808"])
def test_gt_value_must_parse_as_a_go_int64(value):
    """strconv.ParseInt(v, 10, 64): no digit separators, no spaces, 64 bits."""
    pod = make_pod(required_terms=[term(expr("gen", "Gt", value))])
    assert run_filter(pod, make_node(labels={"gen": "9223372036854775807"}))[1:] == FAIL
