"""kube's pkg/scheduler/backend/queue/backoff_queue_test.go (v1.36.2): the backoff time by unschedulable or
consecutive error count, its cache and alignment, which pods leave the two heaps when their backoff ends, and the
ordering by priority within a window with SchedulerPopFromBackoffQ.

Times are nanoseconds; the fake clock starts on a whole second (``START``), as upstream aligns its clock with the
ordering window.
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.objects import Pod
from scheduler_core.queue import ZERO_TIME, PriorityQueue, QueuedPodInfo

UPSTREAM = "pkg/scheduler/backend/queue/backoff_queue_test.go"
UPSTREAM_VERSION = "v1.36.2 (openshift/microshift deps/github.com/openshift/kubernetes)"
UPSTREAM_CASES = 24

SECOND = 1_000_000_000
MS = 1_000_000
START = 1000 * SECOND
# 2023-10-01T00:00:00Z in nanoseconds since the Unix epoch (a whole second, so alignment keeps it).
OCT_1 = 1_696_118_400 * SECOND


def make_pod(name, priority=0):
    return Pod({"metadata": {"name": name, "namespace": "", "uid": name}, "spec": {"priority": priority}})


def priority_less(a, b):
    """PrioritySort.Less (upstream's newDefaultQueueSort)."""
    pa, pb = a.pod.priority, b.pod.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def backoff_queue(initial_ns, max_ns, pop_from_backoff=True, clock=None):
    """newBackoffQueue: 1.36's backoffQ with these durations."""
    return PriorityQueue(priority_less, clock=clock or FakeClock(START / SECOND),
                         initial_backoff=Fraction(initial_ns, SECOND), max_backoff=Fraction(max_ns, SECOND),
                         queueing_hints=True, pop_from_backoff=pop_from_backoff, backoff_by_counts=True)


def pod_info(name, timestamp, unschedulable_count=0, consecutive_errors_count=0, plugins=(), priority=0,
             backoff_expiration=None):
    pinfo = QueuedPodInfo(make_pod(name, priority), timestamp)
    pinfo.unschedulable_count = unschedulable_count
    pinfo.consecutive_errors_count = consecutive_errors_count
    pinfo.unschedulable_plugins = set(plugins)
    pinfo.backoff_expiration = backoff_expiration
    return pinfo


# -- TestBackoffQueue_getBackoffTime ------------------------------------------------------------------
GET_BACKOFF_TIME = {
    "no backoff": (SECOND, 32 * SECOND, dict(unschedulable_count=0), ZERO_TIME),
    "backoff is returned from the cache": (SECOND, 32 * SECOND, dict(unschedulable_count=1,
                                                                     backoff_expiration=OCT_1 + 1), OCT_1 + 1),
    "backoff by UnschedulableCount": (SECOND, 32 * SECOND, dict(unschedulable_count=16), OCT_1 + 32 * SECOND),
    "backoff is calculated with ConsecutiveErrorsCount": (SECOND, 32 * SECOND, dict(
        unschedulable_count=5, consecutive_errors_count=16), OCT_1 + 32 * SECOND),
    "zero maxBackoffDuration means no backoff": (0, 0, dict(unschedulable_count=16), ZERO_TIME),
}


@pytest.mark.parametrize("name", list(GET_BACKOFF_TIME))
def test_backoff_queue_get_backoff_time(name):
    initial, maximum, fields, want = GET_BACKOFF_TIME[name]
    q = backoff_queue(initial, maximum)
    assert q.backoff_expiry_ns(pod_info("p", OCT_1, **fields)) == want


# -- TestBackoffQueue_calculateBackoffDuration -----------------------------------------------------------
BACKOFF_DURATION = {
    "no backoff": (1, 32, 0, ZERO_TIME),
    "normal": (3, 1000, 5, 48),
    "hitting max backoff duration": (1, 32, 16, 32),
    "overflow_32bit": (1, 2**31 - 1, 32, 2**31 - 1),
    "overflow_64bit": (1, 2**63 - 1, 64, 2**63 - 1),
}


@pytest.mark.parametrize("name", list(BACKOFF_DURATION))
def test_backoff_queue_calculate_backoff_duration(name):
    """calculateBackoffDuration(count); a count of 0 has no backoff at all (getBackoffTime's zero time)."""
    initial, maximum, count, want = BACKOFF_DURATION[name]
    q = backoff_queue(initial, maximum, pop_from_backoff=False)
    pinfo = pod_info("p", 0, unschedulable_count=count)
    if want == ZERO_TIME:
        assert q.backoff_expiry_ns(pinfo) == ZERO_TIME
    else:
        assert q.backoff_duration_ns(pinfo) == want


# -- TestBackoffQueue_popAllBackoffCompleted ----------------------------------------------------------------
def _pop_all_pods():
    return {
        "pod0": pod_info("pod0", START - 2 * SECOND, unschedulable_count=1, plugins=("plugin",)),
        "pod1": pod_info("pod1", START + SECOND, unschedulable_count=1, plugins=("plugin",)),
        "pod2": pod_info("pod2", START - 2 * SECOND, consecutive_errors_count=1),
        "pod3": pod_info("pod3", START + SECOND, consecutive_errors_count=1),
    }


POP_ALL = {
    "Both queues empty, no pods moved to activeQ": ([], []),
    "Pods only in backoffQ, some pods moved to activeQ": (["pod0", "pod1"], ["pod0"]),
    "Pods only in errorBackoffQ, some pods moved to activeQ": (["pod2", "pod3"], ["pod2"]),
    "Pods in both queues, some pods moved to activeQ": (["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"]),
    "Pods in both queues, all pods moved to activeQ": (["pod0", "pod2"], ["pod0", "pod2"]),
    "Pods in both queues, no pods moved to activeQ": (["pod1", "pod3"], []),
}


@pytest.mark.parametrize("pop_from_backoff", [True, False])
@pytest.mark.parametrize("name", list(POP_ALL))
def test_backoff_queue_pop_all_backoff_completed(name, pop_from_backoff):
    in_backoff, want = POP_ALL[name]
    q = backoff_queue(SECOND, 10 * SECOND, pop_from_backoff)
    pods = _pop_all_pods()
    for podname in in_backoff:
        q.add_to_backoff_q(pods[podname])
    got = [p.pod.name for p in q.pop_all_backoff_completed()]
    assert got == want
    assert q.num_backoff() == len(in_backoff) - len(want)


# -- TestBackoffQueueOrdering ---------------------------------------------------------------------------------
ORDERING = {
    "Pods with the same window are ordered by priority if PopFromBackoffQ is enabled":
        (True, ["pod5", "pod4", "pod2", "pod3"]),
    "Pods priority doesn't matter if PopFromBackoffQ is disabled": (False, ["pod5", "pod3", "pod4", "pod2"]),
}


@pytest.mark.parametrize("name", list(ORDERING))
def test_backoff_queue_ordering(name):
    pop_from_backoff, want = ORDERING[name]
    q = backoff_queue(SECOND, 10 * SECOND, pop_from_backoff)
    for podname, offset, priority in (("pod0", 0, 1), ("pod1", -SECOND, 1), ("pod2", -2 * SECOND + MS, 2),
                                      ("pod3", -2 * SECOND, 1), ("pod4", -2 * SECOND, 2), ("pod5", -3 * SECOND, 1)):
        pinfo = pod_info(podname, START + offset, unschedulable_count=1, plugins=("plugin",), priority=priority)
        pinfo.attempts = 1
        q.add_to_backoff_q(pinfo)
    assert [p.pod.name for p in q.pop_all_backoff_completed()] == want
