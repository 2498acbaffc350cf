"""Scoring strategies: LeastAllocated, MostAllocated, RequestedToCapacityRatio."""
from __future__ import annotations

import numpy as np

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


def _least_allocated_batch(requested, allocatable, weights):
    score = np.zeros(len(requested[0]), np.int64)
    weight_sum = np.zeros(len(requested[0]), np.int64)
    for req, alloc, w in zip(requested, allocatable, weights):
        ok = alloc != 0
        safe = np.where(ok, alloc, 1)
        s = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // safe)
        score += np.where(ok, s * w, 0)
        weight_sum += np.where(ok, w, 0)
    return np.where(weight_sum != 0, score // np.where(weight_sum != 0, weight_sum, 1), 0)


least_allocated.batch = _least_allocated_batch


def most_allocated(requested, allocatable, weights) -> int:
    score = weight_sum = 0
    for req, alloc, w in zip(requested, allocatable, weights):
        s = min(req, alloc) * MAX_NODE_SCORE // alloc
        score += s * w
        weight_sum += w
    return score // weight_sum if weight_sum else 0


def _most_allocated_batch(requested, allocatable, weights):
    score = np.zeros(len(requested[0]), np.int64)
    weight_sum = np.zeros(len(requested[0]), np.int64)
    for req, alloc, w in zip(requested, allocatable, weights):
        ok = alloc != 0
        s = np.minimum(req, alloc) * MAX_NODE_SCORE // np.where(ok, alloc, 1)
        score += np.where(ok, s * w, 0)
        weight_sum += np.where(ok, w, 0)
    return np.where(weight_sum != 0, score // np.where(weight_sum != 0, weight_sum, 1), 0)


most_allocated.batch = _most_allocated_batch


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


def broken_linear_batch(shape):
    """broken_linear over an int64 array."""
    def f(p):
        out = np.full(len(p), shape[-1][1], np.int64)
        for i in range(len(shape) - 1, -1, -1):  # the first point with p <= u wins
            u, s = shape[i]
            if i == 0:
                val = np.full(len(p), shape[0][1], np.int64)
            else:
                u0, s0 = shape[i - 1]
                a = (s - s0) * (p - u0)
                b = u - u0
                q = np.abs(a) // abs(b)
                val = s0 + np.where((a >= 0) == (b >= 0), q, -q)
            out = np.where(p <= u, val, out)
        return out
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

    fn_batch = broken_linear_batch(shape)
    full = fn(MAX_NODE_SCORE)

    def batch(requested, allocatable, weights):
        n = len(requested[0])
        node_score = np.zeros(n, np.int64)
        weight_sum = np.zeros(n, np.int64)
        for req, alloc, w in zip(requested, allocatable, weights):
            ok = alloc != 0
            over = req > alloc
            s = fn_batch(np.where(over | ~ok, 0, req * MAX_NODE_SCORE // np.where(ok, alloc, 1)))
            s = np.where(over, full, s)
            use = ok & (s > 0)
            node_score += np.where(use, s * w, 0)
            weight_sum += np.where(use, w, 0)
        x = node_score / np.where(weight_sum != 0, weight_sum, 1)
        return np.where(weight_sum != 0, np.floor(x + 0.5), 0).astype(np.int64)
    scorer.batch = batch
    return scorer
