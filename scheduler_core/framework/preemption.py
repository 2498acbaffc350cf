"""The generic preemption evaluator (kube-scheduler framework/preemption/preemption.go, v1.30).

``Evaluator.preempt`` finds the nodes where removing lower-priority pods would let the preemptor fit
(a dry run on cloned CycleState and NodeInfo), lets extenders trim the candidates, picks one node with
pickOneNodeForPreemption and, when the handle has a cluster client, evicts the victims. The policy parts
(eligibility, offset and number of candidates, victim selection on one node) come from a plugin object,
as kube's preemption.Interface; DefaultPreemption is that plugin.
"""
from __future__ import annotations

import itertools
from datetime import datetime
from functools import lru_cache

from ..extender import ExtenderError
from ..lazy import LazyDict
from ..objects.errors import ParseError
from ..objects.selectors import LabelSelector
from ..schedule_one import fit_error_message
from .candidates import Candidate, RowCandidates
from .handle import features_of
from .interface import PostFilterResult
from .preemption_batch import PRIORITY_SHIFT, batch_candidates
from .resource_filter import ResourceFilter
from .status import Code, Status

PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"


class PDB:
    """The parts of a policy/v1 PodDisruptionBudget that preemption reads."""

    __slots__ = ("namespace", "selector", "disruptions_allowed", "disrupted_pods")

    def __init__(self, raw: dict):
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        self.namespace = meta.get("namespace") or "default"
        try:
            sel = LabelSelector(spec.get("selector"), "spec.selector")
        except ParseError:
            sel = None  # an invalid selector matches no pod
        # A nil or empty selector matches nothing here (selector.Empty() is skipped by kube).
        self.selector = None if sel is None or sel.nothing or sel.is_empty() else sel
        self.disruptions_allowed = int(status.get("disruptionsAllowed") or 0)
        self.disrupted_pods = frozenset(status.get("disruptedPods") or ())


def pod_disruption_budgets(objects) -> list:
    """getPodDisruptionBudgets: every PDB of the cluster, parsed."""
    return [PDB(raw) for raw in objects.pod_disruption_budgets]


@lru_cache(maxsize=4096)
def _parse_time(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


_now_reads = itertools.count()


def pod_start_time(pod) -> tuple:
    """util.GetPodStartTime, comparable: ``(0, seconds)`` for a recorded ``status.startTime``; a pod that
    has none reads as "now", ``(1, n)``, where n grows with every read as successive time.Now() calls do.
    This keeps kube's order exactly, including its comparisons between two pods that have not started."""
    if pod.start_time:
        return 0, _parse_time(pod.start_time)
    return 1, next(_now_reads)


def more_important_pod(a, b) -> bool:
    """util.MoreImportantPod: higher priority, then the earlier start time."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return pod_start_time(a) < pod_start_time(b)


def earliest_pod_start_time(victims) -> tuple:
    """util.GetEarliestPodStartTime: the earliest start among the highest-priority victims. A pod without a
    start time reads as "now", later than any recorded start and than every earlier read, so when none of them
    has one the earliest is the first such read: it is the only one made (only the order of reads counts)."""
    max_prio = victims[0].priority
    for p in victims:
        if p.priority > max_prio:
            max_prio = p.priority
    earliest = None
    for p in victims:
        if p.priority == max_prio and p.start_time:
            t = _parse_time(p.start_time)
            if earliest is None or t < earliest:
                earliest = t
    return (1, next(_now_reads)) if earliest is None else (0, earliest)


def filter_pods_with_pdb_violation(pods, pdbs):
    """Split importance-ordered pods into (violating, non-violating) by the PDBs' remaining budgets."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating, non_violating = [], []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace or pdb.selector is None:
                    continue
                if not pdb.selector.matches(pod.labels) or pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def pick_one_node_for_preemption(nodes_to_victims: dict, order, score_funcs=None) -> str:
    """pickOneNodeForPreemption: apply the score functions in turn, keeping the best nodes, until one
    remains; else the first remaining. ``order`` is the candidate iteration order."""
    if not nodes_to_victims:
        return ""
    candidates = list(order)
    if not score_funcs:
        return _pick_by_default_criteria(nodes_to_victims, candidates)
    for f in score_funcs:
        scores = [f(node) for node in candidates]
        best = max(scores)
        selected = [node for node, score in zip(candidates, scores) if score == best]
        if len(selected) == 1:
            return selected[0]
        candidates = selected
    return candidates[0]


def _pick_by_default_criteria(nodes_to_victims: dict, candidates: list) -> str:
    """pickOneNodeForPreemption's default criteria: the fewest PDB violations, the lowest highest victim
    priority, the lowest sum of victim priorities (each shifted by MaxInt32 + 1), the fewest victims, then the
    latest start time. The first four compared as one key keep the same nodes as applying them in turn; the start
    times are read only on the nodes they leave, in order, as kube reads them."""
    keys = [_criteria_key(nodes_to_victims[node]) for node in candidates]
    best = max(keys)
    return _latest_start([nodes_to_victims[node] for node, key in zip(candidates, keys) if key == best]).name


def _criteria_key(c: Candidate) -> tuple:
    """pickOneNodeForPreemption's first four criteria as one key (higher is better)."""
    if c.key is not None:
        return c.key
    victims = c.victims
    return (-c.num_pdb_violations, -victims[0].priority,
            -(sum(p.priority for p in victims) + len(victims) * PRIORITY_SHIFT), -len(victims))


def tied_for_preemption(candidates: list) -> list:
    """The candidates pickOneNodeForPreemption's default criteria cannot tell apart, so that kube's choice among
    them depends on the order it iterates them (a Go map): the best on the first four criteria, then those whose
    highest-priority victims' earliest start time is the latest (a victim without a start time reads "now", so
    such candidates win, any of them)."""
    keys = [_criteria_key(c) for c in candidates]
    best = max(keys)
    kept = [c for c, key in zip(candidates, keys) if key == best]
    starts = [_recorded_earliest_start(c.victims) for c in kept]
    if None in starts:
        return [c for c, start in zip(kept, starts) if start is None]
    return [c for c, start in zip(kept, starts) if start == max(starts)]


def _recorded_earliest_start(victims):
    """The earliest recorded start time of the highest-priority victims, None when none has one (what
    earliest_pod_start_time reads as "now", without reading the clock)."""
    top = max(p.priority for p in victims)
    times = [_parse_time(p.start_time) for p in victims if p.priority == top and p.start_time]
    return min(times) if times else None


def _latest_start(selected: list) -> Candidate:
    """pickOneNodeForPreemption's last criterion: of the candidates the first four leave (in order), the one whose
    highest-priority victims' earliest start time is the latest; the first of those tied."""
    if len(selected) == 1:
        return selected[0]
    if all(c.unstarted for c in selected):
        return selected[-1]   # each one's earliest start reads "now", later than the one before it
    starts = [earliest_pod_start_time(c.victims) for c in selected]
    return selected[starts.index(max(starts))]


class Evaluator:
    """Preemption for one PostFilter call. ``policy`` provides get_offset_and_num_candidates,
    pod_eligible_to_preempt_others, select_victims_on_node, ordered_score_funcs and its ``executor``.

    With ``handle.client`` set (the full scheduler loop) the policy's executor (preemption_executor.Executor)
    evicts the chosen victims and clears the lower-priority nominations on the node; see DefaultPreemption for the
    client contract.
    """

    def __init__(self, handle, policy):
        self.handle = handle
        self.policy = policy

    @property
    def deterministic(self) -> bool:
        return self.handle.tie_break == "name"

    def preempt(self, state, pod, node_statuses: dict):
        """Preempt: returns (PostFilterResult or None, status). ``pod`` must be the current object (kube
        re-reads it from the informer first).

        * (None, Error or Unschedulable): keep the pod's nomination as it is;
        * (result with empty node, Unschedulable): no node can be helped; clear the nomination;
        * (result with node, None): nominate that node.
        """
        nominated_status = node_statuses.get(pod.nominated_node_name) if pod.nominated_node_name else None
        ok, msg = self.policy.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)
        all_nodes = self.handle.snapshot.node_infos
        candidates, statuses, err = self.find_candidates(state, all_nodes, pod, node_statuses)
        if err is not None and not candidates:
            return None, Status.error(err)
        if not candidates:
            msg = fit_error_message(len(statuses), statuses)
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, msg)
        candidates, st = self.call_extenders(pod, candidates)
        if st is not None:
            return None, st
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, "no candidate node for preemption")
        if self.handle.client is not None:
            st = self.policy.executor.actuate(best, pod)
            if st is not None:
                return None, st
        return PostFilterResult(best.name, victims=best.victims, alternatives=self.tied(candidates)), None

    def tied(self, candidates) -> list:
        """[(node, victims)] of the candidates kube could have chosen as well as the one chosen, by node name (the
        default criteria only; empty when there is no tie)."""
        if len(candidates) < 2:
            return []
        rows = isinstance(candidates, RowCandidates)
        if self.policy.ordered_score_funcs(candidates.by_name() if rows else {c.name: c for c in candidates}):
            return []
        if rows:
            candidates = [candidates[i] for i in candidates.tied(list(range(len(candidates.names))))]
        tied = tied_for_preemption(list(candidates))
        return sorted(((c.name, c.victims) for c in tied), key=lambda t: t[0]) if len(tied) > 1 else []

    def find_candidates(self, state, all_nodes, pod, node_statuses):
        """Returns (candidates, {node: status} of the nodes that are not candidates, error text or None). When
        the dry run runs on NodeTable rows (``preemption_batch``, a policy with ``low_priority_pods``) and finds
        candidates, the statuses are only those of the nodes preemption cannot help: nothing reads the others
        then (``preempt`` reads the statuses only when there is no candidate)."""
        if not all_nodes:
            return [], {}, "no nodes available"
        potential = []
        statuses = {}
        unresolvable = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        values = node_statuses.distinct_values() if isinstance(node_statuses, LazyDict) else node_statuses.values()
        if not any(st is not None and st.code == unresolvable for st in values):
            potential = all_nodes   # the usual case, without a lookup per node (read only)
        else:
            for ni in all_nodes:
                st = node_statuses.get(ni.name)
                if st is not None and st.code == unresolvable:
                    statuses[ni.name] = Status(unresolvable, PREEMPTION_NOT_HELPFUL)
                else:
                    potential.append(ni)
        if not potential:
            # v1.30 clears the pod's nomination here; 1.36 leaves it to the failure handler
            client = self.handle.client
            if client is not None and pod.nominated_node_name and \
                    not features_of(self.handle).has("preemption-executor"):
                client.clear_nomination(pod)
            return [], statuses, None
        pdbs = pod_disruption_budgets(self.handle.objects)
        offset, num_candidates = self.policy.get_offset_and_num_candidates(len(potential))
        rf = self._resource_filter(state, pod)
        if rf is not None:
            found = batch_candidates(self.handle, state, pod, potential, pdbs, offset, num_candidates, rf,
                                     self.policy.low_priority_pods)
            if found is not None:
                return found, statuses, None
        candidates, dry_statuses, err = self.dry_run_preemption(state, pod, potential, pdbs, offset,
                                                                num_candidates, rf)
        dry_statuses.update(statuses)
        return candidates, dry_statuses, err

    def _resource_filter(self, state, pod):
        """The cycle's ResourceFilter when the policy can follow nodes as sums (it has ``low_priority_pods``, and
        its ``select_victims_on_node`` takes a ``resource_filter``) and the Filter allows it; else None."""
        if getattr(self.policy, "low_priority_pods", None) is None:
            return None
        return ResourceFilter.for_cycle(self.handle.framework, state, pod)

    def dry_run_preemption(self, state, pod, potential, pdbs, offset: int, num_candidates: int, sums=False):
        """DryRunPreemption: SelectVictimsOnNode on copies of each potential node, from ``offset``, until
        there is a non-violating candidate and ``num_candidates`` candidates in all (parallelism 1). When the
        Filter reads no more of a node than its Node object and its pods' summed requests, no node (nor state)
        is copied: the policy follows the node's pods as sums (``sums``: the cycle's ResourceFilter or None,
        found here when not given)."""
        non_violating, violating = [], []
        statuses = {}
        errors = []
        n = len(potential)
        prio = pod.priority
        clone_state = self.handle.framework.has_pre_filter_extensions(state)
        if sums is False:
            sums = self._resource_filter(state, pod)
        for i in range(n):
            ni = potential[(offset + i) % n]
            for p in ni.pods:
                if p.priority < prio:
                    break
            else:
                # Nothing to remove: kube's SelectVictimsOnNode says so before looking further.
                statuses[ni.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                           "No preemption victims found for incoming pod")
                continue
            if sums is not None:
                victims, num_violations, st = self.policy.select_victims_on_node(state, pod, ni, pdbs, sums)
            else:
                info_copy = ni.clone()
                state_copy = state.clone() if clone_state else state
                victims, num_violations, st = self.policy.select_victims_on_node(state_copy, pod, info_copy, pdbs)
            if st is None and victims:
                c = Candidate(ni.name, victims, num_violations)
                bucket = violating if num_violations else non_violating
                if len(bucket) < num_candidates:
                    bucket.append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if st is None:
                st = Status.error(f'expected at least one victim pod on node "{ni.name}"')
            if st.code == Code.ERROR:
                errors.append(st.as_error())
            statuses[ni.name] = st
        return non_violating + violating, statuses, _aggregate(errors)

    def call_extenders(self, pod, candidates):
        """callExtenders: extenders with a preempt verb may drop candidates or victims."""
        extenders = self.handle.extenders
        if not extenders:
            return candidates, None
        victims_map = {c.name: (c.victims, c.num_pdb_violations) for c in candidates}
        if not victims_map:
            return candidates, None
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                result = ext.process_preemption(pod, victims_map)
            except ExtenderError as err:
                if ext.ignores(err):
                    continue
                return None, Status.error(str(err))
            for node in list(result):
                victims = result[node]
                if victims is None or not victims[0]:
                    if ext.ignorable:
                        del result[node]
                        continue
                    return None, Status.error(f'expected at least one victim pod on node "{node}"')
            victims_map = result
            if not victims_map:
                break
        return [Candidate(node, v, k) for node, (v, k) in victims_map.items()], None

    def select_candidate(self, candidates):
        """SelectCandidate: the single candidate, or pickOneNodeForPreemption over all of them."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        rows = isinstance(candidates, RowCandidates)
        by_node = candidates.by_name() if rows else {c.name: c for c in candidates}
        # kube iterates a Go map: the positions are shuffled (the same draws as shuffling the names)
        order = list(range(len(by_node)))
        names = list(by_node)
        if self.deterministic:
            order.sort(key=names.__getitem__)
        else:
            self.handle.rng.shuffle(order)
        score_funcs = self.policy.ordered_score_funcs(by_node)
        if rows and not score_funcs:   # the default criteria on the arrays: a Candidate made only for the chosen
            tied = candidates.tied(order)
            if candidates.unstarted[tied].all():
                return candidates[tied[-1]]   # see _latest_start
            return _latest_start([candidates[i] for i in tied])
        return by_node[pick_one_node_for_preemption(by_node, [names[i] for i in order], score_funcs)]


def _aggregate(errors):
    """utilerrors.NewAggregate(errs).Error(), or None without errors."""
    if not errors:
        return None
    if len(errors) == 1:
        return errors[0]
    unique = list(dict.fromkeys(errors))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
