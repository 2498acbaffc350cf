"""DefaultPreemption: the PostFilter that preempts lower-priority pods (plugins/defaultpreemption, v1.30).

Cluster client contract (``handle.client``; None in the one-pass simulation, where victims stay in place):

* ``client.evict(victim, preemptor_uid, node_name)``: preempt one victim Pod. If the victim is waiting
  at Permit, reject it with message "preempted"; otherwise set its condition ``DisruptionTarget=True``,
  reason ``PreemptionByScheduler``, message ``<schedulerName>: preempting to accommodate a higher priority
  pod``, delete it, and record the Normal ``Preempted`` event "Preempted by pod <preemptor_uid> on node
  <node_name>". Returns None on success or the error text; an error stops the preemption (status Error).
* ``client.clear_nomination(pod)``: clear ``status.nominatedNodeName`` of a pod. Called for the
  lower-priority pods nominated to the chosen node, and for the preemptor when no node can be helped.
  Errors are ignored, as kube does.
"""
from __future__ import annotations

from functools import partial

from ...framework.gosort import sort_slice
from ...framework.interface import PostFilterPlugin, PostFilterResult
from ...framework.preemption import (
    Evaluator,
    filter_pods_with_pdb_violation,
    more_important_pod,
)
from ...framework.profile import FrameworkError
from ...framework.runtime import nominated_pods_to_add
from ...framework.status import Code, Status
from .. import names

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
NO_VICTIMS = "No preemption victims found for incoming pod"


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
        self.min_candidate_nodes_percentage = min_candidate_nodes_percentage
        self.min_candidate_nodes_absolute = min_candidate_nodes_absolute

    @classmethod
    def new(cls, args, handle):
        args = args or {}
        pct = args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
        absolute = args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
        _validate_args(pct, absolute)
        return cls(handle, pct, absolute)

    # -- PostFilter --------------------------------------------------------------------------
    def post_filter(self, state, pod, node_statuses):
        """Run the preemption evaluator; non-empty messages get the "preemption: " prefix.

        The result always carries ``record`` (the golden "preemption" object). A result with mode
        "noop" means the pod's nomination stays as it is (kube returns no result there)."""
        result, st = Evaluator(self.handle, self).preempt(state, pod, node_statuses)
        if st is not None and st.message():
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

    def select_victims_on_node(self, state, pod, node_info, pdbs):
        """SelectVictimsOnNode on copies of the state and node: remove every lower-priority pod, check the
        pod fits, then reprieve as many as possible (PDB-violating ones first, each group by importance).
        Returns (victims, number of PDB-violating victims, status)."""
        fwk = self.handle.framework
        nominated = self.handle.nominated_pods_for_node
        # The nominations cannot change during a dry run: without a nominated pod to add, every Filter below
        # is the plain one.
        if nominated_pods_to_add(pod, node_info.name, nominated):
            run_filter = partial(fwk.run_filter_with_nominated_pods, state, pod, node_info, nominated)
        else:
            run_filter = partial(fwk.run_filter, state, pod, node_info)
        prio = pod.priority
        potential = [p for p in node_info.pods if p.priority < prio]
        if not potential:
            return None, 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
        ext = fwk.has_pre_filter_extensions(state)  # without one, AddPod / RemovePod would do nothing
        for p in potential:
            node_info.remove_pod(p)
            if ext:
                st = fwk.run_pre_filter_extension_remove_pod(state, pod, p, node_info)
                if st is not None:
                    return None, 0, st
        st = run_filter()
        if st is not None:
            return None, 0, st
        sort_slice(potential, more_important_pod)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims = []
        num_violating = 0
        for group, is_violating in ((violating, True), (non_violating, False)):
            for p in group:
                node_info.add_pod(p)
                if ext:
                    st = fwk.run_pre_filter_extension_add_pod(state, pod, p, node_info)
                    if st is not None:
                        return None, 0, st
                if run_filter() is None:
                    continue
                node_info.remove_pod(p)
                if ext:
                    st = fwk.run_pre_filter_extension_remove_pod(state, pod, p, node_info)
                    if st is not None:
                        return None, 0, st
                victims.append(p)
                if is_violating:
                    num_violating += 1
        return victims, num_violating, None

    def ordered_score_funcs(self, nodes_to_victims):
        """No custom order: pickOneNodeForPreemption's default criteria apply."""
        return None
