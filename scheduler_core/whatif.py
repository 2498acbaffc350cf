"""What-if planning over a copy of a cluster's state: how many more copies of a pod fit, what a drain does,
which pending pods fit once nodes are added.

Each question runs the full scheduler (``Scheduler`` over a ``SimulatedCluster``: queue order, every profile
plugin, preemption when asked) on a fake clock with the tie-break by name, so a result is reproducible and
each placement is the one kube-scheduler makes in that state. The cluster a planner starts from is a
``Scenario`` (nodes, bound pods, pending pods, objects); nothing outside the planner changes.

- ``capacity``: copies of a pod are created one at a time, each scheduled before the next is created
  (cluster-capacity's method); the first copy that does not fit stops the count, and its FitError and
  decision trace say why. The cluster's pending pods are not placed first (they hold no resources).
- ``drain``: the nodes are cordoned, then their pods evicted in ``kubectl drain`` order (node by node, pods
  by namespace and name), each eviction allowed only while every PodDisruptionBudget covering the pod allows
  a disruption (as the disruption controller computes it); evicted pods owned by a controller come back as
  pending pods (new names, as a ReplicaSet or Job creates them; the same name for a StatefulSet), bare pods
  are lost. Replacements are scheduled after each pass, so a PDB blocks only while its pods have nowhere to
  go; a drain that can evict nothing more says which budgets block it.
- ``add_nodes``: copies of a node template are added and the cluster's pending pods retried; with a target
  set of pods, the smallest count that makes all of them fit is searched (doubling, then bisection, each
  probe a full run).
"""
from __future__ import annotations

import copy
import itertools
import math
import uuid

from .clock import FakeClock
from .cluster.simulated import SimulatedCluster
from .config import config_for
from .dra.slices import copies_for_node
from .explain import explain, node_rejections
from .framework.preemption import PDB
from .objects import Node, ParseError, Pod
from .plugins.registry import build_registry
from .scheduler import Scheduler
from .trace import CallbackSink

DEFAULT_MAX_COPIES = 10000
MAX_SETTLE_ROUNDS = 1000
MAX_DETAILED = 20
TRACED_PLACEMENTS = 200    # placements that keep their attempt's trace (capacity: the last ones)
HOSTNAME_LABEL = "kubernetes.io/hostname"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


class WhatIfError(ValueError):
    """A question that cannot be asked of this cluster (unknown node, no profile for the pod, bad template)."""


def _utilisation(cluster: SimulatedCluster, nodes) -> dict:
    """Per node: requested / allocatable cpu and memory in percent, and the pod count (one pass over the pods)."""
    used = {node.name: [0, 0, 0] for node in nodes}
    for pod in cluster.pods.values():
        u = used.get(pod.node_name)
        if u is not None:
            u[0] += pod.requests.get("cpu", 0)
            u[1] += pod.requests.get("memory", 0)
            u[2] += 1
    out = {}
    for node in nodes:
        cpu, mem, pods = used[node.name]
        alloc_cpu, alloc_mem = node.allocatable.get("cpu", 0), node.allocatable.get("memory", 0)
        out[node.name] = {"cpu_pct": round(100 * float(cpu) / float(alloc_cpu), 1) if alloc_cpu else 0.0,
                          "memory_pct": round(100 * float(mem) / float(alloc_mem), 1) if alloc_mem else 0.0,
                          "pods": pods}
    return out


class _DryEvictions(SimulatedCluster):
    """A cluster whose preemption victims are only noted (preemption off: what it would take, no deletion)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.would_evict = []

    def evict(self, pod, preemptor_uid: str, node_name: str, scheduler_name: str = "default-scheduler"):
        self.would_evict.append({"pod": pod.key, "preemptor_uid": preemptor_uid, "node": node_name})
        return None


class Planner:
    """A private cluster and scheduler built from a scenario; ``traces`` keeps each pod's latest attempt.

    The profiles run as configured, PostFilter included, so FitError messages are the loop's own; with
    ``preemption`` off the victims a preemption picks are noted in ``cluster.would_evict``, not deleted.
    ``trace_all_filters``: traces hold every Filter plugin's verdict on every visited node (decisions unchanged);
    ``extender_policy``: the limits on the profile's extenders' calls (Scheduler's, default DEFAULT_POLICY);
    ``on_stage(text)``: told what the planner does, while it builds and after every scheduling attempt."""

    def __init__(self, scenario, config_doc=None, registry=None, preemption: bool = True,
                 include_pending: bool = True, trace_all_filters: bool = False, extender_policy=None,
                 on_stage=None, *, kube_version=None, feature_gates=None):
        self.on_stage = on_stage or (lambda text: None)
        self.registry = registry or build_registry()
        doc = config_doc if config_doc is not None else scenario.config
        self.config = config_for(doc, self.registry, kube_version=scenario.kube_version(kube_version),
                                 feature_gates=feature_gates)
        scenario = scenario.read_by(self.config.features)
        objects = dict(scenario.objects)
        objects["poddisruptionbudgets"] = (list(objects.get("poddisruptionbudgets", ()))
                                           + list(scenario.extra.get("pdbs") or ()))
        pods = list(scenario.bound_pods) + (list(scenario.pending_pods) if include_pending else [])
        self.clock = FakeClock()
        cluster_class = SimulatedCluster if preemption else _DryEvictions
        self.on_stage(f"copying the cluster ({len(scenario.nodes)} nodes, {len(pods)} pods)")
        self.cluster = cluster_class(scenario.nodes, pods, objects, self.clock)
        self.traces = {}
        self.attempts = 0
        self.on_stage("loading the scheduler's cache")
        self.scheduler = Scheduler(self.cluster, self.config, self.registry, clock=self.clock, tie_break="name",
                                   trace_sink=CallbackSink(self._keep), trace_all_filters=trace_all_filters,
                                   extender_policy=extender_policy)

    def _keep(self, trace) -> None:
        self.traces[trace.pod.key] = trace
        self.attempts += 1
        self.on_stage(f"{self.attempts} scheduling attempts")

    def settle(self) -> None:
        """Schedule until nothing is left to try: activeQ emptied, backoffQ fast-forwarded, repeated while it
        moves pods (preemptors retry once their victims are gone); unschedulable pods stay where they are."""
        for _ in range(MAX_SETTLE_ROUNDS):
            self.scheduler.run_until_idle()
            if not self.scheduler.queue.flush_backoff_q_all():
                return

    def node_of(self, key: str) -> str | None:
        pod = self.cluster.pods.get(key)
        return (pod.node_name or None) if pod is not None else None

    def why(self, key: str, detailed: bool = False) -> dict:
        """The pod's latest attempt: kube's message and the rejecting plugins; ``detailed`` adds the attempt's
        CycleTrace and what would fix it (``explain`` on the cluster as it is now)."""
        tr = self.traces.get(key)
        if tr is None:
            return {"message": "never attempted (no profile serves its schedulerName, or it is gated)",
                    "plugins": []}
        out = {"message": tr.message or tr.error or tr.bind_error or "", "plugins": sorted(tr.failing_plugins())}
        if detailed:
            fwk = self.scheduler.profiles[tr.pod.scheduler_name]
            self.scheduler.cache.update_snapshot(self.scheduler.snapshot)
            out["trace"] = tr
            out["suggestions"] = [sg.to_dict() for sg in explain(fwk, self.scheduler.snapshot, tr.pod, tr)]
        return out

    def pending(self, limit_detailed: int) -> list:
        """Every unbound pod with why; the first ``limit_detailed`` in detail (explain is costly)."""
        out = []
        for pod in sorted(self.cluster.list_pods(), key=lambda p: p.key):
            if not pod.node_name:
                detailed = len(out) < limit_detailed
                if detailed:
                    self.on_stage(f"explaining why {pod.key} stays Pending")
                out.append(dict(self.why(pod.key, detailed=detailed), pod=pod.key))
        return out

    def profile_for(self, pod: Pod) -> None:
        if pod.scheduler_name not in self.scheduler.profiles:
            raise WhatIfError(f'no profile has schedulerName "{pod.scheduler_name}" '
                              f'(profiles: {", ".join(sorted(self.scheduler.profiles))})')


def pod_copy(template: dict, name: str) -> dict:
    """A new pending pod from a pod (or pod template) manifest: its labels, annotations, owners and spec,
    a new name and uid, no node, no status."""
    meta = template.get("metadata") or {}
    new_meta = {"name": name, "namespace": meta.get("namespace") or "default", "uid": str(uuid.uuid4())}
    for key in ("labels", "annotations", "ownerReferences"):
        if meta.get(key):
            new_meta[key] = copy.deepcopy(meta[key])
    spec = {k: v for k, v in copy.deepcopy(template.get("spec") or {}).items() if k != "nodeName"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": new_meta, "spec": spec}


WORKLOAD_OWNER = {"Deployment": "ReplicaSet", "ReplicaSet": "ReplicaSet", "StatefulSet": "StatefulSet",
                  "Job": "Job", "ReplicationController": "ReplicationController", "DaemonSet": "DaemonSet"}


def template_from_manifest(doc) -> dict:
    """The pod a manifest stands for: a Pod as it is, or a workload's pod template (Deployment, ReplicaSet,
    StatefulSet, Job, ReplicationController) in the workload's namespace, owned by its controller as the
    controller would create it (a Deployment's pods by a ReplicaSet)."""
    if not isinstance(doc, dict):
        raise WhatIfError("pod: expected a Pod or a workload object")
    kind = doc.get("kind") or "Pod"
    if kind == "Pod":
        return doc
    if kind not in WORKLOAD_OWNER or kind == "DaemonSet":
        raise WhatIfError(f"pod: kind {kind}: expected a Pod, Deployment, ReplicaSet, StatefulSet, Job or "
                          f"ReplicationController")
    meta = doc.get("metadata") or {}
    template = (doc.get("spec") or {}).get("template")
    if not isinstance(template, dict):
        raise WhatIfError(f"pod: {kind} {meta.get('name', '')}: spec.template: required value")
    pod_meta = dict(template.get("metadata") or {}, name=meta.get("name") or "whatif",
                    namespace=meta.get("namespace") or "default")
    pod_meta["ownerReferences"] = [{"apiVersion": "apps/v1" if kind != "Job" else "batch/v1",
                                    "kind": WORKLOAD_OWNER[kind], "name": meta.get("name") or "whatif",
                                    "uid": meta.get("uid") or "", "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": template.get("spec") or {}}


def capacity(scenario, template: dict, config_doc=None, max_copies: int = DEFAULT_MAX_COPIES,
             preemption: bool = False, registry=None, progress=None, **planner) -> dict:
    """How many copies of ``template`` fit, placed one by one; ``progress(done, total, stage)`` after each copy
    and while the copy of the cluster is built; ``planner``: Planner options (trace_all_filters, extender_policy)."""
    if max_copies < 1:
        raise WhatIfError("max copies: must be at least 1")
    stage = (lambda text: progress(0, max_copies, text)) if progress else None
    planner = Planner(scenario, config_doc, registry, preemption=preemption, include_pending=False,
                      on_stage=stage, **planner)
    planner.on_stage = lambda text: None   # from here on, progress counts copies
    base = (template.get("metadata") or {}).get("name") or "whatif"
    try:
        first = planner.config.features.pod_as_read(Pod(pod_copy(template, f"{base}-whatif-1")))
    except ParseError as err:
        raise WhatIfError(f"pod: {err}") from None
    planner.profile_for(first)
    per_node, placements, stop = {}, [], None
    names = (f"{base}-whatif-{n}" for n in itertools.count(1)
             if f"{first.namespace}/{base}-whatif-{n}" not in planner.cluster.pods)   # names the cluster has are skipped
    for i in range(1, max_copies + 1):
        pod = first.renamed(next(names), str(uuid.uuid4()))
        planner.cluster.add_pod(pod)
        key = pod.key
        if preemption:
            planner.settle()
        else:
            planner.scheduler.run_until_idle()
        node = planner.node_of(key)
        if node is None:
            stop = dict(planner.why(key, detailed=True), pod=key)
            if not preemption:
                stop["would_preempt"] = planner.cluster.would_evict
            break
        placements.append({"pod": key, "node": node, "trace": planner.traces.get(key)})
        if len(placements) > TRACED_PLACEMENTS:
            old = placements[-TRACED_PLACEMENTS - 1]
            old.pop("trace", None)
            planner.traces.pop(old["pod"], None)
        per_node[node] = per_node.get(node, 0) + 1
        if progress:
            progress(i, max_copies, "")
    return {"fit": len(placements), "max_copies": max_copies, "limited": stop is None,
            "placements": placements, "per_node": dict(sorted(per_node.items(), key=lambda kv: (-kv[1], kv[0]))),
            "stop": stop, "preemption": preemption, "evictions": planner.cluster.evictions,
            "attempts": planner.attempts}


def _controller(pod: Pod) -> dict | None:
    for ref in (pod.raw.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


class _Budget:
    """One PodDisruptionBudget and the disruptions it allows now (disruption controller arithmetic)."""

    def __init__(self, raw: dict):
        meta, spec = raw.get("metadata") or {}, raw.get("spec") or {}
        self.pdb = PDB(raw)   # namespace and selector, read as preemption reads them
        self.name = f'{self.pdb.namespace}/{meta.get("name", "")}'
        self.min_available = spec.get("minAvailable")
        self.max_unavailable = spec.get("maxUnavailable")

    def covers(self, pod: Pod) -> bool:
        sel = self.pdb.selector
        return sel is not None and pod.namespace == self.pdb.namespace and sel.matches(pod.labels)

    @staticmethod
    def _scaled(value, total: int) -> int:
        """intstr.GetScaledValueFromIntOrPercent with roundUp."""
        if isinstance(value, str) and value.endswith("%"):
            return math.ceil(int(value[:-1]) * total / 100)
        return int(value)

    def allowed(self, pods) -> int:
        """disruptionsAllowed: healthy (bound, a simulated kubelet runs them) minus desired healthy."""
        matching = [p for p in pods if self.covers(p)]
        healthy = sum(1 for p in matching if p.node_name)
        expected = len(matching)
        if self.max_unavailable is not None:
            desired = expected - self._scaled(self.max_unavailable, expected)
        elif self.min_available is not None:
            desired = self._scaled(self.min_available, expected)
        else:
            desired = expected
        return max(0, healthy - max(0, desired))


def _replacement(pod: Pod, serial: int) -> dict:
    """The pod its controller creates after an eviction: a StatefulSet reuses the name, others generate one."""
    ref = _controller(pod)
    name = pod.name if ref.get("kind") == "StatefulSet" else f"{ref.get('name') or pod.name}-whatif-{serial}"
    return pod_copy(pod.raw, name)


def _select_nodes(planner: Planner, names=(), node_filter=None) -> list:
    """The named nodes, then (in name order) those ``node_filter(node)`` accepts."""
    nodes = []
    for name in names:
        node = planner.cluster.get_node(name)
        if node is None:
            raise WhatIfError(f'node "{name}" not found')
        nodes.append(node)
    if node_filter is not None:
        nodes.extend(n for n in sorted(planner.cluster.list_nodes(), key=lambda n: n.name)
                     if node_filter(n) and n not in nodes)
    if not nodes:
        raise WhatIfError("no node to drain: name nodes or give a selector that matches some")
    return nodes


def drain(scenario, node_names=(), node_filter=None, config_doc=None, registry=None, progress=None,
          **planner) -> dict:
    """Cordon and drain nodes (named, or accepted by ``node_filter(node)``, e.g. a label selector); where every
    evicted pod goes, what stays Pending and why, which budgets block. ``progress(evicted, total, stage)`` after
    each eviction and while the planner builds and schedules."""
    evicted, total = [], None

    def stage(text: str) -> None:
        if progress:
            progress(len(evicted), total, text)

    planner = Planner(scenario, config_doc, registry, on_stage=stage, **planner)
    planner.settle()
    nodes = _select_nodes(planner, node_names, node_filter)
    drained = {n.name for n in nodes}
    kept = [n for n in planner.cluster.list_nodes() if n.name not in drained]
    before = _utilisation(planner.cluster, kept)
    for node in nodes:
        raw = copy.deepcopy(node.raw)
        raw.setdefault("spec", {})["unschedulable"] = True
        planner.cluster.update_node(raw)
    budgets = [_Budget(raw) for raw in planner.cluster.objects.pod_disruption_budgets]
    queue, skipped, by_node = [], [], {name: [] for name in drained}
    for pod in planner.cluster.list_pods():
        if pod.node_name in by_node:
            by_node[pod.node_name].append(pod)
    for node in nodes:
        for pod in sorted(by_node[node.name], key=lambda p: (p.namespace, p.name)):
            ref = _controller(pod)
            annotations = (pod.raw.get("metadata") or {}).get("annotations") or {}
            if MIRROR_POD_ANNOTATION in annotations:
                skipped.append({"pod": pod.key, "node": node.name, "reason": "mirror pod"})
            elif ref and ref.get("kind") == "DaemonSet":
                skipped.append({"pod": pod.key, "node": node.name, "reason": "DaemonSet-managed"})
            else:
                queue.append((pod, node.name))
    lost, serial = [], 0
    total = len(queue)
    while queue:
        waiting = []
        for pod, node_name in queue:
            current = planner.cluster.pods.get(pod.key)
            if current is None or current.uid != pod.uid:
                continue
            covering = [b for b in budgets if b.covers(current)]
            pods_now = planner.cluster.list_pods() if covering else ()
            blocking = [b.name for b in covering if b.allowed(pods_now) < 1]
            if blocking:
                waiting.append((pod, node_name, blocking))
                continue
            planner.cluster.delete_pod(current)
            entry = {"pod": pod.key, "from": node_name}
            if _controller(current):
                serial += 1
                new = _replacement(current, serial)
                planner.cluster.add_pod(new)
                entry["replacement"] = f'{new["metadata"]["namespace"]}/{new["metadata"]["name"]}'
            else:
                lost.append({"pod": pod.key, "from": node_name})
                entry["replacement"] = None
            evicted.append(entry)
            stage("")
        planner.settle()
        if len(waiting) == len(queue):
            break
        queue = [(p, n) for p, n, _ in waiting]
    else:
        waiting = []
    traced = 0
    for entry in evicted:
        key = entry["replacement"]
        if key:
            entry["node"] = planner.node_of(key)
            if entry["node"] is None:
                entry.update(why=planner.why(key)["message"])
            elif traced < TRACED_PLACEMENTS:
                entry["trace"] = planner.traces.get(key)
                traced += 1
    pending = planner.pending(MAX_DETAILED)
    replacements = {e["replacement"] for e in evicted if e["replacement"]}
    for entry in pending:
        entry["displaced"] = entry["pod"] in replacements
    blocked = [{"pod": p.key, "node": n, "budgets": b, "message": PDB_VIOLATION} for p, n, b in waiting]
    return {"nodes": sorted(drained), "evicted": evicted, "lost": lost, "skipped": skipped, "blocked": blocked,
            "pending": pending, "utilisation_before": before, "utilisation_after": _utilisation(planner.cluster, kept),
            "attempts": planner.attempts}


def node_copies(template: dict, count: int, existing) -> list:
    """``count`` nodes like ``template``: new names (``<name>-whatif-<i>``, skipping names in use), hostname
    label to match, no unschedulable flag."""
    base = (template.get("metadata") or {}).get("name") or "node"
    out, i = [], 0
    while len(out) < count:
        i += 1
        name = f"{base}-whatif-{i}"
        if name in existing:
            continue
        raw = copy.deepcopy(template)
        meta = raw.setdefault("metadata", {})
        meta.update(name=name, uid=str(uuid.uuid4()))
        meta.pop("resourceVersion", None)
        meta.pop("creationTimestamp", None)
        labels = dict(meta.get("labels") or {})
        if HOSTNAME_LABEL in labels:
            labels[HOSTNAME_LABEL] = name
        meta["labels"] = labels
        raw.setdefault("spec", {}).pop("unschedulable", None)
        out.append(raw)
    return out


def _add_copies(planner: Planner, scenario, template: dict, count: int) -> list:
    """``count`` copies of ``template`` added to the planner's cluster, each with copies of the template's own
    ResourceSlices (its DRA devices, published for the new node); their manifests."""
    template_name = (template.get("metadata") or {}).get("name") or ""
    slices = list(scenario.objects.get("resourceslices") or ())
    raws = node_copies(template, count, {n.name for n in scenario.nodes})
    for raw in raws:
        planner.cluster.add_node(raw)
        for copied in copies_for_node(slices, template_name, raw["metadata"]["name"]):
            planner.cluster.add_object("ResourceSlice", copied)
    return raws


def _run_with_nodes(scenario, template: dict, count: int, config_doc, registry, planner_options: dict,
                    on_stage=None) -> Planner:
    planner = Planner(scenario, config_doc, registry, on_stage=on_stage, **planner_options)
    _add_copies(planner, scenario, template, count)
    planner.settle()
    return planner


def add_nodes(scenario, template: dict, count: int, config_doc=None, targets=None, max_search: int = 1000,
              registry=None, progress=None, **planner) -> dict:
    """Add ``count`` copies of ``template``; which pending pods fit now, and where. ``targets`` (pod keys) is the
    set whose smallest sufficient count is searched, up to ``max_search``; by default every pending pod that a
    profile serves and that an empty copy of the node would take (``left_out``: the others, each with the Filter
    plugins that reject it there: no number of such nodes fits them). ``at_smallest``: where the targets go with
    the smallest count of nodes, when it is not ``count``."""
    if count < 0:
        raise WhatIfError("count: must not be negative")
    try:
        Node(node_copies(template, 1, set())[0])
    except ParseError as err:
        raise WhatIfError(f"node: {err}") from None
    pending_keys = [p.key for p in scenario.pending_pods]
    wanted = list(targets) if targets is not None else None
    unknown = sorted(set(wanted or ()) - set(pending_keys))
    if unknown:
        raise WhatIfError(f"not pending in this cluster: {', '.join(unknown[:5])}")
    fits = {}    # count -> every target bound (each probe a full run; only the answer is kept)
    placements = {}   # count -> where the targets went, for the counts that fit them all
    left_out = []
    if wanted is None:
        wanted, left_out = _within_reach(scenario, template, config_doc, registry, planner)

    def run(n: int) -> Planner:
        nonlocal wanted
        options = dict(planner, trace_all_filters=planner.get("trace_all_filters", False) and n == count)
        stage = ((lambda text: progress(len(fits), None, f"now +{n} nodes: {text}"))
                 if progress else None)
        probe = _run_with_nodes(scenario, template, n, config_doc, registry, options, stage)
        fits[n] = all(probe.node_of(k) for k in wanted)
        if fits[n]:
            placements[n] = [{"pod": k, "node": probe.node_of(k)} for k in wanted]
        if progress:
            progress(len(fits), None, "")
        return probe

    def all_fit(n: int) -> bool:
        if n not in fits:
            run(n)
        return fits[n]

    base = run(0)
    after = run(count) if count else base
    now_fit = [{"pod": k, "node": after.node_of(k)} for k in pending_keys if after.node_of(k) and not base.node_of(k)]
    for entry in now_fit[:TRACED_PLACEMENTS]:
        entry["trace"] = after.traces.get(entry["pod"])
    still = after.pending(MAX_DETAILED)
    smallest = None
    if wanted:
        lo, hi = 0, 1
        if all_fit(0):
            smallest = 0
        else:
            while hi <= max_search and not all_fit(hi):
                lo, hi = hi, hi * 2
            if hi <= max_search or all_fit(min(hi, max_search)):
                hi = min(hi, max_search)
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if all_fit(mid):
                        hi = mid
                    else:
                        lo = mid
                smallest = hi
    existing = {m.name for m in scenario.nodes}
    added = [n.name for n in after.cluster.list_nodes() if n.name not in existing]
    at_smallest = None
    if smallest not in (None, 0, count):
        at_smallest = {"count": smallest, "placed": placements[smallest]}
    return {"count": count, "added": added, "now_fit": now_fit, "still_pending": still,
            "bound_before": sum(1 for k in pending_keys if base.node_of(k)), "targets": len(wanted),
            "left_out": left_out, "smallest_count": smallest, "at_smallest": at_smallest,
            "max_search": max_search, "probes": sorted(fits)}


def _within_reach(scenario, template: dict, config_doc, registry, planner: dict) -> tuple[list, list]:
    """The default targets of ``add_nodes``: (keys of the pending pods a profile serves that pass every PreFilter
    and Filter plugin on an empty copy of ``template`` beside the bound pods, [{"pod", "why"} of the others that
    a profile serves])."""
    options = {k: planner[k] for k in ("kube_version", "feature_gates") if k in planner}
    empty = Planner(scenario, config_doc, registry, include_pending=False, **options)
    [raw] = _add_copies(empty, scenario, template, 1)
    sched = empty.scheduler
    sched.cache.update_snapshot(sched.snapshot)
    within, left_out = [], []
    for pod in scenario.pending_pods:
        fwk = sched.profiles.get(pod.scheduler_name)
        if fwk is None:   # no scheduler tries it
            continue
        rejections = node_rejections(fwk, sched.snapshot, pod, raw["metadata"]["name"])
        if rejections:
            left_out.append({"pod": pod.key, "why": "; ".join(f"{pl}: {why}" for pl, why in rejections.items())})
        else:
            within.append(pod.key)
    return within, left_out


def summary(kind: str, result: dict) -> list:
    """Lines of a result for a terminal; the first figure of the first line is the answer."""
    if kind == "capacity":
        head = f"{result['fit']} copies fit"
        if result["limited"]:
            return [head + f" (stopped at the limit of {result['max_copies']})"]
        lines = [head + "; the next one does not:", f"  {result['stop']['pod']}: {result['stop']['message']}"]
        if result["stop"].get("would_preempt"):
            victims = ", ".join(v["pod"] for v in result["stop"]["would_preempt"])
            lines.append(f"  it would fit by preempting {victims} (preemption is off)")
        lines += [f"  {node}: {n}" for node, n in list(result["per_node"].items())[:20]]
        return lines
    if kind == "drain":
        displaced = sum(1 for p in result["pending"] if p["displaced"])
        lines = [f"{displaced} evicted pods left Pending after draining {', '.join(result['nodes'])}"
                 f" ({len(result['evicted'])} evicted, {len(result['lost'])} lost, {len(result['blocked'])} blocked;"
                 f" {len(result['pending']) - displaced} other pods were pending already)"]
        for e in result["evicted"]:
            where = e.get("node") or ("lost (no controller)" if not e["replacement"] else f"Pending: {e.get('why')}")
            lines.append(f"  {e['pod']} from {e['from']} -> {where}")
        lines += [f"  blocked: {b['pod']} by {', '.join(b['budgets'])}: {b['message']}" for b in result["blocked"]]
        return lines
    lines = [f"{len(result['now_fit'])} pending pods now fit with {result['count']} more node"
             f"{'' if result['count'] == 1 else 's'}"
             f" ({len(result['still_pending'])} still pending; smallest count for all {result['targets']}: "
             f"{'none up to ' + str(result['max_search']) if result['smallest_count'] is None else result['smallest_count']})"]
    lines += [f"  {p['pod']} -> {p['node']}" for p in result["now_fit"]]
    lines += [f"  still pending: {p['pod']}: {p['message']}" for p in result["still_pending"]]
    if result.get("at_smallest"):
        lines.append(f"with {result['at_smallest']['count']} more nodes:")
        lines += [f"  {p['pod']} -> {p['node']}" for p in result["at_smallest"]["placed"]]
    lines += [f"  left out (no such node fits it): {p['pod']}: {p['why']}" for p in result.get("left_out", ())]
    return lines
