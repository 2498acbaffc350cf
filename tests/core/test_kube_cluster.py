"""KubeCluster, leader election and shadow mode against the real Django server's Kubernetes-compatible API
(the web process in a subprocess, SQLite), through the official ``kubernetes`` client: no mocks."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("uvicorn")

from kubernetes import client as kclient
from kubernetes import config as kconfig
from kubernetes.client.rest import ApiException

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.kube import KubeCluster, RateLimiter
from scheduler_core.cluster.leaderelection import LeaderElector, LeaseLock
from scheduler_core.cluster.simulated import ClusterError, SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.kuberun import KubeSchedulerRunner
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scenario import scenario_from_data
from scheduler_core.scheduler import Scheduler
from scheduler_core.shadow import ShadowScheduler
from scheduler_core.trace import CallbackSink
from tests.k8s_api_server import ROOT, ApiServer, node, pod

MOST_ALLOCATED = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                      {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


def wait_for(predicate, timeout: float = 30.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("k8sapi")
    srv = ApiServer(tmp, f"sqlite:///{tmp}/db.sqlite3", bookmark_seconds=1, migrate=True)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def small_window_server(tmp_path_factory):
    """A server that keeps only the last 50-100 changes watchable (so a paused watch gets 410 Gone)."""
    tmp = tmp_path_factory.mktemp("k8sapi-small")
    srv = ApiServer(tmp, f"sqlite:///{tmp}/db.sqlite3", watch_window=50, migrate=True)
    yield srv
    srv.stop()


def core_api(kubeconfig) -> kclient.CoreV1Api:
    return kclient.CoreV1Api(kconfig.new_client_from_config(config_file=str(kubeconfig)))


def mixed_scenario(n_nodes: int, n_pods: int, unschedulable: int = 0) -> dict:
    """Nodes of two sizes in three zones; pods of a few shapes, some spread by zone, some never fitting."""
    nodes = [node(f"node-{i:03d}", cpu="8" if i % 3 else "4", memory="32Gi", zone="abc"[i % 3])
             for i in range(n_nodes)]
    pods = []
    for i in range(n_pods):
        extra = {}
        if i % 5 == 0:
            extra["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": "DoNotSchedule",
                                                   "labelSelector": {"matchLabels": {"app": "spread"}}}]
        pods.append(pod(f"pod-{i:04d}", cpu=("250m", "500m", "1")[i % 3], memory="512Mi",
                        labels={"app": "spread" if i % 5 == 0 else "web"}, **extra))
    for i in range(unschedulable):
        pods.append(pod(f"zz-huge-{i}", cpu="64"))
    return {"name": "mixed", "nodes": nodes, "pods": [], "pending": pods}


def in_memory_placements(scenario: dict) -> tuple:
    """What the scheduler decides over the SimulatedCluster (the reference for the API path)."""
    cluster = SimulatedCluster.from_scenario(scenario_from_data(json.loads(json.dumps(scenario))))
    sched = Scheduler(cluster, tie_break="name")
    sched.run_until_idle()
    messages = {e["object"]: e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"}
    return cluster.placements(), messages


def bound_pods(core) -> dict:
    return {f"{p.metadata.namespace}/{p.metadata.name}": p.spec.node_name
            for p in core.list_pod_for_all_namespaces().items}


class Loop:
    """A Scheduler over a KubeCluster, run by KubeSchedulerRunner in a thread."""

    def __init__(self, kubeconfig, config=None, elector=None, qps: float = 0.0, trace=None, **kube_kw):
        self.kube = KubeCluster(kubeconfig=str(kubeconfig), qps=qps, burst=100, **kube_kw)
        self.kube.start()
        self.sched = Scheduler(self.kube, config, tie_break="name", trace_sink=trace)
        self.runner = KubeSchedulerRunner(self.kube, self.sched, elector)
        self.stop_event = threading.Event()
        self.outcome = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.outcome = self.runner.run(self.stop_event)

    def stop(self):
        self.stop_event.set()
        self.thread.join(20)
        self.kube.close()


# -- end to end -----------------------------------------------------------------------------------------
def test_schedules_a_simulated_cluster_through_the_api_like_in_memory(server):
    scen = mixed_scenario(30, 300, unschedulable=2)
    kc = server.create_cluster("e2e", scen)
    expected, messages = in_memory_placements(scen)
    core = core_api(kc)
    t0 = time.perf_counter()
    loop = Loop(kc)
    try:
        want_bound = sum(1 for v in expected.values() if v)
        # watch the scheduler's own informer (polling the API would slow the server down)
        wait_for(lambda: sum(1 for p in loop.kube.list_pods() if p.node_name) == want_bound, 60, "every pod bound")
        elapsed = time.perf_counter() - t0
        # the unschedulable pods' attempts may end after the last binding (on a loaded machine, well after):
        # their events and conditions are waited for, not expected at once
        events = kclient.EventsV1Api(core.api_client)

        def every_event():
            assert loop.kube.events.flush(30)
            items = events.list_namespaced_event("default").items
            failed = {e.regarding.name for e in items if e.reason == "FailedScheduling"}
            return items if failed >= {k.split("/")[1] for k in messages} else None
        ev_items = wait_for(every_event, 60, "a FailedScheduling event of every unschedulable pod")

        def huge_condition():
            conds = core.read_namespaced_pod("zz-huge-0", "default").status.conditions or ()
            return next((c for c in conds if c.type == "PodScheduled"), None)
        cond = wait_for(huge_condition, 60, "zz-huge-0's PodScheduled condition")
    finally:
        loop.stop()
    got = bound_pods(core)
    assert {k: v or None for k, v in got.items()} == expected
    print(f"\nend to end: {want_bound} pods bound through the API in {elapsed:.2f}s "
          f"({want_bound / elapsed:.0f} pods/s, 30 nodes, qps unlimited)")
    scheduled = [e for e in ev_items if e.reason == "Scheduled"]
    assert len(scheduled) == want_bound
    assert {e.regarding.name for e in scheduled} == {k.split("/")[1] for k, v in expected.items() if v}
    assert all(e.reporting_controller == "default-scheduler" and e.action == "Binding" for e in scheduled)
    failed = {e.regarding.name: e.note for e in ev_items if e.reason == "FailedScheduling"}
    assert failed == {k.split("/")[1]: m for k, m in messages.items()}
    assert (cond.status, cond.reason, cond.message) == ("False", "Unschedulable", messages["default/zz-huge-0"])
    bound = core.read_namespaced_pod("pod-0000", "default")
    assert bound.status.phase == "Running"   # the simulated kubelet runs what is bound through the API
    assert ("PodScheduled", "True") in [(c.type, c.status) for c in bound.status.conditions]
    # core/v1 sees the same events (kubectl describe reads them with field selectors)
    by_field = core.list_namespaced_event("default", field_selector="involvedObject.name=zz-huge-0,"
                                                                   "involvedObject.kind=Pod,reason=FailedScheduling")
    assert [e.message for e in by_field.items] == [messages["default/zz-huge-0"]]


def test_volume_binding_prebind_writes_claims_and_waits_for_the_pv_controller(server):
    """PreBind updates the claim through the API, the simulated PV controller provisions and binds a volume,
    the watch brings the bound claim back, and only then the pod is bound."""
    scen = {"nodes": [node("n1"), node("n2")], "pods": [], "pending": [],
            "storageclasses": [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                "metadata": {"name": "standard"}, "provisioner": "example.com/csi",
                                "volumeBindingMode": "WaitForFirstConsumer"}],
            "persistentvolumeclaims": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                        "metadata": {"name": "data", "namespace": "default", "uid": "claim-uid"},
                                        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                                                 "resources": {"requests": {"storage": "1Gi"}}},
                                        "status": {"phase": "Pending"}}]}
    kc = server.create_cluster("volumes", scen)
    core = core_api(kc)
    loop = Loop(kc)
    try:
        core.create_namespaced_pod("default", pod("db", volumes=[
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]))
        wait_for(lambda: core.read_namespaced_pod("db", "default").spec.node_name, 30, "db to be bound")
    finally:
        loop.stop()
    node_name = core.read_namespaced_pod("db", "default").spec.node_name
    claim = core.read_namespaced_persistent_volume_claim("data", "default")
    assert claim.status.phase == "Bound" and claim.spec.volume_name == "pvc-claim-uid"
    assert claim.metadata.annotations["volume.kubernetes.io/selected-node"] == node_name


def test_preemption_through_the_api_evicts_nominates_and_binds(server):
    kc = server.create_cluster("preempt", {"nodes": [node("n1", cpu="2")], "pods": [], "pending": []})
    api = kconfig.new_client_from_config(config_file=str(kc))
    core = kclient.CoreV1Api(api)
    kclient.SchedulingV1Api(api).create_priority_class({"metadata": {"name": "high"}, "value": 1000})
    loop = Loop(kc)
    try:
        core.create_namespaced_pod("default", pod("low", cpu="1500m"))
        wait_for(lambda: core.read_namespaced_pod("low", "default").spec.node_name, 20, "low to be bound")
        core.create_namespaced_pod("default", pod("high", cpu="1500m", priorityClassName="high"))
        wait_for(lambda: core.read_namespaced_pod("high", "default").spec.node_name == "n1", 30, "high to be bound")
        assert loop.kube.events.flush(10)
    finally:
        loop.stop()
    assert [p.metadata.name for p in core.list_namespaced_pod("default").items] == ["high"]
    high = core.read_namespaced_pod("high", "default")
    assert high.status.nominated_node_name is None   # kube-apiserver 1.36 clears it at the binding
    events = kclient.EventsV1Api(api).list_namespaced_event("default").items
    preempted = [e for e in events if e.reason == "Preempted"]
    assert [(e.regarding.name, e.related.name, e.note, e.action) for e in preempted] == [
        ("low", "high", f"Preempted by pod {high.metadata.uid} on node n1", "Preempting")]
    failed = [e.note for e in events if e.reason == "FailedScheduling" and e.regarding.name == "high"]
    assert failed == ["0/1 nodes are available: 1 Insufficient cpu."]   # preemption succeeded: no suffix
    assert sorted(e.regarding.name for e in events if e.reason == "Scheduled") == ["high", "low"]


def test_throughput_with_default_client_rate_limit(server):
    """kube-scheduler's client defaults (50 QPS, burst 100) bound the binding rate (events have a bucket of
    their own, as kube-scheduler's event client does)."""
    scen = mixed_scenario(20, 150)
    kc = server.create_cluster("qps", scen)
    core = core_api(kc)
    t0 = time.perf_counter()
    loop = Loop(kc, qps=50.0)
    try:
        wait_for(lambda: all(p.node_name for p in loop.kube.list_pods()), 60, "every pod bound")
        elapsed = time.perf_counter() - t0
    finally:
        loop.stop()
    assert all(bound_pods(core).values())
    print(f"\nqps 50/burst 100: 150 pods bound in {elapsed:.2f}s ({150 / elapsed:.0f} pods/s)")
    assert elapsed >= (150 + len(loop.kube.informers) - 100) / 50 * 0.9


def test_rate_limiter_is_a_token_bucket():
    lim = RateLimiter(qps=40, burst=5)
    t0 = time.monotonic()
    for _ in range(25):
        lim.acquire()
    assert 0.45 <= time.monotonic() - t0 < 1.5   # 5 at once, 20 more at 40/s
    unlimited = RateLimiter(qps=0, burst=1)
    t0 = time.monotonic()
    for _ in range(1000):
        unlimited.acquire()
    assert time.monotonic() - t0 < 0.5


# -- conflicts ----------------------------------------------------------------------------------------
def test_double_bind_is_409_and_the_pod_is_forgotten_not_bound_elsewhere(server):
    kc = server.create_cluster("conflict", {"nodes": [node("n1"), node("n2")], "pods": [],
                                            "pending": [pod("p1"), pod("p2")]})
    core = core_api(kc)
    kube = KubeCluster(kubeconfig=str(kc), qps=0)
    kube.start()
    try:
        traces = []
        sched = Scheduler(kube, tie_break="name", trace_sink=CallbackSink(traces.append))
        kube.pump()
        # someone else binds p1 to n2 before this scheduler's binding (which would pick n1)
        core.create_namespaced_pod_binding("p1", "default", kclient.V1Binding(
            metadata=kclient.V1ObjectMeta(name="p1"), target=kclient.V1ObjectReference(kind="Node", name="n2")),
            _preload_content=False)
        tr = sched.schedule_one()
        assert tr.pod.name == "p1" and tr.chosen == "n1"
        assert tr.bind_error == 'running Bind plugin "DefaultBinder": Operation cannot be fulfilled on ' \
                                'pods/binding "p1": pod p1 is already assigned to node "n2"'
        assert core.read_namespaced_pod("p1", "default").spec.node_name == "n2"
        wait_for(lambda: kube.pump() or kube.get_pod("default", "p1").node_name == "n2", 10, "the watch")
        kube.pump()
        sched.run_until_idle()
        assert [p.key for p in sched.cache.node_info("n2").pods] == ["default/p1"]
        assert not sched.cache.is_assumed_pod(kube.get_pod("default", "p1"))
        # a second binding of a bound pod is refused, with kube's Status
        with pytest.raises(ClusterError, match=r'pod p2 is already assigned to node "n\d"'):
            kube.bind(kube.get_pod("default", "p2"), "n1")
        with pytest.raises(ApiException) as err:
            core.create_namespaced_pod_binding("p2", "default", kclient.V1Binding(
                metadata=kclient.V1ObjectMeta(name="p2"),
                target=kclient.V1ObjectReference(kind="Node", name="n1")), _preload_content=False)
        status = json.loads(err.value.body)
        assert (err.value.status, status["reason"], status["details"]) == (
            409, "Conflict", {"name": "p2", "kind": "pods/binding"})
    finally:
        kube.close()
    assert bound_pods(core) == {"default/p1": "n2", "default/p2": "n1"}


# -- watches: drop and resume, 410 and re-list --------------------------------------------------------
def test_watch_drop_resumes_from_the_resource_version(server):
    kc = server.create_cluster("resume", {"nodes": [node("n1")], "pods": [], "pending": []})
    core = core_api(kc)
    kube = KubeCluster(kubeconfig=str(kc), qps=0)
    kube.start()
    try:
        core.create_namespaced_pod("default", pod("a"))
        wait_for(lambda: kube.get_pod("default", "a"), 10, "pod a")
        kube.stop(flush_events=False)          # every watch connection is dropped
        rv_before = kube.resource_versions()["Pod"]
        core.create_namespaced_pod("default", pod("b"))
        core.delete_namespaced_pod("a", "default")
        assert kube.get_pod("default", "b") is None
        kube.start()
        wait_for(lambda: kube.get_pod("default", "b") and not kube.get_pod("default", "a"), 10, "resumed watch")
        assert int(kube.resource_versions()["Pod"]) > int(rv_before)
        assert all(inf.relists == 0 for inf in kube.informers)
    finally:
        kube.close()


def test_410_gone_relists_and_the_scheduler_catches_up(small_window_server):
    kc = small_window_server.create_cluster("gone", {"nodes": [node("n1"), node("n2")], "pods": [],
                                                     "pending": [pod("old-0"), pod("old-1")]})
    core = core_api(kc)
    kube = KubeCluster(kubeconfig=str(kc), qps=0)
    kube.start()
    try:
        sched = Scheduler(kube, tie_break="name")
        assert sched.queue.num_active() == 2     # old-0 and old-1
        kube.stop(flush_events=False)
        core.delete_namespaced_pod("old-0", "default")
        for i in range(120):                   # more changes than the server keeps (50 to 100)
            core.patch_namespaced_pod("old-1", "default", {"metadata": {"labels": {"round": str(i)}}})
        for i in range(3):
            core.create_namespaced_pod("default", pod(f"new-{i}"))
        # a watch from the old resourceVersion now gets an ERROR event with a 410 Status
        raw = core.api_client.call_api("/api/v1/pods", "GET", query_params=[
            ("watch", "true"), ("resourceVersion", kube.resource_versions()["Pod"]), ("timeoutSeconds", "5")],
            auth_settings=["BearerToken"], _preload_content=False)
        first = json.loads(raw.data.decode().splitlines()[0])
        assert first["type"] == "ERROR"
        assert (first["object"]["code"], first["object"]["reason"]) == (410, "Expired")
        assert first["object"]["message"].startswith("too old resource version: ")
        kube.start()
        pod_informer = next(inf for inf in kube.informers if inf.kind == "Pod")
        wait_for(lambda: pod_informer.relists >= 1 and kube.get_pod("default", "new-2"), 15, "re-list")
        assert kube.get_pod("default", "old-0") is None
        assert kube.get_pod("default", "old-1").labels["round"] == "119"
        node_informer = next(inf for inf in kube.informers if inf.kind == "Node")
        assert node_informer.relists == 0        # no node change was compacted away: its watch resumed
        kube.pump()
        assert sched.queue.num_active() == 4     # old-0 left the queue with the re-list; new-0..2 joined
        sched.run_until_idle()
        wait_for(lambda: kube.pump() or all(p.node_name for p in kube.list_pods()), 15, "all bound")
    finally:
        kube.close()
    assert sorted(bound_pods(core)) == ["default/new-0", "default/new-1", "default/new-2", "default/old-1"]


def test_server_restart_reconnects_with_backoff_and_resumes(tmp_path):
    """The store keeps objects and resourceVersions across a restart: the informers' watches resume where they
    were (no re-list) and see what was written after it."""
    srv = ApiServer(tmp_path, f"sqlite:///{tmp_path}/db.sqlite3", migrate=True)
    try:
        kc = srv.create_cluster("restart", {"nodes": [node("n1")], "pods": [], "pending": [pod("before")]})
        kube = KubeCluster(kubeconfig=str(kc), qps=0, backoff_initial=0.2, backoff_max=1.0)
        kube.start()
        try:
            rv_before = int(kube.resource_versions()["Pod"])
            srv.stop()                 # every watch fails; the informers retry with backoff
            time.sleep(1.5)
            srv.start()                # a new process, serving the same store
            core_api(kc).create_namespaced_pod("default", pod("after"))
            wait_for(lambda: kube.get_pod("default", "after") is not None, 30, "the informer to come back")
            pods = next(inf for inf in kube.informers if inf.kind == "Pod")
            assert pods.relists == 0 and int(pods.rv) > rv_before
            assert sorted(p.name for p in kube.list_pods()) == ["after", "before"]
        finally:
            kube.close()
    finally:
        srv.stop()


# -- leader election --------------------------------------------------------------------------------------
def test_leader_election_hand_over_with_an_injected_clock(server):
    kc = server.create_cluster("lease", {"nodes": [node("n1")], "pods": [], "pending": []})
    clock = FakeClock(1_000_000.0)
    a_cluster, b_cluster = KubeCluster(kubeconfig=str(kc), qps=0), KubeCluster(kubeconfig=str(kc), qps=0)
    seen = []
    stopped = []
    a = LeaderElector(LeaseLock(a_cluster, identity="sched-a"), clock=clock,
                      on_stopped_leading=lambda: stopped.append("a"), on_new_leader=lambda who: seen.append(("a", who)))
    b = LeaderElector(LeaseLock(b_cluster, identity="sched-b"), clock=clock,
                      on_new_leader=lambda who: seen.append(("b", who)))
    assert (a.lease_duration, a.renew_deadline, a.retry_period) == (15.0, 10.0, 2.0)
    assert a.step() == 2.0 and a.leading
    assert 2.0 <= b.step() <= 2.0 * 2.2 and not b.leading       # held: retry after the jittered period
    for _ in range(3):                                          # a renews, b keeps waiting
        clock.advance(2.0)
        assert a.step() == 2.0
        assert b.step() > 0 and not b.leading
    clock.advance(14.0)                                         # a stopped renewing 14s ago: still valid
    assert b.step() and not b.leading
    clock.advance(1.5)                                          # 15s since b saw the last renewal
    b.step()
    assert b.leading and b.is_leader()
    lease = kclient.CoordinationV1Api(core_api(kc).api_client).read_namespaced_lease("kube-scheduler", "kube-system")
    assert (lease.spec.holder_identity, lease.spec.lease_transitions, lease.spec.lease_duration_seconds) == \
        ("sched-b", 1, 15)
    # a comes back: 15.5 s after its last renewal its leadership lapsed at the renew deadline (10 s), before b
    # could take the lease: it stops without another request
    assert not a.leading and a.valid_for() == 0
    assert a.step() is None and not a.leading and stopped == ["a"]
    assert ("b", "sched-a") in seen and ("b", "sched-b") in seen
    # b releases on cancel: the lease is free at once for a third candidate
    assert b.release()
    c = LeaderElector(LeaseLock(KubeCluster(kubeconfig=str(kc), qps=0), identity="sched-c"), clock=clock)
    c.step()
    assert c.leading
    lease = kclient.CoordinationV1Api(core_api(kc).api_client).read_namespaced_lease("kube-scheduler", "kube-system")
    assert (lease.spec.holder_identity, lease.spec.lease_transitions) == ("sched-c", 2)


def _kuberun(kc, identity, trace, log_path):
    return subprocess.Popen(
        [sys.executable, "-m", "scheduler_core.kuberun", "--kubeconfig", str(kc), "--identity", identity,
         "--lease-duration", "3", "--renew-deadline", "2", "--retry-period", "0.5", "--tie-break", "name",
         "--qps", "0", "--trace", str(trace)],
        cwd=ROOT, stdout=open(log_path, "w"), stderr=subprocess.STDOUT, start_new_session=True)


def test_leader_failover_between_two_scheduler_processes_binds_each_pod_once(server, tmp_path):
    kc = server.create_cluster("failover", {"nodes": [node(f"n{i}") for i in range(4)], "pods": [], "pending": []})
    core = core_api(kc)
    leases = kclient.CoordinationV1Api(core.api_client)

    def holder():
        try:
            return leases.read_namespaced_lease("kube-scheduler", "kube-system").spec.holder_identity
        except ApiException:
            return None
    a = _kuberun(kc, "sched-a", tmp_path / "a.jsonl", tmp_path / "a.log")
    wait_for(lambda: holder() == "sched-a", 30, "sched-a to lead")
    b = _kuberun(kc, "sched-b", tmp_path / "b.jsonl", tmp_path / "b.log")
    try:
        for i in range(10):
            core.create_namespaced_pod("default", pod(f"first-{i}"))
        wait_for(lambda: all(bound_pods(core).values()), 30, "sched-a to bind the first pods")
        wait_for(lambda: len(kclient.EventsV1Api(core.api_client).list_namespaced_event("default").items) == 10,
                 10, "sched-a's Scheduled events")   # written in the background: let them land before the kill
        os.killpg(a.pid, signal.SIGKILL)        # the leader dies without releasing the lease
        a.wait(10)
        t_kill = time.monotonic()
        for i in range(10):
            core.create_namespaced_pod("default", pod(f"second-{i}"))
        wait_for(lambda: holder() == "sched-b", 30, "sched-b to take over")
        wait_for(lambda: len(bound_pods(core)) == 20 and all(bound_pods(core).values()), 30,
                 "sched-b to bind the second pods")
        takeover = time.monotonic() - t_kill
    finally:
        for p in (a, b):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(20)
    traces = {}
    for who in ("a", "b"):
        lines = (tmp_path / f"{who}.jsonl").read_text().splitlines()
        traces[who] = [json.loads(line) for line in lines if line.strip()]
    bound_by = {w: {t["pod"] for t in trs if t["result"] == "scheduled"} for w, trs in traces.items()}
    assert bound_by["a"] <= {f"default/first-{i}" for i in range(10)}   # its last lines may die with it
    assert bound_by["b"] == {f"default/second-{i}" for i in range(10)}
    assert not any(t.get("bind_error") for trs in traces.values() for t in trs)
    ev = kclient.EventsV1Api(core.api_client).list_namespaced_event("default")
    scheduled = [e.regarding.name for e in ev.items if e.reason == "Scheduled"]
    assert sorted(scheduled) == sorted(k.split("/")[1] for k in bound_pods(core))   # one binding per pod
    print(f"\nfailover: sched-b bound the pods created after sched-a was killed {takeover:.1f}s later "
          f"(lease 3s, renew 2s, retry 0.5s)")
    assert leases.read_namespaced_lease("kube-scheduler", "kube-system").spec.lease_transitions >= 1


# -- shadow mode -------------------------------------------------------------------------------------------
def test_shadow_agrees_with_the_same_profile_on_a_recorded_cluster():
    scen = scenario_from_data(mixed_scenario(12, 80))
    cluster = SimulatedCluster.from_scenario(scen)
    same = ShadowScheduler(cluster, tie_break="name")
    other = ShadowScheduler(cluster, load_config(MOST_ALLOCATED, in_tree_registry()), tie_break="name")
    sched = Scheduler(cluster, tie_break="name")
    sched.run_until_idle()
    assert same.stats()["decisions"] == 80
    assert same.stats()["agreed"] == 80 and same.stats()["agreement_rate"] == 1.0
    assert not same.disagreements
    stats = other.stats()
    assert stats["decisions"] == 80 and 0 < stats["agreed"] < 80
    rec = other.disagreements[0]
    assert rec.actual != rec.shadow and rec.actual_feasible
    assert rec.shadow_score >= rec.actual_score
    assert set(rec.to_dict()) >= {"pod", "actual", "shadow", "agree", "within_ties", "actual_score",
                                  "shadow_score"}


def test_shadow_through_the_api_is_read_only_and_agrees(server):
    scen = mixed_scenario(8, 40)
    kc = server.create_cluster("shadow", scen)
    core = core_api(kc)
    watcher = KubeCluster(kubeconfig=str(kc), qps=0, read_only=True)
    watcher.start()
    shadow = ShadowScheduler(watcher, tie_break="name")
    loop = Loop(kc)
    try:
        wait_for(lambda: all(bound_pods(core).values()), 60, "every pod bound")
        wait_for(lambda: watcher.pump(0.1) >= 0 and shadow.stats()["decisions"] == 40, 20, "shadow decisions")
        with pytest.raises(ClusterError, match="read-only"):
            watcher.bind(watcher.get_pod("default", "pod-0001"), "node-000")
    finally:
        loop.stop()
        watcher.close()
    assert shadow.stats()["agreed"] == 40


def test_kuberun_shadow_mode_reports_agreement(server, tmp_path):
    kc = server.create_cluster("shadowcli", mixed_scenario(6, 20))
    report = tmp_path / "report.json"
    shadow = subprocess.Popen(
        [sys.executable, "-m", "scheduler_core.kuberun", "--kubeconfig", str(kc), "--shadow", "--tie-break", "name",
         "--shadow-report", str(report), "--duration", "60"],
        cwd=ROOT, stdout=open(tmp_path / "shadow.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: "watching" in (tmp_path / "shadow.log").read_text(), 30, "the shadow's watches")
        loop = Loop(kc)
        try:
            wait_for(lambda: report.exists() and json.loads(report.read_text() or "{}").get("stats", {}).get(
                "decisions") == 20, 30, "20 shadow decisions")
        finally:
            loop.stop()
    finally:
        os.killpg(shadow.pid, signal.SIGTERM)
        assert shadow.wait(20) == 0
    doc = json.loads(report.read_text())
    assert doc["stats"]["agreed"] == 20 and doc["stats"]["agreement_rate"] == 1.0 and doc["disagreements"] == []
    assert "Scheduled" not in (tmp_path / "shadow.log").read_text()

