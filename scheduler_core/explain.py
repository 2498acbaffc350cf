"""What would fix it: verified counterfactuals for an unschedulable pod.

``explain(fwk, snapshot, pod, trace)`` reads which Filter plugins rejected which nodes (the trace's
per-plugin matrix; rows it lacks, or that no longer hold on ``snapshot``, are computed here), proposes
concrete changes to the pod or to the cluster, and verifies every change by running the profile's own
PreFilter and Filter plugins on a modified copy:

* a pod change (toleration added, request lowered, selector requirement or affinity term dropped,
  maxSkew raised, host port dropped): a Pod built from a modified copy of its raw dict;
* a change to one of the pod's ResourceClaims (through its ResourceClaimTemplate, or the claim itself): a
  device selector changed to a value devices have or dropped, fewer devices, a device taint tolerated
  (``dra.explain.claim_fixes``): a snapshot copy whose objects hold the changed claim;
* a node change (labels added, node uncordoned, pods evicted): a snapshot copy with a modified NodeInfo
  clone;
* an added node: a snapshot copy with an empty copy of an existing node appended, with copies of the node's
  own ResourceSlices (only that node is filtered: an empty node adds no pods, so it cannot make another node
  feasible);
* a created or bound PersistentVolumeClaim: a snapshot copy whose claims and volumes have it;
* freed resources: NodeInfo clones with more allocatable, filtered with the original cycle state (no
  PreFilter reads allocatable, so the rest of the cycle stands).

A suggestion's ``fits`` are the existing nodes that then pass every Filter plugin (``adds_node`` when
the change adds a node that would pass). Extenders and nominated pods are not re-run.

Order of the answer: diagnosis before prescription, then the smallest change first. Each suggestion has a
rank (``rank``); ties go to the smaller ``size`` (the change's size in its rank's own measure), then to the
change that makes more nodes feasible, then to the order the analyses ran in:

 0. diagnoses: what blocks the pod, with no change (e.g. "no node has label disk=nvme"), and what preemption
    did or cannot do; diagnoses keep the analyses' order, whatever they fit;
 1. adding tolerations, or giving a toleration the exact key or value of a taint it nearly names, to the pod,
    or to a claim's request for device taints (size: taints tolerated);
 2. raising a topology spread maxSkew (size: how much);
 3. lowering requests, or the devices a claim asks for (size: the largest relative cut, 0.75 for 32 to 8 cpu);
 4. dropping a hostPort;
 5. dropping a nodeSelector entry or a node affinity requirement, or asking for a label key the nodes have
    in place of one no node has (``disk`` for ``disktype``: a near miss), or a value the nodes have in place
    of one no node has (``ssd`` for ``SSD``, ``ssd1`` for ``ssd``: see ``near_value``); changing a claim's device selector to
    a value devices have (size 0) or dropping it (size 1);
 6. dropping a pod affinity or anti-affinity term;
 7. uncordoning nodes; creating a missing PersistentVolumeClaim (of the default StorageClass, or bound to an
    Available PersistentVolume) or binding an unbound one to a PersistentVolume that matches it;
 8. labelling a node (the smallest change: one node that then fits; the others labelled so would fit too);
 9. freeing resources or a pod slot on nodes (size: the shortfall as a share of the node's allocatable);
10. evicting pods (size: pods evicted);
11. adding a node (a node like one with devices comes with its ResourceSlices);
12. changes that alone would fit no node (they name what still blocks), in the analyses' order.

Changes to the pod come before changes to the cluster: the pod's owner can make them alone. A change that only
lets the pod onto control-plane nodes (a toleration of their taint, labelling them) is left out when another
change fits. The framework's
handle points at the snapshot being evaluated while explaining and is restored afterwards, so do not
explain concurrently with a scheduling cycle of the same profile.
"""
from __future__ import annotations

import copy
import difflib
import re
from contextlib import contextmanager

from .dra.explain import claim_fixes
from .dra.slices import copies_for_node, node_local
from .framework.cycle_state import CycleState
from .framework.node_info import NodeInfo
from .framework.status import Code
from .objects import Node, Pod, tolerates_taint
from .objects.pod import is_supported_pod_level_resource
from .objects.selectors import requirement_matches
from .plugins import names
from .plugins.helper.volume import (ANN_BIND_COMPLETED, NOT_SUPPORTED_PROVISIONER, access_modes_satisfied,
                                    annotations, claim_name_of, is_delay_binding_mode, is_pvc_fully_bound,
                                    pv_capacity, pv_class, pvc_class, requested_storage, spec, volume_mode_mismatch)

HOSTNAME_LABEL = "kubernetes.io/hostname"
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
PREFILTER_RESULT = "PreFilterResult"
TOO_MANY_PODS = "Too many pods"
CONTROL_PLANE_KEYS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
NEAR_MISS_RATIO = 0.75   # how alike two label or taint keys' names must be (difflib) to be a near miss
NEAR_VALUE_EDITS = 2     # how many single-character edits apart two label or taint values may be to be near
INSUFFICIENT = "Insufficient "
TEXT_NAMES = 5
_BINARY = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_FILTER_EFFECTS = ("NoSchedule", "NoExecute")
PREEMPTION = "preemption"
DIAGNOSIS, NOT_ENOUGH = 0, 12
# Ranks of the changes that fit (module docstring): pod changes by the key of change["pod"], then cluster
# changes by the first key of the change that is present ("free" before "add_node_like": freeing a node's
# suggestion also offers adding one like it).
_POD_CHANGE_RANKS = {"add_tolerations": 1, "toleration_key": 1, "toleration_value": 1, "topology_spread_constraint": 2, "requests": 3,
                     "remove_host_port": 4, "remove_node_selector": 5, "remove_node_affinity_requirement": 5,
                     "node_selector_key": 5, "node_affinity_key": 5, "node_selector_value": 5, "node_affinity_value": 5,
                     "remove_pod_affinity_term": 6, "remove_pod_anti_affinity_term": 6}
_CLUSTER_CHANGE_RANKS = (("uncordon", 7), ("create_pvc", 7), ("bind_pvc", 7), ("label_nodes", 8), ("free", 9), ("evict", 10), ("add_node_like", 11))
# changes to a claim (change["claim"]) by the first key present
_CLAIM_CHANGE_RANKS = (("add_tolerations", 1), ("count", 3), ("expression", 5), ("remove_selector", 5))


class Suggestion:
    """One way to make the pod schedulable (verified), or a diagnosis that implies no single change.

    ``kind``: what it is about; ``text``: one line for people; ``nodes``: the nodes it concerns;
    ``change``: the change, machine-readable ({} for a diagnosis); ``fits``: existing nodes that pass every
    Filter plugin after the change; ``adds_node``: the change adds a node that would pass;
    ``still_blocked``: {plugin: count} of the concerned nodes that the change does not make feasible;
    ``size``: how much the change changes, in the measure of its rank (see the module docstring).
    """

    __slots__ = ("kind", "text", "nodes", "change", "fits", "adds_node", "still_blocked", "size")

    def __init__(self, kind: str, text: str, nodes=(), change=None, fits=(), adds_node=False,
                 still_blocked=None, size=0):
        self.kind = kind
        self.text = text
        self.nodes = list(nodes)
        self.change = change or {}
        self.fits = list(fits)
        self.adds_node = adds_node
        self.still_blocked = still_blocked or {}
        self.size = size

    @property
    def rank(self) -> int:
        """Where its kind of change comes in the answer (the module docstring's list)."""
        if self.kind == PREEMPTION or not (self.change or self.still_blocked):
            return DIAGNOSIS
        if not self.num_fits:
            return NOT_ENOUGH
        pod_change = self.change.get("pod")
        if pod_change is not None:
            return _POD_CHANGE_RANKS[next(iter(pod_change))]
        claim_change = self.change.get("claim")
        if claim_change is not None:
            return next(r for key, r in _CLAIM_CHANGE_RANKS if key in claim_change)
        return next(r for key, r in _CLUSTER_CHANGE_RANKS if key in self.change)

    def order_key(self) -> tuple:
        """Sort key of the answer: rank, then (except among diagnoses) size and most nodes made feasible."""
        r = self.rank
        if r in (DIAGNOSIS, NOT_ENOUGH):
            return (r, 0, 0)
        return (r, self.size, -self.num_fits)

    @property
    def num_fits(self) -> int:
        """How many nodes the change makes feasible (an added node counts)."""
        return len(self.fits) + (1 if self.adds_node else 0)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "text": self.text, "nodes": list(self.nodes), "change": self.change,
                "fits": list(self.fits), "adds_node": self.adds_node, "num_fits": self.num_fits,
                "still_blocked": dict(self.still_blocked)}

    def __repr__(self):
        return f"Suggestion({self.kind}: {self.text})"


def explain(fwk, snapshot, pod, trace=None, max_per_kind: int = 5, preemption: bool = True) -> list:
    """Suggestions for ``pod`` (unschedulable in ``trace``): diagnoses, then the smallest change first (the
    module docstring's order).

    ``max_per_kind`` bounds the per-node and per-group suggestions of one kind (nodes lacking
    resources, taint sets, blocking pods). Returns [] for a pod the trace shows scheduled or failed.
    Without ``preemption``, the diagnosis of what the trace's preemption did is left out: it is the one part that
    depends on the attempt rather than on the pod's spec and the cluster (``explain_preemption`` gives it alone,
    ``with_diagnoses`` puts it where ``explain`` would).
    """
    if trace is not None and (trace.chosen or trace.error):
        return []
    if not snapshot.node_infos:
        return [Suggestion("no-nodes", "the cluster has no nodes")]
    ex = _Explainer(fwk, snapshot, pod, trace, max_per_kind)
    with _pointing(fwk, snapshot):
        ex.run(preemption)
    ex.quiet_control_plane()
    return sorted(ex.out, key=Suggestion.order_key)


def explain_preemption(fwk, snapshot, pod, trace, recheck: bool = True) -> list:
    """The preemption diagnosis ``explain`` makes for this attempt, alone (a list of at most one Suggestion).

    ``recheck=False`` is for ``snapshot`` the attempt itself saw (the scheduler's, before its next cycle): its
    nominated node then fits once the victims are evicted, as its dry run found (the Filter with the nominated
    pods, which passes only where the Filter alone passes), and is not filtered again."""
    if trace is None or trace.chosen or trace.error or not snapshot.node_infos:
        return []
    ex = _Explainer(fwk, snapshot, pod, trace, 1)
    with _pointing(fwk, snapshot):
        ex.preemption(recheck)
    return ex.out


def with_diagnoses(suggestions: list, diagnoses: list) -> list:
    """``explain(..., preemption=False)``'s answer with ``explain_preemption``'s added, in ``explain``'s order
    (the preemption diagnosis comes last of the diagnoses)."""
    return sorted([*suggestions, *diagnoses], key=Suggestion.order_key)


def node_rejections(fwk, snapshot, pod, node_name: str) -> dict:
    """{plugin: reason text} of every PreFilter or Filter plugin that rejects ``pod`` on the node ``node_name``
    of ``snapshot`` ({} when the node passes them all): what a manual binding to that node ignores."""
    ni = snapshot.by_name.get(node_name)
    if ni is None:
        raise KeyError(node_name)
    state = CycleState()
    with _pointing(fwk, snapshot):
        result, st = fwk.run_pre_filter(state, pod)
        if st is not None and st.code != Code.SUCCESS:
            return {st.plugin or "PreFilter": st.message() or st.as_error()}
        if result is not None and node_name not in result:
            return {PREFILTER_RESULT: "the PreFilter result excludes this node"}
        _first, per = fwk.run_filter_traced(state, pod, ni, {})
    return {pl: s.message() or s.as_error() for pl, s in per.items() if s is not None and s.is_rejected()}


@contextmanager
def _pointing(fwk, snapshot):
    """Point the framework's handle (which its plugins read) at ``snapshot`` for the block."""
    handle = fwk.handle
    if handle is None:
        yield
        return
    old = handle.snapshot
    handle.snapshot = snapshot
    try:
        yield
    finally:
        handle.snapshot = old


# -- text ---------------------------------------------------------------------------------------
def format_quantity(resource: str, amount: int) -> str:
    """Scheduler units as a Kubernetes quantity: cpu from millicores, binary suffixes for byte sizes."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if _is_bytes(resource) and amount:
        for suffix, mult in _BINARY:
            if amount % mult == 0:
                return f"{amount // mult}{suffix}"
    return str(amount)


def _exact_quantity(resource: str, amount: int) -> str:
    return f"{amount}m" if resource == "cpu" else str(amount)


def _is_bytes(resource: str) -> bool:
    return resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _passes(items) -> str:
    return "passes" if len(items) == 1 else "pass"


def _names(items, limit: int = TEXT_NAMES) -> str:
    items = list(items)
    if len(items) <= limit:
        return _and(items)
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"


def _and(items) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _blocked_text(blocked: dict) -> str:
    return ", ".join(f"{pl} on {n}" for pl, n in sorted(blocked.items(), key=lambda kv: (-kv[1], kv[0])))


def _fit_text(fits) -> str:
    if not fits:
        return "no node"
    return f"{_plural(len(fits), 'node')} ({_names(fits)})"


def selector_text(sel) -> str:
    """A label selector as kube prints it: ``a=b,c in (d,e),!f``."""
    if sel.nothing:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sel.match_labels]
    for key, op, values in sel.expressions:
        vals = ",".join(sorted(values))
        parts.append({"In": f"{key} in ({vals})", "NotIn": f"{key} notin ({vals})", "Exists": key,
                      "DoesNotExist": f"!{key}"}[op])
    return ",".join(parts) or "<everything>"


def _requirement_text(key: str, op: str, values) -> str:
    if op == "In" and len(values) == 1:
        return f"{key}={values[0]}"
    vals = ", ".join(values)
    return {"In": f"{key} in ({vals})", "NotIn": f"{key} notin ({vals})", "Exists": key,
            "DoesNotExist": f"!{key}", "Gt": f"{key} > {vals}", "Lt": f"{key} < {vals}"}[op]


def _taint_text(key: str, value: str, effect: str) -> str:
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


# -- modified copies ----------------------------------------------------------------------------
def pod_variant(pod, edit) -> Pod:
    """A Pod parsed from a deep copy of ``pod.raw`` whose spec ``edit(spec)`` changed in place."""
    raw = copy.deepcopy(pod.raw)
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        spec = raw["spec"] = {}
    edit(spec)
    return Pod(raw)


def node_variant(node, name=None, labels=None, unschedulable=None, taints=None, allocatable=None) -> Node:
    """A Node parsed from a copy of ``node.raw`` with the given fields replaced (allocatable in scheduler units)."""
    raw = dict(node.raw)
    meta = dict(raw.get("metadata") or {})
    spec = dict(raw.get("spec") or {})
    status = dict(raw.get("status") or {})
    if name is not None:
        meta["name"] = name
        meta.pop("uid", None)
    if labels is not None:
        meta["labels"] = dict(labels)
    if unschedulable is not None:
        spec["unschedulable"] = unschedulable
    if taints is not None:
        spec["taints"] = list(taints)
    if allocatable is not None:
        status["allocatable"] = {r: _exact_quantity(r, v) for r, v in allocatable.items()}
    raw.update(metadata=meta, spec=spec, status=status)
    return Node(raw)


def pod_with_requests(pod, targets: dict):
    """A copy of the pod whose total request (kube's PodRequests) of each resource is the target.

    The whole amount, less the pod overhead, goes to the pod-level request when the pod has one for that resource
    (``spec.resources.requests``), else to the first container, and every container's request of that resource is
    dropped. None when a target is below the overhead or there is no container.
    """
    overhead = pod.overhead
    if not (pod.raw.get("spec") or {}).get("containers") or any(v < overhead.get(r, 0) for r, v in targets.items()):
        return None

    def edit(spec):
        containers = spec["containers"]
        for r, total in targets.items():
            for key in ("containers", "initContainers"):
                for c in spec.get(key) or []:
                    reqs = (c.get("resources") or {}).get("requests")
                    if isinstance(reqs, dict):
                        reqs.pop(r, None)
            if r in pod.pod_level_requests and is_supported_pod_level_resource(r):
                spec["resources"]["requests"][r] = _exact_quantity(r, total - overhead.get(r, 0))
                continue
            resources = containers[0].get("resources")
            if not isinstance(resources, dict):
                resources = containers[0]["resources"] = {}
            if not isinstance(resources.get("requests"), dict):
                resources["requests"] = {}
            resources["requests"][r] = _exact_quantity(r, total - overhead.get(r, 0))
    return pod_variant(pod, edit)


def _port_conflicts(wanted, used) -> bool:
    """HostPortInfo.CheckConflict for one wanted (ip, protocol, port) against used ones."""
    ip, protocol, port = wanted
    for uip, uprotocol, uport in used:
        if uport == port and uprotocol == protocol and (ip == "0.0.0.0" or uip == "0.0.0.0" or uip == ip):
            return True
    return False


def _untolerated(node, tolerations):
    return tuple((t.key, t.value, t.effect) for t in node.taints
                 if t.effect in _FILTER_EFFECTS and not tolerates_taint(tolerations, t))


def _toleration(key: str, value: str, effect: str) -> dict:
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def _node_requirements_match(pod, node) -> bool:
    """spec.nodeSelector and required node affinity (RequiredNodeAffinity.Match)."""
    labels = node.labels
    for k, v in pod.node_selector:
        if labels.get(k) != v:
            return False
    required = pod.required_node_affinity
    return required is None or required.matches(labels, node.name)


def near_miss(wanted: str, key: str) -> bool:
    """Whether ``key`` is nearly ``wanted`` (a label or taint key): the same name under another prefix
    (``gpu``, ``nvidia.com/gpu``), one name inside the other (``disk``, ``disktype``), or names alike."""
    if key == wanted:
        return False
    a, b = wanted.rsplit("/", 1)[-1].lower(), key.rsplit("/", 1)[-1].lower()
    if a == b or (min(len(a), len(b)) >= 3 and (a in b or b in a)):
        return True
    return difflib.SequenceMatcher(None, a, b).ratio() >= NEAR_MISS_RATIO


def near_value(wanted: str, value: str) -> int | None:
    """How near ``value`` is to ``wanted`` (label or taint values), or None: 0 when they differ only in case
    (``SSD``, ``ssd``); 1 when, in lower case, one is the other with a ``-``, ``_`` or ``.`` separated part
    added (``ssd``, ``nvme-ssd``) or they are at most NEAR_VALUE_EDITS single-character edits apart
    (``ssd``, ``ssd1``; both at least 3 characters, so that ``a`` is not near ``b``)."""
    if value == wanted:
        return None
    a, b = wanted.lower(), value.lower()
    if a == b:
        return 0
    if min(len(a), len(b)) < 3:
        return None
    short, long_ = sorted((a, b), key=len)
    if short in re.split(r"[-_.]", long_) or _edit_distance(a, b) <= NEAR_VALUE_EDITS:
        return 1
    return None


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions and substitutions of one character)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _nearest_values(wanted, values) -> list:
    """[(wanted value, near value)] for the values nearest to any wanted one (case first, see near_value)."""
    pairs = [(near_value(w, v), w, v) for w in wanted for v in values]
    pairs = [p for p in pairs if p[0] is not None]
    if not pairs:
        return []
    best = min(p[0] for p in pairs)
    return [(w, v) for d, w, v in pairs if d == best]


def is_control_plane(node) -> bool:
    """A control-plane node: kube's role label or taint."""
    return any(k in node.labels for k in CONTROL_PLANE_KEYS) or any(t.key in CONTROL_PLANE_KEYS
                                                                       for t in node.taints)


class _Req:
    """One node requirement of the pod: a nodeSelector entry, or one requirement of a node affinity term,
    with the spec edit that drops it."""

    __slots__ = ("kind", "key", "op", "values", "field", "label", "phrase", "edit", "change")

    def __init__(self, kind, key, op, values, field, label, phrase, edit, change):
        self.kind, self.key, self.op, self.values, self.field = kind, key, op, values, field
        self.label, self.phrase, self.edit, self.change = label, phrase, edit, change

    @classmethod
    def selector(cls, key: str, value: str) -> "_Req":
        def edit(spec):
            spec["nodeSelector"].pop(key, None)
        return cls("node-selector", key, "In", (value,), False, f"{key}={value}",
                   f"dropping nodeSelector {key}={value}", edit, {"remove_node_selector": key})

    @classmethod
    def term(cls, j: int, field_name: str, k: int, key: str, op: str, values) -> "_Req":
        field = field_name == "matchFields"
        label = _requirement_text(key, op, values)

        def edit(spec):
            na = spec["affinity"]["nodeAffinity"]
            required = na["requiredDuringSchedulingIgnoredDuringExecution"]
            term = required["nodeSelectorTerms"][j]
            del term[field_name][k]
            if not term[field_name]:
                del term[field_name]
            if not term.get("matchExpressions") and not term.get("matchFields"):
                del required["nodeSelectorTerms"][j]
            if not required["nodeSelectorTerms"]:
                del na["requiredDuringSchedulingIgnoredDuringExecution"]
        return cls("node-affinity", key, op, tuple(values), field, label,
                   f"dropping {label} from node affinity term {j}", edit,
                   {"remove_node_affinity_requirement": {"term": j, field_name: k}})

    def with_key(self, key: str):
        """(phrase, spec edit, change) asking for label ``key`` in place of this requirement's."""
        old = self.key
        if self.kind == "node-selector":
            def edit(spec):
                selector = spec["nodeSelector"]
                selector[key] = selector.pop(old)
            return (f"nodeSelector {key}={self.values[0]} in place of {old}={self.values[0]}", edit,
                    {"node_selector_key": {"from": old, "to": key}})
        j, k = self.change["remove_node_affinity_requirement"]["term"], \
            self.change["remove_node_affinity_requirement"]["matchExpressions"]

        def edit(spec):
            term = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            term["nodeSelectorTerms"][j]["matchExpressions"][k]["key"] = key
        return (f"the key {key} in place of {old} in node affinity term {j}", edit,
                {"node_affinity_key": {"term": j, "matchExpressions": k, "from": old, "to": key}})

    def with_value(self, old: str, value: str):
        """(phrase, spec edit, change) asking for label value ``value`` in place of ``old`` (one of this
        requirement's values)."""
        key = self.key
        if self.kind == "node-selector":
            def edit(spec):
                spec["nodeSelector"][key] = value
            return (f"nodeSelector {key}={value} in place of {key}={old}", edit,
                    {"node_selector_value": {"key": key, "from": old, "to": value}})
        j, k = self.change["remove_node_affinity_requirement"]["term"], \
            self.change["remove_node_affinity_requirement"]["matchExpressions"]
        i = self.values.index(old)

        def edit(spec):
            term = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            term["nodeSelectorTerms"][j]["matchExpressions"][k]["values"][i] = value
        return (f"the value {value} in place of {old} for {key} in node affinity term {j}", edit,
                {"node_affinity_value": {"term": j, "matchExpressions": k, "key": key, "from": old, "to": value}})

    def match(self, node) -> bool:
        if self.field:
            return (node.name in self.values) == (self.op == "In")
        return requirement_matches(self.key, self.op, self.values, node.labels)


class _Explainer:
    """The analyses of one pod; each appends Suggestions to ``out``."""

    def __init__(self, fwk, snapshot, pod, trace, max_per_kind):
        self.fwk = fwk
        self.snapshot = snapshot
        self.pod = pod
        self.trace = trace
        self.max = max(1, max_per_kind)
        self.node_infos = snapshot.node_infos
        self.ns_labels = snapshot.objects.namespace_labels
        self.out = []
        self.state = None
        self.pre_result = None
        self.rejected = {}   # node -> {plugin: status} of the Filter plugins rejecting it, in order

    def add(self, *args, **kwargs):
        self.out.append(Suggestion(*args, **kwargs))

    def quiet_control_plane(self):
        """Leave out the changes that only let the pod onto control-plane nodes (tolerating their taint,
        labelling them) when another change fits: workloads are not meant to go there."""
        control_plane = {ni.name for ni in self.node_infos if is_control_plane(ni.node)}
        if not control_plane:
            return

        def only_there(s):
            return bool(s.change and s.fits and not s.adds_node and set(s.fits) <= control_plane)
        if any(s.change and s.num_fits and not only_there(s) for s in self.out):
            self.out = [s for s in self.out if not only_there(s)]

    # -- baseline and evaluation ------------------------------------------------------------
    def run(self, preemption: bool = True):
        self.state = CycleState()
        self.pre_result, st = self.fwk.run_pre_filter(self.state, self.pod)
        if st is not None and st.code != Code.SUCCESS:
            self.add("prefilter", f"PreFilter plugin {st.plugin or '?'} rejects the pod on every node: "
                                  f"{st.message() or st.as_error()}",
                     nodes=[ni.name for ni in self.node_infos])
            if st.plugin in (names.VOLUME_BINDING, names.VOLUME_RESTRICTIONS):   # both find a claim missing
                self.volume_claims()
            if preemption:
                self.preemption()
            return
        traced = self.trace.filter if self.trace is not None else {}
        for ni in self.node_infos:
            per = traced.get(ni.name)
            if per is not None and not self._still_valid(per, ni):
                per = None
            if per is None:
                _first, per = self.fwk.run_filter_traced(self.state, self.pod, ni, {})
            self.rejected[ni.name] = {pl: s for pl, s in per.items() if s is not None and s.is_rejected()}
        self.passing()
        handled = {names.NODE_RESOURCES_FIT, names.TAINT_TOLERATION, names.NODE_UNSCHEDULABLE,
                   names.NODE_PORTS, names.NODE_AFFINITY, names.INTER_POD_AFFINITY}
        self.resources()
        self.node_affinity()
        self.taints()
        self.cordoned()
        self.host_ports()
        self.pod_affinity()
        if self.topology_spread():
            handled.add(names.POD_TOPOLOGY_SPREAD)
        self.claims()
        self.other_plugins(handled)
        if preemption:
            self.preemption()

    def _still_valid(self, per: dict, ni) -> bool:
        """Does the trace's per-plugin row still hold (same first rejecting plugin on this snapshot)?"""
        first = next((pl for pl, s in per.items() if s is not None and s.is_rejected()), None)
        st = self.fwk.run_filter(self.state, self.pod, ni)
        return (st.plugin if st is not None else None) == first

    def rejected_by(self, plugin: str) -> list:
        """NodeInfos the plugin rejects (possibly among others)."""
        return [ni for ni in self.node_infos if plugin in self.rejected.get(ni.name, ())]

    def only(self, ni) -> str:
        """The one plugin rejecting the node, or '' when none or several do."""
        rej = self.rejected.get(ni.name, ())
        return next(iter(rej)) if len(rej) == 1 else ""

    def snapshot_with(self, replace=None, add=None, objects=None):
        """A shallow copy of the snapshot with some NodeInfos replaced and/or one appended, or other
        ``objects``."""
        if not replace and add is None and objects is None:
            return self.snapshot
        snap = self.snapshot.variant(replace, add)
        if objects is not None:
            snap.objects = objects
        return snap

    def with_objects(self, **changed):
        """A copy of the snapshot's ClusterObjects with some of its collections replaced."""
        objects = copy.copy(self.snapshot.objects)
        for attr, value in changed.items():
            setattr(objects, attr, value)
        return objects

    def verdicts(self, pod=None, replace=None, add=None, only=None, reuse_state=False, objects=None) -> dict:
        """{node: None if it passes every Filter plugin, else the rejecting plugin} for a counterfactual.

        PreFilter runs afresh on ``pod`` (default: the pod) over the snapshot with ``replace`` / ``add`` /
        ``objects`` applied, unless ``reuse_state``; Filter runs on every node, or on the ``only`` names.
        """
        pod = pod or self.pod
        snap = self.snapshot_with(replace, add, objects)
        node_names = only if only is not None else [ni.name for ni in snap.node_infos]
        fwk = self.fwk
        with _pointing(fwk, snap):
            if reuse_state:
                state, result = self.state, self.pre_result
            else:
                state = CycleState()
                result, st = fwk.run_pre_filter(state, pod)
                if st is not None and st.code != Code.SUCCESS:
                    return dict.fromkeys(node_names, st.plugin or "PreFilter")
            out = {}
            for name in node_names:
                if result is not None and name not in result:
                    out[name] = PREFILTER_RESULT
                    continue
                st = fwk.run_filter(state, pod, snap.by_name[name])
                out[name] = None if st is None else (st.plugin or "Filter")
        return out

    @staticmethod
    def outcome(verdicts: dict, concerned):
        """(fitting node names, {plugin: count} over the concerned names that still fail)."""
        fits = [n for n, pl in verdicts.items() if pl is None]
        blocked = {}
        for n in concerned:
            pl = verdicts.get(n)
            if pl:
                blocked[pl] = blocked.get(pl, 0) + 1
        return fits, blocked

    def try_pod(self, kind, diag, phrase, new_pod, concerned, change, always=True, size=0):
        """Verify a pod change (``phrase`` names it, ``size`` measures it) and add a suggestion, after the
        diagnosis ``diag``. A change that fits no node is reported only when ``always``.
        """
        fits, blocked = self.outcome(self.verdicts(new_pod), concerned)
        if not fits and not always:
            return
        if fits:
            tail = f"{phrase} would fit {_fit_text(fits)}"
        else:
            tail = f"{phrase} alone would not be enough (still rejected by {_blocked_text(blocked)})"
        text = f"{diag}; {tail}" if diag else tail
        self.add(kind, text, nodes=concerned, change={"pod": change}, fits=fits, still_blocked=blocked, size=size)

    # -- analyses -------------------------------------------------------------------------------
    def passing(self):
        """Nodes no Filter plugin rejects: filtered out by extenders, or the cluster changed since."""
        ok = [ni.name for ni in self.node_infos if not self.rejected.get(ni.name)]
        if self.pre_result is not None:
            ok = [n for n in ok if n in self.pre_result]
        if not ok:
            return
        statuses = self.trace.node_statuses if self.trace is not None else {}
        rejected_by_ext = {n for rec in (self.trace.extender_filter if self.trace is not None else ())
                           for n in (*rec.get("failed", ()), *rec.get("unresolvable", ()))}
        by_ext = [n for n in ok if n in rejected_by_ext and n in statuses]
        if by_ext:
            reasons = sorted({r for n in by_ext for r in statuses[n].reasons})
            self.add("extender", f"{_plural(len(by_ext), 'node')} ({_names(by_ext)}) {_passes(by_ext)} every "
                                 f"Filter plugin but the extenders reject them: {'; '.join(reasons)}", nodes=by_ext)
        rest = [n for n in ok if n not in by_ext]
        if rest:
            self.add("changed", f"{_plural(len(rest), 'node')} ({_names(rest)}) {_passes(rest)} every Filter "
                                "plugin in this snapshot: the cluster changed since this attempt", nodes=rest,
                     fits=rest)

    def resources(self):
        fit_nodes = self.rejected_by(names.NODE_RESOURCES_FIT)
        if not fit_nodes:
            return
        req = self.pod.requests
        short = {}
        for ni in fit_nodes:
            s = {}
            for reason in self.rejected[ni.name][names.NODE_RESOURCES_FIT].reasons:
                if reason == TOO_MANY_PODS:
                    s["pods"] = len(ni.pods) + 1 - ni.allocatable.get("pods", 0)
                elif reason.startswith(INSUFFICIENT):
                    r = reason[len(INSUFFICIENT):]
                    s[r] = req.get(r, 0) - (ni.allocatable.get(r, 0) - ni.requested.get(r, 0))
            short[ni.name] = s
        self.too_small(fit_nodes, short)
        freeable = []
        for ni in fit_nodes:
            s = short[ni.name]
            if self.only(ni) != names.NODE_RESOURCES_FIT or not s:
                continue
            alloc = ni.allocatable
            if any(req.get(r, 0) > alloc.get(r, 0) for r in s if r != "pods"):
                continue
            if "pods" in s and alloc.get("pods", 0) < 1:
                continue
            severity = max(v / alloc[r] if alloc.get(r) else float("inf") for r, v in s.items())
            freeable.append((severity, ni.name, ni))
        # Nodes with the same shortfall form one suggestion; the smallest shortfalls come first.
        groups = {}
        for severity, name, ni in sorted(freeable, key=lambda t: (t[0], t[1])):
            groups.setdefault(tuple(sorted(short[name].items())), []).append(ni)
        severity = {name: sev for sev, name, _ni in freeable}
        for key, members in list(groups.items())[:self.max]:
            self.free_nodes(members, dict(key), severity[members[0].name])
        self.lower_requests([ni for ni in fit_nodes if self.only(ni) == names.NODE_RESOURCES_FIT
                             and short[ni.name] and "pods" not in short[ni.name]], short)

    def too_small(self, fit_nodes, short):
        """Resources no node has enough of even when empty; verified by adding a bigger node."""
        req = self.pod.requests
        wanted = {r for s in short.values() for r in s if r != "pods"}
        lacking = []
        for r in sorted(wanted):
            best = max(self.node_infos, key=lambda ni: ni.allocatable.get(r, 0))
            have = best.allocatable.get(r, 0)
            if have < req.get(r, 0):
                lacking.append((r, have, best.name))
        if not lacking:
            return
        parts = []
        for r, have, best in lacking:
            want = format_quantity(r, req[r])
            if have == 0:
                parts.append(f"no node has any {r} allocatable (the pod requests {want})")
            else:
                parts.append(f"no node has {want} {r} allocatable (the most is {format_quantity(r, have)} "
                             f"on {best})")
        self.add("resources", "; ".join(parts), nodes=[ni.name for ni in fit_nodes])
        only_fit = [ni for ni in fit_nodes if self.only(ni) == names.NODE_RESOURCES_FIT]
        template = (only_fit or fit_nodes)[0]
        alloc = dict(template.allocatable)
        raised = {}
        for r, v in req.items():
            if alloc.get(r, 0) < v:
                alloc[r] = raised[r] = v
        if alloc.get("pods", 0) < 1:
            alloc["pods"] = raised["pods"] = 1
        if not self.added_node_fits(template, allocatable=alloc):
            return
        more = _and(f"{format_quantity(r, v)} {r}" for r, v in raised.items())
        self.add("resources", f"adding a node like {template.name} with {more} would fit",
                 change={"add_node_like": template.name,
                         "allocatable": {r: format_quantity(r, v) for r, v in raised.items()}}, adds_node=True)

    def added_node_fits(self, template, allocatable=None) -> bool:
        """Would an empty copy of ``template`` (optionally with other allocatable), with copies of its own
        ResourceSlices, pass every filter?"""
        taken = self.snapshot.by_name
        name = f"{template.name}-copy"
        i = 2
        while name in taken:
            name = f"{template.name}-copy{i}"
            i += 1
        labels = dict(template.node.labels)
        if HOSTNAME_LABEL in labels:
            labels[HOSTNAME_LABEL] = name
        node = node_variant(template.node, name=name, labels=labels, allocatable=allocatable)
        slices = copies_for_node(self.snapshot.objects.resource_slices.values(), template.name, name)
        objects = self.with_objects(resource_slices=dict(
            self.snapshot.objects.resource_slices, **{s["metadata"]["name"]: s for s in slices})) if slices else None
        return self.verdicts(add=NodeInfo(node), only=[name], objects=objects)[name] is None

    def free_nodes(self, members, short: dict, size: float):
        """Nodes rejected only for the same resource shortfall (``size``: the first one's share of its
        allocatable): verify freeing it on each, and adding a node like the first."""
        replace = {}
        for ni in members:
            alloc = dict(ni.allocatable)
            for r, v in short.items():
                alloc[r] = alloc.get(r, 0) + v
            clone = ni.clone()
            clone.node = node_variant(ni.node, allocatable=alloc)
            replace[ni.name] = clone
        concerned = [ni.name for ni in members]
        fits, blocked = self.outcome(self.verdicts(replace=replace, only=concerned, reuse_state=True), concerned)
        if not fits:
            return
        first = members[0]
        add_ok = self.added_node_fits(first)
        like = f" or adding a node like {first.name}" if add_ok else ""
        one = len(members) == 1
        subject = f"node {first.name}" if one else f"nodes {_names(concerned)}"
        res = {r: v for r, v in short.items() if r != "pods"}
        change = {"nodes": concerned, "free": {r: format_quantity(r, v) for r, v in res.items()},
                  "add_node_like": first.name if add_ok else None}
        if "pods" in short:
            change["free_pod_slots"] = short["pods"]
        if not res:
            full = f"({len(first.pods)}/{first.allocatable.get('pods', 0)} pods)" if one else "(no free pod slot)"
            self.add("too-many-pods", f"{subject} {'is' if one else 'are'} full {full}; freeing a pod slot"
                                      f"{'' if one else ' on any of them'}{like} would fit", nodes=concerned,
                     change=change, fits=fits, adds_node=add_ok, still_blocked=blocked, size=size)
            return
        lacks = [f"{format_quantity(r, v)} {r}" for r, v in res.items()]
        if "pods" in short:
            lacks.append("a pod slot")
        freeing = "freeing it" if one else "freeing that on any of them"
        self.add("resources", f"{subject} {'lacks' if one else 'each lack'} {_and(lacks)}; {freeing}{like} would fit",
                 nodes=concerned, change=change, fits=fits, adds_node=add_ok, still_blocked=blocked, size=size)

    def lower_requests(self, nodes, short):
        """Lower the pod's total requests to what one node, then every such node, has free."""
        req = self.pod.requests

        def cut(level):   # the largest relative cut
            return max((req[r] - v) / req[r] for r, v in level.items())
        levels = []
        targets = []
        for ni in nodes:
            t = {}
            for r in short[ni.name]:
                free = ni.allocatable.get(r, 0) - ni.requested.get(r, 0)
                if _is_bytes(r) and free >= 2**20:
                    free -= free % 2**20
                t[r] = free
            if all(v > 0 for v in t.values()):
                targets.append((cut(t), ni.name, t))
        if not targets:
            return
        targets.sort(key=lambda x: (x[0], x[1]))
        levels.append(targets[0][2])
        every = {}
        for _s, _n, t in targets:
            for r, v in t.items():
                every[r] = min(every.get(r, v), v)
        if every != levels[0]:
            levels.append(every)
        concerned = [ni.name for ni in nodes]
        for level in levels:
            level = dict(sorted(level.items()))
            new = pod_with_requests(self.pod, level)
            if new is None:
                continue
            phrase = "lowering the pod's " + _and(
                f"{r} request from {format_quantity(r, req[r])} to {format_quantity(r, v)}"
                for r, v in level.items())
            self.try_pod("request", "", phrase, new, concerned,
                         {"requests": {r: format_quantity(r, v) for r, v in level.items()}}, always=False,
                         size=cut(level))

    def node_affinity(self):
        nodes = self.rejected_by(names.NODE_AFFINITY)
        if not nodes:
            return
        pod = self.pod
        enforced = [ni.name for ni in nodes if _node_requirements_match(pod, ni.node)]
        if enforced:
            self.add("node-affinity", f"the profile's addedAffinity excludes {_plural(len(enforced), 'node')} "
                                      f"({_names(enforced)})", nodes=enforced)
        skip = set(enforced)
        rejected = [ni for ni in nodes if ni.name not in skip]
        if not rejected:
            return
        selector = [_Req.selector(key, value) for key, value in pod.node_selector]
        terms = pod.required_node_affinity.terms if pod.required_node_affinity is not None else ()
        term_reqs = [[_Req.term(j, "matchExpressions", k, *e) for k, e in enumerate(term.expressions)]
                     + [_Req.term(j, "matchFields", k, *f) for k, f in enumerate(term.fields)]
                     for j, term in enumerate(terms)]
        all_nodes = [ni.node for ni in self.node_infos]
        for req in selector + [r for lst in term_reqs for r in lst]:
            if not any(req.match(n) for n in all_nodes):
                concerned = [ni.name for ni in rejected if not req.match(ni.node)]
                self.add(req.kind, self._nobody_text(req), nodes=concerned)
                self.near_label_keys(req, all_nodes, concerned)
                self.near_label_values(req, all_nodes, concerned)
        for j, term in enumerate(terms):
            if not term.valid:
                self.add("node-affinity", f"node affinity term {j} is invalid and matches no node",
                         nodes=[ni.name for ni in rejected])
        # The single requirement that alone keeps a rejected node out, if there is one.
        sole = {}
        for ni in rejected:
            node = ni.node
            unmet_sel = [r for r in selector if not r.match(node)]
            unmet_terms = [[r for r in lst if not r.match(node)] if terms[j].valid else None
                           for j, lst in enumerate(term_reqs)]
            if len(unmet_sel) == 1 and (not terms or [] in unmet_terms):
                sole.setdefault(id(unmet_sel[0]), (unmet_sel[0], []))[1].append(ni.name)
            if not unmet_sel:
                for unmet in unmet_terms:
                    if unmet is not None and len(unmet) == 1:
                        sole.setdefault(id(unmet[0]), (unmet[0], []))[1].append(ni.name)
        if len(terms) > 1:
            self._closest_term(rejected, term_reqs, terms)
        for req, concerned in sorted(sole.values(), key=lambda x: -len(x[1]))[:self.max]:
            self.try_pod(req.kind, "", req.phrase, pod_variant(pod, req.edit), concerned, req.change,
                         always=False)
        self.label_nodes(rejected, selector)

    def near_label_keys(self, req, all_nodes, concerned):
        """A requirement no node meets whose key nearly names a label the nodes have with the wanted value
        (``disktype=ssd`` asked, ``disk=ssd`` there): the pod asking for that key instead, verified."""
        if req.field or req.op not in ("In", "Exists"):
            return
        counts = {}
        for n in all_nodes:
            for key in n.labels:
                if near_miss(req.key, key) and requirement_matches(key, req.op, req.values, n.labels):
                    counts[key] = counts.get(key, 0) + 1
        for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:self.max]:
            phrase, edit, change = req.with_key(key)
            wanted = f"{key}={_and(req.values)}" if req.op == "In" else key
            self.try_pod(req.kind, f"no node has label {req.label}, but {_plural(n, 'node')} "
                                   f"{'has' if n == 1 else 'have'} {wanted}",
                         phrase, pod_variant(self.pod, edit), concerned, change, always=False)

    def near_label_values(self, req, all_nodes, concerned):
        """A requirement ``key In (values)`` no node meets where nodes have the key with a value near a wanted
        one (``disktype=SSD`` asked, ``disktype=ssd`` there; see near_value): that value instead, verified."""
        if req.field or req.op != "In":
            return
        counts = {}
        for n in all_nodes:
            v = n.labels.get(req.key)
            if v is not None:
                counts[v] = counts.get(v, 0) + 1
        pairs = _nearest_values(req.values, counts)
        for old, value in sorted(pairs, key=lambda p: (-counts[p[1]], p[1]))[:self.max]:
            phrase, edit, change = req.with_value(old, value)
            n = counts[value]
            self.try_pod(req.kind, f"no node has label {req.label}, but {_plural(n, 'node')} "
                                   f"{'has' if n == 1 else 'have'} {req.key}={value}",
                         phrase, pod_variant(self.pod, edit), concerned, change, always=False)

    def _nobody_text(self, req) -> str:
        if req.field:
            if req.op == "In":
                return f"no node is named {_and(req.values)}"
            return f"no node passes {req.label}"
        if req.op in ("NotIn", "DoesNotExist"):
            return f"every node fails {req.label}"
        seen = {}
        for ni in self.node_infos:
            v = ni.node.labels.get(req.key)
            if v is not None:
                seen[v] = seen.get(v, 0) + 1
        if not seen:
            hint = "" if req.op == "Exists" else f"no node has a {req.key} label at all"
        else:
            values = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
            hint = "nodes have " + ", ".join(f"{req.key}={v} ({n})" for v, n in values[:TEXT_NAMES])
            if len(values) > TEXT_NAMES:
                hint += f" and {len(values) - TEXT_NAMES} more values"
        return f"no node has label {req.label}" + (f" ({hint})" if hint else "")

    def _closest_term(self, rejected, term_reqs, terms):
        """The node affinity term the fewest unmet requirements away from some node."""
        best = None
        for j, lst in enumerate(term_reqs):
            if not terms[j].valid:
                continue
            for ni in rejected:
                unmet = [r.label for r in lst if not r.match(ni.node)]
                if best is None or len(unmet) < len(best[1]):
                    best = (j, unmet)
        if best is None or not best[1]:
            return
        j, unmet = best
        close = [ni.name for ni in rejected if sum(1 for r in term_reqs[j] if not r.match(ni.node)) == len(unmet)]
        self.add("node-affinity", f"node affinity term {j} is the closest: {_plural(len(close), 'node')} "
                                  f"({_names(close)}) miss only {_and(unmet)}", nodes=close)

    def label_nodes(self, rejected, selector):
        """Nodes rejected only by node affinity that the missing nodeSelector labels would let in."""
        groups = {}
        required = self.pod.required_node_affinity
        for ni in rejected:
            if self.only(ni) != names.NODE_AFFINITY:
                continue
            missing = tuple((r.key, r.values[0]) for r in selector if not r.match(ni.node))
            if not missing:
                continue
            labels = dict(ni.node.labels)
            labels.update(missing)
            if required is not None and not required.matches(labels, ni.name):
                continue
            groups.setdefault(missing, []).append((ni, labels))
        for missing, members in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:self.max]:
            replace = {}
            for ni, labels in members:
                clone = ni.clone()
                clone.node = node_variant(ni.node, labels=labels)
                replace[ni.name] = clone
            concerned = [ni.name for ni, _ in members]
            fits, blocked = self.outcome(self.verdicts(replace=replace), concerned)
            if not fits:
                continue
            labels = _and(f'{k}={v}' for k, v in missing)
            one = fits[0]
            if len(concerned) > 1 and self.verdicts(replace={one: replace[one]}, only=[one])[one] is None:
                # the smallest change: the one node, verified labelled alone; the others are named
                others = [n for n in fits if n != one]
                tail = f"; labelled so, {_plural(len(others), 'other node')} ({_names(others)}) would fit too" \
                    if others else ""
                self.add("node-selector", f"labelling {one} with {labels} would fit it{tail}", nodes=[one],
                         change={"label_nodes": [one], "labels": dict(missing), "also_fit": others}, fits=[one],
                         size=1)
                continue
            self.add("node-selector", f"labelling {_names(concerned)} with {labels} would fit {_fit_text(fits)}",
                     nodes=concerned, change={"label_nodes": concerned, "labels": dict(missing)}, fits=fits,
                     still_blocked=blocked, size=len(concerned))

    def taints(self):
        nodes = self.rejected_by(names.TAINT_TOLERATION)
        if not nodes:
            return
        groups = {}
        for ni in nodes:
            taints = _untolerated(ni.node, self.pod.tolerations)
            if taints:
                groups.setdefault(taints, []).append(ni.name)
        not_enough, still = [], {}
        workers = any(not is_control_plane(ni.node) for ni in self.node_infos)
        for taints, concerned in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:self.max]:
            self.near_toleration_keys(taints, concerned)
            tolerations = [_toleration(*t) for t in taints]

            def edit(spec, tolerations=tolerations):
                spec["tolerations"] = list(spec.get("tolerations") or []) + copy.deepcopy(tolerations)
            verdicts = self.verdicts(pod_variant(self.pod, edit))
            fits, blocked = self.outcome(verdicts, concerned)
            if not fits:
                if workers:   # control-plane nodes are no place for the pod: not named when others are there
                    concerned = [n for n in concerned if not is_control_plane(self.snapshot.by_name[n].node)]
                    blocked = self.outcome(verdicts, concerned)[1]
                not_enough.extend(concerned)
                for pl, n in blocked.items():
                    still[pl] = still.get(pl, 0) + n
                continue
            a = "a toleration" if len(taints) == 1 else "tolerations"
            self.add("taints", f"{_fit_text(fits)} would fit with {a} for {_and(_taint_text(*t) for t in taints)}",
                     nodes=concerned, change={"pod": {"add_tolerations": tolerations}}, fits=fits,
                     still_blocked=blocked, size=len(tolerations))
        if not_enough:
            self.add("taints", f"tolerating the taints of {_names(not_enough)} would not be enough (still "
                               f"rejected by {_blocked_text(still)})", nodes=not_enough, still_blocked=still)

    def near_toleration_keys(self, taints, concerned):
        """A toleration whose key nearly names an untolerated taint's (``gpu`` for ``nvidia.com/gpu``) and that
        would tolerate it with that key: the exact key, verified. Likewise an Equal toleration of the taint's
        key whose value is near the taint's (``Gpu`` for ``gpu``, see near_value): the exact value."""
        raw = (self.pod.raw.get("spec") or {}).get("tolerations") or []
        for i, tol in enumerate(raw):
            if not isinstance(tol, dict) or not tol.get("key"):
                continue
            for key, value, effect in taints:
                if tol["key"] == key and tol.get("operator", "Equal") == "Equal" and \
                        tol.get("effect", "") in ("", effect) and near_value(value, tol.get("value", "")) is not None:
                    self._near_toleration_value(i, tol, (key, value, effect), concerned)
                    continue
                if not near_miss(key, tol["key"]) or tol.get("effect", "") not in ("", effect) or (
                        tol.get("operator", "Equal") == "Equal" and tol.get("value", "") != value):
                    continue

                def edit(spec, i=i, key=key):
                    spec["tolerations"][i]["key"] = key
                self.try_pod("taints", f"the pod's toleration of {tol['key']} does not tolerate the taint "
                                       f"{_taint_text(key, value, effect)}: another key",
                             f"the key {key} in that toleration", pod_variant(self.pod, edit), concerned,
                             {"toleration_key": {"index": i, "from": tol["key"], "to": key}}, always=False, size=0)

    def _near_toleration_value(self, i: int, tol: dict, taint: tuple, concerned):
        def edit(spec, value=taint[1]):
            spec["tolerations"][i]["value"] = value
        self.try_pod("taints", f"the pod's toleration of {tol['key']}={tol.get('value', '')} does not tolerate the "
                               f"taint {_taint_text(*taint)}: another value",
                     f"the value {taint[1]} in that toleration", pod_variant(self.pod, edit), concerned,
                     {"toleration_value": {"index": i, "from": tol.get("value", ""), "to": taint[1]}},
                     always=False, size=0)

    def volume_claims(self):
        """The pod's claims VolumeBinding's PreFilter stops at: a missing one created (of the default
        StorageClass, or bound to an Available PersistentVolume), an unbound one with immediate binding bound
        to a PersistentVolume that matches it, each verified; a StorageClass that provisions nothing, said."""
        objects = self.snapshot.objects
        for vol in self.pod.volumes:
            claim, ephemeral = claim_name_of(self.pod, vol)
            if claim is None or ephemeral:
                continue
            key = f"{self.pod.namespace}/{claim}"
            pvc = objects.persistent_volume_claims.get(key)
            if pvc is None:
                self._missing_claim(key, claim)
            elif not is_pvc_fully_bound(pvc) and not is_delay_binding_mode(pvc, objects.storage_classes)[0]:
                self._unbound_claim(key, pvc)

    def _with_volumes(self, claim_key: str, pvc: dict, pv: dict | None = None):
        """The snapshot's objects with ``pvc`` (and ``pv``) in them."""
        objects = copy.copy(self.snapshot.objects)
        objects.persistent_volume_claims = dict(objects.persistent_volume_claims, **{claim_key: pvc})
        if pv is not None:
            objects.persistent_volumes = dict(objects.persistent_volumes, **{pv["metadata"]["name"]: pv})
        return objects

    def _try_volumes(self, diag: str, phrase: str, objects, change: dict) -> bool:
        concerned = [ni.name for ni in self.node_infos]
        fits, blocked = self.outcome(self.verdicts(objects=objects), concerned)
        if fits:
            self.add("volume", f"{diag}; {phrase} would fit {_fit_text(fits)}", nodes=concerned, change=change,
                     fits=fits, still_blocked=blocked, size=1)
        return bool(fits)

    def _bound_pair(self, pvc: dict, pv: dict) -> tuple[dict, dict]:
        """(the claim bound to the volume, the volume bound to the claim), as the PV controller binds them."""
        meta = dict(pvc.get("metadata") or {})
        meta["annotations"] = dict(meta.get("annotations") or {}, **{ANN_BIND_COMPLETED: "yes"})
        bound = dict(pvc, metadata=meta, spec=dict(spec(pvc), volumeName=pv["metadata"]["name"]),
                     status={"phase": "Bound", "accessModes": list(spec(pv).get("accessModes") or ()),
                             "capacity": dict(spec(pv).get("capacity") or {})})
        ref = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": meta.get("namespace") or "default",
               "name": meta.get("name", "")}
        return bound, dict(pv, spec=dict(spec(pv), claimRef=ref), status={"phase": "Bound"})

    def _available_volumes(self, pvc: dict | None = None) -> list:
        """PersistentVolumes no claim holds, that ``pvc`` (if given) would match: its class, size, modes."""
        out = []
        for name, pv in sorted(self.snapshot.objects.persistent_volumes.items()):
            if spec(pv).get("claimRef") or (pv.get("status") or {}).get("phase", "Available") != "Available":
                continue
            if pvc is not None and (pv_class(pv) != pvc_class(pvc) or pv_capacity(pv) < requested_storage(pvc)
                                    or not access_modes_satisfied(pvc, pv) or volume_mode_mismatch(pvc, pv)):
                continue
            out.append(pv)
        return out

    def _missing_claim(self, key: str, claim: str):
        diag = f'persistentvolumeclaim "{claim}" not found'
        ns = self.pod.namespace
        classes = self.snapshot.objects.storage_classes
        default = next((sc for _n, sc in sorted(classes.items())
                        if annotations(sc).get(DEFAULT_CLASS_ANNOTATION) == "true"), None)
        if default is not None:
            name = default["metadata"]["name"]
            new = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": ns},
                   "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                            "storageClassName": name}, "status": {"phase": "Pending"}}
            if self._try_volumes(diag, f"creating PersistentVolumeClaim {key} (StorageClass {name}, 1Gi, "
                                       "ReadWriteOnce)", self._with_volumes(key, new), {"create_pvc": new}):
                return
        for pv in self._available_volumes():
            capacity = (spec(pv).get("capacity") or {}).get("storage", "")
            new = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": ns},
                   "spec": {"accessModes": list(spec(pv).get("accessModes") or ["ReadWriteOnce"])[:1],
                            "resources": {"requests": {"storage": capacity}}, "storageClassName": pv_class(pv),
                            "volumeName": pv["metadata"]["name"]}}
            bound, bound_pv = self._bound_pair(new, pv)
            if self._try_volumes(diag, f"creating PersistentVolumeClaim {key} bound to PersistentVolume "
                                       f"{pv['metadata']['name']} ({capacity})",
                                 self._with_volumes(key, bound, bound_pv), {"create_pvc": new}):
                return

    def _unbound_claim(self, key: str, pvc: dict):
        name = pvc_class(pvc)
        sc = self.snapshot.objects.storage_classes.get(name) if name else None
        concerned = [ni.name for ni in self.node_infos]
        if name and sc is None:
            self.add("volume", f'claim {key} is unbound: its StorageClass "{name}" does not exist', nodes=concerned)
        elif sc is not None and sc.get("provisioner", "") in ("", NOT_SUPPORTED_PROVISIONER):
            self.add("volume", f"claim {key} is unbound: the StorageClass {name} has no provisioner (nothing makes "
                               "a PersistentVolume for it)", nodes=concerned)
        for pv in self._available_volumes(pvc)[:self.max]:
            bound, bound_pv = self._bound_pair(pvc, pv)
            if self._try_volumes(f"claim {key} is unbound", f"binding it to PersistentVolume "
                                 f"{pv['metadata']['name']} ({(spec(pv).get('capacity') or {}).get('storage', '')})",
                                 self._with_volumes(key, bound, bound_pv),
                                 {"bind_pvc": {"claim": key, "volume": pv["metadata"]["name"]}}):
                return

    def cordoned(self):
        nodes = self.rejected_by(names.NODE_UNSCHEDULABLE)
        if not nodes:
            return
        replace = {}
        for ni in nodes:
            # kubectl uncordon clears the flag; the node controller then removes the unschedulable taint.
            clone = ni.clone()
            clone.node = node_variant(ni.node, unschedulable=False, taints=[
                t for t in (ni.node.raw.get("spec") or {}).get("taints") or ()
                if not (isinstance(t, dict) and t.get("key") == UNSCHEDULABLE_TAINT_KEY)])
            replace[ni.name] = clone
        concerned = [ni.name for ni in nodes]
        fits, blocked = self.outcome(self.verdicts(replace=replace), concerned)
        if fits:
            text = f"uncordoning {_names(fits)} would fit {'it' if len(fits) == 1 else 'them'}"
            rest = [n for n in concerned if n not in fits]
            if rest:
                text += f" ({_names(rest)} would still be rejected by {_blocked_text(blocked)})"
        else:
            text = (f"{_names(concerned)} {'is' if len(concerned) == 1 else 'are'} cordoned; uncordoning alone "
                    f"would not be enough "
                    f"(still rejected by {_blocked_text(blocked)})")
        self.add("cordoned", text, nodes=concerned, change={"uncordon": concerned}, fits=fits,
                 still_blocked=blocked)

    def host_ports(self):
        nodes = self.rejected_by(names.NODE_PORTS)
        if not nodes:
            return
        for wanted in dict.fromkeys(self.pod.host_ports):
            users = {}
            for ni in nodes:
                if _port_conflicts(wanted, ni.used_ports):
                    users[ni.name] = [p.key for p in ni.pods if _port_conflicts(wanted, p.host_ports)]
            if not users:
                continue
            ip, protocol, port = wanted
            label = f"{port}/{protocol}" if ip == "0.0.0.0" else f"{ip}:{port}/{protocol}"
            holders = sorted({k for keys in users.values() for k in keys})
            diag = f"port {label} is used on {_names(users)}"
            if holders:
                diag += f" (by {_names(holders)})"

            def edit(spec, wanted=wanted):
                for c in spec.get("containers") or []:
                    for p in c.get("ports") or []:
                        if (p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP",
                                p.get("hostPort", 0) or 0) == wanted:
                            p.pop("hostPort", None)
            self.try_pod("host-ports", diag, f"dropping hostPort {label}", pod_variant(self.pod, edit),
                         list(users), {"remove_host_port": {"hostIP": ip, "protocol": protocol, "port": port}})

    def pod_affinity(self):
        nodes = self.rejected_by(names.INTER_POD_AFFINITY)
        if not nodes:
            return
        pod, ns = self.pod, self.ns_labels
        all_pods = [(ni, p) for ni in self.node_infos for p in ni.pods]
        own_match = all(t.matches(pod, ns) for t in pod.affinity_required)
        for i, t in enumerate(pod.affinity_required):
            key = t.topology_key
            domains = {}
            for ni, p in all_pods:
                v = ni.node.labels.get(key)
                if v is not None and t.matches(p, ns):
                    domains[v] = domains.get(v, 0) + 1
            if not domains and own_match:
                blocked = [ni.name for ni in nodes if key not in ni.node.labels]
            else:
                blocked = [ni.name for ni in nodes if ni.node.labels.get(key) not in domains]
            if not blocked:
                continue
            head = f"pod affinity term {i} ({selector_text(t.selector)}, topologyKey {key})"
            if domains:
                where = ", ".join(f"{v} ({n})" for v, n in sorted(domains.items())[:TEXT_NAMES])
                diag = (f"{head} is met only in {key} {where}; {_plural(len(blocked), 'rejected node')} "
                        f"{'lies' if len(blocked) == 1 else 'lie'} elsewhere")
            elif own_match:
                verb = "lacks" if len(blocked) == 1 else "lack"
                diag = f"{head}: {_plural(len(blocked), 'node')} {verb} the {key} label"
            else:
                diag = f"{head} matches no existing pod (nor the pod itself)"
            self.try_pod("pod-affinity", diag, "dropping the term",
                         pod_variant(self.pod, self._drop_term("podAffinity", i)), blocked,
                         {"remove_pod_affinity_term": i})
        for i, t in enumerate(pod.anti_affinity_required):
            key = t.topology_key
            holders = {}
            for ni, p in all_pods:
                v = ni.node.labels.get(key)
                if v is not None and t.matches(p, ns):
                    holders.setdefault(v, []).append(p.key)
            blocked = [ni.name for ni in nodes if ni.node.labels.get(key) in holders]
            if not blocked:
                continue
            where = ", ".join(f"{v} ({_names(keys, 2)})" for v, keys in sorted(holders.items())[:TEXT_NAMES])
            if len(holders) > TEXT_NAMES:
                where += f" and {len(holders) - TEXT_NAMES} more"
            diag = (f"pod anti-affinity term {i} ({selector_text(t.selector)}, topologyKey {key}): matching pods "
                    f"occupy {key} {where}, blocking {_plural(len(blocked), 'node')}")
            self.try_pod("pod-anti-affinity", diag, "dropping the term",
                         pod_variant(self.pod, self._drop_term("podAntiAffinity", i)), blocked,
                         {"remove_pod_anti_affinity_term": i})
        self.existing_anti_affinity(nodes)

    @staticmethod
    def _drop_term(section, i):
        def edit(spec):
            aff = spec["affinity"][section]
            terms = aff["requiredDuringSchedulingIgnoredDuringExecution"]
            del terms[i]
            if not terms:
                del aff["requiredDuringSchedulingIgnoredDuringExecution"]
        return edit

    def existing_anti_affinity(self, nodes):
        """Existing pods whose required anti-affinity matches the pod; verified by evicting them."""
        pod, ns = self.pod, self.ns_labels
        in_domain = {}   # (key, value) -> rejected node names, built per key on demand
        indexed = set()
        blockers = []
        for ni in self.snapshot.have_pods_with_required_anti_affinity:
            labels = ni.node.labels
            for p in ni.pods_with_required_anti_affinity:
                domains = sorted({(t.topology_key, labels[t.topology_key]) for t in p.anti_affinity_required
                                  if t.topology_key in labels and t.matches(pod, ns)})
                if not domains:
                    continue
                for key, _v in domains:
                    if key not in indexed:
                        indexed.add(key)
                        for o in nodes:
                            v = o.node.labels.get(key)
                            if v is not None:
                                in_domain.setdefault((key, v), []).append(o.name)
                blocked = sorted({n for d in domains for n in in_domain.get(d, ())})
                blockers.append((ni, p, domains, blocked))
        if not blockers:
            return
        blockers.sort(key=lambda b: (-len(b[3]), b[1].key))
        for ni, p, domains, blocked in blockers[:self.max]:
            fits, still = self.outcome(self.evict({ni.name: [p]}), blocked)
            where = _and(f"{k}={v}" for k, v in domains)
            text = (f"existing pod {p.key} on {ni.name} has required anti-affinity against this pod in {where}, "
                    f"blocking {_plural(len(blocked), 'node')} ({_names(blocked)}); ")
            text += (f"evicting it would fit {_fit_text(fits)}" if fits else
                     f"evicting it alone would not be enough (still rejected by {_blocked_text(still)})")
            self.add("existing-anti-affinity", text, nodes=blocked,
                     change={"evict": [p.key]}, fits=fits, still_blocked=still, size=1)
        if len(blockers) > 1:
            victims = {}
            for ni, p, _d, _b in blockers:
                victims.setdefault(ni.name, []).append(p)
            concerned = sorted({n for b in blockers for n in b[3]})
            fits, still = self.outcome(self.evict(victims), concerned)
            if fits:
                keys = [b[1].key for b in blockers]
                self.add("existing-anti-affinity", f"evicting all {len(keys)} pods with anti-affinity against "
                                                   f"this pod ({_names(keys)}) would fit {_fit_text(fits)}",
                         nodes=concerned, change={"evict": keys}, fits=fits, still_blocked=still, size=len(keys))

    def evict(self, victims: dict, only=None) -> dict:
        """Verdicts with the given pods ({node: [pods]}) removed from their nodes (Filter on the ``only`` names,
        or on every node)."""
        replace = {}
        for name, pods in victims.items():
            clone = self.snapshot.get(name).clone()
            for p in pods:
                clone.remove_pod(p)
            replace[name] = clone
        return self.verdicts(replace=replace, only=only)

    def topology_spread(self) -> bool:
        """The pod's own DoNotSchedule constraints: domain counts and the maxSkew that would fit.
        False when it had nothing to say (the generic report then covers the plugin)."""
        nodes = self.rejected_by(names.POD_TOPOLOGY_SPREAD)
        pod = self.pod
        hard = [(i, c) for i, c in enumerate(pod.spread_constraints) if c.when_unsatisfiable == "DoNotSchedule"]
        if not nodes or not hard:
            return False
        before = len(self.out)
        keys = [c.topology_key for _i, c in hard]
        only_pts = {ni.name for ni in nodes if self.only(ni) == names.POD_TOPOLOGY_SPREAD}
        missing = [ni.name for ni in nodes if any(k not in ni.node.labels for k in keys)]
        if missing:
            self.add("topology-spread", f"{_plural(len(missing), 'node')} ({_names(missing)}) "
                                        f"{'lacks' if len(missing) == 1 else 'lack'} a topology label the spread "
                                        f"constraints need ({_and(sorted(set(keys)))})",
                     nodes=missing)
        for i, c in hard:
            match = self._spread_matcher(c)
            counts = self._spread_counts(c, keys, match)
            self_match = 1 if match(pod.labels) else 0
            min_domains = 1 if c.min_domains is None else c.min_domains
            min_match = 0 if len(counts) < min_domains else min(counts.values(), default=0)
            need = {v: n + self_match - min_match for v, n in counts.items()}
            blocked_domains = sorted(v for v, n in need.items() if n > c.max_skew)
            key = c.topology_key
            concerned = [ni.name for ni in nodes if ni.node.labels.get(key) in set(blocked_domains)]
            if not concerned:
                continue
            shown = sorted(counts.items())
            counts_text = " ".join(f"{v}={n}" for v, n in shown[:10]) + (" ..." if len(shown) > 10 else "")
            diag = (f"topology spread maxSkew {c.max_skew} on {key} blocks {_names(blocked_domains)} "
                    f"(counts {counts_text}")
            if len(counts) < min_domains:
                diag += f"; {len(counts)} domains < minDomains {min_domains}, so the minimum counts as 0"
            diag += ")"
            useful = [need[v] for v in blocked_domains
                      if any(ni.name in only_pts for ni in nodes if ni.node.labels.get(key) == v)]
            skew = min(useful or [need[v] for v in blocked_domains])

            def edit(spec, i=i, skew=skew):
                spec["topologySpreadConstraints"][i]["maxSkew"] = skew
            self.try_pod("topology-spread", diag, f"raising maxSkew to {skew}", pod_variant(pod, edit), concerned,
                         {"topology_spread_constraint": i, "max_skew": skew}, size=skew - c.max_skew)
        return len(self.out) > before

    def _spread_matcher(self, c):
        """The constraint's selector with its matchLabelKeys (the pod's values) ANDed in."""
        sel = c.selector
        extra = [(k, self.pod.labels[k]) for k in c.match_label_keys if k in self.pod.labels]
        if not extra or sel.nothing:
            return sel.matches
        return lambda labels: sel.matches(labels) and all(labels.get(k) == v for k, v in extra)

    def _spread_counts(self, c, keys, match) -> dict:
        """{domain: matching pods} over the nodes the constraint counts (its inclusion policies).

        An empty selector counts no existing pod (kube's countPodsMatchSelector)."""
        pod = self.pod
        empty = c.selector.is_empty()
        counts = {}
        for ni in self.node_infos:
            node = ni.node
            labels = node.labels
            if any(k not in labels for k in keys):
                continue
            if c.node_affinity_policy == "Honor" and not _node_requirements_match(pod, node):
                continue
            if c.node_taints_policy == "Honor" and _untolerated(node, pod.tolerations):
                continue
            n = 0
            if not empty:
                for p in ni.pods:
                    if p.namespace == pod.namespace and p.deletion_timestamp is None and match(p.labels):
                        n += 1
            v = labels[c.topology_key]
            counts[v] = counts.get(v, 0) + n
        return counts

    def claims(self):
        """DynamicResources: what no device meets, the changes to the pod's claims that fit (verified), and a node
        like one whose devices would serve them (with copies of its ResourceSlices)."""
        nodes = self.rejected_by(names.DYNAMIC_RESOURCES)
        if not nodes:
            return
        objects = self.snapshot.objects
        local = {(s.get("spec") or {}).get("nodeName") for s in objects.resource_slices.values()}
        with_devices = [ni for ni in nodes if ni.name in local]
        concerned = [ni.name for ni in nodes]
        diagnoses, fixes = claim_fixes(objects, self.pod.raw, [ni.node for ni in with_devices or nodes[:self.max]],
                                       limit=self.max)
        for text in diagnoses:
            self.add("claims", text, nodes=concerned)
        for fix in fixes:
            fits, blocked = self.outcome(self.verdicts(objects=self.with_objects(resource_claims=fix.claims)),
                                         concerned)
            if fits:
                self.add(fix.kind, f"{fix.phrase} would fit {_fit_text(fits)}", nodes=concerned,
                         change={"claim": fix.change}, fits=fits, still_blocked=blocked, size=fix.size)
        for ni in [ni for ni in with_devices if self.only(ni) == names.DYNAMIC_RESOURCES][:self.max]:
            if self.added_node_fits(ni):
                slices = [s["metadata"]["name"] for s in node_local(objects.resource_slices.values(), ni.name)]
                self.add("claims", f"adding a node like {ni.name}, with its ResourceSlices ({_names(slices)}), "
                                   f"would fit", nodes=[ni.name],
                         change={"add_node_like": ni.name, "resource_slices": slices}, adds_node=True)
                return

    def other_plugins(self, handled):
        """Plugins without a specific analysis: who they reject and why."""
        per_plugin = {}
        for ni in self.node_infos:
            for pl, st in self.rejected.get(ni.name, {}).items():
                if pl not in handled:
                    per_plugin.setdefault(pl, []).append((ni, st))
        for pl, items in per_plugin.items():
            reasons = {}
            for _ni, st in items:
                for r in st.reasons:
                    reasons[r] = reasons.get(r, 0) + 1
            concerned = [ni.name for ni, _ in items]
            sole = [ni.name for ni, _ in items if self.only(ni) == pl]
            text = (f"{pl} rejects {_plural(len(concerned), 'node')} ({_names(concerned)}): "
                    + "; ".join(f"{r} ({n})" for r, n in sorted(reasons.items(), key=lambda kv: -kv[1])))
            if sole:
                text += f"; it is the only obstacle on {_plural(len(sole), 'node')} ({_names(sole)})"
            self.add("plugin", text, nodes=concerned)

    def preemption(self, recheck: bool = True):
        pod = self.pod
        if pod.preemption_policy == "Never":
            self.add(PREEMPTION, "preemption is disabled for this pod (preemptionPolicy: Never)")
            return
        rec = self.trace.preemption if self.trace is not None else None
        if not rec:
            return
        node = rec.get("nominated_node")
        if node:
            victims = list(rec.get("victims") or [])
            fits = []
            ni = self.snapshot.get(node) if recheck else None
            if not recheck:
                fits = [node]   # the attempt's own dry run found it, on this snapshot
            elif ni is not None:
                wanted = set(victims)
                pods = [p for p in ni.pods if p.key in wanted]
                if len(pods) == len(victims):
                    fits, _ = self.outcome(self.evict({node: pods}, only=[node]), [node])
            what = f"evicting {_names(victims)}" if victims else "without evicting any pod"
            text = f"preemption nominated {node}: {what} makes room"
            if not fits:
                text += " (not confirmed on the current snapshot)"
            self.add(PREEMPTION, text, nodes=[node], change={"evict": victims, "node": node}, fits=fits)
            return
        msg = rec.get("message") or ""
        if msg.startswith("preemption: "):
            msg = msg[len("preemption: "):]
        if msg:
            self.add(PREEMPTION, f"preemption cannot help: {msg}")
