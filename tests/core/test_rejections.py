"""Rejections.counts: each Status's number of nodes, in the order of its first node, as a walk of the nodes
counts them (few statuses and many)."""
import random

import numpy as np
import pytest

from scheduler_core.framework.runtime import Rejections


def _walked(groups) -> list:
    counts = {}
    for g in groups:
        counts[g] = counts.get(g, 0) + 1
    return list(counts.items())


@pytest.mark.parametrize("distinct", [1, 2, 5, 40, 300])
def test_counts_follow_the_first_node_of_each_status(distinct):
    rng = random.Random(distinct)
    groups = [rng.randrange(distinct) for _ in range(800)]
    rej = Rejections([], [np.arange(800)], [np.array(groups, np.int64)], [object()] * distinct)
    assert rej.counts() == _walked(groups)


def test_no_rejected_node_counts_nothing():
    assert Rejections([], [], [], []).counts() == []
