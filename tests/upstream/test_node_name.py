"""kube's nodename/node_name_test.go, TestNodeName, case by case."""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.nodename import ERR_REASON, NodeName

from .plugin_cases import SUCCESS, make_node, make_pod, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/nodename/node_name_test.go"
UPSTREAM_VERSION = "v1.30 (commit 96a58e4b: New(ctx, nil, nil), st.MakePod builders)"
UPSTREAM_CASES = 3

CASES = [
    ("no host specified", make_pod(), make_node(), SUCCESS),
    ("host matches", make_pod().node("foo"), make_node().name("foo"), SUCCESS),
    ("host doesn't match", make_pod().node("bar"), make_node().name("foo"),
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON])),
]


@pytest.mark.parametrize("pod, node, want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_node_name(pod, node, want):
    got = NodeName.new(None, None).filter(None, pod.obj(), node_info(node.obj()))
    assert status_tuple(got) == want
