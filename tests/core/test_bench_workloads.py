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
