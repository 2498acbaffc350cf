"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate the unschedulable taint."""
import numpy as np

from ...framework.interface import FilterPlugin
from ...framework.status import Code, Status
from ...objects import Taint, tolerates_taint
from .. import names

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(FilterPlugin):
    name = names.NODE_UNSCHEDULABLE
    filter_depends_on = "node"

    def filter(self, state, pod, node_info):
        if not node_info.node.unschedulable:
            return None
        if tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_batch(self, state, pod, table, rows):
        """Filter over NodeTable rows: cordoned rows fail unless the pod tolerates the taint."""
        if tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):
            return np.zeros(len(rows), bool)
        return table.unschedulable[rows]

    def filter_batch_status(self, state, pod):
        """Every rejection has the same status."""
        return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,)

    def events_to_register(self):
        return (("Node", ("Add", "UpdateNodeTaint")),)
