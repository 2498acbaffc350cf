"""kube's pkg/scheduler/internal/queue/scheduling_queue_test.go: backoff, flushing, moving on events and the
per-pod attempt counters, with queueing hints off (v1.30's default).

Times are nanoseconds of a fake clock that starts at 0. Not translated: the queueing-hint tables
(Test_InFlightPods with hints on, Test_isPodWorthRequeuing: hints are off in v1.30), the metrics tables and the
imperative tests without a table.
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.objects import Pod
from scheduler_core.framework.status import Code, Status
from scheduler_core.queue import (ACTIVE_Q, ALL, BACKOFF_Q, UNSCHEDULABLE_PODS, UNSCHEDULABLE_TIMEOUT, ClusterEvent,
                                  PriorityQueue, QueuedPodInfo)

UPSTREAM = "pkg/scheduler/internal/queue/scheduling_queue_test.go"
UPSTREAM_VERSION = "v1.29/v1.30 era (internal/queue, QueueingHintMapPerProfile; stored copy id 41114673)"
UPSTREAM_CASES = 39

MS = 1_000_000
SECOND = 1_000_000_000
TEST_EVENT = ClusterEvent("test", ALL)


def make_pod(name, namespace="default", priority=0, labels=None, uid=None, annotations=None, nominated=""):
    raw = {"metadata": {"name": name, "namespace": namespace, "uid": uid or f"{namespace}-{name}",
                        "labels": labels or {}, "annotations": annotations or {}}, "spec": {"priority": priority}}
    if nominated:
        raw["status"] = {"nominatedNodeName": nominated}
    return Pod(raw)


def with_meta(pod, **meta):
    """A copy of the pod with metadata fields replaced (DeepCopy and edit)."""
    return Pod({**pod.raw, "metadata": {**pod.raw["metadata"], **meta}})


# upstream's shared pods
HIGH = make_pod("hpp", "ns1", 1000, uid="hppns1")
HIGH_NOMINATED = make_pod("hpp", "ns1", 1000, uid="hppns1", nominated="node1")
MED = make_pod("mpp", "ns2", 500, uid="mppns2", annotations={"annot2": "val2"}, nominated="node1")


def priority_less(a, b):
    """PrioritySort.Less."""
    pa, pb = a.pod.priority, b.pod.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


# -- TestBackOffFlow ----------------------------------------------------------------------------
BACKOFF_STEPS = [1 * SECOND, 2 * SECOND, 4 * SECOND, 8 * SECOND, 10 * SECOND, 10 * SECOND, 10 * SECOND]


def _backoff_step(clock, q, step):
    """One upstream step: pop (an attempt), fail with no rejecting plugin, an event; returns what it checks."""
    timestamp = round(clock.now() * SECOND)
    pinfo = q.pop()
    attempts = pinfo.attempts
    q.add_unschedulable_if_not_present(pinfo, step)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    in_backoff = pinfo.queue == BACKOFF_Q
    backoff = q.backoff_expiry_ns(pinfo) - timestamp
    clock.advance(1 * MS / SECOND)
    q.flush_backoff_q_completed()
    after_early_flush = pinfo.queue == BACKOFF_Q
    clock.advance(backoff / SECOND)
    q.flush_backoff_q_completed()
    return attempts, in_backoff, backoff, after_early_flush, pinfo.queue == BACKOFF_Q


@pytest.mark.parametrize("step", range(len(BACKOFF_STEPS)), ids=[f"step {i}" for i in range(len(BACKOFF_STEPS))])
def test_back_off_flow(step):
    """Upstream's steps share one queue and pod; each case replays the steps before it."""
    clock = FakeClock()
    q = PriorityQueue(priority_less, clock=clock)
    q.add(make_pod("test-pod", "test-ns"))
    for earlier in range(step):
        _backoff_step(clock, q, earlier)
    assert _backoff_step(clock, q, step) == (step + 1, True, BACKOFF_STEPS[step], True, False)


# -- TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks ------------------------------------------
PRE_ENQUEUE_CHECKS = {
    "nil PreEnqueueCheck": (None, ["p0", "p1", "p2", "p3", "p4"]),
    "move Pods with priority greater than 2": (lambda pod: pod.priority >= 2, ["p2", "p3", "p4"]),
    "move Pods with even priority and greater than 2": (lambda pod: pod.priority % 2 == 0 and pod.priority >= 2,
                                                        ["p2", "p4"]),
    "move Pods with even and negative priority": (lambda pod: pod.priority % 2 == 0 and pod.priority < 0, []),
}


@pytest.mark.parametrize("name", list(PRE_ENQUEUE_CHECKS))
def test_move_all_to_active_or_backoff_queue_pre_enqueue_checks(name):
    """The pods failed with "plugin"; v1.30's queue only moves on an event some plugin registered, so
    "plugin" registers TestEvent here (upstream's test queue has no registrations to consult)."""
    check, want = PRE_ENQUEUE_CHECKS[name]
    clock = FakeClock()
    q = PriorityQueue(priority_less, clock=clock, events={"default-scheduler": [(TEST_EVENT, "plugin")]})
    pods = [make_pod(f"p{i}", priority=i) for i in range(5)]
    for i, pod in enumerate(pods):
        q.add(pod)
        pinfo = q.pop()
        assert pinfo.pod is pod
        pinfo.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle)
        pinfo.timestamp = pinfo.timestamp + (i - len(pods)) * MS
    q.move_all_to_active_or_backoff_queue(TEST_EVENT, check)
    got = []
    while True:
        pinfo = q._backoff.pop()
        if pinfo is None:
            break
        got.append(pinfo.pod.name)
    assert got == want


# -- TestPriorityQueue_calculateBackoffDuration ---------------------------------------------------
BACKOFF_DURATION = {
    "normal": (1, 32, 16, 32),
    "overflow_32bit": (1, 2**31 - 1, 32, 2**31 - 1),
    "overflow_64bit": (1, 2**63 - 1, 64, 2**63 - 1),
}


@pytest.mark.parametrize("name", list(BACKOFF_DURATION))
def test_priority_queue_calculate_backoff_duration(name):
    initial_ns, max_ns, attempts, want = BACKOFF_DURATION[name]
    q = PriorityQueue(priority_less, clock=FakeClock(), initial_backoff=Fraction(initial_ns, SECOND),
                      max_backoff=Fraction(max_ns, SECOND))
    pinfo = QueuedPodInfo(make_pod("p"), 0)
    pinfo.attempts = attempts
    assert q.backoff_duration_ns(pinfo) == want


# -- TestPerPodSchedulingMetrics ----------------------------------------------------------------------
MAX_IN_UNSCHEDULABLE_NS = 5 * 60 * SECOND


def _created_and_scheduled(clock, q, pod):
    q.add(pod)


def _after_two_attempts(clock, q, pod, update=False):
    q.add(pod)
    pinfo = q.pop()
    pinfo.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(pinfo, 1)
    clock.set((MAX_IN_UNSCHEDULABLE_NS + 1) / SECOND)
    q.flush_unschedulable_pods_leftover()
    if update:
        new = Pod({**pod.raw, "metadata": {**pod.raw["metadata"], "generation": 1}})
        q.update(pod, new)


def _gated_then_ungated(clock, q, pod):
    q._pre_enqueue = {"default-scheduler": lambda p: None if "foo" in p.labels else _gated()}
    q.add(pod)
    assert q.describe(pod.key)["queue"] == UNSCHEDULABLE_PODS
    clock.advance(60)
    new = Pod({**pod.raw, "metadata": {**pod.raw["metadata"], "labels": {"foo": ""}}})
    q.update(pod, new)


def _gated():
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod name not in allowlists", plugin="preEnqueuePlugin")


PER_POD = {
    "pod is created and scheduled after 1 attempt": (_created_and_scheduled, 1, 0),
    "pod is created and scheduled after 2 attempts": (_after_two_attempts, 2, 0),
    "pod is created and scheduled after 2 attempts but before the second pop, call update": (
        lambda c, q, p: _after_two_attempts(c, q, p, update=True), 2, 0),
    "A gated pod is created and scheduled after lifting gate": (_gated_then_ungated, 1, 60 * SECOND),
}


@pytest.mark.parametrize("name", list(PER_POD))
def test_per_pod_scheduling_metrics(name):
    scenario, want_attempts, want_initial_ns = PER_POD[name]
    clock = FakeClock()
    q = PriorityQueue(priority_less, clock=clock)
    pod = make_pod("test-pod", "test-ns")
    scenario(clock, q, pod)
    pinfo = q.pop()
    assert pinfo.attempts == want_attempts
    assert pinfo.initial_attempt_timestamp == want_initial_ns


# -- TestPriorityQueue_Update ------------------------------------------------------------------------
def _in_active_already(q):
    q.update(None, HIGH)
    return HIGH, HIGH


def _in_backoff(q):
    pinfo = q._new_pinfo(MED)
    q._add_to_backoff(pinfo)
    return MED, MED


def _in_unschedulable(q, clock, step=0):
    pinfo = q._new_pinfo(MED)
    pinfo.unschedulable_plugins = {"plugin"}
    q._unsched[MED.key] = pinfo
    pinfo.queue = UNSCHEDULABLE_PODS
    clock.advance(step)
    return MED, with_meta(MED, annotations={**MED.annotations, "foo": "test" if not step else "test1"})


UPDATE = {
    "add highPriorityPodInfo to activeQ": (lambda q, c: (None, HIGH), ACTIVE_Q, False),
    "Update pod that didn't exist in the queue": (
        lambda q, c: (MED, with_meta(MED, annotations={**MED.annotations, "foo": "test"})), ACTIVE_Q, False),
    "Update highPriorityPodInfo and add a nominatedNodeName to it": (lambda q, c: (HIGH, HIGH_NOMINATED), ACTIVE_Q,
                                                                     True),
    "When updating a pod that is already in activeQ, the pod should remain in activeQ after Update()": (
        lambda q, c: _in_active_already(q), ACTIVE_Q, False),
    "When updating a pod that is in backoff queue and is still backing off, it will be updated in backoff queue": (
        lambda q, c: _in_backoff(q), BACKOFF_Q, False),
    "when updating a pod which is in unschedulable queue and is backing off, it will be moved to backoff queue": (
        lambda q, c: _in_unschedulable(q, c), BACKOFF_Q, False),
    "when updating a pod which is in unschedulable queue and is not backing off, it will be moved to active queue": (
        lambda q, c: _in_unschedulable(q, c, step=1), ACTIVE_Q, False),
}


@pytest.mark.parametrize("name", list(UPDATE))
def test_priority_queue_update(name):
    prepare, want_queue, want_nominated = UPDATE[name]
    clock = FakeClock()
    q = PriorityQueue(priority_less, clock=clock)
    old, new = prepare(q, clock)
    q.update(old, new)
    pinfo = q.pod_info(new.key)
    assert pinfo.queue == want_queue
    assert pinfo.pod is new
    if want_nominated:
        assert len(q._nominated) == 1


# -- TestPriorityQueue_Activate ------------------------------------------------------------------------
ACTIVATE = {
    "pod already in activeQ": ("active", 1),
    "pod not in unschedulablePods/podBackoffQ": (None, 0),
    "pod in unschedulablePods": ("unschedulable", 1),
    "pod in backoffQ": ("backoff", 1),
}


@pytest.mark.parametrize("name", list(ACTIVATE))
def test_priority_queue_activate(name):
    where, want_active = ACTIVATE[name]
    q = PriorityQueue(priority_less, clock=FakeClock())
    pinfo = q._new_pinfo(HIGH_NOMINATED)
    if where == "active":
        q._add_to_active(pinfo)
    elif where == "unschedulable":
        q._unsched[HIGH_NOMINATED.key] = pinfo
        pinfo.queue = UNSCHEDULABLE_PODS
    elif where == "backoff":
        q._add_to_backoff(pinfo)
    q.activate([HIGH_NOMINATED])
    assert len(q._active) == want_active
    if want_active:
        assert HIGH_NOMINATED.key in q._active


# -- TestPriorityQueue_addToActiveQ ------------------------------------------------------------------
def pre_enqueue(*allowlists):
    """preEnqueuePlugin{allowlists} per plugin, run in order: the first failing status."""
    def run(pod):
        for allowed in allowlists:
            if not any(label in allowed for label in pod.labels):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod name not in allowlists",
                              plugin="preEnqueuePlugin")
        return None
    return run


ADD_TO_ACTIVE = {
    "no plugins registered": (None, make_pod("p", labels={"p": ""}), 0, True),
    "preEnqueue plugin registered, pod name not in allowlists": (pre_enqueue((), ()), make_pod("p", labels={"p": ""}),
                                                                 1, False),
    "preEnqueue plugin registered, pod failed one preEnqueue plugin": (
        pre_enqueue(("foo", "bar"), ("foo",)), make_pod("bar", labels={"bar": ""}), 1, False),
    "preEnqueue plugin registered, pod passed all preEnqueue plugins": (
        pre_enqueue(("foo", "bar"), ("bar",)), make_pod("bar", labels={"bar": ""}), 0, True),
}


@pytest.mark.parametrize("name", list(ADD_TO_ACTIVE))
def test_priority_queue_add_to_active_q(name):
    run, pod, want_unschedulable, want_success = ADD_TO_ACTIVE[name]
    q = PriorityQueue(priority_less, clock=FakeClock(), initial_backoff=30, max_backoff=60,
                      pre_enqueue={"default-scheduler": run} if run is not None else None)
    assert q._add_to_active(q._new_pinfo(pod)) is want_success
    assert len(q._unsched) == want_unschedulable
    q.update(pod, with_meta(pod, annotations={"foo": ""}))     # an update event: a gated pod stays gated
    assert len(q._unsched) == want_unschedulable


# -- TestPodTimestamp / TestPriorityQueue_initPodMaxInUnschedulablePodsDuration -----------------------
T0 = 1000 * SECOND   # the fake clock's start ("timestamp" upstream)


def _q_with(ts1, ts2, max_in_unschedulable=None):
    kw = {} if max_in_unschedulable is None else {"max_in_unschedulable": max_in_unschedulable}
    q = PriorityQueue(priority_less, clock=FakeClock(T0 / SECOND), **kw)
    p1 = QueuedPodInfo(make_pod("test-pod-1", "ns1", uid="tp-1", nominated="node1"), ts1)
    p2 = QueuedPodInfo(make_pod("test-pod-2", "ns2", uid="tp-2", nominated="node2"), ts2)
    return q, p1, p2


def _add_active(q, p):
    q._active.add(p.pod.key, p)
    p.queue = ACTIVE_Q


def _add_unschedulable(q, p):
    q._unsched[p.pod.key] = p
    p.queue = UNSCHEDULABLE_PODS


def _active_order(q):
    out = []
    while True:
        p = q._active.pop()
        if p is None:
            return out
        out.append(p.pod.name)


def _timestamps_add(q, p1, p2):
    _add_active(q, p2)
    _add_active(q, p1)


def _timestamps_unschedulable_then_move(q, p1, p2):
    _add_unschedulable(q, p2)
    _add_unschedulable(q, p1)
    q.clock.advance(2)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)


def _timestamps_backoff_then_flush(q, p1, p2):
    _add_active(q, p2)
    q._add_to_backoff(p1)
    q.clock.advance(2)
    q.flush_backoff_q_completed()
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)


POD_TIMESTAMP = {
    "add two pod to activeQ and sort them by the timestamp": _timestamps_add,
    # activeQ.Update adds a pod it does not hold, as Add does
    "update two pod to activeQ and sort them by the timestamp": _timestamps_add,
    "add two pod to unschedulablePods then move them to activeQ and sort them by the timestamp":
        _timestamps_unschedulable_then_move,
    "add one pod to BackoffQ and move it to activeQ": _timestamps_backoff_then_flush,
}


@pytest.mark.parametrize("name", list(POD_TIMESTAMP))
def test_pod_timestamp(name):
    q, p1, p2 = _q_with(T0, T0 + SECOND)
    POD_TIMESTAMP[name](q, p1, p2)
    assert _active_order(q) == ["test-pod-1", "test-pod-2"]


MAX_IN_UNSCHEDULABLE = {
    "New priority queue by the default value of podMaxInUnschedulablePodsDuration": None,
    "New priority queue by user-defined value of podMaxInUnschedulablePodsDuration": 30,
}


@pytest.mark.parametrize("name", list(MAX_IN_UNSCHEDULABLE))
def test_priority_queue_init_pod_max_in_unschedulable_pods_duration(name):
    max_seconds = MAX_IN_UNSCHEDULABLE[name]
    q, p1, p2 = _q_with(T0 - SECOND, T0 - 2 * SECOND, max_in_unschedulable=max_seconds)
    _add_unschedulable(q, p1)
    _add_unschedulable(q, p2)
    q.clock.advance(max_seconds if max_seconds is not None else 5 * 60)   # flushUnschedulerQ
    q.flush_unschedulable_pods_leftover()
    assert _active_order(q) == ["test-pod-2", "test-pod-1"]
