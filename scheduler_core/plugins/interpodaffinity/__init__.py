"""InterPodAffinity: required pod (anti-)affinity filter and preferred (anti-)affinity score.

Counts per (topologyKey, value) are TopologyCounts: per key an array over the NodeTable's label codes, so
Filter is one lookup per term and the batch Filter and Score gather them with the code columns.
"""
from __future__ import annotations

import numpy as np

from ...objects.field import invalid
from ...framework.interface import (
    QUEUE,
    QUEUE_SKIP,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from ...framework.handle import features_of, queueing_hints_of
from ...framework.node_table import EXACT_LIMIT
from ...framework.pod_index import match_counts, term_index
from ...framework.profile import FrameworkError
from ...framework.status import Code, Status
from ...framework import signers
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
    selector (including null) is replaced by the names of the existing namespaces it selects. ``key``
    is equal for terms that match the same pods.

    ``selector_kept`` (1.36, versions' affinity-namespace-selector-kept): the merge takes the term by value, so
    the names are added but the selector is not reset, and existing pods are then matched with empty namespace
    labels: a selector that empty labels satisfy (``NotIn``, ``DoesNotExist``) matches every namespace.
    """

    __slots__ = ("selector", "namespaces", "all_namespaces", "topology_key", "weight", "key")

    def __init__(self, term, namespace_labels: dict, selector_kept: bool = False):
        self.selector = term.selector
        self.topology_key = term.topology_key
        self.weight = term.weight
        ns_sel = term.namespace_selector
        self.all_namespaces = ns_sel.is_empty() or (selector_kept and not ns_sel.nothing and ns_sel.matches({}))
        namespaces = term.namespaces
        if not self.all_namespaces and not ns_sel.nothing:
            namespaces = namespaces | {ns for ns, labels in namespace_labels.items() if ns_sel.matches(labels)}
        self.namespaces = namespaces
        self.key = (self.selector.key, None if self.all_namespaces else namespaces)

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


def _matches_all(terms, pod) -> bool:
    """podMatchesAllAffinityTerms: false for no terms."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod):
            return False
    return True


def _per_node_matches(table, terms):
    """Per NodeTable row, how many of the node's pods match every term in ``terms`` (kept incrementally)."""
    if len(terms) == 1:
        t = terms[0]
        return match_counts(table, ("InterPodAffinity", t.key), t.count)

    def count(pods):
        return sum(1 for p in pods if _matches_all(terms, p))
    return match_counts(table, ("InterPodAffinity", tuple(t.key for t in terms)), count)


def _required_anti_affinity_terms(ni):
    for p in ni.pods_with_required_anti_affinity:
        for t in p.anti_affinity_required:
            yield t.key, t


def _scoring_terms(ni):
    """The existing pods' terms PreScore matches against the incoming pod, by kind: required affinity
    (weighted by hardPodAffinityWeight), preferred affinity (+weight), preferred anti-affinity (-weight)."""
    for p in ni.pods_with_affinity:
        for t in p.affinity_required:
            yield (0, t.key), t
        for t in p.affinity_preferred:
            yield (1, t.key, t.weight), t
        for t in p.anti_affinity_preferred:
            yield (-1, t.key, t.weight), t


class TopologyCounts:
    """kube's topologyToMatchedTermCount: a count per (topology key, value).

    Per key, an int64 array over the NodeTable's codes of that label, with one spare slot at the end that
    stays 0 (``node_table.counts_by_code``'s layout, so a code column gathers counts per row). A pair whose
    count is 0 is absent, as kube deletes it.
    """

    __slots__ = ("table", "arrays")

    def __init__(self, table):
        self.table = table
        self.arrays = {}

    def by_code(self, key: str):
        """The counts of ``key`` indexed by the label column's current codes."""
        codes, _column = self.table.label_column(key)
        arr = self.arrays.get(key)
        if arr is None or len(arr) <= len(codes):
            grown = np.zeros(len(codes) + 1, np.int64)
            if arr is not None:
                grown[:len(arr) - 1] = arr[:-1]
            arr = self.arrays[key] = grown
        return arr

    def add_domain_sums(self, key: str, sums, factor: int = 1) -> None:
        """Add ``factor`` times ``NodeTable.domain_sums(key, ...)``."""
        arr = self.arrays.get(key)
        if arr is None and factor == 1:
            self.arrays[key] = sums.copy()
            return
        arr = self.by_code(key)
        arr[:len(sums) - 1] += sums[:-1] * factor

    def add(self, key: str, labels: dict, value: int) -> None:
        """topologyToMatchedTermCount.update: add at the node's (key, value) pair, if it has the label."""
        tv = labels.get(key)
        if tv is not None:
            code = self.table.label_code(key, tv)
            self.by_code(key)[code] += value

    def get(self, key: str, value: str) -> int:
        arr = self.arrays.get(key)
        if arr is None:
            return 0
        code = self.table.label_column(key)[0].get(value)
        return 0 if code is None or code >= len(arr) - 1 else int(arr[code])

    def keys(self):
        return self.arrays.keys()

    def __bool__(self) -> bool:
        for arr in self.arrays.values():
            if arr.any():
                return True
        return False

    def clone(self) -> "TopologyCounts":
        c = TopologyCounts(self.table)
        c.arrays = {k: a.copy() for k, a in self.arrays.items()}
        return c

    def as_dict(self) -> dict:
        """``{key: {value: count}}`` with the absent (zero) pairs left out."""
        out = {}
        for key, arr in self.arrays.items():
            codes = self.table.label_column(key)[0]
            per_value = {v: int(arr[c]) for v, c in codes.items() if c < len(arr) - 1 and arr[c]}
            if per_value:
                out[key] = per_value
        return out


class PreFilterState:
    """Topology counts for Filter; updated by AddPod/RemovePod, cloned for dry runs."""

    __slots__ = ("pod", "affinity_terms", "anti_affinity_terms", "all_namespace_labels", "matches_own_terms",
                 "existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts")

    def __init__(self, pod, all_namespace_labels: dict, table, selector_kept: bool = False):
        self.pod = pod
        self.all_namespace_labels = all_namespace_labels
        self.affinity_terms = tuple(MergedTerm(t, all_namespace_labels, selector_kept)
                                    for t in pod.affinity_required)
        self.anti_affinity_terms = tuple(MergedTerm(t, all_namespace_labels, selector_kept)
                                         for t in pod.anti_affinity_required)
        self.matches_own_terms = _matches_all(self.affinity_terms, pod)
        self.existing_anti_affinity_counts = TopologyCounts(table)
        self.affinity_counts = TopologyCounts(table)
        self.anti_affinity_counts = TopologyCounts(table)

    def clone(self) -> "PreFilterState":
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.all_namespace_labels = self.all_namespace_labels
        c.matches_own_terms = self.matches_own_terms
        c.existing_anti_affinity_counts = self.existing_anti_affinity_counts.clone()
        c.affinity_counts = self.affinity_counts.clone()
        c.anti_affinity_counts = self.anti_affinity_counts.clone()
        return c

    def update_with_pod(self, other, node, multiplier: int):
        """preFilterState.updateWithPod: count ``other`` on ``node`` with the given sign."""
        labels = node.labels
        for t in other.anti_affinity_required:
            if t.matches(self.pod, self.all_namespace_labels):
                self.existing_anti_affinity_counts.add(t.topology_key, labels, multiplier)
        if _matches_all(self.affinity_terms, other):
            for t in self.affinity_terms:
                self.affinity_counts.add(t.topology_key, labels, multiplier)
        for t in self.anti_affinity_terms:
            if t.matches(other):
                self.anti_affinity_counts.add(t.topology_key, labels, multiplier)


class PreScoreState:
    """The topology score per (topologyKey, value) as TopologyCounts. ``present``: some term matched on a
    node with its topology label (kube's map is then not empty, even where the scores sum to 0)."""

    __slots__ = ("topology_score", "present")

    def __init__(self, topology_score: TopologyCounts, present: bool):
        self.topology_score = topology_score
        self.present = present


def _terms(terms) -> tuple:
    """GetAffinityTerms for a hint: the terms, or the error of the first that does not parse."""
    for term in terms:
        if term.parse_error is not None:
            raise ValueError(term.parse_error)
    return terms


def _spec_terms_match_all(terms, pod) -> bool:
    """podMatchesAllAffinityTerms over a pod's own terms (GetAffinityTerms: no namespace labels, the selector
    unmerged)."""
    return bool(terms) and all(t.matches(pod, {}) for t in terms)


class InterPodAffinity(PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin,
                       ScoreExtensions):
    """Pod affinity and anti-affinity between the incoming pod and the pods already placed.

    PreFilter and PreScore count over every pod of every node, as kube does, but from per-node counts
    that ``framework.pod_index`` keeps between cycles: per-node matches of the incoming pod's terms, and
    per-node carriers of each distinct term of the existing pods.
    """

    name = names.INTER_POD_AFFINITY

    def __init__(self, args, handle):
        args = default_args(args)
        errs = validate_args(args)
        if errs:
            raise FrameworkError(str(errs[0]))
        self.hard_pod_affinity_weight = args["hardPodAffinityWeight"]
        self.ignore_preferred_terms_of_existing_pods = bool(args["ignorePreferredTermsOfExistingPods"])
        self.handle = handle
        self.selector_kept = features_of(handle).has("affinity-namespace-selector-kept")
        self.queueing_hints = queueing_hints_of(handle)

    @classmethod
    def new(cls, args, handle):
        return cls(args, handle)

    # -- PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state, pod):
        err = pod.affinity_parse_error
        if err is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {err}")
        snapshot = self.handle.snapshot
        all_ns = snapshot.objects.namespace_labels
        table = snapshot.table()
        s = PreFilterState(pod, all_ns, table, self.selector_kept)
        self._existing_anti_affinity_counts(s.existing_anti_affinity_counts, pod, all_ns, table)
        self._incoming_counts(s, table)
        if not s.existing_anti_affinity_counts and not s.affinity_terms and not s.anti_affinity_terms:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, s)
        return None, None

    @staticmethod
    def _existing_anti_affinity_counts(counts: TopologyCounts, pod, all_ns: dict, table) -> None:
        """getExistingAntiAffinityCounts: existing pods' required anti-terms that match ``pod``."""
        entries = term_index(table, ("InterPodAffinity", "requiredAntiAffinity"), _required_anti_affinity_terms)
        for term, per_row, _total in entries.values():
            if term.matches(pod, all_ns):
                counts.add_domain_sums(term.topology_key, table.domain_sums(term.topology_key, per_row))

    @staticmethod
    def _incoming_counts(s: PreFilterState, table) -> None:
        """getIncomingAffinityAntiAffinityCounts over every pod of every node."""
        terms = s.affinity_terms
        if terms:
            per_row = _per_node_matches(table, terms)
            for t in terms:
                s.affinity_counts.add_domain_sums(t.topology_key, table.domain_sums(t.topology_key, per_row))
        for t in s.anti_affinity_terms:
            per_row = _per_node_matches(table, (t,))
            s.anti_affinity_counts.add_domain_sums(t.topology_key, table.domain_sums(t.topology_key, per_row))

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
                if counts.get(t.topology_key, tv) <= 0:
                    pods_exist = False
            # The first pod of a group with affinity to itself may go anywhere with the topologies.
            if not pods_exist and (counts or not s.matches_own_terms):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY)
        counts = s.anti_affinity_counts
        for t in s.anti_affinity_terms:
            tv = labels.get(t.topology_key)
            if tv is not None and counts.get(t.topology_key, tv) > 0:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY)
        counts = s.existing_anti_affinity_counts
        for key in counts.keys():
            tv = labels.get(key)
            if tv is not None and counts.get(key, tv) > 0:
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

        def hits(counts, key):
            column = table.label_column(key)[1]
            return counts.by_code(key)[column[rows]] > 0

        terms = s.affinity_terms
        if terms:
            counts = s.affinity_counts
            missing = np.zeros(n, bool)
            pods_exist = np.ones(n, bool)
            for t in terms:
                col = table.label_column(t.topology_key)[1][rows]
                missing |= col < 0
                pods_exist &= counts.by_code(t.topology_key)[col] > 0
            fail = missing
            if counts or not s.matches_own_terms:
                fail = missing | ~pods_exist
            kinds[fail] = 0
            undecided &= ~fail
        for t in s.anti_affinity_terms:
            fail = undecided & hits(s.anti_affinity_counts, t.topology_key)
            kinds[fail] = 1
            undecided &= ~fail
        counts = s.existing_anti_affinity_counts
        for key in counts.keys():
            fail = undecided & hits(counts, key)
            kinds[fail] = 2
            undecided &= ~fail
        return kinds, _BATCH_STATUSES

    # -- PreScore / Score ----------------------------------------------------------------------
    def pre_score(self, state, pod, node_infos):
        if not node_infos:
            return Status(Code.SKIP)
        # kube asks the spec, so preferred terms dropped for a parse error still count.
        has_constraints = bool(pod.affinity_preferred or pod.anti_affinity_preferred) or any(
            kind.startswith("preferred") for kind, _err in pod.affinity_parse_errors)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        err = pod.affinity_parse_error
        if err is not None:
            return Status.error(f"failed to parse pod: {err}")
        snapshot = self.handle.snapshot
        all_ns = snapshot.objects.namespace_labels
        table = snapshot.table()
        score = TopologyCounts(table)
        present = False

        def add(key, per_row, weight):
            nonlocal present
            sums = table.domain_sums(key, per_row)
            if sums.any():
                present = True
                score.add_domain_sums(key, sums, weight)

        # The incoming pod's preferred terms against the existing pods.
        for t in pod.affinity_preferred:
            t = MergedTerm(t, all_ns, self.selector_kept)
            add(t.topology_key, _per_node_matches(table, (t,)), t.weight)
        for t in pod.anti_affinity_preferred:
            t = MergedTerm(t, all_ns, self.selector_kept)
            add(t.topology_key, _per_node_matches(table, (t,)), -t.weight)
        # The existing pods' terms against the incoming pod (with its namespace's labels).
        hard_weight = self.hard_pod_affinity_weight
        entries = term_index(table, ("InterPodAffinity", "scoringTerms"), _scoring_terms)
        for sig, (term, per_row, _total) in entries.items():
            kind = sig[0]
            if kind == 0:
                if hard_weight <= 0:
                    continue
                weight = hard_weight
            else:
                weight = kind * term.weight
            if term.matches(pod, all_ns):
                add(term.topology_key, per_row, weight)
        if not present:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_KEY, PreScoreState(score, present))
        return None

    def score(self, state, pod, node_info):
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, Status.error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        return self._node_score(s.topology_score, node_info.node.labels), None

    @staticmethod
    def _node_score(score: TopologyCounts, labels: dict) -> int:
        total = 0
        for key in score.keys():
            tv = labels.get(key)
            if tv is not None:
                total += score.get(key, tv)
        return total

    def score_nodes(self, state, pod, node_infos):
        """Score for many nodes at once (same result as ``score`` per node)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None, Status.error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        score = s.topology_score
        return [self._node_score(score, ni.node.labels) for ni in node_infos], None

    def score_batch(self, state, pod, table, rows):
        """Score over NodeTable rows: the topology scores gathered through the label columns."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        out = np.zeros(len(rows), np.int64)
        for key in s.topology_score.keys():
            per_code = s.topology_score.by_code(key)
            if np.abs(per_code).max() >= EXACT_LIMIT:
                return None
            out += per_code[table.label_column(key)[1][rows]]
        return out

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return Status.error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        if not s.present or not scores:
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
        if not s.present or not len(scores):
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
        if not self.queueing_hints:
            return (("Pod", ("Add", "Update", "Delete")), ("Node", ("Add", "UpdateNodeLabel")))
        return (("Pod", ("Add", "UpdatePodLabel", "Delete"), self.is_schedulable_after_pod_change),
                ("Node", ("Add", "UpdateNodeLabel"), self.is_schedulable_after_node_change))

    @staticmethod
    def is_schedulable_after_pod_change(pod, old, new):
        """A bound or nominated pod that now matches all the pod's affinity terms, or no longer all its
        anti-affinity terms; a deleted pod whose anti-affinity rejected the pod."""
        if new is not None and old is not None and pod.uid == new.uid:
            return QUEUE
        if (new is not None and not new.node_name and not new.nominated_node_name) or \
                (old is not None and not old.node_name and not old.nominated_node_name):
            return QUEUE_SKIP
        terms, anti_terms = _terms(pod.affinity_required), _terms(pod.anti_affinity_required)
        if new is not None and old is not None:
            if not _spec_terms_match_all(terms, old) and _spec_terms_match_all(terms, new):
                return QUEUE
            if _spec_terms_match_all(anti_terms, old) and not _spec_terms_match_all(anti_terms, new):
                return QUEUE
            return QUEUE_SKIP
        if new is not None:
            return QUEUE if _spec_terms_match_all(terms, new) else QUEUE_SKIP
        if _spec_terms_match_all(anti_terms, old):
            return QUEUE
        return QUEUE if _spec_terms_match_all(_terms(old.anti_affinity_required), pod) else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_node_change(pod, old, new):
        """A node that gains (or changes) an affinity term's topology key, or loses (or changes) an
        anti-affinity term's; any new node for a pod with anti-affinity."""
        for term in _terms(pod.affinity_required):
            key = term.topology_key
            if old is None:
                if key in new.labels:
                    return QUEUE
                continue
            if key in new.labels and (key not in old.labels or old.labels[key] != new.labels[key]):
                return QUEUE
        for term in _terms(pod.anti_affinity_required):
            if old is None:
                return QUEUE
            key = term.topology_key
            if key in old.labels and (key not in new.labels or old.labels[key] != new.labels[key]):
                return QUEUE
        return QUEUE_SKIP

    def sign_pod(self, pod):
        """A pod with pod (anti-)affinity has no signature; other pods are signed by their labels (which the
        existing pods' terms match), unless ignorePreferredTermsOfExistingPods."""
        affinity = (pod.raw.get("spec") or {}).get("affinity") or {}
        if affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None:
            return signers.unsignable("pods with InterPodAffinity are not signable")
        if self.ignore_preferred_terms_of_existing_pods:
            return [], None
        return [(signers.LABELS, pod.labels)], None

