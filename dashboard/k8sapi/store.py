"""ApiCluster: the Kubernetes API's watch cache of one simulated cluster's store (``services.objectstore``).

It is a SimulatedCluster with what kube-apiserver has and the simulator does not: namespaces, events, leases and
PriorityClasses, the store's one resourceVersion sequence for every kind, a log of recent changes for watches
(older ones are compacted away: a watch from before the window gets 410 Gone), admission defaults and the write
semantics of create/update/patch/delete/bind with their conflicts.

The database is the truth; this is a cache of it, as kube-apiserver's watch cache is of etcd. It follows the
store's change log (``catch_up``: changes any writer stored, in any process), and an API write runs inside
``persisting``: the cluster's row locked, the cache caught up, the verb applied here, and every change it made
stored with its resourceVersion in the same transaction. Every change, whoever makes it, is logged once here and
wakes the watchers.
"""
from __future__ import annotations

import bisect
import datetime
import random
import threading
import uuid
from collections import OrderedDict
from contextlib import contextmanager

from scheduler_core import versions
from scheduler_core.cluster.simulated import OBJECT_KINDS, ClusterError, SimulatedCluster
from scheduler_core.framework.preemption import PDB
from scheduler_core.objects import Node, ParseError, Pod
from scheduler_core.objects.identifiers import generate_name

from ..services import admitted, nodeipam
from ..services.objectstore import event_object, kubelet_node, rfc3339, running_status
from . import admission
from .errors import ApiError
from .resources import BY_STORE

EXTRA_KINDS = ("Namespace", "Event", "Lease", "PriorityClass", "CSIStorageCapacity", "VolumeAttachment")
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")
INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
EVENT_TTL_SECONDS = 3600.0
MAX_DISRUPTED_PODS = 2000   # the eviction REST's MaxDisruptedPodSize


def meta_key(obj: dict, namespaced: bool) -> str:
    meta = obj.get("metadata") or {}
    return f'{meta.get("namespace") or "default"}/{meta.get("name", "")}' if namespaced else meta.get("name", "")


def _with_rv(obj: dict, rv: int) -> dict:
    return dict(obj, metadata=dict(obj.get("metadata") or {}, resourceVersion=str(rv)))


def _rv_of(obj: dict) -> int:
    return int((obj.get("metadata") or {}).get("resourceVersion") or 0)


def _created_at(raw: dict) -> float:
    stamp = (raw.get("metadata") or {}).get("creationTimestamp") or ""
    try:
        return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


class _PdbResource:
    """How the eviction's Forbidden errors name PDBs: ``poddisruptionbudget.policy``."""

    qualified, group, plural = "poddisruptionbudget.policy", "policy", "poddisruptionbudget"


PDB_RESOURCE = _PdbResource()


def _set_pdb_condition(conditions: list, status: dict, now: str) -> list:
    """pdbhelper.UpdateDisruptionAllowedCondition once the budget is 0 (apimeta.SetStatusCondition:
    DisruptionAllowed False, InsufficientPods, in place; the transition time changes only with the status)."""
    cond = {"type": "DisruptionAllowed", "status": "False", "observedGeneration": status.get("observedGeneration", 0),
            "lastTransitionTime": now, "reason": "InsufficientPods", "message": ""}
    out = []
    for c in conditions:
        if c.get("type") == "DisruptionAllowed":
            if c.get("status") == "False" and c.get("lastTransitionTime"):
                cond["lastTransitionTime"] = c["lastTransitionTime"]
            out.append(cond)
            cond = None
        else:
            out.append(c)
    return out if cond is None else out + [cond]


class Change:
    """One logged write: its resourceVersion, store, watch event type, the object after and before (None for
    ADDED; for DELETED ``obj`` is the object with the deletion's resourceVersion, ``old`` as it was stored)."""

    __slots__ = ("rv", "store", "type", "obj", "old")

    def __init__(self, rv: int, store: str, type_: str, obj: dict, old: dict | None):
        self.rv, self.store, self.type, self.obj, self.old = rv, store, type_, obj, old


class _Recorder:
    """The cluster's own subscriber: turns the simulator's events into logged changes."""

    def __init__(self, api: "ApiCluster"):
        self.api = api

    def on_node_add(self, node):
        self.api.log("nodes", "ADDED", node.raw)

    def on_node_update(self, old, new):
        self.api.log("nodes", "MODIFIED", new.raw, old.raw)

    def on_node_delete(self, node):
        self.api.log("nodes", "DELETED", _with_rv(node.raw, self.api.next_rv()), node.raw)

    def on_pod_add(self, pod):
        self.api.log("pods", "ADDED", pod.raw)

    def on_pod_update(self, old, new):
        self.api.log("pods", "MODIFIED", new.raw, old.raw)

    def on_pod_delete(self, pod):
        self.api.log("pods", "DELETED", _with_rv(pod.raw, self.api.next_rv()), pod.raw)

    def on_object_event(self, kind, action, old, new):
        if action == "Delete":
            self.api.log(kind, "DELETED", _with_rv(old, self.api.next_rv()), old)
        else:
            self.api.log(kind, "ADDED" if action == "Add" else "MODIFIED", new, old)


class ApiCluster(SimulatedCluster):
    """The state of one simulated cluster as its Kubernetes API serves it (see the module doc).

    ``window`` is how many changes stay watchable; ``start_rv`` keeps resourceVersions increasing across a
    reload, so that clients of the previous state re-list.
    """

    def __init__(self, name: str, nodes=(), pods=(), objects: dict | None = None, clock=None,
                 window: int = 10000, start_rv: int = 1, extra=(), quota: dict | None = None, kubelet: bool = True,
                 kubelet_version: str = "", features=None):
        """``extra``: stored (kind, raw) of EXTRA_KINDS; objects that keep their resourceVersion. The initial
        namespaces and the system PriorityClasses that are missing are made (``created``: to be stored).
        ``quota``: the most pods, nodes and events, and ``bytes`` of every object, the cluster may hold.
        ``kubelet``: the simulated kubelet runs the pods bound through the API (``Cluster.kubelet``) and registers
        the nodes created through it with ``kubelet_version`` (the cluster's release). ``features``: the cluster's
        versions.Features (the latest version's defaults if None), for the rules of its kube-apiserver."""
        self.name = name
        self.kubelet = kubelet
        self.kubelet_version = kubelet_version
        self.quota = quota or {}
        self.lock = threading.RLock()
        self.rv = start_rv - 1
        self.extra = {kind: {} for kind in EXTRA_KINDS}
        self.events_by_time = OrderedDict()   # event key -> creation time, for the TTL
        self.window = window
        self._log_rvs = []
        self._log = []
        self.watchers = set()
        self.closed = False
        self.stale = False                    # a write failed after changing the cache: rebuild it
        self._pending = None                  # changes of the writes in progress (``collecting``)
        self.group_commit = None              # the registry's group commit of this cache's writes
        self._loading = True
        self.features = features or versions.features()
        clears = admitted.binding_clears_nominated_node_name(self.features)
        super().__init__(nodes, pods, objects, clock, binding_clears_nominated_node_name=clears)
        for kind, raw in extra:
            key = meta_key(raw, BY_STORE[kind].namespaced)
            self.extra[kind][key] = raw
            if kind == "Namespace":
                self.objects.namespace_labels[key] = dict((raw.get("metadata") or {}).get("labels") or {})
            elif kind == "Event":
                self.events_by_time[key] = _created_at(raw)
        self._loading = False
        before = self.rv
        now = rfc3339(self.clock.now())
        given = {(n.get("metadata") or {}).get("name", ""): n for n in (objects or {}).get("namespaces", ())}
        used = {(o.get("metadata") or {}).get("namespace") or "default"
                for res in BY_STORE.values() if res.namespaced and res.store not in EXTRA_KINDS
                for o in self.items(res.store)}
        for ns in dict.fromkeys(list(INITIAL_NAMESPACES) + sorted(given) + sorted(used)):
            if ns and ns not in self.extra["Namespace"]:
                self._store_extra("Namespace", self._namespace_defaults(given.get(ns) or {"metadata": {"name": ns}},
                                                                        now))
        for name_, raw in admitted.with_system_priority_classes({}, now).items():
            if name_ not in self.extra["PriorityClass"]:
                self._store_extra("PriorityClass", raw)
        self.created = [(kind, raw) for kind in ("Namespace", "PriorityClass") for raw in self.extra[kind].values()
                        if _rv_of(raw) > before]
        # nodes stored before their allocation (by a version without it): the controller's first sync
        self.allocated = self.allocate_pod_cidrs([n for n in list(self.nodes.values())
                                                  if not nodeipam.pod_cidrs(n.raw)])
        self.base_rv = self.rv          # nothing before the state was built can be watched
        self.bytes = sum(admitted.object_size(o) for res in BY_STORE.values() if res.group != "events.k8s.io"
                         for o in self.items(res.store))
        self.compacted = {}             # store -> resourceVersion of its newest change dropped from the log
        self._handlers.append(_Recorder(self))

    # -- resourceVersions and the change log ----------------------------------------------------
    def _stamped_pod(self, pod):
        return pod if self._loading and _rv_of(pod.raw) else super()._stamped_pod(pod)

    def _stamped_node(self, node):
        return node if self._loading and _rv_of(node.raw) else super()._stamped_node(node)

    def _next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)

    def next_rv(self) -> int:
        return int(self._next_rv())

    def log(self, store: str, type_: str, obj: dict, old: dict | None = None) -> None:
        """Record a change and wake the watchers; drops the oldest changes beyond the window."""
        with self.lock:
            change = Change(_rv_of(obj), store, type_, obj, old)
            self.bytes += ((admitted.object_size(obj) if type_ != "DELETED" else 0)
                           - (admitted.object_size(old) if old is not None else 0))
            self._log_rvs.append(change.rv)
            self._log.append(change)
            if self._pending is not None:
                self._pending.append(change)
            if len(self._log) > 2 * self.window:
                cut = len(self._log) - self.window
                for c in self._log[:cut]:
                    self.compacted[c.store] = c.rv
                del self._log[:cut], self._log_rvs[:cut]
            for w in list(self.watchers):
                w.wake()

    @contextmanager
    def collecting(self):
        """Yields the list of changes logged meanwhile (an API write, stored by its caller). A write that fails
        after changing the cache leaves it ``stale``: its caller rebuilds it from the store."""
        with self.lock:
            self._pending = collected = []
            try:
                yield collected
            except BaseException:
                if collected:
                    self.stale = True
                raise
            finally:
                self._pending = None

    def apply_logged(self, rv: int, store: str, type_: str, key: str, raw: dict) -> None:
        """A change another writer stored (the store's change log), applied with its own resourceVersion;
        the cache's controllers do not run again for it (the writer's did)."""
        with self.lock:
            if rv <= self.rv:
                return
            self.rv = rv - 1   # a deletion's logged copy takes the next one: this one
            pv_controller, self.pv_controller = self.pv_controller, False
            try:
                self._apply(store, type_, key, raw)
            finally:
                self.pv_controller = pv_controller
            self.rv = rv

    def _apply(self, store: str, type_: str, key: str, raw: dict) -> None:
        deleting = type_ == "DELETED"
        if store in ("pods", "nodes"):
            held = self.pods if store == "pods" else self.nodes
            cur = held.get(key)
            if deleting:
                if cur is not None:
                    del held[key]
                    self._emit("on_pod_delete" if store == "pods" else "on_node_delete", cur)
                return
            try:
                obj = Pod(raw) if store == "pods" else Node(raw)
            except ParseError:
                return   # the store's writers validate; an object it cannot parse is not served
            held[key] = obj
            kind = "pod" if store == "pods" else "node"
            self._emit(f"on_{kind}_add", obj) if cur is None else self._emit(f"on_{kind}_update", cur, obj)
        elif store in OBJECT_KINDS:
            old = self.get_object(store, key)
            if deleting:
                if old is not None:
                    self.delete_object(store, old)
                return
            self._store_object(store, raw)
            self._emit("on_object_event", store, "Update" if old is not None else "Add", old, raw)
        elif store in self.extra:
            old = self.extra[store].get(key)
            if deleting:
                if old is not None:
                    del self.extra[store][key]
                    if store == "Namespace":
                        self.objects.namespace_labels.pop(key, None)
                    self.log(store, "DELETED", _with_rv(old, self.next_rv()), old)
                return
            self.extra[store][key] = raw
            if store == "Namespace":
                self.objects.namespace_labels[key] = dict((raw.get("metadata") or {}).get("labels") or {})
            elif store == "Event" and old is None:
                self.events_by_time[key] = self.clock.now()
            self.log(store, "MODIFIED" if old is not None else "ADDED", raw, old)

    def oldest_rv(self, store: str) -> int:
        """A watch of ``store`` can start at this resourceVersion or later (as each kind's watch cache)."""
        return max(self.base_rv, self.compacted.get(store, 0))

    def changes_since(self, rv: int, store: str) -> list:
        """Logged changes after ``rv``; ApiError 410 when some of ``store``'s were compacted away."""
        with self.lock:
            oldest = self.oldest_rv(store)
            if rv < oldest:
                raise ApiError.expired(f"too old resource version: {rv} ({oldest})")
            return self._log[bisect.bisect_right(self._log_rvs, rv):]

    def items_at(self, store: str, rv: int, namespaced: bool) -> list:
        """The objects of ``store`` as they were at resourceVersion ``rv`` (the current ones with the logged
        changes after ``rv`` undone), for the later pages of a paged list; ApiError 410 when the log no longer
        reaches back that far."""
        with self.lock:
            held = {meta_key(o, namespaced): o for o in self.items(store)}
            for c in reversed(self.changes_since(rv, store)):
                if c.store != store:
                    continue
                key = meta_key(c.obj, namespaced)
                if c.type == "ADDED" or c.old is None:
                    held.pop(key, None)
                else:
                    held[key] = c.old
            return list(held.values())

    def close(self) -> None:
        """End every watch (the state is being replaced)."""
        with self.lock:
            self.closed = True
            for w in list(self.watchers):
                w.wake()

    # -- reading -----------------------------------------------------------------------------
    def items(self, store: str):
        """Every stored object of a store, as raw dicts."""
        if store == "pods":
            return [p.raw for p in self.pods.values()]
        if store == "nodes":
            return [n.raw for n in self.nodes.values()]
        if store in OBJECT_KINDS:
            held = getattr(self.objects, OBJECT_KINDS[store][0])
            return list(held.values()) if isinstance(held, dict) else list(held)
        return list(self.extra[store].values())

    def get(self, store: str, key: str):
        if store == "pods":
            p = self.pods.get(key)
            return p.raw if p is not None else None
        if store == "nodes":
            n = self.nodes.get(key)
            return n.raw if n is not None else None
        if store in OBJECT_KINDS:
            return self.get_object(store, key)
        return self.extra[store].get(key)

    # -- writing -----------------------------------------------------------------------------
    def _store_extra(self, kind: str, raw: dict) -> dict:
        res = BY_STORE[kind]
        raw = _with_rv(raw, self.next_rv())
        self.extra[kind][meta_key(raw, res.namespaced)] = raw
        if kind == "Namespace":   # namespace selectors of affinity terms read these labels
            self.objects.namespace_labels[raw["metadata"]["name"]] = dict(raw["metadata"].get("labels") or {})
        return raw

    def _put(self, res, raw: dict, old: dict | None) -> dict:
        """Store a prepared object (create when ``old`` is None); returns the stored version."""
        key = meta_key(raw, res.namespaced)
        try:
            if res.store == "pods":
                pod = Pod(raw)
                self.add_pod(pod) if old is None else self.update_pod(pod)
                return self.pods[key].raw
            if res.store == "nodes":
                node = Node(raw)
                self.add_node(node) if old is None else self.update_node(node)
                return self.nodes[key].raw
        except ParseError as err:
            raise admission.parse_error(res, raw["metadata"]["name"], err) from None
        if res.store in OBJECT_KINDS:
            return self.add_object(res.store, raw) if old is None else self.update_object(res.store, raw)
        stored = self._store_extra(res.store, raw)
        self.log(res.store, "ADDED" if old is None else "MODIFIED", stored, old)
        if res.store == "Event" and old is None:
            self._expire_events(key)
        return stored

    def _drop(self, res, key: str, old: dict) -> dict:
        """Delete a stored object; returns it as the DELETED watch event carries it."""
        if res.store == "pods":
            self.delete_pod(key)
        elif res.store == "nodes":
            self.delete_node(key)
        elif res.store in OBJECT_KINDS:
            self.delete_object(res.store, old)
        else:
            del self.extra[res.store][key]
            if res.store == "Namespace":
                self.objects.namespace_labels.pop(key, None)
            self.log(res.store, "DELETED", _with_rv(old, self.next_rv()), old)
        return self._log[-1].obj

    def _expire_events(self, key: str) -> None:
        """Events live for an hour (kube-apiserver's --event-ttl)."""
        now = self.clock.now()
        self.events_by_time[key] = now
        while self.events_by_time:
            first, t = next(iter(self.events_by_time.items()))
            if now - t < EVENT_TTL_SECONDS:
                break
            del self.events_by_time[first]
            old = self.extra["Event"].pop(first, None)
            if old is not None:   # only the API's view: the dashboard keeps its event history
                pending, self._pending = self._pending, None
                self.log("Event", "DELETED", _with_rv(old, self.next_rv()), old)
                self._pending = pending

    def _namespace_defaults(self, raw: dict, now: str) -> dict:
        meta = dict(raw.get("metadata") or {})
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", now)
        meta["labels"] = dict(meta.get("labels") or {}, **{"kubernetes.io/metadata.name": meta["name"]})
        return dict(raw, apiVersion="v1", kind="Namespace", metadata=meta,
                    spec=raw.get("spec") or {"finalizers": ["kubernetes"]},
                    status=dict(raw.get("status") or {}, phase="Active"))

    # -- the API's verbs -------------------------------------------------------------------------
    def create(self, res, namespace: str, body: dict, dry_run: bool = False) -> dict:
        """POST: name generation, namespace checks, defaults and admission; 409 when the name is taken."""
        with self.lock:
            obj = self._new_object(res, namespace, body)
            key = meta_key(obj, res.namespaced)
            if self.get(res.store, key) is not None:
                raise ApiError.already_exists(res, obj["metadata"]["name"])
            self._check_quota(res, obj)
            if dry_run:
                return obj
            stored = self._put(res, obj, None)
            if res.store == "nodes":
                self.allocate_pod_cidrs([self.nodes[key]])
            return stored

    def allocate_pod_cidrs(self, nodes) -> list:
        """kube-controller-manager's node IPAM (``services.nodeipam``): each of ``nodes`` without pod CIDRs is
        given the next free block, a change of its own after the node's creation (the controller's patch).
        Returns the nodes changed."""
        with self.lock:
            cidrs = nodeipam.CidrSet(c for n in self.nodes.values() for c in nodeipam.pod_cidrs(n.raw))
            changed = []
            for node in nodes:
                raw = cidrs.with_pod_cidr(node.raw)
                if raw is not node.raw:
                    self.update_node(Node(raw))
                    changed.append(self.nodes[node.name].raw)
            return changed

    def _check_quota(self, res, obj: dict, old: dict | None = None) -> None:
        """The cluster's object counts and bytes (``admitted.check_quota``), on a create or an update."""
        if res.store in admitted.QUOTA_RESOURCES:
            held = len(self.pods if res.store == "pods" else self.nodes if res.store == "nodes"
                       else self.extra[res.store])
        else:
            held = 0
        with admission.refusals(res, obj["metadata"]["name"]):
            admitted.check_quota(self.quota, res.store, held, self.bytes, obj, old)

    def _namespace_labels(self, namespace: str) -> dict:
        return ((self.extra["Namespace"].get(namespace) or {}).get("metadata") or {}).get("labels") or {}

    def _new_object(self, res, namespace: str, body: dict) -> dict:
        if not isinstance(body, dict):
            raise ApiError.bad_request("the body of the request was in an unknown format")
        meta = dict(body.get("metadata") or {})
        if res.namespaced:
            if meta.get("namespace") and namespace and meta["namespace"] != namespace:
                raise ApiError.bad_request("the namespace of the provided object does not match the namespace "
                                           "sent on the request")
            meta["namespace"] = namespace or meta.get("namespace") or "default"
            if meta["namespace"] not in self.extra["Namespace"]:
                raise ApiError.not_found(BY_STORE["Namespace"], meta["namespace"])
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = generate_name(meta["generateName"], random)
        created = rfc3339(self.clock.now())
        obj = dict(body, apiVersion=res.group_version, kind=res.kind, metadata=meta)
        with admission.refusals(res, meta.get("name") or ""):
            if res.kind == "Pod":
                return admitted.admit_pod(obj, self.extra["PriorityClass"], created, self.features).raw
            if res.kind == "Node":
                if self.kubelet and self.kubelet_version:
                    obj = kubelet_node(obj, self.kubelet_version)
                return admitted.admit_node(obj, created, self.features).raw
            obj = admitted.admit_object(res.kind, obj, created, self.features)
            if res.kind in ("ResourceClaim", "ResourceClaimTemplate"):
                admitted.check_admin_access(res.kind, obj, self._namespace_labels(meta["namespace"]))
        obj["metadata"] = admitted.server_metadata(meta, created)
        if res.group == "events.k8s.io":
            admission.admit_events_v1(res, obj)
            obj = admission.event_to_core(obj)
        if res.kind == "Namespace":
            obj = self._namespace_defaults(obj, created)
        elif res.kind == "PriorityClass":
            admission.admit_priority_class(res, obj)
        elif res.kind == "PersistentVolume":
            obj["status"] = dict(obj.get("status") or {"phase": "Available"})
        elif res.kind == "PersistentVolumeClaim":
            obj["status"] = dict(obj.get("status") or {"phase": "Pending"})
        return obj

    def update(self, res, namespace: str, name: str, body: dict, subresource: str = "",
               dry_run: bool = False) -> dict:
        """PUT (also the last step of PATCH): optimistic concurrency on resourceVersion; the main resource keeps
        the old status and the status subresource keeps everything else."""
        with self.lock:
            key = f"{namespace}/{name}" if res.namespaced else name
            old = self.get(res.store, key)
            if old is None:
                raise ApiError.not_found(res, name)
            if not isinstance(body, dict):
                raise ApiError.bad_request("the body of the request was in an unknown format")
            meta = dict(body.get("metadata") or {})
            if meta.get("name") and meta["name"] != name:
                raise ApiError.bad_request(f"the name of the object ({meta['name']}) does not match the name on "
                                           f"the URL ({name})")
            if res.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
                raise ApiError.bad_request("the namespace of the provided object does not match the namespace "
                                           "sent on the request")
            old_meta = old.get("metadata") or {}
            if meta.get("resourceVersion") and meta["resourceVersion"] != old_meta.get("resourceVersion"):
                raise ApiError.modified(res, name)
            if meta.get("uid") and meta["uid"] != old_meta.get("uid"):
                raise ApiError.conflict(res, name, f"Precondition failed: UID in precondition: {meta['uid']}, "
                                                   f"UID in object meta: {old_meta.get('uid', '')}")
            if res.group == "events.k8s.io":
                body = admission.event_to_core(dict(body, metadata=meta))
            if subresource == "status":
                new = dict(old, status=body.get("status") or {})
            else:
                meta["name"] = name
                new = dict(body, apiVersion=old.get("apiVersion") or res.group_version,
                           kind=old.get("kind") or res.kind, metadata=admitted.kept_metadata(old, {"metadata": meta}))
                if res.status:
                    new.pop("status", None)
                    if "status" in old:
                        new["status"] = old["status"]
                if res.kind == "Namespace":
                    new = self._namespace_defaults(new, old_meta.get("creationTimestamp", ""))
            new["metadata"] = dict(new.get("metadata") or {}, resourceVersion=old_meta.get("resourceVersion", ""))
            with admission.refusals(res, name):
                if res.kind == "Pod":
                    new = admitted.admit_pod_update(old, new, self.features).raw
                elif res.kind == "Node":
                    new = admitted.admit_node_update(old, new, self.features).raw
                else:
                    new = admitted.admit_object(res.kind, new, rfc3339(self.clock.now()), self.features)
                    if res.kind == "ResourceClaim" and subresource == "status":
                        admitted.check_admin_access(res.kind, new, self._namespace_labels(namespace), old)
            if new == old or dry_run:
                return old if new == old else new
            self._check_quota(res, new, old)
            return self._put(res, new, old)

    def delete(self, res, namespace: str, name: str, preconditions: dict | None = None,
               dry_run: bool = False) -> dict:
        """DELETE: immediate (there are no kubelets to wait for); namespaces take their objects with them."""
        with self.lock:
            key = f"{namespace}/{name}" if res.namespaced else name
            old = self.get(res.store, key)
            if old is None:
                raise ApiError.not_found(res, name)
            old_meta = old.get("metadata") or {}
            pre = preconditions or {}
            if pre.get("uid") and pre["uid"] != old_meta.get("uid"):
                raise ApiError.conflict(res, name, f"Precondition failed: UID in precondition: {pre['uid']}, "
                                                   f"UID in object meta: {old_meta.get('uid', '')}")
            if pre.get("resourceVersion") and pre["resourceVersion"] != old_meta.get("resourceVersion"):
                raise ApiError.conflict(res, name, f"Precondition failed: ResourceVersion in precondition: "
                                                   f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                                                   f"{old_meta.get('resourceVersion', '')}")
            if res.kind == "Namespace" and name in PROTECTED_NAMESPACES:
                raise ApiError.forbidden(res, name, "this namespace may not be deleted")
            if dry_run:
                return old
            if res.kind == "Namespace":
                self._empty_namespace(name)
            return self._drop(res, key, old)

    def _empty_namespace(self, namespace: str) -> None:
        for res in BY_STORE.values():
            if not res.namespaced:
                continue
            for obj in self.items(res.store):
                if (obj.get("metadata") or {}).get("namespace", "default") == namespace:
                    self._drop(res, meta_key(obj, True), obj)

    def bind_pod(self, res, namespace: str, name: str, binding: dict) -> None:
        """pods/binding (and the bindings resource): spec.nodeName and PodScheduled=True, once."""
        with self.lock:
            target = (binding or {}).get("target") or {}
            if target.get("kind") not in (None, "", "Node") or not target.get("name"):
                field, msg = (("target.kind", f'Unsupported value: "{target.get("kind")}": supported values: '
                                              '"Node", "<empty>"') if target.get("name")
                              else ("target.name", "Required value"))
                raise ApiError.invalid(BY_STORE["pods"], name, [(field, "FieldValueInvalid", msg)])
            pod = self.pods.get(f"{namespace}/{name}")
            if pod is None:
                raise ApiError.not_found(res, name)
            uid = ((binding or {}).get("metadata") or {}).get("uid")
            if uid and uid != pod.uid:
                raise ApiError.conflict(res, name, f"Precondition failed: UID in precondition: {uid}, UID in object "
                                                   f"meta: {pod.uid}", qualified="pods/binding")
            if pod.deletion_timestamp:
                raise ApiError.conflict(res, name, f"pod {name} is being deleted, cannot be assigned to a host",
                                        qualified="pods/binding")
            if pod.node_name:
                raise ApiError.conflict(res, name, f'pod {name} is already assigned to node "{pod.node_name}"',
                                        qualified="pods/binding")
            try:
                self.bind(pod, target["name"])
            except ClusterError as err:  # cannot happen after the checks above; kept as the simulator's answer
                raise ApiError.conflict(res, name, str(err), qualified="pods/binding") from None
            if self.kubelet:   # then the node's kubelet reports the pod running, a change of its own
                bound, node = self.pods[pod.key], self.nodes.get(target["name"])
                status = running_status(bound.raw, node.raw if node is not None else None, target["name"],
                                        self.clock.now())
                self.update_pod(dict(bound.raw, status=status))

    def evict_pod(self, res, namespace: str, name: str, eviction: dict, dry_run: bool = False) -> None:
        """pods/eviction (EvictionREST.Create): delete the pod unless its PodDisruptionBudget allows no
        disruption (429); a pending or terminal pod is deleted without looking at budgets."""
        meta = (eviction or {}).get("metadata") or {}
        if meta.get("name") != name:
            raise ApiError.bad_request("name in URL does not match name in Eviction object")
        options = (eviction or {}).get("deleteOptions") or {}
        dry_run = dry_run or "All" in (options.get("dryRun") or ())
        preconditions = dict(options.get("preconditions") or {})
        with self.lock:
            pod = self.get("pods", f"{namespace}/{name}")
            if pod is None:
                raise ApiError.not_found(res, name)
            phase = (pod.get("status") or {}).get("phase", "")
            terminal_or_pending = phase in ("Succeeded", "Failed", "Pending")
            deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
            if terminal_or_pending or deleting:
                if phase not in ("Succeeded", "Failed") and not deleting:
                    preconditions.setdefault("resourceVersion", pod["metadata"].get("resourceVersion"))
                self.delete(res, namespace, name, preconditions, dry_run)
                return
            pdbs = self._budgets_of(pod)
            if len(pdbs) > 1:
                raise ApiError(500, "", "This pod has more than one PodDisruptionBudget, which the eviction "
                                        "subresource does not support.")
            if pdbs:
                pdb = pdbs[0]
                status = pdb.get("status") or {}
                ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                            for c in (pod.get("status") or {}).get("conditions") or ())
                desired = int(status.get("desiredHealthy") or 0)
                if not ready and int(status.get("currentHealthy") or 0) >= desired > 0:
                    preconditions.setdefault("resourceVersion", pod["metadata"].get("resourceVersion"))
                else:
                    self._take_disruption(pdb, name, dry_run)
            self.delete(res, namespace, name, preconditions, dry_run)

    def _budgets_of(self, pod: dict) -> list:
        """The PDBs of the pod's namespace whose selector matches it (a nil or empty selector matches nothing)."""
        labels = (pod.get("metadata") or {}).get("labels") or {}
        namespace = pod["metadata"].get("namespace") or "default"
        return [raw for raw in self.items("PodDisruptionBudget")
                if PDB(raw).namespace == namespace and PDB(raw).selector is not None
                and PDB(raw).selector.matches(labels)]

    def _take_disruption(self, pdb: dict, pod_name: str, dry_run: bool) -> None:
        """checkAndDecrement: 429 when the budget allows no disruption, else one fewer and the pod noted."""
        meta, status = pdb.get("metadata") or {}, dict(pdb.get("status") or {})
        name = meta.get("name", "")
        if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
            raise ApiError.too_many_requests(
                "Cannot evict pod as it would violate the pod's disruption budget.", 10,
                f"The disruption budget {name} is still being processed by the server.")
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise ApiError.forbidden(PDB_RESOURCE, name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise ApiError.forbidden(PDB_RESOURCE, name, "DisruptedPods map too big - too many evictions not "
                                                         "confirmed by PDB controller")
        if allowed == 0:
            raise ApiError.too_many_requests(
                "Cannot evict pod as it would violate the pod's disruption budget.", 0,
                f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} healthy pods and "
                f"has {int(status.get('currentHealthy') or 0)} currently")
        if dry_run:
            return
        status["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            status["conditions"] = _set_pdb_condition(status.get("conditions") or [], status,
                                                      rfc3339(self.clock.now()))
        status["disruptedPods"] = dict(status.get("disruptedPods") or {}, **{pod_name: rfc3339(self.clock.now())})
        res = BY_STORE["PodDisruptionBudget"]
        self.update(res, meta.get("namespace") or "default", name, dict(pdb, status=status), "status")

    # -- an in-process scheduler's events become API Events ------------------------------------
    def record_event(self, obj, event_type: str, reason: str, action: str, message: str, related=None) -> None:
        super().record_event(obj, event_type, reason, action, message, related)
        with self.lock:
            raw = getattr(obj, "raw", {}) or {}
            meta = raw.get("metadata") or {}
            kind = type(obj).__name__
            regarding = {"kind": kind, "apiVersion": "v1", "name": meta.get("name", ""), "uid": meta.get("uid", ""),
                         "resourceVersion": meta.get("resourceVersion", "")}
            if kind == "Pod":
                regarding["namespace"] = meta.get("namespace") or "default"
            rel = None
            if related is not None:
                rmeta = (getattr(related, "raw", {}) or {}).get("metadata") or {}
                rel = {"kind": type(related).__name__, "apiVersion": "v1", "name": rmeta.get("name", ""),
                       "namespace": rmeta.get("namespace", ""), "uid": rmeta.get("uid", "")}
            ev = event_object(regarding["name"], regarding, event_type, reason, action, message,
                              getattr(obj, "scheduler_name", "") or "default-scheduler", self.clock.now(), rel)
            self._put(BY_STORE["Event"], ev, None)
