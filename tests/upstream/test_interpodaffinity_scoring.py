"""kube's interpodaffinity/scoring_test.go, case by case: TestPreferredAffinity and
TestPreferredAffinityWithHardPodAffinitySymmetricWeight.

kube's tests leave most pods without a namespace ("" for the incoming and the existing pods alike); scheduler_core
reads an empty namespace as "default", so a term that lists the namespace "" is translated with "default".
"""
import pytest

from scheduler_core.framework.interface import MAX_NODE_SCORE
from scheduler_core.framework.status import Code
from scheduler_core.plugins.interpodaffinity import InterPodAffinity

from .affinity_terms import NAMESPACES, sel, term
from .plugin_cases import handle, make_node, make_pod, new_state

UPSTREAM = "pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go"
UPSTREAM_VERSION = ("v1.30-v1.32 era (commit 8a4d98ac: internal/cache, testing/framework helpers, "
                    "ignorePreferredTermsOfExistingPods)")
UPSTREAM_CASES = 31

M = MAX_NODE_SCORE
RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}


def weighted(weight, t):
    return {"weight": weight, "podAffinityTerm": t}


def preferred(kind, *terms):
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


SEC_IN_S1 = sel(("security", "In", ["S1"]))
SEC_IN_S2 = sel(("security", "In", ["S2"]))
TEAM1 = sel(("team", "In", ["team1"]))
STAY_WITH_S1_IN_REGION = preferred("podAffinity", weighted(5, term(SEC_IN_S1, "region")))
STAY_WITH_S2_IN_REGION = preferred("podAffinity", weighted(6, term(SEC_IN_S2, "region")))
AFFINITY3 = preferred("podAffinity",
                      weighted(8, term(sel(("security", "NotIn", ["S1"]), ("security", "In", ["S2"])), "region")),
                      weighted(2, term(sel(("security", "Exists", None), ("wrongkey", "DoesNotExist", None)),
                                       "region")))
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term(sel(("security", "In", ["S1", "value2"])), "region"),
    term(sel(("security", "Exists", None), ("wrongkey", "DoesNotExist", None)), "region")]}}
AWAY_FROM_S1_IN_AZ = preferred("podAntiAffinity", weighted(5, term(SEC_IN_S1, "az")))
AWAY_FROM_S2_IN_AZ = preferred("podAntiAffinity", weighted(5, term(SEC_IN_S2, "az")))
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {**preferred("podAffinity", weighted(8, term(SEC_IN_S1, "region"))),
                                             **preferred("podAntiAffinity", weighted(5, term(SEC_IN_S2, "az")))}
AFFINITY_NAMESPACE_SELECTOR = preferred("podAffinity", weighted(5, term(SEC_IN_S1, "region", ["subteam2.team2"],
                                                                        TEAM1)))
ANTI_AFFINITY_NAMESPACE_SELECTOR = preferred("podAntiAffinity",
                                             weighted(5, term(SEC_IN_S1, "region", ["subteam2.team2"], TEAM1)))
INVALID_AFFINITY_LABELS = preferred("podAffinity",
                                    weighted(8, term(sel(("security", "In", ["{{.bad-value.}}"])), "region")))
INVALID_ANTI_AFFINITY_LABELS = preferred("podAntiAffinity",
                                         weighted(5, term(sel(("security", "In", ["{{.bad-value.}}"])), "az")))


def pod(labels=None, affinity=None, node="", ns=None):
    w = make_pod().labels(labels or {})
    if affinity:
        w.affinity(affinity)
    if node:
        w.node(node)
    if ns:
        w.namespace(ns)
    return w


def nodes(*labels):
    """node1, node2, ... with these labels."""
    return [make_node().name(f"node{i}").labels(lbl) for i, lbl in enumerate(labels, 1)]


def run(args, incoming, existing, node_list):
    """PreScore over all nodes, then Score and NormalizeScore: a status tuple (when PreScore did not succeed) or the
    scores."""
    h = handle([n.obj() for n in node_list], [q.obj() for q in existing], namespaces=NAMESPACES)
    pl = InterPodAffinity.new(args, h)
    state, p = new_state(), incoming.obj()
    st = pl.pre_score(state, p, h.snapshot.node_infos)
    if st is not None:
        return st.code, st.message()
    scores = []
    for ni in h.snapshot.node_infos:
        s, sst = pl.score(state, p, ni)
        assert sst is None
        scores.append([ni.name, s])
    assert pl.score_extensions().normalize_score(state, p, scores) is None
    return [s for _n, s in scores]


SKIP = (Code.SKIP, "")
THREE = nodes(RG_CHINA, RG_INDIA, AZ1)
NS_PODS = [pod(S1, node="node1", ns="subteam1.team1"), pod(S1, node="node1", ns="subteam1.team1")]

PREFERRED_AFFINITY = [
    ("all nodes are same priority as Affinity is nil", pod(S1), [], THREE, False, SKIP),
    ("Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
     "which doesn't match either pods in nodes or in topology key", pod(S1, STAY_WITH_S1_IN_REGION),
     [pod(S1, node="node1"), pod(S2, node="node2"), pod(S1, node="node3")], THREE, False, [M, 0, 0]),
    ("All the nodes that have the same topology key & label value with one of them has an existing pod that match "
     "the affinity rules, have the same score", pod(None, STAY_WITH_S1_IN_REGION), [pod(S1, node="node1")],
     nodes(RG_CHINA, RG_CHINA_AZ1, RG_INDIA), False, [M, M, 0]),
    ("Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
     "matches will get high score", pod(S1, STAY_WITH_S2_IN_REGION),
     [pod(S2, node="node1"), pod(S2, node="node1"), pod(S2, node="node2"), pod(S2, node="node3"),
      pod(S2, node="node4"), pod(S2, node="node5")],
     nodes(RG_CHINA, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA), False, [M, 0, M, M, 0]),
    ("Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
     "failures ", pod(S1, AFFINITY3), [pod(S1, node="node1"), pod(S2, node="node2"), pod(S1, node="node3")], THREE,
     False, [20, M, 0]),
    ("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     pod(S2), [pod(S1, STAY_WITH_S1_IN_REGION, "node1"), pod(S2, STAY_WITH_S2_IN_REGION, "node2")], THREE, False,
     [0, M, 0]),
    ("Affinity symmetry with namespace selector", pod(S1, ns="subteam1.team1"),
     [pod(S1, AFFINITY_NAMESPACE_SELECTOR, "node1"), pod(S2, STAY_WITH_S2_IN_REGION, "node2")], THREE, False,
     [M, 0, 0]),
    ("AntiAffinity symmetry with namespace selector", pod(S1, ns="subteam1.team1"),
     [pod(S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, "node1"), pod(S2, STAY_WITH_S2_IN_REGION, "node2")], THREE, False,
     [0, M, M]),
    ("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     pod(S1), [pod(S1, HARD_AFFINITY, "node1"), pod(S2, HARD_AFFINITY, "node2")], THREE, False, [M, M, 0]),
    ("Anti Affinity: pod that does not match existing pods in node will get high score ",
     pod(S1, AWAY_FROM_S1_IN_AZ), [pod(S1, node="node1"), pod(S2, node="node2")], nodes(AZ1, RG_CHINA), False,
     [0, M]),
    ("Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing "
     "to others ", pod(S1, AWAY_FROM_S1_IN_AZ), [pod(S1, node="node1"), pod(S1, node="node2")],
     nodes(AZ1, RG_CHINA), False, [0, M]),
    ("Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches "
     "will get high score", pod(S1, AWAY_FROM_S1_IN_AZ),
     [pod(S1, node="node1"), pod(S1, node="node1"), pod(S2, node="node2")], nodes(AZ1, RG_INDIA), False, [0, M]),
    ("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score", pod(S2),
     [pod(S1, AWAY_FROM_S2_IN_AZ, "node1"), pod(S2, AWAY_FROM_S1_IN_AZ, "node2")], nodes(AZ1, AZ2), False, [0, M]),
    ("Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
     "affinity & anti affinity", pod(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
     [pod(S1, node="node1"), pod(S1, node="node2")], nodes(RG_CHINA, AZ1), False, [M, 0]),
    ("Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods "
     "have the same labels", pod(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
     [pod(S1, node="node1"), pod(S1, node="node1"), pod(S1, node="node2"), pod(S1, node="node3"),
      pod(S1, node="node3"), pod(S1, node="node4"), pod(S1, node="node5")],
     nodes(RG_CHINA_AZ1, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA), False, [M, 0, M, M, 0]),
    ("Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in "
     "both pod affinity & anti affinity & symmetry", pod(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
     [pod(S1, node="node1"), pod(S2, node="node2"), pod(None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, "node3"),
      pod(None, AWAY_FROM_S1_IN_AZ, "node4")], nodes(RG_CHINA, AZ1, RG_INDIA, AZ2), False, [M, 0, M, 0]),
    ("Avoid panic when partial nodes in a topology don't have pods with affinity", pod(S1),
     [pod(S1, node="node1"), pod(None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, "node2")],
     nodes(RG_CHINA, RG_CHINA), False, [0, 0]),
    ("invalid Affinity fails PreScore", pod(None, INVALID_AFFINITY_LABELS), [], nodes(RG_CHINA, RG_CHINA), False,
     (Code.ERROR, 'Invalid value: "{{.bad-value.}}"')),
    ("invalid AntiAffinity fails PreScore", pod(None, INVALID_ANTI_AFFINITY_LABELS), [], nodes(RG_CHINA, RG_CHINA),
     False, (Code.ERROR, 'Invalid value: "{{.bad-value.}}"')),
    ("Affinity with pods matching NamespaceSelector", pod(S1, AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
     NS_PODS + [pod(S1, node="node1", ns="subteam1.team2"), pod(S1, node="node2", ns="subteam2.team1")],
     nodes(RG_CHINA, RG_INDIA), False, [M, 0]),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields",
     pod(S1, AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
     NS_PODS + [pod(S1, node="node1", ns="subteam2.team2"), pod(S1, node="node2", ns="subteam2.team1")],
     nodes(RG_CHINA, RG_INDIA), False, [M, 0]),
    # kube's table repeats these two names for the anti-affinity variants; Go's t.Run tells them apart with "#01".
    ("Affinity with pods matching NamespaceSelector#01",
     pod(S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
     NS_PODS + [pod(S1, node="node1", ns="subteam1.team2"), pod(S1, node="node2", ns="subteam2.team1")],
     nodes(RG_CHINA, RG_INDIA), False, [0, M]),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields#01",
     pod(S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
     NS_PODS + [pod(S1, node="node1", ns="subteam2.team2"), pod(S1, node="node2", ns="subteam2.team1")],
     nodes(RG_CHINA, RG_INDIA), False, [0, M]),
    ("Ignore preferred terms of existing pods", pod(S2),
     [pod(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, "node1"), pod(S2, STAY_WITH_S2_IN_REGION, "node2")],
     nodes(RG_CHINA, RG_INDIA), True, SKIP),
    ("Do not ignore preferred terms of existing pods", pod(S2),
     [pod(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, "node1"), pod(S2, STAY_WITH_S2_IN_REGION, "node2")],
     nodes(RG_CHINA, RG_INDIA), False, [0, M]),
    ("No nodes to score", pod(S2), [], [], False, SKIP),
]


def check_error(got, want):
    """kube compares the code and that the message contains the wanted text."""
    assert isinstance(got, tuple) and got[0] == want[0] and want[1] in got[1], got


@pytest.mark.parametrize("incoming, existing, node_list, ignore_preferred, want", [c[1:] for c in PREFERRED_AFFINITY],
                         ids=[c[0] for c in PREFERRED_AFFINITY])
def test_preferred_affinity(incoming, existing, node_list, ignore_preferred, want):
    got = run({"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore_preferred}, incoming,
              existing, node_list)
    if isinstance(want, tuple):
        check_error(got, want)
    else:
        assert got == want


SERVICE_S1 = {"service": "S1"}
# kube lists the namespace "" (its test pods' namespace), read here as "default" (module docstring).
HARD_POD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term(sel(("service", "In", ["S1"])), "region", ["default", "subteam2.team2"], TEAM1)]}}
HARD_PODS = [pod(None, HARD_POD_AFFINITY, "node1"), pod(None, HARD_POD_AFFINITY, "node2")]

SYMMETRIC_WEIGHT = [
    ("with default weight", pod(SERVICE_S1), 1, [M, M, 0]),
    ("with zero weight", pod(SERVICE_S1), 0, SKIP),
    ("with no matching namespace", pod(SERVICE_S1, ns="subteam1.team2"), 1, SKIP),
    ("with matching NamespaceSelector", pod(SERVICE_S1, ns="subteam1.team1"), 1, [M, M, 0]),
    ("with matching Namespaces", pod(SERVICE_S1, ns="subteam2.team2"), 1, [M, M, 0]),
]


@pytest.mark.parametrize("incoming, weight, want", [c[1:] for c in SYMMETRIC_WEIGHT],
                         ids=[c[0] for c in SYMMETRIC_WEIGHT])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(incoming, weight, want):
    got = run({"hardPodAffinityWeight": weight}, incoming, HARD_PODS, THREE)
    assert got == want
