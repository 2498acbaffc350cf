"""The per-node pod indexes (framework.pod_index) follow the cluster: after any sequence of pod and node
changes through the cache, InterPodAffinity's and PodTopologySpread's PreFilter and PreScore results
computed from them equal a full recount over every pod of every node (the reference below, written
as kube's getIncomingAffinityAntiAffinityCounts, getExistingAntiAffinityCounts, PreScore's processNode and
calPreFilterState loops)."""
import math
import random

import numpy as np
import pytest

from scheduler_core.cache import Cache
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.pod_index import MatchCounts, TermIndex
from scheduler_core.framework.snapshot import Snapshot
from scheduler_core.objects import Node, Pod
from scheduler_core.plugins.interpodaffinity import (PRE_FILTER_KEY, PRE_SCORE_KEY, InterPodAffinity,
                                                     MergedTerm)
from scheduler_core.plugins.podtopologyspread import PRE_FILTER_KEY as SPREAD_PRE_FILTER_KEY
from scheduler_core.plugins.podtopologyspread import PRE_SCORE_KEY as SPREAD_PRE_SCORE_KEY
from scheduler_core.plugins.podtopologyspread import PodTopologySpread
from scheduler_core.plugins.podtopologyspread.common import DO_NOT_SCHEDULE, InclusionCheck, count_matching
from tests.core.test_batch_paths import add_inter_pod_terms, rand_node, rand_pod

NAMESPACES = [{"metadata": {"name": "default", "labels": {"team": "a"}}},
              {"metadata": {"name": "other", "labels": {"team": "b"}}}]


# -- the reference: kube's loops over every pod of every node -------------------------------------

def _add(counts, labels, key, n):
    tv = labels.get(key)
    if tv is None or not n:
        return
    per_value = counts.setdefault(key, {})
    per_value[tv] = per_value.get(tv, 0) + n
    if not per_value[tv]:
        del per_value[tv]
    if not per_value:
        del counts[key]


def reference_pre_filter(pod, snapshot):
    all_ns = snapshot.objects.namespace_labels
    aff_terms = [MergedTerm(t, all_ns) for t in pod.affinity_required]
    anti_terms = [MergedTerm(t, all_ns) for t in pod.anti_affinity_required]
    existing, affinity, anti = {}, {}, {}
    for ni in snapshot.node_infos:
        labels = ni.node.labels
        for p in ni.pods:
            for t in p.anti_affinity_required:
                if t.matches(pod, all_ns):
                    _add(existing, labels, t.topology_key, 1)
            if aff_terms and all(t.matches(p) for t in aff_terms):
                for t in aff_terms:
                    _add(affinity, labels, t.topology_key, 1)
            for t in anti_terms:
                if t.matches(p):
                    _add(anti, labels, t.topology_key, 1)
    return existing, affinity, anti


def reference_topology_score(pod, snapshot, hard_weight):
    """PreScore's map, or None when it is empty (the plugin skips)."""
    all_ns = snapshot.objects.namespace_labels
    score = {}
    own = ([(MergedTerm(t, all_ns), t.weight) for t in pod.affinity_preferred]
           + [(MergedTerm(t, all_ns), -t.weight) for t in pod.anti_affinity_preferred])

    def process(key, labels, weight):
        tv = labels.get(key)
        if tv is not None:
            per_value = score.setdefault(key, {})
            per_value[tv] = per_value.get(tv, 0) + weight

    for ni in snapshot.node_infos:
        labels = ni.node.labels
        for p in ni.pods:
            for t, w in own:
                if t.matches(p):
                    process(t.topology_key, labels, w)
            if hard_weight > 0:
                for t in p.affinity_required:
                    if t.matches(pod, all_ns):
                        process(t.topology_key, labels, hard_weight)
            for t in p.affinity_preferred:
                if t.matches(pod, all_ns):
                    process(t.topology_key, labels, t.weight)
            for t in p.anti_affinity_preferred:
                if t.matches(pod, all_ns):
                    process(t.topology_key, labels, -t.weight)
    return score or None


def reference_spread_counts(pod, constraints, snapshot):
    """calPreFilterState's counts per topology key and value (nodes missing a key are skipped)."""
    check = InclusionCheck(pod, constraints)
    counts = {}
    for ni in snapshot.node_infos:
        labels = ni.node.labels
        if any(c.topology_key not in labels for c in constraints):
            continue
        flags = check.node_flags(ni.node)
        per_node = {}
        for c in constraints:
            if InclusionCheck.included(c, flags):
                per_node[c.topology_key] = count_matching(ni.pods, c, pod.namespace)
        for key, n in per_node.items():
            per_value = counts.setdefault(key, {})
            per_value[labels[key]] = per_value.get(labels[key], 0) + n
    return counts


def reference_spread_pre_score(pod, constraints, filtered_nodes, all_nodes, require_all):
    """initPreScoreState and the all-nodes count: (ignored node names, counts per key, topoSize per constraint)."""
    keys = {c.topology_key for c in constraints}
    ignored, counts = set(), {}
    sizes = [0] * len(constraints)
    zonal = [(i, c) for i, c in enumerate(constraints) if c.topology_key != "kubernetes.io/hostname"]
    for _i, c in zonal:
        counts[c.topology_key] = {}
    for ni in filtered_nodes:
        labels = ni.node.labels
        if require_all and not keys <= labels.keys():
            ignored.add(ni.name)
            continue
        for i, c in zonal:
            value = labels.get(c.topology_key, "")
            if value not in counts[c.topology_key]:
                counts[c.topology_key][value] = 0
                sizes[i] += 1
    check = InclusionCheck(pod, [c for _i, c in zonal])
    for ni in all_nodes:
        labels = ni.node.labels
        if require_all and not keys <= labels.keys():
            continue
        flags = check.node_flags(ni.node)
        for _i, c in zonal:
            value = labels.get(c.topology_key, "")
            if value in counts[c.topology_key] and InclusionCheck.included(c, flags):
                counts[c.topology_key][value] += count_matching(ni.pods, c, pod.namespace)
    return ignored, counts, sizes


# -- a cluster changing through the cache -----------------------------------------------------------

class ChangingCluster:
    """Nodes and pods in a Cache, the scheduler's Snapshot kept with update_snapshot, random changes."""

    def __init__(self, rng, nodes=40):
        self.rng = rng
        self.cache = Cache()
        self.nodes = {}
        self.pods = {}
        self.serial = 0
        for i in range(nodes):
            self.add_node(i)
        for _ in range(nodes * 2):
            self.add_pod()
        self.snapshot = Snapshot(objects=None)
        self.snapshot.objects.namespace_labels.update(
            {ns["metadata"]["name"]: dict(ns["metadata"]["labels"], **{"kubernetes.io/metadata.name":
                                                                        ns["metadata"]["name"]})
             for ns in NAMESPACES})
        self.sync()

    def sync(self):
        self.cache.update_snapshot(self.snapshot)

    def add_node(self, i):
        node = Node(rand_node(self.rng, i))
        self.nodes[node.name] = node
        self.cache.add_node(node)

    def new_pod(self):
        self.serial += 1
        return Pod(add_inter_pod_terms(self.rng, rand_pod(self.rng, f"p{self.serial}")))

    def incoming(self, steps: int = 60, per_step: int = 3):
        """After each of ``steps`` random changes, ``per_step`` new pods to evaluate, as (step, pod)."""
        for step in range(steps):
            self.change()
            for _ in range(per_step):
                yield step, self.new_pod()

    def add_pod(self):
        pod = self.new_pod().bound_to(self.rng.choice(sorted(self.nodes)))
        self.pods[pod.uid] = pod
        self.cache.add_pod(pod)

    def change(self):
        """One random change: add or remove pods, relabel, add or remove a node."""
        rng = self.rng
        r = rng.random()
        if r < 0.45 or not self.pods:
            for _ in range(rng.randint(1, 3)):
                self.add_pod()
        elif r < 0.75:
            pod = self.pods.pop(rng.choice(sorted(self.pods)))
            self.cache.remove_pod(pod)
        elif r < 0.88:
            old = self.nodes[rng.choice(sorted(self.nodes))]
            raw = dict(old.raw, metadata=dict(old.raw["metadata"], labels=dict(old.labels)))
            labels = raw["metadata"]["labels"]
            if rng.random() < 0.5:
                labels["topology.kubernetes.io/zone"] = rng.choice(["z1", "z2", "z3", "z4"])
            else:
                labels.pop("topology.kubernetes.io/zone", None)
            new = Node(raw)
            self.nodes[new.name] = new
            self.cache.update_node(old, new)
        elif r < 0.94:
            self.add_node(100 + self.serial)
        elif len(self.nodes) > 5:
            name = rng.choice(sorted(self.nodes))
            node = self.nodes.pop(name)
            for uid in [u for u, p in self.pods.items() if p.node_name == name]:
                self.cache.remove_pod(self.pods.pop(uid))
            self.cache.remove_node(node)
        self.sync()


@pytest.mark.parametrize("seed", range(6))
def test_inter_pod_affinity_counts_follow_cluster_changes(seed):
    rng = random.Random(seed)
    cl = ChangingCluster(rng)
    handle = Handle(cl.snapshot)
    plugins = [InterPodAffinity(None, handle), InterPodAffinity({"hardPodAffinityWeight": 0}, handle)]
    compared = scored = 0
    for step, pod in cl.incoming():
        want = reference_pre_filter(pod, cl.snapshot)
        for pl in plugins:
            state = CycleState()
            _r, st = pl.pre_filter(state, pod)
            if st is None:
                s = state.read(PRE_FILTER_KEY)
                got = (s.existing_anti_affinity_counts.as_dict(), s.affinity_counts.as_dict(),
                       s.anti_affinity_counts.as_dict())
                assert got == want, step
                compared += 1
            else:
                assert not want[0] and not pod.affinity_required and not pod.anti_affinity_required
            state = CycleState()
            ref = reference_topology_score(pod, cl.snapshot, pl.hard_pod_affinity_weight)
            st = pl.pre_score(state, pod, cl.snapshot.node_infos)
            if ref is None:
                assert st is not None and st.code.name == "SKIP"
                continue
            assert st is None
            s = state.read(PRE_SCORE_KEY)
            got = {k: {v: n for v, n in per.items() if n} for k, per in ref.items()}
            assert s.topology_score.as_dict() == {k: v for k, v in got.items() if v}
            for ni in cl.snapshot.node_infos:
                want_score = sum(ref.get(k, {}).get(ni.node.labels[k], 0) for k in ref if k in ni.node.labels)
                assert pl.score(state, pod, ni)[0] == want_score
            scored += 1
    assert compared > 50 and scored > 20


@pytest.mark.parametrize("seed", range(6))
def test_spread_counts_follow_cluster_changes(seed):
    rng = random.Random(50 + seed)
    cl = ChangingCluster(rng)
    pl = PodTopologySpread(None, Handle(cl.snapshot))
    compared = 0
    for step, pod in cl.incoming():
        state = CycleState()
        _r, st = pl.pre_filter(state, pod)
        if st is not None:
            continue
        s = state.read(SPREAD_PRE_FILTER_KEY)
        want = reference_spread_counts(pod, pl._constraints(pod, DO_NOT_SCHEDULE), cl.snapshot)
        # Same domains in the same order (the critical paths depend on it), same counts.
        assert {k: list(v.items()) for k, v in s.counts.items()} == {k: list(v.items()) for k, v in want.items()}
        compared += 1
    assert compared > 30


@pytest.mark.parametrize("seed", range(6))
def test_spread_pre_score_follows_cluster_changes(seed):
    """Pods with a controller (system default constraints, keys not required) and pods with their own
    ScheduleAnyway constraints (keys required), scored over a random subset of the nodes."""
    rng = random.Random(90 + seed)
    cl = ChangingCluster(rng)
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"color": "blue"}}}}
    cl.snapshot.objects.replicasets.append(rs)
    pl = PodTopologySpread(None, Handle(cl.snapshot))
    compared = 0
    for step, pod in cl.incoming():
        if rng.random() < 0.5:
            raw = dict(pod.raw, metadata=dict(pod.raw["metadata"], ownerReferences=[
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "controller": True}]))
            raw["spec"] = {k: v for k, v in raw["spec"].items() if k != "topologySpreadConstraints"}
            pod = Pod(raw)
        infos = cl.snapshot.node_infos
        filtered = rng.sample(infos, rng.randint(1, len(infos)))
        state = CycleState()
        if pl.pre_score(state, pod, filtered) is not None:
            continue
        s = state.read(SPREAD_PRE_SCORE_KEY)
        require_all = bool(pod.spread_constraints)
        ignored, counts, sizes = reference_spread_pre_score(pod, s.constraints, filtered, infos, require_all)
        assert s.ignored_nodes == ignored, step
        assert s.counts == counts, step
        want_weights = [math.log((len(filtered) - len(ignored) if c.topology_key == "kubernetes.io/hostname"
                                  else size) + 2) for c, size in zip(s.constraints, sizes)]
        assert [t[2] for t in s.terms] == want_weights
        compared += 1
    assert compared > 30


def test_indexes_recount_only_changed_rows():
    rng = random.Random(7)
    cl = ChangingCluster(rng, nodes=20)
    table = cl.snapshot.table()
    calls = []

    def count(pods):
        calls.append(1)
        return len(pods)

    idx = MatchCounts(table, count)
    assert len(calls) == table.n
    calls.clear()
    assert idx.current(cl.snapshot.table()).tolist() == [len(ni.pods) for ni in table.infos]
    assert not calls
    cl.add_pod()
    cl.sync()
    assert idx.current(cl.snapshot.table()).tolist() == [len(ni.pods) for ni in table.infos]
    assert len(calls) == 1

    terms = TermIndex(table, lambda ni: ((len(p.labels), p) for p in ni.pods))
    cl.add_pod()
    cl.sync()
    entries = terms.current(cl.snapshot.table())
    fresh = TermIndex(cl.snapshot.table(), terms.terms_of).entries
    assert sorted(entries) == sorted(fresh)
    for sig in fresh:
        assert np.array_equal(entries[sig][1], fresh[sig][1]) and entries[sig][2] == fresh[sig][2]


@pytest.mark.parametrize("seed", range(4))
def test_snapshot_variant_table_equals_a_fresh_one(seed):
    """A what-if snapshot (explain's) copies the NodeTable and its pod indexes and re-reads only the replaced rows:
    the same columns, label gathers and counts as a table built from scratch."""
    from scheduler_core.framework.node_table import _COLUMNS, NodeTable
    rng = random.Random(200 + seed)
    cl = ChangingCluster(rng)
    handle = Handle(cl.snapshot)
    ipa = InterPodAffinity(None, handle)
    for _ in range(5):
        cl.change()
        ipa.pre_filter(CycleState(), cl.new_pod())   # builds the indexes on the scheduler's table
    base = cl.snapshot
    kept = {k: (idx.counts.copy(), idx.gens.copy()) for k, idx in base.table().indexes.items()
            if isinstance(idx, MatchCounts)}
    assert kept
    replace = {}
    for ni in rng.sample(base.node_infos, 3):
        clone = ni.clone()
        raw = dict(ni.node.raw, metadata=dict(ni.node.raw["metadata"],
                                              labels=dict(ni.node.labels, **{"topology.kubernetes.io/zone": "z9"})))
        clone.node = Node(raw)
        clone.add_pod(cl.new_pod().bound_to(ni.name))
        replace[ni.name] = clone
    variant = base.variant(replace)
    derived, fresh = variant.table(), NodeTable(variant.node_infos)
    assert derived is variant.table() and derived is not base.table()
    for name in _COLUMNS:
        assert np.array_equal(getattr(derived, name), getattr(fresh, name)), name
    for key in ("topology.kubernetes.io/zone", "kubernetes.io/hostname", "disk"):
        d_codes, d_col = derived.label_column(key)
        f_codes, f_col = fresh.label_column(key)
        inv_d, inv_f = {c: v for v, c in d_codes.items()}, {c: v for v, c in f_codes.items()}
        assert [inv_d.get(c) for c in d_col.tolist()] == [inv_f.get(c) for c in f_col.tolist()], key
    handle.snapshot = variant
    for _ in range(5):
        pod = cl.new_pod()
        state = CycleState()
        if ipa.pre_filter(state, pod)[1] is None:
            s = state.read(PRE_FILTER_KEY)
            got = (s.existing_anti_affinity_counts.as_dict(), s.affinity_counts.as_dict(),
                   s.anti_affinity_counts.as_dict())
            assert got == reference_pre_filter(pod, variant)
    # the scheduler's own snapshot, table and indexes are untouched
    for k, (counts, gens) in kept.items():
        idx = base.table().indexes[k]
        assert np.array_equal(idx.counts, counts) and np.array_equal(idx.gens, gens)
    assert all(base.by_name[name] is not clone for name, clone in replace.items())
    assert np.array_equal(base.table().generation, NodeTable(base.node_infos).generation)
