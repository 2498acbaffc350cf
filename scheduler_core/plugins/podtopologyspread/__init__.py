"""PodTopologySpread: spread pods across topology domains (hard constraints filter, soft ones score).

Constraints come from the pod (DoNotSchedule for Filter, ScheduleAnyway for Score) or, if the pod has
none, from the plugin's default constraints with a selector deduced from the Services and controller
selecting the pod. Counts are computed once per cycle in PreFilter / PreScore, per topology key and value,
so Filter and Score cost O(constraints) per node (a hostname score counts that node's pods).
"""
from __future__ import annotations

import numpy as np

from ...objects.field import (
    aggregate,
    child,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from ...objects.identifiers import is_qualified_name
from ...framework.handle import queueing_hints_of
from ...framework.interface import (
    QUEUE,
    QUEUE_SKIP,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from ...framework.node_table import counts_by_code
from ...framework.profile import FrameworkError
from ...framework.status import Code, Status
from ...framework import signers
from ...objects.pod import TopologySpreadConstraint
from .. import names
from .common import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    ConstraintError,
    get_constraints,
    matching_per_row,
)
from .filtering import compute_pre_filter_state
from .scoring import compute_pre_score_state, normalize, normalize_array

PRE_FILTER_KEY = "PreFilter" + names.POD_TOPOLOGY_SPREAD
PRE_SCORE_KEY = "PreScore" + names.POD_TOPOLOGY_SPREAD

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

# The Filter rejections, as indexed by filter_batch_statuses' kinds.
_BATCH_STATUSES = ((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,)),
                   (Code.UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,)))


def default_args(args) -> dict:
    """SetDefaults_PodTopologySpreadArgs: defaultingType System when unset."""
    out = dict(args or {})
    if not out.get("defaultingType"):
        out["defaultingType"] = SYSTEM_DEFAULTING
    return out


def validate_args(args: dict, path: str = "") -> list:
    """ValidatePodTopologySpreadArgs: field errors in kube's order."""
    errs = []
    dtype = args.get("defaultingType", "")
    constraints = args.get("defaultConstraints") or []
    dpath = child(path, "defaultingType")
    if dtype not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(not_supported(dpath, dtype, (SYSTEM_DEFAULTING, LIST_DEFAULTING)))
    elif dtype == SYSTEM_DEFAULTING and constraints:
        errs.append(invalid(dpath, dtype, "when .defaultConstraints are not empty"))
    cpath = child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = f"{cpath}[{i}]"
        skew = c.get("maxSkew", 0) or 0
        if skew <= 0:
            errs.append(invalid(f"{p}.maxSkew", skew, "not in valid range (0, inf)"))
        key = c.get("topologyKey", "") or ""
        if not key:
            errs.append(required(f"{p}.topologyKey", "can not be empty"))
        else:
            errs.extend(invalid(f"{p}.topologyKey", key, msg) for msg in is_qualified_name(key))
        when = c.get("whenUnsatisfiable", "") or ""
        if not when:
            errs.append(required(f"{p}.whenUnsatisfiable", "can not be empty"))
        elif when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            errs.append(not_supported(f"{p}.whenUnsatisfiable", when, (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)))
        if c.get("labelSelector") is not None:
            errs.append(forbidden(f"{p}.labelSelector",
                                  "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if other.get("topologyKey", "") == key and other.get("whenUnsatisfiable", "") == when:
                errs.append(duplicate(p, f"{{{key}, {when}}}"))
                break
    return errs


def _involved_in_spreading(incoming, pod) -> bool:
    """involvedInTopologySpreading: the pod itself, or a bound or nominated pod of its namespace."""
    if incoming.uid == pod.uid:
        return True
    if not incoming.node_name and not incoming.nominated_node_name:
        return False
    return incoming.namespace == pod.namespace


class PodTopologySpread(PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin,
                        ScoreExtensions):
    name = names.POD_TOPOLOGY_SPREAD

    def __init__(self, args, handle):
        args = default_args(args)
        errs = validate_args(args)
        if errs:
            raise FrameworkError(aggregate(errs))
        self.handle = handle
        self.queueing_hints = queueing_hints_of(handle)
        if args["defaultingType"] == SYSTEM_DEFAULTING:
            self.default_constraints = SYSTEM_DEFAULT_CONSTRAINTS
            self.system_defaulted = True
        else:
            self.default_constraints = tuple(
                TopologySpreadConstraint(c, f"defaultConstraints[{i}]")
                for i, c in enumerate(args.get("defaultConstraints") or ()))
            self.system_defaulted = False

    @classmethod
    def new(cls, args, handle):
        return cls(args, handle)

    def _constraints(self, pod, action: str) -> list:
        return get_constraints(pod, self.default_constraints, self.handle.snapshot.objects, action)

    # -- PreFilter / extensions / Filter -----------------------------------------------------
    def pre_filter(self, state, pod):
        try:
            constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        except ConstraintError as e:
            return None, Status.error(f"get constraints from pod: {e}")
        if not constraints:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, compute_pre_filter_state(pod, constraints, self.handle.snapshot.table()))
        return None, None

    def pre_filter_extensions(self):
        return self

    def _update(self, state, pod, other, node_info, delta: int):
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        s.update_with_pod(other, pod, node_info.node, delta)
        return None

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        return self._update(state, pod_to_schedule, pod_to_add, node_info, 1)

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        return self._update(state, pod_to_schedule, pod_to_remove, node_info, -1)

    def filter(self, state, pod, node_info):
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        labels = node_info.node.labels
        for c, self_match in zip(s.constraints, s.self_match):
            key = c.topology_key
            value = labels.get(key)
            if value is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
            domains = s.domains_num.get(key)
            if domains is None:
                # kube logs "failed to retrieve the number of domains" and ignores the constraint.
                continue
            min_match = 0 if domains < c.min_domains else s.critical_paths[key][1]
            if s.counts[key].get(value, 0) + self_match - min_match > c.max_skew:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_batch_statuses(self, state, pod, table, rows):
        """Filter over NodeTable rows: per row -1 (passes), 0 (missing label) or 1 (skew too large)."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return None
        kinds = np.full(len(rows), -1, np.int8)
        undecided = np.ones(len(rows), bool)
        for c, self_match in zip(s.constraints, s.self_match):
            key = c.topology_key
            codes, column = table.label_column(key)
            col = column[rows]
            missing = undecided & (col < 0)
            kinds[missing] = 0
            undecided &= ~missing
            domains = s.domains_num.get(key)
            if domains is None:
                continue
            min_match = 0 if domains < c.min_domains else s.critical_paths[key][1]
            counts = s.counts_by_code(key, codes)
            over = undecided & (counts[col] + (self_match - min_match) > c.max_skew)
            kinds[over] = 1
            undecided &= ~over
        return kinds, _BATCH_STATUSES

    # -- PreScore / Score / NormalizeScore ---------------------------------------------------
    def pre_score(self, state, pod, node_infos):
        all_nodes = self.handle.snapshot.node_infos
        if not all_nodes:
            return Status(Code.SKIP)
        try:
            constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        except ConstraintError as e:
            return Status.error(f"calculating preScoreState: {e}")
        if not constraints:
            return Status(Code.SKIP)
        require_all = bool(pod.spread_constraints) or not self.system_defaulted
        state.write(PRE_SCORE_KEY, compute_pre_score_state(pod, constraints, node_infos, self.handle.snapshot.table(),
                                                                   require_all))
        return None

    def score(self, state, pod, node_info):
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, Status.error(f'error reading "{PRE_SCORE_KEY}" from cycleState: not found')
        return s.score(node_info), None

    def score_nodes(self, state, pod, node_infos):
        """Score over a node list at once (same results as ``score`` per node)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None, Status.error(f'error reading "{PRE_SCORE_KEY}" from cycleState: not found')
        score = s.score
        return [score(ni) for ni in node_infos], None

    def score_batch(self, state, pod, table, rows):
        """Score over NodeTable rows (same float64 operations as ``score``); remembers the ignored rows
        for ``normalize_score_batch``."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        n = len(rows)
        total = np.zeros(n, np.float64)
        for key, is_hostname, weight, skew_term, c in s.terms:
            codes, column = table.label_column(key)
            col = column[rows]
            if is_hostname:
                cnt = matching_per_row(table, c, s.namespace)[rows]
            else:
                cnt = counts_by_code(codes, s.counts[key])[col]
            total += np.where(col >= 0, cnt * weight + skew_term, 0.0)
        out = np.where(total >= 0, np.floor(total + 0.5), -np.floor(-total + 0.5)).astype(np.int64)
        if s.ignored_nodes:
            ignored = np.isin(rows, [table.row_of(name) for name in s.ignored_nodes])
            out[ignored] = 0
        else:
            ignored = np.zeros(n, bool)
        s.batch_ignored = ignored
        return out

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return Status.error(f'error reading "{PRE_SCORE_KEY}" from cycleState: not found')
        normalize(s.ignored_nodes, scores)
        return None

    def normalize_score_batch(self, state, pod, scores):
        """NormalizeScore over the array ``score_batch`` returned (None: take the per-node path)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None or s.batch_ignored is None or len(s.batch_ignored) != len(scores):
            return None
        return normalize_array(s.batch_ignored, scores)

    def events_to_register(self):
        if not self.queueing_hints:
            return (("Pod", ("Add", "Update", "Delete")),
                    ("Node", ("Add", "Delete", "UpdateNodeLabel", "UpdateNodeTaint")))
        return (("Pod", ("Add", "UpdatePodLabel", "UpdatePodToleration", "Delete"),
                 self.is_schedulable_after_pod_change),
                ("Node", ("Add", "Delete", "UpdateNodeLabel", "UpdateNodeTaint"),
                 self.is_schedulable_after_node_change))

    def is_schedulable_after_pod_change(self, pod, old, new):
        """A pod of the same namespace (bound or nominated) that the pod's hard constraints count appeared, went
        or changed its labels to or from matching; or the pod's own tolerations changed under a Honor policy."""
        if (new is not None and not _involved_in_spreading(new, pod)) or \
                (old is not None and not _involved_in_spreading(old, pod)):
            return QUEUE_SKIP
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if new is not None and old is not None:
            if pod.uid == new.uid and (new.raw.get("spec") or {}).get("tolerations") != \
                    (old.raw.get("spec") or {}).get("tolerations") and any(c.honor_taints for c in constraints):
                return QUEUE
            if new.labels == old.labels:
                return QUEUE_SKIP
            changed = any(c.matches(old.labels) != c.matches(new.labels) for c in constraints)
            return QUEUE if changed else QUEUE_SKIP
        changed = new if new is not None else old
        return QUEUE if any(c.matches(changed.labels) for c in constraints) else QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod, old, new):
        """A node with every topology key appeared or went, gained or lost a key, or changed a key's value or its
        taints."""
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        old_matching = old is not None and all(c.topology_key in old.labels for c in constraints)
        new_matching = new is not None and all(c.topology_key in new.labels for c in constraints)
        if old is not None and new is not None:
            if old_matching != new_matching:
                return QUEUE
            taints_changed = (old.raw.get("spec") or {}).get("taints") != (new.raw.get("spec") or {}).get("taints")
            if new_matching and (any(old.labels.get(c.topology_key) != new.labels.get(c.topology_key)
                                     for c in constraints) or taints_changed):
                return QUEUE
            return QUEUE_SKIP
        if new is not None:
            return QUEUE if new_matching else QUEUE_SKIP
        return QUEUE if old_matching else QUEUE_SKIP

    def sign_pod(self, pod):
        """Spreading is not local to a pod and a node: a pod with constraints, its own or the defaults, has no
        signature."""
        if (pod.raw.get("spec") or {}).get("topologySpreadConstraints"):
            return signers.unsignable("pods with topology constraints are not signable")
        if self.default_constraints:
            return signers.unsignable("pods with default topology constraints are not signable")
        return [], None
