"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate the unschedulable taint."""
from ...framework.interface import FilterPlugin
from ...framework.status import Code, Status
from ...objects import Taint, tolerates_taint
from .. import names

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(FilterPlugin):
    name = names.NODE_UNSCHEDULABLE

    def filter(self, state, pod, node_info):
        if not node_info.node.unschedulable:
            return None
        if tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def events_to_register(self):
        return (("Node", ("Add", "UpdateNodeTaint")),)
