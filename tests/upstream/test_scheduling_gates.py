"""kube's schedulinggates/scheduling_gates_test.go, TestPreEnqueue, case by case."""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.schedulinggates import SchedulingGates

from .plugin_cases import SUCCESS, make_pod, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go"
UPSTREAM_VERSION = ("v1.34+ era (commit 008b3652: fwk package); TestPreEnqueue's two cases are unchanged from "
                    "v1.30 (the gate is GA there)")
UPSTREAM_CASES = 2
UPSTREAM_NOT_TRANSLATED = {
    "TestIsSchedulableAfterUpdateTargetPodSchedulingGatesEliminated": "1 queueing-hint case; SchedulerQueueingHints "
    "is off in v1.30 and scheduler_core has no queueing hints",
}


def gated(*gates):
    w = make_pod().name("p")
    w.raw["spec"]["schedulingGates"] = [{"name": g} for g in gates]
    return w


CASES = [
    ("pod does not carry scheduling gates", make_pod().name("p"), SUCCESS),
    ("pod carries scheduling gates", gated("foo", "bar"),
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["waiting for scheduling gates: [foo bar]"])),
]


@pytest.mark.parametrize("pod, want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pre_enqueue(pod, want):
    assert status_tuple(SchedulingGates.new(None, None).pre_enqueue(pod.obj())) == want
