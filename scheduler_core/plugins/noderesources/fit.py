"""NodeResourcesFit: does the pod fit the node's allocatable resources, and how full would it be."""
from __future__ import annotations

import numpy as np

from ...dra.extended import DEVICE_CLASS_PREFIX, delegated_to_dra
from ...objects.field import aggregate, child, forbidden, invalid, not_supported, required
from ...framework.handle import features_of, queueing_hints_of
from ...framework.interface import QUEUE, QUEUE_SKIP, FilterPlugin, PreFilterPlugin
from ...framework.node_table import EXACT_LIMIT
from ...framework.profile import FrameworkError
from ...framework.status import Code, Status
from .. import names
from .resource_allocation import (
    ResourceAllocationScorer,
    ResourceAllocationScoring,
    is_extended_resource,
    is_scalar_resource,
)
from .strategies import least_allocated, most_allocated, requested_to_capacity_ratio

PRE_FILTER_KEY = "PreFilter" + names.NODE_RESOURCES_FIT
STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
BASIC = ("cpu", "memory", "ephemeral-storage")
# The Filter rejections, as indexed by filter_batch_statuses' kinds (a bit set: pods, cpu, memory, storage, and
# 16 when a request exceeds the node's allocatable and that is unresolvable).
UNRESOLVABLE_BIT = 16
_BATCH_STATUSES = tuple(
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if kind & UNRESOLVABLE_BIT else Code.UNSCHEDULABLE,
     tuple(reason for bit, reason in ((1, "Too many pods"), (2, "Insufficient cpu"), (4, "Insufficient memory"),
                                      (8, "Insufficient ephemeral-storage")) if kind & bit))
    for kind in range(2 * UNRESOLVABLE_BIT))


def validate_fit_args(args: dict, path: str = "", ratio_by_type: bool = False) -> list:
    """ValidateNodeResourcesFitArgs (run when the plugin is built, so paths start at the args).

    ``ratio_by_type`` (1.36, versions' fit-args-requested-to-capacity-ratio): requestedToCapacityRatio is
    required with that type and forbidden with the others, and its shape is checked under its own path (1.36 also
    refuses a missing scoringStrategy, which defaulting always sets)."""
    errs = []
    for i, res in enumerate(args.get("ignoredResources") or []):
        if not res or " " in res:
            errs.append(invalid(f"{child(path, 'ignoredResources')}[{i}]", res, "name part must be non-empty"))
    for i, group in enumerate(args.get("ignoredResourceGroups") or []):
        if "/" in group:
            errs.append(invalid(f"{child(path, 'ignoredResourceGroups')}[{i}]", group,
                                "resource group name can't contain '/'"))
    strategy = args.get("scoringStrategy")
    spath = child(path, "scoringStrategy")
    if strategy is not None:
        if strategy.get("type", "") not in STRATEGIES:
            errs.append(not_supported(f"{spath}.type", strategy.get("type", ""), STRATEGIES))
        for i, r in enumerate(strategy.get("resources") or []):
            w = r.get("weight", 0)
            if w <= 0 or w > 100:
                errs.append(invalid(f"{spath}.resources[{i}].weight", w,
                                    f"resource weight of {r.get('name')} not in valid range (0, 100]"))
        rtcr = strategy.get("requestedToCapacityRatio")
        rpath = f"{spath}.requestedToCapacityRatio"
        if not ratio_by_type:
            if rtcr is not None:
                errs.extend(validate_shape(rtcr.get("shape") or [], f"{spath}.shape"))
        elif strategy.get("type", "") == "RequestedToCapacityRatio":
            if rtcr is None:
                errs.append(required(rpath, "must be specified when type is RequestedToCapacityRatio"))
            else:
                errs.extend(validate_shape(rtcr.get("shape") or [], f"{rpath}.shape",
                                           "values must be sorted in increasing order"))
        elif rtcr is not None:
            errs.append(forbidden(rpath, "must be nil when type is not RequestedToCapacityRatio"))
    return errs


def validate_shape(shape, path: str, unsorted: str = "utilization values must be sorted in increasing order") -> list:
    """validateFunctionShape (``unsorted``: its message for points out of order, shortened in 1.36)."""
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(invalid(f"{path}[{i}].utilization", shape[i].get("utilization", 0), unsorted))
            break
    for i, pt in enumerate(shape):
        u, s = pt.get("utilization", 0), pt.get("score", 0)
        if u < 0 or u > 100:
            errs.append(invalid(f"{path}[{i}].utilization", u, "not in valid range [0, 100]"))
        if s < 0 or s > 10:
            errs.append(invalid(f"{path}[{i}].score", s, "not in valid range [0, 10]"))
    return errs


def default_fit_args(args) -> dict:
    """SetDefaults_NodeResourcesFitArgs."""
    args = dict(args or {})
    given = args.get("scoringStrategy")
    strategy = {"type": "LeastAllocated"} if given is None else dict(given)
    resources = [dict(r) for r in strategy.get("resources") or []] or [{"name": "cpu", "weight": 1},
                                                                       {"name": "memory", "weight": 1}]
    for r in resources:
        if not r.get("weight"):
            r["weight"] = 1
    strategy["resources"] = resources
    args["scoringStrategy"] = strategy
    return args


class Fit(PreFilterPlugin, FilterPlugin, ResourceAllocationScoring):
    name = names.NODE_RESOURCES_FIT
    filter_depends_on = "resources"

    def __init__(self, args: dict, handle=None, unresolvable_over_allocatable: bool = False,
                 summed_nonzero: bool = False, ratio_by_type: bool = False):
        args = default_fit_args(args)
        errs = validate_fit_args(args, ratio_by_type=ratio_by_type)
        if errs:
            raise FrameworkError(aggregate(errs))
        self._last_scalars = None  # (requests dict, its scalar resources) of the last insufficient() call
        self.ignored_resources = frozenset(args.get("ignoredResources") or ())
        self.ignored_groups = frozenset(args.get("ignoredResourceGroups") or ())
        strategy = args["scoringStrategy"]
        resources = [(r["name"], r["weight"]) for r in strategy["resources"]]
        kind = strategy["type"]
        if kind == "LeastAllocated":
            scorer = least_allocated
        elif kind == "MostAllocated":
            scorer = most_allocated
        else:
            shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
            scorer = requested_to_capacity_ratio([(p.get("utilization", 0), p.get("score", 0)) for p in shape])
        self.scorer = ResourceAllocationScorer(self.name, resources, scorer, use_requested=False,
                                               summed_nonzero=summed_nonzero)
        self.strategy = kind
        # DRAExtendedResource: resources a DeviceClass backs are DynamicResources' on nodes without them
        self.dra_handle = handle if handle is not None and handle.features.gates.get("DRAExtendedResource") else None
        # 1.36: a request above the node's allocatable cannot be helped by preemption
        self.unresolvable_over_allocatable = unresolvable_over_allocatable
        self.queueing_hints = queueing_hints_of(handle)
        self.in_place_scaling = bool(features_of(handle).gates.get("InPlacePodVerticalScaling"))

    @classmethod
    def new(cls, args, handle):
        features = features_of(handle)
        return cls(args, handle, unresolvable_over_allocatable=features.has("fit-unresolvable-over-allocatable"),
                   summed_nonzero=features.has("non-zero-requests-summed"),
                   ratio_by_type=features.has("fit-args-requested-to-capacity-ratio"))

    def events_to_register(self):
        if not self.queueing_hints:
            return super().events_to_register()
        pod_actions = ("Delete", "UpdatePodScaleDown") if self.in_place_scaling else ("Delete",)
        events = [("Pod", pod_actions, self.is_schedulable_after_pod_event),
                  ("Node", ("Add", "UpdateNodeAllocatable"), self.is_schedulable_after_node_change)]
        if self.dra_handle is not None:
            events.append(("DeviceClass", ("Add", "Update"), self.is_schedulable_after_device_class_event))
        return tuple(events)

    def is_schedulable_after_pod_event(self, pod, old, new):
        """A bound or nominated pod deleted, or (in-place resize) one scaled down on a resource the pod asks."""
        if new is None:
            return QUEUE_SKIP if not old.node_name and not old.nominated_node_name else QUEUE
        if not self.in_place_scaling:
            return QUEUE_SKIP
        if new.uid == pod.uid:
            return QUEUE
        if not new.node_name:
            return QUEUE_SKIP
        before, after = old.requests, new.requests
        for res, v in pod.requests.items():
            if v and (res in BASIC or is_scalar_resource(res)) and before.get(res, 0) > after.get(res, 0):
                return QUEUE
        return QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod, old, new):
        """A node the pod fits alone, new or with more of a resource the pod asks (or more pods)."""
        req = pod.spec_requests
        if self._insufficient(req, new.allocatable, {}, 0)[0]:
            return QUEUE_SKIP
        if old is None:
            return QUEUE
        return QUEUE if self._requested_resources_increased(req, old.allocatable, new.allocatable) else QUEUE_SKIP

    def _requested_resources_increased(self, req: dict, before: dict, after: dict) -> bool:
        """haveAnyRequestedResourcesIncreased."""
        if after.get("pods", 0) > before.get("pods", 0):
            return True
        scalars = [(k, v) for k, v in req.items() if k not in BASIC and is_scalar_resource(k)]
        if not any(req.get(r) for r in BASIC) and not scalars:
            return False
        if any(req.get(r, 0) > 0 and after.get(r, 0) > before.get(r, 0) for r in BASIC):
            return True
        for res, v in scalars:
            if v == 0:
                continue
            if after.get(res, 0) > before.get(res, 0):
                return True
            if self.dra_handle is not None and delegated_to_dra(res, after, self.dra_handle.objects.device_classes):
                return True
        return False

    @staticmethod
    def is_schedulable_after_device_class_event(pod, old, new):
        """A DeviceClass that now backs an extended resource the pod asks."""
        name = (new.get("spec") or {}).get("extendedResourceName")
        reqs = pod.spec_requests
        if old is not None:
            if (old.get("spec") or {}).get("extendedResourceName") == name:
                return QUEUE_SKIP
        elif DEVICE_CLASS_PREFIX + ((new.get("metadata") or {}).get("name") or "") in reqs:
            return QUEUE
        return QUEUE if name is not None and name in reqs else QUEUE_SKIP

    def pre_filter(self, state, pod):
        state.write(PRE_FILTER_KEY, pod.spec_requests)   # computePodResourceRequest: no status resources
        return None, None

    def filter(self, state, pod, node_info):
        req = state.get(PRE_FILTER_KEY)
        if req is None:  # PreFilter disabled: kube's Filter has no fallback
            return Status.error(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        return self._status(*self._insufficient(req, node_info.node.allocatable, node_info.requested,
                                                len(node_info.pods)))

    def filter_resources(self, state, pod, node, requested: dict, num_pods: int):
        """``filter`` on a node with these summed requests and this many pods (see FilterPlugin)."""
        req = state.get(PRE_FILTER_KEY)
        if req is None:
            return Status.error(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        return self._status(*self._insufficient(req, node.allocatable, requested, num_pods))

    @staticmethod
    def _status(reasons, unresolvable):
        if not reasons:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, *reasons)

    def insufficient(self, req: dict, node_info) -> list:
        """fitsRequest: every insufficient resource's reason, in kube's order."""
        return self.insufficient_for(req, node_info.node.allocatable, node_info.requested, len(node_info.pods))

    def insufficient_for(self, req: dict, alloc: dict, used: dict, num_pods: int) -> list:
        """``insufficient`` on a node with allocatable ``alloc``, summed requests ``used`` and ``num_pods`` pods."""
        return self._insufficient(req, alloc, used, num_pods)[0]

    def _insufficient(self, req: dict, alloc: dict, used: dict, num_pods: int) -> tuple:
        """(the insufficient resources' reasons, whether one is unresolvable: its request exceeds the node's
        allocatable and this version says so)."""
        reasons = []
        over = False
        if num_pods + 1 > alloc.get("pods", 0):
            reasons.append("Too many pods")
        last = self._last_scalars
        if last is not None and last[0] is req:
            scalars = last[1]
        else:  # req is a pod's requests, which never change: one pass per pod, not per node
            scalars = [(k, v) for k, v in req.items() if k not in BASIC and is_scalar_resource(k)]
            self._last_scalars = (req, scalars)
        get = req.get
        if not get("cpu") and not get("memory") and not get("ephemeral-storage") and not scalars:
            return reasons, False
        for res in BASIC:
            v = get(res, 0)
            if v > 0 and v > alloc.get(res, 0) - used.get(res, 0):
                reasons.append(f"Insufficient {res}")
                over = over or v > alloc.get(res, 0)
        for res, v in scalars:
            if v == 0:
                continue
            if is_extended_resource(res) and (res in self.ignored_resources
                                              or res.split("/", 1)[0] in self.ignored_groups):
                continue
            if self.dra_handle is not None and delegated_to_dra(res, alloc, self.dra_handle.objects.device_classes):
                continue
            if v > alloc.get(res, 0) - used.get(res, 0):
                reasons.append(f"Insufficient {res}")
                over = over or v > alloc.get(res, 0)
        return reasons, over and self.unresolvable_over_allocatable

    def filter_batch_statuses(self, state, pod, table, rows, sums=None):
        """Filter over NodeTable rows: per row -1 (fits) or the bit set of its insufficient resources (1 pods,
        2 cpu, 4 memory, 8 ephemeral-storage), which indexes ``_BATCH_STATUSES``; None with scalar resources.
        ``sums``: (cpu, memory, ephemeral-storage, pods) arrays over ``rows`` of the rows' nodes as they would be
        with some pods added or removed (``filter_resources`` in batch), instead of the table's."""
        req = self._batch_request(state, table)
        if req is None:
            return None
        if sums is None:
            sums = (table.req_cpu[rows], table.req_memory[rows], table.req_ephemeral[rows], table.pod_count[rows])
        failing = [(bit, mask) for bit, mask in self._failing(req, table, rows, *sums)
                   if np.count_nonzero(mask)]
        kinds = np.full(len(rows), -1 if not failing else 0, np.int8)
        for bit, mask in failing:
            kinds[mask] |= np.int8(bit)
        if failing:
            kinds[kinds == 0] = -1
            if self.unresolvable_over_allocatable:
                for res, alloc in (("cpu", table.alloc_cpu), ("memory", table.alloc_memory),
                                   ("ephemeral-storage", table.alloc_ephemeral)):
                    v = req.get(res, 0)
                    if v > 0:
                        kinds[v > alloc[rows]] |= np.int8(UNRESOLVABLE_BIT)
        return kinds, _BATCH_STATUSES

    def fit_limits(self, state, table, rows):
        """``filter_resources`` over rows as limits, for sums tested many times (the preemption dry run): (the
        highest pod count, [(column, the highest sum)] for each of cpu, memory and ephemeral-storage (columns 0-2)
        the pod requests) at which the pod still fits each row, as ``filter_batch_statuses`` would report no
        reason there; None where that is None."""
        req = self._batch_request(state, table)
        if req is None:
            return None
        limits = []
        for column, (res, alloc) in enumerate((("cpu", table.alloc_cpu), ("memory", table.alloc_memory),
                                               ("ephemeral-storage", table.alloc_ephemeral))):
            v = req.get(res, 0)
            if v > 0:
                limits.append((column, alloc[rows] - v))
        return table.alloc_pods[rows] - 1, limits

    @staticmethod
    def _batch_request(state, table):
        """The pod's requests when the batch forms apply: no scalar resource, every value exact in the table."""
        req = state.get(PRE_FILTER_KEY)
        if req is None or not table.exact:
            return None
        for k, v in req.items():
            if k not in BASIC and is_scalar_resource(k) and v != 0:
                return None
            if v >= EXACT_LIMIT:
                return None
        return req

    @staticmethod
    def _failing(req, table, rows, used_cpu, used_memory, used_ephemeral, num_pods) -> list:
        """fitsRequest over rows: (bit, mask of the rows short of it) for the pod slots and each basic resource
        the pod requests."""
        failing = [(1, num_pods + 1 > table.alloc_pods[rows])]
        for bit, res, alloc, used in ((2, "cpu", table.alloc_cpu, used_cpu),
                                      (4, "memory", table.alloc_memory, used_memory),
                                      (8, "ephemeral-storage", table.alloc_ephemeral, used_ephemeral)):
            v = req.get(res, 0)
            if v > 0:
                failing.append((bit, v > alloc[rows] - used))
        return failing
