"""TopologyPlacementGenerator (framework/plugins/topologyaware, 1.36 alpha, TopologyAwareWorkloadScheduling): the
placements of a pod group with a topology constraint are the domains of its key (one placement per value of the
label among the parent placement's nodes), or only the domain of the group's already scheduled pods."""
from __future__ import annotations

from ...framework.interface import Placement, PlacementGeneratePlugin
from ...framework.podgroup_state import PodGroupStateError
from ...framework.status import Status
from ...objects.workload import topology_key
from .. import names


class TopologyPlacementGenerator(PlacementGeneratePlugin):
    name = names.TOPOLOGY_PLACEMENT_GENERATOR

    def __init__(self, handle=None):
        self.handle = handle

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def generate_placements(self, state, pod_group, parent):
        namespace, name = pod_group
        group = self.handle.objects.pod_groups.get(f"{namespace}/{name}")
        if group is None:
            return None, Status.error(f'podgroup.scheduling.k8s.io "{name}" not found')
        key = topology_key(group)
        if key is None:
            return [parent], None
        try:
            scheduled = self.handle.pod_group_states.get(namespace, name).scheduled_pods()
        except PodGroupStateError as err:
            return None, Status.error(str(err))
        required = None
        if scheduled:
            required, err = self._scheduled_domain(key, scheduled)
            if err:
                return None, Status.error(f"cannot determine domain for already scheduled pods: {err}")
        domains = {}
        for ni in parent.nodes:
            domain = ni.node.labels.get(key)
            if domain is not None and (required is None or domain == required):
                domains.setdefault(domain, []).append(ni)
        return [Placement(domain, nodes) for domain, nodes in domains.items()], None

    def _scheduled_domain(self, key: str, pods):
        """(the one domain of the scheduled pods, None) or (None, kube's error text)."""
        domain = ""
        for pod in pods:
            ni = self.handle.snapshot.by_name.get(pod.node_name)
            if ni is None or ni.node is None:
                return None, f'getting node for pod {pod.key}: nodeinfo not found for node name "{pod.node_name}"'
            value = ni.node.labels.get(key)
            if value is None:
                return None, f"no topology domain found for pod {pod.key}"
            if domain and domain != value:
                return None, f"more than 1 domain found for pod group: {domain}, {value}"
            domain = value
        return domain, None
