"""kube's nodeunschedulable/node_unschedulable_test.go, TestNodeUnschedulable, case by case."""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable

from .plugin_cases import SUCCESS, make_node, make_pod, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go"
UPSTREAM_VERSION = "v1.30 (commit b574b11f: New(ctx, nil, nil))"
UPSTREAM_CASES = 3
UPSTREAM_NOT_TRANSLATED = {
    "TestIsSchedulableAfterNodeChange": "6 queueing-hint cases; SchedulerQueueingHints is off in v1.30 and "
                                        "scheduler_core has no queueing hints"}

CASES = [
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", make_pod(),
     make_node().unschedulable(True), (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_UNSCHEDULABLE])),
    ("Schedule pod to normal node", make_pod(), make_node().unschedulable(False), SUCCESS),
    ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
     make_pod().toleration("node.kubernetes.io/unschedulable", effect="NoSchedule", operator=""),
     make_node().unschedulable(True), SUCCESS),
]


@pytest.mark.parametrize("pod, node, want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_node_unschedulable(pod, node, want):
    got = NodeUnschedulable.new(None, None).filter(None, pod.obj(), node_info(node.obj()))
    assert status_tuple(got) == want
