"""Scoring strategies: LeastAllocated, MostAllocated, RequestedToCapacityRatio."""
from __future__ import annotations

from ..helper import go_round

MAX_NODE_SCORE = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


def least_allocated(requested, allocatable, weights) -> int:
    score = weight_sum = 0
    for req, alloc, w in zip(requested, allocatable, weights):
        s = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
        score += s * w
        weight_sum += w
    return score // weight_sum if weight_sum else 0


def most_allocated(requested, allocatable, weights) -> int:
    score = weight_sum = 0
    for req, alloc, w in zip(requested, allocatable, weights):
        s = min(req, alloc) * MAX_NODE_SCORE // alloc
        score += s * w
        weight_sum += w
    return score // weight_sum if weight_sum else 0


def broken_linear(shape):
    """helper.BuildBrokenLinearFunction over (utilization, score) points; integer arithmetic as Go."""
    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return shape[0][1]
                u0, s0 = shape[i - 1]
                return s0 + _tdiv((s - s0) * (p - u0), (u - u0))
        return shape[-1][1]
    return f


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def requested_to_capacity_ratio(shape_points):
    """shape_points: [(utilization, score 0-10)] -> scorer; scores are scaled to 0-100."""
    shape = [(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape_points]
    fn = broken_linear(shape)

    def resource_scoring(req, alloc):
        if alloc == 0 or req > alloc:
            return fn(MAX_NODE_SCORE)
        return fn(req * MAX_NODE_SCORE // alloc)

    def scorer(requested, allocatable, weights) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights):
            s = resource_scoring(req, alloc)
            if s > 0:
                node_score += s * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        return go_round(node_score / weight_sum)
    return scorer
