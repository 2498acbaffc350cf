"""NominatedSums (the nominated pods' requests per NodeTable row, kept from the nominator's changes) against the
walk over every nominated node that it replaces, through random nominations, overrides and deletions."""
import random

import numpy as np
import pytest

from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.resource_filter import NominatedSums, _nominated_requests
from scheduler_core.queue import NominatingInfo
from tests.core.loop_fixtures import node, pod
from tests.core.test_queue import make_queue


def _same(kept, walked):
    if kept is None or kept is False or walked is None or walked is False:
        return kept is walked
    return np.array_equal(kept[0], walked[0]) and np.array_equal(kept[1], walked[1])


@pytest.mark.parametrize("seed", range(6))
def test_kept_sums_equal_the_walk_after_every_change(seed):
    rng = random.Random(seed)
    table = NodeTable([NodeInfo(node(f"n{i}")) for i in range(12)])
    q = make_queue()
    sums = NominatedSums(q.nominated_pods_for_node, q.nominated_node_names, q.nominated_node_of)
    q.nomination_listeners.append(sums.changed)
    pods = [pod(f"p{i}", cpu=f"{rng.randint(1, 900)}m", memory=f"{rng.randint(1, 64)}Mi",
                priority=rng.choice((0, 5, 10))) for i in range(30)]
    huge = pod("huge", cpu="1", memory=str(2**60), priority=5)
    for step in range(300):
        p = rng.choice(pods + [huge])
        action = rng.random()
        if action < 0.6:   # nominated to a node, some of them gone from the table
            q.add_nominated_pod(p, NominatingInfo("override", f"n{rng.randint(0, 13)}"))
        else:
            q.delete_nominated_pod_if_exists(p)
        for asking in rng.sample(pods + [huge], 4):
            assert _same(sums.for_pod(table, asking),
                         _nominated_requests(q.nominated_pods_for_node, q.nominated_node_names, asking, table)), \
                (step, asking.name)


def test_a_new_table_is_summed_afresh():
    q = make_queue()
    sums = NominatedSums(q.nominated_pods_for_node, q.nominated_node_names, q.nominated_node_of)
    q.nomination_listeners.append(sums.changed)
    small = NodeTable([NodeInfo(node("a"))])
    q.add_nominated_pod(pod("x", cpu="300m", priority=10), NominatingInfo("override", "b"))
    assert sums.for_pod(small, pod("y", priority=0)) is None   # "b" is not in this table
    bigger = NodeTable([NodeInfo(node("a")), NodeInfo(node("b"))])
    extra, count = sums.for_pod(bigger, pod("y", priority=0))
    assert extra[1].tolist()[0] == 300 and count.tolist() == [0, 1]
    assert sums.for_pod(bigger, pod("x", priority=10)) is None   # its own nomination is left out
