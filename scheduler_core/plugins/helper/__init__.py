"""Helpers shared by plugins (framework/plugins/helper)."""
from __future__ import annotations

import math


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


def go_round(x: float) -> int:
    """Go's math.Round: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def tdiv(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q
