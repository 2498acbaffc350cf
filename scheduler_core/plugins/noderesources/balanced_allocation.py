"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay even."""
from __future__ import annotations

import math

import numpy as np

from ...framework.handle import features_of
from ...framework.status import Code, Status
from .. import names
from .resource_allocation import ResourceAllocationScorer, ResourceAllocationScoring


def balanced_score(requested, allocatable, _weights) -> int:
    fractions = []
    total = 0.0
    for req, alloc in zip(requested, allocatable):
        f = req / alloc
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * 100)


def balanced_score_batch(requested, allocatable, _weights):
    """balanced_score over columns (float64 in Go's operation order); a column of alloc 0 is skipped."""
    if len(requested) == 2:
        return _balanced_score_two(requested, allocatable)
    n = len(requested[0]) if requested else 0
    count = np.zeros(n, np.int64)
    total = np.zeros(n, np.float64)
    fractions, valid = [], []
    for req, alloc in zip(requested, allocatable):
        ok = alloc != 0
        f = req.astype(np.float64) / np.where(ok, alloc, 1).astype(np.float64)
        f = np.where(f > 1, 1.0, f)
        f = np.where(ok, f, 0.0)
        total += f
        count += ok
        fractions.append(f)
        valid.append(ok)
    std = np.zeros(n, np.float64)
    two = count == 2
    if two.any():
        # the first and the second valid fraction of each row
        first = np.zeros(n, np.float64)
        second = np.zeros(n, np.float64)
        seen = np.zeros(n, np.int64)
        for f, ok in zip(fractions, valid):
            first = np.where(ok & (seen == 0), f, first)
            second = np.where(ok & (seen == 1), f, second)
            seen += ok
        std = np.where(two, np.abs((first - second) / 2), std)
    many = count > 2
    if many.any():
        mean = total / np.where(many, count, 1)
        ssum = np.zeros(n, np.float64)
        for f, ok in zip(fractions, valid):
            d = f - mean
            ssum += np.where(ok, d * d, 0.0)
        std = np.where(many, np.sqrt(ssum / np.where(many, count, 1)), std)
    return ((1 - std) * 100).astype(np.int64)


def _balanced_score_two(requested, allocatable):
    """balanced_score_batch of two resources (the default cpu and memory): |f0 - f1| / 2 where both columns have
    allocatable, else 0."""
    (r0, r1), (a0, a1) = requested, allocatable
    ok0, ok1 = a0 != 0, a1 != 0
    f0 = np.minimum(r0.astype(np.float64) / np.where(ok0, a0, 1).astype(np.float64), 1.0)
    f1 = np.minimum(r1.astype(np.float64) / np.where(ok1, a1, 1).astype(np.float64), 1.0)
    std = np.where(ok0 & ok1, np.abs((f0 - f1) / 2), 0.0)
    return ((1 - std) * 100).astype(np.int64)


def balance_change_score(requested, allocatable, weights, allocated) -> int:
    """balancedResourceScorer (1.36): the change in balance the pod makes, brought back to [50, 100]."""
    with_pod = balanced_score(requested, allocatable, weights)
    without_pod = balanced_score(allocated, allocatable, weights)
    return 50 + (50 + with_pod - without_pod) // 2


def balance_change_score_batch(requested, allocatable, weights, allocated):
    """balance_change_score over columns (the difference is in [-50, 50], so // is Go's division)."""
    with_pod = balanced_score_batch(requested, allocatable, weights)
    without_pod = balanced_score_batch(allocated, allocatable, weights)
    return 50 + (50 + with_pod - without_pod) // 2


class BalancedAllocation(ResourceAllocationScoring):
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION

    def __init__(self, args: dict, balance_change: bool = False, handle=None):
        resources = (args or {}).get("resources") or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        resources = [(r["name"], r.get("weight") or 1) for r in resources]
        # 1.36: best-effort pods are skipped and the score is the change in balance
        self.balance_change = balance_change
        self.dra_handle = handle if handle is not None and handle.features.gates.get("DRAExtendedResource") else None
        if balance_change:
            self.scorer = ResourceAllocationScorer(self.name, resources, balance_change_score, use_requested=True,
                                                   batch=balance_change_score_batch, with_allocated=True)
        else:
            self.scorer = ResourceAllocationScorer(self.name, resources, balanced_score, use_requested=True,
                                                   batch=balanced_score_batch)

    @classmethod
    def new(cls, args, handle):
        return cls(args, features_of(handle).has("balanced-allocation-balance-change"), handle)

    def _best_effort(self, requests) -> bool:
        return self.balance_change and not any(requests)

    def pre_score(self, state, pod, node_infos):
        requests = self.scorer.pod_requests(pod)
        if self._best_effort(requests):
            return Status(Code.SKIP)
        state.write(self.pre_score_key, requests)
        return None

    def score(self, state, pod, node_info):
        requests = self._pod_requests(state, pod)
        if self._best_effort(requests):
            return 0, None
        return self.scorer.score(pod, node_info, requests), None

    def score_batch(self, state, pod, table, rows):
        requests = self._pod_requests(state, pod)
        if self._best_effort(requests):
            return np.zeros(len(rows), np.int64)
        return self.scorer.score_batch(table, rows, requests)
