"""kube's interpodaffinity/filtering_test.go, case by case.

Only a newer version than v1.30 could be read (see UPSTREAM_VERSION). kube's test pods mostly have no namespace
(""), read by scheduler_core as "default"; the namespaces objects are those of kube's scoring_test.go.
"""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.interpodaffinity import (ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY,
                                                     ERR_REASON_EXISTING_ANTI_AFFINITY, PRE_FILTER_KEY,
                                                     InterPodAffinity, PreFilterState)

from .affinity_terms import NAMESPACES, sel, term
from .plugin_cases import SUCCESS, handle, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go"
UPSTREAM_VERSION = "v1.33 era (commit 072825f9: backend/cache); the v1.30 file could not be read"
UPSTREAM_CASES = 57

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NOT_AFFINITY = (UU, [ERR_REASON_AFFINITY])
ANTI = (U, [ERR_REASON_ANTI_AFFINITY])
EXISTING_ANTI = (U, [ERR_REASON_EXISTING_ANTI_AFFINITY])
SKIP = (Code.SKIP, [])
INVALID_LABEL_SYNTAX = (UU, [
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must '
    "be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])
SECURITYSCAN = {"service": "securityscan"}
S1 = {"security": "S1"}
TEAM1 = sel(("team", "In", ["team1"]))
SERVICE_IN = sel(("service", "In", ["securityscan", "value2"]))


def with_terms(ns, labels, affinity=None, anti_affinity=None):
    """createPodWithAffinityTerms (no node)."""
    w = make_pod().labels(labels)
    if ns:
        w.namespace(ns)
    return w.affinity({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(affinity or [])},
                       "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                           list(anti_affinity or [])}})


def pod(labels=None, node="", ns=None):
    w = make_pod().labels(labels or {})
    if node:
        w.node(node)
    if ns:
        w.namespace(ns)
    return w


EXISTING = pod(SECURITYSCAN, "node1")
NODE1 = make_node().name("node1").labels({"region": "r1", "zone": "z11"})


def pre_filter_then_filter(pl, p, state, node_infos):
    """PreFilter's status, then (when it succeeded) Filter's per node."""
    _res, st = pl.pre_filter(state, p)
    if st is not None:
        return status_tuple(st), None
    return SUCCESS, [status_tuple(pl.filter(state, p, ni)) for ni in node_infos]


SINGLE_NODE = [
    ("A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     make_pod(), [], SKIP, None),
    ("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches "
     "the existing pod", pod(S1).pod_affinity_in("service", "region", ["securityscan", "value2"]), [EXISTING],
     SUCCESS, SUCCESS),
    ("satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in "
     "labelSelector that matches the existing pod",
     pod(S1).pod_affinity("region", sel(("service", "NotIn", ["securityscan3", "value3"]))), [EXISTING],
     SUCCESS, SUCCESS),
    ("Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     with_terms(None, S1, [term(SERVICE_IN, "", ["DiffNameSpace"])]),
     [pod(SECURITYSCAN, "node1", ns="ns")], SUCCESS, NOT_AFFINITY),
    ("Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     pod(SECURITYSCAN).pod_affinity_in("service", "", ["antivirusscan", "value2"]), [EXISTING], SUCCESS,
     NOT_AFFINITY),
    ("satisfies the PodAffinity with different label Operators in multiple "
     "RequiredDuringSchedulingIgnoredDuringExecution ",
     with_terms(None, S1, [term(sel(("service", "Exists", None), ("wrongkey", "DoesNotExist", None)), "region"),
                           term(sel(("service", "In", ["securityscan"]), ("service", "NotIn", ["WrongValue"])),
                                "region")]), [EXISTING], SUCCESS, SUCCESS),
    ("The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
     "because one of the matchExpression item don't match.",
     with_terms(None, S1, [term(sel(("service", "Exists", None), ("wrongkey", "DoesNotExist", None)), "region"),
                           term(sel(("service", "In", ["securityscan2"]), ("service", "NotIn", ["WrongValue"])),
                                "region")]), [EXISTING], SUCCESS, NOT_AFFINITY),
    ("satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     pod(S1).pod_affinity_in("service", "region", ["securityscan", "value2"])
     .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]), [EXISTING], SUCCESS, SUCCESS),
    ("satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
     pod(S1).pod_affinity_in("service", "region", ["securityscan", "value2"])
     .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]),
     [pod(SECURITYSCAN, "node1").pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"])],
     SUCCESS, SUCCESS),
    ("satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     pod(S1).pod_affinity_in("service", "region", ["securityscan", "value2"])
     .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]), [EXISTING], SUCCESS, ANTI),
    ("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing "
     "pod", pod(SECURITYSCAN).pod_affinity_in("service", "region", ["securityscan", "value2"])
     .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]),
     [pod(SECURITYSCAN, "node1").pod_anti_affinity_in("service", "zone", ["securityscan", "value2"])],
     SUCCESS, EXISTING_ANTI),
    ("pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     pod(SECURITYSCAN).pod_affinity("region", sel(("service", "NotIn", ["securityscan", "value2"]))),
     [pod(SECURITYSCAN, "node2")], SUCCESS, NOT_AFFINITY),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
     "satisfy PodAntiAffinity symmetry with the existing pod", pod(SECURITYSCAN),
     [pod(SECURITYSCAN, "node1").pod_anti_affinity_in("service", "zone", ["securityscan", "value2"])],
     SUCCESS, EXISTING_ANTI),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy "
     "PodAntiAffinity symmetry with the existing pod", pod(SECURITYSCAN),
     [pod(SECURITYSCAN, "node1").pod_anti_affinity("zone", sel(("service", "NotIn", ["securityscan", "value2"])))],
     SKIP, None),
    ("satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     pod(SECURITYSCAN).pod_anti_affinity_exists("service", "region").pod_anti_affinity_exists("security", "region"),
     [pod(S1, "node1").pod_anti_affinity_exists("security", "zone")], SUCCESS, ANTI),
    ("PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
     pod(SECURITYSCAN).pod_anti_affinity_exists("service", "zone").pod_anti_affinity_exists("security", "zone"),
     [pod(S1, "node1").pod_anti_affinity_exists("security", "zone")], SUCCESS, ANTI),
    ("PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
     pod(S1).pod_anti_affinity_exists("security", "zone"),
     [pod(SECURITYSCAN, "node1").pod_anti_affinity_exists("service", "zone")
      .pod_anti_affinity_exists("security", "zone")], SUCCESS, EXISTING_ANTI),
    ("PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
     pod({"abc": "", "xyz": ""}).pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone"),
     [pod({"def": "", "xyz": ""}, "node1").pod_anti_affinity_exists("abc", "zone")
      .pod_anti_affinity_exists("def", "zone")], SUCCESS, ANTI),
    ("PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
     pod({"def": "", "xyz": ""}).pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone"),
     [pod({"abc": "", "xyz": ""}, "node1").pod_anti_affinity_exists("abc", "zone")
      .pod_anti_affinity_exists("def", "zone")], SUCCESS, ANTI),
    ("PodAffinity fails PreFilter with an invalid affinity label syntax",
     pod(SECURITYSCAN).pod_affinity_in("service", "region", ["{{.bad-value.}}"])
     .pod_affinity_in("service", "node", ["antivirusscan", "value2"]), [], INVALID_LABEL_SYNTAX, None),
    # kube's case builds both terms with PodAffinityIn, hence "requiredAffinityTerms" in the message too.
    ("PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
     pod(SECURITYSCAN).pod_affinity_in("service", "region", ["foo"])
     .pod_affinity_in("service", "node", ["{{.bad-value.}}"]), [], INVALID_LABEL_SYNTAX, None),
    ("affinity with NamespaceSelector", with_terms(None, S1, [term(SERVICE_IN, "region", None, TEAM1)]),
     [pod(SECURITYSCAN, "node1", ns="subteam1.team1")], SUCCESS, SUCCESS),
    ("affinity with non-matching NamespaceSelector", with_terms(None, S1, [term(SERVICE_IN, "region", None, TEAM1)]),
     [pod(SECURITYSCAN, "node1", ns="subteam1.team2")], SUCCESS, NOT_AFFINITY),
    ("anti-affinity with matching NamespaceSelector",
     with_terms("subteam1.team1", S1, None, [term(SERVICE_IN, "zone", None, TEAM1)]),
     [pod(SECURITYSCAN, "node1", ns="subteam2.team1")], SUCCESS, ANTI),
    ("anti-affinity with matching all NamespaceSelector",
     with_terms("subteam1.team1", S1, None, [term(SERVICE_IN, "zone", None, {})]),
     [pod(SECURITYSCAN, "node1", ns="subteam2.team1")], SUCCESS, ANTI),
    ("anti-affinity with non-matching NamespaceSelector",
     with_terms("subteam1.team1", S1, None, [term(SERVICE_IN, "zone", None, TEAM1)]),
     [pod(SECURITYSCAN, "node1", ns="subteam1.team2")], SUCCESS, SUCCESS),
]


@pytest.mark.parametrize("incoming, existing, want_pre, want_filter", [c[1:] for c in SINGLE_NODE],
                         ids=[c[0] for c in SINGLE_NODE])
def test_required_affinity_single_node(incoming, existing, want_pre, want_filter):
    h = handle([NODE1.obj()], [q.obj() for q in existing], namespaces=NAMESPACES)
    pl = InterPodAffinity.new(None, h)
    pre, filtered = pre_filter_then_filter(pl, incoming.obj(), new_state(), h.snapshot.node_infos)
    assert (pre, filtered and filtered[0]) == (want_pre, want_filter)


def nodes_named(*spec):
    """(name, labels) pairs -> nodes."""
    return [make_node().name(n).labels(lbl) for n, lbl in spec]


RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}
CHINA_ABC = nodes_named(("nodeA", RG_CHINA), ("nodeB", RG_CHINA_AZ1), ("nodeC", RG_INDIA))
R1Z1_R1Z2 = nodes_named(("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
                        ("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"}))
R1Z1_R1Z1 = nodes_named(("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
                        ("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"}))
FOO_BAR = {"foo": "", "bar": ""}
OK = SUCCESS

MULTIPLE_NODES = [
    ("A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has "
     "an existing pod that matches the affinity rules", pod().pod_affinity_in("foo", "region", ["bar"]),
     [pod({"foo": "bar"}, "node1").name("p1")],
     nodes_named(("node1", RG_CHINA), ("node2", RG_CHINA_AZ1), ("node3", RG_INDIA)), OK, [OK, OK, NOT_AFFINITY]),
    ("The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
     "collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches "
     "the rule anywhere.",
     pod({"foo": "bar", "service": "securityscan"}).pod_affinity_in("foo", "zone", ["bar"])
     .pod_affinity_in("service", "zone", ["securityscan"]), [pod({"foo": "bar"}, "nodeA").name("p1")],
     nodes_named(("nodeA", {"zone": "az1", "hostname": "h1"}), ("nodeB", {"zone": "az2", "hostname": "h2"})), OK,
     [OK, OK]),
    ("The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
     pod({"foo": "bar", "service": "securityscan"}).pod_affinity_in("foo", "zone", ["bar"])
     .pod_affinity_in("service", "zone", ["securityscan"]), [pod({"foo": "bar"}, "nodeA").name("p1")],
     nodes_named(("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
                 ("nodeB", {"zoneLabel": "az2", "hostname": "h2"})),
     OK, [NOT_AFFINITY, NOT_AFFINITY]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     pod().pod_anti_affinity_in("foo", "region", ["abc"]), [pod({"foo": "abc"}, "nodeA")],
     nodes_named(("nodeA", {"region": "r1", "hostname": "nodeA"}), ("nodeB", {"region": "r1", "hostname": "nodeB"})),
     OK, [ANTI, ANTI]),
    ("This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
     pod().pod_anti_affinity_in("foo", "region", ["abc"]).pod_anti_affinity_in("service", "zone", ["securityscan"]),
     [pod({"foo": "abc", "service": "securityscan"}, "nodeA")],
     nodes_named(("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
                 ("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})), OK, [ANTI, ANTI]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
     pod().pod_anti_affinity_in("foo", "region", ["abc"]), [pod({"foo": "abc"}, "nodeA")], CHINA_ABC, OK,
     [ANTI, ANTI, OK]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
     "existing pod that match the inter pod affinity rule but in different namespace)",
     pod({"foo": "123"}, ns="NS1").pod_anti_affinity_in("foo", "region", ["bar"]),
     [pod({"foo": "bar"}, "nodeA", ns="NS1"), pod(None, "nodeC", ns="NS2").pod_anti_affinity_in("foo", "region",
                                                                                               ["123"])],
     CHINA_ABC, OK, [ANTI, ANTI, OK]),
    ("Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the "
     "term is firstly checked, and then topologyKey of the term is also checked", pod({"foo": ""}),
     [pod(None, "nodeA").pod_anti_affinity_exists("foo", "invalid-node-label")], R1Z1_R1Z1, SKIP, None),
    ("Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
     pod(None, "nodeA").pod_anti_affinity_exists("foo", "invalid-node-label"), [pod({"foo": ""}, "nodeA")],
     R1Z1_R1Z1, OK, [OK, OK]),
    ("Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's "
     "terms on all nodes", pod(FOO_BAR),
     [pod(None, "nodeA").pod_anti_affinity_exists("foo", "zone"),
      pod(None, "nodeA").pod_anti_affinity_exists("bar", "region")], R1Z1_R1Z2, OK, [EXISTING_ANTI, EXISTING_ANTI]),
    ("Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
     "anti-affinity rule of existingPod",
     pod().pod_anti_affinity_exists("foo", "zone").pod_anti_affinity_exists("bar", "region"),
     [pod({"foo": ""}, "nodeA"), pod({"bar": ""}, "nodeB")], R1Z1_R1Z2, OK, [ANTI, ANTI]),
    ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when one term has invalid topologyKey", pod(FOO_BAR),
     [pod(None, "nodeA").pod_anti_affinity_exists("foo", "invalid-node-label")
      .pod_anti_affinity_exists("bar", "zone")], R1Z1_R1Z2, OK, [EXISTING_ANTI, OK]),
    ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when one term has invalid topologyKey",
     pod().pod_anti_affinity_exists("foo", "invalid-node-label").pod_anti_affinity_exists("bar", "zone"),
     [pod(FOO_BAR, "nodeA").name("podA")], R1Z1_R1Z2, OK, [ANTI, OK]),
    ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when all terms have valid topologyKey", pod(FOO_BAR),
     [pod(None, "nodeA").pod_anti_affinity_exists("foo", "region").pod_anti_affinity_exists("bar", "zone")],
     R1Z1_R1Z2, OK, [EXISTING_ANTI, EXISTING_ANTI]),
    ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when all terms have valid topologyKey",
     pod().pod_anti_affinity_exists("foo", "region").pod_anti_affinity_exists("bar", "zone"),
     [pod(FOO_BAR, "nodeA")], R1Z1_R1Z2, OK, [ANTI, ANTI]),
    ("Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches "
     "incoming pod, so incoming pod can only be scheduled to nodeC", pod(FOO_BAR),
     [pod(None, "nodeA").pod_anti_affinity_exists("foo", "zone").pod_anti_affinity_exists("labelA", "zone"),
      pod(None, "nodeB").pod_anti_affinity_exists("bar", "zone").pod_anti_affinity_exists("labelB", "zone")],
     R1Z1_R1Z2 + nodes_named(("nodeC", {"region": "r1", "zone": "z3", "hostname": "nodeC"})), OK,
     [EXISTING_ANTI, EXISTING_ANTI, OK]),
    ("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
     "match", pod().pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone"),
     [pod(FOO_BAR, "nodeA").name("pod1")], R1Z1_R1Z1, OK, [OK, OK]),
    ("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
     "match, and the match logic should be satisfied on the same pod",
     pod().pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone"),
     [pod({"foo": ""}, "nodeA").name("pod1"), pod({"bar": ""}, "nodeB").name("pod2")], R1Z1_R1Z2, OK,
     [NOT_AFFINITY, NOT_AFFINITY]),
]


@pytest.mark.parametrize("incoming, existing, node_list, want_pre, want_filters", [c[1:] for c in MULTIPLE_NODES],
                         ids=[c[0] for c in MULTIPLE_NODES])
def test_required_affinity_multiple_nodes(incoming, existing, node_list, want_pre, want_filters):
    h = handle([n.obj() for n in node_list], [q.obj() for q in existing],
               namespaces=[{"metadata": {"name": "NS1"}}])
    pl = InterPodAffinity.new(None, h)
    assert pre_filter_then_filter(pl, incoming.obj(), new_state(), h.snapshot.node_infos) == (want_pre, want_filters)


PRE_FILTER_DISABLED = [("TestPreFilterDisabled",
                        'error reading "PreFilterInterPodAffinity" from cycleState: not found')]


@pytest.mark.parametrize("want", [c[1] for c in PRE_FILTER_DISABLED], ids=[c[0] for c in PRE_FILTER_DISABLED])
def test_pre_filter_disabled(want):
    pl = InterPodAffinity.new(None, handle())
    st = pl.filter(new_state(), make_pod().obj(), node_info(make_node().obj()))
    assert (st.code, st.as_error()) == (Code.ERROR, want)


# -- TestPreFilterStateAddRemovePod / TestPreFilterStateClone / TestGetTPMapMatchingIncomingAffinityAntiAffinity --

LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = {"requiredDuringSchedulingIgnoredDuringExecution": [term(sel(("foo", "In", ["bar"])), "region")]}
COMPLEX_TERMS = [term(sel(("foo", "In", ["bar", "buzz"])), "region"),
                 term(sel(("service", "NotIn", ["bar", "security", "test"])), "zone")]
ANTI_COMPLEX = {"requiredDuringSchedulingIgnoredDuringExecution": COMPLEX_TERMS}
AFFINITY_COMPLEX = {"requiredDuringSchedulingIgnoredDuringExecution": COMPLEX_TERMS}
ABC_NODES = nodes_named(("nodeA", LABEL1), ("nodeB", LABEL2), ("nodeC", LABEL3))


def named(name, labels=None, node="", **affinity):
    w = make_pod().name(name).labels(labels or {})
    if node:
        w.node(node)
    return w.affinity(affinity) if affinity else w


def counts(s):
    """The three counts of a PreFilterState as {key: {value: n}}."""
    return (s.existing_anti_affinity_counts.as_dict(), s.affinity_counts.as_dict(), s.anti_affinity_counts.as_dict())


ADD_REMOVE = [
    ("preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
     named("pending", SELECTOR1, podAntiAffinity=ANTI_FOO_BAR),
     [named("p1", SELECTOR1, "nodeA"), named("p2", None, "nodeC", podAntiAffinity=ANTI_FOO_BAR)],
     named("addedPod", SELECTOR1, "nodeB", podAntiAffinity=ANTI_FOO_BAR), {"region": {"r1": 2}}, {}),
    # kube's table gives this case the name of the one above; Go's t.Run tells them apart with "#01".
    ("preFilterState anti-affinity terms are updated correctly after adding and removing a pod#01",
     named("pending", SELECTOR1, podAntiAffinity=ANTI_COMPLEX),
     [named("p1", SELECTOR1, "nodeA"), named("p2", None, "nodeC", podAntiAffinity=ANTI_FOO_BAR)],
     named("addedPod", SELECTOR1, "nodeA", podAntiAffinity=ANTI_COMPLEX),
     {"region": {"r1": 2}, "zone": {"z11": 2, "z21": 1}}, {}),
    ("preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
     named("pending", SELECTOR1, podAffinity=AFFINITY_COMPLEX),
     [named("p1", SELECTOR1, "nodeA"),
      named("p2", None, "nodeC", podAntiAffinity=ANTI_FOO_BAR, podAffinity=AFFINITY_COMPLEX)],
     named("addedPod", SELECTOR1, "nodeA", podAntiAffinity=ANTI_COMPLEX), {},
     {"region": {"r1": 2}, "zone": {"z11": 2}}),
]


@pytest.mark.parametrize("pending, existing, added, want_anti, want_affinity", [c[1:] for c in ADD_REMOVE],
                         ids=[c[0] for c in ADD_REMOVE])
def test_pre_filter_state_add_remove_pod(pending, existing, added, want_anti, want_affinity):
    def get_state(pods):
        h = handle([n.obj() for n in ABC_NODES], [q.obj() for q in pods])
        pl = InterPodAffinity.new(None, h)
        state = new_state()
        _res, st = pl.pre_filter(state, pending.obj())
        assert st is None
        return pl, state, h.snapshot

    _pl, all_pods_state, _snap = get_state(existing + [added])
    pl, state, snap = get_state(existing)
    original = counts(state.read(PRE_FILTER_KEY))
    ni = snap.get(added.raw["spec"]["nodeName"])
    assert pl.add_pod(state, pending.obj(), added.obj(), ni) is None
    s = state.read(PRE_FILTER_KEY)
    assert (s.anti_affinity_counts.as_dict(), s.affinity_counts.as_dict()) == (want_anti, want_affinity)
    assert counts(s) == counts(all_pods_state.read(PRE_FILTER_KEY))
    assert pl.remove_pod(state, pending.obj(), added.obj(), ni) is None
    assert counts(state.read(PRE_FILTER_KEY)) == original


CLONE = [("TestPreFilterStateClone", {"node1": 1, "node2": 1}, {"nodeA": 1, "nodeC": 2}, {"nodeN": 3, "nodeM": 1})]


@pytest.mark.parametrize("existing_anti, affinity, anti", [c[1:] for c in CLONE], ids=[c[0] for c in CLONE])
def test_pre_filter_state_clone(existing_anti, affinity, anti):
    names = list(existing_anti) + list(affinity) + list(anti)
    h = handle([make_node().name(n).label("name", n).obj() for n in names])
    table = h.snapshot.table()
    source = PreFilterState(make_pod().obj(), {}, table)
    for target, values in ((source.existing_anti_affinity_counts, existing_anti), (source.affinity_counts, affinity),
                           (source.anti_affinity_counts, anti)):
        for node_name, n in values.items():
            target.add("name", {"name": node_name}, n)
    clone = source.clone()
    assert clone is not source
    assert counts(clone) == counts(source) == ({"name": existing_anti}, {"name": affinity}, {"name": anti})


def normal(*labels):
    return make_pod().name("normal").node("nodeA").labels({k: "" for k in labels})


NODE_A = nodes_named(("nodeA", {"hostname": "nodeA"}))
HOST_A = {"hostname": {"nodeA": 1}}

INCOMING_COUNTS = [
    ("nil test", [], make_pod().name("aaa-normal"), {}, {}),
    ("incoming pod without affinity/anti-affinity causes a no-op", [normal("aaa")], make_pod().name("aaa-normal"),
     {}, {}),
    ("no pod has label that violates incoming pod's affinity and anti-affinity", [normal("bbb")],
     make_pod().name("aaa-anti").pod_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("aaa", "hostname"),
     {}, {}),
    ("existing pod matches incoming pod's affinity and anti-affinity - single term case", [normal("aaa")],
     make_pod().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname")
     .pod_anti_affinity_exists("aaa", "hostname"), HOST_A, HOST_A),
    ("existing pod matches incoming pod's affinity and anti-affinity - multiple terms case", [normal("aaa", "bbb")],
     make_pod().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
     .pod_anti_affinity_exists("aaa", "hostname"), {"hostname": {"nodeA": 2}}, HOST_A),
    ("existing pod not match incoming pod's affinity but matches anti-affinity", [normal("aaa")],
     make_pod().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
     .pod_anti_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("bbb", "hostname"), {}, HOST_A),
    ("incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
     [normal("aaa", "bbb")],
     make_pod().name("anaffi-antiaffiti").pod_affinity_exists("aaa", "hostname")
     .pod_affinity_exists("ccc", "hostname").pod_anti_affinity_exists("aaa", "hostname")
     .pod_anti_affinity_exists("ccc", "hostname"), {}, HOST_A),
    ("incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
     [normal("bbb")],
     make_pod().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
     .pod_anti_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("bbb", "hostname"), {}, HOST_A),
]


@pytest.mark.parametrize("existing, incoming, want_affinity, want_anti", [c[1:] for c in INCOMING_COUNTS],
                         ids=[c[0] for c in INCOMING_COUNTS])
def test_get_tp_map_matching_incoming_affinity_anti_affinity(existing, incoming, want_affinity, want_anti):
    h = handle([n.obj() for n in NODE_A], [q.obj() for q in existing])
    table = h.snapshot.table()
    s = PreFilterState(incoming.obj(), {}, table)
    InterPodAffinity._incoming_counts(s, table)
    assert (s.affinity_counts.as_dict(), s.anti_affinity_counts.as_dict()) == (want_affinity, want_anti)
