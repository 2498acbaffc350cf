"""PreFilter state of PodTopologySpread: matching-pod counts per topology pair (podtopologyspread/filtering.go).

As in v1.30, counts are kept per topology key: constraints sharing a topology key share their counts,
domains and critical paths.
"""
from __future__ import annotations

from ...framework.node_table import counts_by_code
from .common import InclusionCheck, count_matching

MAX_INT32 = 2**31 - 1


def new_critical_paths() -> list:
    """criticalPaths as a flat list ``[value0, num0, value1, num1]``; num0 is the minimum."""
    return ["", MAX_INT32, "", MAX_INT32]


def update_critical_paths(p: list, value: str, num: int) -> None:
    """criticalPaths.update: keep the two smallest domains seen (kube's approximation, kept as is)."""
    if value == p[0]:
        p[1] = num
    elif value == p[2]:
        p[3] = num
    else:
        if num < p[1]:
            p[2], p[3] = p[0], p[1]
            p[0], p[1] = value, num
        elif num < p[3]:
            p[2], p[3] = value, num
        return
    if p[1] > p[3]:
        p[0], p[1], p[2], p[3] = p[2], p[3], p[0], p[1]


class PreFilterState:
    """Hard constraints, their self-match, and per topology key: critical paths and ``{value: matching pods}``.

    A key without any eligible domain has no entry in ``counts`` (kube's TpKeyToDomainsNum miss).
    """

    __slots__ = ("constraints", "self_match", "critical_paths", "counts", "domains_num", "_by_code")

    def __init__(self, constraints, self_match, critical_paths, counts, domains_num):
        self.constraints = constraints
        self.self_match = self_match
        self.critical_paths = critical_paths
        self.counts = counts
        self.domains_num = domains_num
        self._by_code = {}

    def counts_by_code(self, key: str, codes: dict):
        """``counts[key]`` indexed by a NodeTable label column's codes (node_table.counts_by_code), cached
        until the counts change."""
        hit = self._by_code.get(key)
        if hit is None or hit[0] is not codes or hit[1] != len(codes):
            hit = self._by_code[key] = (codes, len(codes), counts_by_code(codes, self.counts.get(key)))
        return hit[2]

    def clone(self) -> "PreFilterState":
        """Copy for preemption dry runs; constraints and domain numbers do not change, so they are shared."""
        return PreFilterState(self.constraints, self.self_match,
                              {k: list(p) for k, p in self.critical_paths.items()},
                              {k: dict(v) for k, v in self.counts.items()}, self.domains_num)

    def update_with_pod(self, updated_pod, preemptor, node, delta: int) -> None:
        """updateWithPod: add ``delta`` for each constraint selecting ``updated_pod`` on ``node``."""
        if updated_pod.namespace != preemptor.namespace or node is None:
            return
        labels = node.labels
        for c in self.constraints:
            if c.topology_key not in labels:
                return
        flags = InclusionCheck(preemptor, self.constraints).node_flags(node)
        for c in self.constraints:
            if not c.matches(updated_pod.labels) or not InclusionCheck.included(c, flags):
                continue
            key = c.topology_key
            value = labels[key]
            per_value = self.counts.get(key)
            if per_value is None:
                per_value = self.counts[key] = {}
            n = per_value.get(value, 0) + delta
            per_value[value] = n
            self._by_code.pop(key, None)
            update_critical_paths(self.critical_paths[key], value, n)


def compute_pre_filter_state(pod, constraints, node_infos) -> PreFilterState:
    """calPreFilterState over all nodes of the snapshot."""
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    check = InclusionCheck(pod, constraints)
    included = InclusionCheck.included
    ns = pod.namespace
    counts = {}
    if len(constraints) == 1 and check.trivial:
        # Fast path (one constraint, no inclusion policy to evaluate): count per value directly.
        c = constraints[0]
        per_value = {}
        get = per_value.get
        key = c.topology_key
        match = c.matches
        for ni in node_infos:
            value = ni.node.labels.get(key)
            if value is None:
                continue
            n = 0
            if not c.empty:
                for p in ni.pods:
                    if p.namespace == ns and p.deletion_timestamp is None and match(p.labels):
                        n += 1
            per_value[value] = get(value, 0) + n
        if per_value:
            counts[key] = per_value
    else:
        for ni in node_infos:
            node = ni.node
            labels = node.labels
            for k in keys:
                if k not in labels:
                    break
            else:
                flags = check.node_flags(node)
                # One count per key and node: the last constraint on a shared key wins (kube's per-node map).
                per_node = {}
                for c in constraints:
                    if included(c, flags):
                        per_node[c.topology_key] = count_matching(ni.pods, c, ns)
                for key, n in per_node.items():
                    per_value = counts.get(key)
                    if per_value is None:
                        per_value = counts[key] = {}
                    value = labels[key]
                    per_value[value] = per_value.get(value, 0) + n
    paths = {k: new_critical_paths() for k in keys}
    for key, per_value in counts.items():
        p = paths[key]
        for value, n in per_value.items():
            update_critical_paths(p, value, n)
    domains_num = {k: len(v) for k, v in counts.items()}
    self_match = tuple(1 if c.matches(pod.labels) else 0 for c in constraints)
    return PreFilterState(constraints, self_match, paths, counts, domains_num)
