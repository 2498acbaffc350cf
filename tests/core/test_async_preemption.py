"""Preemption's Executor at 1.36 (SchedulerAsyncPreemption): v1.36.2's executor_test.go (TestIsPodRunningPreemption,
TestPrepareCandidate's asynchronous cases), default_preemption_test.go's TestPreEnqueue, and the scheduling loop
with asynchronous preemption next to 1.30's synchronous one."""
import pytest

from scheduler_core import versions
from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.framework.candidates import Candidate
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.preemption_executor import Executor
from scheduler_core.framework.interface import QUEUE_SKIP
from scheduler_core.framework.status import Code
from scheduler_core.objects import Pod
from scheduler_core.plugins.defaultpreemption import DefaultPreemption, PreEnqueueDefaultPreemption
from scheduler_core.plugins.registry import in_tree_registry, registry_at
from scheduler_core.queue import BACKOFF_Q
from scheduler_core.scheduler import Scheduler
from scheduler_core.trace import CallbackSink
from tests.core.loop_fixtures import node, pod, pod_raw
from tests.core.test_scheduler import REGISTRY


def terminating(name, **kw):
    raw = pod_raw(name, **kw)
    raw["metadata"]["deletionTimestamp"] = "2026-12-07T00:00:00Z"
    return Pod(raw)


class FakeClient:
    """A pod lister plus the preemption writes, recorded in order; ``fail`` names victims whose eviction fails."""

    def __init__(self, pods=(), fail=()):
        self.pods = {p.key: p for p in pods}
        self.fail = set(fail)
        self.calls = []

    def get_pod(self, namespace, name):
        return self.pods.get(f"{namespace}/{name}")

    def evict(self, victim, preemptor_uid, node_name):
        self.calls.append(("evict", victim.name))
        if victim.name in self.fail:
            return "delete pod failed"
        self.pods.pop(victim.key, None)
        return None

    def clear_nomination(self, pod):
        self.calls.append(("clear", pod.name))


def executor(version="1.36", gates=None, client=None, nominated=None):
    h = Handle(client=client, nominated_pods_for_node=nominated)
    h.features = versions.features(version, gates)
    jobs, activated = [], []
    h.run_async = lambda job, keys: jobs.append((job, keys))
    h.activate = activated.extend
    return Executor(h), jobs, activated


# -- TestIsPodRunningPreemption ----------------------------------------------------------------------------
VICTIM1 = pod("victim1", namespace="ns", node_name="node", priority=100)
VICTIM2 = pod("victim2", namespace="ns", node_name="node", priority=100)
VICTIM_DELETED = terminating("victim-deleted", namespace="ns", node_name="node", priority=100)


@pytest.mark.parametrize("preempting, last, lister, want", [
    ((), {}, (), False),                                                    # not in preemptingSet
    ((), {"preemptor": ("ns", "victim1")}, (), False),                      # not preempting, lastVictimSet not empty
    (("preemptor",), {"otherPod": ("ns", "victim1")}, (), True),            # preempting, no last victim for it
    (("preemptor",), {"preemptor": ("ns", "victim1")}, (), False),          # last victim not in the lister
    (("preemptor",), {"preemptor": ("ns", "victim1")}, (VICTIM1, VICTIM2), True),
    (("preemptor",), {"preemptor": ("ns", "victim-deleted")}, (VICTIM1, VICTIM_DELETED), False),
])
def test_is_pod_running_preemption(preempting, last, lister, want):
    ex, _jobs, _act = executor(client=FakeClient(lister))
    ex.preempting = set(preempting)
    ex.last_victim_pending = dict(last)
    assert ex.is_pod_running_preemption("preemptor") is want


# -- TestPrepareCandidate (asynchronous) -------------------------------------------------------------------
PREEMPTOR = pod("preemptor", priority=1000)


def run_async(victims, fail=(), lister=None):
    client = FakeClient(victims if lister is None else lister, fail)
    ex, jobs, activated = executor(client=client)
    st = ex.actuate(Candidate("node1", list(victims), 0), PREEMPTOR)
    assert st is None   # the asynchronous path never stops the cycle
    preempting_in_cycle = set(ex.preempting)
    for job, _keys in jobs:
        job()
    return ex, client, jobs, activated, preempting_in_cycle


def test_async_no_victims_is_a_no_op():
    ex, client, jobs, activated, preempting = run_async([])
    assert not jobs and not preempting and client.calls == []


def test_async_victim_already_being_deleted_gets_no_call():
    ex, client, jobs, activated, preempting = run_async([terminating("victim1", node_name="node1")])
    assert not jobs and not preempting and client.calls == []


def test_async_one_victim_deleted_outside_the_cycle():
    ex, client, jobs, activated, preempting = run_async([pod("victim1", node_name="node1")])
    assert preempting == {PREEMPTOR.uid} and [keys for _j, keys in jobs] == [["default/victim1"]]
    assert client.calls == [("evict", "victim1")]
    assert not ex.preempting and not ex.last_victim_pending and activated == []


def test_async_deletion_failure_activates_the_preemptor():
    ex, client, jobs, activated, _p = run_async([pod("victim1", node_name="node1")], fail={"victim1"})
    assert activated == [PREEMPTOR] and not ex.preempting


def test_async_first_of_two_fails_skips_the_last():
    victims = [pod("victim1", node_name="node1"), pod("victim2", node_name="node1")]
    ex, client, jobs, activated, _p = run_async(victims, fail={"victim1"})
    assert client.calls == [("evict", "victim1")] and activated == [PREEMPTOR]


def test_async_clears_lower_priority_nominations_before_deleting():
    low = pod("low", priority=1, nominated="node1")
    high = pod("high", priority=2000, nominated="node1")
    client = FakeClient([pod("victim1", node_name="node1")])
    ex, jobs, _act = executor(client=client, nominated=lambda n: [low, high] if n == "node1" else [])
    ex.actuate(Candidate("node1", [pod("victim1", node_name="node1")], 0), PREEMPTOR)
    assert client.calls == []
    jobs[0][0]()
    assert client.calls == [("clear", "low"), ("evict", "victim1")]


def test_sync_at_136_skips_terminating_victims_and_clears_after():
    low = pod("low", priority=1, nominated="node1")
    client = FakeClient()
    ex, jobs, _act = executor(gates={"SchedulerAsyncPreemption": False}, client=client,
                              nominated=lambda n: [low])
    victims = [terminating("gone", node_name="node1"), pod("victim1", node_name="node1")]
    assert ex.actuate(Candidate("node1", victims, 0), PREEMPTOR) is None
    assert not jobs and client.calls == [("evict", "victim1"), ("clear", "low")]
    client.fail = {"victim2"}
    st = ex.actuate(Candidate("node1", [pod("victim2", node_name="node1")], 0), PREEMPTOR)
    assert st.code == Code.ERROR and st.message() == "delete pod failed"


def test_sync_at_130_calls_for_every_victim():
    client = FakeClient()
    ex, jobs, _act = executor(version="1.30", client=client, nominated=lambda n: [])
    ex.actuate(Candidate("node1", [terminating("gone", node_name="node1")], 0), PREEMPTOR)
    assert client.calls == [("evict", "gone")] and not jobs


# -- TestPreEnqueue -----------------------------------------------------------------------------------------
def plugin(version="1.36", gates=None, client=None):
    h = Handle(client=client or FakeClient())
    h.features = versions.features(version, gates)
    h.run_async = lambda job, keys: None   # the preemption stays in progress
    return registry_at(in_tree_registry(), h.features)["DefaultPreemption"].new({}, h)


@pytest.mark.parametrize("gates, check, want", [
    ({"SchedulerAsyncPreemption": False}, "preemptor", None),
    (None, "preemptor", "waiting for the preemption for this pod to be finished"),
    (None, "p_other", None),
])
def test_pre_enqueue(gates, check, want):
    pl = plugin(gates=gates)
    assert isinstance(pl, PreEnqueueDefaultPreemption)
    pl.executor.actuate(Candidate("node1", [pod("p1", node_name="node1")], 0), PREEMPTOR)
    st = pl.pre_enqueue(pod(check))
    if want is None:
        assert st is None
    else:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.message() == want
    events = pl.events_to_register()
    assert [e[:2] for e in events] == ([] if gates else [("Pod", "Delete")])
    assert all(hint(pod(check), None, None) == QUEUE_SKIP for _r, _a, hint in events)


def test_default_preemption_is_no_pre_enqueue_plugin_at_130():
    assert type(plugin(version="1.30")) is DefaultPreemption


# -- the scheduling loop -----------------------------------------------------------------------------------
class Journal:
    """A second handler on the cluster: the scheduler's writes as an informer sees them, in order, and at each
    deletion what the preemptor's PreEnqueue plugins say (the queue runs them when the deletion moves it)."""

    def __init__(self, sched):
        self.sched = sched
        self.log = []

    def on_pod_update(self, old, new):
        if old.nominated_node_name != new.nominated_node_name:
            self.log.append(("nominate", new.name, new.nominated_node_name))

    def on_pod_delete(self, p):
        st = self.sched.profiles["default-scheduler"].run_pre_enqueue(self.sched.cluster.pods["default/high"])
        self.log.append(("delete", p.name, None if st is None else f"{st.plugin}: {st.message()}"))

    def __getattr__(self, name):
        return lambda *args: None


def loop(version, gates=None, victims=1):
    clock = FakeClock(0.0)
    pods = [pod(f"low{i}", cpu="700m", priority=1, node_name="n1") for i in range(victims)]
    cluster = SimulatedCluster([node("n1", cpu="2")], pods + [pod("high", cpu="1500m", priority=100)],
                               clock=clock)
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler"}]}, REGISTRY,
                      kube_version=version, feature_gates=gates)
    traces = []
    sched = Scheduler(cluster, cfg, registry=REGISTRY, clock=clock, tie_break="name",
                      trace_sink=CallbackSink(traces.append))
    journal = Journal(sched)
    cluster.subscribe(journal)
    journal.log.clear()
    sched.run_until_idle()
    return clock, cluster, sched, traces, journal.log


def test_loop_130_deletes_victims_in_the_cycle():
    clock, cluster, sched, traces, log = loop("1.30", victims=2)
    # the deletions come first, then the failure handler's nomination; the victims' events came during the
    # attempt, so the preemptor goes to the backoffQ
    assert log == [("delete", "low1", None), ("delete", "low0", None), ("nominate", "high", "n1")]
    assert sched.queue.pod_info("default/high").queue == BACKOFF_Q
    assert traces[0].victims == ["default/low1", "default/low0"]


def test_loop_136_nominates_first_then_deletes_asynchronously():
    clock, cluster, sched, traces, log = loop("1.36", victims=2)
    # nominatedNodeName first; while the first victim goes the preemptor is held by PreEnqueue, and the last
    # victim's deletion finds the preemption finished
    assert log == [("nominate", "high", "n1"),
                   ("delete", "low1", "DefaultPreemption: waiting for the preemption for this pod to be finished"),
                   ("delete", "low0", None)]
    plugin = sched.profiles["default-scheduler"].get_plugin("DefaultPreemption")
    assert not plugin.executor.preempting and not plugin.executor.last_victim_pending
    assert traces[0].victims == ["default/low1", "default/low0"] and traces[0].nominated_node == "n1"
    assert [e["message"] for e in cluster.events if e["reason"] == "Preempted"] == \
        ["Preempted by pod uid-default-high on node n1"] * 2
    clock.advance(2.0)
    sched.step()
    assert cluster.placements()["default/high"] == "n1"


def test_loop_136_one_victim_is_never_held():
    clock, cluster, sched, traces, log = loop("1.36", victims=1)
    assert log == [("nominate", "high", "n1"), ("delete", "low0", None)]


def test_loop_136_gate_off_is_synchronous():
    clock, cluster, sched, traces, log = loop("1.36", gates={"SchedulerAsyncPreemption": False}, victims=2)
    assert log[:3] == [("delete", "low1", None), ("delete", "low0", None), ("nominate", "high", "n1")]
    assert cluster.placements()["default/high"] == "n1"   # popped from the backoffQ (SchedulerPopFromBackoffQ)


@pytest.mark.parametrize("version, text, code", [
    ("1.30", "Preempted by pod uid-default-high on node n1", "Unschedulable"),
    ("1.36", "Preempted by pod uid-default-high on node n1 (in kube-scheduler memory).", "Error"),
])
def test_waiting_pod_is_preempted(version, text, code):
    clock = FakeClock(0.0)
    cluster = SimulatedCluster([node("n1", cpu="2")], [pod("held", cpu="1500m", priority=1, labels={"wait": "yes"})],
                               clock=clock)
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler",
                                     "plugins": {"permit": {"enabled": [{"name": "WaitPermit"}]}}}]},
                      REGISTRY, kube_version=version)
    traces = []
    sched = Scheduler(cluster, cfg, registry=REGISTRY, clock=clock, tie_break="name",
                      trace_sink=CallbackSink(traces.append))
    sched.run_until_idle()
    assert sched.waiting_pods()
    cluster.add_pod(pod_raw("high", cpu="1500m", priority=100))
    sched.run_until_idle()
    assert [e["message"] for e in cluster.events if e["reason"] == "Preempted"] == [text]
    held = next(t for t in traces if t.pod.name == "held")
    assert held.status_code == code and "default/held" in cluster.pods
