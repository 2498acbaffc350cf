"""Where the scheduler's world comes from and where its decisions go (the informers and the clientset).

A ClusterSource lists and watches nodes, pods and the other objects plugins read, and accepts the
scheduler's writes: bindings, evictions (preemption), pod status patches and events. ``SimulatedCluster``
(cluster/simulated.py) keeps everything in memory; a real cluster source implements the same methods.
"""
from __future__ import annotations

from typing import Protocol


class ClusterEventHandler(Protocol):
    """What a subscriber (the Scheduler) receives, in the order changes happen."""

    def on_node_add(self, node) -> None: ...

    def on_node_update(self, old, new) -> None: ...

    def on_node_delete(self, node) -> None: ...

    def on_pod_add(self, pod) -> None: ...

    def on_pod_update(self, old, new) -> None: ...

    def on_pod_delete(self, pod) -> None: ...

    def on_object_event(self, kind: str, action: str, old, new) -> None:
        """Any other kind (PersistentVolume, StorageClass, ...); action is "Add", "Update" or "Delete"."""


class ClusterSource(Protocol):
    """The cluster as the scheduler sees it.

    ``objects`` is the live ClusterObjects (namespaces, services, volumes, PDBs, ...). ``subscribe``
    registers a handler and replays the current state to it as add events: nodes, then bound pods, then
    pending pods. ``bind`` raises on conflict (already bound, pod gone). ``evict`` deletes a preemption
    victim (recording kube's DisruptionTarget condition and Preempted event) and returns None or the API
    error text. ``patch_pod_status`` writes the PodScheduled condition and/or status.nominatedNodeName
    ("" clears it) and/or status.extendedResourceClaimStatus, returning whether anything changed.
    ``update_pv``/``update_pvc`` return the stored object. The objects plugins write (DynamicResources'
    ResourceClaims) go through ``create_object`` (a name from generateName), ``read_object`` (a GET, not the
    informer's copy), ``update_object``, ``update_status`` (the status subresource) and ``delete_object``; API
    errors are ClusterError, with the HTTP status (409 for a conflict).
    ``extender_bound`` is told of a binding a binder extender made (a real cluster's watch delivers it; a
    simulated one applies it, as the extender's own API call would).
    """

    objects: object

    def subscribe(self, handler: ClusterEventHandler) -> None: ...

    def get_pod(self, namespace: str, name: str): ...

    def list_nodes(self) -> list: ...

    def list_pods(self) -> list: ...

    def bind(self, pod, node_name: str) -> None: ...

    def extender_bound(self, pod, node_name: str) -> None: ...

    def evict(self, pod, preemptor_uid: str, node_name: str,
              scheduler_name: str = "default-scheduler") -> str | None: ...

    def clear_nomination(self, pod) -> None: ...

    def update_pv(self, pv: dict) -> dict: ...

    def update_pvc(self, pvc: dict) -> dict: ...

    def patch_pod_status(self, pod, condition: dict | None = None, nominated_node_name: str | None = None,
                         extended_resource_claim_status: dict | None = None) -> bool: ...

    def create_object(self, kind: str, raw: dict) -> dict: ...

    def read_object(self, kind: str, key: str) -> dict: ...

    def update_object(self, kind: str, raw: dict) -> dict: ...

    def update_status(self, kind: str, raw: dict) -> dict: ...

    def delete_object(self, kind: str, raw: dict) -> None: ...

    def record_event(self, obj, event_type: str, reason: str, action: str, message: str, related=None) -> None: ...


__all__ = ["ClusterSource", "ClusterEventHandler"]
