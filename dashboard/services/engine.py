"""The scheduler of one simulated cluster: scheduler_core's Scheduler over a SimulatedCluster loaded
from the database, with every decision handed to the recorder.

The cluster's writes (bindings, evictions, events) are journaled during a call and passed to the
recorder right after the cycles that caused them, so each cycle is committed together with its
binding. The store (``objectstore``) stays the source of truth: the engine lists it, then follows its change log
(``follow``) as kube-scheduler's informers follow kube-apiserver, so whatever any writer stores (the Kubernetes
API, the REST API, the pages) reaches the scheduler; a loop that restarts rebuilds this from it.

Manual bindings (``bind``) are made here too, by the loop, so they never race its own: they are accepted as
kube-apiserver accepts a Binding (the pod exists and is not bound, the node exists; no Filter plugin runs).
Kube's kubelet would then reject a pod that does not fit (OutOfcpu, ...); a simulated cluster has no kubelet,
so the pod stays bound and counts on the node, and the ManualBinding event is a Warning naming the Filter
plugins that reject the node (``scheduler_core.explain.node_rejections``).

Shadow mode (``Cluster.mode``): the loop runs no cycles of its own (read-only); a ShadowScheduler compares
every binding of a default-scheduler pod made by someone else (manual bindings) with the active profile's
choice, and the recorder stores its cycle and the ShadowDecision together.
"""
from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import NamedTuple

import orjson

from scheduler_core import gcpolicy
from scheduler_core.cluster.simulated import OBJECT_KINDS, SimulatedCluster
from scheduler_core.config import config_for
from scheduler_core.explain import explain, explain_preemption, node_rejections, with_diagnoses
from scheduler_core.objects import Node as CoreNode
from scheduler_core.objects import ParseError
from scheduler_core.objects import Pod as CorePod
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.queue import ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_PODS
from scheduler_core.scheduler import Scheduler
from scheduler_core.shadow import ShadowScheduler
from scheduler_core.trace import CallbackSink

from ..models import Cluster
from ..models import Node as NodeRow
from ..models import Pod as PodRow
from ..profiles.services import engine_profile
from . import admitted, extenders, objectstore, replicasets

QUEUE_NAMES = {ACTIVE_Q: PodRow.ACTIVE, BACKOFF_Q: PodRow.BACKOFF, UNSCHEDULABLE_PODS: PodRow.UNSCHEDULABLE}
FAILED_CODES = ("Unschedulable", "UnschedulableAndUnresolvable")
MAX_SUGGESTIONS = 8
MAX_EXPLAINED_TEMPLATES = 256
REFRESH_FACTOR = 20   # a shared explanation of another cluster state is recomputed after 20 times its cost
MANUAL_BINDING = "ManualBinding"
log = logging.getLogger("dashboard.engine")


def _template_key(pod) -> bytes:
    """What explain's answer depends on in a pod: its namespace, labels and spec (not its name or uid)."""
    spec = {k: v for k, v in (pod.raw.get("spec") or {}).items() if k != "nodeName"}
    return orjson.dumps([pod.namespace, pod.labels, spec], option=orjson.OPT_SORT_KEYS)


class _Explained(NamedTuple):
    """What explain answered for a pod template and FitError: on which cluster ``state``, its Suggestions and
    their dicts by id, when (monotonic) and at what cost in seconds, and the attempt it was computed for."""
    state: tuple
    shared: list
    as_dicts: dict
    computed_at: float
    cost: float
    basis: dict


class BindRefused(Exception):
    """A manual binding the API server would refuse: ``status`` (404, 409, 400), ``field`` and the message."""

    def __init__(self, status: int, message: str, field: str = ""):
        super().__init__(message)
        self.status, self.field, self.message = status, field, message


def _int_or_none(value):
    """A score (a NumPy integer from the batch paths) as a plain int for the database."""
    return None if value is None else int(value)


class JournaledBindings:
    """Mixin for a ClusterSource: its successful bindings are also journaled for the recorder (``journal``)."""

    def __init__(self, *args, journal: list, **kw):
        self.journal = journal   # first: a SimulatedCluster's resourceclaim controller writes while it starts
        super().__init__(*args, **kw)

    def bind(self, pod, node_name: str) -> None:
        super().bind(pod, node_name)
        self.journal.append(("bind", pod, node_name))


class RecordedCluster(JournaledBindings, SimulatedCluster):
    """A SimulatedCluster whose writes are also journaled for the recorder, which stores them: bindings,
    evictions, events, the status patches of pending pods (PodScheduled, nominatedNodeName,
    extendedResourceClaimStatus) and the objects VolumeBinding, the PV controller and DynamicResources create,
    change or delete. ``Engine.follow`` applies the store's changes with the base class's methods, which journal
    nothing."""

    def _replace_pod(self, old, new) -> None:
        super()._replace_pod(old, new)
        if not new.node_name and old.raw.get("status") != new.raw.get("status"):
            self.journal.append(("status", new, ""))

    def add_object(self, kind: str, raw: dict) -> dict:
        stored = super().add_object(kind, raw)
        self.journal.append(("object", stored, kind))
        return stored

    def update_object(self, kind: str, raw: dict) -> dict:
        stored = super().update_object(kind, raw)
        self.journal.append(("object", stored, kind))
        return stored

    def delete_object(self, kind: str, raw: dict) -> None:
        super().delete_object(kind, raw)
        self.journal.append(("object-deleted", raw, kind))

    def evict(self, pod, preemptor_uid: str, node_name: str, scheduler_name: str = "default-scheduler"):
        err = super().evict(pod, preemptor_uid, node_name, scheduler_name)
        if err is None:
            self.evictions.clear()
            self.journal.append(("delete", pod, ""))
        return err

    def record_event(self, obj, event_type: str, reason: str, action: str, message: str, related=None) -> None:
        self.journal.append(("event", obj, (event_type, reason, message)))


class RecordingEngine:
    """What the engines of simulated and real clusters share: a Scheduler's finished attempts, shadow comparisons
    and the cluster writes they caused (``journal``: ("bind", pod, node), ("delete", pod, ""), ("event", obj,
    (type, reason, message))) handed to the recorder in order, and where pending pods wait. A subclass calls
    ``_start_recording`` first and sets ``cluster`` (with ``list_pods``), ``scheduler`` and ``base_attempts``."""

    def _start_recording(self, recorder) -> None:
        self.recorder = recorder
        self.journal = []
        self._traces = []
        self._compared = []    # (ShadowRecord, CycleTrace) of shadow comparisons not yet recorded
        self._observed = []    # (Observation, CycleTrace) of observed failures not yet recorded
        self._recorded_queue = {}
        self._recorded_gates = {}   # uid -> the (plugin, message) recorded as a gated pod's reason
        self._counts = {}
        self._explained = {}   # (FitError message, pod template) -> _Explained, least recently computed first

    def _flush(self) -> None:
        """Hand the finished attempts and the cluster writes they caused to the recorder, in order."""
        rec = self.recorder
        seqs, attempts = {}, {}
        for tr in self._traces:
            over = self._overrides(tr, tr.attempt + self.base_attempts.get(tr.pod.uid, 0))
            seqs[tr.pod.uid] = rec.record_trace(tr, **over)
            attempts[tr.pod.uid] = over["attempt"]
        for shadow_rec, tr in self._compared:
            self._record_shadow(shadow_rec, tr)
        self._compared.clear()
        for obs, tr in self._observed:
            self._record_observation(obs, tr)
        self._observed.clear()
        for kind, obj, arg in self._journaled():
            uid = getattr(obj, "uid", "")
            if kind == "bind":
                if uid in seqs:
                    rec.record_binding(uid, arg, seqs[uid], attempts[uid])
                else:   # bound after a Permit wait, or manually: attempts and latest cycle stay
                    rec.record_binding(uid, arg, attempts=None)
                self._recorded_queue.pop(uid, None)
                self._recorded_gates.pop(uid, None)
            elif kind == "delete":
                rec.record_deletion(uid)
                self._recorded_queue.pop(uid, None)
                self._recorded_gates.pop(uid, None)
            elif kind == "status":
                rec.record_pod_status(uid, obj.raw.get("status") or {})
            elif kind == "object":
                rec.record_object(arg, obj)
            elif kind == "object-deleted":
                rec.record_object_deletion(arg, obj)
            else:
                event_type, reason, message = arg
                pod = obj if isinstance(obj, CorePod) else None
                node = (obj.node_name or "") if pod is not None else ""
                rec.record_event(reason, message, pod=pod, node=node, type_=event_type, cycle_seq=seqs.get(uid))
        for tr in self._traces:
            if tr.status_code:
                self._record_failure(tr, seqs.get(tr.pod.uid), attempts[tr.pod.uid])
        self._traces.clear()

    def _journaled(self) -> list:
        """The journal's entries, taken out of it; a binding whose cycle is not finished yet (its request made
        on a binding worker, ``Scheduler.binding``) stays for the flush that records that cycle."""
        entries = self.journal[:]
        del self.journal[:len(entries)]   # what a binding worker appends meanwhile stays
        binding = self.scheduler.binding
        if binding:
            held = [e for e in entries if e[0] == "bind" and e[1].uid in binding]
            if held:
                entries = [e for e in entries if not (e[0] == "bind" and e[1].uid in binding)]
                self.journal[:0] = held
        return entries

    def _overrides(self, tr, attempt: int, suggest: bool = True, observed: dict | None = None) -> dict:
        """What the recorder stores for a CycleTrace beyond the trace itself (Recorder.record_trace): the
        pod's attempt count, the result and error of a failed attempt, and what would fix it when ``suggest``
        (``observed``: the profile, snapshot and change count of an observed failure's cycle, see _suggest)."""
        over = {"attempt": attempt}
        if tr.status_code:
            over["result"] = "unschedulable" if tr.status_code in FAILED_CODES else "error"
            if tr.bind_error and not tr.error:
                over["error"] = tr.bind_error
            if suggest and over["result"] == "unschedulable" and tr.unschedulable:
                over["suggestions"], basis = self._suggest(tr, attempt, **(observed or {}))
                if basis is not None:
                    over["suggestions_basis"] = basis
        return over

    def _record_shadow(self, shadow_rec, tr) -> None:
        """The shadow's cycle (as an attempt of its pod) and the comparison, committed together."""
        pod = tr.pod
        # no suggestions: they would be computed on the scheduler's snapshot, not the one the shadow saw
        seq = self.recorder.record_trace(tr, **self._overrides(tr, self.base_attempts.get(pod.uid, 0) + 1,
                                                               suggest=False))
        self.recorder.record_shadow({
            "pod_uid": pod.uid, "pod_namespace": pod.namespace, "pod_name": pod.name,
            "scheduler": shadow_rec.scheduler, "profile": tr.profile, "actual_node": shadow_rec.actual,
            "shadow_node": shadow_rec.shadow or "", "agree": shadow_rec.agree, "within_ties": shadow_rec.within_ties,
            "actual_feasible": shadow_rec.actual_feasible, "actual_score": _int_or_none(shadow_rec.actual_score),
            "shadow_score": _int_or_none(shadow_rec.shadow_score), "actual_reasons": shadow_rec.actual_reasons,
            "message": shadow_rec.message, "num_feasible": shadow_rec.feasible, "cycle_seq": seq})

    def _record_observation(self, obs, tr) -> None:
        """An observed failure (observe mode): the profile's cycle as the pod's next attempt, with what would fix
        it on the state it ran on, and the other scheduler's message beside the profile's."""
        attempt = self.base_attempts.get(tr.pod.uid, 0) + 1
        self.base_attempts[tr.pod.uid] = attempt
        shadow = self.shadow
        seq = self.recorder.record_trace(tr, **self._overrides(tr, attempt, observed={
            "fwk": shadow.framework, "snapshot": shadow.snapshot, "changes": shadow.changes}))
        self.recorder.record_pod_state(tr.pod.uid, queue=PodRow.UNSCHEDULABLE, attempts=attempt,
                                       reason=obs.message, kube_message=obs.kube_message,
                                       plugins=PodRow.join_plugins(tr.unschedulable_plugins), last_cycle=seq)

    def _suggest(self, tr, attempt: int, fwk=None, snapshot=None, changes=None) -> tuple[list, dict | None]:
        """What would fix it (scheduler_core.explain), as dicts, and None or, when the part that depends on the
        pod and the cluster was computed on another cluster state than this attempt's, the attempt it was
        computed for (``basis``: pod, attempt, started). The diagnosis of what this attempt's preemption did is
        made for every attempt.

        That part is shared by the attempts of pods of one template (same namespace, labels and spec, as a
        ReplicaSet's replicas) failing with the same FitError: explain costs about 0.3 s at 5,000 nodes, so a
        1,000-replica Deployment that does not fit would otherwise hold the loop for minutes. It is recomputed
        when the cluster's state (the snapshot's generation, its node count, the object events) changed since,
        once ``REFRESH_FACTOR`` times its cost has passed since it was computed (so the loop spends at most a
        few percent refreshing it); until then an attempt on a changed cluster gets it with its ``basis``.
        ``fwk``, ``snapshot``, ``changes``: the profile, state and count of object changes of another cycle than
        the scheduler's (an observed failure's)."""
        sched = self.scheduler
        if fwk is None:
            fwk, snapshot, changes = sched.profiles.get(tr.pod.scheduler_name), sched.snapshot, sched.object_changes
        if fwk is None:
            return [], None
        state = (snapshot.generation, changes, len(snapshot.node_infos))
        key = (tr.message, _template_key(tr.pod))
        entry = self._explained.get(key)
        now = time.monotonic()
        if entry is None or (entry.state != state and now - entry.computed_at >= REFRESH_FACTOR * entry.cost):
            shared = explain(fwk, snapshot, tr.pod, tr, preemption=False)[:MAX_SUGGESTIONS]
            done = time.monotonic()
            started = datetime.fromtimestamp(tr.started_at or 0, tz=timezone.utc).isoformat()
            entry = _Explained(state, shared, {id(sg): sg.to_dict() for sg in shared}, done, done - now,
                               {"pod": tr.pod.key, "attempt": attempt, "started": started})
            self._explained.pop(key, None)
            if len(self._explained) >= MAX_EXPLAINED_TEMPLATES:
                del self._explained[next(iter(self._explained))]
            self._explained[key] = entry
        diagnoses = explain_preemption(fwk, snapshot, tr.pod, tr, recheck=False)   # the attempt's own snapshot
        answer = with_diagnoses(entry.shared, diagnoses)[:MAX_SUGGESTIONS] if diagnoses else entry.shared
        return ([entry.as_dicts.get(id(sg)) or sg.to_dict() for sg in answer],
                None if entry.state == state else entry.basis)

    def _record_failure(self, tr, seq, attempt) -> None:
        pinfo = self.scheduler.queue.pod_info(tr.pod.key)
        queue = self._queue_of(pinfo) if pinfo is not None else PodRow.UNSCHEDULABLE
        self._recorded_queue[tr.pod.uid] = queue
        self._recorded_gates.pop(tr.pod.uid, None)
        self.recorder.record_pod_state(tr.pod.uid, queue=queue, attempts=attempt,
                                       reason=tr.message or tr.error or tr.bind_error or "",
                                       plugins=PodRow.join_plugins(tr.unschedulable_plugins), last_cycle=seq)

    @staticmethod
    def _queue_of(pinfo) -> str:
        if pinfo.gated:
            return PodRow.GATED
        return QUEUE_NAMES.get(pinfo.queue, PodRow.ACTIVE)

    # -- queue state --------------------------------------------------------------------------------
    def sync_queue_states(self) -> None:
        """Record where every pending pod waits now (cluster events move pods between queues)."""
        q = self.scheduler.queue
        counts = {PodRow.ACTIVE: 0, PodRow.BACKOFF: 0, PodRow.UNSCHEDULABLE: 0, PodRow.GATED: 0, "unserved": 0}
        bound = 0
        for pod in self.cluster.list_pods():   # a copy: a KubeCluster's watches change its store
            if pod.node_name:
                bound += 1
                continue
            pinfo = q.pod_info(pod.key)
            if pinfo is None:
                if pod.scheduler_name not in self.scheduler.profiles:   # never queued: no profile serves it
                    counts["unserved"] += 1
                continue
            queue = self._queue_of(pinfo)
            counts[queue] += 1
            if self._recorded_queue.get(pod.uid, PodRow.ACTIVE) != queue:
                self._recorded_queue[pod.uid] = queue
                self.recorder.record_pod_state(pod.uid, queue=queue)
            gate = pinfo.gated_by if queue == PodRow.GATED else None
            if gate is not None and self._recorded_gates.get(pod.uid) != gate:
                # the PreEnqueue plugin's status stands for the attempt a gated pod does not get
                self._recorded_gates[pod.uid] = gate
                self.recorder.record_pod_state(pod.uid, reason=gate[1], plugins=gate[0])
        counts["bound"] = bound
        self._counts = counts

    def queue_counts(self) -> dict:
        """Live activeQ/backoffQ sizes; unschedulable/gated/bound as of the last sync."""
        q = self.scheduler.queue
        counts = dict(self._counts)
        counts[PodRow.ACTIVE] = q.num_active()
        counts[PodRow.BACKOFF] = q.num_backoff()
        return counts

    def num_pods(self) -> int:
        return len(self.cluster.pods)

    def num_pending(self) -> int:
        q = self.scheduler.queue
        return q.num_active() + q.num_backoff() + q.num_unschedulable()


def _scheduling_view(raw: dict):
    """An object without what its own changes stamp on it (resourceVersion, status): what tells a change someone
    else made from the echo of the engine's own."""
    meta = {k: v for k, v in (raw.get("metadata") or {}).items() if k != "resourceVersion"}
    spec = raw.get("spec")
    if isinstance(spec, dict) and "nodeName" in spec:
        spec = {k: v for k, v in spec.items() if k != "nodeName"}
    return meta, spec, {k: v for k, v in raw.items() if k not in ("metadata", "spec", "status")}


def _parsed(parse, raw: dict, cluster_id: int):
    """A followed object parsed, or None (logged): the store's writers validate, so only an object written
    before the validator's current rules can fail here."""
    try:
        return parse(raw)
    except ParseError as err:
        log.warning("cluster %s: %s %s left out, it does not parse: %s", cluster_id, parse.__name__,
                    (raw.get("metadata") or {}).get("name", ""), err)
        return None


def _readable(parse, row, cluster):
    """A stored node or pod parsed, or None (logged) for a row stored before the object validator that the
    parsers now refuse (e.g. a quantity the scheduler cannot count): the loop runs without it."""
    try:
        return parse(row.raw)
    except ParseError as err:
        log.warning("cluster %s: %s %s left out, it no longer parses: %s", cluster.name, parse.__name__,
                    row.name, err)
        return None


class Engine(RecordingEngine):
    """Scheduler + simulated cluster of one Cluster row; ``schedule_one`` runs one attempt. ``interrupted``: the
    loop's check that makes an extender call in flight give up (the attempt fails with the extender's error)."""

    def __init__(self, cluster: Cluster, recorder, interrupted=None):
        self._start_recording(recorder)
        self.cluster_id = cluster.pk
        self.store_rv = objectstore.current_rv(cluster.pk)   # first: changes after it are followed (idempotently)
        nodes = [n for n in (_readable(CoreNode, row, cluster) for row in NodeRow.objects.filter(cluster=cluster)
                             .order_by("id")) if n is not None]
        # the active profile version and the cluster's Kubernetes version, noted from the next cycle on
        doc, features = engine_profile(cluster, recorder)
        self.read_pod = features.pod_as_read   # pods as this version's kube-scheduler reads them
        self.features = features
        self.kubelet = cluster.kubelet
        pods, self.base_attempts = [], {}
        for row in PodRow.objects.filter(cluster=cluster).order_by("created", "id"):
            pod = _readable(CorePod, row, cluster)
            if pod is None:
                continue
            pod = self.read_pod(pod)
            if row.node_name and pod.node_name != row.node_name:
                pod = pod.bound_to(row.node_name)
            pods.append(pod)
            if row.attempts:
                self.base_attempts[pod.uid] = row.attempts
        self.cluster = RecordedCluster(nodes, pods, objectstore.scenario_objects(cluster.pk), journal=self.journal,
                                       binding_clears_nominated_node_name=admitted.
                                       binding_clears_nominated_node_name(features))
        registry = in_tree_registry()
        config = config_for(doc, registry, kube_version=features)
        self.scheduler = Scheduler(self.cluster, config=config, tie_break=cluster.tie_break, seed=cluster.seed,
                                   trace_sink=CallbackSink(self._traces.append), trace_all_filters=True,
                                   extender_policy=extenders.policy(interrupted))
        self.shadow = None
        if cluster.mode == Cluster.SHADOW:
            self.shadow = ShadowScheduler(self.cluster, config, registry, tie_break=cluster.tie_break,
                                          seed=cluster.seed, trace_all_filters=True,
                                          on_record=lambda rec, tr: self._compared.append((rec, tr)))
        self.sync_queue_states()
        gcpolicy.configure()
        gcpolicy.settle()  # the loaded cluster is long-lived: keep full collections off it

    # -- following the store ----------------------------------------------------------------------
    def follow(self) -> int:
        """Apply the store's changes since the last call (objectstore.Compacted when the log no longer reaches
        back: the loop rebuilds); returns how many were read. The changes its recorder stored (fenced by the loop's
        token) are not read back; others the engine made itself (the workload's pods) change nothing."""
        changes = objectstore.changes_since(self.cluster_id, self.store_rv, skip_writer=self.recorder.fence or "")
        pv_controller, self.cluster.pv_controller = self.cluster.pv_controller, False   # the writer's ran
        try:
            for rv, kind, type_, key, raw in changes:
                if kind is not None:
                    self._apply_change(kind, type_, key, raw)
                self.store_rv = rv
        finally:
            self.cluster.pv_controller = pv_controller
        if changes:
            self._flush()
        return len(changes)

    def _apply_change(self, kind: str, type_: str, key: str, raw: dict) -> None:
        cluster = self.cluster
        if kind == "pods":
            cur = cluster.pods.get(key)
            if type_ == objectstore.DELETED:
                if cur is not None and cur.uid == (raw.get("metadata") or {}).get("uid", cur.uid):
                    self.delete_pod(key)
                return
            if cur is not None and cur.uid == (raw.get("metadata") or {}).get("uid"):
                node_name = (raw.get("spec") or {}).get("nodeName") or ""
                if node_name and not cur.node_name:
                    SimulatedCluster.bind(cluster, cur, node_name)   # someone else's binding: not journaled
                    return
                if _scheduling_view(cur.raw) == _scheduling_view(raw):
                    return   # a status change, or the echo of the engine's own
            pod = _parsed(CorePod, raw, self.cluster_id)
            if pod is None:
                return
            pod = self.read_pod(pod)
            if cur is None or cur.uid != pod.uid:
                if cur is not None:
                    cluster.delete_pod(key)
                cluster.add_pod(pod)
            else:
                cluster.pods[key] = cluster._stamped_pod(pod)
                SimulatedCluster._replace_pod(cluster, cur, cluster.pods[key])
        elif kind == "nodes":
            if type_ == objectstore.DELETED:
                if key in cluster.nodes:
                    cluster.delete_node(key)
                return
            node = _parsed(CoreNode, raw, self.cluster_id)
            cur = cluster.nodes.get(key)
            if node is None or (cur is not None and _scheduling_view(cur.raw) == _scheduling_view(node.raw)):
                return
            cluster.update_node(node) if cur is not None else cluster.add_node(node)
        elif kind in OBJECT_KINDS:
            held = cluster.get_object(kind, key)
            if type_ == objectstore.DELETED:
                if held is not None:
                    SimulatedCluster.delete_object(cluster, kind, raw)
            elif held is None or _scheduling_view(held) != _scheduling_view(raw):
                SimulatedCluster.add_object(cluster, kind, raw)
        elif kind == "Namespace":   # namespace selectors of affinity terms read their labels
            name = (raw.get("metadata") or {}).get("name", "")
            if type_ == objectstore.DELETED:
                cluster.objects.namespace_labels.pop(name, None)
            else:
                cluster.objects.namespace_labels[name] = dict((raw.get("metadata") or {}).get("labels") or {})

    # -- changes the loop makes itself (stored by its caller or the recorder) ------------------------
    def add_pod(self, raw: dict) -> None:
        pod = self.read_pod(CorePod(raw))
        if pod.key not in self.cluster.pods:
            self.cluster.add_pod(pod)
        self._flush()

    def delete_pod(self, key: str):
        """Delete a pod by namespace/name; returns its uid, or None if it was not there."""
        pod = self.cluster.pods.get(key)
        if pod is None:
            return None
        self.cluster.delete_pod(key)
        self._flush()
        return pod.uid

    def has_pod(self, key: str) -> bool:
        return key in self.cluster.pods

    def sync_replica_sets(self, scaled=frozenset()) -> int:
        """The ReplicaSet controller's pass (``replicasets``): each ReplicaSet whose status its pods change is
        written (through the recorder); those of ``scaled`` (namespace/name keys: the workload generator's) are
        scaled to their pods. Returns how many changed."""
        changed = replicasets.synced(self.cluster.objects.replicasets, self.cluster.pods.values(), self.kubelet,
                                     self.features.gates.get("DeploymentReplicaSetTerminatingReplicas", False),
                                     time.time(), scaled)
        for rs in changed:
            self.cluster.update_object("ReplicaSet", rs)
        if changed:
            self._flush()
        return len(changed)

    def bind(self, key: str, node_name: str, by: str, uid: str = "", dry_run: bool = False) -> dict:
        """A manual binding of the pending pod ``key`` (namespace/name; ``uid`` if given must match) to
        ``node_name`` by user ``by``, as the API server accepts a Binding (see the module doc); raises
        BindRefused. Returns the node, ``rejections`` ({plugin: reason} of the Filter plugins that reject the
        node; empty if it fits) and the event's ``message``. ``dry_run``: every check, nothing bound."""
        pod = self.cluster.pods.get(key)
        if pod is None or (uid and pod.uid != uid):
            raise BindRefused(404, f'pods "{key.split("/", 1)[-1]}" not found')
        if pod.node_name:
            raise BindRefused(409, f'pod {pod.name} is already assigned to node "{pod.node_name}"')
        if node_name not in self.cluster.nodes:
            raise BindRefused(400, f'nodes "{node_name}" not found', field="target.name")
        if any(wp.pod.uid == pod.uid for wp in self.scheduler.waiting_pods()):
            raise BindRefused(409, f"pod {pod.name} is being bound by the scheduler (waiting on Permit)")
        fwk = self.scheduler.profiles.get(pod.scheduler_name) or next(iter(self.scheduler.profiles.values()))
        self.scheduler.cache.update_snapshot(self.scheduler.snapshot)
        rejections = node_rejections(fwk, self.scheduler.snapshot, pod, node_name)
        verb = "Would assign" if dry_run else "Manually assigned"
        message = f"{verb} {key} to {node_name} by {by}"
        if rejections:
            message += ("; the node fails Filter plugin " +
                        "; ".join(f"{pl} ({why})" for pl, why in rejections.items()) +
                        ": kube's kubelet would reject the pod, the simulation keeps it bound")
        if not dry_run:
            self.cluster.bind(pod, node_name)
            self.cluster.record_event(self.cluster.pods[key], "Warning" if rejections else "Normal",
                                      MANUAL_BINDING, "Binding", message)
            self._flush()
        return {"node": node_name, "rejections": rejections, "message": message}

    # -- the loop ---------------------------------------------------------------------------------
    def schedule_one(self):
        """Timers and queue flushes that are due, then one attempt; its CycleTrace, or None when idle
        (always, in shadow mode: the loop binds nothing itself)."""
        if self.shadow is not None:
            return None
        sched = self.scheduler
        sched.process_timers()
        sched.queue.tick()
        tr = sched.schedule_one()
        self._flush()
        return tr
