"""DefaultPreemption: the PostFilter that preempts lower-priority pods (plugins/defaultpreemption, v1.30 and
v1.36.2; at 1.36 also a PreEnqueue plugin that holds a preemptor while its asynchronous preemption runs).

Cluster client contract (``handle.client``; None in the one-pass simulation, where victims stay in place):

* ``client.evict(victim, preemptor_uid, node_name)``: preempt one victim Pod. If the victim is waiting
  at Permit, reject it with message "preempted" (at 1.36 preempt it: an Error status, and the event's text ends
  in " (in kube-scheduler memory)."); otherwise set its condition ``DisruptionTarget=True``,
  reason ``PreemptionByScheduler``, message ``<schedulerName>: preempting to accommodate a higher priority
  pod``, delete it, and record the Normal ``Preempted`` event "Preempted by pod <preemptor_uid> on node
  <node_name>". Returns None on success or the error text; an error stops the preemption (status Error). At
  1.36 a victim that is already gone is no error.
* ``client.clear_nomination(pod)``: clear ``status.nominatedNodeName`` of a pod. Called for the
  lower-priority pods nominated to the chosen node, and for the preemptor when no node can be helped.
  Errors are ignored, as kube does.
* ``client.get_pod(namespace, name)``: the pod as the informer has it, or None (IsPodRunningPreemption).
"""
from __future__ import annotations

from functools import partial

from ...framework.gosort import sort_slice
from ...framework.handle import features_of
from ...framework.interface import QUEUE_SKIP, PostFilterPlugin, PostFilterResult, PreEnqueuePlugin
from ...framework.preemption import (
    Evaluator,
    filter_pods_with_pdb_violation,
    more_important_pod,
)
from ...framework.preemption_batch import LowPriorityPods
from ...framework.preemption_executor import Executor
from ...framework.profile import FrameworkError
from ...framework.resource_filter import add_requests, remove_requests
from ...framework.runtime import nominated_pods_to_add
from ...framework.status import Code, Status
from .. import names

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
NO_VICTIMS = "No preemption victims found for incoming pod"
WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"


def _validate_args(pct, absolute):
    """ValidateDefaultPreemptionArgs (as New calls it, with no field path prefix)."""
    errs = []
    if pct < 0 or pct > 100:
        errs.append(f"minCandidateNodesPercentage: Invalid value: {pct}: not in valid range [0, 100]")
    if absolute < 0:
        errs.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
    if pct == 0 and absolute == 0:
        errs.append("minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesAbsolute")
        errs.append("minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesPercentage")
    if len(errs) == 1:
        raise FrameworkError(errs[0])
    if errs:
        raise FrameworkError("[" + ", ".join(errs) + "]")


def _terminating_by_preemption(pod) -> bool:
    """podTerminatingByPreemption with PodDisruptionConditions on (the v1.30 default)."""
    if not pod.deletion_timestamp:
        return False
    for cond in pod.conditions:
        if cond.get("type") == "DisruptionTarget":
            return cond.get("status") == "True" and cond.get("reason") == "PreemptionByScheduler"
    return False


class DefaultPreemption(PostFilterPlugin):
    """Nominates a node where evicting lower-priority pods lets the pod fit, and evicts them."""

    name = names.DEFAULT_PREEMPTION

    def __init__(self, handle, min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
                 min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE):
        self.handle = handle
        # for dry runs on sums and NodeTable rows (Evaluator._resource_filter): select_victims_on_node takes one
        self.low_priority_pods = LowPriorityPods(more_important_pod)
        self.min_candidate_nodes_percentage = min_candidate_nodes_percentage
        self.min_candidate_nodes_absolute = min_candidate_nodes_absolute
        self.executor = Executor(handle)
        self.topology_aware = bool(features_of(handle).gates.get("TopologyAwareWorkloadScheduling"))

    @classmethod
    def new(cls, args, handle):
        args = args or {}
        pct = args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
        absolute = args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
        _validate_args(pct, absolute)
        return cls(handle, pct, absolute)

    # -- PostFilter --------------------------------------------------------------------------
    def _pod_group_refusal(self, pod):
        """With TopologyAwareWorkloadScheduling, a pod group's member is not preempted for when its PodGroup is
        missing or has scheduling constraints (preemption would run once per placement); None otherwise."""
        if pod.pod_group is None or not self.topology_aware:
            return None
        group = self.handle.objects.pod_groups.get(f"{pod.namespace}/{pod.pod_group}")
        if group is None:
            return Status(Code.UNSCHEDULABLE, "preemption: pod group for pod not found")
        if (group.get("spec") or {}).get("schedulingConstraints") is not None:
            return Status(Code.UNSCHEDULABLE,
                          "preemption: not eligible due to placement-based pod group scheduling limitation")
        return None

    def post_filter(self, state, pod, node_statuses):
        """Run the preemption evaluator; non-empty messages get the "preemption: " prefix.

        The result always carries ``record`` (the golden "preemption" object). A result with mode
        "noop" means the pod's nomination stays as it is (kube returns no result there)."""
        refusal = self._pod_group_refusal(pod)
        if refusal is not None:
            result, st = None, refusal
        else:
            result, st = Evaluator(self.handle, self).preempt(state, pod, node_statuses)
        if refusal is None and st is not None and st.message():
            st = Status(st.code, "preemption: " + st.message())
        if result is None:
            result = PostFilterResult("", mode="noop")
        result.record = {
            "attempted": True,
            "code": str(Code.SUCCESS if st is None else st.code),
            "message": "" if st is None else st.message(),
            "nominated_node": result.nominated_node_name or None,
            "victims": [p.key for p in result.victims],
        }
        if result.alternatives:
            result.record["possible_nominations"] = [{"node": node, "victims": [p.key for p in victims]}
                                                     for node, victims in result.alternatives]
        return result, st

    # -- the preemption.Interface policy -----------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """max(numNodes * percentage / 100, absolute), at most numNodes."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        if n < self.min_candidate_nodes_absolute:
            n = self.min_candidate_nodes_absolute
        if n > num_nodes:
            n = num_nodes
        return n

    def get_offset_and_num_candidates(self, num_nodes: int):
        """A random start offset (0 with the deterministic "name" tie-break) and the number of candidates."""
        offset = 0 if self.handle.tie_break == "name" else self.handle.rng.randrange(num_nodes)
        return offset, self.calculate_num_candidates(num_nodes)

    def pod_eligible_to_preempt_others(self, pod, nominated_node_status):
        """PodEligibleToPreemptOthers: (eligible, reason)."""
        if pod.preemption_policy == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        nom = pod.nominated_node_name
        if nom:
            if nominated_node_status is not None and \
                    nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            ni = self.handle.snapshot.get(nom)
            if ni is not None:
                prio = pod.priority
                for p in ni.pods:
                    if p.priority < prio and _terminating_by_preemption(p):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def select_victims_on_node(self, state, pod, node_info, pdbs, resource_filter=None):
        """SelectVictimsOnNode: remove every lower-priority pod, check the pod fits, then reprieve as many as
        possible (PDB-violating ones first, each group by importance). ``node_info`` and ``state`` are copies
        the dry run may change; with ``resource_filter`` (the cycle's ResourceFilter) neither changes: the
        node's pods are followed as sums. Returns (victims, number of PDB-violating victims, status)."""
        prio = pod.priority
        potential = [p for p in node_info.pods if p.priority < prio]
        if not potential:
            return None, 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
        nominated = self.handle.nominated_pods_for_node
        if resource_filter is not None:
            node = _NodeSums(resource_filter, node_info, nominated_pods_to_add(pod, node_info.name, nominated))
        else:
            node = _NodeCopy(self.handle.framework, state, pod, node_info, nominated)
        for p in potential:
            st = node.remove(p)
            if st is not None:
                return None, 0, st
        st = node.filter()
        if st is not None:
            return None, 0, st
        sort_slice(potential, more_important_pod)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims = []
        num_violating = 0
        for group, is_violating in ((violating, True), (non_violating, False)):
            for p in group:
                st = node.add(p)
                if st is not None:
                    return None, 0, st
                if node.filter() is None:
                    continue
                st = node.remove(p)
                if st is not None:
                    return None, 0, st
                victims.append(p)
                if is_violating:
                    num_violating += 1
        return victims, num_violating, None

    def ordered_score_funcs(self, nodes_to_victims):
        """No custom order: pickOneNodeForPreemption's default criteria apply."""
        return None


class PreEnqueueDefaultPreemption(DefaultPreemption, PreEnqueuePlugin):
    """DefaultPreemption from 1.36 on (registry_at), also a PreEnqueue plugin: a pod whose asynchronous preemption
    runs stays out of activeQ (gated) until it is done; with SchedulerAsyncPreemption off every pod passes."""

    def pre_enqueue(self, pod):
        if self.executor.is_pod_running_preemption(pod.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_PREEMPTION)
        return None

    def events_to_register(self):
        """A pod's deletion may end the preemption that gates it; its hint is QueueSkip
        (isPodSchedulableAfterPodDeletion: the plugins that rejected the pod decide). Nothing without asynchronous
        preemption."""
        return [("Pod", "Delete", self.is_pod_schedulable_after_pod_deletion)] if self.executor.asynchronous else []

    @staticmethod
    def is_pod_schedulable_after_pod_deletion(pod, old, new):
        return QUEUE_SKIP


class _NodeCopy:
    """The dry run's node as a NodeInfo copy: pods removed and added back for real, PreFilter extensions told."""

    def __init__(self, fwk, state, pod, node_info, nominated):
        self.fwk, self.state, self.pod, self.node_info = fwk, state, pod, node_info
        self.ext = fwk.has_pre_filter_extensions(state)  # without one, AddPod / RemovePod would do nothing
        # The nominations cannot change during a dry run: without a nominated pod to add, every Filter is the
        # plain one.
        if nominated_pods_to_add(pod, node_info.name, nominated):
            self.filter = partial(fwk.run_filter_with_nominated_pods, state, pod, node_info, nominated)
        else:
            self.filter = partial(fwk.run_filter, state, pod, node_info)

    def remove(self, p):
        self.node_info.remove_pod(p)
        return self.fwk.run_pre_filter_extension_remove_pod(self.state, self.pod, p, self.node_info) \
            if self.ext else None

    def add(self, p):
        self.node_info.add_pod(p)
        return self.fwk.run_pre_filter_extension_add_pod(self.state, self.pod, p, self.node_info) \
            if self.ext else None


class _NodeSums:
    """The dry run's node as the summed requests and number of its pods (ResourceFilter); the NodeInfo stays
    as it is. ``nominated``: the pods RunFilterPluginsWithNominatedPods adds there."""

    def __init__(self, resource_filter, node_info, nominated):
        self.rf, self.node_info = resource_filter, node_info
        self.requested = dict(node_info.requested)
        self.num_pods = len(node_info.pods)
        self.nominated_requests = None
        if nominated:
            self.nominated_requests = {}
            for p in nominated:
                add_requests(self.nominated_requests, p.requests)
            self.num_nominated = len(nominated)

    def remove(self, p):
        remove_requests(self.requested, p.requests)
        self.num_pods -= 1

    def add(self, p):
        add_requests(self.requested, p.requests)
        self.num_pods += 1

    def filter(self):
        if self.nominated_requests is not None:
            with_nominated = dict(self.requested)
            add_requests(with_nominated, self.nominated_requests)
            st = self.rf.status(self.node_info, with_nominated, self.num_pods + self.num_nominated)
            if st is not None:
                return st
        return self.rf.status(self.node_info, self.requested, self.num_pods)
