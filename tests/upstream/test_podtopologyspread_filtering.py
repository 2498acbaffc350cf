"""kube's podtopologyspread/filtering_test.go, case by case.

Only a newer version than v1.30 could be read (see UPSTREAM_VERSION); its expectations all hold for v1.30's code
(none of them failed). Cases that turn the NodeInclusionPolicyInPodTopologySpread gate off run with v1.30's default
(gate on): their expected states do not depend on the gate (node affinity is honoured and taints ignored either
way with default policies). The one case that turns MatchLabelKeysInPodTopologySpread off is skipped: scheduler_core
has v1.30's default (on) and no switch for it.

kube's preFilterState is compared field by field with scheduler_core's PreFilterState: constraints (maxSkew,
topologyKey, selector, minDomains, inclusion policies), TpKeyToDomainsNum, TpKeyToCriticalPaths (kube's comparer:
paths of equal counts compare in name order) and TpPairToMatchNum.
"""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.objects import LabelSelector
from scheduler_core.plugins.podtopologyspread import PRE_FILTER_KEY, PodTopologySpread
from scheduler_core.plugins.podtopologyspread.filtering import MAX_INT32

from .plugin_cases import (exists_selector, handle, labels_selector, make_node, make_pod, new_state, node_info,
                           status_tuple)

UPSTREAM = "pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go"
UPSTREAM_VERSION = ("v1.33 era (commit e7827879: backend/cache, FactoryAdapter); the v1.30 file could not be read")
UPSTREAM_CASES = 95

FOO = exists_selector("foo")
BAR = exists_selector("bar")
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
HONOR, IGNORE = "Honor", "Ignore"
NEW_PATHS = [("", MAX_INT32), ("", MAX_INT32)]


def node(name, taints=False, **labels):
    n = make_node().name(name).labels(labels)
    return n.taints(TAINTS) if taints else n


def zn(name, zone, taints=False, **labels):
    """A node labelled zone=<zone>, node=<name> (plus labels)."""
    return node(name, taints, zone=zone, node=name, **labels)


def nn(name, taints=False, **labels):
    """A node labelled node=<name> (plus labels)."""
    return node(name, taints, node=name, **labels)


def p(name, on, ns=None, **labels):
    w = make_pod().name(name).node(on).labels(labels)
    return w.namespace(ns) if ns else w


def pods(spec, **labels):
    """"a2b1" -> p-a1, p-a2 on node-a and p-b1 on node-b, each with labels (default foo="")."""
    labels = labels or {"foo": ""}
    out = []
    for i in range(0, len(spec), 2):
        letter, n = spec[i], int(spec[i + 1])
        out.extend(p(f"p-{letter}{k}", f"node-{letter}", **labels) for k in range(1, n + 1))
    return out


def spod(*constraints, labels=("foo",), selector=None, affinity_in=None, affinity_not_in=None, tolerate=None):
    """The incoming pod "p": labels (value ""), node selector / affinity, and spread constraints
    (maxSkew, key, whenUnsatisfiable, selector, minDomains, nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys)."""
    w = make_pod().name("p")
    for label in labels:
        w.label(label, "")
    if selector:
        w.node_selector(selector)
    if affinity_in:
        w.node_affinity_in(*affinity_in)
    if affinity_not_in:
        w.node_affinity_not_in(*affinity_not_in)
    if tolerate:
        w.toleration(tolerate)
    for c in constraints:
        w.spread_constraint(*c)
    return w


def hard(skew, key, selector, min_domains=None, affinity=None, taints=None, match_label_keys=None):
    return (skew, key, "DoNotSchedule", selector, min_domains, affinity, taints, match_label_keys)


def soft(skew, key, selector, min_domains=None, affinity=None, taints=None, match_label_keys=None):
    return (skew, key, "ScheduleAnyway", selector, min_domains, affinity, taints, match_label_keys)


def requirements(selector_key):
    """A selector's key as one set of requirements (matchLabels as In), as kube's labels.Selector compares."""
    if selector_key is None:
        return None
    labels, exprs = selector_key
    return frozenset({(k, "In", frozenset((v,))) for k, v in labels} | set(exprs))


def want_constraint(skew, key, selector, affinity=HONOR, taints=IGNORE, min_domains=1):
    return (skew, key, None if selector is None else requirements(LabelSelector(selector).key), min_domains,
            affinity == HONOR, taints == HONOR)


def state_want(constraints, domains, paths, pairs):
    """(constraints, TpKeyToDomainsNum, TpKeyToCriticalPaths, TpPairToMatchNum) in comparable form."""
    return ([want_constraint(*c) for c in constraints], domains,
            {k: _sorted_paths(v) for k, v in paths.items()}, pairs)


def _sorted_paths(paths):
    (v0, n0), (v1, n1) = paths
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return [(v0, n0), (v1, n1)]


def got_state(s):
    constraints = [(c.max_skew, c.topology_key, requirements(c.selector_key), c.min_domains, c.honor_affinity,
                    c.honor_taints) for c in s.constraints]
    paths = {k: _sorted_paths([(p[0], p[1]), (p[2], p[3])]) for k, p in s.critical_paths.items()}
    pairs = {(k, v): n for k, per_value in s.counts.items() for v, n in per_value.items()}
    return constraints, dict(s.domains_num), paths, pairs


def plugin(nodes, existing=(), default_constraints=None, **objects):
    args = {"defaultingType": "List", "defaultConstraints": list(default_constraints or ())}
    return PodTopologySpread.new(args, handle([n.obj() for n in nodes], [q.obj() for q in existing], **objects))


ZONES_ABXY = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]
ZONES_ABY = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")]
C_FOO = (1, "zone", FOO)
N_FOO = (1, "node", FOO)
SVC_FOO_BAR = {"services": [{"spec": {"selector": {"foo": "bar"}}}]}
NODES_ABC_FOO = [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c", bar="")]
PODS_BAR_ABBC = [p("p-a", "node-a", bar=""), p("p-b", "node-b", bar=""), p("p-c", "node-b", bar=""),
                 p("p-d", "node-c")]
NODES_ABC_TAINTED = [nn("node-a"), nn("node-b"), nn("node-c", taints=True, bar="")]
GATE_OFF = ("not applicable: runs with the MatchLabelKeysInPodTopologySpread gate off; scheduler_core has "
            "v1.30's default (on)")
SKIP = "skip"

PRE_FILTER_STATE = [
    ("clean cluster with one spreadConstraint", spod(hard(5, "zone", labels_selector(foo="bar"))), ZONES_ABXY, [],
     None, {},
     state_want([(5, "zone", labels_selector(foo="bar"))], {"zone": 2},
                {"zone": [("zone1", 0), ("zone2", 0)]}, {("zone", "zone1"): 0, ("zone", "zone2"): 0})),
    ("normal case with one spreadConstraint", spod(hard(*C_FOO)), ZONES_ABXY, pods("a2b1y2"), None, {},
     state_want([C_FOO], {"zone": 2}, {"zone": [("zone2", 2), ("zone1", 3)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 2})),
    ("normal case with null label selector", spod(hard(1, "zone", None)), ZONES_ABXY, pods("a2b1y2"), None, {},
     state_want([(1, "zone", None)], {"zone": 2}, {"zone": [("zone2", 0), ("zone1", 0)]},
                {("zone", "zone1"): 0, ("zone", "zone2"): 0})),
    ("normal case with one spreadConstraint, on a 3-zone cluster", spod(hard(*C_FOO)),
     ZONES_ABXY + [zn("node-o", "zone3"), zn("node-p", "zone3")], pods("a2b1y2"), None, {},
     state_want([C_FOO], {"zone": 3}, {"zone": [("zone3", 0), ("zone2", 2)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 2, ("zone", "zone3"): 0})),
    ("namespace mismatch doesn't count", spod(hard(*C_FOO)), ZONES_ABXY,
     [p("p-a1", "node-a", foo=""), p("p-a2", "node-a", ns="ns1", foo=""), p("p-b1", "node-b", foo=""),
      p("p-y1", "node-y", ns="ns2", foo=""), p("p-y2", "node-y", foo="")], None, {},
     state_want([C_FOO], {"zone": 2}, {"zone": [("zone2", 1), ("zone1", 2)]},
                {("zone", "zone1"): 2, ("zone", "zone2"): 1})),
    ("normal case with two spreadConstraints", spod(hard(*C_FOO), hard(*N_FOO)), ZONES_ABXY, pods("a2b1y4"), None,
     {},
     state_want([C_FOO, N_FOO], {"zone": 2, "node": 4},
                {"zone": [("zone1", 3), ("zone2", 4)], "node": [("node-x", 0), ("node-b", 1)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 4, ("node", "node-a"): 2, ("node", "node-b"): 1,
                 ("node", "node-x"): 0, ("node", "node-y"): 4})),
    ("soft spreadConstraints should be bypassed",
     spod(soft(*C_FOO), hard(*C_FOO), soft(*N_FOO), hard(*N_FOO)), ZONES_ABY, pods("a2b1y4"), None, {},
     state_want([C_FOO, N_FOO], {"zone": 2, "node": 3},
                {"zone": [("zone1", 3), ("zone2", 4)], "node": [("node-b", 1), ("node-a", 2)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 4, ("node", "node-a"): 2, ("node", "node-b"): 1,
                 ("node", "node-y"): 4})),
    ("different labelSelectors - simple version", spod(hard(*C_FOO), hard(1, "node", BAR), labels=("foo", "bar")),
     ZONES_ABY, [p("p-a", "node-a", foo=""), p("p-b", "node-b", bar="")], None, {},
     state_want([C_FOO, (1, "node", BAR)], {"zone": 2, "node": 3},
                {"zone": [("zone2", 0), ("zone1", 1)], "node": [("node-a", 0), ("node-y", 0)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 0, ("node", "node-a"): 0, ("node", "node-b"): 1,
                 ("node", "node-y"): 0})),
    ("different labelSelectors - complex pods", spod(hard(*C_FOO), hard(1, "node", BAR), labels=("foo", "bar")),
     ZONES_ABY,
     [p("p-a1", "node-a", foo=""), p("p-a2", "node-a", foo="", bar=""), p("p-b1", "node-b", foo=""),
      p("p-y1", "node-y", foo=""), p("p-y2", "node-y", foo="", bar=""), p("p-y3", "node-y", foo=""),
      p("p-y4", "node-y", foo="", bar="")], None, {},
     state_want([C_FOO, (1, "node", BAR)], {"zone": 2, "node": 3},
                {"zone": [("zone1", 3), ("zone2", 4)], "node": [("node-b", 0), ("node-a", 1)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 4, ("node", "node-a"): 1, ("node", "node-b"): 0,
                 ("node", "node-y"): 2})),
    ("two spreadConstraints, and with podAffinity",
     spod(hard(*C_FOO), hard(*N_FOO), affinity_not_in=("node", ["node-x"])), ZONES_ABXY, pods("a2b1y4"), None, {},
     state_want([C_FOO, N_FOO], {"zone": 2, "node": 3},
                {"zone": [("zone1", 3), ("zone2", 4)], "node": [("node-b", 1), ("node-a", 2)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 4, ("node", "node-a"): 2, ("node", "node-b"): 1,
                 ("node", "node-y"): 4})),
    ("default constraints and a service", make_pod().name("p").label("foo", "bar").label("baz", "kar"), [], [],
     [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
      {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"},
      {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"}], SVC_FOO_BAR,
     state_want([(3, "node", labels_selector(foo="bar")), (5, "rack", labels_selector(foo="bar"))], {},
                {"node": NEW_PATHS, "rack": NEW_PATHS}, {})),
    ("default constraints and a service that doesn't match", make_pod().name("p").label("foo", "bar"), [], [],
     [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}],
     {"services": [{"spec": {"selector": {"baz": "kep"}}}]}, SKIP),
    ("default constraints and a service, but pod has constraints",
     make_pod().name("p").label("foo", "bar").label("baz", "tar")
     .spread_constraint(*hard(1, "zone", labels_selector(baz="tar")))
     .spread_constraint(*soft(2, "planet", labels_selector(fot="rok"))), [], [],
     [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}], SVC_FOO_BAR,
     state_want([(1, "zone", labels_selector(baz="tar"))], {}, {"zone": NEW_PATHS}, {})),
    ("default soft constraints and a service", make_pod().name("p").label("foo", "bar"), [], [],
     [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"}], SVC_FOO_BAR, SKIP),
    ("TpKeyToDomainsNum is calculated when MinDomains is enabled", spod(hard(*C_FOO), hard(*N_FOO)), ZONES_ABXY,
     pods("a2b1y4"), None, {},
     state_want([C_FOO, N_FOO], {"zone": 2, "node": 4},
                {"zone": [("zone1", 3), ("zone2", 4)], "node": [("node-x", 0), ("node-b", 1)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 4, ("node", "node-a"): 2, ("node", "node-b"): 1,
                 ("node", "node-x"): 0, ("node", "node-y"): 4})),
    # The expected state is the one with node affinity honoured, so it holds with v1.30's gate default too.
    ("feature gate disabled with NodeAffinityPolicy", spod(hard(1, "node", BAR), selector={"foo": ""}),
     NODES_ABC_FOO, PODS_BAR_ABBC, None, {},
     state_want([(1, "node", BAR)], {"node": 2}, {"node": [("node-a", 1), ("node-b", 2)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2})),
    ("NodeAffinityPolicy honored with labelSelectors", spod(hard(1, "node", BAR), selector={"foo": ""}),
     NODES_ABC_FOO, PODS_BAR_ABBC, None, {},
     state_want([(1, "node", BAR)], {"node": 2}, {"node": [("node-a", 1), ("node-b", 2)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2})),
    ("NodeAffinityPolicy ignored with labelSelectors", spod(hard(1, "node", BAR, None, IGNORE), selector={"foo": ""}),
     NODES_ABC_FOO, PODS_BAR_ABBC, None, {},
     state_want([(1, "node", BAR, IGNORE)], {"node": 3}, {"node": [("node-c", 0), ("node-a", 1)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0})),
    ("NodeAffinityPolicy honored with nodeAffinity", spod(hard(1, "node", BAR), affinity_in=("foo", [""])),
     NODES_ABC_FOO,
     [p("p-a", "node-a", bar=""), p("p-c", "node-b", bar=""), p("p-d", "node-b", bar=""), p("p-e", "node-c")],
     None, {},
     state_want([(1, "node", BAR)], {"node": 2}, {"node": [("node-a", 1), ("node-b", 2)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2})),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     spod(hard(1, "node", BAR, None, IGNORE), affinity_in=("foo", [""])), NODES_ABC_FOO, PODS_BAR_ABBC, None, {},
     state_want([(1, "node", BAR, IGNORE)], {"node": 3}, {"node": [("node-c", 0), ("node-a", 1)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0})),
    # Taints are ignored by default (nodeTaintsPolicy Ignore), so the expected state holds with the gate on.
    ("feature gate disabled with NodeTaintsPolicy", spod(hard(1, "node", BAR)), NODES_ABC_TAINTED, PODS_BAR_ABBC,
     None, {},
     state_want([(1, "node", BAR)], {"node": 3}, {"node": [("node-c", 0), ("node-a", 1)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0})),
    ("NodeTaintsPolicy ignored", spod(hard(1, "node", BAR)), NODES_ABC_TAINTED, PODS_BAR_ABBC, None, {},
     state_want([(1, "node", BAR)], {"node": 3}, {"node": [("node-c", 0), ("node-a", 1)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0})),
    ("NodeTaintsPolicy honored", spod(hard(1, "node", BAR, None, None, HONOR)), NODES_ABC_TAINTED, PODS_BAR_ABBC,
     None, {},
     state_want([(1, "node", BAR, HONOR, HONOR)], {"node": 2}, {"node": [("node-a", 1), ("node-b", 2)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2})),
    ("NodeTaintsPolicy honored with tolerated taints",
     spod(hard(1, "node", BAR, None, None, HONOR), tolerate="node.kubernetes.io/unschedulable"), NODES_ABC_TAINTED,
     PODS_BAR_ABBC, None, {},
     state_want([(1, "node", BAR, HONOR, HONOR)], {"node": 3}, {"node": [("node-c", 0), ("node-a", 1)]},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0})),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     spod(hard(*C_FOO), hard(1, "node", FOO, None, IGNORE), selector={"foo": ""}),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")], pods("b2x1"), None, {},
     state_want([C_FOO, (1, "node", FOO, IGNORE)], {"zone": 2, "node": 3},
                {"zone": [("zone1", 0), ("zone2", 1)], "node": [("node-a", 0), ("node-x", 1)]},
                {("zone", "zone1"): 0, ("zone", "zone2"): 1, ("node", "node-a"): 0, ("node", "node-b"): 2,
                 ("node", "node-x"): 1})),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     spod(hard(1, "zone", FOO, None, None, HONOR), hard(*N_FOO)),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", taints=True), zn("node-x", "zone2", foo="")],
     pods("b2x1"), None, {},
     state_want([(1, "zone", FOO, HONOR, HONOR), N_FOO], {"zone": 2, "node": 3},
                {"zone": [("zone1", 0), ("zone2", 1)], "node": [("node-a", 0), ("node-x", 1)]},
                {("zone", "zone1"): 0, ("zone", "zone2"): 1, ("node", "node-a"): 0, ("node", "node-b"): 2,
                 ("node", "node-x"): 1})),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     spod(hard(*C_FOO), hard(*N_FOO), selector={"foo": ""}),
     [zn("node-a", "zone1"), zn("node-b", "zone1", taints=True, foo=""), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2")], pods("a2x1y1"), None, {},
     state_want([C_FOO, N_FOO], {"zone": 2, "node": 2},
                {"zone": [("zone1", 0), ("zone2", 1)], "node": [("node-b", 0), ("node-x", 1)]},
                {("zone", "zone1"): 0, ("zone", "zone2"): 1, ("node", "node-b"): 0, ("node", "node-x"): 1})),
    ("two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
     spod(hard(1, "zone", FOO, None, IGNORE), hard(1, "node", FOO, None, None, HONOR), selector={"foo": ""}),
     [zn("node-a", "zone1"), zn("node-b", "zone1", taints=True, foo=""), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2", foo="")], pods("a2x2y1"), None, {},
     state_want([(1, "zone", FOO, IGNORE), (1, "node", FOO, HONOR, HONOR)], {"zone": 2, "node": 2},
                {"zone": [("zone1", 2), ("zone2", 3)], "node": [("node-y", 1), ("node-x", 2)]},
                {("zone", "zone1"): 2, ("zone", "zone2"): 3, ("node", "node-x"): 2, ("node", "node-y"): 1})),
    ("matchLabelKeys ignored when feature gate disabled", None, [], [], None, {}, GATE_OFF),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     make_pod().name("p").label("foo", "").label("bar", "a").spread_constraint(*hard(1, "zone", FOO, None, None,
                                                                                     None, ["bar"])),
     ZONES_ABXY,
     [p("p-a1", "node-a", foo=""), p("p-a2", "node-a", foo="", bar="a"), p("p-b1", "node-b", foo=""),
      p("p-y1", "node-y", foo="", bar="a"), p("p-y2", "node-y", bar="")], None, {},
     state_want([(1, "zone", {"matchLabels": {"bar": "a"}, "matchExpressions": FOO["matchExpressions"]})],
                {"zone": 2}, {"zone": [("zone2", 1), ("zone1", 1)]}, {("zone", "zone1"): 1, ("zone", "zone2"): 1})),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     make_pod().name("p").label("foo", "a").spread_constraint(*hard(1, "zone", {}, None, None, None, ["foo"])),
     ZONES_ABXY, pods("a2b1y2", foo="a"), None, {},
     state_want([(1, "zone", labels_selector(foo="a"))], {"zone": 2}, {"zone": [("zone2", 2), ("zone1", 3)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 2})),
    ("key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
     spod(hard(1, "zone", None, None, None, None, ["bar"])), ZONES_ABXY, pods("a2b1y2", foo="a"), None, {},
     state_want([(1, "zone", None)], {"zone": 2}, {"zone": [("zone2", 0), ("zone1", 0)]},
                {("zone", "zone1"): 0, ("zone", "zone2"): 0})),
    # A nil selector matches nothing whether or not matchLabelKeys is merged, so this holds with v1.30's gate on.
    ("no pod is matched when LabelSelector is nil when feature gate disabled",
     spod(hard(1, "zone", None, None, None, None, ["bar"])), ZONES_ABXY, pods("a2b1y2", foo="a"), None, {},
     state_want([(1, "zone", None)], {"zone": 2}, {"zone": [("zone2", 0), ("zone1", 0)]},
                {("zone", "zone1"): 0, ("zone", "zone2"): 0})),
    ("key in matchLabelKeys is ignored when it isn't exist in pod.labels",
     spod(hard(1, "zone", FOO, None, None, None, ["bar"])), ZONES_ABXY, pods("a2b1y2", foo="a"), None, {},
     state_want([C_FOO], {"zone": 2}, {"zone": [("zone2", 2), ("zone1", 3)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 2})),
    ("skip if not specified", spod(), [zn("node-a", "zone1")], [], None, {}, SKIP),
]


@pytest.mark.parametrize("pod, nodes, existing, default_constraints, objects, want",
                         [c[1:] for c in PRE_FILTER_STATE], ids=[c[0] for c in PRE_FILTER_STATE])
def test_pre_filter_state(pod, nodes, existing, default_constraints, objects, want):
    if isinstance(want, str) and want != SKIP:
        pytest.skip(want)
    pl = plugin(nodes, existing, default_constraints, **objects)
    state = new_state()
    _res, st = pl.pre_filter(state, pod.obj())
    if want == SKIP:
        assert status_tuple(st) == (Code.SKIP, [])
        return
    assert st is None
    assert got_state(state.read(PRE_FILTER_KEY)) == want


# -- TestPreFilterStateAddPod / TestPreFilterStateRemovePod -------------------------------------------------------

ZONE_C = (1, "zone", FOO)
NODE_C = (1, "node", FOO)
NOT_IN_BAR = ("foo", ["bar"])
AB_FOO_BAR = [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")]
AB_TAINTED_A = [zn("node-a", "zone1", taints=True), zn("node-b", "zone2")]
# Whether or not the inclusion-policy gate is on, these expected states are the same (kube's test lists both).
ADD_POD = [
    ("node a and b both impact current min match", spod(hard(*N_FOO)), p("p-a1", "node-a", foo=""), [], 0,
     [zn("node-a", "zone1"), zn("node-b", "zone1")],
     state_want([NODE_C], {"node": 2}, {"node": [("node-b", 0), ("node-a", 1)]},
                {("node", "node-a"): 1, ("node", "node-b"): 0})),
    ("only node a impacts current min match", spod(hard(*N_FOO)), p("p-a1", "node-a", foo=""), pods("b1"), 0,
     [zn("node-a", "zone1"), zn("node-b", "zone1")],
     state_want([NODE_C], {"node": 2}, {"node": [("node-a", 1), ("node-b", 1)]},
                {("node", "node-a"): 1, ("node", "node-b"): 1})),
    ("add a pod in a different namespace doesn't change topologyKeyToMinPodsMap", spod(hard(*N_FOO)),
     p("p-a1", "node-a", ns="ns1", foo=""), pods("b1"), 0, [zn("node-a", "zone1"), zn("node-b", "zone1")],
     state_want([NODE_C], {"node": 2}, {"node": [("node-a", 0), ("node-b", 1)]},
                {("node", "node-a"): 0, ("node", "node-b"): 1})),
    ("add pod on non-critical node won't trigger re-calculation", spod(hard(*N_FOO)), p("p-b2", "node-b", foo=""),
     pods("b1"), 1, [zn("node-a", "zone1"), zn("node-b", "zone1")],
     state_want([NODE_C], {"node": 2}, {"node": [("node-a", 0), ("node-b", 2)]},
                {("node", "node-a"): 0, ("node", "node-b"): 2})),
    ("node a and x both impact topologyKeyToMinPodsMap on zone and node", spod(hard(*C_FOO), hard(*N_FOO)),
     p("p-a1", "node-a", foo=""), [], 0, [zn("node-a", "zone1"), zn("node-x", "zone2")],
     state_want([ZONE_C, NODE_C], {"zone": 2, "node": 2},
                {"zone": [("zone2", 0), ("zone1", 1)], "node": [("node-x", 0), ("node-a", 1)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 0, ("node", "node-a"): 1, ("node", "node-x"): 0})),
    ("only node a impacts topologyKeyToMinPodsMap on zone and node", spod(hard(*C_FOO), hard(*N_FOO)),
     p("p-a1", "node-a", foo=""), pods("x1"), 0, [zn("node-a", "zone1"), zn("node-x", "zone2")],
     state_want([ZONE_C, NODE_C], {"zone": 2, "node": 2},
                {"zone": [("zone1", 1), ("zone2", 1)], "node": [("node-a", 1), ("node-x", 1)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 1, ("node", "node-a"): 1, ("node", "node-x"): 1})),
    ("node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
     spod(hard(*C_FOO), hard(*N_FOO)), p("p-a1", "node-a", foo=""), pods("b2x1"), 0,
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
     state_want([ZONE_C, NODE_C], {"zone": 2, "node": 3},
                {"zone": [("zone2", 1), ("zone1", 3)], "node": [("node-a", 1), ("node-x", 1)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 1, ("node", "node-a"): 1, ("node", "node-b"): 2,
                 ("node", "node-x"): 1})),
    ("Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
     spod(hard(*C_FOO), hard(1, "node", BAR), labels=("foo", "bar")), p("p-a1", "node-a", foo=""),
     [p("p-b1", "node-b", foo="", bar=""), p("p-x1", "node-x", foo="", bar=""), p("p-x2", "node-x", bar="")], 0,
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
     state_want([ZONE_C, (1, "node", BAR)], {"zone": 2, "node": 3},
                {"zone": [("zone2", 1), ("zone1", 2)], "node": [("node-a", 0), ("node-b", 1)]},
                {("zone", "zone1"): 2, ("zone", "zone2"): 1, ("node", "node-a"): 0, ("node", "node-b"): 1,
                 ("node", "node-x"): 2})),
    ("Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
     spod(hard(*C_FOO), hard(1, "node", BAR), labels=("foo", "bar")), p("p-a1", "node-a", foo="", bar=""),
     [p("p-b1", "node-b", bar=""), p("p-x1", "node-x", foo="", bar=""), p("p-x2", "node-x", bar="")], 0,
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
     state_want([ZONE_C, (1, "node", BAR)], {"zone": 2, "node": 3},
                {"zone": [("zone1", 1), ("zone2", 1)], "node": [("node-a", 1), ("node-b", 1)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 1, ("node", "node-a"): 1, ("node", "node-b"): 1,
                 ("node", "node-x"): 2})),
    ("add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
     spod(hard(*C_FOO), affinity_not_in=NOT_IN_BAR), p("p-a1", "node-a", foo="", zone="zone1"),
     [p("p-a2", "node-a", foo="", zone="zone1"), p("p-b1", "node-b", foo="", zone="zone2")], 0, AB_FOO_BAR,
     state_want([ZONE_C], {"zone": 1}, {"zone": [("zone2", 1), ("", MAX_INT32)]}, {("zone", "zone2"): 1})),
    ("add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     spod(hard(*C_FOO), affinity_not_in=NOT_IN_BAR), p("p-a1", "node-a", foo="", zone="zone1"),
     [p("p-a2", "node-a", foo="", zone="zone1"), p("p-b1", "node-b", foo="", zone="zone2")], 0, AB_FOO_BAR,
     state_want([ZONE_C], {"zone": 1}, {"zone": [("zone2", 1), ("", MAX_INT32)]}, {("zone", "zone2"): 1})),
    ("add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled", spod(hard(*C_FOO)),
     p("p-b1", "node-b", foo="", zone="zone2"),
     [p("p-a1", "node-a", foo="", zone="zone1"), p("p-b2", "node-b", foo="", zone="zone2")], 1, AB_FOO_BAR,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 1), ("zone2", 2)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 2})),
    ("add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled", spod(hard(*C_FOO)),
     p("p-b1", "node-b", foo="", zone="zone2"),
     [p("p-a1", "node-a", foo="", zone="zone1"), p("p-b2", "node-b", foo="", zone="zone2")], 1, AB_FOO_BAR,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 1), ("zone2", 2)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 2})),
    ("add a label selector not matched pod when with NodeInclusionPolicy enabled", spod(hard(*C_FOO)),
     p("p-b1", "node-b", zone="zone2"),
     [p("p-a1", "node-a", foo="", zone="zone1"), p("p-b2", "node-b", foo="", zone="zone2")], 1, AB_FOO_BAR,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 1), ("zone2", 1)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 1})),
    ("add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled", spod(hard(*C_FOO)),
     p("p-b1", "node-b", foo="", zone="zone2"),
     [p("p-a1", "node-a", foo="", zone="zone1"), p("p-b2", "node-b", foo="", zone="zone2")], 1, AB_TAINTED_A,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 1), ("zone2", 2)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 2})),
    ("add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
     spod(hard(*C_FOO), tolerate="node.kubernetes.io/unschedulable"), p("p-b1", "node-b", foo="", zone="zone2"),
     [p("p-a1", "node-a", foo="", zone="zone1"), p("p-b2", "node-b", foo="", zone="zone2")], 1, AB_TAINTED_A,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 1), ("zone2", 2)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 2})),
]


@pytest.mark.parametrize("preemptor, added, existing, node_idx, nodes, want", [c[1:] for c in ADD_POD],
                         ids=[c[0] for c in ADD_POD])
def test_pre_filter_state_add_pod(preemptor, added, existing, node_idx, nodes, want):
    pl = plugin(nodes, existing)
    state, q = new_state(), preemptor.obj()
    _res, st = pl.pre_filter(state, q)
    assert st is None
    ni = pl.handle.snapshot.get(nodes[node_idx].raw["metadata"]["name"])
    assert pl.add_pod(state, q, added.obj(), ni) is None
    assert got_state(state.read(PRE_FILTER_KEY)) == want


def foo_zone_pods(*spec):
    """("a1", "node-a", "zone1") -> a pod p-a1 on node-a labelled foo="" and zone=zone1."""
    return [p(f"p-{name}", on, foo="", zone=zone) for name, on, zone in spec]


ABX = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")]
# (name, preemptor, nodes, existing, index of the deleted existing pod or a pod that is not there, node idx, want)
REMOVE_POD = [
    ("one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged", spod(hard(*C_FOO)), ABX, pods("a1b1x1"), 0,
     0, state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 1), ("zone2", 1)]},
                   {("zone", "zone1"): 1, ("zone", "zone2"): 1})),
    ("one spreadConstraint on node, topologyKeyToMinPodsMap changed", spod(hard(*C_FOO)), ZONES_ABXY,
     pods("a1b1x1y1"), 0, 0,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 1), ("zone2", 2)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 2})),
    ("delete an irrelevant pod won't help", spod(hard(*C_FOO)), ZONES_ABXY,
     [p("p-a0", "node-a", bar="")] + pods("a1b1x1y1"), 0, 0,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 2), ("zone2", 2)]},
                {("zone", "zone1"): 2, ("zone", "zone2"): 2})),
    ("delete a non-existing pod won't help", spod(hard(*C_FOO)), ZONES_ABXY, pods("a1b1x1y1"),
     p("p-a0", "node-a", bar=""), 0,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone1", 2), ("zone2", 2)]},
                {("zone", "zone1"): 2, ("zone", "zone2"): 2})),
    ("two spreadConstraints", spod(hard(*C_FOO), hard(*N_FOO)), ABX, pods("a2b1x2"), 3, 2,
     state_want([ZONE_C, NODE_C], {"zone": 2, "node": 3},
                {"zone": [("zone2", 1), ("zone1", 3)], "node": [("node-b", 1), ("node-x", 1)]},
                {("zone", "zone1"): 3, ("zone", "zone2"): 1, ("node", "node-a"): 2, ("node", "node-b"): 1,
                 ("node", "node-x"): 1})),
    ("remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
     spod(hard(*C_FOO), affinity_not_in=NOT_IN_BAR), AB_FOO_BAR,
     foo_zone_pods(("a2", "node-a", "zone1"), ("b1", "node-b", "zone2")),
     p("p-a1", "node-a", foo="", zone="zone1"), 0,
     state_want([ZONE_C], {"zone": 1}, {"zone": [("zone2", 1), ("", MAX_INT32)]}, {("zone", "zone2"): 1})),
    ("remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     spod(hard(*C_FOO), affinity_not_in=NOT_IN_BAR), AB_FOO_BAR,
     foo_zone_pods(("a2", "node-a", "zone1"), ("b1", "node-b", "zone2")),
     p("p-a1", "node-a", foo="", zone="zone1"), 0,
     state_want([ZONE_C], {"zone": 1}, {"zone": [("zone2", 1), ("", MAX_INT32)]}, {("zone", "zone2"): 1})),
    ("remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled", spod(hard(*C_FOO)),
     AB_FOO_BAR, foo_zone_pods(("a1", "node-a", "zone1"), ("b2", "node-b", "zone2")),
     p("p-b1", "node-b", foo="", zone="zone2"), 1,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone2", 0), ("zone1", 1)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 0})),
    ("remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled", spod(hard(*C_FOO)),
     AB_FOO_BAR, foo_zone_pods(("a1", "node-a", "zone1"), ("b2", "node-b", "zone2")),
     p("p-b1", "node-b", foo="", zone="zone2"), 1,
     state_want([ZONE_C], {"zone": 2}, {"zone": [("zone2", 0), ("zone1", 1)]},
                {("zone", "zone1"): 1, ("zone", "zone2"): 0})),
]


@pytest.mark.parametrize("preemptor, nodes, existing, deleted, node_idx, want", [c[1:] for c in REMOVE_POD],
                         ids=[c[0] for c in REMOVE_POD])
def test_pre_filter_state_remove_pod(preemptor, nodes, existing, deleted, node_idx, want):
    pl = plugin(nodes, existing)
    state, q = new_state(), preemptor.obj()
    _res, st = pl.pre_filter(state, q)
    assert st is None
    victim = existing[deleted].obj() if isinstance(deleted, int) else deleted.obj()
    ni = pl.handle.snapshot.get(nodes[node_idx].raw["metadata"]["name"])
    assert pl.remove_pod(state, q, victim, ni) is None
    assert got_state(state.read(PRE_FILTER_KEY)) == want


# -- TestSingleConstraint / TestMultipleConstraints: Filter's code on every node ----------------------------------

S, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def codes(**per_node):
    """node_a=S, ... -> {"node-a": Success, ...}."""
    return {k.replace("_", "-"): v for k, v in per_node.items()}


NODES_ABC = [nn("node-a"), nn("node-b"), nn("node-c")]
NODES_ABXY_FOO = [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-x", foo=""), nn("node-y")]
NODES_ABXY_TAINTED = [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-x", foo=""), nn("node-y", taints=True)]
B1B2Y1 = [p("p-b1", "node-a", foo=""), p("p-b2", "node-b", foo=""), p("p-y1", "node-y", foo="")]
A2B1Y3 = pods("a2b1y3")

SINGLE_CONSTRAINT = [
    ("no existing pods", spod(hard(*C_FOO)), ZONES_ABXY, [], codes(node_a=S, node_b=S, node_x=S, node_y=S)),
    ("no existing pods, incoming pod doesn't match itself", spod(hard(1, "zone", BAR)), ZONES_ABXY, [],
     codes(node_a=S, node_b=S, node_x=S, node_y=S)),
    ("existing pods in a different namespace do not count", spod(hard(*C_FOO)), ZONES_ABXY,
     [p("p-a1", "node-a", ns="ns1", foo=""), p("p-b1", "node-a", ns="ns2", foo=""), p("p-x1", "node-x", foo=""),
      p("p-y1", "node-y", foo="")], codes(node_a=S, node_b=S, node_x=U, node_y=U)),
    ("existing pods do not match null selector", spod(hard(1, "zone", None)), ZONES_ABXY, pods("x1y1"),
     codes(node_a=S, node_b=S, node_x=S, node_y=S)),
    ("pods spread across zones as 3/3, all nodes fit", spod(hard(*C_FOO)), ZONES_ABXY, pods("a2b1y3"),
     codes(node_a=S, node_b=S, node_x=S, node_y=S)),
    ("pods spread across zones as 1/2 due to absence of label 'zone' on node-b", spod(hard(*C_FOO)),
     [zn("node-a", "zone1"), node("node-b", zon="zone1", node="node-b"), zn("node-x", "zone2"),
      zn("node-y", "zone2")], pods("a1b1x1y1"), codes(node_a=S, node_b=UU, node_x=U, node_y=U)),
    ("pod cannot be scheduled as all nodes don't have label 'rack'", spod(hard(1, "rack", FOO)),
     [zn("node-a", "zone1"), zn("node-x", "zone2")], [], codes(node_a=UU, node_x=UU)),
    ("pods spread across nodes as 2/1/0/3, only node-x fits", spod(hard(*N_FOO)), ZONES_ABXY, A2B1Y3,
     codes(node_a=U, node_b=U, node_x=S, node_y=U)),
    ("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit", spod(hard(2, "node", FOO)),
     ZONES_ABXY, A2B1Y3, codes(node_a=U, node_b=S, node_x=S, node_y=U)),
    ("pods spread across nodes as 2/1/0/3, but pod doesn't match itself", spod(hard(*N_FOO), labels=("bar",)),
     ZONES_ABXY, A2B1Y3, codes(node_a=U, node_b=S, node_x=S, node_y=U)),
    ("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     spod(hard(*N_FOO), affinity_in=("node", ["node-a", "node-y"])), ZONES_ABXY, A2B1Y3,
     codes(node_a=S, node_b=S, node_x=S, node_y=U)),
    ("terminating Pods should be excluded", spod(hard(*N_FOO)), [nn("node-a"), nn("node-b")],
     [p("p-a", "node-a", foo="").terminating(), p("p-b", "node-b", foo="")], codes(node_a=S, node_b=U)),
    ("incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
     spod(hard(*C_FOO), affinity_not_in=("node", ["node-b"])), ZONES_ABXY, pods("b2y1"),
     codes(node_a=S, node_b=S, node_x=U, node_y=U)),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node "
     "fits", spod(hard(2, "node", FOO, 4)), NODES_ABC, pods("a2b2c1"), codes(node_a=U, node_b=U, node_c=S)),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes "
     "fit", spod(hard(2, "node", FOO, 2)), NODES_ABC, pods("a2b2c1"), codes(node_a=S, node_b=S, node_c=S)),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and "
     "fourth nodes fit", spod(hard(2, "zone", FOO, 3)), ZONES_ABXY,
     [p("p-b1", "node-a", foo=""), p("p-b2", "node-b", foo=""), p("p-y1", "node-y", foo="")],
     codes(node_a=U, node_b=U, node_x=S, node_y=S)),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
     spod(hard(2, "zone", FOO, 1)), ZONES_ABXY,
     [p("p-b1", "node-a", foo=""), p("p-b2", "node-b", foo=""), p("p-y1", "node-y", foo="")],
     codes(node_a=S, node_b=S, node_x=S, node_y=S)),
    ("NodeAffinityPolicy honored with labelSelectors", spod(hard(*N_FOO), selector={"foo": ""}), NODES_ABXY_FOO,
     B1B2Y1, codes(node_a=U, node_b=U, node_x=S, node_y=S)),
    ("NodeAffinityPolicy ignored with labelSelectors", spod(hard(1, "node", FOO, None, IGNORE), selector={"foo": ""}),
     NODES_ABXY_FOO, B1B2Y1, codes(node_a=U, node_b=U, node_x=S, node_y=U)),
    ("NodeAffinityPolicy honored with nodeAffinity", spod(hard(*N_FOO), affinity_in=("foo", [""])), NODES_ABXY_FOO,
     B1B2Y1, codes(node_a=U, node_b=U, node_x=S, node_y=S)),
    # kube's table names this case like the one two above; Go's t.Run tells them apart with "#01".
    ("NodeAffinityPolicy ignored with labelSelectors#01",
     spod(hard(1, "node", FOO, None, IGNORE), affinity_in=("foo", [""])), NODES_ABXY_FOO, B1B2Y1,
     codes(node_a=U, node_b=U, node_x=S, node_y=U)),
    ("NodeTaintsPolicy honored", spod(hard(1, "node", FOO, None, None, HONOR)), NODES_ABXY_TAINTED, B1B2Y1,
     codes(node_a=U, node_b=U, node_x=S, node_y=S)),
    ("NodeTaintsPolicy ignored", spod(hard(*N_FOO)), NODES_ABXY_TAINTED, B1B2Y1,
     codes(node_a=U, node_b=U, node_x=S, node_y=U)),
]


def filter_codes(pod, nodes, existing):
    """PreFilter, then Filter on every node: {node: code}."""
    pl = plugin(nodes, existing)
    state, q = new_state(), pod.obj()
    _res, st = pl.pre_filter(state, q)
    assert st is None
    return {ni.name: status_tuple(pl.filter(state, q, ni))[0] for ni in pl.handle.snapshot.node_infos}


@pytest.mark.parametrize("pod, nodes, existing, want", [c[1:] for c in SINGLE_CONSTRAINT],
                         ids=[c[0] for c in SINGLE_CONSTRAINT])
def test_single_constraint(pod, nodes, existing, want):
    assert filter_codes(pod, nodes, existing) == want


FB = ("foo", "bar")
MULTIPLE_CONSTRAINTS = [
    ("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", spod(hard(*C_FOO), hard(*N_FOO)), ZONES_ABXY,
     pods("a2b1y3"), codes(node_a=U, node_b=U, node_x=S, node_y=U)),
    ("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", spod(hard(*C_FOO), hard(*N_FOO)), ZONES_ABXY,
     pods("a2b1y4"), codes(node_a=U, node_b=U, node_x=U, node_y=U)),
    ("Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
     spod(hard(*C_FOO), hard(1, "node", BAR), labels=FB), ZONES_ABXY,
     [p("p-a1", "node-a", foo=""), p("p-y1", "node-y", bar="")], codes(node_a=U, node_b=U, node_x=S, node_y=U)),
    ("Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
     spod(hard(*C_FOO), hard(1, "node", BAR), labels=FB), ZONES_ABXY,
     [p("p-a1", "node-a", foo=""), p("p-x1", "node-x", bar=""), p("p-y1", "node-y", bar="")],
     codes(node_a=U, node_b=U, node_x=U, node_y=U)),
    ("Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
     spod(hard(*C_FOO), hard(1, "node", BAR), labels=FB), ZONES_ABXY,
     [p("p-a1", "node-a", foo=""), p("p-a2", "node-a", foo="", bar=""), p("p-y1", "node-y", foo=""),
      p("p-y2", "node-y", foo="", bar=""), p("p-y3", "node-y", foo="")],
     codes(node_a=U, node_b=S, node_x=U, node_y=U)),
    ("Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     spod(hard(*C_FOO), hard(1, "node", BAR), labels=("bar",)), ZONES_ABXY,
     [p("p-a1", "node-a", foo=""), p("p-x1", "node-x", bar=""), p("p-y1", "node-y", bar="")],
     codes(node_a=S, node_b=S, node_x=U, node_y=U)),
    ("two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     spod(hard(*C_FOO), hard(*N_FOO)),
     [zn("node-a", "zone1"), zn("node-b", "zone1"), node("node-x", zone="zone2"), zn("node-y", "zone2")],
     [p("p-a1", "node-a", foo=""), p("p-y3", "node-y", foo="")], codes(node_a=U, node_b=S, node_x=UU, node_y=U)),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     spod(hard(*C_FOO), hard(1, "node", FOO, None, IGNORE), selector={"foo": ""}),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2")], pods("a1b1y1"), codes(node_a=U, node_b=U, node_x=S, node_y=U)),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     spod(hard(1, "zone", FOO, None, None, HONOR), hard(*N_FOO)),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2", taints=True)], pods("a1b1y1"), codes(node_a=U, node_b=U, node_x=S, node_y=U)),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     spod(hard(*C_FOO), hard(*N_FOO), selector={"foo": ""}),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2", taints=True, foo="")], pods("a1b1y1"), codes(node_a=U, node_b=S, node_x=S, node_y=U)),
    ("two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
     spod(hard(1, "zone", FOO, None, None, HONOR), hard(1, "node", FOO, None, IGNORE), selector={"foo": ""}),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2", taints=True, foo="")], pods("a1b1y1"), codes(node_a=U, node_b=U, node_x=S, node_y=U)),
]


@pytest.mark.parametrize("pod, nodes, existing, want", [c[1:] for c in MULTIPLE_CONSTRAINTS],
                         ids=[c[0] for c in MULTIPLE_CONSTRAINTS])
def test_multiple_constraints(pod, nodes, existing, want):
    assert filter_codes(pod, nodes, existing) == want


PRE_FILTER_DISABLED = [("TestPreFilterDisabled", 'reading "PreFilterPodTopologySpread" from cycleState: not found')]


@pytest.mark.parametrize("want", [c[1] for c in PRE_FILTER_DISABLED], ids=[c[0] for c in PRE_FILTER_DISABLED])
def test_pre_filter_disabled(want):
    pl = plugin([])
    st = pl.filter(new_state(), make_pod().obj(), node_info(make_node().obj()))
    assert (st.code, st.as_error()) == (Code.ERROR, want)
