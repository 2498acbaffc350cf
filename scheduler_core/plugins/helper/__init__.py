"""Helpers shared by plugins (framework/plugins/helper)."""
from __future__ import annotations

import math

import numpy as np


def default_normalize_score(max_priority: int, reverse: bool, scores) -> None:
    """helper.DefaultNormalizeScore, in place on [[node, score], ...]."""
    max_count = 0
    for _n, s in scores:
        if s > max_count:
            max_count = s
    if max_count == 0:
        if reverse:
            for pair in scores:
                pair[1] = max_priority
        return None
    for pair in scores:
        s = max_priority * pair[1] // max_count
        pair[1] = max_priority - s if reverse else s
    return None


def default_normalize_score_array(max_priority: int, reverse: bool, scores):
    """default_normalize_score over an int64 array; returns the normalized array."""
    max_count = max(0, int(scores.max())) if len(scores) else 0
    if max_count == 0:
        return np.full(len(scores), max_priority, np.int64) if reverse else scores.copy()
    s = max_priority * scores // max_count
    return max_priority - s if reverse else s


def go_round(x: float) -> int:
    """Go's math.Round: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def tdiv(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def find_untolerated_taint(taints, tolerations):
    """helper.FindMatchingUntoleratedTaint for NoSchedule/NoExecute: the first such taint not tolerated, or None."""
    for taint in taints:
        if taint.effect != "NoSchedule" and taint.effect != "NoExecute":
            continue
        for t in tolerations:
            if t.tolerates(taint):
                break
        else:
            return taint
    return None
