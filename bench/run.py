"""Scheduler throughput on the scheduler_perf workloads of ../shared/docs/bench-workloads.md.

    python bench/run.py WORKLOAD [--nodes N] [--pods M] [--record none|memory] [--runs 3] [--json]
    python bench/run.py all --json

Each run happens in a fresh process: the cluster is built, the init pods are queued and scheduled
(not measured), then the measured pods are queued and timed from just before the first ScheduleOne to
the end of the last pod's bind. A ScheduleOne here is the queue pop, the scheduling cycle and, because
this loop binds synchronously, the (no-op) binding cycle too, so the latencies are slightly pessimistic.
The figure reported is the median pods/s of ``--runs`` runs, with that run's p50/p99 latency and peak RSS.

``--record memory`` keeps every CycleTrace in a list. (Recording into PostgreSQL through the dashboard's
Recorder is not offered yet: its models and migrations are still being written.)
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.workloads import WORKLOADS, build  # noqa: E402
from scheduler_core.trace import TraceSink  # noqa: E402

# Real kube-scheduler v1.30 on this kind of machine (bench-workloads.md) and kube's release floors.
KUBE = {
    "SchedulingBasic_5000Nodes_10000Pods": (597, 1.36, 6.6, 680),
    "SchedulingBasic_500Nodes": (1136, 0.66, 3.2, None),
    "SchedulingNodeAffinity_5000Nodes": (523, 1.56, 6.9, 220),
    "NodeAffinity3Zones_5000Nodes": (336, 2.37, 8.4, None),
    "SchedulingPodAntiAffinity_5000Nodes": (168, 4.71, 16.0, 60),
    "SchedulingPodAffinity_5000Nodes": (54, 15.03, 43.4, 35),
    "TopologySpreading_5000Nodes": (120, 6.57, 23.4, None),
    "TopologySpreadingSkew1_5000Nodes": (110, 7.37, 26.7, None),
}


class _ListSink(TraceSink):
    """--record memory: every CycleTrace kept in a list."""

    def __init__(self):
        self.traces = []

    def emit(self, trace):
        self.traces.append(trace)

    def close(self):
        pass


def run_once(name: str, nodes: int | None, pods: int | None, record: str) -> dict:
    """One measured run in this process. Returns the figures as a dict."""
    from scheduler_core.cluster.simulated import SimulatedCluster
    from scheduler_core.objects import Node, Pod
    from scheduler_core.scheduler import Scheduler

    node_objs, init, measured = build(name, nodes, pods)
    sink = TraceSink()
    if record == "memory":
        sink = _ListSink()
    cluster = SimulatedCluster([Node(n) for n in node_objs])
    sched = Scheduler(cluster, tie_break="random", seed=1, trace_sink=sink)
    t_setup = time.perf_counter()
    for p in init:
        cluster.add_pod(Pod(p))
    sched.run_until_idle()
    t_init = time.perf_counter() - t_setup
    measured_pods = [Pod(p) for p in measured]
    for p in measured_pods:
        cluster.add_pod(p)
    lat = []
    schedule_one = sched.schedule_one
    queue = sched.queue
    clock = time.perf_counter
    t0 = clock()
    while queue.num_active():
        s = clock()
        schedule_one()
        lat.append(clock() - s)
    wall = clock() - t0
    bound = sum(1 for p in measured_pods if cluster.get_pod(p.namespace, p.name).node_name)
    out = {"workload": name, "nodes": len(node_objs), "init_pods": len(init), "measured_pods": len(measured),
           "bound": bound, "attempts": len(lat), "record": record,
           "pods_per_s": round(len(measured) / wall, 1), "seconds": round(wall, 3),
           "init_seconds": round(t_init, 2)}
    lat.sort()
    out["p50_ms"] = round(lat[len(lat) // 2] * 1000, 3) if lat else 0.0
    out["p99_ms"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 3) if lat else 0.0
    if record == "memory":
        out["traces"] = len(sink.traces)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def run_median(name: str, nodes, pods, record: str, runs: int) -> dict:
    """``runs`` runs, each in a fresh process; the one with the median pods/s, plus all figures."""
    results = []
    for _ in range(runs):
        cmd = [sys.executable, os.path.abspath(__file__), name, "--child", "--record", record]
        if nodes:
            cmd += ["--nodes", str(nodes)]
        if pods:
            cmd += ["--pods", str(pods)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"{name}: run failed:\n{proc.stderr}")
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    results.sort(key=lambda r: r["pods_per_s"])
    best = dict(results[len(results) // 2])
    best["runs_pods_per_s"] = [r["pods_per_s"] for r in results]
    best["median_pods_per_s"] = statistics.median(r["pods_per_s"] for r in results)
    kube = KUBE.get(name)
    if kube is not None:
        best["kube_pods_per_s"], best["kube_p50_ms"], best["kube_p99_ms"], best["kube_floor"] = kube
    return best


def _text(r: dict) -> str:
    line = (f"{r['workload']}: {r['pods_per_s']} pods/s  p50 {r['p50_ms']} ms  p99 {r['p99_ms']} ms  "
            f"peak RSS {r['peak_rss_mb']} MB  ({r['bound']}/{r['measured_pods']} bound, record={r['record']})")
    if "kube_pods_per_s" in r:
        line += f"  [kube {r['kube_pods_per_s']} pods/s, floor {r['kube_floor']}]"
    return line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", help="a workload name, or 'all'", choices=["all", *WORKLOADS])
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--pods", type=int, help="measured pods")
    ap.add_argument("--record", choices=["none", "memory"], default="none")
    ap.add_argument("--runs", type=int, default=3, help="runs per workload, each in a fresh process")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_once(args.workload, args.nodes, args.pods, args.record)))
        return 0
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    results = []
    for name in names:
        r = run_median(name, args.nodes, args.pods, args.record, args.runs)
        results.append(r)
        if not args.json:
            print(_text(r), flush=True)
    if args.json:
        print(json.dumps(results if args.workload == "all" else results[0], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
