"""The shared resource-allocation scorer (noderesources/resource_allocation.go)."""
from __future__ import annotations

import numpy as np

from ...framework.interface import PreScorePlugin, ScorePlugin
from ...framework.node_table import EXACT_LIMIT


def is_scalar_resource(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, prefixed-native, hugepages-* and attachable-volumes-*."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def is_extended_resource(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not kubernetes.io/, not requests.*."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def pod_request(pod, resource: str, use_requested: bool) -> int:
    """calculatePodResourceRequest: non-zero cpu/memory defaults unless use_requested."""
    if not use_requested:
        if resource == "cpu":
            return pod.score_cpu
        if resource == "memory":
            return pod.score_memory
    return pod.requests.get(resource, 0)


def allocatable_and_requested(node_info, resource: str, pod_req: int, use_requested: bool):
    """calculateResourceAllocatableRequest: (allocatable, requested incl. the pod)."""
    if pod_req == 0 and is_scalar_resource(resource):
        return 0, 0
    alloc = node_info.node.allocatable
    if resource == "cpu":
        req = node_info.requested.get("cpu", 0) if use_requested else node_info.nonzero_cpu
        return alloc.get("cpu", 0), req + pod_req
    if resource == "memory":
        req = node_info.requested.get("memory", 0) if use_requested else node_info.nonzero_memory
        return alloc.get("memory", 0), req + pod_req
    if resource == "ephemeral-storage":
        return alloc.get(resource, 0), node_info.requested.get(resource, 0) + pod_req
    if resource in alloc and is_scalar_resource(resource):
        return alloc[resource], node_info.requested.get(resource, 0) + pod_req
    return 0, 0


class ResourceAllocationScorer:
    """Scores a node from (requested, allocatable) per configured resource."""

    def __init__(self, name: str, resources, scorer, use_requested: bool, batch=None):
        self.name = name
        self.resources = list(resources)          # [(name, weight)]
        self.scorer = scorer                      # f(requested list, allocatable list, weights) -> int
        self.use_requested = use_requested
        # f(requested columns, allocatable columns, weights) -> int64 array; a column's alloc 0 = skipped
        self.batch = batch if batch is not None else getattr(scorer, "batch", None)

    def pod_requests(self, pod):
        return [pod_request(pod, r, self.use_requested) for r, _w in self.resources]

    def score(self, pod, node_info, pod_requests) -> int:
        requested, allocatable, weights = [], [], []
        for (res, w), preq in zip(self.resources, pod_requests):
            alloc, req = allocatable_and_requested(node_info, res, preq, self.use_requested)
            if alloc == 0:
                continue
            allocatable.append(alloc)
            requested.append(req)
            weights.append(w)
        return self.scorer(requested, allocatable, weights)

    def score_batch(self, table, rows, pod_requests):
        """score() over NodeTable rows, or None when a resource has no column (scalar resources)."""
        if self.batch is None or not table.exact:
            return None
        requested, allocatable, weights = [], [], []
        for (res, w), preq in zip(self.resources, pod_requests):
            if res == "cpu":
                alloc = table.alloc_cpu
                used = table.req_cpu if self.use_requested else table.nonzero_cpu
            elif res == "memory":
                alloc = table.alloc_memory
                used = table.req_memory if self.use_requested else table.nonzero_memory
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
        if not requested:
            return np.zeros(len(rows), np.int64) + self.scorer([], [], [])
        return self.batch(requested, allocatable, weights)


class ResourceAllocationScoring(PreScorePlugin, ScorePlugin):
    """PreScore/Score shared by NodeResourcesFit and BalancedAllocation: ``self.scorer`` does the arithmetic."""

    scorer: ResourceAllocationScorer

    @property
    def pre_score_key(self) -> str:
        return "PreScore" + self.name

    def _pod_requests(self, state, pod):
        reqs = state.get(self.pre_score_key)
        return self.scorer.pod_requests(pod) if reqs is None else reqs

    def pre_score(self, state, pod, node_infos):
        state.write(self.pre_score_key, self.scorer.pod_requests(pod))
        return None

    def score(self, state, pod, node_info):
        return self.scorer.score(pod, node_info, self._pod_requests(state, pod)), None

    def score_batch(self, state, pod, table, rows):
        """Score over NodeTable rows (int64 array), or None when the per-node path must decide."""
        return self.scorer.score_batch(table, rows, self._pod_requests(state, pod))

    def score_extensions(self):
        return None

    def events_to_register(self):
        return (("Pod", ("Delete",)), ("Node", ("Add", "Update")))
