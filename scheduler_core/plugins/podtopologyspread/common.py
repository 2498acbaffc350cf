"""Constraint selection and pod counting shared by PodTopologySpread's filtering and scoring
(podtopologyspread/common.go and helper/spread.go)."""
from __future__ import annotations

import numpy as np

from ...framework.node_table import node_selector_mask
from ...framework.pod_index import match_counts
from ...objects.errors import ParseError
from ...objects.pod import TopologySpreadConstraint
from ...objects.selectors import LabelSelector
from ..helper import find_untolerated_taint

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"

SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint({"topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
                             "systemDefaultConstraints[0]"),
    TopologySpreadConstraint({"topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
                             "systemDefaultConstraints[1]"),
)

_RC = ("", "v1", "ReplicationController")
_RS = ("apps", "v1", "ReplicaSet")
_SS = ("apps", "v1", "StatefulSet")


class ConstraintError(ValueError):
    """getConstraints' error: a constraint whose labelSelector LabelSelectorAsSelector rejects."""


class Constraint:
    """topologySpreadConstraint: a pod's (or default) constraint with its selector resolved.

    ``empty`` mirrors ``labels.Selector.Empty()``: an empty selector counts no existing pod, although it
    matches the incoming pod (kube's countPodsMatchSelector quirk).
    """

    __slots__ = ("max_skew", "topology_key", "matches", "selector_key", "empty", "min_domains",
                 "honor_affinity", "honor_taints")

    def __init__(self, c: TopologySpreadConstraint, selector: LabelSelector):
        self.max_skew = c.max_skew
        self.topology_key = c.topology_key
        self.matches = compile_selector(selector)
        self.selector_key = selector.key
        self.empty = selector.is_empty()
        self.min_domains = 1 if c.min_domains is None else c.min_domains
        self.honor_affinity = c.node_affinity_policy == "Honor"
        self.honor_taints = c.node_taints_policy == "Honor"


def compile_selector(sel: LabelSelector):
    """A fast ``labels -> bool`` for the common one-label selector; else the selector's own matcher."""
    if not sel.nothing and not sel.expressions and len(sel.match_labels) == 1:
        key, value = sel.match_labels[0]
        return lambda labels: labels.get(key) == value
    return sel.matches


def merge_match_labels(sel: LabelSelector, extra: dict) -> LabelSelector:
    """mergeLabelSetWithSelector: AND ``key=value`` requirements into the selector.

    A null selector (matches nothing) has no requirements to merge with and is returned unchanged.
    """
    if sel.nothing:
        return sel
    raw = sel.raw or {}
    exprs = list(raw.get("matchExpressions") or ())
    exprs.extend({"key": k, "operator": "In", "values": [v]} for k, v in extra.items())
    return LabelSelector({"matchLabels": dict(raw.get("matchLabels") or {}), "matchExpressions": exprs})


def filter_constraints(constraints, pod_labels: dict, action: str) -> list:
    """filterTopologySpreadConstraints: those with ``action``, matchLabelKeys merged into the selector.

    Raises ConstraintError for the first of them whose selector does not convert (kube's error).
    """
    out = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        sel = c.selector
        if sel.parse_error is not None:
            raise ConstraintError(sel.parse_error)
        if c.match_label_keys:
            extra = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if extra:
                sel = merge_match_labels(sel, extra)
        out.append(Constraint(c, sel))
    return out


def _namespace(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("namespace") or "default"


def _find(objs, namespace: str, name: str):
    for o in objs:
        meta = o.get("metadata") or {}
        if meta.get("name") == name and (meta.get("namespace") or "default") == namespace:
            return o
    return None


def _group_version(api_version: str):
    """schema.ParseGroupVersion: (group, version), or None when malformed."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def _selector_requirements(raw):
    """metav1.LabelSelectorAsSelector(...).Requirements() as matchExpressions, or None if it yields none."""
    if raw is None or not isinstance(raw, dict):
        return None
    try:
        sel = LabelSelector(raw)
    except ParseError:
        return None
    if sel.parse_error is not None:
        # DefaultSelector ignores a selector LabelSelectorAsSelector rejects.
        return None
    exprs = [{"key": k, "operator": "In", "values": [v]} for k, v in sel.match_labels]
    for key, op, values in sel.expressions:
        exprs.append({"key": key, "operator": op, "values": sorted(values)})
    return exprs


def default_selector(pod, objects) -> LabelSelector:
    """helper.DefaultSelector: Services selecting the pod, plus its controlling RC / RS / StatefulSet."""
    label_set = {}
    ns = pod.namespace
    for svc in objects.services:
        if _namespace(svc) != ns:
            continue
        sel = (svc.get("spec") or {}).get("selector")
        if sel is None:
            continue
        if all(pod.labels.get(k) == v for k, v in sel.items()):
            label_set.update(sel)
    exprs = []
    owner = next((r for r in pod.owner_references if isinstance(r, dict) and r.get("controller") is True), None)
    if owner is not None:
        gv = _group_version(owner.get("apiVersion") or "")
        gvk = None if gv is None else (gv[0], gv[1], owner.get("kind") or "")
        name = owner.get("name") or ""
        if gvk == _RC:
            rc = _find(objects.replication_controllers, ns, name)
            if rc is not None:
                label_set.update((rc.get("spec") or {}).get("selector") or {})
        elif gvk in (_RS, _SS):
            objs = objects.replicasets if gvk == _RS else objects.statefulsets
            owner_obj = _find(objs, ns, name)
            if owner_obj is not None:
                exprs = _selector_requirements((owner_obj.get("spec") or {}).get("selector")) or []
    return LabelSelector({"matchLabels": label_set, "matchExpressions": exprs})


def build_default_constraints(pod, default_constraints, objects, action: str) -> list:
    """buildDefaultConstraints: the defaults with ``action``, all sharing the pod's default selector."""
    constraints = [c for c in default_constraints if c.when_unsatisfiable == action]
    if not constraints:
        return []
    sel = default_selector(pod, objects)
    if sel.is_empty():
        return []
    return [Constraint(c, sel) for c in constraints]


def get_constraints(pod, default_constraints, objects, action: str) -> list:
    """The pod's own constraints with ``action`` if it has any constraint, else the defaults.

    Raises ConstraintError with kube's message when one of the pod's selectors does not convert.
    """
    if pod.spread_constraints:
        try:
            return filter_constraints(pod.spread_constraints, pod.labels, action)
        except ConstraintError as e:
            hardness = "hard" if action == DO_NOT_SCHEDULE else "soft"
            raise ConstraintError(f"obtaining pod's {hardness} topology spread constraints: {e}") from None
    return build_default_constraints(pod, default_constraints, objects, action)


def count_matching(pods, c: Constraint, namespace: str) -> int:
    """countPodsMatchSelector: non-terminating pods of ``namespace`` the constraint selects."""
    if c.empty:
        return 0
    match = c.matches
    n = 0
    for p in pods:
        if p.namespace == namespace and p.deletion_timestamp is None and match(p.labels):
            n += 1
    return n


def matching_per_row(table, c: Constraint, namespace: str):
    """count_matching for every NodeTable row (int64), from the per-node counts kept between cycles."""
    if c.empty:
        return np.zeros(table.n, np.int64)
    return match_counts(table, ("PodTopologySpread", c.selector_key, namespace),
                        lambda pods: count_matching(pods, c, namespace))


def required_affinity_matcher(pod):
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match as ``node -> bool``; None when it matches all."""
    node_selector = pod.node_selector
    required = pod.required_node_affinity
    if not node_selector and required is None:
        return None

    def match(node) -> bool:
        labels = node.labels
        for k, v in node_selector:
            if labels.get(k) != v:
                return False
        return required is None or required.matches(labels, node.name)
    return match


def has_untolerated_taint(node, tolerations) -> bool:
    """An untolerated NoSchedule / NoExecute taint on the node (nodeTaintsPolicy: Honor)."""
    return find_untolerated_taint(node.taints, tolerations) is not None


class InclusionCheck:
    """matchNodeInclusionPolicies for one pod and its constraints, evaluated once per node.

    ``node_flags(node)`` gives (passes nodeAffinity, passes taints); ``included(c, flags)`` applies one
    constraint's policies to them; ``inclusion_masks`` evaluates them for every NodeTable row at once.
    """

    __slots__ = ("affinity", "node_selector", "required", "tolerations", "taints")

    def __init__(self, pod, constraints):
        self.node_selector = pod.node_selector
        self.required = pod.required_node_affinity
        self.affinity = (required_affinity_matcher(pod) if any(c.honor_affinity for c in constraints)
                         else None)
        self.tolerations = pod.tolerations
        self.taints = any(c.honor_taints for c in constraints)

    def node_flags(self, node):
        aff_ok = self.affinity is None or self.affinity(node)
        taints_ok = not self.taints or not has_untolerated_taint(node, self.tolerations)
        return aff_ok, taints_ok

    @staticmethod
    def included(c: Constraint, flags) -> bool:
        return (flags[0] or not c.honor_affinity) and (flags[1] or not c.honor_taints)


def inclusion_masks(check: InclusionCheck, table):
    """``check.node_flags`` for every NodeTable row: (passes nodeAffinity, passes taints) bool arrays."""
    n = table.n
    aff_ok = np.ones(n, bool)
    if check.affinity is not None:
        for key, value in check.node_selector:
            codes, column = table.label_column(key)
            aff_ok &= column == codes.get(value, -2)
        if check.required is not None:
            mask = node_selector_mask(table, table.rows, check.required)
            if mask is None:  # Gt / Lt: the per-node matcher decides
                mask = np.fromiter((check.required.matches(ni.node.labels, ni.name) for ni in table.infos),
                                   bool, n)
            aff_ok &= mask
    taints_ok = np.ones(n, bool)
    if check.taints:
        for i in np.flatnonzero(table.hard_taints).tolist():
            taints_ok[i] = not has_untolerated_taint(table.infos[i].node, check.tolerations)
    return aff_ok, taints_ok
