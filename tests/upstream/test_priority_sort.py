"""kube's queuesort/priority_sort_test.go, TestLess, case by case (QueuedPodInfo timestamps in ns here)."""
import pytest

from scheduler_core.plugins.queuesort import PrioritySort
from scheduler_core.queue import QueuedPodInfo

from .plugin_cases import make_pod

UPSTREAM = "pkg/scheduler/framework/plugins/queuesort/priority_sort_test.go"
UPSTREAM_VERSION = "v1.34+ era (commit 008b3652); TestLess is unchanged from v1.30"
UPSTREAM_CASES = 4

LOW, HIGH = 10, 100
T1 = 1_700_000_000_000_000_000
T2 = T1 + 1_000_000_000   # t1 + 1s


def queued(priority, timestamp=0):
    return QueuedPodInfo(make_pod().priority(priority).obj(), timestamp)


CASES = [
    ("p1.priority less than p2.priority", (LOW,), (HIGH,), False),
    ("p1.priority greater than p2.priority", (HIGH,), (LOW,), True),
    ("equal priority. p1 is added to schedulingQ earlier than p2", (HIGH, T1), (HIGH, T2), True),
    ("equal priority. p2 is added to schedulingQ earlier than p1", (HIGH, T2), (HIGH, T1), False),
]


@pytest.mark.parametrize("p1, p2, want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_less(p1, p2, want):
    assert PrioritySort().less(queued(*p1), queued(*p2)) is want
