"""NominatedNodeNameForExpectation (1.36): PreBindPreFlight and the nominatedNodeName written at the start of a
binding cycle that waits on Permit or runs PreBind; the cases of v1.36.2's schedule_one_test.go
TestSchedulerScheduleOne about them, on the simulated loop."""
import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.framework.interface import PreBindPlugin
from scheduler_core.framework.status import Code, Status
from scheduler_core.queue import BACKOFF_Q
from scheduler_core.scheduler import Scheduler
from scheduler_core.trace import CallbackSink
from tests.core.loop_fixtures import node, pod
from tests.core.test_scheduler import REGISTRY


class FakePreBind(PreBindPlugin):
    """tf.NewFakePreBindPlugin: fixed PreBindPreFlight and PreBind statuses; records the pod's nominatedNodeName in
    the cluster when PreBind runs."""

    name = "FakePreBind"
    pre_flight_status = None
    pre_bind_status = None

    def __init__(self, handle):
        self.handle = handle
        self.seen = []

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def pre_bind_pre_flight(self, state, pod, node_name):
        return self.pre_flight_status

    def pre_bind(self, state, pod, node_name):
        self.seen.append(self.handle.client.get_pod(pod.namespace, pod.name).nominated_node_name)
        return self.pre_bind_status


def run(pre_flight=None, pre_bind=None, permit=False, gates=None, version="1.36"):
    FakePreBind.pre_flight_status, FakePreBind.pre_bind_status = pre_flight, pre_bind
    plugins = {"preBind": {"enabled": [{"name": "FakePreBind"}]}}
    if permit:
        plugins["permit"] = {"enabled": [{"name": "WaitPermit"}]}
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]},
                      dict(REGISTRY, FakePreBind=FakePreBind), kube_version=version, feature_gates=gates)
    cluster = SimulatedCluster([node("n1")], [pod("p", labels={"wait": "yes"} if permit else None)],
                               clock=FakeClock(0.0))
    traces = []
    sched = Scheduler(cluster, cfg, registry=dict(REGISTRY, FakePreBind=FakePreBind), tie_break="name",
                      clock=cluster.clock, trace_sink=CallbackSink(traces.append))
    writes = []
    sched.cluster.patch_pod_status = _recording(cluster.patch_pod_status, writes)
    sched.run_until_idle()
    waiting_nnn = cluster.pods["default/p"].nominated_node_name
    if permit:
        sched.handles["default-scheduler"].get_waiting_pod("uid-default-p").allow("WaitPermit")
        sched.process_ready()
    plugin = sched.profiles["default-scheduler"].get_plugin("FakePreBind")
    return cluster, sched, traces, writes, plugin.seen, waiting_nnn


def _recording(patch, writes):
    def recorded(p, condition=None, nominated_node_name=None):
        writes.append(nominated_node_name)
        return patch(p, condition, nominated_node_name)
    return recorded


def failed(cluster):
    return [e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"]


def test_permit_wait_without_the_gate_sets_no_nomination():
    cluster, sched, traces, writes, seen, waiting = run(pre_flight=Status(Code.SKIP), permit=True,
                                                        gates={"NominatedNodeNameForExpectation": False})
    assert waiting == "" and writes == [] and cluster.placements()["default/p"] == "n1"


def test_permit_wait_sets_the_nomination():
    cluster, sched, traces, writes, seen, waiting = run(pre_flight=Status(Code.SKIP), permit=True)
    assert waiting == "n1" and writes == ["n1"] and cluster.placements()["default/p"] == "n1"
    assert seen == []   # PreBind skipped by its pre-flight


def test_pre_flight_error_fails_the_binding_cycle():
    cluster, sched, traces, writes, seen, _w = run(pre_flight=Status.error("on PreBindPreFlight"))
    assert failed(cluster) == ['running PreBindPreFlight "FakePreBind": on PreBindPreFlight']
    assert seen == [] and sched.queue.pod_info("default/p").queue == BACKOFF_Q
    assert not sched.cache.assumed_pods() and traces[0].status_code == "Error"


def test_pre_flight_unschedulable_is_unsupported():
    cluster, sched, traces, writes, seen, _w = run(
        pre_flight=Status(Code.UNSCHEDULABLE, "rejected on prebindpreflight"))
    assert failed(cluster) == ['PreBindPreFlight FakePreBind returned "Unschedulable", which is unsupported. It is '
                               'supposed to return Success, Skip, or Error status']
    assert sched.queue.pod_info("default/p").queue == BACKOFF_Q


def test_pre_flight_skip_skips_pre_bind_and_the_nomination():
    cluster, sched, traces, writes, seen, _w = run(pre_flight=Status(Code.SKIP),
                                                   pre_bind=Status.error("rejected on prebind"))
    assert seen == [] and writes == [] and cluster.placements()["default/p"] == "n1"


def test_pre_flight_success_nominates_before_pre_bind():
    cluster, sched, traces, writes, seen, _w = run()
    assert seen == ["n1"] and writes == ["n1"] and cluster.placements()["default/p"] == "n1"


def test_pre_bind_error_after_the_nomination_clears_it():
    cluster, sched, traces, writes, seen, _w = run(pre_bind=Status.error("on PreBind"))
    assert seen == ["n1"] and failed(cluster) == ['running PreBind plugin "FakePreBind": on PreBind']
    # the failure handler's patch (clearNominatedNode) finds the nomination in the informer's pod
    assert writes == ["n1", ""] and cluster.pods["default/p"].nominated_node_name == ""


@pytest.mark.parametrize("version, gates", [("1.30", None), ("1.36", {"NominatedNodeNameForExpectation": False})])
def test_without_the_gate_pre_bind_always_runs(version, gates):
    cluster, sched, traces, writes, seen, _w = run(pre_flight=Status(Code.SKIP), version=version, gates=gates)
    assert seen == [""] and writes == [] and cluster.placements()["default/p"] == "n1"
