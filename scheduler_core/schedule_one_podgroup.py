"""The pod-group scheduling cycle of v1.36.2 (schedule_one_podgroup.go, GenericWorkload): a popped pod that belongs
to a PodGroup is scheduled with every unscheduled member of its group that is in the queue, in one cycle.

Each member, in order (priority, then first attempt), goes through the usual algorithm (schedule_pod, PostFilter
included) and, when it fits or needs preemption, is assumed on its node and reserved, so that the next members see
it, and runs Permit. The group is schedulable once a member's Permit succeeds (GangScheduling: ``minCount``
members scheduled). Every assumption is then undone; if the group is schedulable its fitting members go on to
their binding cycles as single pods do (assume, Reserve, Permit, bind), else they fail with their Permit message.
The PodGroup gets a PodGroupScheduled condition.

With TopologyAwareWorkloadScheduling the members are tried on each placement the PlacementGenerate plugin makes
(a topology domain: only its nodes are candidates, plugins still see the whole cluster) and the PlacementScore
plugins choose among the placements where the group is schedulable.

Where kube assumes the members in the cycle's snapshot, this loop assumes them in the cache and brings the snapshot
up to date before each member (nothing else changes the cache while a cycle runs). Workload-aware preemption
(WorkloadAwarePreemption) is not implemented: that gate is only off.
"""
from __future__ import annotations

import datetime
import logging

from .cluster.simulated import ClusterError
from .framework.cycle_state import CycleState
from .framework.interface import PodGroupAssignments
from .framework.podgroup_state import PodGroupStateError
from .framework.status import Code, Status
from .queue import CLEAR_NOMINATED_NODE, NominatingInfo
from .schedule_one import fit_error_message, schedule_pod
from .trace import CycleTrace

log = logging.getLogger(__name__)

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
WAITING_ON_PREEMPTION = "pod group is waiting for preemption to complete"
POD_GROUP_SCHEDULED = "PodGroupScheduled"


def _group_unschedulable(*reasons) -> Status:
    """NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable)."""
    return Status(Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE, *reasons, err=POD_GROUP_UNSCHEDULABLE)


class PodGroupInfo:
    """QueuedPodGroupInfo: a pod group's namespace and name and its members popped for this cycle."""

    def __init__(self, namespace: str, name: str, pinfos):
        self.namespace, self.name = namespace, name
        self.pinfos = list(pinfos)

    @property
    def key(self) -> tuple:
        return self.namespace, self.name


class PodResult:
    """algorithmResult: one member's outcome in one try of the group."""

    __slots__ = ("pinfo", "trace", "state", "host", "status", "permit_status", "requires_preemption")

    def __init__(self, pinfo, trace, state, host=None, status=None, permit_status=None,
                 requires_preemption=False):
        self.pinfo, self.trace, self.state, self.host = pinfo, trace, state, host
        self.status, self.permit_status, self.requires_preemption = status, permit_status, requires_preemption


class GroupResult:
    """podGroupAlgorithmResult: the members' results, the group's status (None: schedulable) and whether it
    waits on preemption."""

    def __init__(self, status, results=(), waiting_on_preemption=False):
        self.status = status
        self.results = list(results)
        self.waiting_on_preemption = waiting_on_preemption


class PlacementView:
    """The snapshot as the scheduler's node search sees it while a placement is assumed (AssumePlacement): only
    the placement's nodes are candidates; everything else is the snapshot's (plugins read their handle's)."""

    def __init__(self, snapshot, nodes):
        self._snapshot = snapshot
        self.node_infos = list(nodes)
        self._names = {ni.name for ni in self.node_infos}

    def get(self, name: str):
        """GetNodeInPlacement."""
        return self._snapshot.get(name) if name in self._names else None

    def __getattr__(self, name):
        return getattr(self._snapshot, name)


class PodGroupCycle:
    """scheduleOnePodGroup for one Scheduler (scheduler.py): its cache, queue, snapshot, context and handlers."""

    def __init__(self, sched):
        self.sched = sched

    # -- the popped group ----------------------------------------------------------------------
    def pod_group_info(self, pinfo) -> PodGroupInfo:
        """podGroupInfoForPod: the popped pod and every other unscheduled member the queue gives up, sorted by
        priority (highest first), then by first attempt."""
        sched = self.sched
        pod = pinfo.pod
        state = sched.cache.pod_group_states.get(pod.namespace, pod.pod_group)
        pinfos = [pinfo]
        for other in state.unscheduled_pods().values():
            if other.name == pod.name:
                continue
            popped = sched.queue.pop_specific_pod(other)
            if popped is not None:
                pinfos.append(popped)
        pinfos.sort(key=lambda p: (-p.pod.priority, p.initial_attempt_timestamp or 0))
        return PodGroupInfo(pod.namespace, pod.pod_group, pinfos)

    def run(self, pinfo):
        """scheduleOnePodGroup for the popped ``pinfo``; returns the popped pod's trace (None if not attempted)."""
        sched = self.sched
        try:
            group = self.pod_group_info(pinfo)
        except PodGroupStateError as err:
            fwk = sched.profiles.get(pinfo.pod.scheduler_name)
            if fwk is None:
                sched.queue.done(pinfo.pod.uid)
                return None
            tr = _trace(fwk, sched, pinfo)
            sched._fail(fwk, pinfo, Status.error(f"error while retrieving pod group state: {err}"), None, tr)
            return tr
        fwk, err = self._framework(group)
        if err:
            traces = []
            for p in group.pinfos:
                pod_fwk = sched.profiles.get(p.pod.scheduler_name)
                if pod_fwk is None:
                    sched.queue.done(p.pod.uid)
                    return None
                tr = _trace(pod_fwk, sched, p)
                sched._fail(pod_fwk, p, Status.error(err), CLEAR_NOMINATED_NODE, tr)
                traces.append(tr)
            return traces[0]
        kept = []
        for p in group.pinfos:
            if sched.skip_pod_schedule(p.pod):
                sched.queue.done(p.pod.uid)
            else:
                kept.append(p)
        group.pinfos = kept
        if not kept:
            return None
        sched.cache.update_snapshot(sched.snapshot)
        result = self._algorithm(fwk, CycleState(), group)
        return self._submit(fwk, group, result, pinfo)

    def _framework(self, group):
        """frameworkForPodGroup: (the profile of every member, None) or (None, kube's error text)."""
        name = ""
        for p in group.pinfos:
            if not name:
                name = p.pod.scheduler_name
            elif p.pod.scheduler_name != name:
                return None, (f'all pods in a single pod group should have the same .spec.schedulerName set, got: '
                              f'"{p.pod.scheduler_name}" and "{name}"')
        fwk = self.sched.profiles.get(name)
        if fwk is None:
            return None, f'profile not found for scheduler name "{name}"'
        return fwk, None

    # -- the algorithm -------------------------------------------------------------------------
    def _algorithm(self, fwk, group_state, group) -> GroupResult:
        """podGroupSchedulingAlgorithm: over placements with TopologyAwareWorkloadScheduling, else over every
        node."""
        if self.sched.features.gates.get("TopologyAwareWorkloadScheduling"):
            return self._placement_algorithm(fwk, group_state, group)
        return self._default_algorithm(fwk, group, self.sched.snapshot)

    def _placement_algorithm(self, fwk, group_state, group) -> GroupResult:
        """podGroupSchedulingPlacementAlgorithm: the group on each placement, the best schedulable one kept."""
        sched = self.sched
        all_nodes = sched.snapshot.node_infos
        placements, st = fwk.run_placement_generate(group_state, group.key, all_nodes)
        if st is not None:
            return GroupResult(st)
        first, feasible = None, []
        for placement in placements:
            if len(placement.nodes) == len(all_nodes):   # every node: no placement to assume
                result = self._default_algorithm(fwk, group, sched.snapshot, placement.name)
            else:
                # the NodeTable paths search every row: a placement is searched node by node
                batch, sched.ctx.batch = sched.ctx.batch, False
                try:
                    result = self._default_algorithm(fwk, group, PlacementView(sched.snapshot, placement.nodes),
                                                     placement.name)
                finally:
                    sched.ctx.batch = batch
            if result.status is not None and result.status.code == Code.ERROR:
                return result
            first = first or result
            if result.status is None or result.waiting_on_preemption:
                feasible.append((placement, result))
        if not feasible:
            first.status = Status(Code.UNSCHEDULABLE, f"0/{len(placements)} placements are available, first "
                                                      f"placement status: {first.status.as_error()}")
            return first
        if len(feasible) == 1:
            return feasible[0][1]
        best, st = self._best_placement(fwk, group_state, group, feasible)
        if st is not None:
            return GroupResult(st)
        return best

    def _best_placement(self, fwk, group_state, group, feasible):
        """findBestPlacement: the highest total of the PlacementScore plugins (ties: kube draws at random; here
        the scheduler's tie-break, by name with ``name``)."""
        assignments = [PodGroupAssignments(placement, [(r.pinfo.pod, r.host) for r in result.results
                                                       if r.host and (r.status is None or r.requires_preemption)])
                       for placement, result in feasible]
        scores, st = fwk.run_placement_score(group_state, group.key, assignments)
        if st is not None:
            return None, st
        best_total = max(total for _p, _s, total in scores)
        tied = [i for i, (_p, _s, total) in enumerate(scores) if total == best_total]
        if self.sched.ctx.tie_break == "name":
            pick = min(tied, key=lambda i: scores[i][0].name)
        else:
            pick = self.sched.ctx.rng.choice(tied)
        table = {placement.name: {"plugins": dict(plugin_scores), "total": total}
                 for placement, plugin_scores, total in scores}
        for _placement, result in feasible:
            for r in result.results:
                r.trace.pod_group["placement_scores"] = table
        return feasible[pick][1], None

    def _default_algorithm(self, fwk, group, snapshot, placement=None) -> GroupResult:
        """podGroupSchedulingDefaultAlgorithm: each member in order, the fitting ones assumed for the next; every
        assumption undone at the end. ``snapshot`` is the scheduler's or a placement's view; ``placement`` its
        name."""
        result = GroupResult(_group_unschedulable())
        requires_preemption = False
        reverts = []
        try:
            for pinfo in group.pinfos:
                res, revert = self._pod_algorithm(fwk, pinfo, snapshot, group, placement)
                result.results.append(res)
                if res.status is not None and not res.requires_preemption:
                    if res.status.is_rejected():
                        continue   # the group may still be schedulable if a later Permit succeeds
                    result.status = Status.error(f"failed to schedule other pod from a pod group: "
                                                 f"{res.status.as_error()}")
                    result.waiting_on_preemption = False
                    break
                reverts.append(revert)
                requires_preemption = requires_preemption or res.requires_preemption
                if res.permit_status is None:
                    if requires_preemption:
                        result.status = _group_unschedulable(WAITING_ON_PREEMPTION)
                        result.waiting_on_preemption = True
                    else:
                        result.status = None
        finally:
            for revert in reversed(reverts):
                revert()
        return result

    def _pod_algorithm(self, fwk, pinfo, snapshot, group, placement):
        """podGroupPodSchedulingAlgorithm: (PodResult, the function undoing its assumption or None)."""
        sched = self.sched
        pod = pinfo.pod
        sched.cache.update_snapshot(sched.snapshot)
        state = CycleState()
        deleted = sched._cycle_deleted = []
        try:
            tr, state = schedule_pod(fwk, sched.ctx, pod, snapshot, state, attempt=pinfo.attempts)
        finally:
            sched._cycle_deleted = None
        tr.victims = deleted
        tr.nominated_node_before = pod.nominated_node_name
        tr.pod_group = {"name": f"{group.namespace}/{group.name}", "placement": placement}
        requires_preemption = False
        host = tr.chosen
        if tr.error:
            return PodResult(pinfo, tr, state, status=Status.error(tr.error)), None
        if not host:
            res = tr.post_filter_result
            if res is not None and res.nominated_node_name:
                host, requires_preemption = res.nominated_node_name, True
            else:
                code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if tr.num_all_nodes == 0 else Code.UNSCHEDULABLE
                return PodResult(pinfo, tr, state, status=Status(code, tr.message)), None
        assumed = pod.bound_to(host)
        try:
            sched.cache.assume_pod(assumed)
        except Exception as err:   # CacheError
            return PodResult(pinfo, tr, state, status=Status.error(str(err))), None
        sched.queue.delete_nominated_pod_if_exists(assumed)
        st = fwk.run_reserve(state, assumed, host)
        if st is not None:
            tr.reserve_status = st
            self._unassume(fwk, state, assumed, host, pod)
            return PodResult(pinfo, tr, state, host, status=_at_node(st, host)), None

        def revert():
            self._unassume(fwk, state, assumed, host, pod)
        permit, _waits = fwk.run_permit(state, assumed, host)
        if permit is not None and permit.code != Code.WAIT:
            revert()
            return PodResult(pinfo, tr, state, host, status=_at_node(permit, host)), None
        status = Status(Code.UNSCHEDULABLE, tr.message) if requires_preemption else None
        return PodResult(pinfo, tr, state, host, status, permit, requires_preemption), revert

    def _unassume(self, fwk, state, assumed, host, pod) -> None:
        """unreserveAndForget in a pod-group cycle: Unreserve, forget the assumption, restore the nomination."""
        sched = self.sched
        fwk.run_unreserve(state, assumed, host)
        sched.cache.forget_pod(assumed)
        if pod.nominated_node_name:
            sched.queue.add_nominated_pod(pod, NominatingInfo("override", pod.nominated_node_name))

    # -- the outcome ---------------------------------------------------------------------------
    def _submit(self, fwk, group, result: GroupResult, popped):
        """submitPodGroupAlgorithmResult: binding cycles for a schedulable group's fitting members, failures for
        the others, and the PodGroupScheduled condition. Returns the popped pod's trace."""
        sched = self.sched
        by_uid = {r.pinfo.pod.uid: r for r in result.results}
        group_error = result.status is not None and result.status.code == Code.ERROR
        popped_trace = None
        for pinfo in group.pinfos:
            res = by_uid.get(pinfo.pod.uid)
            tr = res.trace if res is not None else _trace(fwk, sched, pinfo)
            tr.pod_group = dict(tr.pod_group or {"name": f"{group.namespace}/{group.name}"},
                                status=result.status.message() if result.status is not None else "")
            if pinfo is popped:
                popped_trace = tr
            if group_error:
                own = res.status if res is not None and res.status is not None and \
                    res.status.code == Code.ERROR else result.status
                sched._fail(fwk, pinfo, own, CLEAR_NOMINATED_NODE, tr)
            elif res is not None and res.status is None:
                if result.status is None:
                    sched._assume_and_reserve(fwk, res.state, pinfo, tr)
                elif result.waiting_on_preemption:
                    sched._fail(fwk, pinfo, result.status, NominatingInfo("override", res.host), tr)
                else:
                    sched._fail(fwk, pinfo, _group_unschedulable(res.permit_status.message()),
                                CLEAR_NOMINATED_NODE, tr)
            elif res is not None and res.requires_preemption and not result.waiting_on_preemption:
                sched._fail(fwk, pinfo, _group_unschedulable(res.permit_status.message()), CLEAR_NOMINATED_NODE, tr)
            elif res is not None and res.requires_preemption:
                sched._fail(fwk, pinfo, res.status, NominatingInfo("override", res.host), tr)
            elif res is not None:
                self._fail_member(fwk, pinfo, res, tr)
            else:
                sched._fail(fwk, pinfo, result.status, CLEAR_NOMINATED_NODE, tr)
        self._set_condition(group, result)
        return popped_trace

    def _fail_member(self, fwk, pinfo, res, tr) -> None:
        """A member that did not fit: its own failure, as a single pod's."""
        sched = self.sched
        if res.status.code == Code.ERROR:
            sched._fail(fwk, pinfo, res.status, CLEAR_NOMINATED_NODE, tr)
        elif res.host:   # rejected at Reserve or Permit: a FitError over its one node
            sched._fail(fwk, pinfo, res.status, CLEAR_NOMINATED_NODE, tr,
                        plugins=[res.status.plugin] if res.status.plugin else [])
        else:
            sched._fail_unschedulable(fwk, pinfo, tr)

    def _set_condition(self, group, result: GroupResult) -> None:
        """updatePodGroupCondition: PodGroupScheduled True (Scheduled), False (Unschedulable) or False
        (SchedulerError), written to the PodGroup's status when it changes; a True condition is never turned back
        to False (a later cycle for extra members)."""
        if result.status is None:
            condition = {"type": POD_GROUP_SCHEDULED, "status": "True", "reason": "Scheduled", "message": ""}
        elif result.status.is_rejected():
            condition = {"type": POD_GROUP_SCHEDULED, "status": "False", "reason": "Unschedulable",
                         "message": result.status.message()}
        else:
            condition = {"type": POD_GROUP_SCHEDULED, "status": "False", "reason": "SchedulerError",
                         "message": result.status.as_error()}
        cluster = self.sched.cluster
        pg = cluster.get_object("PodGroup", f"{group.namespace}/{group.name}")
        if pg is None:
            log.error("Failed to get PodGroup %s/%s for status update", group.namespace, group.name)
            return
        status = pg.get("status") or {}
        existing = next((c for c in status.get("conditions") or () if c.get("type") == POD_GROUP_SCHEDULED), None)
        if existing is not None and existing.get("status") == "True" and condition["status"] != "True":
            return
        condition["observedGeneration"] = (pg.get("metadata") or {}).get("generation") or 0
        conditions, changed = set_status_condition(status.get("conditions") or [], condition,
                                                   _rfc3339(self.sched.clock.now()))
        if not changed:
            return
        try:
            cluster.update_object("PodGroup", dict(pg, status=dict(status, conditions=conditions)))
        except ClusterError as err:
            log.error("Failed to update PodGroup status %s/%s: %s", group.namespace, group.name, err)


def set_status_condition(conditions, condition: dict, now: str) -> tuple:
    """meta.SetStatusCondition: (the new list, whether it changed); the transition time moves with the status."""
    out = [dict(c) for c in conditions]
    for c in out:
        if c.get("type") != condition["type"]:
            continue
        changed = False
        if c.get("status") != condition["status"]:
            c["status"], c["lastTransitionTime"], changed = condition["status"], now, True
        for key in ("reason", "message", "observedGeneration"):
            if c.get(key) != condition[key]:
                c[key], changed = condition[key], True
        return out, changed
    out.append({"type": condition["type"], "status": condition["status"],
                 "observedGeneration": condition["observedGeneration"], "lastTransitionTime": now,
                 "reason": condition["reason"], "message": condition["message"]})
    return out, True


def _rfc3339(t: float) -> str:
    """metav1.Time's text."""
    return datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _at_node(st, host: str) -> Status:
    """A Reserve or Permit rejection as kube's FitError over the one node (other failures as they are)."""
    if st.is_rejected():
        return Status(st.code, fit_error_message(1, {host: st}), plugin=st.plugin)
    return st


def _trace(fwk, sched, pinfo):
    """The trace of a member that was not tried (the group failed before it)."""
    return CycleTrace(pinfo.pod, fwk.profile_name, cycle=sched.ctx.cycle, attempt=pinfo.attempts)
