"""NodeInfo: a node with the aggregates of the pods on it, kept incrementally (framework/types.go)."""
from __future__ import annotations

import itertools

_generations = itertools.count(1)


def next_generation() -> int:
    """A number larger than every generation handed out before (kube's global nextGeneration)."""
    return next(_generations)


class NodeInfo:
    """A node plus its pods and their summed requests, ports and claims."""

    __slots__ = ("node", "name", "pods", "pods_with_affinity", "pods_with_required_anti_affinity",
                 "requested", "nonzero_cpu", "nonzero_memory", "summed_nonzero_cpu", "summed_nonzero_memory",
                 "used_ports", "image_states", "pvc_ref_counts", "generation", "index", "dirty")

    def __init__(self, node=None):
        self.node = node
        self.name = node.name if node is not None else ""
        self.pods = []
        self.pods_with_affinity = []
        self.pods_with_required_anti_affinity = []
        self.requested = {}
        self.nonzero_cpu = 0
        self.nonzero_memory = 0
        # the pods' summed_nonzero_cpu/_memory: NonZeroRequested from 1.36 on (versions: non-zero-requests-summed)
        self.summed_nonzero_cpu = 0
        self.summed_nonzero_memory = 0
        self.used_ports = {}
        self.image_states = {}
        self.pvc_ref_counts = {}
        self.generation = 0
        self.index = -1
        self.dirty = None  # the owning snapshot's set of changed rows (None on clones and cache entries)

    def mark_changed(self) -> None:
        """Tell the owning snapshot that this row of its NodeTable is stale."""
        if self.dirty is not None:
            self.dirty.add(self.index)

    @property
    def allocatable(self) -> dict:
        return self.node.allocatable

    def add_pod(self, pod):
        self.pods.append(pod)
        if pod.has_affinity:
            self.pods_with_affinity.append(pod)
        if pod.anti_affinity_required:
            self.pods_with_required_anti_affinity.append(pod)
        self._update(pod, 1)

    def remove_pod(self, pod) -> bool:
        uid = pod.uid
        for i, p in enumerate(self.pods):
            if p.uid == uid:
                del self.pods[i]
                break
        else:
            return False
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if not lst:
                continue
            for i, q in enumerate(lst):
                if q.uid == uid:
                    del lst[i]
                    break
        self._update(p, -1)
        return True

    def _update(self, pod, sign: int):
        req = self.requested
        get = req.get
        if sign > 0:
            for k, v in pod.requests.items():
                req[k] = get(k, 0) + v
        else:
            for k, v in pod.requests.items():
                req[k] = get(k, 0) - v
        self.nonzero_cpu += sign * pod.nonzero_cpu
        self.nonzero_memory += sign * pod.nonzero_memory
        self.summed_nonzero_cpu += sign * pod.summed_nonzero_cpu
        self.summed_nonzero_memory += sign * pod.summed_nonzero_memory
        if pod.host_ports:
            for port in pod.host_ports:
                # kube's HostPortInfo is a set: removing a pod frees its ports even if another pod listed them.
                if sign > 0:
                    self.used_ports[port] = 1
                else:
                    self.used_ports.pop(port, None)
        if pod.volumes:
            for vol in pod.volumes:
                claim = (vol.get("persistentVolumeClaim") or {}).get("claimName") if isinstance(vol, dict) else None
                if claim:
                    key = f"{pod.namespace}/{claim}"
                    n = self.pvc_ref_counts.get(key, 0) + sign
                    if n:
                        self.pvc_ref_counts[key] = n
                    else:
                        self.pvc_ref_counts.pop(key, None)
        self.generation = next(_generations)
        if self.dirty is not None:
            self.dirty.add(self.index)

    def copy_from(self, src: "NodeInfo") -> None:
        """Take src's node, pods and aggregates (lists and dicts copied, not shared); image states are shared."""
        self.node = src.node
        self.name = src.name
        self.pods = list(src.pods)
        self.pods_with_affinity = list(src.pods_with_affinity)
        self.pods_with_required_anti_affinity = list(src.pods_with_required_anti_affinity)
        self.requested = dict(src.requested)
        self.nonzero_cpu = src.nonzero_cpu
        self.nonzero_memory = src.nonzero_memory
        self.summed_nonzero_cpu = src.summed_nonzero_cpu
        self.summed_nonzero_memory = src.summed_nonzero_memory
        self.used_ports = dict(src.used_ports)
        self.image_states = src.image_states
        self.pvc_ref_counts = dict(src.pvc_ref_counts)
        self.generation = src.generation

    def clone(self) -> "NodeInfo":
        c = NodeInfo.__new__(NodeInfo)
        c.copy_from(self)
        c.index = self.index
        c.dirty = None
        return c

    def __repr__(self):
        return f"NodeInfo({self.name}, pods={len(self.pods)})"
