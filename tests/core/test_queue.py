"""PriorityQueue: the cases of kube's scheduling_queue_test.go (queueing hints off), on a fake clock."""
import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.framework.status import Code, Status
from scheduler_core.objects import Pod
from scheduler_core.plugins.queuesort import PrioritySort
from scheduler_core.queue import (ACTIVE_Q, ADD, ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, BACKOFF_Q, DELETE,
                                  IN_FLIGHT, NODE_ADD, NODE_LABEL_CHANGE, UNSCHEDULABLE_PODS,
                                  UNSCHEDULABLE_TIMEOUT, UPDATE_NODE_TAINT, ClusterEvent, NominatingInfo,
                                  PriorityQueue, QueueError, is_pod_updated, parse_registration)
from tests.core.loop_fixtures import pod, pod_raw, required_pod_affinity

FIT = "NodeResourcesFit"
AFFINITY = "InterPodAffinity"
EVENTS = {"default-scheduler": [(ClusterEvent("Node", ADD), FIT), (ClusterEvent("Pod", DELETE), FIT),
                                (ClusterEvent("Pod", ADD), AFFINITY)]}


def gates(pod_):
    if pod_.scheduling_gates:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated", plugin="SchedulingGates")
    return None


def make_queue(clock=None, **kw):
    kw.setdefault("events", EVENTS)
    kw.setdefault("pre_enqueue", {"default-scheduler": gates})
    return PriorityQueue(PrioritySort().less, clock=clock or FakeClock(1000.0), **kw)


def fail(q, pinfo, *plugins, cycle=None):
    """What the failure handler does: record the rejecting plugins and requeue."""
    pinfo.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle if cycle is None else cycle)


def test_pop_order_priority_then_fifo():
    q = make_queue()
    for name, prio in (("a", 0), ("b", 10), ("c", 0), ("d", 10)):
        q.add(pod(name, priority=prio))
    assert [q.pop().pod.name for _ in range(4)] == ["b", "d", "a", "c"]
    assert q.pop() is None


def test_pop_counts_attempts_and_cycles_and_clears_rejectors():
    q = make_queue()
    q.add(pod("a"))
    p = q.pop()
    assert (p.attempts, q.scheduling_cycle, p.queue) == (1, 1, IN_FLIGHT)
    q.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE)  # a move during the attempt
    fail(q, p, FIT)
    assert p.queue == BACKOFF_Q
    q.clock.advance(10)
    q.flush_backoff_q_completed()
    p2 = q.pop()
    assert p2 is p and p.attempts == 2 and q.scheduling_cycle == 2 and not p.unschedulable_plugins


@pytest.mark.parametrize("initial,maximum,attempts,want", [
    (1, 10, 1, 1), (1, 10, 2, 2), (1, 10, 3, 4), (1, 10, 4, 8), (1, 10, 5, 10), (1, 10, 9, 10),
    (5, 5, 3, 5), (2, 7, 3, 7), (100, 100, 1, 100)])
def test_backoff_duration(initial, maximum, attempts, want):
    q = make_queue(initial_backoff=initial, max_backoff=maximum)
    q.add(pod("a"))
    p = q.pop()
    p.attempts = attempts
    assert q.backoff_duration_ns(p) == want * 1_000_000_000


def test_unschedulable_without_move_request_parks_the_pod():
    q = make_queue()
    q.add(pod("a"))
    p = q.pop()
    fail(q, p, FIT)
    assert p.queue == UNSCHEDULABLE_PODS and q.summary() == "activeQ:0; backoffQ:0; unschedulablePods:1"
    q.clock.advance(60)
    q.flush_backoff_q_completed()
    assert q.num_unschedulable() == 1


def test_failure_without_rejector_plugins_goes_to_backoff():
    q = make_queue()
    q.add(pod("a"))
    p = q.pop()
    fail(q, p)  # an Error: no plugin to wait for
    assert p.queue == BACKOFF_Q


def test_move_request_during_attempt_sends_to_backoff():
    q = make_queue()
    q.add(pod("a"))
    q.add(pod("b"))
    pa = q.pop()
    q.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE)
    fail(q, pa, FIT)
    assert pa.queue == BACKOFF_Q
    pb = q.pop()
    fail(q, pb, FIT)  # popped after the move: parked
    assert pb.queue == UNSCHEDULABLE_PODS


def test_backoff_timing_with_fake_clock():
    clock = FakeClock(0.0)
    q = make_queue(clock, initial_backoff=1, max_backoff=10)
    q.add(pod("a"))
    expected_waits = [1, 2, 4, 8, 10, 10]
    for wait in expected_waits:
        p = q.pop()
        q.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE)
        fail(q, p, FIT)
        assert p.queue == BACKOFF_Q
        clock.advance(wait - 0.001)
        q.flush_backoff_q_completed()
        assert p.queue == BACKOFF_Q and q.is_backing_off(p)
        clock.advance(0.002)
        q.flush_backoff_q_completed()
        assert p.queue == ACTIVE_Q


def test_tick_flushes_backoff_every_second():
    clock = FakeClock(0.0)
    q = make_queue(clock)
    q.add(pod("a"))
    p = q.pop()
    q.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE)
    fail(q, p, FIT)
    q.tick()  # t=0: nothing has expired
    assert p.queue == BACKOFF_Q
    assert q.next_wakeup() == 1.0
    clock.set(0.5)
    q.tick()  # the next flush is due at t=1
    assert p.queue == BACKOFF_Q
    clock.set(1.0)
    q.tick()
    assert p.queue == ACTIVE_Q


def test_unschedulable_leftover_flush_after_five_minutes():
    clock = FakeClock(0.0)
    q = make_queue(clock)
    q.add(pod("a"))
    p = q.pop()
    fail(q, p, FIT)
    q.tick()
    assert q.next_wakeup() == 330.0  # first 30 s flush strictly after 300 s
    clock.set(299.0)
    q.flush_unschedulable_pods_leftover()
    assert p.queue == UNSCHEDULABLE_PODS
    clock.set(300.5)
    q.flush_unschedulable_pods_leftover()
    assert p.queue == ACTIVE_Q  # wildcard event, backoff long over


def test_leftover_flush_goes_to_backoff_when_still_backing_off():
    clock = FakeClock(0.0)
    q = make_queue(clock, initial_backoff=400, max_backoff=400)
    q.add(pod("a"))
    p = q.pop()
    fail(q, p, FIT)
    clock.set(301)
    q.flush_unschedulable_pods_leftover()
    assert p.queue == BACKOFF_Q


def test_event_moves_only_pods_rejected_by_interested_plugins():
    q = make_queue()
    for name in ("fit", "other", "none"):
        q.add(pod(name))
    pf, po, pn = q.pop(), q.pop(), q.pop()
    fail(q, pf, FIT)
    fail(q, po, "NodeUnschedulable")
    pn.unschedulable_plugins = set()
    q._unsched[pn.pod.key] = pn  # parked with no rejector (e.g. gated earlier), moves on any event
    q.clock.advance(5)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert pf.queue == ACTIVE_Q and po.queue == UNSCHEDULABLE_PODS and pn.queue == ACTIVE_Q
    assert q.move_request_cycle == q.scheduling_cycle


def test_event_nobody_registered_is_ignored():
    q = make_queue()
    q.add(pod("a"))
    p = q.pop()
    fail(q, p, FIT)
    before = q.move_request_cycle
    q.move_all_to_active_or_backoff_queue(NODE_LABEL_CHANGE)  # FIT registered Node/Add only
    assert p.queue == UNSCHEDULABLE_PODS and q.move_request_cycle == before


def test_wildcard_event_moves_everyone():
    q = make_queue()
    q.add(pod("a"))
    p = q.pop()
    fail(q, p, "SomePlugin")
    q.clock.advance(5)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    assert p.queue == ACTIVE_Q


def test_moved_pod_still_backing_off_goes_to_backoff():
    q = make_queue()
    q.add(pod("a"))
    p = q.pop()
    fail(q, p, FIT)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # within the 1 s backoff
    assert p.queue == BACKOFF_Q


def test_pre_check_filters_moves():
    q = make_queue()
    q.add(pod("a"))
    q.add(pod("b"))
    pa, pb = q.pop(), q.pop()
    fail(q, pa, FIT)
    fail(q, pb, FIT)
    q.clock.advance(5)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, pre_check=lambda p: p.name == "b")
    assert pa.queue == UNSCHEDULABLE_PODS and pb.queue == ACTIVE_Q


def test_assigned_pod_added_moves_pods_with_matching_required_affinity():
    q = make_queue()
    q.add(pod("wants-web", affinity=required_pod_affinity({"app": "web"})))
    q.add(pod("plain"))
    pw, pp = q.pop(), q.pop()
    fail(q, pw, AFFINITY)
    fail(q, pp, AFFINITY)
    q.clock.advance(5)
    q.assigned_pod_added(pod("db", labels={"app": "db"}, node_name="n1"))
    assert pw.queue == UNSCHEDULABLE_PODS
    q.assigned_pod_added(pod("web", labels={"app": "web"}, node_name="n1"))
    assert pw.queue == ACTIVE_Q and pp.queue == UNSCHEDULABLE_PODS


def test_scheduling_gates_keep_pod_out_of_active_until_updated():
    q = make_queue()
    gated = pod("g", gates=["example.com/wait"])
    q.add(gated)
    info = q.pod_info("default/g")
    assert info.queue == UNSCHEDULABLE_PODS and info.gated and info.unschedulable_plugins == {"SchedulingGates"}
    assert not q.is_backing_off(info)
    q.clock.advance(5)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # only SchedulingGates rejected it: not moved
    assert info.queue == UNSCHEDULABLE_PODS
    ungated = pod("g")
    q.update(gated, ungated)
    assert info.queue == ACTIVE_Q and not info.gated and q.pop().pod is ungated


def test_update_in_active_and_backoff_replaces_the_pod():
    q = make_queue()
    old = pod("a")
    q.add(old)
    new = Pod(pod_raw("a", labels={"x": "1"}))
    q.update(old, new)
    assert q.pop().pod is new
    q2 = make_queue()
    q2.add(old)
    p = q2.pop()
    fail(q2, p)
    q2.update(old, new)
    assert p.queue == BACKOFF_Q and p.pod is new


def test_status_only_update_keeps_unschedulable_pod_parked():
    q = make_queue()
    old = pod("a")
    q.add(old)
    p = q.pop()
    fail(q, p, FIT)
    q.clock.advance(5)
    status_only = Pod(pod_raw("a", nominated="n1"))
    assert not is_pod_updated(old, status_only)
    q.update(old, status_only)
    assert p.queue == UNSCHEDULABLE_PODS and p.pod is status_only
    relabelled = Pod(pod_raw("a", labels={"v": "2"}, nominated="n1"))
    q.update(status_only, relabelled)
    assert p.queue == ACTIVE_Q


def test_update_of_unknown_pod_adds_it():
    q = make_queue()
    q.update(None, pod("new"))
    assert q.pod_info("default/new").queue == ACTIVE_Q


def test_delete_from_each_queue():
    q = make_queue()
    for name in ("a", "b", "c"):
        q.add(pod(name))
    pb, pc = q.pop(), q.pop()
    fail(q, pb, FIT)
    fail(q, pc)
    assert (pb.queue, pc.queue) == (UNSCHEDULABLE_PODS, BACKOFF_Q)
    for p in (pod("a"), pod("b"), pod("c")):
        q.delete(p)
    assert q.summary() == "activeQ:0; backoffQ:0; unschedulablePods:0"


def test_add_unschedulable_twice_is_an_error():
    q = make_queue()
    q.add(pod("a"))
    p = q.pop()
    fail(q, p, FIT)
    with pytest.raises(QueueError, match="already present in unschedulable queue"):
        fail(q, p, FIT)


def test_activate_moves_from_backoff_and_unschedulable():
    q = make_queue()
    q.add(pod("a"))
    q.add(pod("b"))
    pa, pb = q.pop(), q.pop()
    fail(q, pa, FIT)
    fail(q, pb)
    q.activate([pa.pod, pb.pod, pod("unknown")])
    assert pa.queue == ACTIVE_Q and pb.queue == ACTIVE_Q and q.num_active() == 2


def test_nominator():
    q = make_queue()
    a = pod("a", priority=5)
    q.add(a)
    q.add_nominated_pod(a, NominatingInfo("override", "n1"))
    assert [p.name for p in q.nominated_pods_for_node("n1")] == ["a"]
    # an update without nominatedNodeName keeps the in-memory nomination
    a2 = Pod(pod_raw("a", priority=5, labels={"x": "y"}))
    q.update(a, a2)
    assert [p for p in q.nominated_pods_for_node("n1")] == [a2]
    # noop mode takes status.nominatedNodeName; override "" clears
    a3 = Pod(pod_raw("a", priority=5, nominated="n2"))
    q.add_nominated_pod(a3, None)
    assert q.nominated_pods_for_node("n1") == () and q.nominated_node_of(a3) == "n2"
    q.add_nominated_pod(a3, NominatingInfo("override", ""))
    assert q.nominated_node_of(a3) is None
    q.add_nominated_pod(a3, NominatingInfo("override", "n3"))
    q.delete(a3)
    assert q.nominated_pods_for_node("n3") == ()


def test_nominator_skips_pods_that_are_gone_or_bound():
    live = {"default/a": pod("a"), "default/b": pod("b", node_name="n9")}
    q = make_queue(pod_lister=lambda ns, name: live.get(f"{ns}/{name}"))
    q.add_nominated_pod(pod("a"), NominatingInfo("override", "n1"))
    q.add_nominated_pod(pod("b"), NominatingInfo("override", "n1"))
    q.add_nominated_pod(pod("c"), NominatingInfo("override", "n1"))
    assert [p.name for p in q.nominated_pods_for_node("n1")] == ["a"]


def test_nominated_pods_for_node_is_a_copy():
    q = make_queue()
    q.add_nominated_pod(pod("a"), NominatingInfo("override", "n1"))
    got = q.nominated_pods_for_node("n1")
    q.delete(pod("a"))
    assert len(got) == 1 and q.nominated_pods_for_node("n1") == ()


def test_pending_pods_and_describe():
    clock = FakeClock(10.0)
    q = make_queue(clock)
    q.add(pod("a"))
    q.add(pod("b"))
    p = q.pop()
    p.last_failure = "0/1 nodes are available: 1 Insufficient cpu."
    q.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE)
    fail(q, p, FIT)
    pods, summary = q.pending_pods()
    assert summary == "activeQ:1; backoffQ:1; unschedulablePods:0"
    assert [x.name for x in pods] == ["b", "a"]
    d = q.describe("default/a")
    assert d["queue"] == BACKOFF_Q and d["attempts"] == 1 and d["unschedulable_plugins"] == [FIT]
    assert d["backoff_expiry"] == pytest.approx(11.0, abs=1e-6) and d["timestamp"] == pytest.approx(10.0, abs=1e-6)
    assert d["last_failure"].startswith("0/1 nodes")
    assert q.describe("default/missing") is None


def test_timestamps_are_unique_and_increasing_on_a_frozen_clock():
    q = make_queue()
    for i in range(5):
        q.add(pod(f"p{i}"))
    stamps = [q.pod_info(f"default/p{i}").timestamp for i in range(5)]
    assert all(a < b and not b < a and a != b for a, b in zip(stamps, stamps[1:]))
    assert all(int(s) == int(stamps[0]) for s in stamps)


def test_parse_registration():
    ev, hint = parse_registration(("Node", ("Add", "UpdateNodeTaint")))
    assert ev.resource == "Node" and ev.action == ADD | UPDATE_NODE_TAINT and hint is None
    assert parse_registration(("storage.k8s.io/CSINode", "Add"))[0].resource == "CSINode"
    ev, hint = parse_registration(("Pod", "Delete", len))
    assert ev.resource == "Pod" and ev.action == DELETE and hint is len
    assert ClusterEvent("*", 127).match(ASSIGNED_POD_ADD)
    assert not ClusterEvent("Pod", ADD).match(UNSCHEDULABLE_TIMEOUT)
    with pytest.raises(ValueError):
        parse_registration(("Widget", "Add"))


def test_heap_order_survives_many_updates_and_deletes():
    import random
    rng = random.Random(5)
    q = make_queue()
    pods = {}
    for i in range(300):
        p = pod(f"p{i}", priority=rng.randrange(5))
        pods[p.name] = p
        q.add(p)
    for _ in range(1000):  # re-position the same pods over and over (lazy deletion + compaction)
        name = f"p{rng.randrange(300)}"
        new = Pod(pod_raw(name, priority=pods[name].priority, labels={"v": str(rng.random())}))
        q.update(pods[name], new)
        pods[name] = new
    for name in [f"p{i}" for i in range(0, 300, 7)]:
        q.delete(pods.pop(name))
    popped = []
    while (p := q.pop()) is not None:
        popped.append(p)
    assert len(popped) == len(pods)
    keys = [(-p.pod.priority, p.timestamp) for p in popped]
    assert all(not (b < a) for a, b in zip(keys, keys[1:]))
    assert len(q._active._heap) == 0
