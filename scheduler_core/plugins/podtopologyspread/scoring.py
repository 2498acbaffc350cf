"""PreScore state and score arithmetic of PodTopologySpread (podtopologyspread/scoring.go)."""
from __future__ import annotations

import math

import numpy as np

from ...framework.interface import MAX_NODE_SCORE
from ..helper import go_round, tdiv
from .common import HOSTNAME, InclusionCheck, count_matching, inclusion_masks, matching_per_row

INVALID_SCORE = -1


class PreScoreState:
    """Soft constraints, nodes ignored for missing keys, ``{value: matching pods}`` per non-hostname key,
    and per constraint ``(topologyKey, is_hostname, weight, maxSkew - 1, constraint)`` in ``terms``."""

    __slots__ = ("constraints", "ignored_nodes", "counts", "terms", "namespace", "batch_ignored")

    def __init__(self, constraints, ignored_nodes, counts, weights, namespace):
        self.batch_ignored = None  # the ignored-row mask of the last score_batch
        self.constraints = constraints
        self.ignored_nodes = ignored_nodes
        self.counts = counts
        self.namespace = namespace
        self.terms = tuple((c.topology_key, c.topology_key == HOSTNAME, w, float(c.max_skew - 1), c)
                           for c, w in zip(constraints, weights))

    def score(self, node_info) -> int:
        """Score of one node: Σ count·weight + (maxSkew − 1) over the keys the node has, rounded."""
        if node_info.name in self.ignored_nodes:
            return 0
        labels = node_info.node.labels
        score = 0.0
        for key, is_hostname, weight, skew_term, c in self.terms:
            value = labels.get(key)
            if value is None:
                continue
            if is_hostname:
                cnt = count_matching(node_info.pods, c, self.namespace)
            else:
                cnt = self.counts[key].get(value, 0)
            score += cnt * weight + skew_term
        return go_round(score)


def topology_normalizing_weight(size: int) -> float:
    """ln(size + 2): smaller topologies are not watered down by bigger ones."""
    return math.log(size + 2)


def compute_pre_score_state(pod, constraints, filtered_nodes, table, require_all: bool) -> PreScoreState:
    """initPreScoreState over the feasible nodes, then pod counts per domain over all nodes (the
    NodeTable's rows).

    Only domains of feasible nodes are counted; a node missing a key counts under the value "" (kube's
    zero value), which matters only when keys are not required (system defaulting).
    """
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    filtered = np.fromiter((ni.index for ni in filtered_nodes), np.int64, len(filtered_nodes))
    has_keys = np.ones(table.n, bool)
    for key in keys:
        has_keys &= table.label_column(key)[1] >= 0
    if require_all:
        kept = filtered[has_keys[filtered]]
        ignored = {table.infos[i].name for i in filtered[~has_keys[filtered]].tolist()}
    else:
        kept = filtered
        ignored = set()
    zonal = [c for c in constraints if c.topology_key != HOSTNAME]
    counts = {}
    sizes = {}
    if zonal:
        aff_ok, taints_ok = inclusion_masks(InclusionCheck(pod, zonal), table)
    for c in zonal:
        key = c.topology_key
        values, slots = _value_slots(table, key)
        domains = np.zeros(len(values), bool)
        domains[slots[kept]] = True
        # kube counts a domain for the first constraint on its key only (topoSize[i]++ on a new pair).
        sizes[id(c)] = 0 if key in counts else int(domains.sum())
        eligible = domains[slots]
        if require_all:
            eligible &= has_keys
        if c.honor_affinity:
            eligible &= aff_ok
        if c.honor_taints:
            eligible &= taints_ok
        per_row = matching_per_row(table, c, pod.namespace)
        sums = np.bincount(slots[eligible], weights=per_row[eligible], minlength=len(values)).astype(np.int64)
        # A later constraint on the same key adds to the same domains (kube's shared per-key map).
        per_value = counts.setdefault(key, {})
        for code in np.flatnonzero(domains).tolist():
            per_value[values[code]] = per_value.get(values[code], 0) + int(sums[code])
    weights = []
    for c in constraints:
        size = len(kept) if c.topology_key == HOSTNAME else sizes[id(c)]
        weights.append(topology_normalizing_weight(size))
    return PreScoreState(constraints, ignored, counts, weights, pod.namespace)


def _value_slots(table, key: str):
    """The label's values by slot, and each row's slot, a missing label counting as the value ""."""
    codes, column = table.label_column(key)
    values = list(codes)
    empty = codes.get("")
    if empty is None:
        empty = len(values)
        values.append("")
    return values, np.where(column < 0, empty, column)


def normalize(ignored_nodes, scores) -> None:
    """NormalizeScore in place: ignored nodes get 0; fewer matching pods score higher."""
    min_score = 2**63 - 1
    max_score = 0
    for pair in scores:
        if pair[0] in ignored_nodes:
            pair[1] = INVALID_SCORE
            continue
        s = pair[1]
        if s < min_score:
            min_score = s
        if s > max_score:
            max_score = s
    for pair in scores:
        if pair[1] == INVALID_SCORE:
            pair[1] = 0
        elif max_score == 0:
            pair[1] = MAX_NODE_SCORE
        else:
            pair[1] = tdiv(MAX_NODE_SCORE * (max_score + min_score - pair[1]), max_score)


def normalize_array(ignored, scores):
    """``normalize`` over an int64 array; ``ignored`` is a bool mask of the ignored rows."""
    valid = ~ignored
    out = np.zeros(len(scores), np.int64)
    if not valid.any():
        return out
    vals = scores[valid]
    min_score = min(int(vals.min()), 2**63 - 1)
    max_score = max(int(vals.max()), 0)
    keep = valid & (scores != INVALID_SCORE)
    if max_score == 0:
        out[keep] = MAX_NODE_SCORE
    else:
        num = MAX_NODE_SCORE * (max_score + min_score - scores[keep])
        out[keep] = np.where(num >= 0, num // max_score, -((-num) // max_score))
    return out
