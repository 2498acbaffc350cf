"""The scheduling loop's queue at 1.36 over a SimulatedCluster (queueing hints, in-flight events, the split
backoffQ and Pop from the backoffQ), beside 1.30's on the same cluster."""
from __future__ import annotations

import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.objects import Node, Pod
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.queue import ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_PODS
from scheduler_core.scheduler import Scheduler
from tests.core.loop_fixtures import node, node_raw, pod, pod_raw


def make(nodes, pods, version="1.36"):
    clock = FakeClock(1000.0)
    cluster = SimulatedCluster(nodes, pods, clock=clock)
    sched = Scheduler(cluster, registry=in_tree_registry(), clock=clock, tie_break="name", kube_version=version)
    return cluster, sched, clock


def where(sched, key):
    return sched.queue.pod_info(key).queue


@pytest.mark.parametrize("version", ["1.30", "1.36"])
def test_a_node_that_fits_moves_the_pod_and_pop_takes_it_from_the_backoff_queue(version):
    """Rejected by NodeResourcesFit, the pod waits in unschedulablePods. A new node with room moves it to the
    backoffQ (its 1 s backoff runs); 1.36 pops it from there at once since the activeQ is empty, 1.30 waits for
    the flush."""
    cluster, sched, clock = make([node("n1", cpu="2")], [pod("big", cpu="3")], version)
    sched.run_until_idle()
    assert where(sched, "default/big") == UNSCHEDULABLE_PODS
    cluster.add_node(node("n2", cpu="4"))
    assert where(sched, "default/big") == BACKOFF_Q
    sched.run_until_idle()
    if version == "1.36":
        assert cluster.placements()["default/big"] == "n2"
    else:
        assert cluster.placements()["default/big"] is None and where(sched, "default/big") == BACKOFF_Q
        clock.advance(1.0)
        sched.queue.tick()
        sched.run_until_idle()
        assert cluster.placements()["default/big"] == "n2"


def test_node_events_go_through_the_fit_hint():
    """At 1.36 NodeResourcesFit's hint keeps the pod for a new node it cannot fit alone and for a label change (not
    an event Fit registers), and moves it when a node's allocatable grows enough."""
    cluster, sched, _clock = make([node("n1", cpu="2")], [pod("big", cpu="3")])
    sched.run_until_idle()
    cluster.add_node(node("n2", cpu="2", labels={"zone": "b"}))
    assert where(sched, "default/big") == UNSCHEDULABLE_PODS
    cluster.update_node(Node(node_raw("n1", cpu="2", labels={"zone": "a"})))
    assert where(sched, "default/big") == UNSCHEDULABLE_PODS
    cluster.update_node(Node(node_raw("n1", cpu="4", labels={"zone": "a"})))
    assert where(sched, "default/big") == BACKOFF_Q


def test_scheduling_gates_removed_move_the_pod_through_the_hint():
    cluster, sched, _clock = make([node("n1")], [pod("gated", gates=["wait"])])
    sched.run_until_idle()
    pinfo = sched.queue.pod_info("default/gated")
    assert pinfo.queue == UNSCHEDULABLE_PODS and pinfo.gated
    assert [e.action for e in pinfo.gating_events]   # SchedulingGates' UpdatePodSchedulingGatesEliminated
    labelled = Pod(pod_raw("gated", gates=["wait"], labels={"x": "y"}))
    cluster.update_pod(labelled)   # not the gating plugin's event: stays
    assert where(sched, "default/gated") == UNSCHEDULABLE_PODS
    cluster.update_pod(Pod(pod_raw("gated", labels={"x": "y"})))
    assert where(sched, "default/gated") == ACTIVE_Q
    sched.run_until_idle()
    assert cluster.placements()["default/gated"] == "n1"


def test_a_bound_pod_deleted_moves_only_pods_its_resources_can_help():
    """NodeResourcesFit's hint at 1.36: a bound pod's deletion moves the pod it rejected; NodePorts' hint keeps a pod
    whose port the deleted pod did not hold."""
    cluster, sched, _clock = make([node("n1", cpu="2")], [pod("filler", cpu="1500m", node_name="n1"),
                                                          pod("big", cpu="1"),
                                                          pod("porty", cpu="10m", ports=[80])])
    cluster.add_pod(pod("holder", cpu="10m", node_name="n1", ports=[80]))
    sched.run_until_idle()
    assert where(sched, "default/big") == UNSCHEDULABLE_PODS
    assert where(sched, "default/porty") == UNSCHEDULABLE_PODS
    cluster.delete_pod(cluster.pods["default/filler"])
    assert where(sched, "default/big") in (ACTIVE_Q, BACKOFF_Q)
    assert where(sched, "default/porty") == UNSCHEDULABLE_PODS
    cluster.delete_pod(cluster.pods["default/holder"])
    assert where(sched, "default/porty") in (ACTIVE_Q, BACKOFF_Q)
    sched.run_until_idle()
    assert cluster.placements()["default/big"] == "n1" and cluster.placements()["default/porty"] == "n1"


def test_in_flight_events_are_dropped_once_no_pod_needs_them():
    cluster, sched, _clock = make([node("n1")], [pod(f"p{i}") for i in range(3)])
    sched.run_until_idle()
    assert set(cluster.placements().values()) == {"n1"}
    assert not sched.queue._flight_at and not [e for e in sched.queue._flight_log if e is not None]


def test_errors_back_off_in_the_error_queue_and_are_not_popped_early():
    """A pod that failed with an error (no rejecting plugin) waits in the podErrorBackoffQ, which Pop never takes
    from: it leaves at the flush after its backoff."""
    cluster, sched, clock = make([node("n1")], [pod("p")])
    pinfo = sched.queue.pop()
    pinfo.unschedulable_plugins = set()
    sched.queue.add_unschedulable_if_not_present(pinfo, sched.queue.scheduling_cycle)
    assert pinfo.queue == BACKOFF_Q and pinfo.consecutive_errors_count == 1 and sched.queue.num_poppable() == 0
    assert sched.run_until_idle() == 0
    clock.advance(2.0)
    sched.queue.tick()
    assert pinfo.queue == ACTIVE_Q


class Recreator:
    """A Filter plugin that, on its first call, deletes the pod and creates another of the same name (a new uid),
    then rejects the node."""

    name = "Recreator"

    def __init__(self, handle):
        self.handle = handle
        self.done = False

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def filter(self, state, pod, node_info):
        from scheduler_core.framework.status import Code, Status
        if not self.done:
            self.done = True
            client = self.handle.client
            client.delete_pod(pod)
            client.add_pod(Pod(pod_raw(pod.name, cpu="100m") | {"metadata": {"name": pod.name, "namespace": "default",
                                                                               "uid": "new-uid"}}))
        return Status(Code.UNSCHEDULABLE, "recreated")


@pytest.mark.parametrize("version, events", [("1.30", 1), ("1.36", 0)])
def test_a_pod_recreated_during_its_attempt_gets_nothing_from_it(version, events):
    """1.36's handleSchedulingFailure drops the failure of a pod recreated meanwhile; 1.30 records it."""
    from scheduler_core.config import load_config
    from scheduler_core.framework.interface import FilterPlugin
    plugin = type("Recreator", (Recreator, FilterPlugin), {})
    registry = dict(in_tree_registry(), Recreator=plugin)
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler",
                                     "plugins": {"filter": {"enabled": [{"name": "Recreator"}]}}}]},
                      registry, kube_version=version)
    clock = FakeClock(1000.0)
    cluster = SimulatedCluster([node("n1")], [pod("p")], clock=clock)
    sched = Scheduler(cluster, cfg, registry=registry, clock=clock, tie_break="name")
    sched.schedule_one()
    assert cluster.pods["default/p"].uid == "new-uid"
    failed = [e for e in cluster.events if e["reason"] == "FailedScheduling"]
    assert len(failed) == events
    assert sched.queue.pod_info("default/p").pod.uid == "new-uid"


def test_backoff_flushes_stay_on_whole_seconds():
    """With SchedulerPopFromBackoffQ the backoffQ is flushed on the ordering windows' edges, however late a tick
    comes (1.30: one period after the last flush)."""
    _cluster, sched, clock = make([node("n1")], [])
    clock.set(1000.4)
    sched.queue.tick()
    assert sched.queue._next_backoff_flush == 1001.0
    clock.set(1001.7)
    sched.queue.tick()
    assert sched.queue._next_backoff_flush == 1002.0
    _cluster, old, clock = make([node("n1")], [], "1.30")
    clock.set(1000.4)
    old.queue.tick()
    assert old.queue._next_backoff_flush == 1001.4
