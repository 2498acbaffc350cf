"""Full scheduling loop on a generated mixed cluster (default 200 nodes, 1,000 pending pods); prints figures as JSON.

The cluster has three zones, three node sizes, GPU nodes behind a taint, cordoned nodes and ~300 bound
low-priority pods. Pending pods mix plain web pods, zone-restricted API pods with preferences, one-per-node
databases (required anti-affinity), GPU jobs, zone-spread pods (DoNotSchedule), pods that need a bound
"cache" pod in their zone, high-priority pods that must preempt, and pods that can never fit.
The run goes through the scenario, then lets ``--duration`` simulated seconds pass (backoffs, the
5-minute unschedulable flush), on a fake clock with the deterministic tie-break.

    python3 bench/loop_bench.py [--nodes 200] [--pods 1000] [--seed 1] [--duration 600] [--write FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scheduler_core.run import LoopRun  # noqa: E402
from scheduler_core.scenario import scenario_from_data  # noqa: E402

ZONES = ["zone-a", "zone-b", "zone-c"]
SIZES = [("small", "4", "16Gi", 0.6), ("medium", "8", "32Gi", 0.3), ("large", "16", "64Gi", 0.1)]
IMAGES = ["registry.example/web:1.4", "registry.example/api:2.0", "registry.example/db:15", "registry.example/ml:3"]
GPU_TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def _node(i: int, rng: random.Random) -> dict:
    name = f"node-{i:04d}"
    r, size = rng.random(), SIZES[-1]
    acc = 0.0
    for s in SIZES:
        acc += s[3]
        if r < acc:
            size = s
            break
    label, cpu, mem, _ = size
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3],
              "topology.kubernetes.io/region": "region-1", "node.example/size": label}
    alloc = {"cpu": cpu, "memory": mem, "pods": "110", "ephemeral-storage": "100Gi"}
    spec = {}
    if i % 20 == 7:
        spec["taints"] = [dict(GPU_TAINT)]
        alloc["nvidia.com/gpu"] = "4"
        labels["node.example/gpu"] = "true"
    if i % 50 == 13:
        spec["unschedulable"] = True
    images = [{"names": [img], "sizeBytes": rng.choice([80, 300, 900]) * 1024 * 1024}
              for img in rng.sample(IMAGES, 2)]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": name, "labels": labels},
            "spec": spec, "status": {"capacity": dict(alloc), "allocatable": dict(alloc), "images": images,
                                     "conditions": [{"type": "Ready", "status": "True"}]}}


def _pod(name: str, cpu: str, mem: str, labels: dict, priority: int = 0, node: str = "", image: str = IMAGES[0],
         extra_spec: dict | None = None, limits: dict | None = None, start: int = 0) -> dict:
    requests = {"cpu": cpu, "memory": mem}
    if limits:
        requests.update(limits)
    spec = {"containers": [{"name": "main", "image": image, "resources": {"requests": requests}}],
            "priority": priority, "schedulerName": "default-scheduler"}
    if node:
        spec["nodeName"] = node
    spec.update(extra_spec or {})
    status = {"phase": "Running", "startTime": f"2024-06-01T08:{start // 60 % 60:02d}:{start % 60:02d}Z"} \
        if node else {"phase": "Pending"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "bench", "uid": f"bench-{name}", "labels": labels},
            "spec": spec, "status": status}


def generate(nodes: int = 200, pods: int = 1000, seed: int = 1) -> dict:
    """A scenario dict (golden loop format)."""
    rng = random.Random(seed)
    node_objs = [_node(i, rng) for i in range(nodes)]
    bound = []
    for i, n in enumerate(node_objs):
        if n["spec"].get("unschedulable"):
            continue
        cpu_milli = int(n["status"]["allocatable"]["cpu"]) * 1000
        used, j = 0, 0
        while used < cpu_milli * 0.55:
            c = rng.choice([250, 500, 750])
            app = "cache" if (i + j) % 9 == 0 else "batch"
            bound.append(_pod(f"bound-{i}-{j}", f"{c}m", f"{c}Mi", {"app": app}, priority=0,
                              node=n["metadata"]["name"], start=i * 3 + j))
            used += c
            j += 1
    pending = []
    for k in range(pods):
        r = rng.random()
        name = f"p-{k:05d}"
        if r < 0.50:
            pending.append(_pod(name, f"{rng.choice([100, 200, 300])}m", f"{rng.choice([128, 256])}Mi",
                                {"app": "web"}, extra_spec={"topologySpreadConstraints": [{
                                    "maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                                    "whenUnsatisfiable": "ScheduleAnyway",
                                    "labelSelector": {"matchLabels": {"app": "web"}}}]}))
        elif r < 0.65:
            pending.append(_pod(name, "250m", "512Mi", {"app": "api"}, priority=10, image=IMAGES[1], extra_spec={
                "affinity": {"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ZONES[:2]}]}]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 20, "preference": {
                        "matchExpressions": [{"key": "node.example/size", "operator": "In", "values": ["large"]}]}}]},
                    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50,
                        "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "api"}},
                                            "topologyKey": "kubernetes.io/hostname"}}]}}}))
        elif r < 0.73:
            pending.append(_pod(name, "500m", "1Gi", {"app": "db"}, priority=100, image=IMAGES[2], extra_spec={
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}}))
        elif r < 0.78:
            pending.append(_pod(name, "1", "2Gi", {"app": "train"}, image=IMAGES[3], limits={"nvidia.com/gpu": "1"},
                                extra_spec={"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                                             "effect": "NoSchedule"}]}))
        elif r < 0.86:
            pending.append(_pod(name, "100m", "64Mi", {"app": "spread"}, extra_spec={"topologySpreadConstraints": [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "spread"}}}]}))
        elif r < 0.94:
            pending.append(_pod(name, "100m", "64Mi", {"app": "sidecar"}, extra_spec={"affinity": {"podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}]}}}))
        elif r < 0.98:
            pending.append(_pod(name, "2500m", "1Gi", {"app": "urgent"}, priority=1000,
                                extra_spec={"nodeSelector": {"node.example/size": "small"}}))
        else:
            pending.append(_pod(name, "64", "1Gi", {"app": "huge"}))
    return {"name": f"loop-bench-{nodes}n-{pods}p", "config": {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
        "nodes": node_objs, "pods": bound, "pending": pending}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=600.0, help="simulated seconds after the first pass")
    ap.add_argument("--write", metavar="FILE", help="also write the generated scenario (JSON)")
    args = ap.parse_args(argv)
    data = generate(args.nodes, args.pods, args.seed)
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            json.dump(data, f)
    t0 = time.perf_counter()
    run = LoopRun(scenario_from_data(data), tie_break="name")
    t_setup = time.perf_counter() - t0
    doc = run.run(until_idle=False, duration=args.duration)
    wall = time.perf_counter() - t0
    attempts = len(doc["placements"]) + len((doc.get("later") or {}).get("placements") or [])
    pending_keys = {f'bench/{p["metadata"]["name"]}' for p in data["pending"]}
    placements = run.cluster.placements()
    bound = sum(1 for k in pending_keys if placements.get(k))
    out = {"scenario": data["name"], "nodes": args.nodes, "bound_before": len(data["pods"]),
           "pending": len(pending_keys), "attempts": attempts, "bound": bound,
           "still_pending": sum(1 for k in pending_keys if k in placements and not placements[k]),
           "preempted": len(run.cluster.evictions), "queue": run.sched.queue.summary(),
           "simulated_seconds": run.clock.now(), "setup_seconds": round(t_setup, 3),
           "wall_seconds": round(wall, 3), "attempts_per_second": round(attempts / wall, 1),
           "ms_per_attempt": round(wall * 1000 / max(attempts, 1), 3),
           "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
