"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate the unschedulable taint."""
import numpy as np

from ...framework.handle import queueing_hints_of
from ...framework.interface import QUEUE, QUEUE_SKIP, FilterPlugin
from ...framework.status import Code, Status
from ...framework import signers
from ...objects import Taint, tolerates_taint
from .. import names

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(FilterPlugin):
    name = names.NODE_UNSCHEDULABLE
    filter_depends_on = "node"

    def __init__(self, queueing_hints: bool = False):
        self.queueing_hints = queueing_hints

    @classmethod
    def new(cls, args, handle):
        return cls(queueing_hints_of(handle))

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
        if not self.queueing_hints:
            return (("Node", ("Add", "UpdateNodeTaint")),)
        return (("Node", ("Add", "UpdateNodeTaint"), self.is_schedulable_after_node_change),
                ("Pod", ("UpdatePodToleration",), self.is_schedulable_after_pod_toleration_change))

    @staticmethod
    def is_schedulable_after_node_change(pod, old, new):
        """A node that is added schedulable, or stops being unschedulable."""
        if (old is not None and old.unschedulable and not new.unschedulable) or \
                (old is None and not new.unschedulable):
            return QUEUE
        return QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod, old, new):
        """The pod itself now tolerates the unschedulable taint."""
        if pod.uid == new.uid and tolerates_taint(new.tolerations, UNSCHEDULABLE_TAINT):
            return QUEUE
        return QUEUE_SKIP

    def sign_pod(self, pod):
        """Feasibility and scoring depend on the pod's tolerations."""
        return [(signers.TOLERATIONS, signers.tolerations(pod))], None
