"""bench/workloads.py's Unschedulable and Preemption shapes, and tiny runs of them through bench/run.py."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from bench import run as bench_run  # noqa: E402
from bench.workloads import build  # noqa: E402


def _resources(pod):
    return pod["spec"]["containers"][0]["resources"]


def test_unschedulable_workload_has_upstream_shape():
    nodes, init, measured = build("Unschedulable_5000Nodes_200InitPods")
    assert (len(nodes), len(init), len(measured)) == (5000, 200, 5000)
    assert _resources(init[0]) == {"requests": {"cpu": "9", "memory": "500Mi"}}  # pod-large-cpu: no limits
    assert _resources(measured[0])["requests"] == {"cpu": "100m", "memory": "500Mi"}
    assert "topology.kubernetes.io/zone" not in nodes[0]["metadata"]["labels"]


def test_preemption_workload_has_upstream_shape():
    nodes, init, measured = build("PreemptionBasic_500Nodes")
    assert (len(nodes), len(init), len(measured)) == (500, 2000, 500)
    low, high = init[0]["spec"], measured[0]["spec"]
    assert low["priority"] == 0 and low["terminationGracePeriodSeconds"] == 0
    assert _resources(init[0])["limits"] == {"cpu": "900m", "memory": "500Mi"}
    assert high["priority"] == 10 and _resources(measured[0])["requests"] == {"cpu": "3000m", "memory": "500Mi"}


@pytest.mark.parametrize("name, init_pods, pods, attempts, preempted", [
    ("Unschedulable_5000Nodes_200InitPods", 10, 50, 50, 0),
    # 4 low-priority pods fill each node; each high-priority pod evicts 3, waits out its backoff, then binds.
    ("PreemptionBasic_500Nodes", 80, 20, 40, 60),
])
def test_tiny_run_binds_every_measured_pod(name, init_pods, pods, attempts, preempted):
    r = bench_run.run_median(name, 20, pods, "none", 1, init_pods=init_pods)
    assert (r["init_pods"], r["measured_pods"], r["bound"]) == (init_pods, pods, pods)
    assert (r["attempts"], r["preempted"]) == (attempts, preempted)
    assert r["pods_per_s"] > 0 and r["kube_floor"] in (570, 590)


def test_record_db_reports_pods_per_second_to_the_last_cycles_commit():
    r = bench_run.run_median("PreemptionBasic_500Nodes", 20, 20, "db", 1, init_pods=80)
    assert r["bound"] == 20 and r["recorder_flushed"] and r["rows"] == 80 + 40
    # the window runs from the first measured cycle to the commit of the last one's row
    assert r["pods_per_s_to_commit"] < r["pods_per_s"]
    window = 20 / r["pods_per_s_to_commit"]
    assert window == pytest.approx(r["seconds"] + r["recorder_lag_s"], abs=0.01)


def _dra_run(batch: bool, cache: bool, steps: int = 3):
    """A small SchedulingWithResourceClaim-shaped cluster (two devices a node, five pods a claim) plus template
    pods, some nodes filled up front: every cycle's trace (full), and where each pod went."""
    from bench.workloads import build_dra, make_dra_pod
    from scheduler_core.cluster.simulated import SimulatedCluster
    from scheduler_core.objects import Node, Pod
    from scheduler_core.scheduler import Scheduler
    from scheduler_core.trace import CallbackSink

    from .test_batch_paths import comparable

    b = build_dra("SchedulingWithResourceClaim_5000pods_500nodes", 12, 40, 20)
    cluster = SimulatedCluster([Node(n) for n in b.nodes], objects=b.cluster_objects)
    traces = []
    sched = Scheduler(cluster, tie_break="random", seed=3, kube_version="1.36", trace_all_filters=True,
                      trace_sink=CallbackSink(lambda t: traces.append(comparable(t))))
    sched.ctx.batch = batch
    if not cache:
        sched.profiles["default-scheduler"].get_plugin("DynamicResources").allocation_cache = None
    for kind, raw in b.init_objects + b.measure_objects:
        cluster.add_object(kind, raw)
    for p in b.init + b.measured:
        cluster.add_pod(Pod(p))
    sched.run_until_idle()
    # template pods, then some deleted (claims freed) and more added
    from bench.workloads import make_claim_template
    cluster.add_object("ResourceClaimTemplate", make_claim_template("test"))
    for step in range(steps):
        for i in range(8):
            cluster.add_pod(Pod(make_dra_pod(100 * step + i, "test", "template")))
        sched.run_until_idle()
        for p in [p for p in cluster.list_pods() if p.node_name][::3]:
            cluster.delete_pod(p)
    return traces, cluster.placements()


def test_dra_allocation_cache_and_batch_filter_decide_as_the_per_node_search():
    """The allocation results kept across cycles and DynamicResources' batch Filter give exactly the traces
    (every plugin's status on every node, scores, choices) of a fresh search on each node."""
    reference = _dra_run(batch=False, cache=False)
    assert {t["result"] for t in reference[0]} == {"scheduled", "unschedulable"}
    assert _dra_run(batch=True, cache=True) == reference
    assert _dra_run(batch=False, cache=True) == reference


def test_dra_workloads_have_upstream_shape():
    from bench.workloads import DRA_WORKLOADS, build_dra
    b = build_dra("SchedulingWithResourceClaimTemplate_5000pods_500nodes")
    assert (len(b.nodes), len(b.init), len(b.measured)) == (500, 2500, 2500)
    devices = b.cluster_objects["resourceslices"][0]["spec"]["devices"]
    assert len(devices) == 10 and devices[3]["attributes"]["dra.example.com/numa"] == {"int": 3}
    assert b.init[0]["spec"]["resourceClaims"] == [{"name": "resource",
                                                    "resourceClaimTemplateName": "test-claim-template"}]
    shared = build_dra("SchedulingWithResourceClaim_5000pods_500nodes")
    assert len(shared.cluster_objects["resourceslices"][0]["spec"]["devices"]) == 2
    assert [k for k, _ in shared.measure_objects].count("ResourceClaim") == 500
    assert shared.measured[7]["spec"]["resourceClaims"][0]["resourceClaimName"] == "test-claim-1"
    full = build_dra("SteadyStateClusterResourceClaimTemplate_full_500nodes")
    assert [k for k, _ in full.init_objects].count("ResourceClaim") == 4990 and not full.measured
    assert DRA_WORKLOADS["SchedulingWithResourceClaimTemplate_5000pods_500nodes"].thresholds == (40, 56)


@pytest.mark.parametrize("name, init_pods, pods", [
    ("SchedulingWithResourceClaimTemplate_5000pods_500nodes", 20, 20),
    ("SchedulingWithResourceClaim_5000pods_500nodes", 10, 10),
])
def test_tiny_dra_run_binds_every_measured_pod(name, init_pods, pods):
    r = bench_run.run_median(name, 10, pods, "none", 1, init_pods=init_pods)
    assert (r["kube_version"], r["init_pods"], r["bound"], r["attempts"]) == ("1.36", init_pods, pods, pods)
    assert r.get("kube_floor") in (56, None) and r["pods_per_s"] > 0


def test_steady_dra_run_reuses_the_devices_of_deleted_pods():
    # 10 nodes x 10 devices, 95 allocated up front: each batch of 10 fits only in the devices the last one freed
    r = bench_run.run_median("SteadyStateClusterResourceClaimTemplate_full_500nodes", 10, None, "none", 1,
                             seconds=0.5, init_claims=90)
    assert r["measured_pods"] >= 10 and r["measured_pods"] % 10 == 0 and r["bound"] == r["measured_pods"]
    assert r["kube_floor"] == 60
