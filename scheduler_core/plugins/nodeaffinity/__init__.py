"""NodeAffinity: nodeSelector / required node affinity filter, preferred node affinity score."""
from __future__ import annotations

import numpy as np

from ...framework.handle import queueing_hints_of
from ...framework.interface import (
    QUEUE,
    QUEUE_SKIP,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from ...framework.node_table import (
    node_selector_mask,
    node_selector_term_mask,
    requirement_mask,
)
from ...framework.profile import FrameworkError
from ...framework.status import Code, Status
from ...framework import signers
from ...objects.errors import ParseError
from ...objects.field import aggregate
from ...objects.selectors import NodeSelector, PreferredTerm
from .. import names
from ..helper import default_normalize_score, default_normalize_score_array

PRE_SCORE_KEY = "PreScore" + names.NODE_AFFINITY
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_ADDED_REQUIRED = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
_ADDED_PREFERRED = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"


def _raw_node_affinity(pod) -> dict:
    """The pod's raw spec.affinity.nodeAffinity ({} when unset): kube tells nil from empty lists/maps."""
    spec = pod.raw.get("spec") or {}
    return (spec.get("affinity") or {}).get("nodeAffinity") or {}


def _is_empty_term(term) -> bool:
    return not term.expressions and not term.fields


def scoring_terms(preferred):
    """NewPreferredSchedulingTerms: ((weight, term), ...) without weight-0 or empty terms.

    Returns (terms, None), or (None, kube's error text) when a term does not parse (paths ``[i].matchExpressions...``).
    """
    out, errs = [], []
    for i, pt in enumerate(preferred):
        if pt.weight == 0 or _is_empty_term(pt.term):
            continue
        term_errs = pt.term.parse_errors(f"[{i}]")
        if term_errs:
            errs.extend(term_errs)
        else:
            out.append((pt.weight, pt.term))
    if errs:
        return None, aggregate(errs)
    return tuple(out), None


def required_node_affinity_matches(pod, node) -> bool:
    """RequiredNodeAffinity.Match: spec.nodeSelector AND required node affinity terms."""
    labels = node.labels
    for key, value in pod.node_selector:
        if labels.get(key) != value:
            return False
    required = pod.required_node_affinity
    return required is None or required.matches(labels, node.name)


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions):
    """Node affinity of the pod, plus the profile's ``addedAffinity`` applied to every pod."""

    name = names.NODE_AFFINITY
    filter_depends_on = "node"

    def __init__(self, added_affinity=None, queueing_hints: bool = False):
        self.queueing_hints = queueing_hints
        self.added_selector = None     # addedAffinity required NodeSelector, or None
        self.has_added_preferred = False
        self.added_terms = ()          # addedAffinity ((weight, term), ...) for Score
        if not added_affinity:
            return
        try:
            required = added_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
            if required is not None:
                sel = NodeSelector(required, _ADDED_REQUIRED)
                errs = [e for i, term in enumerate(sel.terms) if not _is_empty_term(term)
                        for e in term.parse_errors(f"nodeSelectorTerms[{i}]")]
                if errs:
                    raise FrameworkError(f"parsing {_ADDED_REQUIRED}: {aggregate(errs)}")
                self.added_selector = sel
            preferred = added_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
            if preferred:
                terms, err = scoring_terms([PreferredTerm(t, f"{_ADDED_PREFERRED}[{i}]")
                                            for i, t in enumerate(preferred)])
                if err is not None:
                    raise FrameworkError(f"parsing {_ADDED_PREFERRED}: {err}")
                self.has_added_preferred = True
                self.added_terms = terms
        except ParseError as err:
            raise FrameworkError(str(err)) from None

    @classmethod
    def new(cls, args, handle):
        return cls((args or {}).get("addedAffinity"), queueing_hints_of(handle))

    def pre_filter(self, state, pod):
        required = pod.required_node_affinity
        if required is None and self.added_selector is None and \
                (pod.raw.get("spec") or {}).get("nodeSelector") is None:
            return None, Status(Code.SKIP)
        if required is None or not required.terms:
            return None, None
        # A PreFilterResult only when every term pins metadata.name: union over terms of their name sets.
        node_names = set()
        for term in required.terms:
            term_names = term.name_set()
            if term_names is None:
                return None, None
            node_names |= term_names
        if not node_names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return node_names, None

    def filter(self, state, pod, node_info):
        node = node_info.node
        if self.added_selector is not None and not self.added_selector.matches(node.labels, node.name):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        if not required_node_affinity_matches(pod, node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter_batch(self, state, pod, table, rows):
        """Filter over NodeTable rows (label code columns), or None for Gt/Lt requirements."""
        ok = np.ones(len(rows), bool)
        if self.added_selector is not None:
            m = node_selector_mask(table, rows, self.added_selector)
            if m is None:
                return None
            ok &= m
        for key, value in pod.node_selector:
            m = requirement_mask(table, rows, key, "In", (value,))
            ok &= m
        required = pod.required_node_affinity
        if required is not None:
            m = node_selector_mask(table, rows, required)
            if m is None:
                return None
            ok &= m
        return ~ok

    def filter_batch_status(self, state, pod):
        """Without addedAffinity every rejection has the same status."""
        if self.added_selector is not None:
            return None
        return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,)

    def _pod_terms(self, pod):
        """The pod's preferred terms: (None, None) when the field is unset, else scoring_terms()."""
        if _raw_node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution") is None:
            return None, None
        return scoring_terms(pod.preferred_node_affinity)

    def pre_score(self, state, pod, node_infos):
        terms, err = self._pod_terms(pod)
        if err is not None:
            return Status.error(err)
        if terms is None and not self.has_added_preferred:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_KEY, self.added_terms + (terms or ()))
        return None

    def score(self, state, pod, node_info):
        terms = state.get(PRE_SCORE_KEY)
        if terms is None:  # PreScore disabled: compute here, as kube falls back to
            pod_terms, err = self._pod_terms(pod)
            if err is not None:
                return 0, Status.error(err)
            terms = self.added_terms + (pod_terms or ())
        node = node_info.node
        labels, node_name = node.labels, node.name
        count = 0
        for weight, term in terms:
            if term.matches(labels, node_name):
                count += weight
        return count, None

    def score_batch(self, state, pod, table, rows):
        """Score over NodeTable rows, or None (no PreScore state, or Gt/Lt requirements)."""
        terms = state.get(PRE_SCORE_KEY)
        if terms is None:
            return None
        out = np.zeros(len(rows), np.int64)
        for weight, term in terms:
            m = node_selector_term_mask(table, rows, term)
            if m is None:
                return None
            out += np.where(m, weight, 0)
        return out

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        return default_normalize_score(100, False, scores)

    def normalize_score_batch(self, state, pod, scores):
        """NormalizeScore over an int64 array (returns the normalized array)."""
        return default_normalize_score_array(100, False, scores)

    def events_to_register(self):
        if not self.queueing_hints:
            return (("Node", ("Add", "Update")),)
        return (("Node", ("Add", "UpdateNodeLabel"), self.is_schedulable_after_node_change),)

    def is_schedulable_after_node_change(self, pod, old, new):
        """A node that matches the pod's required affinity (and addedAffinity) now and did not before."""
        if self.added_selector is not None and not self.added_selector.matches(new.labels, new.name):
            return QUEUE_SKIP
        if not required_node_affinity_matches(pod, new):
            return QUEUE_SKIP
        if old is None:
            return QUEUE
        return QUEUE_SKIP if required_node_affinity_matches(pod, old) else QUEUE

    def sign_pod(self, pod):
        """Filtering and scoring depend on the pod's node affinity and nodeSelector."""
        return [(signers.NODE_AFFINITY, signers.node_affinity(pod)),
                (signers.NODE_SELECTOR, signers.node_selector(pod))], None
