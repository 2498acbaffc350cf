"""The DynamicResources plugin (dynamicresources.go), v1.36: a pod's ResourceClaims read at PreFilter, their
devices allocated per node by the structured allocator at Filter, firstAvailable choices scored, the allocation
assumed at Reserve and written to the claim (finalizer, ``status.allocation``, ``status.reservedFor``) at PreBind,
its updates retried on conflicts as client-go's RetryOnConflict does; claims the pod holds but cannot use are
deallocated by PostFilter. Extended resources backed by a DeviceClass get a claim of their own, created at PreBind
(generateName ``<pod>-extended-resources-``) and named in the pod's ``status.extendedResourceClaimStatus``. A pod
without claims is skipped by Filter, scores 0 and gets the PostFilter text "no new claims to deallocate". Weight 2
in the default profile from 1.34 (DynamicResourceAllocation GA)."""
from __future__ import annotations

import copy
import datetime
import logging
import random
import time
import uuid
from itertools import compress
from operator import is_not

import numpy as np

from ...cluster.simulated import ClusterError
from ...dra.allocator import (FIRST_AVAILABLE_MAX_SIZE, AllocatedState, AllocationCache, AllocationError, Allocator,
                              FailedOnNode, SelectorCache, claim_key)
from ...dra.claims import DELETE_PROTECTION_FINALIZER, ClaimLookupError, pod_claims
from ...dra.extended import (EXTENDED_CLAIM_ANNOTATION, SPECIAL_CLAIM_NAME, class_for_resource,
                             is_dra_extended_resource_name, requests_and_mappings)
from ...dra.validation import claim_status_errors
from ...framework.handle import features_of, queueing_hints_of
from ...framework.interface import (MAX_NODE_SCORE, QUEUE, QUEUE_SKIP, FilterPlugin, PostFilterPlugin, PreBindPlugin,
                                    PreEnqueuePlugin, PreFilterPlugin, ReservePlugin, ScoreExtensions, ScorePlugin)
from ...framework.status import Code, Status
from ...framework import signers
from ...objects.field import aggregate
from ...objects.identifiers import generate_name
from ...objects.selectors import NodeSelector
from ..helper import default_normalize_score, default_normalize_score_array
from .. import names
from .claims import ClaimStore

STATE_KEY = names.DYNAMIC_RESOURCES
NOT_FOUND = "not found"   # fwk.ErrNotFound: CycleState.Read of a key no PreFilter wrote
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
CONFLICT = 409
RETRY_STEPS, RETRY_SECONDS = 5, 0.01   # retry.DefaultRetry: 5 tries, 10 ms apart (jitter 0.1)

log = logging.getLogger(__name__)


class StateData:
    """stateData: the pod's claims, where allocated ones can be used, the allocator and its per-node results.
    Shared by clones of the cycle state (kube guards it with a mutex)."""

    __slots__ = ("claims", "available_on", "allocator", "node_allocations", "unavailable", "extended_resources",
                 "allocations", "_to_allocate")

    def __init__(self, claims: ClaimStore):
        self.claims = claims
        self.available_on = []                     # per claim: NodeSelector of an allocated claim, or None
        self.allocator = None
        # node name -> ([allocation result per claim to allocate], the node's extended-resource claim, mappings)
        self.node_allocations = {}
        self.unavailable = set()                   # claim indices not usable on some node
        self.extended_resources = {}               # DRA-backed extended resources the pod requests
        self.allocations = {}                      # claim index -> the allocation Reserve assumed for it
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


def _superseded(assumed: dict, stored) -> bool:
    """Whether the informer has moved past a claim the plugin assumed (the assume cache's rule): the claim was
    deleted, its allocation is visible, or the stored copy is a newer resourceVersion (released meanwhile)."""
    if stored is None or (stored.get("status") or {}).get("allocation"):
        return True
    mine = (assumed.get("metadata") or {}).get("resourceVersion")
    theirs = (stored.get("metadata") or {}).get("resourceVersion")
    return bool(mine and theirs and str(mine).isdigit() and str(theirs).isdigit() and int(theirs) > int(mine))


def _uu(reason: str) -> Status:
    """statusUnschedulable: UnschedulableAndUnresolvable."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def reserved_for_pod(pod, claim) -> bool:
    return any(r.get("uid") == pod.uid for r in (claim.get("status") or {}).get("reservedFor") or ())


def is_special_claim(claim) -> bool:
    """isSpecialClaimName: the in-memory extended-resource claim PreBind has not created yet."""
    return (claim.get("metadata") or {}).get("name") == SPECIAL_CLAIM_NAME


def flight_key(claim) -> str:
    """The claim tracker's key of a claim whose allocation is in flight: its uid (the in-memory extended-resource
    claim has a temporary one), else its namespace/name."""
    return (claim.get("metadata") or {}).get("uid") or claim_key(claim)


class APIFailure(Exception):
    """An API call of PreBind, Unreserve or PostFilter failed: kube's wrapped error text, and the API status of
    the call (409: a conflict, retried)."""

    def __init__(self, text: str, status: int | None = None):
        super().__init__(text)
        self.status = status


def retry_on_conflict(attempt):
    """retry.RetryOnConflict(retry.DefaultRetry, ...): ``attempt(first)`` again while it fails with a conflict,
    at most five times; the last conflict when all of them conflict."""
    for step in range(RETRY_STEPS):
        try:
            return attempt(step == 0)
        except APIFailure as err:
            if err.status != CONFLICT or step == RETRY_STEPS - 1:
                raise
            time.sleep(RETRY_SECONDS * (1 + 0.1 * random.random()))


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, ScorePlugin,
                       ScoreExtensions, ReservePlugin, PreBindPlugin):
    name = names.DYNAMIC_RESOURCES

    def __init__(self, enabled: bool, features=None, handle=None):
        self.enabled = enabled
        self.features = features
        self.handle = handle
        # PreBind stamps status.allocation.allocationTimestamp (binding conditions and device status)
        self.binding_conditions = enabled and features.enabled("DRADeviceBindingConditions") and \
            features.enabled("DRAResourceClaimDeviceStatus")
        # the claim tracker's in-flight allocations (flight_key -> the claim as assumed, allocated) and the
        # claims written at PreBind until the informer has them (AssumeClaimAfterAPICall)
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
            special = is_special_claim(claim)
            name = key if special else claim_key(claim)   # a claim not created yet: by its uid
            stored = claims.get(name)
            if objects is not None and not special and _superseded(claim, stored):
                del self.in_flight[key]    # the informer's copy is as new or newer: the assumption is not needed
                continue
            claims[name] = claim
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
            if claim is not extended_claim and self.in_flight.get(claim_key(claim)) is claim:
                # allocated in another pod's Reserve, not written yet (its binding cycle is running): kube's assume
                # cache has no allocation for it, only a pending one
                return None, _uu(f"resource claim {claim_key(claim)} is in the process of being allocated")
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
            if (meta.get("annotations") or {}).get(EXTENDED_CLAIM_ANNOTATION) != "true" or is_special_claim(claim):
                continue
            if any(o.get("name") == pod.name and o.get("controller") and o.get("uid") == pod.uid
                   for o in meta.get("ownerReferences") or ()):
                return claim
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": SPECIAL_CLAIM_NAME, "namespace": pod.namespace, "uid": str(uuid.uuid4()),
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
        for index in sorted(s.unavailable):
            claim = s.claims.claims[index]
            if claim is extended:
                if not is_special_claim(extended):
                    break   # deleted below
                continue
            reserved = (claim.get("status") or {}).get("reservedFor") or ()
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                released = copy.deepcopy(claim)
                status = released.setdefault("status", {})
                for k in ("reservedFor", "allocation", "devices"):
                    status.pop(k, None)
                try:
                    self._update_claim_status(released)
                except APIFailure as err:
                    return None, Status.error(str(err))
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        if extended is not None and not is_special_claim(extended):
            try:
                self._delete_claim(extended)
            except APIFailure as err:
                return None, Status.error(str(err))
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
        to_allocate = s.to_allocate() if not s.claims.empty() else ()
        if not to_allocate or s.allocator is None:
            return None
        extended = s.claims.extended_resource_claim()
        found = s.node_allocations.get(node_name)
        if found is None or not found[0]:
            if all(c is extended for _i, c in to_allocate):
                return None   # only the extended-resource claim, and the node offers the resources itself
            return Status.error("claim allocation not found for node")
        allocations, node_claim, _mappings = found
        if len(allocations) != len(to_allocate):
            return Status.error(f"internal error, have {len(allocations)} allocations, {len(to_allocate)} claims "
                                f"to allocate, want {len(to_allocate)} claims")
        for (index, claim), allocation in zip(to_allocate, allocations):
            allocation = s.allocations[index] = _with_share_ids(allocation)
            assumed = copy.deepcopy(node_claim if claim is extended else claim)
            meta = assumed.setdefault("metadata", {})
            if DELETE_PROTECTION_FINALIZER not in (meta.get("finalizers") or ()):
                meta["finalizers"] = list(meta.get("finalizers") or ()) + [DELETE_PROTECTION_FINALIZER]
            assumed.setdefault("status", {})["allocation"] = allocation
            self.in_flight[flight_key(assumed)] = assumed   # SignalClaimPendingAllocation
        return None

    def unreserve(self, state, pod, node_name):
        if not self.enabled:
            return None
        s = _state(state)
        if s is None or s.claims.empty():
            return None
        for _i, claim in s.claims.all_user_claims():
            self.in_flight.pop(flight_key(claim), None)
        extended = s.claims.extended_resource_claim()
        if extended is None:
            return None
        self.in_flight.pop(flight_key(s.claims.initial_extended_resource_claim), None)
        if is_special_claim(extended):
            return None   # not created: nothing to delete
        self.in_flight.pop(flight_key(extended), None)
        try:   # created at PreBind: deleted, so that no claim is left behind (errors are only logged)
            self._delete_claim(extended)
        except APIFailure as err:
            log.error("delete resourceclaim %s: %s", claim_key(extended), err)
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
        for index, claim in list(s.claims.all()):
            if reserved_for_pod(pod, claim):
                continue
            try:
                s.claims.set(index, self._bind_claim(s, index, pod, node_name))
            except APIFailure as err:
                return Status.error(str(err))
        return None

    def _bind_claim(self, s: StateData, index: int, pod, node_name: str) -> dict:
        """bindClaim: the claim's finalizer, allocation (from Reserve) and the pod in ``status.reservedFor`` written,
        the extended-resource claim created first and named in the pod's status after. Returns the claim as
        written; APIFailure with kube's text."""
        claim = s.claims.claims[index]
        allocation = s.allocations.get(index)
        extended = claim is s.claims.extended_resource_claim()
        if extended and allocation is None and ((claim.get("spec") or {}).get("devices") or {}).get("requests") is None:
            return claim   # extended resources the node offers itself
        client = self._api()
        pending = flight_key(claim)
        written = None
        try:
            if extended and is_special_claim(claim):
                claim = written = self._create_extended_claim(s, node_name)
                s.claims.set(index, claim)   # Unreserve deletes it from now on
            key = claim_key(claim)

            def attempt(first: bool):
                nonlocal claim, written
                if not first:
                    try:
                        claim = client.read_object("ResourceClaim", key)
                    except ClusterError as err:
                        raise APIFailure(f"get updated claim {key} after conflict: {err}", err.status) from None
                claim = copy.deepcopy(claim)
                if (claim.get("metadata") or {}).get("deletionTimestamp"):
                    raise APIFailure(f"claim {key} got deleted in the meantime")
                if allocation is not None:
                    if (claim.get("status") or {}).get("allocation"):
                        raise APIFailure(f"claim {key} got allocated elsewhere in the meantime")
                    meta = claim.setdefault("metadata", {})
                    if DELETE_PROTECTION_FINALIZER not in (meta.get("finalizers") or ()):
                        meta["finalizers"] = list(meta.get("finalizers") or ()) + [DELETE_PROTECTION_FINALIZER]
                        try:
                            claim = written = copy.deepcopy(client.update_object("ResourceClaim", claim))
                        except ClusterError as err:
                            raise APIFailure(f"add finalizer to claim {key}: {err}", err.status) from None
                    claim.setdefault("status", {})["allocation"] = allocation
                status = claim.setdefault("status", {})
                status["reservedFor"] = list(status.get("reservedFor") or ()) + [
                    {"resource": "pods", "name": pod.name, "uid": pod.uid}]
                if self.binding_conditions:
                    if not status.get("allocation"):
                        raise APIFailure(f"claim {key} got deallocated elsewhere in the meantime")
                    if not status["allocation"].get("allocationTimestamp"):
                        status["allocation"] = dict(status["allocation"], allocationTimestamp=_now_rfc3339())
                what = "add allocation and reservation" if allocation is not None else "add reservation"
                claim = written = self._update_claim_status(claim, f"{what} to claim {key}: ")

            retry_on_conflict(attempt)
        finally:
            if allocation is not None:
                self.in_flight.pop(pending, None)   # MaybeRemoveClaimPendingAllocation
            if written is not None and (written.get("status") or {}).get("allocation"):
                self.in_flight[flight_key(written)] = written   # AssumeClaimAfterAPICall
        if extended:
            self._patch_extended_resource_claim_status(s, pod, claim, node_name)
        return claim

    def _create_extended_claim(self, s: StateData, node_name: str) -> dict:
        """createExtendedResourceClaimInAPI: the node's variant of the claim from Filter, created without its
        name, uid and allocation (the API server names it from generateName)."""
        found = s.node_allocations.get(node_name)
        if found is None or found[1] is None:
            raise APIFailure(f"extended resource claim not found for node {node_name}")
        claim = copy.deepcopy(found[1])
        claim.pop("status", None)
        meta = claim["metadata"]
        meta.pop("name", None)
        meta.pop("uid", None)
        try:
            return self._api().create_object("ResourceClaim", claim)
        except ClusterError as err:
            raise APIFailure(f'create claim for extended resources {meta.get("namespace") or "default"}/: {err}',
                             err.status) from None

    def _patch_extended_resource_claim_status(self, s: StateData, pod, claim: dict, node_name: str) -> None:
        """patchPodExtendedResourceClaimStatus: the claim's name and the containers' request mappings."""
        found = s.node_allocations.get(node_name)
        mappings = found[2] if found is not None else None
        if not mappings:
            raise APIFailure(f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} "
                             f"ExtendedResourceClaimStatus")
        try:
            self._api().patch_pod_status(pod, extended_resource_claim_status={
                "requestMappings": mappings, "resourceClaimName": claim["metadata"]["name"]})
        except ClusterError as err:
            raise APIFailure(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {err}",
                             err.status) from None

    def _api(self):
        """The cluster's client, or in a one-pass run (no cluster) the snapshot's objects written as the API
        would store them."""
        client = self.handle.client if self.handle is not None else None
        return client if client is not None else SnapshotWrites(self._objects())

    def _delete_claim(self, claim: dict) -> None:
        """deleteClaim: the scheduler's finalizer taken off (an update, retried on conflicts with the claim read
        again), then the claim deleted. APIFailure with kube's text."""
        client = self._api()
        key = claim_key(claim)
        current = claim

        def attempt(first: bool):
            nonlocal current
            if not first:
                try:
                    current = client.read_object("ResourceClaim", key)
                except ClusterError as err:
                    raise APIFailure(f"get resourceclaim {key}: {err}", err.status) from None
            current = copy.deepcopy(current)
            meta = current.setdefault("metadata", {})
            if DELETE_PROTECTION_FINALIZER in (meta.get("finalizers") or ()):
                meta["finalizers"] = [f for f in meta["finalizers"] if f != DELETE_PROTECTION_FINALIZER]
            try:
                current = client.update_object("ResourceClaim", current)
            except ClusterError as err:
                raise APIFailure(f"update resourceclaim {key}: {err}", err.status) from None

        retry_on_conflict(attempt)
        try:
            client.delete_object("ResourceClaim", current)
        except ClusterError as err:
            raise APIFailure(str(err), err.status) from None

    def _update_claim_status(self, claim: dict, prefix: str = "") -> dict:
        """UpdateStatus of a claim: the stored claim, or APIFailure with ``prefix`` and the API's text; a status
        the apiserver's validation refuses (more than 256 consumers) fails as kube-apiserver refuses it."""
        errs = claim_status_errors(claim)
        if errs:
            name = (claim.get("metadata") or {}).get("name")
            raise APIFailure(f'{prefix}ResourceClaim.resource.k8s.io "{name}" is invalid: {aggregate(errs)}', 422)
        try:
            return self._api().update_status("ResourceClaim", claim)
        except ClusterError as err:
            raise APIFailure(f"{prefix}{err}", err.status) from None

    def sign_pod(self, pod):
        """A pod with resource claims has no signature (whether a claim stays on one host is not known)."""
        if (pod.raw.get("spec") or {}).get("resourceClaims"):
            return signers.unsignable("pods with dra resource claims are not signable")
        return [], None


class SnapshotWrites:
    """The API of a one-pass run, which has no cluster: claims are stored into the snapshot's objects as the API
    would store them (a created claim named from its generateName, derived from its owner so runs repeat); a pod's
    status has nowhere to go."""

    def __init__(self, objects):
        self.claims = objects.resource_claims

    def create_object(self, kind: str, raw: dict) -> dict:
        meta = dict(raw["metadata"])
        owner = "".join(o.get("uid", "") for o in meta.get("ownerReferences") or ())
        meta["name"] = generate_name(meta.get("generateName", ""), random.Random(owner + meta.get("generateName", "")))
        meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f'{owner}/{meta["name"]}'))
        stored = self.claims[claim_key({"metadata": meta})] = dict(raw, metadata=meta)
        return stored

    def read_object(self, kind: str, key: str) -> dict:
        held = self.claims.get(key)
        if held is None:
            raise ClusterError(f'{kind} "{key.split("/", 1)[-1]}" not found', 404)
        return held

    def update_object(self, kind: str, raw: dict) -> dict:
        self.claims[claim_key(raw)] = raw
        return raw

    def update_status(self, kind: str, raw: dict) -> dict:
        return self.update_object(kind, raw)

    def delete_object(self, kind: str, raw: dict) -> None:
        self.claims.pop(claim_key(raw), None)

    def patch_pod_status(self, pod, **_status) -> bool:
        return False


def _validate_class(classes: dict, class_name: str, request_name: str):
    if not class_name:
        return Status.error(f"request {request_name}: unsupported request type")
    if class_name not in classes:
        return _uu(f"request {request_name}: device class {class_name} does not exist")
    return None


def _now_rfc3339() -> str:
    """metav1.Now() as the API serializes it (RFC 3339, seconds)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


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
