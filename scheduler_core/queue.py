"""The scheduling queue (v1.30's internal/queue with SchedulerQueueingHints off; v1.36.2's backend/queue).

activeQ is a heap in the profile's QueueSort order, backoffQ a heap by backoff expiry, unschedulablePods a
map (insertion ordered, so runs are reproducible). Cluster events move pods out of unschedulablePods when a
plugin that rejected the pod registered for the event (``events_to_register``). The nominator remembers
which pods are nominated to which node. Times are kept in integer nanoseconds, like Go's time.Time, and
every queue timestamp is unique and increasing so equal-priority pods pop in FIFO order whatever the clock.

At 1.36 (``queueing_hints``, ``pop_from_backoff``, ``backoff_by_counts``, from the version's gates and changes):
each registration carries its plugin's QueueingHintFn, which decides whether an event may make the pod
schedulable (Queue) or not (QueueSkip); events that arrive while pods are in flight are kept and replayed for
the pod when its attempt fails (determineSchedulingHintForInFlightPod); the backoffQ is two heaps, pods rejected
by plugins (podBackoffQ, ordered by priority within each one-second window) and pods that failed with an error
(podErrorBackoffQ), backoff grows with the pod's unschedulable or consecutive error count, PreEnqueue runs when
a pod enters the backoffQ and Pop takes the podBackoffQ's head when the activeQ is empty.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import math

from .clock import Clock
from .framework.interface import QUEUE_SKIP
from .objects import Pod

log = logging.getLogger(__name__)

ACTIVE_Q = "activeQ"
BACKOFF_Q = "backoffQ"
UNSCHEDULABLE_PODS = "unschedulablePods"
IN_FLIGHT = "inFlight"

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 5 * 60.0
BACKOFF_FLUSH_PERIOD = 1.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0
NS = 1_000_000_000

# ActionType bits (framework/types.go; v1.36.2's layout, whose first seven bits are v1.30's). v1.30 has only the
# node update bits: its pod update events carry all of UPDATE.
ADD = 1
DELETE = 2
UPDATE_NODE_ALLOCATABLE = 4
UPDATE_NODE_LABEL = 8
UPDATE_NODE_TAINT = 16
UPDATE_NODE_CONDITION = 32
UPDATE_NODE_ANNOTATION = 64
UPDATE_NODE_DECLARED_FEATURE = 128
UPDATE_POD_LABEL = 256
UPDATE_POD_SCALE_DOWN = 512
UPDATE_POD_TOLERATION = 1024
UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 2048
UPDATE_POD_GENERATED_RESOURCE_CLAIM = 4096
ALL = 8191
UPDATE = ALL & ~(ADD | DELETE)
ACTION_BITS = {"Add": ADD, "Delete": DELETE, "UpdateNodeAllocatable": UPDATE_NODE_ALLOCATABLE,
               "UpdateNodeLabel": UPDATE_NODE_LABEL, "UpdateNodeTaint": UPDATE_NODE_TAINT,
               "UpdateNodeCondition": UPDATE_NODE_CONDITION, "UpdateNodeAnnotation": UPDATE_NODE_ANNOTATION,
               "UpdateNodeDeclaredFeature": UPDATE_NODE_DECLARED_FEATURE, "UpdatePodLabel": UPDATE_POD_LABEL,
               "UpdatePodScaleDown": UPDATE_POD_SCALE_DOWN, "UpdatePodToleration": UPDATE_POD_TOLERATION,
               "UpdatePodSchedulingGatesEliminated": UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
               "UpdatePodGeneratedResourceClaim": UPDATE_POD_GENERATED_RESOURCE_CLAIM,
               "Update": UPDATE, "All": ALL}
ACTION_NAMES = {bits: name for name, bits in ACTION_BITS.items()}

WILDCARD = "*"
# Resources (GVKs); the storage ones are also accepted with their "storage.k8s.io/" prefix.
RESOURCES = ("Pod", "Node", "PersistentVolume", "PersistentVolumeClaim", "CSINode", "CSIDriver",
             "CSIStorageCapacity", "StorageClass", "PodSchedulingContext", "ResourceClaim", "ResourceClass",
             "ResourceClaimParameters", "ResourceClassParameters", "DeviceClass", "ResourceSlice", "VolumeAttachment",
             "PodGroup")
# 1.36's pod events name the pod's state; a registration for "Pod" covers both.
ASSIGNED_POD = "AssignedPod"
UNSCHEDULABLE_POD = "UnschedulablePod"
_GROUPS = {"CSINode": "storage.k8s.io/", "CSIDriver": "storage.k8s.io/", "CSIStorageCapacity": "storage.k8s.io/",
           "StorageClass": "storage.k8s.io/", "VolumeAttachment": "storage.k8s.io/",
           "ResourceClaim": "resource.k8s.io/", "ResourceSlice": "resource.k8s.io/", "DeviceClass": "resource.k8s.io/",
           "PodGroup": "scheduling.k8s.io/"}


class ClusterEvent:
    """A change of some resource: ``resource`` (GVK name), ``action`` (ActionType bits) and a label."""

    __slots__ = ("resource", "action", "label")

    def __init__(self, resource: str, action: int, label: str = ""):
        self.resource = resource
        self.action = action
        self.label = label

    def is_wildcard(self) -> bool:
        return self.resource == WILDCARD and self.action == ALL

    def match(self, event: "ClusterEvent", within: bool = False) -> bool:
        """Whether this registered event covers ``event`` (a wildcard event only matches a wildcard); ``within``
        (1.36's MatchClusterEvents) also wants the event's actions to be no more than the registration's."""
        if self.is_wildcard():
            return True
        r = self.resource
        if not (r == WILDCARD or r == event.resource
                or (r == "Pod" and event.resource in (ASSIGNED_POD, UNSCHEDULABLE_POD))):
            return False
        return self.action & event.action != 0 and (not within or event.action <= self.action)

    def __repr__(self):
        return f"ClusterEvent({self.label or self.resource}:{self.action})"


NODE_ADD = ClusterEvent("Node", ADD, "NodeAdd")
ASSIGNED_POD_ADD = ClusterEvent("Pod", ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = ClusterEvent("Pod", UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = ClusterEvent("Pod", DELETE, "AssignedPodDelete")
NODE_SPEC_UNSCHEDULABLE_CHANGE = ClusterEvent("Node", UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange")
NODE_ALLOCATABLE_CHANGE = ClusterEvent("Node", UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange")
NODE_LABEL_CHANGE = ClusterEvent("Node", UPDATE_NODE_LABEL, "NodeLabelChange")
NODE_ANNOTATION_CHANGE = ClusterEvent("Node", UPDATE_NODE_ANNOTATION, "NodeAnnotationChange")
NODE_TAINT_CHANGE = ClusterEvent("Node", UPDATE_NODE_TAINT, "NodeTaintChange")
NODE_CONDITION_CHANGE = ClusterEvent("Node", UPDATE_NODE_CONDITION, "NodeConditionChange")
STORAGE_CLASS_ADD = ClusterEvent("StorageClass", ADD, "StorageClassAdd")
STORAGE_CLASS_UPDATE = ClusterEvent("StorageClass", UPDATE, "StorageClassUpdate")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(WILDCARD, ALL, "ForceActivate")


def event_v136(resource: str, action: int) -> ClusterEvent:
    """A 1.36 event, labelled as ClusterEvent.Label() does (resource with its group, then the action's name)."""
    return ClusterEvent(resource, action, _GROUPS.get(resource, "") + resource + ACTION_NAMES.get(action, ""))


ASSIGNED_POD_ADD_V136 = event_v136(ASSIGNED_POD, ADD)
ASSIGNED_POD_DELETE_V136 = event_v136(ASSIGNED_POD, DELETE)
UNSCHEDULED_POD_ADD = "UnschedulablePodAdd"
UNSCHEDULED_POD_UPDATE = "UnschedulablePodUpdate"

# Short names kube uses in the labels of the generic resource handlers ("PvAdd", "CSINodeUpdate", ...).
_SHORT = {"PersistentVolume": "Pv", "PersistentVolumeClaim": "Pvc"}
_ACTION_LABEL = {ADD: "Add", UPDATE: "Update", DELETE: "Delete"}


def resource_event(resource: str, action: int) -> ClusterEvent:
    """The event kube's generic informer handlers send for a resource (``PvAdd``, ``PvcUpdate``, ...)."""
    return ClusterEvent(resource, action, _SHORT.get(resource, resource) + _ACTION_LABEL[action])


def parse_registration(reg) -> tuple:
    """One entry of a plugin's events_to_register(): a ClusterEvent, or (resource, action name(s)) with an optional
    QueueingHintFn third, ``hint(pod, old, new)`` returning QUEUE or QUEUE_SKIP. Returns (ClusterEvent, hint or
    None)."""
    if isinstance(reg, ClusterEvent):
        return reg, None
    resource, actions, hint = reg if len(reg) == 3 else (*reg, None)
    resource = resource.rsplit("/", 1)[-1] if resource.startswith("storage.k8s.io/") else resource
    if resource != WILDCARD and resource not in RESOURCES:
        raise ValueError(f"unknown resource {resource!r} in events_to_register")
    bits = 0
    for name in ((actions,) if isinstance(actions, str) else actions):
        if name not in ACTION_BITS:
            raise ValueError(f"unknown action {name!r} in events_to_register")
        bits |= ACTION_BITS[name]
    return ClusterEvent(resource, bits), hint


def unroll_wildcard_resource(v136: bool = False) -> list:
    """The events a plugin without events_to_register() is registered for (every resource, All; 1.36's list)."""
    return [ClusterEvent(r, ALL) for r in (_WILDCARD_V136 if v136 else RESOURCES)]


_WILDCARD_V136 = ("Pod", "Node", "PersistentVolume", "PersistentVolumeClaim", "CSINode", "CSIDriver",
                  "CSIStorageCapacity", "StorageClass", "ResourceClaim", "DeviceClass")
# Go's zero time.Time: before every time (no backoff).
ZERO_TIME = -(1 << 63)
# isPodWorthRequeuing's strategies.
QUEUE_SKIP_STRATEGY, QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY = 0, 1, 2


class Stamp(int):
    """A queue timestamp (ns). Equal times compare in the order they were taken, as Go's monotonic clock
    never repeats, so a frozen fake clock still gives FIFO order; arithmetic uses the time alone."""

    def __new__(cls, ns: int, seq: int):
        obj = int.__new__(cls, ns)
        obj.seq = seq
        return obj

    def __lt__(self, other):
        a, b = int(self), int(other)
        if a != b:
            return a < b
        return self.seq < getattr(other, "seq", self.seq)

    def __gt__(self, other):
        return other < self if isinstance(other, Stamp) else int(self) > int(other)

    def __le__(self, other):
        return not self > other

    def __ge__(self, other):
        return not self < other

    def __eq__(self, other):
        if isinstance(other, Stamp):
            return int(self) == int(other) and self.seq == other.seq
        return int(self) == other

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((int(self), self.seq))


class NominatingInfo:
    """Where a failed pod should be nominated: ``override`` with a node name ("" clears), or ``noop``."""

    __slots__ = ("mode", "node_name")

    def __init__(self, mode: str = "override", node_name: str = ""):
        self.mode = mode
        self.node_name = node_name


CLEAR_NOMINATED_NODE = NominatingInfo("override", "")


class QueueError(Exception):
    """An impossible queue operation (kube logs these and carries on)."""


class QueuedPodInfo:
    """A pod in the queue with its queueing state (framework.QueuedPodInfo plus where it is now).

    ``timestamp`` (ns) is when it last entered the queue, ``attempts`` how often it was popped,
    ``unschedulable_plugins``/``pending_plugins`` the plugins that rejected the last attempt (cleared at
    pop), ``last_failure_plugins``/``last_failure`` what the last failed attempt reported. At 1.36
    ``unschedulable_count``/``consecutive_errors_count`` count the failed attempts the backoff grows with,
    ``backoff_expiration`` caches its expiry and ``gating_events`` are the events the gating PreEnqueue plugin
    registered.
    """

    __slots__ = ("pod", "timestamp", "initial_attempt_timestamp", "attempts", "unschedulable_plugins",
                 "pending_plugins", "gated", "gated_by", "queue", "last_failure_plugins", "last_failure",
                 "unschedulable_count", "consecutive_errors_count", "backoff_expiration", "gating_events")

    def __init__(self, pod, timestamp: int):
        self.pod = pod
        self.timestamp = timestamp
        self.initial_attempt_timestamp = None
        self.attempts = 0
        self.unschedulable_plugins = set()
        self.pending_plugins = set()
        self.gated = False
        self.gated_by = None   # (plugin, message) of the PreEnqueue status that gates the pod
        self.queue = ""
        self.last_failure_plugins = ()
        self.last_failure = ""
        self.unschedulable_count = 0
        self.consecutive_errors_count = 0
        self.backoff_expiration = None
        self.gating_events = ()

    def __repr__(self):
        return f"QueuedPodInfo({self.pod.key}, {self.queue}, attempts={self.attempts})"


class _Entry:
    __slots__ = ("item", "seq", "lt", "alive")

    def __init__(self, item, seq, lt):
        self.item = item
        self.seq = seq
        self.lt = lt
        self.alive = True

    def __lt__(self, other):
        a, b = self.item, other.item
        if self.lt(a, b):
            return True
        if self.lt(b, a):
            return False
        return self.seq < other.seq


class _Heap:
    """A heap of QueuedPodInfos keyed by pod key, with lazy deletion; ties pop in insertion order."""

    def __init__(self, lt, seq):
        self._lt = lt
        self._seq = seq
        self._heap = []
        self._by_key = {}

    def __len__(self):
        return len(self._by_key)

    def __contains__(self, key):
        return key in self._by_key

    def get(self, key):
        e = self._by_key.get(key)
        return e.item if e is not None else None

    def add(self, key, item):
        """Insert, or re-position an item already present under ``key``."""
        old = self._by_key.get(key)
        if old is not None:
            old.alive = False
        e = _Entry(item, next(self._seq), self._lt)
        self._by_key[key] = e
        heapq.heappush(self._heap, e)
        if len(self._heap) > 2 * len(self._by_key) + 64:
            self._heap = list(self._by_key.values())
            heapq.heapify(self._heap)

    def delete(self, key) -> bool:
        e = self._by_key.pop(key, None)
        if e is None:
            return False
        e.alive = False
        return True

    def peek(self):
        h = self._heap
        while h and not h[0].alive:
            heapq.heappop(h)
        return h[0].item if h else None

    def pop(self):
        h = self._heap
        while h:
            e = heapq.heappop(h)
            if e.alive:
                del self._by_key[e.item.pod.key]
                return e.item
        return None

    def items(self) -> list:
        """Items in pop order."""
        return [e.item for e in sorted(e for e in self._heap if e.alive)]


class PriorityQueue:
    """activeQ / backoffQ / unschedulablePods and the nominator.

    ``less(a, b)`` is the QueueSort plugin's ordering of QueuedPodInfos. ``pre_enqueue`` maps a profile
    (scheduler name) to a function returning the first failing PreEnqueue status (None when all pass).
    ``events`` maps a profile to [(ClusterEvent, plugin name[, QueueingHintFn])] registrations. ``pod_lister(ns,
    name)`` returns the live pod (the nominator ignores pods that are gone or bound). ``namespace_labels()``
    returns {namespace: labels} for matching affinity terms' namespace selectors. ``queueing_hints``,
    ``pop_from_backoff`` (the SchedulerQueueingHints and SchedulerPopFromBackoffQ gates) and ``backoff_by_counts``
    (1.36's backoffQ) choose 1.36's queue.
    """

    def __init__(self, less, clock: Clock | None = None, initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE, pre_enqueue=None, events=None,
                 pod_lister=None, namespace_labels=None, queueing_hints: bool = False, pop_from_backoff: bool = False,
                 backoff_by_counts: bool = False):
        self.clock = clock or Clock()
        self._initial_ns = int(initial_backoff * NS)
        self._max_ns = int(max_backoff * NS)
        self._max_unsched_ns = int(max_in_unschedulable * NS)
        self._pre_enqueue = pre_enqueue or {}
        self._events = {name: [(reg[0], reg[1], reg[2] if len(reg) > 2 else None) for reg in regs]
                        for name, regs in (events or {}).items()}
        self._plugin_events = {}   # pluginToEventsMap: plugin -> the events it registered, in every profile
        for regs in self._events.values():
            for ev, pl, _hint in regs:
                self._plugin_events.setdefault(pl, []).append(ev)
        self._interest_cache = {}
        self._pod_lister = pod_lister
        self._namespace_labels = namespace_labels
        self.queueing_hints = queueing_hints
        self.pop_from_backoff = pop_from_backoff
        self.backoff_by_counts = backoff_by_counts
        self._less = less
        seq = itertools.count()
        self._active = _Heap(less, seq)
        self._backoff = _Heap(self._backoff_less, seq)         # 1.36: podBackoffQ (rejected by plugins)
        self._error_backoff = _Heap(self._error_backoff_less, seq)   # 1.36: podErrorBackoffQ (failed with an error)
        self._unsched = {}        # pod key -> QueuedPodInfo
        self._in_flight = {}      # pod uid -> QueuedPodInfo
        self._flight_log = []     # 1.36's inFlightEvents: ("pod", uid) markers and (event, old, new) in arrival order
        self._flight_base = 0     # the position of _flight_log[0] since the queue was made
        self._flight_at = {}      # pod uid -> the position of its marker
        self._stamps = itertools.count()
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self._nominated = {}      # node name -> [Pod]
        self._nominated_node = {}  # pod uid -> node name
        self.nomination_listeners = []   # (+1 | -1, node name, pod) on every nomination added or removed
        now = self.clock.now()
        self._next_backoff_flush = self._next_window(now) if pop_from_backoff else now
        self._next_unsched_flush = now

    # -- time --------------------------------------------------------------------------------
    def _now_ns(self) -> int:
        return int(round(self.clock.now() * NS))

    def _stamp(self) -> "Stamp":
        """Now, in ns, ordered after every earlier stamp even when the clock stands still."""
        return Stamp(self._now_ns(), next(self._stamps))

    def backoff_duration_ns(self, pinfo: QueuedPodInfo) -> int:
        """calculateBackoffDuration: initial, doubled per attempt after the first, capped at max (1.36: per
        unschedulable or consecutive error count)."""
        if self.backoff_by_counts:
            shift = (pinfo.consecutive_errors_count or pinfo.unschedulable_count) - 1
            if self._initial_ns > self._max_ns >> shift:
                return self._max_ns
            return self._initial_ns << shift
        d = self._initial_ns
        for _ in range(1, pinfo.attempts):
            if d > self._max_ns - d:
                return self._max_ns
            d += d
        return d

    @staticmethod
    def _next_window(now: float) -> float:
        """waitUntilAlignedWithOrderingWindow: the backoffQ flushes run on whole seconds (SchedulerPopFromBackoffQ)."""
        return (math.floor(now / BACKOFF_FLUSH_PERIOD) + 1) * BACKOFF_FLUSH_PERIOD

    def _align(self, t: int) -> int:
        """alignToWindow: the start of t's one-second ordering window (with SchedulerPopFromBackoffQ)."""
        return t - t % NS if self.pop_from_backoff else t

    def backoff_expiry_ns(self, pinfo: QueuedPodInfo) -> int:
        """When the pod's backoff ends (1.36's getBackoffTime: ZERO_TIME for a pod that has not failed, aligned to
        its window and cached until the next failure)."""
        if not self.backoff_by_counts:
            return pinfo.timestamp + self.backoff_duration_ns(pinfo)
        if self._max_ns == 0 or not (pinfo.consecutive_errors_count or pinfo.unschedulable_count):
            return ZERO_TIME
        if pinfo.backoff_expiration is None:
            pinfo.backoff_expiration = self._align(int(pinfo.timestamp) + self.backoff_duration_ns(pinfo))
        return pinfo.backoff_expiration

    def _backoff_less(self, a, b) -> bool:
        """1.30's backoffQ and 1.36's podBackoffQ: by backoff expiry; with SchedulerPopFromBackoffQ, pods of the same
        window in activeQ's order."""
        ea, eb = self.backoff_expiry_ns(a), self.backoff_expiry_ns(b)
        if ea != eb or not self.pop_from_backoff:
            return ea < eb
        return self._less(a, b)

    def _error_backoff_less(self, a, b) -> bool:
        return self.backoff_expiry_ns(a) < self.backoff_expiry_ns(b)

    def is_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        if self.backoff_by_counts:
            return not self.backoff_expiry_ns(pinfo) < self._align(self._now_ns())
        if pinfo.gated:
            return False
        return self.backoff_expiry_ns(pinfo) > self._now_ns()

    # -- entering the queues -----------------------------------------------------------------
    def _new_pinfo(self, pod) -> QueuedPodInfo:
        return QueuedPodInfo(pod, self._stamp())

    def _run_pre_enqueue(self, pinfo: QueuedPodInfo) -> bool:
        """runPreEnqueuePlugins: whether the pod is gated now (the gating plugin joins its rejectors)."""
        run = self._pre_enqueue.get(pinfo.pod.scheduler_name)
        st = run(pinfo.pod) if run is not None else None
        pinfo.gated = st is not None
        pinfo.gated_by = (st.plugin or "", st.message()) if pinfo.gated else None
        pinfo.gating_events = tuple(self._plugin_events.get(st.plugin, ())) if pinfo.gated and st.plugin else ()
        if pinfo.gated and st.plugin:
            pinfo.unschedulable_plugins.add(st.plugin)
        return pinfo.gated

    def _park(self, pinfo: QueuedPodInfo) -> None:
        self._unsched[pinfo.pod.key] = pinfo
        pinfo.queue = UNSCHEDULABLE_PODS

    def _add_to_active(self, pinfo: QueuedPodInfo, moves_from_backoff: bool = False) -> bool:
        """addToActiveQ / moveToActiveQ: PreEnqueue plugins first (not for a pod leaving the backoffQ with
        SchedulerPopFromBackoffQ); a gated pod is parked in unschedulablePods."""
        if not (self.pop_from_backoff and moves_from_backoff) and self._run_pre_enqueue(pinfo):
            key = pinfo.pod.key
            if self.queueing_hints and (key in self._active or key in self._backoff or key in self._error_backoff):
                return False
            self._park(pinfo)
            return False
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self._stamp()   # ordered even when the clock has not moved
        if self.backoff_by_counts:
            self._unsched.pop(pinfo.pod.key, None)
            self._delete_backoff(pinfo.pod.key)
        self._active.add(pinfo.pod.key, pinfo)
        pinfo.queue = ACTIVE_Q
        return True

    def _add_to_backoff(self, pinfo: QueuedPodInfo) -> bool:
        """moveToBackoffQ: at 1.36 PreEnqueue runs first (SchedulerPopFromBackoffQ), and a pod no plugin rejected
        goes to the podErrorBackoffQ."""
        if self.pop_from_backoff and self._run_pre_enqueue(pinfo):
            self._park(pinfo)
            return False
        if self.backoff_by_counts:
            self._unsched.pop(pinfo.pod.key, None)
        self.add_to_backoff_q(pinfo)
        return True

    def add_to_backoff_q(self, pinfo: QueuedPodInfo) -> None:
        """backoffQueue.add: into the podBackoffQ, or (1.36) the podErrorBackoffQ when no plugin rejected the pod;
        never in both."""
        key = pinfo.pod.key
        if self.backoff_by_counts and not (pinfo.unschedulable_plugins or pinfo.pending_plugins):
            self._backoff.delete(key)
            self._error_backoff.add(key, pinfo)
        else:
            self._error_backoff.delete(key)
            self._backoff.add(key, pinfo)
        pinfo.queue = BACKOFF_Q

    def _backoff_get(self, key):
        return self._backoff.get(key) or self._error_backoff.get(key)

    def _delete_backoff(self, key) -> bool:
        return self._backoff.delete(key) or self._error_backoff.delete(key)

    def add(self, pod) -> None:
        """A new pending pod of one of our profiles."""
        pinfo = self._new_pinfo(pod)
        if not self._add_to_active(pinfo):
            return
        self._unsched.pop(pod.key, None)
        self._delete_backoff(pod.key)
        self.add_nominated_pod(pod, None)

    def activate(self, pods) -> None:
        """Move these pods (from unschedulablePods or backoffQ) to activeQ now (PodsToActivate). At 1.36 a pod that
        is in flight gets a ForceActivate event instead, and the move request cycle is the current one."""
        for pod in pods:
            key = pod.key
            pinfo = None if key in self._active else self._unsched.get(key)
            from_backoff = False
            if pinfo is None and key not in self._active:
                pinfo = self._backoff_get(key)
                from_backoff = pinfo is not None
            if pinfo is None:
                if self.queueing_hints:
                    self._add_events_if_pod_in_flight(None, pod, (FORCE_ACTIVATE,))
                    self.move_request_cycle = self.scheduling_cycle
                continue
            if from_backoff and self.backoff_by_counts:
                self._delete_backoff(key)
            if not self._add_to_active(pinfo, moves_from_backoff=from_backoff):
                continue
            self._unsched.pop(key, None)
            self._delete_backoff(key)
            self.add_nominated_pod(pinfo.pod, None)

    def add_unschedulable_if_not_present(self, pinfo: QueuedPodInfo, pod_scheduling_cycle: int) -> None:
        """A failed attempt comes back. 1.30: backoffQ if a move request came during it (or no plugin rejected
        it, e.g. an error), else unschedulablePods. 1.36: the events that came while it was in flight decide,
        through the rejecting plugins' hints."""
        try:
            key = pinfo.pod.key
            if key in self._unsched:
                raise QueueError(f"Pod {key} is already present in unschedulable queue")
            if key in self._active:
                raise QueueError(f"Pod {key} is already present in the active queue")
            if key in self._backoff or key in self._error_backoff:
                raise QueueError(f"Pod {key} is already present in the backoff queue")
            rejected = bool(pinfo.unschedulable_plugins or pinfo.pending_plugins)
            if rejected:
                pinfo.unschedulable_count += 1
                pinfo.consecutive_errors_count = 0
            else:
                pinfo.consecutive_errors_count += 1
            pinfo.timestamp = self._stamp()
            pinfo.backoff_expiration = None
            if self.queueing_hints:
                self._requeue(pinfo, self._hint_for_in_flight_pod(pinfo))
            elif self.move_request_cycle >= pod_scheduling_cycle or not rejected:
                self._add_to_backoff(pinfo)
            else:
                self._park(pinfo)
            self.add_nominated_pod(pinfo.pod, None)
        finally:
            self.done(pinfo.pod.uid)

    # -- leaving -----------------------------------------------------------------------------
    def num_poppable(self) -> int:
        """How many pods Pop can take without waiting: activeQ's, and podBackoffQ's with SchedulerPopFromBackoffQ."""
        return len(self._active) + (len(self._backoff) if self.pop_from_backoff else 0)

    def pop(self):
        """The head of activeQ (None when empty; with SchedulerPopFromBackoffQ the podBackoffQ's head then); counts
        an attempt and a scheduling cycle."""
        while True:
            pinfo = self._active.pop()
            if pinfo is None and self.pop_from_backoff:
                pinfo = self._backoff.pop()
            if pinfo is None:
                return None
            if self._to_in_flight(pinfo):
                return pinfo

    def pop_specific_pod(self, pod):
        """PopSpecificPod: activate ``pod`` and take it out of activeQ as ``pop`` does (None when it is not
        there after the activation: gated, in flight or unknown)."""
        self.activate([pod])
        pinfo = self._active.get(pod.key)
        if pinfo is None:
            return None
        self._active.delete(pod.key)
        return pinfo if self._to_in_flight(pinfo) else None

    def _to_in_flight(self, pinfo) -> bool:
        """movePodToInFlight: an attempt and a scheduling cycle counted; False for a pod already in flight."""
        pinfo.attempts += 1
        if self.queueing_hints:
            if pinfo.pod.uid in self._in_flight:
                log.error("the same pod is tracked in multiple places in the scheduler: %s", pinfo.pod.key)
                return False
            self._flight_at[pinfo.pod.uid] = self._flight_base + len(self._flight_log)
            self._flight_log.append(("pod", pinfo.pod.uid))
        self.scheduling_cycle += 1
        pinfo.unschedulable_plugins = set()
        pinfo.pending_plugins = set()
        pinfo.queue = IN_FLIGHT
        self._in_flight[pinfo.pod.uid] = pinfo
        return True

    def done(self, uid) -> None:
        """The attempt of a popped pod is over (bound, requeued, or dropped); at 1.36 the events no in-flight pod
        needs any more are dropped."""
        pinfo = self._in_flight.pop(uid, None)
        if pinfo is not None and pinfo.queue == IN_FLIGHT:
            pinfo.queue = ""
        at = self._flight_at.pop(uid, None)
        if at is None:
            return
        self._flight_log[at - self._flight_base] = None
        log_ = self._flight_log
        drop = 0
        while drop < len(log_) and (log_[drop] is None or log_[drop][0] != "pod"):
            drop += 1
        if drop:
            del log_[:drop]
            self._flight_base += drop

    def in_flight_events(self, uid) -> list:
        """clusterEventsForPod: the (event, old, new) that came since the pod was popped."""
        at = self._flight_at.get(uid)
        if at is None:
            return []
        return [e for e in self._flight_log[at - self._flight_base + 1:] if e is not None and e[0] != "pod"]

    def _add_events_if_pod_in_flight(self, old, new, events) -> bool:
        if new.uid not in self._flight_at:
            return False
        self._flight_log.extend((ev, old, new) for ev in events)
        return True

    def update(self, old, new) -> None:
        """A pending pod changed (informer update)."""
        if self.queueing_hints:
            events = pod_scheduling_properties_change(new, old, UNSCHEDULABLE_POD) if old is not None \
                else [event_v136(UNSCHEDULABLE_POD, UPDATE)]
            if self._add_events_if_pod_in_flight(old, new, events):
                return
        if old is not None:
            for heap in (self._active, self._backoff, self._error_backoff):
                pinfo = heap.get(old.key)
                if pinfo is not None:
                    pinfo.pod = new
                    self.update_nominated_pod(old, new)
                    heap.add(new.key, pinfo)
                    return
        pinfo = self._unsched.get(new.key)
        if pinfo is not None:
            pinfo.pod = new
            self.update_nominated_pod(old if old is not None else new, new)
            if self.queueing_hints:
                for event in events:
                    where = self._requeue(pinfo, self._worth_requeuing_v136(pinfo, event, old, new))
                    if where == ACTIVE_Q or (self.pop_from_backoff and where == BACKOFF_Q):
                        break
                return
            if old is None or is_pod_updated(old, new):
                if self.is_backing_off(pinfo):
                    self._unsched.pop(new.key, None)
                    self._add_to_backoff(pinfo)
                else:
                    self._unsched.pop(new.key, None)
                    if not self._add_to_active(pinfo):
                        return
            return
        pinfo = self._new_pinfo(new)
        if self._add_to_active(pinfo):
            self.add_nominated_pod(new, None)

    def delete(self, pod) -> None:
        """A pending pod was deleted (or got bound)."""
        self.delete_nominated_pod_if_exists(pod)
        for store in (self._active, self._backoff, self._error_backoff):
            pinfo = store.get(pod.key)
            if pinfo is not None:
                store.delete(pod.key)
                pinfo.queue = ""
                return
        pinfo = self._unsched.pop(pod.key, None)
        if pinfo is not None:
            pinfo.queue = ""

    # -- cluster events ----------------------------------------------------------------------
    def _interested_plugins(self, profile: str, event: ClusterEvent) -> frozenset:
        key = (profile, event.resource, event.action)
        got = self._interest_cache.get(key)
        if got is None:
            within = self.queueing_hints
            got = frozenset(pl for ev, pl, _hint in self._events.get(profile, ()) if ev.match(event, within))
            self._interest_cache[key] = got
        return got

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        if event.is_wildcard():
            return True
        return any(self._interested_plugins(profile, event) for profile in self._events)

    def _worth_requeuing(self, pinfo: QueuedPodInfo, event: ClusterEvent) -> bool:
        rejectors = pinfo.unschedulable_plugins | pinfo.pending_plugins
        if not rejectors or event.is_wildcard():
            return True
        if pinfo.pod.scheduler_name not in self._events:
            return True
        return not rejectors.isdisjoint(self._interested_plugins(pinfo.pod.scheduler_name, event))

    def _worth_requeuing_v136(self, pinfo: QueuedPodInfo, event: ClusterEvent, old, new) -> int:
        """isPodWorthRequeuing: QUEUE_IMMEDIATELY when a pending plugin's hint says Queue, QUEUE_AFTER_BACKOFF when
        another rejecting plugin's does, QUEUE_SKIP_STRATEGY when none."""
        rejectors = pinfo.unschedulable_plugins | pinfo.pending_plugins
        if not rejectors:
            return QUEUE_AFTER_BACKOFF
        if event.is_wildcard():
            if new is not None and (not isinstance(new, Pod) or new.uid != pinfo.pod.uid):
                return QUEUE_SKIP_STRATEGY
            return QUEUE_AFTER_BACKOFF
        regs = self._events.get(pinfo.pod.scheduler_name)
        if regs is None:
            log.error("No QueueingHintMap is registered for this profile: %s", pinfo.pod.scheduler_name)
            return QUEUE_AFTER_BACKOFF
        strategy = QUEUE_SKIP_STRATEGY
        for ev, plugin, hint in regs:
            if plugin not in rejectors or not ev.match(event, True):
                continue
            if hint is not None:
                try:
                    if hint(pinfo.pod, old, new) == QUEUE_SKIP:
                        continue
                except Exception as err:  # kube logs the hint's error and queues the pod
                    log.error("QueueingHintFn returns error: event %s, plugin %s, pod %s: %s", event.label, plugin,
                              pinfo.pod.key, err)
            if plugin in pinfo.pending_plugins:
                return QUEUE_IMMEDIATELY
            if not pinfo.pending_plugins:
                return QUEUE_AFTER_BACKOFF
            strategy = QUEUE_AFTER_BACKOFF
        return strategy

    def _hint_for_in_flight_pod(self, pinfo: QueuedPodInfo) -> int:
        """determineSchedulingHintForInFlightPod: the strongest strategy of the events received in flight."""
        if not (pinfo.unschedulable_plugins or pinfo.pending_plugins):
            return QUEUE_AFTER_BACKOFF
        if pinfo.pod.uid not in self._flight_at:
            log.error("in flight Pod isn't found in the scheduling queue: %s", pinfo.pod.key)
            return QUEUE_AFTER_BACKOFF
        strategy = QUEUE_SKIP_STRATEGY
        for event, old, new in self.in_flight_events(pinfo.pod.uid):
            got = self._worth_requeuing_v136(pinfo, event, old, new)
            if got == QUEUE_IMMEDIATELY:
                return QUEUE_IMMEDIATELY
            if got == QUEUE_AFTER_BACKOFF:
                strategy = QUEUE_AFTER_BACKOFF
                if not pinfo.pending_plugins:
                    return QUEUE_AFTER_BACKOFF
        return strategy

    def _requeue(self, pinfo: QueuedPodInfo, strategy: int) -> str:
        """requeuePodWithQueueingStrategy: where the pod went."""
        if strategy == QUEUE_SKIP_STRATEGY:
            self._park(pinfo)
            return UNSCHEDULABLE_PODS
        if strategy == QUEUE_AFTER_BACKOFF and self.is_backing_off(pinfo):
            return BACKOFF_Q if self._add_to_backoff(pinfo) else UNSCHEDULABLE_PODS
        return ACTIVE_Q if self._add_to_active(pinfo) else UNSCHEDULABLE_PODS

    def _move_pods(self, pinfos, event: ClusterEvent, old=None, new=None) -> None:
        if not self.is_event_of_interest(event):
            return
        for pinfo in pinfos:
            if self.queueing_hints:
                if pinfo.gated and not any(ev.match(event, True) for ev in pinfo.gating_events):
                    continue
                strategy = self._worth_requeuing_v136(pinfo, event, old, new)
                if strategy == QUEUE_SKIP_STRATEGY:
                    continue
                self._unsched.pop(pinfo.pod.key, None)
                self._requeue(pinfo, strategy)
                continue
            if not self._worth_requeuing(pinfo, event):
                continue
            self._unsched.pop(pinfo.pod.key, None)
            if self.is_backing_off(pinfo):
                self._add_to_backoff(pinfo)
            else:
                self._add_to_active(pinfo)
        self.move_request_cycle = self.scheduling_cycle
        if self.queueing_hints and self._flight_at:
            self._flight_log.append((event, old, new))

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, pre_check=None, old=None, new=None) -> None:
        """MoveAllToActiveOrBackoffQueue: unschedulable pods (passing ``pre_check``) the event may help; ``old`` and
        ``new`` are the changed object before and after (what 1.36's hints read)."""
        if not self.is_event_of_interest(event):
            return
        pinfos = [p for p in self._unsched.values() if pre_check is None or pre_check(p.pod)]
        self._move_pods(pinfos, event, old, new)

    def _with_matching_affinity_term(self, pod) -> list:
        ns_labels = self._namespace_labels() if self._namespace_labels is not None else {}
        out = []
        for pinfo in self._unsched.values():
            for term in pinfo.pod.affinity_required:
                if term.matches(pod, ns_labels):
                    out.append(pinfo)
                    break
        return out

    def assigned_pod_added(self, pod) -> None:
        """A bound pod appeared: pods whose required pod affinity it satisfies may fit now (1.30; 1.36 moves every
        pod through the hints)."""
        self._move_pods(self._with_matching_affinity_term(pod), ASSIGNED_POD_ADD)

    def assigned_pod_updated(self, old, new) -> None:
        self._move_pods(self._with_matching_affinity_term(new), ASSIGNED_POD_UPDATE)

    # -- periodic flushes --------------------------------------------------------------------
    def pop_all_backoff_completed(self) -> list:
        """popAllBackoffCompleted: the pods whose backoff ended, leaving the backoffQ in its order (at 1.36 the
        podBackoffQ's first, then the podErrorBackoffQ's)."""
        completed = []
        for heap in (self._backoff, self._error_backoff):
            while True:
                pinfo = heap.peek()
                if pinfo is None or self.is_backing_off(pinfo):
                    break
                completed.append(heap.pop())
        return completed

    def flush_backoff_q_completed(self) -> None:
        """Pods whose backoff expired go to activeQ (every second in kube)."""
        for pinfo in self.pop_all_backoff_completed():
            self._add_to_active(pinfo, moves_from_backoff=True)

    def flush_backoff_q_all(self) -> int:
        """Move every backoffQ pod to activeQ in backoffQ order, as if their backoff had expired."""
        moved = 0
        for heap in (self._backoff, self._error_backoff):
            while True:
                pinfo = heap.pop()
                if pinfo is None:
                    break
                self._add_to_active(pinfo, moves_from_backoff=True)
                moved += 1
        return moved

    def flush_unschedulable_pods_leftover(self) -> None:
        """Pods parked in unschedulablePods for longer than the maximum (5 min) are moved."""
        now = self._now_ns()
        stale = [p for p in self._unsched.values() if now - p.timestamp > self._max_unsched_ns]
        if stale:
            self._move_pods(stale, UNSCHEDULABLE_TIMEOUT)

    def tick(self) -> None:
        """Run the periodic flushes that are due (1 s backoffQ, 30 s unschedulablePods) by the clock."""
        now = self.clock.now()
        if now >= self._next_backoff_flush:
            self.flush_backoff_q_completed()
            self._next_backoff_flush = self._next_window(now) if self.pop_from_backoff else now + BACKOFF_FLUSH_PERIOD
        if now >= self._next_unsched_flush:
            self.flush_unschedulable_pods_leftover()
            self._next_unsched_flush = now + UNSCHEDULABLE_FLUSH_PERIOD

    def next_wakeup(self):
        """When a periodic flush will next move a pod (seconds), or None: the first 1 s backoffQ flush
        after the earliest backoff expiry, or the first 30 s flush after a pod's 5 minutes are up."""
        times = []
        heads = [h for h in (self._backoff.peek(), self._error_backoff.peek()) if h is not None]
        if heads:
            wait = max(min(self.backoff_expiry_ns(h) for h in heads), 0) / NS - self._next_backoff_flush
            times.append(self._next_backoff_flush + max(0, math.ceil(wait / BACKOFF_FLUSH_PERIOD))
                         * BACKOFF_FLUSH_PERIOD)
        stamps = [p.timestamp for p in self._unsched.values() if not p.gated]
        if stamps:
            wait = (min(stamps) + self._max_unsched_ns) / NS - self._next_unsched_flush
            times.append(self._next_unsched_flush + max(0, math.floor(wait / UNSCHEDULABLE_FLUSH_PERIOD) + 1)
                         * UNSCHEDULABLE_FLUSH_PERIOD)
        return min(times) if times else None

    # -- nominator ---------------------------------------------------------------------------
    def _nominator_delete(self, pod) -> None:
        node = self._nominated_node.pop(pod.uid, None)
        if node is None:
            return
        pods = self._nominated.get(node)
        if pods:
            for i, p in enumerate(pods):
                if p.uid == pod.uid:
                    del pods[i]
                    for listener in self.nomination_listeners:
                        listener(-1, node, p)
                    break
            if not pods:
                del self._nominated[node]

    def add_nominated_pod(self, pod, nominating_info: NominatingInfo | None) -> None:
        """Record the pod's nomination: the given node (override), or its status.nominatedNodeName."""
        self._nominator_delete(pod)
        if nominating_info is not None and nominating_info.mode == "override":
            node = nominating_info.node_name
        else:
            node = pod.nominated_node_name
        if not node:
            return
        if self._pod_lister is not None:
            live = self._pod_lister(pod.namespace, pod.name)
            if live is None or live.node_name:
                return
        self._nominated_node[pod.uid] = node
        self._nominated.setdefault(node, []).append(pod)
        for listener in self.nomination_listeners:
            listener(1, node, pod)

    def delete_nominated_pod_if_exists(self, pod) -> None:
        self._nominator_delete(pod)

    def update_nominated_pod(self, old, new) -> None:
        """Keep a nomination made in memory when an update carries none (and neither did the old pod)."""
        info = None
        if not old.nominated_node_name and not new.nominated_node_name:
            node = self._nominated_node.get(old.uid)
            if node is not None:
                info = NominatingInfo("override", node)
        self._nominator_delete(old)
        self.add_nominated_pod(new, info)

    def nominated_pods_for_node(self, node_name: str) -> tuple:
        """Pods nominated to a node (a copy; callers may change the nominations while iterating)."""
        pods = self._nominated.get(node_name)
        return tuple(pods) if pods else ()

    def nominated_node_names(self):
        """Names of the nodes that have nominated pods."""
        return self._nominated.keys()

    def nominated_node_of(self, pod):
        return self._nominated_node.get(pod.uid)

    # -- introspection -----------------------------------------------------------------------
    def pending_pods(self) -> tuple:
        """(pods in activeQ, backoffQ and unschedulablePods, kube's summary string)."""
        active = [p.pod for p in self._active.items()]
        backoff = [p.pod for p in self._backoff.items()] + [p.pod for p in self._error_backoff.items()]
        unsched = [p.pod for p in self._unsched.values()]
        return active + backoff + unsched, self.summary()

    def summary(self) -> str:
        return (f"activeQ:{len(self._active)}; backoffQ:{self.num_backoff()}; "
                f"unschedulablePods:{len(self._unsched)}")

    def num_active(self) -> int:
        return len(self._active)

    def num_backoff(self) -> int:
        return len(self._backoff) + len(self._error_backoff)

    def num_unschedulable(self) -> int:
        return len(self._unsched)

    def pod_info(self, key: str):
        """The QueuedPodInfo of a pod (by namespace/name) wherever it is, in flight included."""
        for store in (self._active, self._backoff, self._error_backoff):
            pinfo = store.get(key)
            if pinfo is not None:
                return pinfo
        pinfo = self._unsched.get(key)
        if pinfo is not None:
            return pinfo
        for pinfo in self._in_flight.values():
            if pinfo.pod.key == key:
                return pinfo
        return None

    def describe(self, key: str):
        """A pod's queue state as a JSON-able dict (times in seconds), or None."""
        pinfo = self.pod_info(key)
        if pinfo is None:
            return None
        backoff = self.backoff_expiry_ns(pinfo) if pinfo.attempts else None
        if backoff == ZERO_TIME:
            backoff = None
        return {"pod": key, "queue": pinfo.queue, "attempts": pinfo.attempts, "gated": pinfo.gated,
                "gated_by": list(pinfo.gated_by) if pinfo.gated_by else None,
                "timestamp": pinfo.timestamp / NS,
                "initial_attempt_timestamp": (pinfo.initial_attempt_timestamp / NS
                                              if pinfo.initial_attempt_timestamp is not None else None),
                "backoff_expiry": backoff / NS if backoff is not None else None,
                "unschedulable_plugins": sorted(pinfo.unschedulable_plugins),
                "pending_plugins": sorted(pinfo.pending_plugins),
                "last_failure_plugins": list(pinfo.last_failure_plugins), "last_failure": pinfo.last_failure,
                "nominated_node": self._nominated_node.get(pinfo.pod.uid)}


def _strip_for_update(raw: dict) -> dict:
    meta = dict(raw.get("metadata") or {})
    for k in ("resourceVersion", "generation", "managedFields", "finalizers"):
        meta.pop(k, None)
    out = {k: v for k, v in raw.items() if k not in ("metadata", "status")}
    out["metadata"] = meta
    claims = (raw.get("status") or {}).get("resourceClaimStatuses")
    if claims:
        out["status"] = {"resourceClaimStatuses": claims}
    return out


def is_pod_updated(old, new) -> bool:
    """isPodUpdated: a change other than resourceVersion, generation, status, managedFields, finalizers."""
    return _strip_for_update(old.raw) != _strip_for_update(new.raw)


def _scaled_down(new, old) -> bool:
    """extractPodScaleDown: a resource the old pod requested is gone or smaller."""
    new_req = new.requests
    return any(k not in new_req or v > new_req[k] for k, v in old.requests.items())


def pod_scheduling_properties_change(new, old, resource: str) -> list:
    """PodSchedulingPropertiesChange (1.36): the events of a pod update, ``resource`` AssignedPod or
    UnschedulablePod; a change none of the extractors names is a plain Update."""
    events = []
    if new.labels != old.labels:
        events.append(UPDATE_POD_LABEL)
    if _scaled_down(new, old):
        events.append(UPDATE_POD_SCALE_DOWN)
    if not new.scheduling_gates and old.scheduling_gates:
        events.append(UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len((new.raw.get("spec") or {}).get("tolerations") or ()) != \
            len((old.raw.get("spec") or {}).get("tolerations") or ()):
        events.append(UPDATE_POD_TOLERATION)
    new_status, old_status = new.raw.get("status") or {}, old.raw.get("status") or {}
    if any((new_status.get(f) or None) != (old_status.get(f) or None)
           for f in ("resourceClaimStatuses", "extendedResourceClaimStatus")):
        events.append(UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    return [event_v136(resource, a) for a in events] or [event_v136(resource, UPDATE)]
