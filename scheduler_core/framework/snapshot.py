"""Snapshot of the cluster a cycle sees: NodeInfos in node-tree order, and the other objects."""
from __future__ import annotations

import copy

from .node_table import NodeTable


class ClusterObjects:
    """Non-node, non-pod objects that plugins read (the informers' listers), as raw API dicts."""

    def __init__(self, namespaces=(), services=(), replicasets=(), statefulsets=(), replication_controllers=(),
                 persistent_volumes=(), persistent_volume_claims=(), storage_classes=(), csi_nodes=(),
                 csi_drivers=(), pod_disruption_budgets=(), device_classes=(), resource_slices=(),
                 resource_claims=(), resource_claim_templates=(), csi_storage_capacities=(), volume_attachments=(),
                 pod_groups=(), workloads=()):
        self.namespace_labels = {}
        for ns in namespaces:
            meta = ns.get("metadata") or {}
            labels = dict(meta.get("labels") or {})
            labels.setdefault("kubernetes.io/metadata.name", meta.get("name", ""))
            self.namespace_labels[meta.get("name", "")] = labels
        self.services = list(services)
        self.replicasets = list(replicasets)
        self.statefulsets = list(statefulsets)
        self.replication_controllers = list(replication_controllers)
        self.persistent_volumes = {pv["metadata"]["name"]: pv for pv in persistent_volumes}
        self.persistent_volume_claims = {
            f'{c["metadata"].get("namespace") or "default"}/{c["metadata"]["name"]}': c
            for c in persistent_volume_claims}
        self.storage_classes = {sc["metadata"]["name"]: sc for sc in storage_classes}
        self.csi_nodes = {cn["metadata"]["name"]: cn for cn in csi_nodes}
        self.csi_drivers = {d["metadata"]["name"]: d for d in csi_drivers}
        self.csi_storage_capacities = list(csi_storage_capacities)
        self.volume_attachments = {va["metadata"]["name"]: va for va in volume_attachments}
        self.pod_disruption_budgets = list(pod_disruption_budgets)
        # resource.k8s.io/v1 (DynamicResources)
        self.device_classes = {c["metadata"]["name"]: c for c in device_classes}
        self.resource_slices = {s["metadata"]["name"]: s for s in resource_slices}
        self.resource_claims = {
            f'{c["metadata"].get("namespace") or "default"}/{c["metadata"]["name"]}': c for c in resource_claims}
        self.resource_claim_templates = {
            f'{t["metadata"].get("namespace") or "default"}/{t["metadata"]["name"]}': t
            for t in resource_claim_templates}
        # scheduling.k8s.io/v1alpha2 (GenericWorkload)
        self.pod_groups = {f'{g["metadata"].get("namespace") or "default"}/{g["metadata"]["name"]}': g
                           for g in pod_groups}
        self.workloads = {f'{w["metadata"].get("namespace") or "default"}/{w["metadata"]["name"]}': w
                          for w in workloads}


class Snapshot:
    """The view one cycle sees: NodeInfos in node-tree order, by name, and their NodeTable.

    A standalone snapshot is built from a list (``Snapshot(node_infos, objects)``). The scheduler's
    snapshot is kept by ``Cache.update_snapshot``, which copies only the NodeInfos that changed since
    the last cycle into the existing objects and installs a new node list only when nodes came or went.
    kube's lists of nodes with affinity pods and its used-PVC set are not kept: the plugins that read
    them count from the pod indexes (framework.pod_index) or the NodeInfos instead.
    """

    def __init__(self, node_infos=(), objects: ClusterObjects | None = None, first_image_size: bool = False):
        self.node_infos = list(node_infos)
        self.objects = objects or ClusterObjects()
        # one size per image name, the first node's, as kube-scheduler's cache keeps it (versions:
        # image-size-of-first-node); otherwise each node's own size, as kube's NewSnapshot
        self.first_image_size = first_image_size
        self.generation = 0
        self._table = None
        self._dirty = set()
        self._owner = id(self)  # a copy.copy() of the snapshot does not own its NodeInfos' change hooks
        self.refresh()

    def refresh(self):
        """Recompute indexes and image states after the node list or pods changed."""
        self.by_name = {ni.name: ni for ni in self.node_infos}
        self.set_node_list(self.node_infos)
        self._rebuild_image_states()

    def set_node_list(self, node_infos):
        """Install a new ordered node list (its NodeInfos' indexes follow it; the NodeTable is rebuilt)."""
        self.node_infos = node_infos
        self._table = None
        for i, ni in enumerate(node_infos):
            ni.index = i

    @property
    def have_pods_with_affinity(self) -> list:
        """NodeInfos with pods that have (anti-)affinity terms, in node order."""
        return [ni for ni in self.node_infos if ni.pods_with_affinity]

    @property
    def have_pods_with_required_anti_affinity(self) -> list:
        """NodeInfos with pods that have required anti-affinity terms, in node order."""
        return [ni for ni in self.node_infos if ni.pods_with_required_anti_affinity]

    def _rebuild_image_states(self):
        counts, sizes = {}, {}
        for ni in self.node_infos:
            seen = set()
            for names, size in ni.node.images:
                for name in names:
                    sizes.setdefault(name, size)
                    if name not in seen:
                        seen.add(name)
                        counts[name] = counts.get(name, 0) + 1
        for ni in self.node_infos:
            states = {}
            for names, size in ni.node.images:
                for name in names:
                    states[name] = (sizes[name] if self.first_image_size else size, counts[name])
            ni.image_states = states

    def variant(self, replace=None, add=None) -> "Snapshot":
        """A what-if copy: these NodeInfos with some replaced (``{name: NodeInfo}``, same names) and/or one appended.

        Its NodeTable, pod indexes included, is this snapshot's with only the replaced rows re-read (built afresh
        when a node is appended). The copy is for immediate use: it does not follow later changes of this one.
        """
        snap = copy.copy(self)
        infos = list(self.node_infos)
        by_name = dict(self.by_name)
        rows = []
        for name, ni in (replace or {}).items():
            i = self.by_name[name].index   # a NodeInfo's index is its position in its snapshot's list
            infos[i] = by_name[name] = ni
            ni.index = i
            rows.append(i)
        if add is not None:
            add.index = len(infos)
            infos.append(add)
            by_name[add.name] = add
        # the shared NodeInfos keep their positions, so their indexes stay as they are
        snap.node_infos, snap.by_name, snap._table = infos, by_name, None
        if add is None and self._owner == id(self):
            snap._table = self.table().derived(infos, sorted(rows))
        return snap

    def table(self) -> NodeTable:
        """The NodeTable of node_infos, with the rows changed since the last call re-read.

        The snapshot's NodeInfos report their changes (``NodeInfo.dirty``). A copy (``variant``, which shares
        NodeInfos with the original) has the table it was made with, or builds a fresh one on every call.
        """
        t = self._table
        if self._owner != id(self):
            return t if t is not None else NodeTable(self.node_infos)
        dirty = self._dirty
        if t is None:
            t = self._table = NodeTable(self.node_infos)
            for ni in self.node_infos:
                ni.dirty = dirty
            dirty.clear()
        elif dirty:
            n = t.n
            t.refresh([i for i in dirty if i < n])
            dirty.clear()
        return t

    def get(self, name: str):
        ni = self.by_name.get(name)
        return ni if ni is not None and ni.node is not None else None

    def num_nodes(self) -> int:
        return len(self.node_infos)
