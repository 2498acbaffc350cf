"""Dry-run time: 1,000 pending pods on 500 nodes, LeastAllocated (current) vs MostAllocated (candidate).

Runs the same computation as a profile dry run (two one-pass simulations and the diff), without the
database: ``python bench/dryrun_bench.py [NODES PODS]``.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")

import django  # noqa: E402

django.setup()

from scheduler_core.scenario import scenario_from_data  # noqa: E402

from dashboard.profiles.dryrun import _run, _zones, compare  # noqa: E402


def doc(strategy):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}]}]}


def main(n_nodes=500, n_pods=1000):
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "110"}
    nodes = [{"metadata": {"name": f"node-{i:04d}", "labels": {"topology.kubernetes.io/zone": f"zone-{i % 3}",
                                                                "kubernetes.io/hostname": f"node-{i:04d}"}},
              "status": {"capacity": alloc, "allocatable": alloc}} for i in range(n_nodes)]
    pending = [{"metadata": {"name": f"p-{i:05d}", "namespace": "load", "uid": f"u-{i}",
                             "labels": {"app": f"app-{i % 20}"}},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {
                    "cpu": ("100m", "250m", "1")[i % 3], "memory": ("256Mi", "1Gi", "2Gi")[i % 3]}}}]}}
               for i in range(n_pods)]
    scen = scenario_from_data({"name": "bench", "nodes": nodes, "pods": [], "pending": pending})
    t0 = time.perf_counter()
    before, sim_b = _run(scen, doc("LeastAllocated"), lambda: None)
    t1 = time.perf_counter()
    after, sim_a = _run(scen, doc("MostAllocated"), lambda: None)
    t2 = time.perf_counter()
    result = compare(before, after, _zones(sim_b), _zones(sim_a))
    t3 = time.perf_counter()
    print(f"{n_pods} pending pods on {n_nodes} nodes: current {t1 - t0:.2f} s, candidate {t2 - t1:.2f} s, "
          f"diff {t3 - t2:.2f} s, total {t3 - t0:.2f} s; {result['summary']}")
    print("mean weighted score of the chosen node per plugin:", result["plugins"])


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
