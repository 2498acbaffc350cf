"""The DynamicResources plugin (dynamicresources.go), v1.36: a pod's ResourceClaims read at PreFilter, their
devices allocated per node by the structured allocator at Filter, firstAvailable choices scored, the allocation
assumed at Reserve and written to the claim (finalizer, ``status.allocation``, ``status.reservedFor``) at PreBind;
claims the pod holds but cannot use are deallocated by PostFilter. A pod without claims is skipped by Filter,
scores 0 and gets the PostFilter text "no new claims to deallocate". Weight 2 in the default profile from 1.34
(DynamicResourceAllocation GA)."""
from __future__ import annotations

import copy
import hashlib
import uuid
from itertools import compress
from operator import is_not

import numpy as np

from ...dra.allocator import (FIRST_AVAILABLE_MAX_SIZE, AllocatedState, AllocationCache, AllocationError, Allocator,
                              FailedOnNode, SelectorCache, claim_key)
from ...dra.claims import DELETE_PROTECTION_FINALIZER, ClaimLookupError, pod_claims, pod_uid
from ...dra.extended import (EXTENDED_CLAIM_ANNOTATION, SPECIAL_CLAIM_NAME, class_for_resource,
                             is_dra_extended_resource_name, requests_and_mappings)
from ...dra.validation import claim_status_errors
from ...framework.handle import features_of, queueing_hints_of
from ...framework.interface import (MAX_NODE_SCORE, QUEUE, QUEUE_SKIP, FilterPlugin, PostFilterPlugin, PreBindPlugin,
                                    PreEnqueuePlugin, PreFilterPlugin, ReservePlugin, ScoreExtensions, ScorePlugin)
from ...framework.status import Code, Status
from ...framework import signers
from ...objects.field import aggregate
from ...objects.selectors import NodeSelector
from ..helper import default_normalize_score, default_normalize_score_array
from .. import names
from .claims import ClaimStore

STATE_KEY = names.DYNAMIC_RESOURCES
NOT_FOUND = "not found"   # fwk.ErrNotFound: CycleState.Read of a key no PreFilter wrote
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"


class StateData:
    """stateData: the pod's claims, where allocated ones can be used, the allocator and its per-node results.
    Shared by clones of the cycle state (kube guards it with a mutex)."""

    __slots__ = ("claims", "available_on", "allocator", "node_allocations", "unavailable", "extended_resources",
                 "extended_claim", "_to_allocate")

    def __init__(self, claims: ClaimStore):
        self.claims = claims
        self.available_on = []                     # per claim: NodeSelector of an allocated claim, or None
        self.allocator = None
        # node name -> ([allocation result per claim to allocate], the node's extended-resource claim, mappings)
        self.node_allocations = {}
        self.unavailable = set()                   # claim indices not usable on some node
        self.extended_resources = {}               # DRA-backed extended resources the pod requests
        self.extended_claim = None                 # the extended-resource claim as Reserve assumed it
        self._to_allocate = None

    def clone(self):
        return self

    def to_allocate(self):
        """(index, claim) of the claims without an allocation (the claims are fixed once PreFilter set them)."""
        if self._to_allocate is None or self._to_allocate[0] is not self.claims:
            self._to_allocate = (self.claims, [(i, c) for i, c in self.claims.all()
                                               if not (c.get("status") or {}).get("allocation")])
        return self._to_allocate[1]


def _state(state):
    """getStateData: the PreFilter state, or None when PreFilter did not run (an earlier PreFilter rejected)."""
    return state.get(STATE_KEY)


def _uu(reason: str) -> Status:
    """statusUnschedulable: UnschedulableAndUnresolvable."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def reserved_for_pod(pod, claim) -> bool:
    return any(r.get("uid") == pod.uid for r in (claim.get("status") or {}).get("reservedFor") or ())


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, ScorePlugin,
                       ScoreExtensions, ReservePlugin, PreBindPlugin):
    name = names.DYNAMIC_RESOURCES

    def __init__(self, enabled: bool, features=None, handle=None):
        self.enabled = enabled
        self.features = features
        self.handle = handle
        # the claim tracker's in-flight allocations: claim key -> the claim as assumed (allocated, reserved)
        self.in_flight = {}
        self.selector_cache = SelectorCache()   # kube's cel.Cache, with the results per device as well
        self.allocation_cache = AllocationCache()
        # allocated_state: the state, and the claims it holds (key -> claim)
        self._allocated = AllocatedState()
        self._tracked_claims = {}

    @classmethod
    def new(cls, args, handle):
        """New: a disabled plugin (every extension point a no-op) without the DynamicResourceAllocation gate."""
        features = features_of(handle)
        if not features.enabled("DynamicResourceAllocation"):
            return cls(False)
        return cls(True, features, handle)

    def events_to_register(self):
        if not self.enabled:
            return ()
        if not queueing_hints_of(self.handle):
            return (("Node", ("Add", "UpdateNodeLabel", "UpdateNodeAllocatable")),
                    ("ResourceClaim", ("Add", "Update")), ("DeviceClass", ("Add", "Update")),
                    ("ResourceSlice", ("Add", "Update")))
        return (("Node", ("Add", "UpdateNodeLabel", "UpdateNodeAllocatable")),
                ("ResourceClaim", ("Add", "Update"), self.is_schedulable_after_claim_change),
                ("Pod", ("UpdatePodGeneratedResourceClaim",), self.is_schedulable_after_pod_change),
                ("DeviceClass", ("Add", "Update")), ("ResourceSlice", ("Add", "Update")))

    def is_schedulable_after_claim_change(self, pod, old, new):
        """A claim the pod uses that is new or whose status changed; any claim deallocated (its devices are free
        for every pod)."""
        try:
            uses = any(c.get("metadata", {}).get("uid") == (new.get("metadata") or {}).get("uid")
                       for _name, c in pod_claims(pod.raw, self.claims_view()))
        except ClaimLookupError:
            return QUEUE_SKIP
        if old is not None and (old.get("status") or {}).get("allocation") and \
                not (new.get("status") or {}).get("allocation"):
            return QUEUE
        if not uses:
            return QUEUE_SKIP
        if old is None:
            return QUEUE
        return QUEUE_SKIP if (old.get("status") or {}) == (new.get("status") or {}) else QUEUE

    def is_schedulable_after_pod_change(self, pod, old, new):
        """The pod's own claims were created (its generated claims' statuses changed) and can all be found."""
        if pod.uid != new.uid:
            return QUEUE_SKIP
        try:
            pod_claims(new.raw, self.claims_view())
        except ClaimLookupError:
            return QUEUE_SKIP
        return QUEUE

    # -- the claim tracker --------------------------------------------------------------------------
    def _objects(self):
        return self.handle.objects if self.handle is not None and self.handle.snapshot is not None else None

    def claims_view(self) -> dict:
        """Every ResourceClaim as the scheduler sees it: the informer's, with in-flight allocations laid over."""
        objects = self._objects()
        claims = dict(objects.resource_claims) if objects is not None else {}
        for key, claim in list(self.in_flight.items()):
            stored = claims.get(key)
            if stored is not None and (stored.get("status") or {}).get("allocation"):
                del self.in_flight[key]    # the write is visible: the assumption is no longer needed
                continue
            claims[key] = claim
        return claims

    def allocated_state(self, claims: dict) -> AllocatedState:
        """The devices the claims' allocations hold. One state follows the claims from cycle to cycle: only the
        claims added, replaced or gone since the last call are added or taken out (compared by identity: the
        cluster and the in-flight map replace a claim they change, never edit it)."""
        tracked, state = self._tracked_claims, self._allocated
        if len(tracked) == len(claims) and list(tracked) == list(claims):   # the same keys in the same order
            for key in list(compress(claims, map(is_not, tracked.values(), claims.values()))):
                self._allocation_changed(state, tracked[key], claims[key])
                tracked[key] = claims[key]
            return state
        for key in tracked.keys() - claims.keys():
            self._allocation_changed(state, tracked[key], None)
        for key, claim in claims.items():
            old = tracked.get(key)
            if old is not claim:
                self._allocation_changed(state, old, claim)
        self._tracked_claims = dict(claims)
        return state

    @staticmethod
    def _allocation_changed(state: AllocatedState, old, new) -> None:
        for claim, change in ((old, state.remove_allocation), (new, state.add_allocation)):
            allocation = ((claim or {}).get("status") or {}).get("allocation")
            if allocation:
                change(allocation)

    # -- PreEnqueue, PreFilter, Filter, PostFilter -------------------------------------------
    def pre_enqueue(self, pod):
        if not self.enabled:
            return None
        try:
            pod_claims(pod.raw, self.claims_view())
        except ClaimLookupError as err:
            return _uu(str(err))
        return None

    def pre_filter(self, state, pod):
        if not self.enabled:
            return None, Status(Code.SKIP)
        s = StateData(ClaimStore())
        state.write(STATE_KEY, s)
        if not (pod.raw.get("spec") or {}).get("resourceClaims") and not self._may_use_extended_resources(pod):
            return None, Status(Code.SKIP)
        claims_view = self.claims_view()
        try:
            user_claims = [c for _name, c in pod_claims(pod.raw, claims_view)]
        except ClaimLookupError as err:
            return None, _uu(str(err))
        extended_claim = self._pre_filter_extended_resources(pod, s, claims_view)
        claims = ClaimStore(user_claims, extended_claim)
        if claims.empty():
            return None, Status(Code.SKIP)
        objects = self._objects()
        classes = objects.device_classes if objects is not None else {}
        available_on = [None] * len(claims)
        to_allocate = 0
        for index, claim in claims.all():
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation:
                if allocation.get("nodeSelector") is not None:
                    available_on[index] = NodeSelector(allocation["nodeSelector"], "nodeSelector")
                continue
            to_allocate += 1
            if claim is extended_claim:
                continue
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
                if request.get("exactly") is not None:
                    st = _validate_class(classes, (request["exactly"] or {}).get("deviceClassName", ""),
                                         request.get("name", ""))
                elif request.get("firstAvailable"):
                    st = None
                    for sub in request["firstAvailable"]:
                        st = st or _validate_class(classes, sub.get("deviceClassName", ""),
                                                   f'{request.get("name", "")}/{sub.get("name", "")}')
                else:
                    st = _uu(f"resource claim {claim_key(claim)}, request {request.get('name', '')}: "
                             f"unknown request type")
                if st is not None:
                    return None, st
        if to_allocate:
            slices = objects.resource_slices.values() if objects is not None else ()
            s.allocator = Allocator(self.allocated_state(claims_view), classes, slices, self.selector_cache,
                                    self.allocation_cache)
        s.claims, s.available_on = claims, available_on   # set last: a rejected pod has no claims in its state
        return None, None

    def pre_filter_extensions(self):
        return None

    def _may_use_extended_resources(self, pod) -> bool:
        return self.features.enabled("DRAExtendedResource") and any(
            v and is_dra_extended_resource_name(k) for k, v in pod.requests.items())

    def _pre_filter_extended_resources(self, pod, s: StateData, claims_view: dict):
        """preFilterExtendedResources: the pod's extended-resource claim (an existing one it owns, else an
        in-memory one) when it requests a resource some DeviceClass backs."""
        if not self.features.enabled("DRAExtendedResource"):
            return None
        objects = self._objects()
        classes = objects.device_classes if objects is not None else {}
        if not any(v and is_dra_extended_resource_name(k) and class_for_resource(classes, k) is not None
                   for k, v in pod.requests.items()):
            return None
        s.extended_resources = {k: v for k, v in pod.requests.items() if is_dra_extended_resource_name(k)}
        for claim in claims_view.values():
            meta = claim.get("metadata") or {}
            if (meta.get("annotations") or {}).get(EXTENDED_CLAIM_ANNOTATION) != "true":
                continue
            if any(o.get("name") == pod.name and o.get("controller") and o.get("uid") == pod.uid
                   for o in meta.get("ownerReferences") or ()):
                return claim
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": SPECIAL_CLAIM_NAME, "namespace": pod.namespace,
                             "generateName": f"{pod.name}-extended-resources-",
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name,
                                                  "uid": pod.uid, "controller": True}],
                             "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"}},
                "spec": {}}

    def _filter_extended_resources(self, s: StateData, pod, node):
        """filterExtendedResources: (the node's extended-resource claim or None, request mappings, status)."""
        claim = s.claims.extended_resource_claim()
        if claim is None:
            return None, None, None
        if ((claim.get("spec") or {}).get("devices") or {}).get("requests") is not None:
            return None, None, _uu("cannot schedule extended resource claim")
        objects = self._objects()
        classes = objects.device_classes if objects is not None else {}
        wanted = {}
        for name, amount in s.extended_resources.items():
            if not amount:
                continue
            if class_for_resource(classes, name) is not None and node.allocatable.get(name, 0) == 0:
                wanted[name] = amount
            elif name not in node.allocatable:
                return None, None, _uu("cannot fit resource")
        if s.claims.no_user_claim() and not wanted:
            return None, None, None
        if (claim.get("status") or {}).get("allocation"):
            return None, None, None
        requests, mappings = requests_and_mappings(pod.raw, wanted, classes)
        node_claim = copy.deepcopy(claim)
        node_claim.setdefault("spec", {})["devices"] = {"requests": requests}
        return node_claim, mappings, None

    def filter(self, state, pod, node_info):
        if not self.enabled:
            return None
        s = _state(state)
        if s is None:
            return Status.error(NOT_FOUND)
        if s.claims.empty():
            return None
        node = node_info.node
        node_claim, mappings, st = self._filter_extended_resources(s, pod, node)
        if st is not None:
            return st
        if node_claim is None and s.claims.no_user_claim():
            return None
        extended = s.claims.extended_resource_claim()
        unavailable = [i for i, _c in s.claims.all()
                       if s.available_on[i] is not None and not s.available_on[i].matches(node.labels, node.name)]
        allocations = None
        if s.allocator is not None:
            try:
                allocations = s.allocator.allocate(node, [node_claim if c is extended and node_claim is not None
                                                          else c for _i, c in s.to_allocate()])
            except FailedOnNode as err:
                return _uu(str(err))
            except AllocationError as err:
                return Status.error(str(err))
            if allocations is None:
                return _uu(CANNOT_ALLOCATE)
        if unavailable:
            s.unavailable.update(unavailable)
            return _uu(NOT_AVAILABLE)
        if s.allocator is not None:
            s.node_allocations[node.name] = (allocations, node_claim, mappings)
        return None

    def filter_batch_statuses(self, state, pod, table, rows):
        """Filter over NodeTable rows for a pod without an extended-resource claim, in one loop: per row -1 (the
        claims fit) or the index of its (code, reasons); None (each row's ``filter`` then) for the other pods
        and when a node gives an allocation error."""
        s = _state(state) if self.enabled else None
        if s is None or s.claims.empty() or s.claims.extended_resource_claim() is not None:
            return None
        restricted = [(i, sel) for i, sel in enumerate(s.available_on) if sel is not None]
        claims = [c for _i, c in s.to_allocate()]
        allocate = s.allocator.allocate if s.allocator is not None else None
        kinds = np.full(len(rows), -1, np.int8)
        statuses, kind_of = [], {}
        infos = table.infos
        for j, r in enumerate(rows):
            node = infos[r].node
            reason, allocations = None, None
            if allocate is not None:
                try:
                    allocations = allocate(node, claims)
                except FailedOnNode as err:
                    reason = str(err)
                except AllocationError:
                    return None
                else:
                    if allocations is None:
                        reason = CANNOT_ALLOCATE
            if reason is None:
                unavailable = [i for i, sel in restricted if not sel.matches(node.labels, node.name)]
                if unavailable:
                    s.unavailable.update(unavailable)
                    reason = NOT_AVAILABLE
                elif allocate is not None:
                    s.node_allocations[node.name] = (allocations, None, None)
            if reason is not None:
                k = kind_of.get(reason)
                if k is None:
                    k = kind_of[reason] = len(statuses)
                    statuses.append((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,)))
                kinds[j] = k
        return kinds, statuses

    def post_filter(self, state, pod, node_statuses):
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE, "plugin disabled")
        s = _state(state)
        if s is None:
            return None, Status.error(NOT_FOUND)
        if s.claims.empty():
            return None, Status(Code.UNSCHEDULABLE, "no new claims to deallocate")
        extended = s.claims.extended_resource_claim()
        special = extended is not None and (extended.get("metadata") or {}).get("name") == SPECIAL_CLAIM_NAME
        for index in sorted(s.unavailable):
            claim = s.claims.claims[index]
            if claim is extended:
                if not special:
                    break
                continue
            reserved = (claim.get("status") or {}).get("reservedFor") or ()
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                released = copy.deepcopy(claim)
                status = released.setdefault("status", {})
                for k in ("reservedFor", "allocation", "devices"):
                    status.pop(k, None)
                st = self._write_claim(released)
                if st is not None:
                    return None, st
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        if extended is not None and not special:
            st = self._delete_claim(extended)
            if st is not None:
                return None, st
            return None, Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
        return None, Status(Code.UNSCHEDULABLE, "still not schedulable")

    # -- Score --------------------------------------------------------------------------------
    def score(self, state, pod, node_info):
        if not self.enabled or not self.features.enabled("DRAPrioritizedList"):
            return 0, None
        s = _state(state)
        if s is None:
            return 0, Status.error(NOT_FOUND)
        if s.claims.empty():
            return 0, None
        found = s.node_allocations.get(node_info.name)
        if found is None:
            return 0, None
        return compute_score(s.claims, found[0])

    def score_batch(self, state, pod, table, rows):
        """A pod without claims, or whose claims have no firstAvailable request (computeScore adds only for
        chosen subrequests), scores 0 on every node."""
        s = _state(state) if self.enabled else None
        if self.enabled and (s is None or any(
                req.get("firstAvailable") for _i, c in s.claims.all()
                for req in ((c.get("spec") or {}).get("devices") or {}).get("requests") or ())):
            return None
        return np.zeros(len(rows), np.int64)

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        if not self.enabled:
            return None
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_score_batch(self, state, pod, scores):
        if not self.enabled:
            return scores
        return default_normalize_score_array(MAX_NODE_SCORE, False, scores)

    # -- Reserve, Unreserve, PreBind ----------------------------------------------------------
    def reserve(self, state, pod, node_name):
        if not self.enabled:
            return None
        s = _state(state)
        if s is None:
            return Status.error(NOT_FOUND)
        if s.claims.empty() or s.allocator is None:
            return None
        extended = s.claims.extended_resource_claim()
        to_allocate = s.to_allocate()
        found = s.node_allocations.get(node_name)
        if found is None or not found[0]:
            if all(c is extended for _i, c in to_allocate):
                return None   # only the extended-resource claim, which this node does not need
            return Status.error("claim allocation not found for node")
        allocations, node_claim, mappings = found
        if len(allocations) != len(to_allocate):
            return Status.error(f"internal error, have {len(allocations)} allocations, {len(to_allocate)} claims "
                                f"to allocate, want {len(to_allocate)} claims")
        for (_i, claim), allocation in zip(to_allocate, allocations):
            if claim is extended:
                if node_claim is None:
                    continue   # the node offers the resources itself
                assumed = copy.deepcopy(node_claim if node_claim is not None else claim)
                meta = assumed["metadata"]
                if meta.get("name") == SPECIAL_CLAIM_NAME:
                    meta["name"] = meta.pop("generateName") + _suffix(pod_uid(pod.raw))
                assumed.setdefault("status", {})["allocation"] = _with_share_ids(allocation)
                s.extended_claim = (assumed, mappings)
                self.in_flight[claim_key(assumed)] = assumed
                continue
            assumed = copy.deepcopy(claim)
            status = assumed.setdefault("status", {})
            status["allocation"] = _with_share_ids(allocation)
            self.in_flight[claim_key(claim)] = assumed
        return None

    def unreserve(self, state, pod, node_name):
        if not self.enabled:
            return None
        s = _state(state)
        if s is None or s.claims.empty():
            return None
        for _i, claim in s.to_allocate():
            self.in_flight.pop(claim_key(claim), None)
        if s.extended_claim is not None:
            self.in_flight.pop(claim_key(s.extended_claim[0]), None)
            s.extended_claim = None
        return None

    def pre_bind_pre_flight(self, state, pod, node_name):
        """PreBind acts when the pod has claims."""
        if not self.enabled:
            return Status(Code.SKIP)
        s = _state(state)
        if s is None:
            return Status.error(NOT_FOUND)
        return Status(Code.SKIP) if s.claims.empty() else None

    def pre_bind(self, state, pod, node_name):
        if not self.enabled:
            return None
        s = _state(state)
        if s is None:
            return Status.error(NOT_FOUND)
        if s.claims.empty():
            return None
        extended = s.claims.extended_resource_claim()
        for _i, claim in s.claims.all():
            if claim is extended:
                if s.extended_claim is None:
                    continue   # no devices were needed on this node
                claim = s.extended_claim[0]
            key = claim_key(claim)
            current = self.in_flight.get(key, claim)
            if reserved_for_pod(pod, current) and (current.get("status") or {}).get("allocation"):
                continue
            bound = copy.deepcopy(current)
            meta = bound.setdefault("metadata", {})
            if DELETE_PROTECTION_FINALIZER not in (meta.get("finalizers") or ()):
                meta["finalizers"] = list(meta.get("finalizers") or ()) + [DELETE_PROTECTION_FINALIZER]
            status = bound.setdefault("status", {})
            status["reservedFor"] = list(status.get("reservedFor") or ()) + [
                {"resource": "pods", "name": pod.name, "uid": pod.uid}]
            allocating = key in self.in_flight
            st = self._write_claim(bound, "add allocation and reservation" if allocating else "add reservation")
            if st is not None:
                return st
            self.in_flight.pop(key, None)
        return None

    def _delete_claim(self, claim: dict):
        client = self.handle.client if self.handle is not None else None
        if client is not None and hasattr(client, "delete_object"):
            try:
                client.delete_object("ResourceClaim", claim)
            except Exception as err:   # the client's error, reported as kube reports an API error
                return Status.error(f"delete resourceclaim {claim_key(claim)}: {err}")
            return None
        objects = self._objects()
        if objects is not None:
            objects.resource_claims.pop(claim_key(claim), None)
        return None

    def _write_claim(self, claim: dict, what: str | None = None):
        """Write a claim (with its status) through the cluster client, or into the objects of a one-pass run; a
        status the apiserver's validation refuses (more than 256 consumers) fails as kube's UpdateStatus does.
        ``what``: the write as kube's error names it ("add reservation", ...; None: the API error alone)."""
        prefix = f"{what} to claim {claim_key(claim)}: " if what else ""
        errs = claim_status_errors(claim)
        if errs:
            name = (claim.get("metadata") or {}).get("name")
            return Status.error(f'{prefix}ResourceClaim.resource.k8s.io "{name}" is invalid: {aggregate(errs)}')
        client = self.handle.client if self.handle is not None else None
        if client is not None and hasattr(client, "update_object"):
            try:
                client.update_object("ResourceClaim", claim)
            except Exception as err:   # the client's error, reported as kube reports an API error
                return Status.error(f"{prefix}{err}")
            return None
        objects = self._objects()
        if objects is not None:
            objects.resource_claims[claim_key(claim)] = claim
        self.in_flight.pop(claim_key(claim), None)
        return None

    def sign_pod(self, pod):
        """A pod with resource claims has no signature (whether a claim stays on one host is not known)."""
        if (pod.raw.get("spec") or {}).get("resourceClaims"):
            return signers.unsignable("pods with dra resource claims are not signable")
        return [], None


def _validate_class(classes: dict, class_name: str, request_name: str):
    if not class_name:
        return Status.error(f"request {request_name}: unsupported request type")
    if class_name not in classes:
        return _uu(f"request {request_name}: device class {class_name} does not exist")
    return None


def _suffix(seed: str) -> str:
    """A generateName suffix (five of kube's name characters), derived from the pod so runs repeat."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:5])


def _with_share_ids(allocation: dict) -> dict:
    out = copy.deepcopy(allocation)
    for r in out["devices"]["results"]:
        if "shareID" in r:
            r["shareID"] = str(uuid.uuid4())
    return out


def compute_score(claims: ClaimStore, allocations: list):
    """computeScore: for each allocated firstAvailable subrequest, 8 minus its index."""
    score, unallocated = 0, 0
    for _i, claim in claims.all():
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            if unallocated >= len(allocations):
                return 0, Status.error(f"number of allocations {len(allocations)} is smaller than number of "
                                       f"claims needing allocation")
            allocation = allocations[unallocated]
            unallocated += 1
        chosen = {r.get("request") for r in (allocation.get("devices") or {}).get("results") or ()
                  if "/" in (r.get("request") or "")}
        for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            if req.get("exactly") is not None:
                continue
            for i, sub in enumerate(req.get("firstAvailable") or ()):
                if f'{req.get("name")}/{sub.get("name")}' in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score, None
