"""NodeName: a pod with spec.nodeName fits only that node."""
from ...framework.interface import FilterPlugin
from ...framework.status import Code, Status
from .. import names

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin):
    name = names.NODE_NAME

    def filter(self, state, pod, node_info):
        if pod.node_name and pod.node_name != node_info.name:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None

    def events_to_register(self):
        return (("Node", ("Add", "Update")),)
