"""The shared resource-allocation scorer (noderesources/resource_allocation.go)."""
from __future__ import annotations

import numpy as np

from ...dra.extended import delegated_to_dra
from ...framework import signers
from ...framework.interface import PreScorePlugin, ScorePlugin
from ...framework.node_table import EXACT_LIMIT


def is_scalar_resource(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, prefixed-native, hugepages-* and attachable-volumes-*."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def is_extended_resource(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not kubernetes.io/, not requests.*."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def pod_request(pod, resource: str, use_requested: bool) -> int:
    """calculatePodResourceRequest: BalancedAllocation's (use_requested) counts pod-level and status resources;
    NodeResourcesFit's has non-zero cpu/memory defaults and neither (Pod.score_requests)."""
    if use_requested:
        return pod.requests.get(resource, 0)
    return pod.score_requests.get(resource, 0)


# What a scorer counts for the pods already on a node (kube's useRequested: Requested, else NonZeroRequested,
# which 1.36 sums as PodInfo.CalculateResource's Non0CPU/Non0Mem: versions' non-zero-requests-summed).
REQUESTED, NONZERO, NONZERO_SUMMED = "requested", "nonzero", "summed_nonzero"


def allocatable_and_requested(node_info, resource: str, pod_req: int, counted: str):
    """calculateResourceAllocatableRequest: (allocatable, requested incl. the pod)."""
    if pod_req == 0 and is_scalar_resource(resource):
        return 0, 0
    alloc = node_info.node.allocatable
    if resource in ("cpu", "memory"):
        req = node_info.requested.get(resource, 0) if counted == REQUESTED else \
            getattr(node_info, f"{counted}_{resource}")
        return alloc.get(resource, 0), req + pod_req
    if resource == "ephemeral-storage":
        return alloc.get(resource, 0), node_info.requested.get(resource, 0) + pod_req
    if resource in alloc and is_scalar_resource(resource):
        return alloc[resource], node_info.requested.get(resource, 0) + pod_req
    return 0, 0


class ResourceAllocationScorer:
    """Scores a node from (requested, allocatable) per configured resource."""

    def __init__(self, name: str, resources, scorer, use_requested: bool, batch=None, with_allocated=False,
                 summed_nonzero=False):
        self.name = name
        self.resources = list(resources)          # [(name, weight)]
        # f(requested list, allocatable list, weights) -> int; with_allocated: f(requested, allocatable, weights,
        # allocated), ``allocated`` being what the node has without the pod (kube's scorer(requested, allocated,
        # allocatable))
        self.scorer = scorer
        self.with_allocated = with_allocated
        self.use_requested = use_requested
        self.counted = REQUESTED if use_requested else NONZERO_SUMMED if summed_nonzero else NONZERO
        # f(requested columns, allocatable columns, weights) -> int64 array; a column's alloc 0 = skipped
        self.batch = batch if batch is not None else getattr(scorer, "batch", None)

    def pod_requests(self, pod):
        return [pod_request(pod, r, self.use_requested) for r, _w in self.resources]

    def score(self, pod, node_info, pod_requests) -> int:
        requested, allocatable, weights, allocated = [], [], [], []
        for (res, w), preq in zip(self.resources, pod_requests):
            alloc, req = allocatable_and_requested(node_info, res, preq, self.counted)
            if alloc == 0:
                continue
            allocatable.append(alloc)
            requested.append(req)
            weights.append(w)
            allocated.append(req - preq)
        if self.with_allocated:
            return self.scorer(requested, allocatable, weights, allocated)
        return self.scorer(requested, allocatable, weights)

    def score_batch(self, table, rows, pod_requests):
        """score() over NodeTable rows, or None when a resource has no column (scalar resources)."""
        if self.batch is None or not table.exact:
            return None
        requested, allocatable, weights, allocated = [], [], [], []
        for (res, w), preq in zip(self.resources, pod_requests):
            if res in ("cpu", "memory"):
                alloc = getattr(table, f"alloc_{res}")
                used = getattr(table, f"req_{res}" if self.counted == REQUESTED else f"{self.counted}_{res}")
            elif res == "ephemeral-storage":
                alloc, used = table.alloc_ephemeral, table.req_ephemeral
            elif not is_scalar_resource(res) or preq == 0:
                continue  # allocatable_and_requested gives (0, 0): the resource is skipped
            else:
                return None
            if preq >= EXACT_LIMIT or preq < 0:
                return None
            allocatable.append(alloc[rows])
            requested.append(used[rows] + preq)
            weights.append(w)
            allocated.append(used[rows])
        if self.with_allocated:
            if not requested:
                return np.zeros(len(rows), np.int64) + self.scorer([], [], [], [])
            return self.batch(requested, allocatable, weights, allocated)
        if not requested:
            return np.zeros(len(rows), np.int64) + self.scorer([], [], [])
        return self.batch(requested, allocatable, weights)


class ResourceAllocationScoring(PreScorePlugin, ScorePlugin):
    """PreScore/Score shared by NodeResourcesFit and BalancedAllocation: ``self.scorer`` does the arithmetic."""

    scorer: ResourceAllocationScorer
    dra_handle = None   # DRAExtendedResource on: the handle whose DeviceClasses may back extended resources

    @property
    def pre_score_key(self) -> str:
        return "PreScore" + self.name

    def _pod_requests(self, state, pod):
        reqs = state.get(self.pre_score_key)
        return self.scorer.pod_requests(pod) if reqs is None else reqs

    def pre_score(self, state, pod, node_infos):
        state.write(self.pre_score_key, self.scorer.pod_requests(pod))
        return None

    def sign_pod(self, pod):
        """Both sign the pod's requests (computePodResourceRequest); a pod asking for an extended resource a
        DeviceClass backs has no signature."""
        requests = pod.spec_requests
        if self.dra_handle is not None:
            classes = self.dra_handle.objects.device_classes
            for name, quantity in requests.items():
                if quantity and is_scalar_resource(name) and delegated_to_dra(name, {}, classes):
                    return signers.unsignable("signature disabled when dra extended resources are used in the cluster")
        return [(signers.RESOURCES, dict(requests))], None

    def score(self, state, pod, node_info):
        return self.scorer.score(pod, node_info, self._pod_requests(state, pod)), None

    def score_batch(self, state, pod, table, rows):
        """Score over NodeTable rows (int64 array), or None when the per-node path must decide."""
        return self.scorer.score_batch(table, rows, self._pod_requests(state, pod))

    def score_extensions(self):
        return None

    def events_to_register(self):
        return (("Pod", ("Delete",)), ("Node", ("Add", "Update")))
