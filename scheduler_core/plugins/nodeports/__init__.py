"""NodePorts: a pod's host ports must be free on the node."""
from __future__ import annotations

from ...framework.handle import queueing_hints_of
from ...framework.interface import QUEUE, QUEUE_SKIP, FilterPlugin, PreFilterPlugin
from ...framework.status import Code, Status
from ...framework import signers
from .. import names

PRE_FILTER_KEY = "PreFilter" + names.NODE_PORTS
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
BIND_ALL_HOST_IP = "0.0.0.0"


def fits_ports(wanted, used_ports) -> bool:
    """No wanted (ip, protocol, port) conflicts with a used one (HostPortInfo.CheckConflict).

    ``0.0.0.0`` conflicts with the same protocol/port on any IP; a specific IP conflicts with
    itself and with ``0.0.0.0``. Wanted ports are not checked against each other.
    """
    if not used_ports:
        return True
    for ip, protocol, port in wanted:
        if ip == BIND_ALL_HOST_IP:
            for _ip, used_protocol, used_port in used_ports:
                if used_port == port and used_protocol == protocol:
                    return False
        elif (ip, protocol, port) in used_ports or (BIND_ALL_HOST_IP, protocol, port) in used_ports:
            return False
    return True


class NodePorts(PreFilterPlugin, FilterPlugin):
    """Host port conflicts; ports are (hostIP or 0.0.0.0, protocol or TCP, hostPort > 0) of regular containers."""

    name = names.NODE_PORTS

    def __init__(self, queueing_hints: bool = False):
        self.queueing_hints = queueing_hints

    @classmethod
    def new(cls, args, handle):
        return cls(queueing_hints_of(handle))

    def pre_filter(self, state, pod):
        if not pod.host_ports:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, pod.host_ports)
        return None, None

    def pre_filter_extensions(self):
        """None, as kube: the wanted ports do not depend on the other pods."""
        return None

    def filter(self, state, pod, node_info):
        wanted = state.get(PRE_FILTER_KEY)
        if wanted is None:
            return Status.error(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        if fits_ports(wanted, node_info.used_ports):
            return None
        return Status(Code.UNSCHEDULABLE, ERR_REASON)

    def events_to_register(self):
        if not self.queueing_hints:
            return (("Pod", ("Delete",)), ("Node", ("Add", "Update")))
        return (("Pod", ("Delete",), self.is_schedulable_after_pod_deleted), ("Node", ("Add",)))

    @staticmethod
    def is_schedulable_after_pod_deleted(pod, old, new):
        """A deleted pod that was bound or nominated and held a port the pod wants."""
        if not old.node_name and not old.nominated_node_name:
            return QUEUE_SKIP
        if not old.host_ports:
            return QUEUE_SKIP
        return QUEUE_SKIP if fits_ports(pod.host_ports, set(old.host_ports)) else QUEUE

    def sign_pod(self, pod):
        """Feasibility depends on the containers' host ports."""
        return [(signers.HOST_PORTS, signers.host_ports(pod))], None
