"""kube's podtopologyspread/scoring_test.go, case by case: TestPreScoreSkip, TestPreScoreStateEmptyNodes and
TestPodTopologySpreadScore.

Only a newer version than v1.30 could be read (see UPSTREAM_VERSION). Its cases that turn a feature gate off
(``enableNodeInclusionPolicy`` / ``enableMatchLabelKeys`` false) run here with v1.30's defaults (both gates on):
those cases are unaffected by the gates (no node selector, affinity or taints in play), except
"matchLabelKeys ignored when feature gate disabled", which is skipped: scheduler_core has v1.30's default (on) and
no switch for it.

kube's preScoreState is compared field by field with scheduler_core's PreScoreState: the constraints (maxSkew,
topologyKey, selector, minDomains, inclusion policies), IgnoredNodes, TopologyPairToPodCounts (non-hostname keys)
and TopologyNormalizingWeight.
"""
import math

import pytest

from scheduler_core.objects import LabelSelector
from scheduler_core.plugins.podtopologyspread import PRE_SCORE_KEY, PodTopologySpread
from scheduler_core.framework.status import Code

from .plugin_cases import exists_selector, handle, labels_selector, make_node, make_pod, new_state

UPSTREAM = "pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go"
UPSTREAM_VERSION = ("v1.33 era (commit 38f68d59: backend/cache, FactoryAdapter, fake.NewClientset); the v1.30 "
                    "file could not be read")
UPSTREAM_CASES = 41

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
FOO = exists_selector("foo")
BAR = exists_selector("bar")
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
LIST = {"defaultingType": "List"}


def node(name, **labels):
    n = make_node().name(name)
    for k, v in labels.items():
        n.label(k, v)
    return n


def hnode(name, **labels):
    """A node labelled kubernetes.io/hostname=<name> (plus labels)."""
    return node(name, **{HOST: name}, **labels)


def p(name, on, ns=None, **labels):
    w = make_pod().name(name).node(on).labels(labels)
    return w.namespace(ns) if ns else w


def rs(name, selector):
    return {"metadata": {"namespace": "default", "name": name}, "spec": {"selector": selector}}


def weight(size):
    return math.log(size + 2)


def plugin(args, nodes, pods=(), **objects):
    return PodTopologySpread.new(args, handle([n.obj() for n in nodes], [q.obj() for q in pods], **objects))


# -- TestPreScoreSkip ------------------------------------------------------------------------------------------

PRE_SCORE_SKIP = [
    ("the pod doesn't have soft topology spread Constraints", make_pod().name("p").namespace("default"), LIST,
     [hnode("node-a"), hnode("node-b")], {}),
    ("default constraints and a replicaset that doesn't match",
     make_pod().name("p").namespace("default").label("foo", "bar").label("baz", "sup")
     .owner_reference("rs2", "ReplicaSet"),
     {"defaultingType": "List",
      "defaultConstraints": [{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]},
     [node("node-a", planet="mars")], {"replicasets": [rs("rs1", exists_selector("tar"))]}),
]


@pytest.mark.parametrize("pod, args, nodes, objects", [c[1:] for c in PRE_SCORE_SKIP],
                         ids=[c[0] for c in PRE_SCORE_SKIP])
def test_pre_score_skip(pod, args, nodes, objects):
    pl = plugin(args, nodes, **objects)
    st = pl.pre_score(new_state(), pod.obj(), pl.handle.snapshot.node_infos)
    assert st is not None and st.code == Code.SKIP


# -- TestPreScoreStateEmptyNodes -------------------------------------------------------------------------------

def want_constraint(skew, key, selector, affinity="Honor", taints="Ignore", min_domains=1):
    return (skew, key, None if selector is None else LabelSelector(selector).key, min_domains,
            affinity == "Honor", taints == "Honor")


def got_constraint(c):
    return (c.max_skew, c.topology_key, c.selector_key, c.min_domains, c.honor_affinity, c.honor_taints)


def zone_nodes(x_labels=None, x_taints=False, foo=False):
    extra = {"foo": ""} if foo else {}
    x = hnode("node-x", **(x_labels if x_labels is not None else {"zone": "zone2"}))
    if x_taints:
        x.taints(TAINTS)
    return [hnode("node-a", zone="zone1", **extra), hnode("node-b", zone="zone1", **extra), x]


def spread_pod(*constraints, selector=None, affinity=None):
    w = make_pod().name("p").label("foo", "")
    if selector:
        w.node_selector(selector)
    if affinity:
        w.node_affinity_in(*affinity)
    for c in constraints:
        w.spread_constraint(*c)
    return w


RS1_FOO = {"replicasets": [rs("rs1", FOO)]}

PRE_SCORE_STATE = [
    ("normal case", spread_pod((1, "zone", "ScheduleAnyway", FOO), (1, HOST, "ScheduleAnyway", FOO)), LIST,
     zone_nodes(), {},
     ([want_constraint(1, "zone", FOO), want_constraint(1, HOST, FOO)], set(),
      {("zone", "zone1"): 0, ("zone", "zone2"): 0}, [weight(2), weight(3)])),
    ("null selector", spread_pod((1, "zone", "ScheduleAnyway", None)), LIST, zone_nodes(), {},
     ([want_constraint(1, "zone", None)], set(), {("zone", "zone1"): 0, ("zone", "zone2"): 0}, [weight(2)])),
    ("node-x doesn't have label zone",
     spread_pod((1, "zone", "ScheduleAnyway", FOO), (1, HOST, "ScheduleAnyway", BAR)), LIST, zone_nodes({}), {},
     ([want_constraint(1, "zone", FOO), want_constraint(1, HOST, BAR)], {"node-x"}, {("zone", "zone1"): 0},
      [weight(1), weight(2)])),
    ("system default constraints and a replicaset",
     make_pod().name("p").namespace("default").label("foo", "tar").label("baz", "sup")
     .owner_reference("rs1", "ReplicaSet"),
     {"defaultingType": "System"},
     [hnode("node-a", **{ZONE: "mars"}), hnode("node-b", **{ZONE: "mars"}), hnode("node-c"), hnode("node-d")],
     RS1_FOO,
     ([want_constraint(3, HOST, FOO), want_constraint(5, ZONE, FOO)], set(), {(ZONE, "mars"): 0, (ZONE, ""): 0},
      [weight(4), weight(2)])),
    ("default constraints and a replicaset",
     make_pod().name("p").namespace("default").label("foo", "tar").label("baz", "sup")
     .owner_reference("rs1", "ReplicaSet"),
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
         {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
         {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]},
     [node("node-a", rack="rack1", planet="mars", **{HOST: "node-a"})], RS1_FOO,
     ([want_constraint(1, HOST, FOO), want_constraint(2, "planet", FOO)], set(), {("planet", "mars"): 0},
      [weight(1), weight(1)])),
    ("default constraints and a replicaset, but pod has constraints",
     make_pod().name("p").namespace("default").label("foo", "bar").label("baz", "sup")
     .owner_reference("rs1", "ReplicaSet")
     .spread_constraint(1, "zone", "DoNotSchedule", BAR)
     .spread_constraint(2, "planet", "ScheduleAnyway", labels_selector(baz="sup")),
     {"defaultingType": "List",
      "defaultConstraints": [{"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": "ScheduleAnyway"}]},
     [node("node-a", planet="mars", galaxy="andromeda")], RS1_FOO,
     ([want_constraint(2, "planet", labels_selector(baz="sup"))], set(), {("planet", "mars"): 0}, [weight(1)])),
    ("NodeAffinityPolicy honored with labelSelectors",
     spread_pod((1, "zone", "ScheduleAnyway", BAR), selector={"foo": ""}), LIST, zone_nodes(foo=True), {},
     ([want_constraint(1, "zone", BAR)], set(), {("zone", "zone1"): 0, ("zone", "zone2"): 0}, [weight(2)])),
    ("NodeAffinityPolicy ignored with labelSelectors",
     spread_pod((1, "zone", "ScheduleAnyway", BAR, None, "Ignore"), selector={"foo": ""}), LIST,
     zone_nodes(foo=True), {},
     ([want_constraint(1, "zone", BAR, affinity="Ignore")], set(), {("zone", "zone1"): 0, ("zone", "zone2"): 0},
      [weight(2)])),
    ("NodeAffinityPolicy honored with nodeAffinity",
     spread_pod((1, "zone", "ScheduleAnyway", BAR), affinity=("foo", [""])), LIST, zone_nodes(foo=True), {},
     ([want_constraint(1, "zone", BAR)], set(), {("zone", "zone1"): 0, ("zone", "zone2"): 0}, [weight(2)])),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     spread_pod((1, "zone", "ScheduleAnyway", BAR, None, "Ignore"), affinity=("foo", [""])), LIST,
     zone_nodes(foo=True), {},
     ([want_constraint(1, "zone", BAR, affinity="Ignore")], set(), {("zone", "zone1"): 0, ("zone", "zone2"): 0},
      [weight(2)])),
    ("NodeTaintsPolicy honored", spread_pod((1, "zone", "ScheduleAnyway", BAR, None, None, "Honor")), LIST,
     zone_nodes(x_taints=True, foo=True), {},
     ([want_constraint(1, "zone", BAR, taints="Honor")], set(), {("zone", "zone1"): 0, ("zone", "zone2"): 0},
      [weight(2)])),
    ("NodeTaintsPolicy ignored", spread_pod((1, "zone", "ScheduleAnyway", BAR)), LIST,
     zone_nodes(x_taints=True, foo=True), {},
     ([want_constraint(1, "zone", BAR)], set(), {("zone", "zone1"): 0, ("zone", "zone2"): 0}, [weight(2)])),
]


@pytest.mark.parametrize("pod, args, nodes, objects, want", [c[1:] for c in PRE_SCORE_STATE],
                         ids=[c[0] for c in PRE_SCORE_STATE])
def test_pre_score_state_empty_nodes(pod, args, nodes, objects, want):
    pl = plugin(args, nodes, **objects)
    state = new_state()
    assert pl.pre_score(state, pod.obj(), pl.handle.snapshot.node_infos) is None
    s = state.read(PRE_SCORE_KEY)
    pair_counts = {(key, value): n for key, per_value in s.counts.items() for value, n in per_value.items()}
    got = ([got_constraint(c) for c in s.constraints], set(s.ignored_nodes), pair_counts,
           [term[2] for term in s.terms])
    assert got == want


# -- TestPodTopologySpreadScore --------------------------------------------------------------------------------

def foo_pods(spec):
    """"a2b1" -> p-a1, p-a2 on node-a and p-b1 on node-b, each labelled foo."""
    out = []
    for i in range(0, len(spec), 2):
        letter, n = spec[i], int(spec[i + 1])
        out.extend(p(f"p-{letter}{k}", f"node-{letter}", foo="") for k in range(1, n + 1))
    return out


def hostnames(*letters):
    return [hnode(f"node-{x}") for x in letters]


def score_pod(*constraints, labels=("foo",), **kw):
    w = make_pod().name("p")
    for label in labels:
        w.label(label, "")
    if kw.get("selector"):
        w.node_selector(kw["selector"])
    if kw.get("affinity"):
        w.node_affinity_in(*kw["affinity"])
    for c in constraints:
        w.spread_constraint(*c)
    return w


def zones(*spec):
    """("a", "zone1"), ... -> nodes with zone and hostname labels."""
    return [hnode(f"node-{x}", zone=z) for x, z in spec]


NODE_LABEL = [node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""),
              node("node-c", node="node-c")]
TAINTED = [node("node-a", node="node-a"), node("node-b", node="node-b"),
           node("node-c", node="node-c").taints(TAINTS)]
A2B1C1 = foo_pods("a2b1c1")
MIXED = [p("p-a1", "node-a", foo=""), p("p-b1", "node-b", foo="", bar=""), p("p-y1", "node-c", foo=""),
         p("p-y2", "node-c", bar="")]
ZONES_ABCD = zones(("a", "zone1"), ("b", "zone1"), ("c", "zone2"), ("d", "zone2"))
GATE_OFF = ("not applicable: runs with the MatchLabelKeysInPodTopologySpread gate off; scheduler_core has "
            "v1.30's default (on)")

SCORE = [
    ("one constraint on node, no existing pods", score_pod((1, HOST, "ScheduleAnyway", FOO)), [],
     hostnames("a", "b"), [], {}, [100, 100]),
    ("one constraint on node, only one node is candidate", score_pod((1, HOST, "ScheduleAnyway", FOO)),
     foo_pods("a2b1"), hostnames("a"), hostnames("b"), {}, [100]),
    ("one constraint on node, all nodes have the same number of matching pods",
     score_pod((1, HOST, "ScheduleAnyway", FOO)), foo_pods("a1b1"), hostnames("a", "b"), [], {}, [100, 100]),
    ("one constraint on node, all 4 nodes are candidates", score_pod((1, HOST, "ScheduleAnyway", FOO)),
     foo_pods("a2b1d3"), hostnames("a", "b", "c", "d"), [], {}, [20, 60, 100, 0]),
    ("one constraint on node, null selector", score_pod((1, HOST, "ScheduleAnyway", None)),
     foo_pods("a2b1d3"), hostnames("a", "b", "c", "d"), [], {}, [100, 100, 100, 100]),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=2", score_pod((2, HOST, "ScheduleAnyway", FOO)),
     foo_pods("a2b1d3"), hostnames("a", "b", "c", "d"), [], {}, [33, 66, 100, 16]),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=3", score_pod((3, HOST, "ScheduleAnyway", FOO)),
     foo_pods("a4b3c2d1"), hostnames("a", "b", "c", "d"), [], {}, [44, 66, 77, 100]),
    ("system defaulting, nodes don't have zone, pods match service", score_pod(), foo_pods("a4b3c2d1"),
     hostnames("a", "b", "c", "d"), [], {"services": [{"spec": {"selector": {"foo": ""}}}]}, [44, 66, 77, 100]),
    ("one constraint on node, 3 out of 4 nodes are candidates", score_pod((1, HOST, "ScheduleAnyway", FOO)),
     foo_pods("a4b2x1y3"), hostnames("a", "b", "x"), hostnames("y"), {}, [33, 83, 100]),
    ("one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     score_pod((1, HOST, "ScheduleAnyway", FOO)), foo_pods("a4b2x1y3"),
     [hnode("node-a"), node("node-b", n="node-b"), hnode("node-x")], hostnames("y"), {}, [16, 0, 100]),
    ("one constraint on zone, 3 out of 4 nodes are candidates", score_pod((1, "zone", "ScheduleAnyway", FOO)),
     foo_pods("a4b2x1y3"), zones(("a", "zone1"), ("b", "zone1"), ("x", "zone2")), zones(("y", "zone2")), {},
     [75, 75, 100]),
    ("two Constraints on zone and node, 2 out of 4 nodes are candidates",
     score_pod((1, "zone", "ScheduleAnyway", FOO), (1, HOST, "ScheduleAnyway", FOO)), foo_pods("a2b1x2y4"),
     zones(("a", "zone1"), ("x", "zone2")), zones(("b", "zone1"), ("y", "zone2")), {}, [100, 63]),
    ("two Constraints on zone and node, with different labelSelectors",
     score_pod((1, "zone", "ScheduleAnyway", FOO), (1, HOST, "ScheduleAnyway", BAR), labels=("foo", "bar")),
     [p("p-a1", "node-a", foo=""), p("p-b1", "node-b", foo="", bar=""), p("p-y1", "node-y", foo=""),
      p("p-y2", "node-y", bar="")],
     zones(("a", "zone1"), ("b", "zone1"), ("x", "zone2"), ("y", "zone2")), [], {}, [60, 20, 100, 60]),
    ("two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
     score_pod((1, "zone", "ScheduleAnyway", FOO), (1, HOST, "ScheduleAnyway", BAR), labels=("foo", "bar")),
     [p("p-b1", "node-b", bar=""), p("p-x1", "node-x", foo=""), p("p-y1", "node-y", foo="", bar="")],
     zones(("a", "zone1"), ("b", "zone1"), ("x", "zone2"), ("y", "zone2")), [], {}, [100, 60, 40, 0]),
    ("two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
     score_pod((1, "zone", "ScheduleAnyway", FOO), (1, HOST, "ScheduleAnyway", BAR), labels=("foo", "bar")),
     [p("p-a1", "node-a", foo=""), p("p-b1", "node-b", foo="", bar=""), p("p-y1", "node-y", foo=""),
      p("p-y2", "node-y", bar="")],
     zones(("a", "zone1"), ("b", "zone1"), ("x", "zone2")), zones(("y", "zone2")), {}, [50, 25, 100]),
    ("existing pods in a different namespace do not count", score_pod((1, HOST, "ScheduleAnyway", FOO)),
     [p("p-a1", "node-a", ns="ns1", foo=""), p("p-a2", "node-a", foo=""), p("p-b1", "node-b", foo=""),
      p("p-b2", "node-b", foo="")], hostnames("a", "b"), [], {}, [100, 33]),
    ("terminating Pods should be excluded", score_pod((1, HOST, "ScheduleAnyway", FOO)),
     [p("p-a", "node-a", foo="").terminating(), p("p-b", "node-b", foo="")], hostnames("a", "b"), [], {},
     [100, 0]),
    ("minDomains has no effect when ScheduleAnyway", score_pod((2, "node", "ScheduleAnyway", FOO, 10)),
     foo_pods("a2b2c1"), [node(f"node-{x}", node=f"node-{x}") for x in "abc"], [], {}, [75, 75, 100]),
    ("NodeAffinityPolicy honoed with labelSelectors",
     score_pod((1, "node", "ScheduleAnyway", FOO), selector={"foo": ""}), A2B1C1, NODE_LABEL, [], {},
     [0, 33, 100]),
    ("NodeAffinityPolicy ignored with labelSelectors",
     score_pod((1, "node", "ScheduleAnyway", FOO, None, "Ignore"), selector={"foo": ""}), A2B1C1, NODE_LABEL, [],
     {}, [66, 100, 100]),
    ("NodeAffinityPolicy honoed with nodeAffinity",
     score_pod((1, "node", "ScheduleAnyway", FOO), affinity=("foo", [""])), A2B1C1, NODE_LABEL, [], {},
     [0, 33, 100]),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     score_pod((1, "node", "ScheduleAnyway", FOO, None, "Ignore"), affinity=("foo", [""])), A2B1C1, NODE_LABEL,
     [], {}, [66, 100, 100]),
    ("NodeTaintsPolicy honored", score_pod((1, "node", "ScheduleAnyway", FOO, None, None, "Honor")), A2B1C1,
     TAINTED, [], {}, [0, 33, 100]),
    ("NodeTaintsPolicy ignored", score_pod((1, "node", "ScheduleAnyway", FOO)), A2B1C1, TAINTED, [], {},
     [66, 100, 100]),
    ("matchLabelKeys ignored when feature gate disabled",
     score_pod((1, "zone", "ScheduleAnyway", FOO, None, None, None, ["baz"]),
               (1, HOST, "ScheduleAnyway", BAR, None, None, None, ["baz"]), labels=("foo", "bar", "baz")),
     MIXED, ZONES_ABCD, [], {}, GATE_OFF),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     score_pod((1, "zone", "ScheduleAnyway", {}, None, None, None, ["foo"]),
               (1, HOST, "ScheduleAnyway", {}, None, None, None, ["bar"]), labels=("foo", "bar")),
     MIXED, ZONES_ABCD, [], {}, [60, 20, 60, 100]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     score_pod((1, "zone", "ScheduleAnyway", FOO), (1, HOST, "ScheduleAnyway", BAR, None, None, None, ["baz"]),
               labels=("foo", "bar", "baz")),
     [p("p-a1", "node-a", foo=""), p("p-b1", "node-b", foo="", bar="", baz=""), p("p-c1", "node-c", foo=""),
      p("p-c2", "node-c", bar=""), p("p-d3", "node-c", bar="", baz="")], ZONES_ABCD, [], {}, [60, 20, 60, 100]),
]


@pytest.mark.parametrize("pod, existing, nodes, failed, objects, want", [c[1:] for c in SCORE],
                         ids=[c[0] for c in SCORE])
def test_pod_topology_spread_score(pod, existing, nodes, failed, objects, want):
    if isinstance(want, str):
        pytest.skip(want)
    pl = plugin({"defaultingType": "System"}, nodes + failed, existing, **objects)
    state, q = new_state(), pod.obj()
    candidates = pl.handle.snapshot.node_infos[:len(nodes)]
    assert pl.pre_score(state, q, candidates) is None
    scores = []
    for ni in candidates:
        s, st = pl.score(state, q, ni)
        assert st is None
        scores.append([ni.name, s])
    assert pl.normalize_score(state, q, scores) is None
    assert [s for _n, s in scores] == want
