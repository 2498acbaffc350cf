"""InterPodAffinity plugin: the cases of kube's filtering_test.go, scoring_test.go and plugin tests."""
import pytest

from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.profile import FrameworkError
from scheduler_core.framework.snapshot import ClusterObjects, Snapshot
from scheduler_core.framework.status import Code
from scheduler_core.objects.node import Node
from scheduler_core.objects.pod import Pod
from scheduler_core.plugins.interpodaffinity import (ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY,
                                                     ERR_REASON_EXISTING_ANTI_AFFINITY, PRE_FILTER_KEY,
                                                     InterPodAffinity)

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
HOST = "kubernetes.io/hostname"
ZONE = "zone"
REGION = "region"

_seq = [0]


def term(selector=None, key=ZONE, namespaces=None, ns_selector="unset"):
    """A PodAffinityTerm; ``selector`` is a matchLabels dict or a full labelSelector (with "matchExpressions")."""
    t = {"topologyKey": key}
    if selector is not None:
        t["labelSelector"] = selector if "matchExpressions" in selector or "matchLabels" in selector \
            else {"matchLabels": selector}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector != "unset":
        t["namespaceSelector"] = ns_selector
    return t


def weighted(weight, t):
    return {"weight": weight, "podAffinityTerm": t}


def make_pod(name=None, ns="default", labels=None, node="", aff=None, anti=None, pref_aff=None,
             pref_anti=None):
    _seq[0] += 1
    spec = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    affinity = {}
    if aff is not None or pref_aff is not None:
        affinity["podAffinity"] = {k: v for k, v in ((REQ, aff), (PREF, pref_aff)) if v is not None}
    if anti is not None or pref_anti is not None:
        affinity["podAntiAffinity"] = {k: v for k, v in ((REQ, anti), (PREF, pref_anti)) if v is not None}
    if affinity:
        spec["affinity"] = affinity
    return Pod({"metadata": {"name": name or f"p{_seq[0]}", "namespace": ns, "labels": labels or {}},
                "spec": spec})


def make_node(name, host=False, **labels):
    """A node with the given labels, plus kubernetes.io/hostname when ``host``."""
    if host:
        labels[HOST] = name
    return Node({"metadata": {"name": name, "labels": labels}})


def cluster(nodes, pods=(), namespaces=None):
    """A snapshot with the pods on their nodes, and a namespace object per entry of ``namespaces``."""
    infos = [NodeInfo(n) for n in nodes]
    by_name = {ni.name: ni for ni in infos}
    for p in pods:
        by_name[p.node_name].add_pod(p)
    ns_objs = [{"metadata": {"name": n, "labels": lbl}} for n, lbl in (namespaces or {}).items()]
    return Snapshot(infos, ClusterObjects(namespaces=ns_objs))


def plugin(snapshot, args=None):
    return InterPodAffinity.new(args, Handle(snapshot=snapshot))


def filter_all(snapshot, pod, args=None):
    """PreFilter then Filter on every node: (prefilter code, {node: (code, reasons)})."""
    pl = plugin(snapshot, args)
    state = CycleState()
    _res, st = pl.pre_filter(state, pod)
    if st is not None:
        return st.code, {}
    out = {}
    for ni in snapshot.node_infos:
        fst = pl.filter(state, pod, ni)
        out[ni.name] = (Code.SUCCESS, []) if fst is None else (fst.code, fst.reasons)
    return Code.SUCCESS, out


def scores(snapshot, pod, args=None, nodes=None):
    """PreScore, Score and NormalizeScore over ``nodes`` (default all): (prescore code, raw, normalized)."""
    pl = plugin(snapshot, args)
    state = CycleState()
    infos = snapshot.node_infos if nodes is None else [snapshot.get(n) for n in nodes]
    st = pl.pre_score(state, pod, infos)
    if st is not None:
        return st.code, None, None
    raw = [pl.score(state, pod, ni)[0] for ni in infos]
    batch, bst = pl.score_nodes(state, pod, infos)
    assert bst is None and batch == raw
    pairs = [[ni.name, s] for ni, s in zip(infos, raw)]
    assert pl.normalize_score(state, pod, pairs) is None
    return Code.SUCCESS, raw, [s for _n, s in pairs]


OK = (Code.SUCCESS, [])
AFF_FAIL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_AFFINITY])
ANTI_FAIL = (Code.UNSCHEDULABLE, [ERR_REASON_ANTI_AFFINITY])
EXISTING_FAIL = (Code.UNSCHEDULABLE, [ERR_REASON_EXISTING_ANTI_AFFINITY])
SEC1 = {"service": "securityscan"}


# -- Filter ----------------------------------------------------------------------------------------

def test_no_affinity_anywhere_skips_prefilter():
    snap = cluster([make_node("m1", zone="z1")], [make_pod(node="m1", labels=SEC1)])
    assert filter_all(snap, make_pod())[0] == Code.SKIP


def test_affinity_in_operator_matches_existing_pod():
    snap = cluster([make_node("m1", zone="z1")], [make_pod(node="m1", labels=SEC1)])
    sel = {"matchExpressions": [{"key": "service", "operator": "In", "values": ["securityscan", "value2"]}]}
    assert filter_all(snap, make_pod(aff=[term(sel)]))[1] == {"m1": OK}


def test_affinity_notin_operator():
    snap = cluster([make_node("m1", zone="z1")], [make_pod(node="m1", labels=SEC1)])
    sel = {"matchExpressions": [{"key": "service", "operator": "NotIn", "values": ["securityscan3"]}]}
    assert filter_all(snap, make_pod(aff=[term(sel)]))[1] == {"m1": OK}


def test_affinity_other_namespace_does_not_match():
    snap = cluster([make_node("m1", zone="z1")], [make_pod(node="m1", labels=SEC1, ns="other")])
    assert filter_all(snap, make_pod(labels={"x": "y"}, aff=[term(SEC1)]))[1] == {"m1": AFF_FAIL}


def test_affinity_explicit_namespace_list():
    snap = cluster([make_node("m1", zone="z1")], [make_pod(node="m1", labels=SEC1, ns="other")])
    assert filter_all(snap, make_pod(aff=[term(SEC1, namespaces=["other"])]))[1] == {"m1": OK}


def test_affinity_unmatching_selector_fails():
    snap = cluster([make_node("m1", zone="z1")], [make_pod(node="m1", labels=SEC1)])
    assert filter_all(snap, make_pod(aff=[term({"service": "other"})]))[1] == {"m1": AFF_FAIL}


def test_affinity_all_terms_must_match_the_same_pod():
    snap = cluster([make_node("m1", zone="z1", region="r1")],
                   [make_pod(node="m1", labels={"a": "1"}), make_pod(node="m1", labels={"b": "1"})])
    pod = make_pod(aff=[term({"a": "1"}), term({"b": "1"}, key=REGION)])
    assert filter_all(snap, pod)[1] == {"m1": AFF_FAIL}
    snap = cluster([make_node("m1", zone="z1", region="r1")], [make_pod(node="m1", labels={"a": "1", "b": "1"})])
    assert filter_all(snap, pod)[1] == {"m1": OK}


def test_affinity_topology_spans_nodes():
    snap = cluster([make_node("m1", zone="z1"), make_node("m2", zone="z1"), make_node("m3", zone="z2")],
                   [make_pod(node="m1", labels=SEC1)])
    assert filter_all(snap, make_pod(aff=[term(SEC1)]))[1] == {"m1": OK, "m2": OK, "m3": AFF_FAIL}


def test_affinity_node_without_topology_key_fails():
    snap = cluster([make_node("m1", zone="z1"), make_node("m2")], [make_pod(node="m1", labels=SEC1)])
    assert filter_all(snap, make_pod(aff=[term(SEC1)]))[1] == {"m1": OK, "m2": AFF_FAIL}


def test_first_pod_of_group_matching_itself_passes():
    snap = cluster([make_node("m1", zone="z1"), make_node("m2")])
    pod = make_pod(labels=SEC1, aff=[term(SEC1)])
    # No pod anywhere matches: the pod matches its own term, so any node with the topology key fits.
    assert filter_all(snap, pod)[1] == {"m1": OK, "m2": AFF_FAIL}


def test_first_pod_exception_needs_self_match_and_no_match_anywhere():
    snap = cluster([make_node("m1", zone="z1")])
    assert filter_all(snap, make_pod(labels={"x": "y"}, aff=[term(SEC1)]))[1] == {"m1": AFF_FAIL}
    snap = cluster([make_node("m1", zone="z1"), make_node("m2", zone="z2")], [make_pod(node="m2", labels=SEC1)])
    assert filter_all(snap, make_pod(labels=SEC1, aff=[term(SEC1)]))[1] == {"m1": AFF_FAIL, "m2": OK}


def test_own_anti_affinity_rejects_unschedulable():
    snap = cluster([make_node("m1", zone="z1"), make_node("m2", zone="z2")], [make_pod(node="m1", labels=SEC1)])
    assert filter_all(snap, make_pod(anti=[term(SEC1)]))[1] == {"m1": ANTI_FAIL, "m2": OK}


def test_affinity_checked_before_anti_affinity():
    snap = cluster([make_node("m1", host=True, zone="z1"), make_node("m2", host=True, zone="z2")],
                   [make_pod(node="m1", labels={"a": "1"}), make_pod(node="m2", labels={"b": "1"})])
    pod = make_pod(aff=[term({"a": "1"})], anti=[term({"a": "1"}, key=HOST)])
    # m2 fails affinity (U&U); m1 passes affinity but fails anti-affinity.
    assert filter_all(snap, pod)[1] == {"m1": ANTI_FAIL, "m2": AFF_FAIL}


def test_existing_pod_anti_affinity_is_respected():
    existing = make_pod(node="m1", labels={"x": "y"}, anti=[term(SEC1)])
    snap = cluster([make_node("m1", zone="z1"), make_node("m2", zone="z1"), make_node("m3", zone="z2"),
                    make_node("m4")], [existing])
    code, res = filter_all(snap, make_pod(labels=SEC1))
    assert code == Code.SUCCESS
    assert res == {"m1": EXISTING_FAIL, "m2": EXISTING_FAIL, "m3": OK, "m4": OK}


def test_existing_anti_affinity_checked_after_own_anti_affinity():
    existing = make_pod(node="m1", labels=SEC1, anti=[term(SEC1)])
    snap = cluster([make_node("m1", zone="z1")], [existing])
    assert filter_all(snap, make_pod(labels=SEC1, anti=[term(SEC1)]))[1] == {"m1": ANTI_FAIL}


def test_existing_anti_affinity_not_matching_incoming_pod_skips():
    existing = make_pod(node="m1", anti=[term({"other": "x"})])
    snap = cluster([make_node("m1", zone="z1")], [existing])
    assert filter_all(snap, make_pod(labels=SEC1))[0] == Code.SKIP


def test_null_label_selector_matches_nothing_and_empty_matches_everything():
    snap = cluster([make_node("m1", zone="z1")], [make_pod(node="m1", labels=SEC1)])
    assert filter_all(snap, make_pod(anti=[term(None)]))[1] == {"m1": OK}
    assert filter_all(snap, make_pod(anti=[{"topologyKey": ZONE, "labelSelector": {}}]))[1] == {"m1": ANTI_FAIL}


NAMESPACES = {"default": {}, "prod": {"team": "payments"}, "staging": {"team": "payments"}, "dev": {"team": "data"}}


def test_namespace_selector_of_incoming_pod_uses_namespace_objects():
    nodes = [make_node("m1", zone="z1"), make_node("m2", zone="z2"), make_node("m3", zone="z3")]
    pods = [make_pod(node="m1", ns="prod", labels=SEC1), make_pod(node="m2", ns="dev", labels=SEC1),
            make_pod(node="m3", ns="ghost", labels=SEC1)]
    snap = cluster(nodes, pods, NAMESPACES)
    pod = make_pod(anti=[term(SEC1, ns_selector={"matchLabels": {"team": "payments"}})])
    assert filter_all(snap, pod)[1] == {"m1": ANTI_FAIL, "m2": OK, "m3": OK}
    # {} selects every namespace, including one without an object.
    pod = make_pod(anti=[term(SEC1, ns_selector={})])
    assert filter_all(snap, pod)[1] == {"m1": ANTI_FAIL, "m2": ANTI_FAIL, "m3": ANTI_FAIL}
    # NotIn selects namespaces lacking the label too, but only those with an object.
    sel = {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["payments"]}]}
    pod = make_pod(anti=[term(SEC1, ns_selector=sel)])
    assert filter_all(snap, pod)[1] == {"m1": OK, "m2": ANTI_FAIL, "m3": OK}
    # namespaces and namespaceSelector are ORed.
    pod = make_pod(anti=[term(SEC1, namespaces=["ghost"], ns_selector={"matchLabels": {"team": "data"}})])
    assert filter_all(snap, pod)[1] == {"m1": OK, "m2": ANTI_FAIL, "m3": ANTI_FAIL}


def test_namespace_selector_of_existing_pod_uses_incoming_namespace_labels():
    existing = make_pod(node="m1", ns="dev", anti=[term(SEC1, ns_selector={"matchLabels": {"team": "payments"}})])
    snap = cluster([make_node("m1", zone="z1")], [existing], NAMESPACES)
    assert filter_all(snap, make_pod(ns="prod", labels=SEC1))[1] == {"m1": EXISTING_FAIL}
    assert filter_all(snap, make_pod(ns="dev", labels=SEC1))[0] == Code.SKIP


def test_pods_on_other_nodes_in_same_topology_count_once_per_term():
    pods = [make_pod(node="m1", labels=SEC1), make_pod(node="m2", labels=SEC1)]
    snap = cluster([make_node("m1", zone="z1"), make_node("m2", zone="z1")], pods)
    pl = plugin(snap)
    state = CycleState()
    pl.pre_filter(state, make_pod(aff=[term(SEC1)], anti=[term(SEC1, key=REGION)]))
    s = state.read(PRE_FILTER_KEY)
    assert s.affinity_counts.as_dict() == {ZONE: {"z1": 2}}
    assert s.anti_affinity_counts.as_dict() == {}


# -- AddPod / RemovePod / clone -------------------------------------------------------------------

def _counts(state):
    s = state.read(PRE_FILTER_KEY)
    return (s.existing_anti_affinity_counts.as_dict(), s.affinity_counts.as_dict(),
            s.anti_affinity_counts.as_dict())


def test_add_remove_pod_match_a_snapshot_with_the_pod():
    nodes = [make_node("m1", host=True, zone="z1"), make_node("m2", host=True, zone="z1"),
             make_node("m3", host=True, zone="z2")]
    base = [make_pod(node="m1", labels=SEC1, anti=[term({"app": "web"}, key=HOST)])]
    incoming = make_pod(labels={"app": "web"}, aff=[term(SEC1)], anti=[term({"app": "db"}, key=HOST)])
    added = make_pod(node="m3", labels={"service": "securityscan", "app": "db"},
                     anti=[term({"app": "web"})])
    pl = plugin(cluster(nodes, base))
    state = CycleState()
    assert pl.pre_filter(state, incoming) == (None, None)
    before = tuple(_clone(c) for c in _counts(state))
    ni = NodeInfo(nodes[2])
    assert pl.add_pod(state, incoming, added, ni) is None

    full = CycleState()
    plugin(cluster(nodes, base + [added])).pre_filter(full, incoming)
    assert _counts(state) == _counts(full)
    assert _counts(state) == ({HOST: {"m1": 1}, ZONE: {"z2": 1}}, {ZONE: {"z1": 1, "z2": 1}}, {HOST: {"m3": 1}})

    assert pl.remove_pod(state, incoming, added, ni) is None
    assert _counts(state) == before


def test_remove_pod_drops_zero_entries_and_unblocks_filter():
    existing = make_pod(node="m1", anti=[term(SEC1)])
    nodes = [make_node("m1", zone="z1")]
    snap = cluster(nodes, [existing])
    pl = plugin(snap)
    state = CycleState()
    incoming = make_pod(labels=SEC1)
    pl.pre_filter(state, incoming)
    assert pl.filter(state, incoming, snap.node_infos[0]).reasons == [ERR_REASON_EXISTING_ANTI_AFFINITY]
    pl.remove_pod(state, incoming, existing, snap.node_infos[0])
    assert _counts(state)[0] == {}
    assert pl.filter(state, incoming, snap.node_infos[0]) is None


def test_added_nominated_pod_breaks_first_pod_exception():
    nodes = [make_node("m1", zone="z1"), make_node("m2", zone="z2")]
    snap = cluster(nodes)
    pl = plugin(snap)
    incoming = make_pod(labels=SEC1, aff=[term(SEC1)])
    state = CycleState()
    pl.pre_filter(state, incoming)
    assert pl.filter(state, incoming, snap.node_infos[0]) is None
    pl.add_pod(state, incoming, make_pod(labels=SEC1, node="m2"), snap.node_infos[1])
    assert pl.filter(state, incoming, snap.node_infos[0]).reasons == [ERR_REASON_AFFINITY]
    assert pl.filter(state, incoming, snap.node_infos[1]) is None


def test_clone_is_independent():
    nodes = [make_node("m1", zone="z1")]
    snap = cluster(nodes, [make_pod(node="m1", labels=SEC1, anti=[term(SEC1)])])
    pl = plugin(snap)
    incoming = make_pod(labels=SEC1, aff=[term(SEC1)], anti=[term(SEC1)])
    state = CycleState()
    pl.pre_filter(state, incoming)
    original = tuple(_clone(c) for c in _counts(state))
    copy = state.clone()
    assert copy.read(PRE_FILTER_KEY) is not state.read(PRE_FILTER_KEY)
    pl.add_pod(copy, incoming, make_pod(node="m1", labels=SEC1, anti=[term(SEC1)]), snap.node_infos[0])
    assert _counts(copy) == ({ZONE: {"z1": 2}}, {ZONE: {"z1": 2}}, {ZONE: {"z1": 2}})
    assert _counts(state) == original
    pl.remove_pod(copy, incoming, make_pod(node="m1", labels=SEC1, anti=[term(SEC1)]), snap.node_infos[0])
    pl.remove_pod(copy, incoming, make_pod(node="m1", labels=SEC1, anti=[term(SEC1)]), snap.node_infos[0])
    assert _counts(copy) == ({}, {}, {})
    assert _counts(state) == original


def test_extensions_without_prefilter_state_error():
    snap = cluster([make_node("m1", zone="z1")])
    pl = plugin(snap)
    st = pl.add_pod(CycleState(), make_pod(), make_pod(), snap.node_infos[0])
    assert st.code == Code.ERROR
    assert st.reasons == ['error reading "PreFilterInterPodAffinity" from cycleState: not found']
    assert pl.filter(CycleState(), make_pod(), snap.node_infos[0]).code == Code.ERROR


def _clone(counts):
    return {k: dict(v) for k, v in counts.items()}


# -- Score ----------------------------------------------------------------------------------------

SCORE_NODES = [make_node("m1", region="China", zone="az1"), make_node("m2", region="India", zone="az2"),
               make_node("m3", region="China", zone="az3")]
S1 = {"security": "S1"}
S2 = {"security": "S2"}


def test_prescore_skips_without_any_affinity():
    snap = cluster(SCORE_NODES, [make_pod(node="m1", labels=S1)])
    assert scores(snap, make_pod(labels=S1))[0] == Code.SKIP
    assert scores(snap, make_pod(pref_aff=[weighted(5, term(S1, key=REGION))]), nodes=[])[0] == Code.SKIP


def test_preferred_affinity_counts_topology():
    pods = [make_pod(node="m1", labels=S1), make_pod(node="m2", labels=S2), make_pod(node="m3", labels=S1)]
    snap = cluster(SCORE_NODES, pods)
    pod = make_pod(pref_aff=[weighted(5, term(S1, key=REGION))])
    # Two S1 pods in China: m1 and m3 get 10, m2 nothing.
    assert scores(snap, pod)[1:] == ([10, 0, 10], [100, 0, 100])


def test_preferred_affinity_without_match_has_no_state():
    snap = cluster(SCORE_NODES, [make_pod(node="m1", labels=S2)])
    assert scores(snap, make_pod(pref_aff=[weighted(5, term(S1, key=REGION))]))[0] == Code.SKIP


def test_preferred_anti_affinity_negative_scores():
    pods = [make_pod(node="m1", labels=S1), make_pod(node="m2", labels=S2)]
    snap = cluster(SCORE_NODES, pods)
    pod = make_pod(pref_anti=[weighted(5, term(S1, key=ZONE)), weighted(3, term(S2, key=REGION))])
    assert scores(snap, pod)[1:] == ([-5, -3, 0], [0, 40, 100])


def test_zero_sum_entry_still_scores():
    snap = cluster(SCORE_NODES, [make_pod(node="m1", labels=S1)])
    pod = make_pod(pref_aff=[weighted(5, term(S1, key=ZONE))], pref_anti=[weighted(5, term(S1, key=ZONE))])
    # The topology map has an entry (value 0), so PreScore does not skip; all scores are equal → 0.
    assert scores(snap, pod) == (Code.SUCCESS, [0, 0, 0], [0, 0, 0])


def test_symmetric_preferred_terms_of_existing_pods():
    existing = make_pod(node="m1", labels=S2, pref_aff=[weighted(5, term(S1, key=REGION))],
                        pref_anti=[weighted(2, term(S1, key=ZONE))])
    snap = cluster(SCORE_NODES, [existing])
    assert scores(snap, make_pod(labels=S1))[1:] == ([3, 0, 5], [60, 0, 100])


def test_hard_pod_affinity_weight_of_existing_required_terms():
    existing = make_pod(node="m1", labels=S2, aff=[term(S1, key=REGION)])
    snap = cluster(SCORE_NODES, [existing])
    incoming = make_pod(labels=S1)
    assert scores(snap, incoming)[1:] == ([1, 0, 1], [100, 0, 100])
    assert scores(snap, incoming, {"hardPodAffinityWeight": 10})[1] == [10, 0, 10]
    assert scores(snap, incoming, {"hardPodAffinityWeight": 0})[0] == Code.SKIP


def test_ignore_preferred_terms_of_existing_pods():
    existing = make_pod(node="m1", labels=S1, pref_aff=[weighted(5, term(S1, key=REGION))])
    snap = cluster(SCORE_NODES, [existing])
    args = {"ignorePreferredTermsOfExistingPods": True}
    assert scores(snap, make_pod(labels=S1), args)[0] == Code.SKIP
    pod = make_pod(labels=S1, pref_aff=[weighted(1, term(S1, key=ZONE))])
    # With own preferred terms, existing pods' terms still count.
    assert scores(snap, pod, args)[1] == [6, 0, 5]


def test_existing_pod_on_node_without_labels_is_ignored():
    nodes = SCORE_NODES + [make_node("bare")]
    snap = cluster(nodes, [make_pod(node="bare", labels=S1, pref_aff=[weighted(5, term(S1, key=REGION))])])
    assert scores(snap, make_pod(labels=S1, pref_aff=[weighted(5, term(S1, key=REGION))]))[0] == Code.SKIP


def test_scores_cover_all_nodes_but_normalize_over_given():
    pods = [make_pod(node="m2", labels=S1)]
    snap = cluster(SCORE_NODES, pods)
    pod = make_pod(pref_aff=[weighted(7, term(S1, key=REGION))])
    # Only m1 and m3 are feasible; the India pod still builds the map, but they are both 0.
    assert scores(snap, pod, nodes=["m1", "m3"]) == (Code.SUCCESS, [0, 0], [0, 0])


def test_normalize_float_truncation():
    pods = [make_pod(node="m1", labels=S1), make_pod(node="m3", labels=S2)]
    snap = cluster(SCORE_NODES, pods)
    pod = make_pod(pref_aff=[weighted(1, term(S1, key=ZONE)), weighted(2, term(S2, key=ZONE))],
                   pref_anti=[weighted(1, term(S2, key=REGION))])
    # raw: m1 = 1 - 1 (China S2) = 0, m2 = 0, m3 = 2 - 1 = 1 → with min 0 max 1.
    assert scores(snap, pod)[1:] == ([0, 0, 1], [0, 0, 100])
    pod = make_pod(pref_aff=[weighted(1, term(S1, key=ZONE)), weighted(3, term(S2, key=ZONE))])
    # raw 1, 0, 3: 100 * (1/3) = 33.33 → 33.
    assert scores(snap, pod)[1:] == ([1, 0, 3], [33, 0, 100])


def test_namespace_selector_in_scoring():
    pods = [make_pod(node="m1", ns="prod", labels=S1), make_pod(node="m2", ns="dev", labels=S1)]
    snap = cluster(SCORE_NODES, pods, NAMESPACES)
    pod = make_pod(pref_aff=[weighted(4, term(S1, key=ZONE, ns_selector={"matchLabels": {"team": "data"}}))])
    assert scores(snap, pod)[1:] == ([0, 4, 0], [0, 100, 0])
    existing = make_pod(node="m3", ns="dev", labels=S2,
                        pref_aff=[weighted(6, term(S1, key=ZONE, ns_selector={"matchLabels": {"team": "payments"}}))])
    snap = cluster(SCORE_NODES, [existing], NAMESPACES)
    assert scores(snap, make_pod(ns="staging", labels=S1))[1] == [0, 0, 6]
    assert scores(snap, make_pod(ns="dev", labels=S1))[0] == Code.SKIP


# -- Args and framework integration ---------------------------------------------------------------

def test_args_defaults_and_validation():
    pl = plugin(cluster([]), None)
    assert (pl.hard_pod_affinity_weight, pl.ignore_preferred_terms_of_existing_pods) == (1, False)
    pl = plugin(cluster([]), {"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True})
    assert (pl.hard_pod_affinity_weight, pl.ignore_preferred_terms_of_existing_pods) == (100, True)
    for bad in (-1, 101):
        with pytest.raises(FrameworkError) as err:
            plugin(cluster([]), {"hardPodAffinityWeight": bad})
        assert str(err.value) == f"hardPodAffinityWeight: Invalid value: {bad}: not in valid range [0, 100]"


def test_nominated_pod_is_added_through_the_framework():
    from scheduler_core.framework.runtime import Framework
    snap = cluster([make_node("m1", host=True, zone="z1")])
    pl = plugin(snap)
    fwk = Framework("default-scheduler", {"PreFilter": [pl], "Filter": [pl]}, {}, pl.handle)
    incoming = make_pod(labels=SEC1, anti=[term(SEC1, key=HOST)])
    state = CycleState()
    assert fwk.run_pre_filter(state, incoming) == (None, None)
    nominee = make_pod(labels=SEC1)
    st = fwk.run_filter_with_nominated_pods(state, incoming, snap.node_infos[0], lambda _n: [nominee])
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, [ERR_REASON_ANTI_AFFINITY], "InterPodAffinity")
    # The cycle's own state is untouched by the dry run.
    assert _counts(state) == ({}, {}, {})
    assert fwk.run_filter(state, incoming, snap.node_infos[0]) is None


# -- selectors that are not label syntax (kube: NewPodInfo's parse errors) ---------------------------

BAD_VALUE = {"matchExpressions": [{"key": "service", "operator": "In", "values": ["{{.bad-value.}}"]}]}
BAD_VALUE_ERROR = ('values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or '
                   "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                   "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                   "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
NOT_IN_BAD = {"matchExpressions": [{"key": "service", "operator": "NotIn", "values": ["{{.bad-value.}}"]}]}


def prefilter_status(snapshot, pod):
    _res, st = plugin(snapshot).pre_filter(CycleState(), pod)
    return st.code, st.message()


def test_prefilter_rejects_a_pod_whose_preferred_term_does_not_parse():
    """kube's PreFilter parses all four kinds (NewPodInfo), preferred ones too."""
    snap = cluster([make_node("n1", zone="z1")])
    p = make_pod(labels=SEC1, pref_anti=[weighted(5, term(BAD_VALUE))])
    assert prefilter_status(snap, p) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                         "parsing pod: preferredAntiAffinityTerms: " + BAD_VALUE_ERROR)


def test_prefilter_rejects_a_namespace_selector_that_does_not_parse():
    snap = cluster([make_node("n1", zone="z1")])
    p = make_pod(anti=[term(SEC1, ns_selector={"matchLabels": {"team": "{{.bad-value.}}"}})])
    code, msg = prefilter_status(snap, p)
    assert code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert msg.startswith('parsing pod: requiredAntiAffinityTerms: values[0][team]: Invalid value: "{{.bad-value.}}"')


def test_prefilter_aggregates_the_parse_errors_of_several_kinds():
    snap = cluster([make_node("n1", zone="z1")])
    bad_key = {"matchExpressions": [{"key": "bad key", "operator": "Exists"}]}
    p = make_pod(aff=[term(SEC1), term(BAD_VALUE)], pref_aff=[weighted(1, term(bad_key))])
    code, msg = prefilter_status(snap, p)
    assert code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert msg.startswith("parsing pod: [requiredAffinityTerms: " + BAD_VALUE_ERROR
                          + ", preferredAffinityTerms: key: Invalid value: \"bad key\": name part must consist of")
    assert msg.endswith("]")


def test_existing_pods_required_anti_affinity_kind_with_an_unparsable_term_keeps_no_term():
    """NodeInfo.AddPod ignores NewPodInfo's error: the kind's terms are nil, so the valid one no longer counts."""
    existing = make_pod(node="n1", anti=[term(SEC1), term(NOT_IN_BAD)])
    snap = cluster([make_node("n1", zone="z1"), make_node("n2", zone="z1")], [existing])
    assert filter_all(snap, make_pod(labels=SEC1)) == (Code.SKIP, {})


def test_existing_pods_unparsable_preferred_kind_is_dropped_and_its_other_kinds_still_score():
    existing = make_pod(node="n1", labels=SEC1, aff=[term(SEC1)],
                        pref_aff=[weighted(5, term(SEC1)), weighted(5, term(NOT_IN_BAD))])
    snap = cluster([make_node("n1", zone="z1"), make_node("n2", zone="z2")], [existing])
    # Only the required affinity term counts, with hardPodAffinityWeight 1 (the preferred ones would add 5).
    assert scores(snap, make_pod(labels=SEC1)) == (Code.SUCCESS, [1, 0], [100, 0])


def test_prescore_errors_on_unparsable_preferred_terms_even_when_ignoring_existing_pods_preferred_terms():
    """kube's hasConstraints reads the spec, so the dropped preferred terms still make PreScore parse the pod."""
    snap = cluster([make_node("n1", zone="z1")])
    args = {"ignorePreferredTermsOfExistingPods": True}
    pl = plugin(snap, args)
    st = pl.pre_score(CycleState(), make_pod(pref_aff=[weighted(5, term(BAD_VALUE))]), snap.node_infos)
    assert (st.code, st.message()) == (Code.ERROR, "failed to parse pod: preferredAffinityTerms: " + BAD_VALUE_ERROR)
    # Without preferred terms in the spec PreScore skips first, even if a required term does not parse.
    assert scores(snap, make_pod(aff=[term(BAD_VALUE)]), args)[0] == Code.SKIP
