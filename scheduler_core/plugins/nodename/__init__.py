"""NodeName: a pod with spec.nodeName fits only that node."""
import numpy as np

from ...framework.handle import queueing_hints_of
from ...framework.interface import FilterPlugin
from ...framework.status import Code, Status
from ...framework import signers
from .. import names

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin):
    name = names.NODE_NAME
    filter_depends_on = "node"

    def __init__(self, queueing_hints: bool = False):
        self.queueing_hints = queueing_hints

    @classmethod
    def new(cls, args, handle):
        return cls(queueing_hints_of(handle))

    def filter(self, state, pod, node_info):
        if pod.node_name and pod.node_name != node_info.name:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None

    def filter_batch(self, state, pod, table, rows):
        """Filter over NodeTable rows: every row but spec.nodeName's fails."""
        if not pod.node_name:
            return np.zeros(len(rows), bool)
        return rows != table.row_of(pod.node_name)

    def filter_batch_status(self, state, pod):
        """Every rejection has the same status."""
        return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,)

    def events_to_register(self):
        return (("Node", ("Add",)),) if self.queueing_hints else (("Node", ("Add", "Update")),)

    def sign_pod(self, pod):
        """Feasibility depends on spec.nodeName."""
        return [(signers.NODE_NAME, (pod.raw.get("spec") or {}).get("nodeName") or "")], None
