"""The scheduler cache (internal/cache): nodes, bound and assumed pods, NodeInfo aggregates, the node tree
and the per-cycle snapshot.

NodeInfos here are the cache's own; ``update_snapshot`` copies the ones that changed since the last cycle
(by generation, most recently changed first) into the snapshot's NodeInfo objects, which keep their
identity, and installs a new node list only when a node was added or removed. Bound pods of every
scheduler enter the cache.
"""
from __future__ import annotations

from .clock import Clock
from .framework.node_info import NodeInfo, next_generation
from .framework.podgroup_state import PodGroupStates

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


class CacheError(Exception):
    """An inconsistent cache operation; the text is kube's."""


def zone_key(node) -> str:
    """utilnode.GetZoneKey: region + ":\\x00:" + zone (beta labels first), or "" with neither."""
    labels = node.labels
    zone = labels[BETA_ZONE] if BETA_ZONE in labels else labels.get(ZONE, "")
    region = labels[BETA_REGION] if BETA_REGION in labels else labels.get(REGION, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


class NodeTree:
    """Node names per zone; ``list()`` interleaves the zones (in order of first insertion) round robin."""

    def __init__(self):
        self.tree = {}
        self.zones = []
        self.num_nodes = 0

    def add_node(self, node) -> None:
        zone = zone_key(node)
        names = self.tree.get(zone)
        if names is None:
            self.zones.append(zone)
            self.tree[zone] = [node.name]
        elif node.name in names:
            return
        else:
            names.append(node.name)
        self.num_nodes += 1

    def remove_node(self, node) -> None:
        zone = zone_key(node)
        names = self.tree.get(zone)
        if names is not None and node.name in names:
            names.remove(node.name)
            if not names:
                del self.tree[zone]
                self.zones.remove(zone)
            self.num_nodes -= 1
            return
        raise CacheError(f'node "{node.name}" in group "{zone}" was not found')

    def update_node(self, old, new) -> None:
        if old is not None and zone_key(old) == zone_key(new):
            return
        if old is not None:
            try:
                self.remove_node(old)
            except CacheError:
                pass
        self.add_node(new)

    def list(self) -> list:
        out = []
        index = 0
        zones = [self.tree[z] for z in self.zones]
        while len(out) < self.num_nodes:
            for names in zones:
                if index < len(names):
                    out.append(names[index])
            index += 1
        return out


class ImageStateSummary:
    """One image: its size and the nodes that have it (the cache's imageStates entry)."""

    __slots__ = ("size", "nodes")

    def __init__(self, size: int):
        self.size = size
        self.nodes = set()


class _PodState:
    __slots__ = ("pod", "deadline", "binding_finished")

    def __init__(self, pod):
        self.pod = pod
        self.deadline = None
        self.binding_finished = False


def _copy_into(dst: NodeInfo, src: NodeInfo) -> None:
    """NodeInfo.Snapshot() written into an existing object (the snapshot keeps its pointers)."""
    dst.copy_from(src)
    dst.image_states = {name: (s.size, len(s.nodes)) for name, s in src.image_states.items()}
    dst.mark_changed()


class Cache:
    """Nodes and pods as the scheduler knows them, including pods assumed onto a node before binding.

    ``ttl`` (seconds) expires assumed pods whose binding finished but whose add event never came;
    0 (kube's default) means never. ``clock`` gives the time for those deadlines. With ``pod_groups`` (the
    GenericWorkload gate) the cache also keeps ``pod_group_states``: the members of each pod group, assigned,
    assumed and (told by the scheduler's event handlers) unscheduled.
    """

    def __init__(self, clock: Clock | None = None, ttl: float = 0.0, pod_groups: bool = False):
        self.clock = clock or Clock()
        self.ttl = ttl
        self.pod_group_states = PodGroupStates() if pod_groups else None
        self._nodes = {}        # name -> NodeInfo, most recently changed last (kube's linked list)
        self._tree = NodeTree()
        self._pod_states = {}   # pod uid -> _PodState
        self._assumed = set()   # pod uids
        self._image_states = {}  # image name -> ImageStateSummary

    # -- node info bookkeeping ---------------------------------------------------------------
    def _touch(self, name: str) -> NodeInfo:
        """The NodeInfo for a node name (created if needed), moved to the most-recent end."""
        ni = self._nodes.pop(name, None)
        if ni is None:
            ni = NodeInfo()
            ni.generation = next_generation()
        self._nodes[name] = ni
        return ni

    def _add_node_image_states(self, node, ni: NodeInfo) -> None:
        states = {}
        for names, size in node.images:
            for name in names:
                summary = self._image_states.get(name)
                if summary is None:
                    summary = self._image_states[name] = ImageStateSummary(size)
                summary.nodes.add(node.name)
                states.setdefault(name, summary)
        ni.image_states = states

    def _remove_node_image_states(self, node) -> None:
        if node is None:
            return
        for names, _size in node.images:
            for name in names:
                summary = self._image_states.get(name)
                if summary is not None:
                    summary.nodes.discard(node.name)
                    if not summary.nodes:
                        del self._image_states[name]

    # -- nodes -------------------------------------------------------------------------------
    def add_node(self, node) -> NodeInfo:
        """AddNode. Returns the cache's NodeInfo (read it, do not keep it)."""
        ni = self._nodes.get(node.name)
        if ni is not None:
            self._remove_node_image_states(ni.node)
        ni = self._touch(node.name)
        self._tree.add_node(node)
        self._add_node_image_states(node, ni)
        self._set_node(ni, node)
        return ni

    def update_node(self, old, new) -> NodeInfo:
        ni = self._nodes.get(new.name)
        if ni is None:
            self._tree.add_node(new)
        else:
            self._remove_node_image_states(ni.node)
        ni = self._touch(new.name)
        self._tree.update_node(old, new)
        self._add_node_image_states(new, ni)
        self._set_node(ni, new)
        return ni

    def remove_node(self, node) -> None:
        """RemoveNode: the NodeInfo stays (as a ghost, skipped by snapshots) while pods remain on it."""
        ni = self._nodes.get(node.name)
        if ni is None:
            raise CacheError(f"node {node.name} is not found")
        ni.node = None
        ni.generation = next_generation()
        if not ni.pods:
            del self._nodes[node.name]
        else:
            self._touch(node.name)
        self._tree.remove_node(node)
        self._remove_node_image_states(node)

    @staticmethod
    def _set_node(ni: NodeInfo, node) -> None:
        ni.node = node
        ni.name = node.name
        ni.generation = next_generation()

    # -- pods --------------------------------------------------------------------------------
    def _add_pod(self, pod, assumed: bool) -> None:
        ni = self._touch(pod.node_name)
        ni.add_pod(pod)
        self._pod_states[pod.uid] = _PodState(pod)
        if assumed:
            self._assumed.add(pod.uid)
        if self._is_pod_group_member(pod):
            if assumed:
                self.pod_group_states.assume(pod)
            else:
                self.pod_group_states.add(pod)

    def _remove_pod(self, pod, forget: bool = False) -> None:
        ni = self._nodes.get(pod.node_name)
        if ni is not None:
            if not ni.remove_pod(pod):
                raise CacheError(f"no corresponding pod {pod.name} in pods of node {pod.node_name}")
            if not ni.pods and ni.node is None:
                del self._nodes[pod.node_name]
            else:
                self._touch(pod.node_name)
        self._pod_states.pop(pod.uid, None)
        self._assumed.discard(pod.uid)
        if self._is_pod_group_member(pod):
            if forget:
                self.pod_group_states.forget(pod)
            else:
                self.pod_group_states.remove(pod)

    def assume_pod(self, pod) -> None:
        """AssumePod: ``pod`` has spec.nodeName set to the chosen node."""
        if pod.uid in self._pod_states:
            raise CacheError(f"pod {pod.uid}({pod.key}) is in the cache, so can't be assumed")
        self._add_pod(pod, assumed=True)

    def finish_binding(self, pod, now: float | None = None) -> None:
        """The binding call returned: an assumed pod may now expire (after ``ttl``)."""
        state = self._pod_states.get(pod.uid)
        if state is not None and pod.uid in self._assumed:
            now = self.clock.now() if now is None else now
            state.deadline = now + self.ttl if self.ttl else None
            state.binding_finished = True

    def forget_pod(self, pod) -> None:
        state = self._pod_states.get(pod.uid)
        if state is not None and state.pod.node_name != pod.node_name:
            raise CacheError(f"pod {pod.uid}({pod.key}) was assumed on {pod.node_name} but assigned to "
                             f"{state.pod.node_name}")
        if state is not None and pod.uid in self._assumed:
            self._remove_pod(pod, forget=True)
            return
        raise CacheError(f"pod {pod.uid}({pod.key}) wasn't assumed so cannot be forgotten")

    def add_pod(self, pod) -> None:
        """A bound pod was observed: confirms an assumed pod, re-adds an expired one, or adds a new one."""
        state = self._pod_states.get(pod.uid)
        if state is not None and pod.uid in self._assumed:
            self._remove_pod(state.pod)
            self._add_pod(pod, assumed=False)
        elif state is None:
            self._add_pod(pod, assumed=False)
        else:
            raise CacheError(f"pod {pod.uid}({pod.key}) was already in added state")

    def update_pod(self, old, new) -> None:
        state = self._pod_states.get(old.uid)
        if state is None:
            raise CacheError(f"pod {old.uid}({old.key}) is not added to scheduler cache, so cannot be updated")
        if old.uid in self._assumed:
            raise CacheError(f"assumed pod {old.uid}({old.key}) should not be updated")
        if state.pod.node_name != new.node_name:
            raise CacheError(f"pod {old.uid}({old.key}) updated on a different node than previously added to; "
                             "scheduler cache is corrupted")
        self._remove_pod(state.pod)
        self._add_pod(new, assumed=False)

    def remove_pod(self, pod) -> None:
        state = self._pod_states.get(pod.uid)
        if state is None:
            raise CacheError(f"pod {pod.uid}({pod.key}) is not found in scheduler cache, so cannot be removed from it")
        if state.pod.node_name != pod.node_name and pod.node_name:
            raise CacheError(f"pod {pod.uid}({pod.key}) was added to {state.pod.node_name} but removed from "
                             f"{pod.node_name}; scheduler cache is corrupted")
        self._remove_pod(state.pod)

    # -- pod groups (GenericWorkload) --------------------------------------------------------
    def _is_pod_group_member(self, pod) -> bool:
        return self.pod_group_states is not None and pod.pod_group is not None

    def add_pod_group_member(self, pod) -> None:
        """AddPodGroupMember: an unscheduled pod of a pod group (the queue's add event)."""
        if self._is_pod_group_member(pod):
            self.pod_group_states.add(pod)

    def update_pod_group_member(self, old, new) -> None:
        if self._is_pod_group_member(new):
            self.pod_group_states.update(old, new)

    def remove_pod_group_member(self, pod) -> None:
        if self._is_pod_group_member(pod):
            self.pod_group_states.remove(pod)

    def is_assumed_pod(self, pod) -> bool:
        return pod.uid in self._assumed

    def get_pod(self, pod):
        """The cached version of a pod (None when absent)."""
        state = self._pod_states.get(pod.uid)
        return state.pod if state is not None else None

    def cleanup_assumed_pods(self, now: float | None = None) -> list:
        """Expire assumed pods whose binding finished more than ``ttl`` ago. Returns the expired pods."""
        if not self.ttl:
            return []
        now = self.clock.now() if now is None else now
        expired = []
        for uid in list(self._assumed):
            state = self._pod_states[uid]
            if state.binding_finished and state.deadline is not None and now > state.deadline:
                self._remove_pod(state.pod)
                expired.append(state.pod)
        return expired

    # -- introspection -----------------------------------------------------------------------
    def node_count(self) -> int:
        return len(self._nodes)

    def pod_count(self) -> int:
        return sum(len(ni.pods) for ni in self._nodes.values())

    def assumed_pods(self) -> list:
        return [self._pod_states[uid].pod for uid in self._assumed]

    def node_info(self, name: str):
        """The cache's NodeInfo for a node (None when unknown)."""
        return self._nodes.get(name)

    def node_names(self) -> list:
        """Node names in the node tree's order (what a fresh snapshot lists)."""
        return self._tree.list()

    # -- snapshot ----------------------------------------------------------------------------
    def update_snapshot(self, snap) -> None:
        """UpdateSnapshot: bring ``snap`` up to date, copying only NodeInfos changed since its generation."""
        smap = snap.by_name
        gen = snap.generation
        update_all = False
        nodes = self._nodes
        for name in reversed(nodes):
            ni = nodes[name]
            if ni.generation <= gen:
                break
            if ni.node is None:
                continue
            existing = smap.get(name)
            if existing is None:
                update_all = True
                existing = smap[name] = NodeInfo()
            _copy_into(existing, ni)
        if nodes:
            snap.generation = nodes[next(reversed(nodes))].generation
        if len(smap) > self._tree.num_nodes:
            for name in [n for n in smap if nodes.get(n) is None or nodes[n].node is None]:
                del smap[name]
            update_all = True
        if update_all:
            snap.set_node_list([smap[name] for name in self._tree.list()])
