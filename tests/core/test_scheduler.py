"""The scheduling loop over a SimulatedCluster: profiles, Permit, binding failures, requeueing, preemption."""
from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.framework.interface import BindPlugin, PermitPlugin, ReservePlugin
from scheduler_core.framework.status import Code, Status
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.queue import ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_PODS
from scheduler_core.run import LoopRun
from scheduler_core.scenario import scenario_from_data
from scheduler_core.scheduler import Scheduler, truncate_message
from scheduler_core.trace import CallbackSink
from tests.core.loop_fixtures import node, node_raw, pod, pod_raw


class WaitPermit(PermitPlugin):
    """Holds pods labelled wait=yes for 10 s; the test allows or rejects them through the handle."""

    name = "WaitPermit"

    def __init__(self, handle):
        self.handle = handle

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def permit(self, state, pod, node_name):
        if pod.labels.get("wait") == "yes":
            return Status(Code.WAIT), 10
        if pod.labels.get("deny") == "yes":
            return Status(Code.UNSCHEDULABLE, "denied by policy"), 0
        return None, 0


class FlakyBinder(BindPlugin):
    """Fails the first ``failures`` binds, then binds through the cluster."""

    name = "FlakyBinder"
    failures = 1

    def __init__(self, handle):
        self.handle = handle
        self.calls = 0

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def bind(self, state, pod, node_name):
        self.calls += 1
        if self.calls <= self.failures:
            return Status.error("etcd is sad")
        self.handle.client.bind(pod, node_name)
        return None


class PickyReserve(ReservePlugin):
    name = "PickyReserve"

    def __init__(self):
        self.unreserved = []

    def reserve(self, state, pod, node_name):
        if pod.labels.get("reserve") == "no":
            return Status(Code.UNSCHEDULABLE, "no room in the ledger")
        return None

    def unreserve(self, state, pod, node_name):
        self.unreserved.append((pod.name, node_name))


REGISTRY = dict(in_tree_registry(), WaitPermit=WaitPermit, FlakyBinder=FlakyBinder, PickyReserve=PickyReserve)


def config(profiles=None, **top):
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": profiles or [{"schedulerName": "default-scheduler"}]}
    doc.update(top)
    return load_config(doc, REGISTRY)


def make(nodes, pods, cfg=None, clock=None, **kw):
    clock = clock or FakeClock(0.0)
    cluster = SimulatedCluster(nodes, pods, clock=clock)
    traces = []
    sched = Scheduler(cluster, cfg or config(), registry=REGISTRY, clock=clock, tie_break="name",
                      trace_sink=CallbackSink(traces.append), **kw)
    return cluster, sched, traces


def events(cluster, reason=None):
    return [(e["object"], e["message"]) for e in cluster.events if reason is None or e["reason"] == reason]


def condition(cluster, key, ctype="PodScheduled"):
    return next((c for c in cluster.pods[key].conditions if c.get("type") == ctype), None)


def test_schedules_pending_pods_and_records_events():
    cluster, sched, traces = make([node("n1"), node("n2")], [pod("a"), pod("b"), pod("c", node_name="n1")])
    assert sched.run_until_idle() == 2
    placements = cluster.placements()
    assert placements == {"default/a": "n2", "default/b": "n1", "default/c": "n1"}
    assert events(cluster, "Scheduled") == [("default/a", "Successfully assigned default/a to n2"),
                                            ("default/b", "Successfully assigned default/b to n1")]
    assert condition(cluster, "default/a")["status"] == "True"
    assert [t.pod.name for t in traces] == ["a", "b"] and all(t.chosen for t in traces)
    assert sched.queue.summary() == "activeQ:0; backoffQ:0; unschedulablePods:0"
    assert not sched.cache.assumed_pods() and sched.cache.pod_count() == 3


def test_multiple_profiles_and_foreign_scheduler_names():
    cfg = config([
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "bin-packer", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
            "scoringStrategy": {"type": "MostAllocated"}}}]},
    ])
    nodes = [node("n1"), node("n2")]
    pods = [pod("busy", cpu="2", node_name="n1"), pod("spread", cpu="100m"),
            pod("packed", cpu="100m", scheduler_name="bin-packer"),
            pod("foreign", scheduler_name="someone-else")]
    cluster, sched, traces = make(nodes, pods, cfg)
    assert set(sched.profiles) == {"default-scheduler", "bin-packer"}
    sched.run_until_idle()
    placements = cluster.placements()
    assert placements["default/spread"] == "n2"   # LeastAllocated: the emptier node
    assert placements["default/packed"] == "n1"   # MostAllocated: the fuller node
    assert placements["default/foreign"] is None  # not ours: never queued, no events
    assert not [e for e in cluster.events if e["object"] == "default/foreign"]
    assert sched.queue.pod_info("default/foreign") is None
    assert {t.pod.name: t.profile for t in traces} == {"spread": "default-scheduler", "packed": "bin-packer"}


def test_unschedulable_pod_gets_fit_error_then_moves_on_node_add():
    clock = FakeClock(0.0)
    cluster, sched, traces = make([node("n1", cpu="2")], [pod("big", cpu="3")], clock=clock)
    sched.run_until_idle()
    msg = ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
           "1 No preemption victims found for incoming pod.")
    assert events(cluster, "FailedScheduling") == [("default/big", msg)]
    cond = condition(cluster, "default/big")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", msg)
    info = sched.queue.pod_info("default/big")
    assert info.queue == UNSCHEDULABLE_PODS and info.unschedulable_plugins == {"NodeResourcesFit"}
    assert traces[-1].status_code == "Unschedulable" and traces[-1].message == msg
    clock.advance(2)
    cluster.add_node(node_raw("n2", cpu="4"))
    assert info.queue == ACTIVE_Q
    sched.run_until_idle()
    assert cluster.placements()["default/big"] == "n2" and info.attempts == 2


def test_node_add_pre_check_skips_pods_that_still_do_not_fit():
    clock = FakeClock(0.0)
    cluster, sched, _ = make([node("n1", cpu="2")], [pod("big", cpu="3")], clock=clock)
    sched.run_until_idle()
    clock.advance(2)
    cluster.add_node(node_raw("n2", cpu="2"))
    assert sched.queue.pod_info("default/big").queue == UNSCHEDULABLE_PODS


def test_permit_wait_then_allow():
    cfg = config([{"schedulerName": "default-scheduler",
                   "plugins": {"permit": {"enabled": [{"name": "WaitPermit"}]}}}])
    cluster, sched, traces = make([node("n1")], [pod("w", labels={"wait": "yes"}), pod("x")], cfg)
    sched.run_until_idle()
    assert cluster.placements() == {"default/w": None, "default/x": "n1"}
    handle = sched.handles["default-scheduler"]
    wp = handle.get_waiting_pod("uid-default-w")
    assert wp is not None and wp.get_pending_plugins() == ["WaitPermit"]
    assert sched.cache.is_assumed_pod(wp.pod)
    assert [t.pod.name for t in traces] == ["x"]  # w's attempt is not over yet
    wp.allow("WaitPermit")
    sched.process_ready()
    assert [t.pod.name for t in traces] == ["x", "w"] and traces[1].chosen == "n1"
    assert cluster.placements()["default/w"] == "n1" and handle.get_waiting_pod("uid-default-w") is None
    assert not sched.cache.assumed_pods()


def test_permit_wait_times_out_on_the_clock():
    clock = FakeClock(0.0)
    cfg = config([{"schedulerName": "default-scheduler",
                   "plugins": {"permit": {"enabled": [{"name": "WaitPermit"}]}}}])
    cluster, sched, traces = make([node("n1")], [pod("w", labels={"wait": "yes"})], cfg, clock=clock)
    sched.run_until_idle()
    assert sched.next_wakeup() == 10
    clock.advance(9.9)
    sched.process_timers()
    assert sched.handles["default-scheduler"].get_waiting_pod("uid-default-w") is not None
    clock.advance(0.2)
    sched.process_timers()
    msg = "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin WaitPermit."
    assert events(cluster, "FailedScheduling") == [("default/w", msg)]
    info = sched.queue.pod_info("default/w")
    assert info.queue == UNSCHEDULABLE_PODS and info.unschedulable_plugins == {"WaitPermit"}
    assert not sched.cache.assumed_pods() and sched.cache.node_info("n1").requested.get("cpu", 0) == 0
    assert len(traces) == 1 and traces[0].status_code == "Unschedulable"  # one trace, once the outcome is known


def test_permit_rejection_is_a_fit_error_on_one_node():
    cfg = config([{"schedulerName": "default-scheduler",
                   "plugins": {"permit": {"enabled": [{"name": "WaitPermit"}]}}}])
    cluster, sched, _ = make([node("n1"), node("n2")], [pod("d", labels={"deny": "yes"})], cfg)
    sched.run_until_idle()
    assert events(cluster, "FailedScheduling") == [("default/d", "0/1 nodes are available: 1 denied by policy.")]
    assert not sched.cache.assumed_pods()


def test_waiting_pod_deleted_is_rejected_and_not_requeued():
    cfg = config([{"schedulerName": "default-scheduler",
                   "plugins": {"permit": {"enabled": [{"name": "WaitPermit"}]}}}])
    cluster, sched, _ = make([node("n1")], [pod("w", labels={"wait": "yes"})], cfg)
    sched.run_until_idle()
    cluster.delete_pod("default/w")
    sched.process_ready()
    assert sched.queue.pod_info("default/w") is None and not sched.cache.assumed_pods()
    assert sched.handles["default-scheduler"].get_waiting_pod("uid-default-w") is None
    assert events(cluster, "FailedScheduling") == [("default/w", "0/1 nodes are available: 1 removed.")]


def test_reserve_rejection_unreserves_and_fails_on_one_node():
    cfg = config([{"schedulerName": "default-scheduler",
                   "plugins": {"reserve": {"enabled": [{"name": "PickyReserve"}]}}}])
    cluster, sched, traces = make([node("n1")], [pod("r", labels={"reserve": "no"})], cfg)
    sched.run_until_idle()
    plugin = sched.profiles["default-scheduler"].get_plugin("PickyReserve")
    assert plugin.unreserved == [("r", "n1")]
    assert events(cluster, "FailedScheduling") == [("default/r", "0/1 nodes are available: 1 no room in the ledger.")]
    assert sched.queue.pod_info("default/r").unschedulable_plugins == {"PickyReserve"}
    assert traces[0].reserve_status.message() == "no room in the ledger"
    assert traces[0].result == "unschedulable" and traces[0].message == "0/1 nodes are available: 1 no room in the ledger."


def test_bind_failure_is_retried_after_backoff():
    clock = FakeClock(0.0)
    cfg = config([{"schedulerName": "default-scheduler",
                   "plugins": {"bind": {"enabled": [{"name": "FlakyBinder"}], "disabled": [{"name": "*"}]}}}])
    cluster, sched, traces = make([node("n1")], [pod("p")], cfg, clock=clock)
    sched.run_until_idle()
    msg = 'running Bind plugin "FlakyBinder": etcd is sad'
    assert events(cluster, "FailedScheduling") == [("default/p", msg)]
    cond = condition(cluster, "default/p")
    assert (cond["reason"], cond["message"]) == ("SchedulerError", msg)
    info = sched.queue.pod_info("default/p")
    assert info.queue == BACKOFF_Q and not info.unschedulable_plugins  # an error: retried after backoff
    assert not sched.cache.assumed_pods() and sched.cache.node_info("n1").requested.get("cpu", 0) == 0
    assert traces[0].status_code == "Error" and traces[0].bind_error == msg and traces[0].result == "error"
    clock.advance(1.0)
    sched.step()
    assert cluster.placements()["default/p"] == "n1" and info.attempts == 2
    assert events(cluster, "Scheduled") == [("default/p", "Successfully assigned default/p to n1")]


def test_preemption_evicts_nominates_and_schedules_on_retry():
    clock = FakeClock(0.0)
    victim = pod("low", cpu="1500m", priority=1, node_name="n1")
    cluster, sched, traces = make([node("n1", cpu="2")], [victim, pod("high", cpu="1", priority=100)], clock=clock)
    sched.run_until_idle()
    assert "default/low" not in cluster.pods
    assert events(cluster, "Preempted") == [("default/low", "Preempted by pod uid-default-high on node n1")]
    first = traces[0]
    assert first.nominated_node == "n1" and first.victims == ["default/low"]
    assert cluster.pods["default/high"].nominated_node_name == "n1"
    info = sched.queue.pod_info("default/high")
    assert info.queue == BACKOFF_Q  # the victim's delete came during its own attempt
    assert [p.name for p in sched.queue.nominated_pods_for_node("n1")] == ["high"]
    clock.advance(1.0)
    sched.step()
    assert cluster.placements()["default/high"] == "n1"
    assert traces[-1].nominated_node_before == "n1" and traces[-1].num_nodes == -1  # nominated-node fast path
    assert sched.queue.nominated_pods_for_node("n1") == ()


def test_scheduling_gates_hold_pod_until_removed():
    cluster, sched, _ = make([node("n1")], [pod("g", gates=["example.com/hold"])])
    sched.run_until_idle()
    info = sched.queue.pod_info("default/g")
    assert info.queue == UNSCHEDULABLE_PODS and info.gated
    cluster.update_pod(pod_raw("g"))
    sched.run_until_idle()
    assert cluster.placements()["default/g"] == "n1"


def test_node_update_that_helps_moves_pods():
    clock = FakeClock(0.0)
    cluster, sched, _ = make([node("n1", unschedulable=True)], [pod("p")], clock=clock)
    sched.run_until_idle()
    assert sched.queue.pod_info("default/p").queue == UNSCHEDULABLE_PODS
    clock.advance(2)
    cluster.update_node(node_raw("n1"))
    sched.run_until_idle()
    assert cluster.placements()["default/p"] == "n1"


def test_random_tie_break_is_reproducible_with_a_seed():
    def run(seed):
        nodes = [node(f"n{i}") for i in range(6)]
        clock = FakeClock(0.0)
        cluster = SimulatedCluster(nodes, [pod(f"p{i}") for i in range(6)], clock=clock)
        sched = Scheduler(cluster, config(), registry=REGISTRY, clock=clock, tie_break="random", seed=seed)
        sched.run_until_idle()
        return cluster.placements()
    assert run(3) == run(3)


def test_truncate_message():
    assert truncate_message("short") == "short"
    long = "x" * 2000
    assert truncate_message(long) == "x" * 1020 + " ..." and len(truncate_message(long)) == 1024


def test_loop_run_lets_simulated_time_pass():
    data = {"nodes": [node_raw("n1", cpu="1")],
            "pods": [],
            "pending": [pod_raw("a", cpu="800m"), pod_raw("b", cpu="800m")]}
    run = LoopRun(scenario_from_data(data, name="t"), tie_break="name")
    doc = run.run(until_idle=False, duration=700)
    assert [p["pod"] for p in doc["placements"]] == ["default/a", "default/b"]
    # b is retried when the 5-minute unschedulable flush comes round, and twice within 700 s
    assert [p["attempt"] for p in doc["later"]["placements"]] == [2, 3]
    assert 300 < doc["later"]["clock"] <= 700
    assert run.cluster.placements() == {"default/a": "n1", "default/b": None}


def test_loop_run_golden_record_shape():
    data = {"nodes": [node_raw(f"n{i}", labels={"topology.kubernetes.io/zone": f"z{i % 2}"}) for i in range(4)],
            "pending": [pod_raw("a"), pod_raw("b")]}
    doc = LoopRun(scenario_from_data(data, name="t"), tie_break="name").run()
    assert doc["node_order"] == ["n0", "n1", "n2", "n3"]
    rec = doc["placements"][0]
    assert rec["pod"] == "default/a" and rec["start_index"] == 0 and rec["processed_nodes"] == 4
    assert rec["num_feasible_nodes_to_find"] == 4 and rec["feasible_nodes"] == 4
    assert doc["placements"][1]["start_index"] == 0


def test_status_patches_during_an_attempt_reach_the_queue_after_it():
    # All nodes are UnschedulableAndUnresolvable, so preemption clears the pod's nomination while it is
    # in flight; the update must not re-add the pod as a new one (it is requeued once, attempts kept).
    cluster, sched, traces = make([node("n1")], [pod("p", node_selector={"disk": "ssd"}, nominated="n1")])
    sched.run_until_idle()
    assert len(traces) == 1 and sched.queue.num_active() == 0
    info = sched.queue.pod_info("default/p")
    assert info.queue == UNSCHEDULABLE_PODS and info.attempts == 1
    assert cluster.pods["default/p"].nominated_node_name == "" and info.pod.nominated_node_name == ""
    assert sched.queue.nominated_node_of(info.pod) is None


def _load_bench():
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "loop_bench.py")
    spec = importlib.util.spec_from_file_location("loop_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_mixed_cluster_runs_to_completion_consistently():
    data = _load_bench().generate(nodes=40, pods=200, seed=3)
    run = LoopRun(scenario_from_data(data), tie_break="name")
    doc = run.run(until_idle=False, duration=400)
    cluster, sched = run.cluster, run.sched
    bound = [p for p in cluster.pods.values() if p.node_name]
    assert len(doc["placements"]) >= 200 and not sched.cache.assumed_pods() and not sched.queue._in_flight
    assert sched.queue.num_active() == 0
    # capacity holds on every node, and the cache agrees with the cluster
    for name, n in cluster.nodes.items():
        on_node = [p for p in bound if p.node_name == name]
        for res in ("cpu", "memory", "nvidia.com/gpu"):
            used = sum(p.requests.get(res, 0) for p in on_node)
            assert used <= n.allocatable.get(res, 0) or used == 0, (name, res)
        ni = sched.cache.node_info(name)
        assert sorted(p.uid for p in ni.pods) == sorted(p.uid for p in on_node)
        assert ni.requested.get("cpu", 0) == sum(p.requests.get("cpu", 0) for p in on_node)
    pending = {f'bench/{p["metadata"]["name"]}' for p in data["pending"]}
    for p in bound:
        if p.key not in pending:
            continue
        n = cluster.nodes[p.node_name]
        assert not n.unschedulable
        if any(t.effect == "NoSchedule" for t in n.taints):
            assert p.labels["app"] == "train"
    db_nodes = [p.node_name for p in bound if p.labels.get("app") == "db"]
    assert len(db_nodes) == len(set(db_nodes))  # required anti-affinity: one per node
    # what is left pending really cannot run: GPU jobs beyond the GPUs, or pods larger than any node
    left = {cluster.pods[k].labels["app"] for k in pending if k in cluster.pods and not cluster.pods[k].node_name}
    assert left <= {"train", "huge"}


def test_volume_binding_prebind_through_the_simulated_pv_controller():
    def pvc(name, sc):
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": "default", "uid": f"uid-pvc-{name}"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                         "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Pending"}}
    local_pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "local-1"},
                "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                         "storageClassName": "local", "nodeAffinity": {"required": {"nodeSelectorTerms": [
                             {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                    "values": ["n2"]}]}]}}},
                "status": {"phase": "Available"}}
    scs = [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
           {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
            "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"}]
    vol = lambda claim: [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]  # noqa: E731
    clock = FakeClock(0.0)
    cluster = SimulatedCluster([node("n1"), node("n2")], [pod("static", volumes=vol("a")),
                                                          pod("dynamic", volumes=vol("b"))],
                               objects={"persistentvolumes": [local_pv], "persistentvolumeclaims": [
                                   pvc("a", "local"), pvc("b", "fast")], "storageclasses": scs}, clock=clock)
    sched = Scheduler(cluster, config(), registry=REGISTRY, clock=clock, tie_break="name")
    sched.run_until_idle()
    assert cluster.placements() == {"default/static": "n2", "default/dynamic": "n1"}
    claims = cluster.objects.persistent_volume_claims
    assert claims["default/a"]["spec"]["volumeName"] == "local-1"
    assert claims["default/b"]["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n1"
    provisioned = cluster.objects.persistent_volumes[claims["default/b"]["spec"]["volumeName"]]
    assert provisioned["spec"]["claimRef"]["name"] == "b" and provisioned["status"]["phase"] == "Bound"
