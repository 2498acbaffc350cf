"""PreScore state and score arithmetic of PodTopologySpread (podtopologyspread/scoring.go)."""
from __future__ import annotations

import math

import numpy as np

from ...framework.interface import MAX_NODE_SCORE
from ..helper import go_round, tdiv
from .common import HOSTNAME, InclusionCheck, count_matching

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


def _has_all(labels: dict, keys) -> bool:
    for k in keys:
        if k not in labels:
            return False
    return True


def compute_pre_score_state(pod, constraints, filtered_nodes, all_nodes, require_all: bool) -> PreScoreState:
    """initPreScoreState over the feasible nodes, then pod counts per domain over all nodes.

    Only domains of feasible nodes are counted; a node missing a key counts under the value "" (kube's
    zero value), which matters only when keys are not required (system defaulting).
    """
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    ignored = set()
    zonal = [(i, c) for i, c in enumerate(constraints) if c.topology_key != HOSTNAME]
    counts = {c.topology_key: {} for _i, c in zonal}
    topo_size = [0] * len(constraints)
    for ni in filtered_nodes:
        labels = ni.node.labels
        if require_all and not _has_all(labels, keys):
            ignored.add(ni.name)
            continue
        for i, c in zonal:
            per_value = counts[c.topology_key]
            value = labels.get(c.topology_key, "")
            if value not in per_value:
                per_value[value] = 0
                topo_size[i] += 1
    weights = []
    for i, c in enumerate(constraints):
        size = len(filtered_nodes) - len(ignored) if c.topology_key == HOSTNAME else topo_size[i]
        weights.append(topology_normalizing_weight(size))
    if zonal:
        counted = [c for _i, c in zonal]
        check = InclusionCheck(pod, counted)
        ns = pod.namespace
        if len(counted) == 1 and check.trivial and (not require_all or len(keys) == 1):
            _count_one(counts[counted[0].topology_key], counted[0], all_nodes, ns, require_all)
        else:
            included = InclusionCheck.included
            for ni in all_nodes:
                node = ni.node
                labels = node.labels
                if require_all and not _has_all(labels, keys):
                    continue
                flags = None
                for c in counted:
                    per_value = counts[c.topology_key]
                    value = labels.get(c.topology_key, "")
                    if value not in per_value:
                        continue
                    if flags is None:
                        flags = check.node_flags(node)
                    if included(c, flags):
                        per_value[value] += count_matching(ni.pods, c, ns)
    return PreScoreState(constraints, ignored, counts, weights, pod.namespace)


def _count_one(per_value: dict, c, all_nodes, ns: str, require_all: bool) -> None:
    """The all-nodes pass for the common case: one counted key and no inclusion policy to evaluate."""
    if c.empty:
        return
    key = c.topology_key
    match = c.matches
    for ni in all_nodes:
        value = ni.node.labels.get(key)
        if value is None:
            if require_all:
                continue
            value = ""
        if value in per_value:
            n = 0
            for p in ni.pods:
                if p.namespace == ns and p.deletion_timestamp is None and match(p.labels):
                    n += 1
            per_value[value] += n


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
