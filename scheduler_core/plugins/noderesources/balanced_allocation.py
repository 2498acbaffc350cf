"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay even."""
from __future__ import annotations

import math

from ...framework.interface import PreScorePlugin, ScorePlugin
from .. import names
from .resource_allocation import ResourceAllocationScorer

PRE_SCORE_KEY = "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION


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


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION

    def __init__(self, args: dict):
        resources = (args or {}).get("resources") or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        self.scorer = ResourceAllocationScorer(self.name, [(r["name"], r.get("weight") or 1) for r in resources],
                                               balanced_score, use_requested=True)

    @classmethod
    def new(cls, args, handle):
        return cls(args)

    def pre_score(self, state, pod, node_infos):
        state.write(PRE_SCORE_KEY, self.scorer.pod_requests(pod))
        return None

    def score(self, state, pod, node_info):
        reqs = state.get(PRE_SCORE_KEY)
        if reqs is None:
            reqs = self.scorer.pod_requests(pod)
        return self.scorer.score(pod, node_info, reqs), None

    def score_extensions(self):
        return None

    def events_to_register(self):
        return (("Pod", ("Delete",)), ("Node", ("Add", "Update")))
