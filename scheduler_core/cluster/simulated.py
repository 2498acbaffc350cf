"""SimulatedCluster: an in-memory API server for the scheduler, loaded from a scenario.

Writes (add/update/delete, bindings, evictions, status patches) are applied at once and delivered
synchronously to every subscriber, in order, like an informer that never lags. Every write gets a new
resourceVersion. Events the scheduler records are kept in ``events``.
"""
from __future__ import annotations

import copy
import datetime
import itertools
import math
import random
import uuid

from ..clock import Clock
from ..framework.snapshot import ClusterObjects
from ..dra.claims import claims_from_templates, released_by_pod
from ..objects import Node, Pod
from ..objects.identifiers import generate_name

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"

# kind -> (ClusterObjects attribute, keyed by namespace?) for the objects plugins read.
OBJECT_KINDS = {
    "PersistentVolume": ("persistent_volumes", False),
    "PersistentVolumeClaim": ("persistent_volume_claims", True),
    "StorageClass": ("storage_classes", False),
    "CSINode": ("csi_nodes", False),
    "CSIDriver": ("csi_drivers", False),
    "CSIStorageCapacity": ("csi_storage_capacities", True),
    "VolumeAttachment": ("volume_attachments", False),
    "Service": ("services", True),
    "ReplicaSet": ("replicasets", True),
    "StatefulSet": ("statefulsets", True),
    "ReplicationController": ("replication_controllers", True),
    "PodDisruptionBudget": ("pod_disruption_budgets", True),
    "DeviceClass": ("device_classes", False),
    "ResourceSlice": ("resource_slices", False),
    "ResourceClaim": ("resource_claims", True),
    "ResourceClaimTemplate": ("resource_claim_templates", True),
    "PodGroup": ("pod_groups", True),
    "Workload": ("workloads", True),
}
SCENARIO_ARRAYS = {"persistentvolumes": "PersistentVolume", "persistentvolumeclaims": "PersistentVolumeClaim",
                   "storageclasses": "StorageClass", "csinodes": "CSINode", "csidrivers": "CSIDriver",
                   "services": "Service", "replicasets": "ReplicaSet", "statefulsets": "StatefulSet",
                   "replicationcontrollers": "ReplicationController",
                   "poddisruptionbudgets": "PodDisruptionBudget", "deviceclasses": "DeviceClass",
                   "resourceslices": "ResourceSlice", "resourceclaims": "ResourceClaim",
                   "resourceclaimtemplates": "ResourceClaimTemplate", "volumeattachments": "VolumeAttachment",
                   "podgroups": "PodGroup", "workloads": "Workload"}


def store_object(objects: ClusterObjects, kind: str, raw: dict, deleted: bool = False):
    """Put ``raw`` (a Namespace or an object of OBJECT_KINDS) into ``objects``, or with ``deleted`` take it out,
    copy-on-write: a cycle iterating the container before is not disturbed. Returns what it replaces (a
    namespace as its name and labels) or None."""
    if kind == "Namespace":
        key = _meta_key(raw, False)
        labels = dict((raw.get("metadata") or {}).get("labels") or {})
        labels.setdefault("kubernetes.io/metadata.name", key)
        current = dict(objects.namespace_labels)
        old = {"metadata": {"name": key, "labels": current[key]}} if key in current else None
        if deleted:
            current.pop(key, None)
        else:
            current[key] = labels
        objects.namespace_labels = current
        return old
    attr, namespaced = OBJECT_KINDS[kind]
    key = _meta_key(raw, namespaced)
    held = getattr(objects, attr)
    if isinstance(held, dict):
        current = dict(held)
        old = current.pop(key, None) if deleted else current.get(key)
        if not deleted:
            current[key] = raw
    else:
        old = next((o for o in held if _meta_key(o, namespaced) == key), None)
        current = [o for o in held if _meta_key(o, namespaced) != key]
        if not deleted:
            current.append(raw)
    setattr(objects, attr, current)
    return old


class ClusterError(Exception):
    """An API error (not found, conflict); the text is the API server's, ``status`` its HTTP code when known
    (409: a conflict, which kube's clients retry after reading the object again)."""

    def __init__(self, message: str = "", status: int | None = None):
        super().__init__(message)
        self.status = status


def _meta_key(obj: dict, namespaced: bool) -> str:
    meta = obj.get("metadata") or {}
    return f'{meta.get("namespace") or "default"}/{meta["name"]}' if namespaced else meta["name"]


def _replace_status(pod, **status_fields):
    """A copy of a Pod with status fields replaced (raw and parsed), without re-parsing the spec."""
    new = copy.copy(pod)
    raw = dict(pod.raw)
    status = dict(raw.get("status") or {})
    for k, v in status_fields.items():
        if v is None:
            status.pop(k, None)
        else:
            status[k] = v
    raw["status"] = status
    raw["metadata"] = dict(raw.get("metadata") or {})
    new.raw = raw
    new.nominated_node_name = status.get("nominatedNodeName") or ""
    new.conditions = tuple(status.get("conditions") or ())
    new.phase = status.get("phase") or ""
    new.start_time = status.get("startTime")
    return new


def _set_condition(conditions, condition: dict, now: str):
    """podutil.UpdatePodCondition: returns (new list, changed). Times do not count as a change."""
    out = [dict(c) for c in conditions]
    for c in out:
        if c.get("type") == condition["type"]:
            if all(c.get(k, "") == condition.get(k, "") for k in ("status", "reason", "message")):
                return out, False
            if c.get("status") != condition.get("status"):
                c["lastTransitionTime"] = now
            for k in ("status", "reason", "message"):
                if condition.get(k):
                    c[k] = condition[k]
                else:
                    c.pop(k, None)
            return out, True
    new = {k: v for k, v in condition.items() if v}
    new["lastTransitionTime"] = now
    out.append(new)
    return out, True


class SimulatedCluster:
    """Nodes, pods and other objects in memory, with the writes the scheduler needs.

    ``pv_controller`` stands in for kube's PV controller: a PV written with a claimRef binds its claim,
    and a claim annotated with a selected node gets a provisioned PV, so VolumeBinding's PreBind completes.
    ``claim_controller`` stands in for kube's resourceclaim controller: a pod added with claim templates gets its
    claims (dra.claims), so do the pods the cluster starts with that lack them, and a pod that goes releases its claims (owned ones deleted, shared ones unreserved and,
    when nobody holds them, deallocated).
    ``binding_clears_nominated_node_name``: a binding clears the pod's status.nominatedNodeName, as kube-apiserver
    does with ClearingNominatedNodeNameAfterBinding (v1.36); v1.30 keeps it.
    """

    def __init__(self, nodes=(), pods=(), objects: dict | None = None, clock: Clock | None = None,
                 pv_controller: bool = True, claim_controller: bool = True,
                 binding_clears_nominated_node_name: bool = False):
        self.clock = clock or Clock()
        self.binding_clears_nominated_node_name = binding_clears_nominated_node_name
        self.pv_controller = pv_controller
        self.claim_controller = claim_controller
        self._rv = itertools.count(1)
        self.nodes = {}
        self.pods = {}
        self.objects = ClusterObjects(namespaces=(objects or {}).get("namespaces", ()))
        self.events = []
        self.evictions = []
        self._handlers = []
        self._now_second, self._now_formatted = None, ""
        for kind_array, kind in SCENARIO_ARRAYS.items():
            for raw in (objects or {}).get(kind_array, ()):
                self._store_object(kind, raw)
        for node in nodes:
            self.nodes[node.name] = self._stamped_node(node)
        for pod in pods:
            self.pods[pod.key] = self._stamped_pod(pod)
        if claim_controller:   # as kube's controller syncs every pod when it starts
            for key, pod in list(self.pods.items()):
                with_claims = self._with_claims(pod)
                if with_claims is not pod:
                    self.pods[key] = self._stamped_pod(with_claims)

    @classmethod
    def from_scenario(cls, scenario, clock: Clock | None = None) -> "SimulatedCluster":
        """Nodes, bound pods, then pending pods in file order; PDBs also from the loop format's ``pdbs``."""
        objects = dict(scenario.objects)
        pdbs = list(objects.get("poddisruptionbudgets", ())) + list(scenario.extra.get("pdbs") or ())
        objects["poddisruptionbudgets"] = pdbs
        return cls(scenario.nodes, list(scenario.bound_pods) + list(scenario.pending_pods), objects, clock)

    # -- bookkeeping -------------------------------------------------------------------------
    def _now_text(self) -> str:
        """The clock's time as an RFC 3339 timestamp to the second (formatted once a second)."""
        second = math.floor(self.clock.now())
        if second != self._now_second:
            self._now_second = second
            self._now_formatted = datetime.datetime.fromtimestamp(second, tz=datetime.timezone.utc) \
                .strftime("%Y-%m-%dT%H:%M:%SZ")
        return self._now_formatted

    def _next_rv(self) -> str:
        return str(next(self._rv))

    def _stamped_pod(self, pod):
        new = copy.copy(pod)
        raw = dict(pod.raw)
        raw["metadata"] = dict(raw.get("metadata") or {}, resourceVersion=self._next_rv())
        new.raw = raw
        return new

    def _stamped_node(self, node):
        raw = dict(node.raw)
        raw["metadata"] = dict(raw.get("metadata") or {}, resourceVersion=self._next_rv())
        node = copy.copy(node)
        node.raw = raw
        return node

    def _store_object(self, kind: str, raw: dict):
        attr, namespaced = OBJECT_KINDS[kind]
        store = getattr(self.objects, attr)
        if isinstance(store, dict):
            key = _meta_key(raw, namespaced)
            old = store.get(key)
            store[key] = raw
            return old
        key = _meta_key(raw, namespaced)
        for i, obj in enumerate(store):
            if _meta_key(obj, namespaced) == key:
                store[i] = raw
                return obj
        store.append(raw)
        return None

    def _emit(self, method: str, *args) -> None:
        for h in list(self._handlers):
            getattr(h, method)(*args)

    # -- ClusterSource -----------------------------------------------------------------------
    def subscribe(self, handler) -> None:
        """Register a handler and replay the state: nodes, bound pods, pending pods (insertion order)."""
        self._handlers.append(handler)
        for node in list(self.nodes.values()):
            handler.on_node_add(node)
        for pod in [p for p in self.pods.values() if p.node_name]:
            handler.on_pod_add(pod)
        for pod in [p for p in self.pods.values() if not p.node_name]:
            handler.on_pod_add(pod)

    def unsubscribe(self, handler) -> None:
        self._handlers.remove(handler)

    def get_pod(self, namespace: str, name: str):
        return self.pods.get(f"{namespace}/{name}")

    def get_node(self, name: str):
        return self.nodes.get(name)

    def list_nodes(self) -> list:
        return list(self.nodes.values())

    def list_pods(self) -> list:
        return list(self.pods.values())

    # -- nodes -------------------------------------------------------------------------------
    def add_node(self, node) -> None:
        node = node if isinstance(node, Node) else Node(node)
        if node.name in self.nodes:
            raise ClusterError(f'nodes "{node.name}" already exists')
        node = self.nodes[node.name] = self._stamped_node(node)
        self._emit("on_node_add", node)

    def update_node(self, node) -> None:
        node = node if isinstance(node, Node) else Node(node)
        old = self.nodes.get(node.name)
        if old is None:
            raise ClusterError(f'nodes "{node.name}" not found')
        node = self.nodes[node.name] = self._stamped_node(node)
        self._emit("on_node_update", old, node)

    def delete_node(self, name: str) -> None:
        old = self.nodes.pop(name, None)
        if old is None:
            raise ClusterError(f'nodes "{name}" not found')
        self._emit("on_node_delete", old)

    # -- pods --------------------------------------------------------------------------------
    def add_pod(self, pod) -> None:
        pod = pod if isinstance(pod, Pod) else Pod(pod)
        if pod.key in self.pods:
            raise ClusterError(f'pods "{pod.name}" already exists')
        if self.claim_controller:
            pod = self._with_claims(pod)
        pod = self.pods[pod.key] = self._stamped_pod(pod)
        self._emit("on_pod_add", pod)

    def _with_claims(self, pod):
        """The resourceclaim controller for one pod: its template entries' claims created (``add_object``), and the
        pod with their names in its status (the pod itself when nothing was missing)."""
        if not (pod.raw.get("spec") or {}).get("resourceClaims"):
            return pod
        raw, made = claims_from_templates(pod.raw, self.objects.resource_claim_templates,
                                          self.objects.resource_claims)
        for claim in made:
            self.add_object("ResourceClaim", claim)
        return pod if raw is pod.raw else Pod(raw)

    def update_pod(self, pod) -> None:
        pod = pod if isinstance(pod, Pod) else Pod(pod)
        old = self.pods.get(pod.key)
        if old is None:
            raise ClusterError(f'pods "{pod.name}" not found')
        self._replace_pod(old, self._stamped_pod(pod))

    def _replace_pod(self, old, new) -> None:
        self.pods[new.key] = new
        self._emit("on_pod_update", old, new)

    def delete_pod(self, pod) -> None:
        key = pod if isinstance(pod, str) else pod.key
        old = self.pods.pop(key, None)
        if old is None:
            raise ClusterError(f'pods "{key.split("/", 1)[-1]}" not found')
        self._emit("on_pod_delete", old)
        if self.claim_controller and self.objects.resource_claims:
            updates, deletes = released_by_pod(old.raw, self.objects.resource_claims)
            for claim in updates:
                self.update_object("ResourceClaim", claim)
            for claim in deletes:
                self.delete_object("ResourceClaim", claim)

    def bind(self, pod, node_name: str) -> None:
        """The pods/binding subresource: sets spec.nodeName and PodScheduled=True (and clears
        status.nominatedNodeName if ``binding_clears_nominated_node_name``)."""
        cur = self.pods.get(pod.key)
        if cur is None or (pod.uid and cur.uid != pod.uid):
            raise ClusterError(f'pods "{pod.name}" not found')
        if cur.node_name:
            raise ClusterError(f'Operation cannot be fulfilled on pods/binding "{pod.name}": pod {pod.name} is '
                               f'already assigned to node "{cur.node_name}"')
        conditions, _ = _set_condition(cur.conditions, {"type": "PodScheduled", "status": "True"},
                                       self._now_text())
        cleared = {"nominatedNodeName": None} if self.binding_clears_nominated_node_name else {}
        new = _replace_status(cur, conditions=conditions, **cleared)
        new.raw["spec"] = dict(new.raw.get("spec") or {}, nodeName=node_name)
        new.raw["metadata"]["resourceVersion"] = self._next_rv()
        new.node_name = node_name
        self._replace_pod(cur, new)

    def extender_bound(self, pod, node_name: str) -> None:
        """A binder extender bound the pod: its binding reaches this cluster (and the informers) as bind's."""
        self.bind(pod, node_name)

    def evict(self, pod, preemptor_uid: str, node_name: str, scheduler_name: str = "default-scheduler"):
        """Delete a preemption victim: DisruptionTarget condition, delete, Preempted event.

        Returns None, or the API error text (DefaultPreemption's client contract)."""
        cur = self.pods.get(pod.key)
        if cur is None:
            return f'pods "{pod.name}" not found'
        conditions, changed = _set_condition(
            cur.conditions, {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                             "message": f"{scheduler_name}: preempting to accommodate a higher priority pod"},
            self._now_text())
        if changed:
            cur = _replace_status(cur, conditions=conditions)
            cur.raw["metadata"]["resourceVersion"] = self._next_rv()
            self.pods[cur.key] = cur
        self.evictions.append({"pod": cur.key, "preemptor_uid": preemptor_uid, "node": node_name})
        self.delete_pod(cur.key)
        self.record_event(cur, "Normal", "Preempted", "Preempting",
                          f"Preempted by pod {preemptor_uid} on node {node_name}")
        return None

    def clear_nomination(self, pod) -> None:
        """Set status.nominatedNodeName of a pending pod to "" (ClearNominatedNodeName)."""
        cur = self.pods.get(pod.key)
        if cur is None or not cur.nominated_node_name:
            return
        new = _replace_status(cur, nominatedNodeName=None)
        new.raw["metadata"]["resourceVersion"] = self._next_rv()
        self._replace_pod(cur, new)

    def patch_pod_status(self, pod, condition: dict | None = None, nominated_node_name: str | None = None,
                         extended_resource_claim_status: dict | None = None) -> bool:
        """Set a condition, status.nominatedNodeName ("" clears) and/or status.extendedResourceClaimStatus; no
        write when nothing changes."""
        cur = self.pods.get(pod.key)
        if cur is None:
            raise ClusterError(f'pods "{pod.name}" not found', 404)
        changes = {}
        if (extended_resource_claim_status is not None
                and extended_resource_claim_status != (cur.raw.get("status") or {}).get("extendedResourceClaimStatus")):
            changes["extendedResourceClaimStatus"] = extended_resource_claim_status
        if condition is not None:
            conditions, changed = _set_condition(cur.conditions, condition, self._now_text())
            if changed:
                changes["conditions"] = conditions
        if nominated_node_name is not None and nominated_node_name != cur.nominated_node_name:
            changes["nominatedNodeName"] = nominated_node_name or None
        if not changes:
            return False
        new = _replace_status(cur, **changes)
        new.raw["metadata"]["resourceVersion"] = self._next_rv()
        self._replace_pod(cur, new)
        return True

    def record_event(self, obj, event_type: str, reason: str, action: str, message: str, related=None) -> None:
        self.events.append({"time": self.clock.now(), "type": event_type, "reason": reason, "action": action,
                            "object": getattr(obj, "key", getattr(obj, "name", str(obj))),
                            "kind": type(obj).__name__, "message": message,
                            "related": getattr(related, "key", None) if related is not None else None})

    # -- other objects -----------------------------------------------------------------------
    def _write_object(self, kind: str, raw: dict, must_exist: bool):
        """Store a copy of ``raw`` with a new resourceVersion; returns (old, stored)."""
        attr, namespaced = OBJECT_KINDS[kind]
        key = _meta_key(raw, namespaced)
        store = getattr(self.objects, attr)
        exists = (key in store) if isinstance(store, dict) else any(
            _meta_key(o, namespaced) == key for o in store)
        if must_exist and not exists:
            raise ClusterError(f'{kind} "{key.split("/", 1)[-1]}" not found')
        stored = dict(raw, metadata=dict(raw.get("metadata") or {}, resourceVersion=self._next_rv()))
        return self._store_object(kind, stored), stored

    def get_object(self, kind: str, key: str):
        """The stored object of a kind plugins read, by namespace/name (name if cluster-scoped), or None."""
        attr, namespaced = OBJECT_KINDS[kind]
        store = getattr(self.objects, attr)
        if isinstance(store, dict):
            return store.get(key)
        return next((o for o in store if _meta_key(o, namespaced) == key), None)

    def add_object(self, kind: str, raw: dict) -> dict:
        """Create or replace an object of a kind plugins read; subscribers get Add or Update."""
        old, stored = self._write_object(kind, raw, must_exist=False)
        self._emit("on_object_event", kind, "Update" if old is not None else "Add", old, stored)
        self._run_pv_controller(kind, stored)
        return stored

    def create_object(self, kind: str, raw: dict) -> dict:
        """Create an object as the API server does: a name from ``metadata.generateName`` when it has none, a uid
        and the creation time of its own, no status (the kinds the scheduler creates have a status subresource);
        ClusterError (409) when the name is taken. Returns the stored object."""
        meta = dict(raw.get("metadata") or {})
        if not meta.get("name"):
            meta["name"] = generate_name(meta.get("generateName", ""), random)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = self._now_text()
        if self.get_object(kind, _meta_key({"metadata": meta}, OBJECT_KINDS[kind][1])) is not None:
            raise ClusterError(f'{kind} "{meta["name"]}" already exists', 409)
        return self.add_object(kind, {k: v for k, v in dict(raw, metadata=meta).items() if k != "status"})

    def read_object(self, kind: str, key: str) -> dict:
        """GET: the stored object by namespace/name (name if cluster-scoped); ClusterError (404) when absent."""
        held = self.get_object(kind, key)
        if held is None:
            raise ClusterError(f'{kind} "{key.split("/", 1)[-1]}" not found', 404)
        return held

    def update_object(self, kind: str, raw: dict) -> dict:
        """Update an existing object (ClusterError when absent). Returns the stored object."""
        old, stored = self._write_object(kind, raw, must_exist=True)
        self._emit("on_object_event", kind, "Update", old, stored)
        self._run_pv_controller(kind, stored)
        return stored

    def update_status(self, kind: str, raw: dict) -> dict:
        """Update the status subresource: the stored object with ``raw``'s status (ClusterError when absent)."""
        held = self.get_object(kind, _meta_key(raw, OBJECT_KINDS[kind][1]))
        return self.update_object(kind, dict(held or raw, status=raw.get("status")))

    def delete_object(self, kind: str, raw: dict) -> None:
        attr, namespaced = OBJECT_KINDS[kind]
        store = getattr(self.objects, attr)
        key = _meta_key(raw, namespaced)
        if isinstance(store, dict):
            old = store.pop(key, None)
        else:
            old = next((o for o in store if _meta_key(o, namespaced) == key), None)
            if old is not None:
                store.remove(old)
        if old is None:
            raise ClusterError(f'{kind} "{key.split("/", 1)[-1]}" not found')
        self._emit("on_object_event", kind, "Delete", old, None)

    def update_pv(self, pv: dict) -> dict:
        """Update a PersistentVolume (VolumeBinding's PreBind); returns the stored object."""
        return self.update_object("PersistentVolume", pv)

    def update_pvc(self, pvc: dict) -> dict:
        """Update a PersistentVolumeClaim (VolumeBinding's PreBind); returns the stored object."""
        return self.update_object("PersistentVolumeClaim", pvc)

    # -- a minimal PV controller: binds pre-bound PVs and provisions claims with a selected node --------
    def _run_pv_controller(self, kind: str, obj: dict) -> None:
        if not self.pv_controller:
            return
        if kind == "PersistentVolume":
            ref = (obj.get("spec") or {}).get("claimRef")
            if ref:
                key = f'{ref.get("namespace") or "default"}/{ref.get("name", "")}'
                pvc = self.objects.persistent_volume_claims.get(key)
                if pvc is not None:
                    self._bind_claim(obj, pvc)
        elif kind == "PersistentVolumeClaim":
            ann = (obj.get("metadata") or {}).get("annotations") or {}
            if ann.get(ANN_SELECTED_NODE) and not (obj.get("spec") or {}).get("volumeName"):
                self._provision(obj)

    def _bind_claim(self, pv: dict, pvc: dict) -> None:
        pv_name = pv["metadata"]["name"]
        pvc_spec = pvc.get("spec") or {}
        if pvc_spec.get("volumeName") not in (None, "", pv_name):
            return
        ann = dict((pvc.get("metadata") or {}).get("annotations") or {})
        if pvc_spec.get("volumeName") == pv_name and ann.get(ANN_BIND_COMPLETED):
            return
        if not pvc_spec.get("volumeName"):
            ann[ANN_BOUND_BY_CONTROLLER] = "yes"
        ann[ANN_BIND_COMPLETED] = "yes"
        capacity = (pv.get("spec") or {}).get("capacity") or {}
        new_pvc = dict(pvc, metadata=dict(pvc.get("metadata") or {}, annotations=ann),
                       spec=dict(pvc_spec, volumeName=pv_name),
                       status=dict(pvc.get("status") or {}, phase="Bound", capacity=dict(capacity),
                                   accessModes=list((pv.get("spec") or {}).get("accessModes") or ())))
        ref = dict((pv.get("spec") or {}).get("claimRef") or {})
        ref.update(kind="PersistentVolumeClaim", namespace=(pvc.get("metadata") or {}).get("namespace") or "default",
                   name=pvc["metadata"]["name"])
        if (pvc.get("metadata") or {}).get("uid"):
            ref["uid"] = pvc["metadata"]["uid"]
        new_pv = dict(pv, spec=dict(pv.get("spec") or {}, claimRef=ref),
                      status=dict(pv.get("status") or {}, phase="Bound"))
        for kind, old, new in (("PersistentVolume", pv, new_pv), ("PersistentVolumeClaim", pvc, new_pvc)):
            _prev, stored = self._write_object(kind, new, must_exist=True)
            self._emit("on_object_event", kind, "Update", old, stored)

    def _provision(self, pvc: dict) -> None:
        meta = pvc.get("metadata") or {}
        spec = pvc.get("spec") or {}
        uid = meta.get("uid") or f'{meta.get("namespace") or "default"}-{meta["name"]}'
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": f"pvc-{uid}", "annotations": {"pv.kubernetes.io/provisioned-by": "schedscope"}},
              "spec": {"capacity": {"storage": storage}, "accessModes": list(spec.get("accessModes") or ()),
                       "storageClassName": spec.get("storageClassName") or "",
                       "persistentVolumeReclaimPolicy": "Delete",
                       "claimRef": {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace") or "default",
                                    "name": meta["name"], **({"uid": meta["uid"]} if meta.get("uid") else {})}},
              "status": {"phase": "Available"}}
        _old, stored = self._write_object("PersistentVolume", pv, must_exist=False)
        self._emit("on_object_event", "PersistentVolume", "Add", None, stored)
        self._bind_claim(stored, pvc)

    # -- results -----------------------------------------------------------------------------
    def placements(self) -> dict:
        """{namespace/name: node or None} for every pod."""
        return {key: (p.node_name or None) for key, p in self.pods.items()}
