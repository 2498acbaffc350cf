"""kube's pkg/scheduler/backend/queue/scheduling_queue_test.go (v1.36.2) with queueing hints on: isPodWorthRequeuing
and the in-flight pods and events (Test_InFlightPods).

Not translated: Test_InFlightPods' cases with hints off (the 1.30 queue, tests/upstream/test_scheduling_queue.py),
its "All Pods ... enqueued back to activeQ", "One intermediate Pod ...", "popped pod preserves ..." and "Pop is made
twice ..." cases (the first two repeat the backoffQ case with more pods, the last two check Go's pointer reuse).
Upstream's queueing hint map is keyed by the empty profile name; here by the pods' "default-scheduler".
"""
from __future__ import annotations

import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.framework.interface import QUEUE, QUEUE_SKIP
from scheduler_core.objects import Node, Pod
from scheduler_core.queue import (ACTIVE_Q, ADD, ALL, BACKOFF_Q, FORCE_ACTIVATE, QUEUE_AFTER_BACKOFF,
                                  QUEUE_IMMEDIATELY, QUEUE_SKIP_STRATEGY, UNSCHEDULABLE_PODS, UNSCHEDULABLE_TIMEOUT,
                                  UPDATE, UPDATE_NODE_LABEL, UPDATE_NODE_TAINT, WILDCARD, ClusterEvent, PriorityQueue,
                                  QueuedPodInfo, event_v136)

UPSTREAM = "pkg/scheduler/backend/queue/scheduling_queue_test.go"
UPSTREAM_VERSION = "v1.36.2 (openshift/microshift deps/github.com/openshift/kubernetes)"
UPSTREAM_CASES = 20

PROFILE = "default-scheduler"
NODE_ADD = ClusterEvent("Node", ADD)
PV_ADD = ClusterEvent("PersistentVolume", ADD)
PV_UPDATE = ClusterEvent("PersistentVolume", UPDATE)
PVC_ADD = ClusterEvent("PersistentVolumeClaim", ADD)
ASSIGNED_POD_ADD = event_v136("AssignedPod", ADD)


def make_pod(name, uid, namespace=""):
    return Pod({"metadata": {"name": name, "namespace": namespace, "uid": uid}, "spec": {}})


def make_node():
    return Node({"metadata": {"name": "node"}})


def priority_less(a, b):
    pa, pb = a.pod.priority, b.pod.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


class Hints:
    """upstream's queueHintReturnQueue / queueHintReturnSkip / queueHintReturnErr, counting their calls."""

    def __init__(self):
        self.count = 0

    def queue(self, pod, old, new):
        self.count += 1
        return QUEUE

    def skip(self, pod, old, new):
        self.count += 1
        return QUEUE_SKIP

    def err(self, pod, old, new):
        self.count += 1
        raise ValueError("unexpected error")


def hinted_queue(regs, clock=None):
    """A 1.36 queue whose only profile has these (event, plugin, hint) registrations."""
    return PriorityQueue(priority_less, clock=clock or FakeClock(1000.0), events={PROFILE: regs},
                         queueing_hints=True, pop_from_backoff=True, backoff_by_counts=True)


def pod_info(pod, unschedulable=(), pending=()):
    pinfo = QueuedPodInfo(pod, 0)
    pinfo.unschedulable_plugins = set(unschedulable)
    pinfo.pending_plugins = set(pending)
    return pinfo


POD1 = make_pod("pod1", "1", "ns1")


# -- Test_isPodWorthRequeuing ------------------------------------------------------------------------------------
def _worth_cases(h):
    return {
        "return Queue when no queueing hint function is registered for the event":
            (pod_info(POD1, ["fooPlugin1"]), NODE_ADD, None, make_node(), QUEUE_SKIP_STRATEGY, 0,
             [(ASSIGNED_POD_ADD, "fooPlugin1", h.queue)]),
        "Treat the event as Queue when QueueHintFn returns error":
            (pod_info(POD1, ["fooPlugin1"]), NODE_ADD, None, make_node(), QUEUE_AFTER_BACKOFF, 1,
             [(NODE_ADD, "fooPlugin1", h.err)]),
        "return Queue when the event is wildcard":
            (pod_info(POD1, ["fooPlugin1"]), UNSCHEDULABLE_TIMEOUT, None, None, QUEUE_AFTER_BACKOFF, 0, []),
        "return Queue when the event is wildcard and the wildcard targets the pod to be requeued right now":
            (pod_info(POD1, ["fooPlugin1"]), FORCE_ACTIVATE, None, make_pod("pod1", "1", "ns1"),
             QUEUE_AFTER_BACKOFF, 0, []),
        "return Skip when the event is wildcard, but the wildcard targets a different pod":
            (pod_info(POD1, ["fooPlugin1"]), FORCE_ACTIVATE, None, make_pod("pod-different", "2", "ns2"),
             QUEUE_SKIP_STRATEGY, 0, []),
        "interprets Queue from the Pending plugin as queueImmediately":
            (pod_info(POD1, ["fooPlugin1", "fooPlugin3"], ["fooPlugin2"]), NODE_ADD, None, make_node(),
             QUEUE_IMMEDIATELY, 2, [(NODE_ADD, "fooPlugin1", h.queue), (NODE_ADD, "fooPlugin2", h.queue),
                                    (NODE_ADD, "fooPlugin3", h.queue), (NODE_ADD, "fooPlugin4", h.err)]),
        "interprets Queue from the Unschedulable plugin as queueAfterBackoff":
            (pod_info(POD1, ["fooPlugin1", "fooPlugin2"]), NODE_ADD, None, make_node(), QUEUE_AFTER_BACKOFF, 2,
             [(NODE_ADD, "fooPlugin1", h.skip), (NODE_ADD, "fooPlugin2", h.queue)]),
        "Queueing hint function that isn't from the plugin in UnschedulablePlugins/PendingPlugins is ignored":
            (pod_info(POD1, ["fooPlugin1", "fooPlugin2"]), NODE_ADD, None, make_node(), QUEUE_SKIP_STRATEGY, 2,
             [(NODE_ADD, "fooPlugin1", h.skip), (NODE_ADD, "fooPlugin2", h.skip), (NODE_ADD, "fooPlugin3", h.queue)]),
        "If event is specific Node update event, queueing hint function for NodeUpdate/UpdateNodeLabel is also "
        "executed":
            (pod_info(POD1, ["fooPlugin1", "fooPlugin2"]), ClusterEvent("Node", UPDATE_NODE_LABEL), None,
             make_node(), QUEUE_AFTER_BACKOFF, 1,
             [(ClusterEvent("Node", UPDATE_NODE_LABEL), "fooPlugin1", h.queue),
              (ClusterEvent("Node", UPDATE_NODE_LABEL), "fooPlugin2", h.queue),
              (ClusterEvent("Node", UPDATE), "fooPlugin1", h.queue), (NODE_ADD, "fooPlugin1", h.queue)]),
        "If event with '*' Resource, queueing hint function for specified Resource is also executed":
            (pod_info(POD1, ["fooPlugin1"]), NODE_ADD, None, make_node(), QUEUE_AFTER_BACKOFF, 1,
             [(ClusterEvent(WILDCARD, ADD), "fooPlugin1", h.queue)]),
        "If event is a wildcard one, queueing hint function for all kinds of events is executed":
            (pod_info(POD1, ["fooPlugin1"]), ClusterEvent("Node", UPDATE_NODE_LABEL | UPDATE_NODE_TAINT), None,
             make_node(), QUEUE_AFTER_BACKOFF, 1, [(ClusterEvent(WILDCARD, ALL), "fooPlugin1", h.queue)]),
    }


@pytest.mark.parametrize("name", list(_worth_cases(Hints())))
def test_is_pod_worth_requeuing(name):
    h = Hints()
    pinfo, event, old, new, want, calls, regs = _worth_cases(h)[name]
    q = hinted_queue(regs)
    assert q._worth_requeuing_v136(pinfo, event, old, new) == want
    assert h.count == calls


# -- Test_InFlightPods (hints on) --------------------------------------------------------------------------------
TARGET1 = make_pod("targetpod", "pod1")
TARGET2 = make_pod("targetpod2", "pod2")


def _flight_cases(h):
    """(initial pods, actions, queueing hint registrations, in-flight pods, in-flight log, where the pods are)."""
    return {
        "Pod and interested events are registered in inFlightPods/inFlightEvents": (
            [TARGET1], [("event", PVC_ADD), ("pop", TARGET1), ("event", PV_ADD), ("event", PV_UPDATE)],
            [(PV_ADD, "fooPlugin1", h.queue)], ["pod1"], ["pod1", PV_ADD], {}),
        "Pod, registered in inFlightPods, is enqueued back to backoffQ": (
            [TARGET1, TARGET2], [("event", PVC_ADD), ("pop", TARGET1), ("event", PV_ADD), ("pop", TARGET2),
                                 ("event", NODE_ADD), ("enqueue", TARGET1, (), ())],
            [(PV_ADD, "fooPlugin1", h.queue), (NODE_ADD, "fooPlugin1", h.queue), (PVC_ADD, "fooPlugin1", h.queue)],
            ["pod2"], ["pod2", NODE_ADD], {"targetpod": BACKOFF_Q}),
        "events before popping Pod are ignored when Pod is enqueued back to queue": (
            [TARGET1], [("event", UNSCHEDULABLE_TIMEOUT), ("pop", TARGET1), ("event", ASSIGNED_POD_ADD),
                        ("enqueue", TARGET1, ("fooPlugin1",), ())],
            [(ASSIGNED_POD_ADD, "fooPlugin1", h.skip)], [], [], {"targetpod": UNSCHEDULABLE_PODS}),
        "pod is enqueued to backoff if no failed plugin": (
            [TARGET1], [("pop", TARGET1), ("event", ASSIGNED_POD_ADD), ("enqueue", TARGET1, (), ())],
            [(ASSIGNED_POD_ADD, "fooPlugin1", h.queue)], [], [], {"targetpod": BACKOFF_Q}),
        "pod is enqueued to unschedulable pod pool if no events that can make the pod schedulable": (
            [TARGET1], [("pop", TARGET1), ("event", NODE_ADD), ("enqueue", TARGET1, ("fooPlugin1",), ())],
            [(ASSIGNED_POD_ADD, "fooPlugin1", h.queue)], [], [], {"targetpod": UNSCHEDULABLE_PODS}),
        "pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn but it returns Skip": (
            [TARGET1], [("pop", TARGET1), ("event", ASSIGNED_POD_ADD), ("enqueue", TARGET1, ("fooPlugin1",), ())],
            [(ASSIGNED_POD_ADD, "fooPlugin1", h.skip)], [], [], {"targetpod": UNSCHEDULABLE_PODS}),
        "pod is enqueued to activeQ because the Pending plugins has a hint fn and it returns Queue": (
            [TARGET1], [("pop", TARGET1), ("event", ASSIGNED_POD_ADD),
                        ("enqueue", TARGET1, ("fooPlugin2", "fooPlugin3"), ("fooPlugin1",))],
            [(ASSIGNED_POD_ADD, "fooPlugin3", h.skip), (ASSIGNED_POD_ADD, "fooPlugin2", h.queue),
             (ASSIGNED_POD_ADD, "fooPlugin1", h.queue)], [], [], {"targetpod": ACTIVE_Q}),
        "pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns Queue": (
            [TARGET1], [("pop", TARGET1), ("event", ASSIGNED_POD_ADD),
                        ("enqueue", TARGET1, ("fooPlugin1", "fooPlugin2"), ())],
            [(ASSIGNED_POD_ADD, "fooPlugin2", h.skip), (ASSIGNED_POD_ADD, "fooPlugin1", h.queue)], [], [],
            {"targetpod": BACKOFF_Q}),
        "pod is enqueued to activeQ because the pending plugin has a hint fn and it returns Queue for a concurrent "
        "event that was received while some other pod was in flight": (
            [TARGET1, TARGET2], [("pop", TARGET1), ("event", NODE_ADD), ("pop", TARGET2),
                                 ("event", ASSIGNED_POD_ADD), ("enqueue", TARGET1, (), ()),
                                 ("enqueue", TARGET2, ("fooPlugin2", "fooPlugin3"), ("fooPlugin1",))],
            [(ASSIGNED_POD_ADD, "fooPlugin3", h.skip), (ASSIGNED_POD_ADD, "fooPlugin2", h.queue),
             (ASSIGNED_POD_ADD, "fooPlugin1", h.queue)], [], [], {"targetpod2": ACTIVE_Q, "targetpod": BACKOFF_Q}),
    }


@pytest.mark.parametrize("name", list(_flight_cases(Hints())))
def test_in_flight_pods(name):
    initial, actions, regs, want_pods, want_log, want_where = _flight_cases(Hints())[name]
    q = hinted_queue(regs)
    for pod in initial:
        q.add(pod)
    popped = {}
    for action in actions:
        if action[0] == "event":
            q.move_all_to_active_or_backoff_queue(action[1])
        elif action[0] == "pop":
            pinfo = q.pop()
            assert pinfo.pod.uid == action[1].uid
            popped[pinfo.pod.uid] = pinfo
        else:
            _, pod, unschedulable, pending = action
            pinfo = popped[pod.uid]
            pinfo.unschedulable_plugins, pinfo.pending_plugins = set(unschedulable), set(pending)
            q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle)
    assert sorted(q._flight_at) == want_pods
    log = [e for e in q._flight_log if e is not None]
    assert [e[1] if e[0] == "pod" else e[0] for e in log] == want_log
    for podname, where in want_where.items():
        assert q.pod_info(f"default/{podname}").queue == where
