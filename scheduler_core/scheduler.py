"""The scheduling loop (scheduler.go, schedule_one.go, eventhandlers.go): profiles, cluster event handlers,
schedule_one (pop, scheduling cycle, assume, Reserve, Permit), the binding cycle and the failure handler.

Everything runs on the caller's thread: a binding cycle runs right after its scheduling cycle, except for
pods a Permit plugin holds; those continue when the plugins allow them, or fail when rejected or when
their timeout passes on the scheduler's clock (``process_timers``). Cluster writes made by the scheduler
(bind, evict, status patches) come back as events before the call returns, as from an informer that
never lags. Each attempt's CycleTrace goes to the trace sink once, when its outcome is known (bound,
or failed and requeued).

With ``binding_workers`` (a cluster behind an API server), binding cycles are asynchronous as kube's are: the
Bind call (binder extenders, the Bind plugins: the API request) runs on a bounded pool of threads while the
next scheduling cycles go on; PreBind before it and the rest of the binding cycle after it (FinishBinding,
the Scheduled event, PostBind, or the binding failure) run on the caller's thread, in ``process_bound``. Only
for a cluster source that queues its events for the caller's thread (KubeCluster's ``pump``): a simulated
cluster would call the handlers from the worker.
"""
from __future__ import annotations

import copy
import logging
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from .cache import Cache, CacheError
from .clock import Clock
from .config import build_frameworks, config_matching
from .extender import ExtenderError, build_extenders
from .extender_http import DEFAULT_POLICY, ExtenderPolicy
from .framework.cycle_state import CycleState
from .framework.handle import Handle
from .framework.interface import (FilterPlugin, PermitPlugin, Plugin, PreEnqueuePlugin, PreFilterPlugin,
                                  ReservePlugin)
from .framework.resource_filter import NominatedSums
from .framework.snapshot import Snapshot
from .framework.status import Code, Status
from .framework.waiting_pods import WaitingPod
from .objects import tolerates_taint
from .plugins.nodeaffinity import required_node_affinity_matches
from .plugins.noderesources.fit import Fit
from .plugins.nodeports import fits_ports
from .plugins.registry import build_registry
from .queue import (ADD, ASSIGNED_POD, ASSIGNED_POD_ADD_V136, ASSIGNED_POD_DELETE, ASSIGNED_POD_DELETE_V136,
                    CLEAR_NOMINATED_NODE, NODE_ADD, NODE_ALLOCATABLE_CHANGE, NODE_ANNOTATION_CHANGE,
                    NODE_CONDITION_CHANGE, NODE_LABEL_CHANGE, NODE_SPEC_UNSCHEDULABLE_CHANGE, NODE_TAINT_CHANGE,
                    STORAGE_CLASS_ADD, STORAGE_CLASS_UPDATE, UPDATE, UPDATE_NODE_ALLOCATABLE, UPDATE_NODE_ANNOTATION,
                    UPDATE_NODE_CONDITION, UPDATE_NODE_DECLARED_FEATURE, UPDATE_NODE_LABEL, UPDATE_NODE_TAINT,
                    UNSCHEDULABLE_POD, ClusterEvent, DELETE, NominatingInfo, PriorityQueue, QueueError, event_v136,
                    parse_registration, pod_scheduling_properties_change, resource_event, unroll_wildcard_resource)
from .schedule_one import SchedulerContext, fit_error_message, schedule_pod
from .schedule_one_podgroup import PodGroupCycle
from .trace import TraceSink

log = logging.getLogger(__name__)

EXTENDER_NAME = "Extender"
DEFAULT_PREEMPTION = "DefaultPreemption"
NOTE_LENGTH_LIMIT = 1024
ENQUEUE_EXTENSION_POINTS = (PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, ReservePlugin, PermitPlugin)
QUEUE_RESOURCES = {"PersistentVolume", "PersistentVolumeClaim", "CSINode", "CSIDriver", "CSIStorageCapacity",
                   "PodSchedulingContext", "ResourceClaim", "ResourceClass", "ResourceClaimParameters",
                   "ResourceClassParameters", "DeviceClass", "ResourceSlice", "PodGroup"}
# 1.36's generic handlers (StorageClass and VolumeAttachment among them, no WaitForFirstConsumer filter).
QUEUE_RESOURCES_V136 = QUEUE_RESOURCES | {"StorageClass", "VolumeAttachment"}
_ACTIONS = {"Add": ADD, "Update": UPDATE, "Delete": DELETE}


def truncate_message(message: str) -> str:
    """Event notes are limited to 1024 bytes: longer ones end in " ..."."""
    data = message.encode()
    if len(data) <= NOTE_LENGTH_LIMIT:
        return message
    return data[:NOTE_LENGTH_LIMIT - 4].decode(errors="ignore") + " ..."


def enqueue_registrations(fwk, has_extenders: bool = False, queueing_hints: bool = False) -> list:
    """[(ClusterEvent, plugin, QueueingHintFn or None)] for a profile (buildQueueingHintMap; without
    ``queueing_hints`` every hint is None: Queue).

    Only PreEnqueue/PreFilter/Filter/Reserve/Permit plugins count; one that does not override
    ``events_to_register`` is registered for everything; Node/Add without Node/UpdateNodeTaint also
    registers UpdateNodeTaint. With extenders, "Extender" is registered for everything.
    """
    regs = []
    seen = set()
    for plugins in fwk.plugins.values():
        for pl in plugins:
            if pl.name in seen or not isinstance(pl, ENQUEUE_EXTENSION_POINTS):
                continue
            seen.add(pl.name)
            if type(pl).events_to_register is Plugin.events_to_register:
                events = [(e, None) for e in unroll_wildcard_resource(queueing_hints)]
            else:
                events = [parse_registration(r) for r in pl.events_to_register()]
            node_add = any(e.resource == "Node" and e.action & ADD for e, _h in events)
            node_taint = any(e.resource == "Node" and e.action & UPDATE_NODE_TAINT for e, _h in events)
            regs.extend((e, pl.name, hint if queueing_hints else None) for e, hint in events)
            if node_add and not node_taint:
                regs.append((ClusterEvent("Node", UPDATE_NODE_TAINT), pl.name, None))
    if has_extenders:
        regs.extend((e, EXTENDER_NAME, None) for e in unroll_wildcard_resource(queueing_hints))
    return regs


def node_scheduling_properties_change(new, old, v136: bool = False, declared_features: bool = False) -> list:
    """The queue events a node update carries (only changes that can make pods schedulable); ``v136``: 1.36's
    events (conditions compared by type and status, UpdateNodeDeclaredFeature with NodeDeclaredFeatures)."""
    if v136:
        return _node_changes_v136(new, old, declared_features)
    events = []
    if new.unschedulable != old.unschedulable and not new.unschedulable:
        events.append(NODE_SPEC_UNSCHEDULABLE_CHANGE)
    new_status, old_status = new.raw.get("status") or {}, old.raw.get("status") or {}
    if (("allocatable" in new_status) != ("allocatable" in old_status)) or new.allocatable != old.allocatable:
        events.append(NODE_ALLOCATABLE_CHANGE)
    if new.labels != old.labels:
        events.append(NODE_LABEL_CHANGE)
    if (new.raw.get("spec") or {}).get("taints") != (old.raw.get("spec") or {}).get("taints"):
        events.append(NODE_TAINT_CHANGE)
    if new.conditions != old.conditions:
        events.append(NODE_CONDITION_CHANGE)
    if new.annotations != old.annotations:
        events.append(NODE_ANNOTATION_CHANGE)
    return events


def _node_changes_v136(new, old, declared_features: bool) -> list:
    actions = []
    if new.unschedulable != old.unschedulable and not new.unschedulable:
        actions.append(UPDATE_NODE_TAINT)
    new_status, old_status = new.raw.get("status") or {}, old.raw.get("status") or {}
    if new_status.get("allocatable") != old_status.get("allocatable"):
        actions.append(UPDATE_NODE_ALLOCATABLE)
    if new.labels != old.labels:
        actions.append(UPDATE_NODE_LABEL)
    if (new.raw.get("spec") or {}).get("taints") != (old.raw.get("spec") or {}).get("taints"):
        actions.append(UPDATE_NODE_TAINT)

    def condition_statuses(status):
        return {c.get("type"): c.get("status") for c in status.get("conditions") or () if isinstance(c, dict)}
    if condition_statuses(new_status) != condition_statuses(old_status):
        actions.append(UPDATE_NODE_CONDITION)
    if new.annotations != old.annotations:
        actions.append(UPDATE_NODE_ANNOTATION)
    if declared_features and (new_status.get("declaredFeatures") or []) != (old_status.get("declaredFeatures") or []):
        actions.append(UPDATE_NODE_DECLARED_FEATURE)
    return [event_v136("Node", a) for a in actions]


def _le_priority(priority: int):
    """getLEPriorityPreCheck: pods of at most this priority."""
    return lambda pod: pod.priority <= priority


def _assumed_copy(pod, node_name: str):
    """The pod with spec.nodeName set, as the cache's assume sees it (the API object is unchanged)."""
    new = copy.copy(pod)
    raw = dict(pod.raw)
    raw["spec"] = dict(raw.get("spec") or {}, nodeName=node_name)
    new.raw = raw
    new.node_name = node_name
    return new


class SchedulerClient:
    """A profile's ``handle.client``: the cluster, plus the scheduler's side of preemption.

    ``evict`` of a victim that a Permit plugin holds rejects it ("preempted") instead of deleting it,
    as prepareCandidate does (at 1.36 it preempts it: PreemptPod); everything else goes to the cluster source.
    """

    def __init__(self, cluster, handle):
        self._cluster = cluster
        self._handle = handle

    def __getattr__(self, name):
        return getattr(self._cluster, name)

    def evict(self, victim, preemptor_uid: str, node_name: str):
        """Preempt one victim; returns None or the error text."""
        fwk = self._handle.framework
        wp = self._handle.get_waiting_pod(victim.uid)
        message = f"Preempted by pod {preemptor_uid} on node {node_name}"
        executor_136 = self._handle.features.has("preemption-executor")
        if wp is not None:
            if executor_136:
                wp.preempt(DEFAULT_PREEMPTION, "preempted")
                message += " (in kube-scheduler memory)."
            else:
                wp.reject(DEFAULT_PREEMPTION, "preempted")
            self._cluster.record_event(victim, "Normal", "Preempted", "Preempting", message)
            return None
        if executor_136 and self._cluster.get_pod(victim.namespace, victim.name) is None:
            return None   # "Victim Pod is already deleted"
        return self._cluster.evict(victim, preemptor_uid, node_name,
                                   fwk.profile_name if fwk is not None else "default-scheduler")


class _Attempt:
    """One pod's attempt between its scheduling cycle and the end of its binding cycle."""

    __slots__ = ("fwk", "state", "pinfo", "assumed", "host", "trace")

    def __init__(self, fwk, state, pinfo, assumed, host, trace):
        self.fwk = fwk
        self.state = state
        self.pinfo = pinfo
        self.assumed = assumed
        self.host = host
        self.trace = trace


class Scheduler:
    """kube-scheduler over a ClusterSource.

    ``config`` is a SchedulerConfig (config.load_config); profiles are keyed by schedulerName and pods
    naming another scheduler are ignored. ``tie_break="name"`` picks the smallest node name among the
    best scores (deterministic); "random" is kube's reservoir sampling with ``seed``. Every attempt's
    CycleTrace goes to ``trace_sink``. ``trace_all_filters`` runs every Filter plugin on every node for
    the trace (slower; decisions are unchanged). ``assumed_pod_ttl`` expires assumed pods whose binding
    finished but never showed up (0 = never, kube's default). ``extender_policy`` limits the extenders' calls
    (extender_http.ExtenderPolicy; default: http/https, no link-local or metadata address). The Kubernetes
    version and feature gates are the config's (``config.features``); without a config, ``kube_version`` and
    ``feature_gates`` choose them (default_config), and with one they must agree with it when given.
    """

    def __init__(self, cluster, config=None, registry=None, clock: Clock | None = None, tie_break: str = "random",
                 seed=None, trace_sink: TraceSink | None = None, trace_all_filters: bool = False,
                 assumed_pod_ttl: float = 0.0, extenders=None, extender_policy: ExtenderPolicy | None = None, *,
                 kube_version=None, feature_gates=None, binding_workers: int = 0):
        self.cluster = cluster
        self.clock = clock or Clock()
        self.registry = registry or build_registry()
        self.config = config_matching(config, self.registry, kube_version, feature_gates)
        self.features = self.config.features
        self.extenders = (build_extenders(self.config.extenders, extender_policy or DEFAULT_POLICY)
                          if extenders is None else list(extenders))
        self.trace_sink = trace_sink or TraceSink()
        gates = self.features.gates
        self.generic_workload = bool(gates.get("GenericWorkload"))
        self.gang_scheduling = bool(gates.get("GangScheduling"))
        self.cache = Cache(self.clock, ttl=assumed_pod_ttl, pod_groups=self.generic_workload)
        self.snapshot = Snapshot((), cluster.objects)
        self.object_changes = 0   # object events told so far: with the snapshot's generation, the cluster's state
        self.ctx = SchedulerContext(tie_break=tie_break, seed=seed,
                                    percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                                    extenders=self.extenders, trace_all_filters=trace_all_filters)
        self.ctx.now = self.clock.now
        self.handles = {}
        handles = []

        def handle_factory():
            h = Handle(snapshot=self.snapshot, parallelism=self.config.parallelism)
            h.client = SchedulerClient(cluster, h)
            h.rng = self.ctx.rng
            h.tie_break = tie_break
            h.extenders = self.extenders
            h.run_async = self._run_after_attempt
            h.activate = lambda pods: self.queue.activate(pods)
            handles.append(h)
            return h
        self.profiles = build_frameworks(self.config, self.registry, handle_factory)
        for fwk in self.profiles.values():
            self.handles[fwk.profile_name] = fwk.handle
        first = next(iter(self.profiles.values()))
        gates = self.features.gates
        self._hints = bool(gates.get("SchedulerQueueingHints"))
        self.queue = PriorityQueue(
            first.queue_sort_less, clock=self.clock,
            initial_backoff=self.config.pod_initial_backoff_seconds,
            max_backoff=self.config.pod_max_backoff_seconds,
            pre_enqueue={name: fwk.run_pre_enqueue for name, fwk in self.profiles.items()},
            events={name: enqueue_registrations(fwk, bool(self.extenders), self._hints)
                    for name, fwk in self.profiles.items()},
            pod_lister=cluster.get_pod, namespace_labels=lambda: cluster.objects.namespace_labels,
            queueing_hints=self._hints, pop_from_backoff=bool(gates.get("SchedulerPopFromBackoffQ")),
            backoff_by_counts=self.features.has("backoff-by-rejection-counts"))
        sums = NominatedSums(self.queue.nominated_pods_for_node, self.queue.nominated_node_names,
                             self.queue.nominated_node_of)
        self.queue.nomination_listeners.append(sums.changed)
        self.ctx.nominated_pods_for_node = self.queue.nominated_pods_for_node
        self.ctx.nominated_node_names = self.queue.nominated_node_names
        self.ctx.nominated_sums = sums
        self.pod_group_cycle = PodGroupCycle(self)
        for h in handles:
            h.pod_group_states = self.cache.pod_group_states
            h.nominated_pods_for_node = self.queue.nominated_pods_for_node
            h.nominated_node_names = self.queue.nominated_node_names
            h.nominated_sums = sums
        self._fit = Fit(None)
        self._ready = deque()      # binding cycles whose Permit wait ended: (attempt, status)
        self._binder = ThreadPoolExecutor(binding_workers, "binding") if binding_workers > 0 else None
        self._bound = deque()      # asynchronous Bind calls that returned: (attempt, status), appended by workers
        self.binding = {}          # uid -> attempt, while its Bind call runs on a binding worker
        self.bound_event = threading.Event()   # set when a Bind call returns (a loop waiting for work wakes)
        self._cycle_deleted = None  # pods deleted while a scheduling cycle runs (preemption victims)
        self._after_attempt = deque()   # asynchronous preemptions, run when the attempt is over
        self._cycle_async_victims = None  # the victims the cycle's asynchronous preemption will delete
        self._deferred_updates = None  # pending-pod updates that arrive during an attempt, replayed after it
        cluster.subscribe(self)

    # -- cluster event handlers (eventhandlers.go) -------------------------------------------
    def _responsible(self, pod) -> bool:
        return pod.scheduler_name in self.profiles

    def _pre_check_for_node(self, ni):
        """preCheckForNode: resources, node affinity/selector, nodeName, host ports, NoSchedule taints (none
        with queueing hints, which replace it)."""
        if self._hints:
            return None
        node = ni.node
        fit = self._fit

        def check(pod) -> bool:
            if fit.insufficient(pod.requests, ni):
                return False
            if not required_node_affinity_matches(pod, node):
                return False
            if pod.node_name and pod.node_name != node.name:
                return False
            if pod.host_ports and not fits_ports(pod.host_ports, ni.used_ports):
                return False
            for taint in node.taints:
                if taint.effect == "NoSchedule" and not tolerates_taint(pod.tolerations, taint):
                    return False
            return True
        return check

    def on_node_add(self, node) -> None:
        ni = self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(NODE_ADD, self._pre_check_for_node(ni), None, node)

    def on_node_update(self, old, new) -> None:
        ni = self.cache.update_node(old, new)
        events = node_scheduling_properties_change(new, old, self._hints,
                                                   bool(self.features.gates.get("NodeDeclaredFeatures")))
        for event in events:
            self.queue.move_all_to_active_or_backoff_queue(event, self._pre_check_for_node(ni), old, new)

    def on_node_delete(self, node) -> None:
        if self._hints:
            self.queue.move_all_to_active_or_backoff_queue(event_v136("Node", DELETE), None, node, None)
        try:
            self.cache.remove_node(node)
        except CacheError as err:
            log.error("scheduler cache RemoveNode failed: %s", err)

    def on_pod_add(self, pod) -> None:
        if pod.node_name:
            self._add_pod_to_cache(pod)
        elif self._responsible(pod):
            self.cache.add_pod_group_member(pod)
            self.queue.add(pod)
            if self.gang_scheduling:
                self.queue.move_all_to_active_or_backoff_queue(event_v136(UNSCHEDULABLE_POD, ADD), None, None, pod)

    def on_pod_update(self, old, new) -> None:
        if old.node_name and new.node_name:
            try:
                self.cache.update_pod(old, new)
            except CacheError as err:
                log.error("scheduler cache UpdatePod failed: %s", err)
            if self._hints:
                for event in pod_scheduling_properties_change(new, old, ASSIGNED_POD):
                    self.queue.move_all_to_active_or_backoff_queue(event, None, old, new)
            else:
                self.queue.assigned_pod_updated(old, new)
        elif new.node_name and self._hints:
            self._add_pod_to_cache(new)
            if self._responsible(old):
                self.queue.delete(old)
        elif new.node_name:
            if self._responsible(old):
                self._delete_pod_from_queue(old)
            self._add_pod_to_cache(new)
        elif self._responsible(new):
            if self._deferred_updates is not None:
                self._deferred_updates.append((old, new))
            else:
                self._update_pod_in_queue(old, new)

    def _update_pod_in_queue(self, old, new) -> None:
        """updatePodInSchedulingQueue: skip same-version and assumed pods, else SchedulingQueue.Update."""
        if (old.raw.get("metadata") or {}).get("resourceVersion") == \
                (new.raw.get("metadata") or {}).get("resourceVersion"):
            return
        self.cache.update_pod_group_member(old, new)
        if self.cache.is_assumed_pod(new):
            if self._hints and new.deletion_timestamp and not old.deletion_timestamp:
                self._assumed_pod_deleted(new)
            return
        self.queue.update(old, new)
        if self._hints and old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE_V136, _le_priority(old.priority),
                                                           old, None)

    def _assumed_pod_deleted(self, pod) -> None:
        """handleAssumedPodDeletion (1.36): a waiting pod is rejected, another assumed pod forgotten; pods its place
        may help are moved."""
        assumed = self.cache.get_pod(pod)
        if assumed is None:
            return
        handle = self.handles.get(assumed.scheduler_name)
        if handle is None or not handle.reject_waiting_pod(assumed.uid):
            try:
                self.cache.forget_pod(assumed)
            except CacheError as err:
                log.error("scheduler cache ForgetPod failed: %s", err)
        self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE_V136, None, assumed, None)

    def on_pod_delete(self, pod) -> None:
        if self._cycle_deleted is not None:
            self._cycle_deleted.append(pod.key)
        if pod.node_name:
            try:
                self.cache.remove_pod(pod)
            except CacheError as err:
                log.error("scheduler cache RemovePod failed: %s", err)
            if self._hints:
                self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE_V136, None, pod, None)
            else:
                self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE)
        elif self._responsible(pod) and self._hints:
            self.queue.delete(pod)
            self.cache.remove_pod_group_member(pod)
            if self.cache.is_assumed_pod(pod):
                self._assumed_pod_deleted(pod)
            elif pod.nominated_node_name:
                self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE_V136, _le_priority(pod.priority),
                                                               pod, None)
        elif self._responsible(pod):
            self._delete_pod_from_queue(pod)

    def on_object_event(self, kind: str, action: str, old, new) -> None:
        self.object_changes += 1
        if self._hints:
            if kind in QUEUE_RESOURCES_V136:
                self.queue.move_all_to_active_or_backoff_queue(event_v136(kind, _ACTIONS[action]), None, old, new)
        elif kind == "StorageClass":
            if action == "Add" and (new or {}).get("volumeBindingMode") == "WaitForFirstConsumer":
                self.queue.move_all_to_active_or_backoff_queue(STORAGE_CLASS_ADD)
            elif action == "Update":
                self.queue.move_all_to_active_or_backoff_queue(STORAGE_CLASS_UPDATE)
        elif kind in QUEUE_RESOURCES:
            self.queue.move_all_to_active_or_backoff_queue(resource_event(kind, _ACTIONS[action]))

    def _add_pod_to_cache(self, pod) -> None:
        try:
            self.cache.add_pod(pod)
        except CacheError as err:
            log.error("scheduler cache AddPod failed: %s", err)
        if self._hints:
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_ADD_V136, None, None, pod)
        else:
            self.queue.assigned_pod_added(pod)

    def _delete_pod_from_queue(self, pod) -> None:
        self.queue.delete(pod)
        handle = self.handles.get(pod.scheduler_name)
        if handle is not None and handle.reject_waiting_pod(pod.uid):
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE)

    # -- the loop ----------------------------------------------------------------------------
    def schedule_one(self):
        """Pop one pod and run its attempt. Returns its CycleTrace, or None when there was nothing to do.

        Updates of pending pods that arrive during the attempt (status patches: nominations, conditions)
        reach the queue when the attempt is over, as an informer delivers them (the in-flight pod is then
        back in its queue, not re-added as a new pod); those of a pod bound or deleted since (its later event
        was handled at once) are dropped, as the informer would have delivered them before that event."""
        pinfo = self.queue.pop()
        if pinfo is None:
            return None
        self._deferred_updates = []
        try:
            if self.generic_workload and pinfo.pod.pod_group is not None:
                return self.pod_group_cycle.run(pinfo)
            return self._attempt(pinfo)
        finally:
            deferred, self._deferred_updates = self._deferred_updates, None
            for old, new in deferred:
                live = self.cluster.get_pod(new.namespace, new.name)
                if live is not None and live.uid == new.uid and not live.node_name:
                    self._update_pod_in_queue(old, new)
            while self._after_attempt:
                self._after_attempt.popleft()()
            self.process_ready()

    def _run_after_attempt(self, job, victim_keys) -> None:
        """``handle.run_async``: an asynchronous preemption's deletions run once the preemptor's attempt is over
        (failure handled, nomination patched), before the next pop; its trace names the victims."""
        self._after_attempt.append(job)
        if self._cycle_async_victims is not None:
            self._cycle_async_victims.extend(victim_keys)

    def _attempt(self, pinfo):
        pod = pinfo.pod
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None:
            log.error('profile not found for scheduler name "%s"', pod.scheduler_name)
            self.queue.done(pod.uid)
            return None
        if self.skip_pod_schedule(pod):
            self.queue.done(pod.uid)
            return None
        state = CycleState()
        self.ctx.scheduling_cycle = self.queue.scheduling_cycle
        self._cycle_deleted = []
        self._cycle_async_victims = []
        try:
            self.cache.update_snapshot(self.snapshot)
            tr, state = schedule_pod(fwk, self.ctx, pod, self.snapshot, state, attempt=pinfo.attempts)
        finally:
            deleted, self._cycle_deleted = self._cycle_deleted, None
            async_victims, self._cycle_async_victims = self._cycle_async_victims, None
        tr.victims = deleted + async_victims
        tr.nominated_node_before = pod.nominated_node_name
        if tr.error:
            self._fail(fwk, pinfo, Status.error(tr.error), CLEAR_NOMINATED_NODE, tr)
        elif not tr.chosen:
            self._fail_unschedulable(fwk, pinfo, tr)
        else:
            self._assume_and_reserve(fwk, state, pinfo, tr)
        return tr

    def skip_pod_schedule(self, pod) -> bool:
        """skipPodSchedule: a pod being deleted (its FailedScheduling event says so) or already assumed."""
        if pod.deletion_timestamp:
            self.cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling",
                                      f"skip schedule deleting pod: {pod.namespace}/{pod.name}")
            return True
        return self.cache.is_assumed_pod(pod)

    def _fail_unschedulable(self, fwk, pinfo, tr) -> None:
        if tr.num_all_nodes == 0:
            st = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tr.message)
            self._fail(fwk, pinfo, st, CLEAR_NOMINATED_NODE, tr)
            return
        nominating = None
        res = tr.post_filter_result
        if res is not None:
            nominating = NominatingInfo(res.mode, res.nominated_node_name)
        self._fail(fwk, pinfo, Status(Code.UNSCHEDULABLE, tr.message), nominating, tr,
                   plugins=tr.unschedulable_plugins, pending=tr.pending_plugins)

    def _assume_and_reserve(self, fwk, state, pinfo, tr) -> None:
        pod, host = pinfo.pod, tr.chosen
        assumed = _assumed_copy(pod, host)
        try:
            self.cache.assume_pod(assumed)
        except CacheError as err:
            self._fail(fwk, pinfo, Status.error(str(err)), CLEAR_NOMINATED_NODE, tr)
            return
        self.queue.delete_nominated_pod_if_exists(assumed)
        st = fwk.run_reserve(state, assumed, host)
        if st is not None:
            tr.reserve_status = st
            self._undo_assume(fwk, state, assumed, host)
            self._fail_at_node(fwk, pinfo, st, host, tr)
            return
        st, waits = fwk.run_permit(state, assumed, host)
        if st is not None and st.code != Code.WAIT:
            self._undo_assume(fwk, state, assumed, host)
            self._fail_at_node(fwk, pinfo, st, host, tr)
            return
        if state.pods_to_activate:
            self.queue.activate(list(state.pods_to_activate.values()))
            state.pods_to_activate = {}
        attempt = _Attempt(fwk, state, pinfo, assumed, host, tr)
        st_flight = self._pre_bind_pre_flight(attempt, waits=st is not None)
        if st_flight is not None:
            self._binding_failed(attempt, st_flight)
            return
        if st is not None:
            tr.permit_wait = dict(waits)
            wp = WaitingPod(assumed, waits, self.clock.now(),
                            lambda status, a=attempt: self._ready.append((a, status)))
            fwk.handle.waiting_pods.add(wp)
            return
        self._binding_cycle(attempt, None)

    def _pre_bind_pre_flight(self, a: _Attempt, waits: bool):
        """The start of 1.36's binding cycle (NominatedNodeNameForExpectation): RunPreBindPreFlights, then, when
        PreBind will act or the pod waits on Permit, status.nominatedNodeName set to the chosen node so that other
        components see where the pod is going (an API error is logged). Returns the Error that ends the binding
        cycle (a pod that would wait on Permit is then not held), or None."""
        if not self.features.gates.get("NominatedNodeNameForExpectation"):
            return None
        st = a.fwk.run_pre_bind_pre_flights(a.state, a.assumed, a.host)
        if st is not None and st.code != Code.SKIP:
            return st
        if st is None or waits:
            try:
                self.cluster.patch_pod_status(a.assumed, None, a.host)
            except Exception as err:  # not critical: the binding cycle goes on, as kube's does
                log.error("Failed to update the nominated node name in the binding cycle for %s: %s",
                          a.assumed.key, err)
        return None

    def _undo_assume(self, fwk, state, assumed, host) -> None:
        fwk.run_unreserve(state, assumed, host)
        try:
            self.cache.forget_pod(assumed)
        except CacheError as err:
            log.error("scheduler cache ForgetPod failed: %s", err)

    def _fail_at_node(self, fwk, pinfo, st, host, tr) -> None:
        """A Reserve or Permit rejection is a FitError over one node; other failures keep their error."""
        if st.is_rejected():
            msg = fit_error_message(1, {host: st})
            self._fail(fwk, pinfo, Status(st.code, msg), CLEAR_NOMINATED_NODE, tr,
                       plugins=[st.plugin] if st.plugin else [])
        else:
            self._fail(fwk, pinfo, st, CLEAR_NOMINATED_NODE, tr)

    # -- binding cycle -----------------------------------------------------------------------
    def _binding_cycle(self, a: _Attempt, permit_status) -> None:
        fwk, state, assumed, host = a.fwk, a.state, a.assumed, a.host
        if permit_status is not None:
            if permit_status.is_rejected():
                st = Status(permit_status.code, fit_error_message(1, {host: permit_status}))
                self._binding_failed(a, st, [permit_status.plugin] if permit_status.plugin else [])
            else:
                self._binding_failed(a, Status.error(f"waiting on permit for pod: {permit_status.as_error()}"))
            return
        st = fwk.run_pre_bind(state, assumed, host)
        if st is not None:
            self._binding_failed(a, st, [st.plugin] if st.is_rejected() and st.plugin else [])
        elif self._binder is None:
            self._bind_done(a, self._bind(fwk, state, assumed, host))
        else:
            self.binding[assumed.uid] = a
            self._binder.submit(self._bind, fwk, state, assumed, host).add_done_callback(
                lambda f, a=a: self._returned(a, f))

    def _returned(self, a: _Attempt, future) -> None:
        """On a binding worker: the Bind call returned (or raised); ``process_bound`` finishes it."""
        err = future.exception()
        self._bound.append((a, Status.error(str(err)) if err is not None else future.result()))
        self.bound_event.set()

    def process_bound(self) -> int:
        """Finish the binding cycles whose asynchronous Bind call returned; how many."""
        n = 0
        while self._bound:
            a, st = self._bound.popleft()
            del self.binding[a.assumed.uid]
            self._bind_done(a, st)
            n += 1
        return n

    def wait_for_bindings(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the Bind calls in flight, finishing them; whether none is left."""
        end = time.monotonic() + timeout
        while self.binding:
            self.process_bound()
            left = end - time.monotonic()
            if not self.binding or left <= 0:
                break
            self.bound_event.wait(min(left, 0.05))
            self.bound_event.clear()
        return not self.binding

    def close(self) -> None:
        """Stop the binding workers after the Bind calls in flight (their cycles are finished by a later
        ``process_bound``, if any)."""
        if self._binder is not None:
            self._binder.shutdown(wait=True)

    def _bind_done(self, a: _Attempt, st) -> None:
        """The binding cycle after its Bind call: FinishBinding, the Scheduled event and PostBind, or the
        binding failure."""
        fwk, state, assumed, host = a.fwk, a.state, a.assumed, a.host
        self.cache.finish_binding(assumed)
        if st is not None:
            self._binding_failed(a, st, [st.plugin] if st.is_rejected() and st.plugin else [])
            return
        self.cluster.record_event(assumed, "Normal", "Scheduled", "Binding",
                                  f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}")
        fwk.run_post_bind(state, assumed, host)
        if state.pods_to_activate:
            self.queue.activate(list(state.pods_to_activate.values()))
        self.queue.done(assumed.uid)
        self.trace_sink.emit(a.trace)

    def _bind(self, fwk, state, assumed, host):
        """Binder extenders first, then the Bind plugins (on a binding worker when there are some)."""
        st, bound = None, False
        for ext in self.extenders:
            if not ext.is_binder() or not ext.is_interested(assumed):
                continue
            try:
                ext.bind(assumed, host)
            except ExtenderError as err:
                if ext.ignores(err):
                    continue
                st = Status.error(str(err))
            else:
                self.cluster.extender_bound(assumed, host)
            bound = True
            break
        if not bound:
            st = fwk.run_bind(state, assumed, host)
        return st

    def _binding_failed(self, a: _Attempt, st, plugins=()) -> None:
        """handleBindingCycleError: unreserve, forget, AssignedPodDelete move, failure handler."""
        a.trace.bind_error = st.message() or str(st.code)
        fwk, assumed = a.fwk, a.assumed
        fwk.run_unreserve(a.state, assumed, a.host)
        forgotten = True
        try:
            self.cache.forget_pod(assumed)
        except CacheError as err:
            log.error("scheduler cache ForgetPod failed: %s", err)
            forgotten = False
        event = ASSIGNED_POD_DELETE_V136 if self._hints else ASSIGNED_POD_DELETE
        if forgotten and not st.is_rejected():
            self.queue.move_all_to_active_or_backoff_queue(event, None, assumed, None)
        self._fail(fwk, a.pinfo, st, CLEAR_NOMINATED_NODE, a.trace, plugins=plugins)
        if forgotten and st.is_rejected():
            uid = assumed.uid
            self.queue.move_all_to_active_or_backoff_queue(event, lambda p: p.uid != uid, assumed, None)

    # -- failures ----------------------------------------------------------------------------
    def _fail(self, fwk, pinfo, status, nominating, tr, plugins=(), pending=()) -> None:
        """handleSchedulingFailure: requeue (if the pod still exists unbound), nominate, event, condition."""
        pod = pinfo.pod
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        msg = status.message()
        pinfo.unschedulable_plugins = set(plugins)
        pinfo.pending_plugins = set(pending)
        pinfo.last_failure_plugins = tuple(sorted(set(plugins) | set(pending)))
        pinfo.last_failure = msg
        tr.status_code = str(status.code)
        if status.is_rejected() and not tr.message:
            tr.message = msg  # a Reserve/Permit rejection: the FitError over the chosen node
        live = self.cluster.get_pod(pod.namespace, pod.name)
        if live is None or live.node_name:
            self.queue.done(pod.uid)
        elif live.uid != pod.uid and self.features.has("failure-skips-recreated-pod"):
            self.queue.done(pod.uid)   # a new pod of the same name: no requeue, nomination, event or condition
            self.trace_sink.emit(tr)
            return
        else:
            pinfo.pod = live
            try:
                self.queue.add_unschedulable_if_not_present(pinfo, self.queue.scheduling_cycle)
            except QueueError as err:
                log.error("%s", err)
        self.queue.add_nominated_pod(pinfo.pod, nominating)
        if nominating is not None and nominating.mode == "override" and nominating.node_name:
            tr.nominated_node = nominating.node_name
        self.trace_sink.emit(tr)
        if not msg:
            return
        self.cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling", truncate_message(msg))
        if live is None:
            return
        nnn = nominating.node_name if nominating is not None and nominating.mode == "override" else None
        condition = {"type": "PodScheduled", "status": "False", "reason": reason, "message": msg}
        try:
            self.cluster.patch_pod_status(live, condition, nnn)
        except Exception as err:  # an API error is logged, as kube does
            log.error("Error updating pod %s: %s", pod.key, err)

    # -- time-driven work --------------------------------------------------------------------
    def process_ready(self) -> None:
        """Run the binding cycles whose Permit wait ended (allowed, rejected or timed out)."""
        while self._ready:
            a, status = self._ready.popleft()
            a.fwk.handle.waiting_pods.remove(a.assumed.uid)
            self._binding_cycle(a, status)

    def process_timers(self) -> None:
        """Expire Permit waits and assumed pods that are due on the clock, then run what became ready."""
        now = self.clock.now()
        for handle in self.handles.values():
            for wp in handle.waiting_pods.values():
                wp.expire(now)
        self.cache.cleanup_assumed_pods(now)
        self.process_bound()
        self.process_ready()

    def next_wakeup(self):
        """The earliest time (clock seconds) at which a timer or a queue flush has work, or None."""
        times = [self.queue.next_wakeup()]
        for handle in self.handles.values():
            times.extend(wp.next_deadline() for wp in handle.waiting_pods.values())
        times = [t for t in times if t is not None]
        return min(times) if times else None

    def run_until_idle(self, max_cycles: int | None = None) -> int:
        """Schedule until activeQ is empty (without letting time pass). Returns the number of attempts."""
        n = 0
        self.process_timers()
        while max_cycles is None or n < max_cycles:
            if self.queue.num_poppable() == 0:
                break
            if self.schedule_one() is not None:
                n += 1
        return n

    def step(self) -> None:
        """One turn of the real-time loop: timers, periodic queue flushes, then one attempt if any."""
        self.process_timers()
        self.queue.tick()
        self.schedule_one()

    def waiting_pods(self) -> list:
        """All pods held by Permit plugins, across profiles."""
        return [wp for h in self.handles.values() for wp in h.waiting_pods.values()]
