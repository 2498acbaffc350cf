"""PreFilter state of PodTopologySpread: matching-pod counts per topology pair (podtopologyspread/filtering.go).

As in v1.30, counts are kept per topology key: constraints sharing a topology key share their counts,
domains and critical paths.
"""
from __future__ import annotations

import numpy as np

from ...framework.node_table import counts_by_code
from .common import InclusionCheck, inclusion_masks, matching_per_row

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


def compute_pre_filter_state(pod, constraints, table) -> PreFilterState:
    """calPreFilterState over all nodes of the snapshot (the NodeTable's rows, in node order).

    A node counts when it has every constraint's topology key; for each key, the last constraint on that
    key whose inclusion policies admit the node gives its count (kube's per-node map), and its value is a
    domain even when the count is 0. Domains are listed in the order of their first node, as kube's loop
    meets them.
    """
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    check = InclusionCheck(pod, constraints)
    has_keys = np.ones(table.n, bool)
    for key in keys:
        has_keys &= table.label_column(key)[1] >= 0
    aff_ok, taints_ok = inclusion_masks(check, table)
    counts = {}
    for key in keys:
        per_row = np.zeros(table.n, np.int64)
        counted = np.zeros(table.n, bool)
        for c in constraints:
            if c.topology_key != key:
                continue
            admitted = has_keys
            if c.honor_affinity:
                admitted = admitted & aff_ok
            if c.honor_taints:
                admitted = admitted & taints_ok
            per_row = np.where(admitted, matching_per_row(table, c, pod.namespace), per_row)
            counted |= admitted
        if counted.any():
            counts[key] = _sums_by_value(table, key, per_row, counted)
    paths = {k: new_critical_paths() for k in keys}
    for key, per_value in counts.items():
        p = paths[key]
        for value, n in per_value.items():
            update_critical_paths(p, value, n)
    domains_num = {k: len(v) for k, v in counts.items()}
    self_match = tuple(1 if c.matches(pod.labels) else 0 for c in constraints)
    return PreFilterState(constraints, self_match, paths, counts, domains_num)


def _sums_by_value(table, key: str, per_row, counted) -> dict:
    """``{value: sum of per_row}`` over the counted rows, values in the order of their first counted row."""
    codes, column = table.label_column(key)
    col = column[counted]
    sums = np.bincount(col, weights=per_row[counted], minlength=len(codes)).astype(np.int64)
    present, first = np.unique(col, return_index=True)
    ordered = present[np.argsort(first, kind="stable")].tolist()
    values = list(codes)
    return dict(zip([values[c] for c in ordered], sums[ordered].tolist()))
