"""InterPodAffinity: required pod (anti-)affinity filter and preferred (anti-)affinity score.

Counts are kept as nested dicts ``{topologyKey: {value: count}}`` with zero entries pruned, so
kube's ``len(map) == 0`` checks are ``not counts`` and Filter is one dict lookup per term.
"""
from __future__ import annotations

import numpy as np

from ...config.field import invalid
from ...framework.interface import (
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from ...framework.node_table import EXACT_LIMIT, counts_by_code
from ...framework.profile import FrameworkError
from ...framework.status import Code, Status
from .. import names

PRE_FILTER_KEY = "PreFilter" + names.INTER_POD_AFFINITY
PRE_SCORE_KEY = "PreScore" + names.INTER_POD_AFFINITY

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

# The Filter rejections, as indexed by filter_batch_statuses' kinds.
_BATCH_STATUSES = ((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY,)),
                   (Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY,)),
                   (Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY,)))

MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100
_EMPTY: dict = {}


def default_args(args) -> dict:
    """SetDefaults_InterPodAffinityArgs."""
    out = dict(args or {})
    if out.get("hardPodAffinityWeight") is None:
        out["hardPodAffinityWeight"] = 1
    if out.get("ignorePreferredTermsOfExistingPods") is None:
        out["ignorePreferredTermsOfExistingPods"] = False
    return out


def validate_args(args: dict, path: str = "") -> list:
    """ValidateInterPodAffinityArgs: hardPodAffinityWeight within [0, 100]."""
    w = args.get("hardPodAffinityWeight", 1)
    if w < MIN_HARD_POD_AFFINITY_WEIGHT or w > MAX_HARD_POD_AFFINITY_WEIGHT:
        p = f"{path}.hardPodAffinityWeight" if path else "hardPodAffinityWeight"
        return [invalid(p, w, f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, "
                              f"{MAX_HARD_POD_AFFINITY_WEIGHT}]")]
    return []


class MergedTerm:
    """An incoming pod's term with its namespaceSelector resolved into namespace names.

    kube's mergeAffinityTermNamespacesIfNotEmpty: a ``{}`` selector stays "all namespaces", any other
    selector (including null) is replaced by the names of the existing namespaces it selects.
    """

    __slots__ = ("selector", "namespaces", "all_namespaces", "topology_key", "weight")

    def __init__(self, term, namespace_labels: dict):
        self.selector = term.selector
        self.topology_key = term.topology_key
        self.weight = term.weight
        ns_sel = term.namespace_selector
        self.all_namespaces = ns_sel.is_empty()
        namespaces = term.namespaces
        if not self.all_namespaces and not ns_sel.nothing:
            namespaces = namespaces | {ns for ns, labels in namespace_labels.items() if ns_sel.matches(labels)}
        self.namespaces = namespaces

    def matches(self, pod) -> bool:
        """AffinityTerm.Matches with nil namespace labels (the selector was merged in)."""
        if self.all_namespaces or pod.namespace in self.namespaces:
            return self.selector.matches(pod.labels)
        return False

    def count(self, pods) -> int:
        """How many of ``pods`` match the term."""
        sel = self.selector.matches
        n = 0
        if self.all_namespaces:
            for p in pods:
                if sel(p.labels):
                    n += 1
        else:
            namespaces = self.namespaces
            for p in pods:
                if p.namespace in namespaces and sel(p.labels):
                    n += 1
        return n


def _update(counts: dict, labels: dict, key: str, value: int):
    """topologyToMatchedTermCount.update: add at the node's pair, dropping entries that reach zero."""
    tv = labels.get(key)
    if tv is None:
        return
    per_key = counts.get(key)
    if per_key is None:
        counts[key] = {tv: value}
        return
    n = per_key.get(tv, 0) + value
    if n:
        per_key[tv] = n
    else:
        del per_key[tv]
        if not per_key:
            del counts[key]


def _clone_counts(counts: dict) -> dict:
    return {k: dict(v) for k, v in counts.items()}


def _matches_all(terms, pod) -> bool:
    """podMatchesAllAffinityTerms: false for no terms."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod):
            return False
    return True


class PreFilterState:
    """Topology counts for Filter; updated by AddPod/RemovePod, cloned for dry runs."""

    __slots__ = ("pod", "affinity_terms", "anti_affinity_terms", "all_namespace_labels", "matches_own_terms",
                 "existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts")

    def __init__(self, pod, all_namespace_labels: dict):
        self.pod = pod
        self.all_namespace_labels = all_namespace_labels
        self.affinity_terms = tuple(MergedTerm(t, all_namespace_labels) for t in pod.affinity_required)
        self.anti_affinity_terms = tuple(MergedTerm(t, all_namespace_labels) for t in pod.anti_affinity_required)
        self.matches_own_terms = _matches_all(self.affinity_terms, pod)
        self.existing_anti_affinity_counts: dict = {}
        self.affinity_counts: dict = {}
        self.anti_affinity_counts: dict = {}

    def clone(self) -> "PreFilterState":
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.all_namespace_labels = self.all_namespace_labels
        c.matches_own_terms = self.matches_own_terms
        c.existing_anti_affinity_counts = _clone_counts(self.existing_anti_affinity_counts)
        c.affinity_counts = _clone_counts(self.affinity_counts)
        c.anti_affinity_counts = _clone_counts(self.anti_affinity_counts)
        return c

    def update_with_pod(self, other, node, multiplier: int):
        """preFilterState.updateWithPod: count ``other`` on ``node`` with the given sign."""
        labels = node.labels
        existing = self.existing_anti_affinity_counts
        for t in other.anti_affinity_required:
            if t.matches(self.pod, self.all_namespace_labels):
                _update(existing, labels, t.topology_key, multiplier)
        if _matches_all(self.affinity_terms, other):
            for t in self.affinity_terms:
                _update(self.affinity_counts, labels, t.topology_key, multiplier)
        for t in self.anti_affinity_terms:
            if t.matches(other):
                _update(self.anti_affinity_counts, labels, t.topology_key, multiplier)


class PreScoreState:
    """The topology score map ``{topologyKey: {value: score}}``."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: dict):
        self.topology_score = topology_score


class InterPodAffinity(PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin,
                       ScoreExtensions):
    """Pod affinity and anti-affinity between the incoming pod and the pods already placed."""

    name = names.INTER_POD_AFFINITY

    def __init__(self, args, handle):
        args = default_args(args)
        errs = validate_args(args)
        if errs:
            raise FrameworkError(str(errs[0]))
        self.hard_pod_affinity_weight = args["hardPodAffinityWeight"]
        self.ignore_preferred_terms_of_existing_pods = bool(args["ignorePreferredTermsOfExistingPods"])
        self.handle = handle

    @classmethod
    def new(cls, args, handle):
        return cls(args, handle)

    # -- PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state, pod):
        snapshot = self.handle.snapshot
        all_ns = snapshot.objects.namespace_labels
        s = PreFilterState(pod, all_ns)
        s.existing_anti_affinity_counts = self._existing_anti_affinity_counts(
            pod, all_ns, snapshot.have_pods_with_required_anti_affinity)
        s.affinity_counts, s.anti_affinity_counts = self._incoming_counts(
            s.affinity_terms, s.anti_affinity_terms, snapshot.node_infos)
        if not s.existing_anti_affinity_counts and not s.affinity_terms and not s.anti_affinity_terms:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, s)
        return None, None

    @staticmethod
    def _existing_anti_affinity_counts(pod, all_ns: dict, node_infos) -> dict:
        """getExistingAntiAffinityCounts: existing pods' required anti-terms that match ``pod``."""
        counts: dict = {}
        for ni in node_infos:
            node = ni.node
            if node is None:
                continue
            labels = node.labels
            for existing in ni.pods_with_required_anti_affinity:
                for t in existing.anti_affinity_required:
                    if t.matches(pod, all_ns):
                        _update(counts, labels, t.topology_key, 1)
        return counts

    @staticmethod
    def _incoming_counts(affinity_terms, anti_terms, node_infos):
        """getIncomingAffinityAntiAffinityCounts over every pod of every node."""
        affinity: dict = {}
        anti: dict = {}
        if not affinity_terms and not anti_terms:
            return affinity, anti
        single = affinity_terms[0] if len(affinity_terms) == 1 else None
        for ni in node_infos:
            node = ni.node
            if node is None or not ni.pods:
                continue
            pods = ni.pods
            labels = node.labels
            if affinity_terms:
                if single is not None:
                    n = single.count(pods)
                else:
                    n = 0
                    for p in pods:
                        for t in affinity_terms:
                            if not t.matches(p):
                                break
                        else:
                            n += 1
                if n:
                    for t in affinity_terms:
                        _update(affinity, labels, t.topology_key, n)
            for t in anti_terms:
                if t.topology_key not in labels:
                    continue
                n = t.count(pods)
                if n:
                    _update(anti, labels, t.topology_key, n)
        return affinity, anti

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        s.update_with_pod(pod_to_add, node_info.node, 1)
        return None

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        s.update_with_pod(pod_to_remove, node_info.node, -1)
        return None

    # -- Filter --------------------------------------------------------------------------------
    def filter(self, state, pod, node_info):
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        labels = node_info.node.labels
        terms = s.affinity_terms
        if terms:
            counts = s.affinity_counts
            pods_exist = True
            for t in terms:
                tv = labels.get(t.topology_key)
                if tv is None:
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY)
                if counts.get(t.topology_key, _EMPTY).get(tv, 0) <= 0:
                    pods_exist = False
            # The first pod of a group with affinity to itself may go anywhere with the topologies.
            if not pods_exist and (counts or not s.matches_own_terms):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY)
        counts = s.anti_affinity_counts
        if counts:
            for t in s.anti_affinity_terms:
                tv = labels.get(t.topology_key)
                if tv is not None and counts.get(t.topology_key, _EMPTY).get(tv, 0) > 0:
                    return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY)
        for key, per_value in s.existing_anti_affinity_counts.items():
            tv = labels.get(key)
            if tv is not None and per_value.get(tv, 0) > 0:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY)
        return None

    def filter_batch_statuses(self, state, pod, table, rows):
        """Filter over NodeTable rows: per row -1 (passes), 0 (affinity), 1 (anti-affinity) or 2 (existing
        pods' anti-affinity), the first check that fails, as in ``filter``."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return None
        n = len(rows)
        kinds = np.full(n, -1, np.int8)
        undecided = np.ones(n, bool)

        def hits(key, per_value):
            codes, column = table.label_column(key)
            return counts_by_code(codes, per_value)[column[rows]] > 0

        terms = s.affinity_terms
        if terms:
            counts = s.affinity_counts
            missing = np.zeros(n, bool)
            pods_exist = np.ones(n, bool)
            for t in terms:
                key = t.topology_key
                codes, column = table.label_column(key)
                col = column[rows]
                missing |= col < 0
                pods_exist &= counts_by_code(codes, counts.get(key))[col] > 0
            fail = missing
            if counts or not s.matches_own_terms:
                fail = missing | ~pods_exist
            kinds[fail] = 0
            undecided &= ~fail
        counts = s.anti_affinity_counts
        if counts:
            for t in s.anti_affinity_terms:
                fail = undecided & hits(t.topology_key, counts.get(t.topology_key))
                kinds[fail] = 1
                undecided &= ~fail
        for key, per_value in s.existing_anti_affinity_counts.items():
            fail = undecided & hits(key, per_value)
            kinds[fail] = 2
            undecided &= ~fail
        return kinds, _BATCH_STATUSES

    # -- PreScore / Score ----------------------------------------------------------------------
    def pre_score(self, state, pod, node_infos):
        if not node_infos:
            return Status(Code.SKIP)
        has_constraints = bool(pod.affinity_preferred or pod.anti_affinity_preferred)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        snapshot = self.handle.snapshot
        all_ns = snapshot.objects.namespace_labels
        # The incoming pod's terms, merged, with the sign their weight counts with.
        own_terms = tuple([(t, t.weight) for t in (MergedTerm(t, all_ns) for t in pod.affinity_preferred)]
                          + [(t, -t.weight) for t in (MergedTerm(t, all_ns) for t in pod.anti_affinity_preferred)])
        hard_weight = self.hard_pod_affinity_weight
        topology_score: dict = {}
        nodes = snapshot.node_infos if has_constraints else snapshot.have_pods_with_affinity
        for ni in nodes:
            node = ni.node
            if node is None:
                continue
            labels = node.labels
            if not labels:
                continue
            pods = ni.pods if has_constraints else ni.pods_with_affinity
            for t, w in own_terms:
                if t.topology_key in labels:
                    n = t.count(pods)
                    if n:
                        _add_score(topology_score, labels, t.topology_key, w * n)
            for existing in pods:
                # The existing pod's terms against the incoming pod (with its namespace's labels).
                if hard_weight > 0:
                    for t in existing.affinity_required:
                        if t.matches(pod, all_ns):
                            _add_score(topology_score, labels, t.topology_key, hard_weight)
                for t in existing.affinity_preferred:
                    if t.matches(pod, all_ns):
                        _add_score(topology_score, labels, t.topology_key, t.weight)
                for t in existing.anti_affinity_preferred:
                    if t.matches(pod, all_ns):
                        _add_score(topology_score, labels, t.topology_key, -t.weight)
        if not topology_score:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_KEY, PreScoreState(topology_score))
        return None

    def score(self, state, pod, node_info):
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, Status.error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        labels = node_info.node.labels
        total = 0
        for key, per_value in s.topology_score.items():
            tv = labels.get(key)
            if tv is not None:
                total += per_value.get(tv, 0)
        return total, None

    def score_nodes(self, state, pod, node_infos):
        """Score for many nodes at once (same result as ``score`` per node)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None, Status.error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        items = tuple(s.topology_score.items())
        out = []
        for ni in node_infos:
            labels = ni.node.labels
            total = 0
            for key, per_value in items:
                tv = labels.get(key)
                if tv is not None:
                    total += per_value.get(tv, 0)
            out.append(total)
        return out, None

    def score_batch(self, state, pod, table, rows):
        """Score over NodeTable rows: the topology score map gathered through the label columns."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        out = np.zeros(len(rows), np.int64)
        for key, per_value in s.topology_score.items():
            if any(v >= EXACT_LIMIT or v <= -EXACT_LIMIT for v in per_value.values()):
                return None
            codes, column = table.label_column(key)
            out += counts_by_code(codes, per_value)[column[rows]]
        return out

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return Status.error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        if not s.topology_score or not scores:
            return None
        lo = min(v for _n, v in scores)
        hi = max(v for _n, v in scores)
        diff = hi - lo
        for pair in scores:
            pair[1] = int(100.0 * ((pair[1] - lo) / diff)) if diff > 0 else 0
        return None

    def normalize_score_batch(self, state, pod, scores):
        """NormalizeScore over an int64 array (None: take the per-node path)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        if not s.topology_score or not len(scores):
            return scores
        lo = int(scores.min())
        diff = int(scores.max()) - lo
        if diff <= 0:
            return np.zeros(len(scores), np.int64)
        if diff >= EXACT_LIMIT:
            return None
        # (s - lo) and diff are exact in float64, so the division rounds as Python's int / int.
        return np.trunc(100.0 * ((scores - lo).astype(np.float64) / float(diff))).astype(np.int64)

    def events_to_register(self):
        return (("Pod", ("Add", "Update", "Delete")), ("Node", ("Add", "UpdateNodeLabel")))


def _add_score(topology_score: dict, labels: dict, key: str, value: int):
    """scoreMap.processTerm: add at the existing pod's node pair (entries may sum to zero and stay)."""
    tv = labels.get(key)
    if tv is None:
        return
    per_value = topology_score.get(key)
    if per_value is None:
        topology_score[key] = {tv: value}
    else:
        per_value[tv] = per_value.get(tv, 0) + value
