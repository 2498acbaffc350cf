"""What-if planning speed on the scheduler_perf SchedulingBasic cluster (scheduler_core only, no database).

``python bench/whatif_bench.py [--nodes 5000] [--copies 10000] [--drain 50] [--json]``:
- capacity: copies of the workload's default pod placed one by one (stopped at ``--copies``);
- drain: ``--drain`` nodes cordoned and drained after the cluster holds the init pods spread by the scheduler;
- add-nodes: the cluster's nodes filled, then pending pods that need one more node each retried with the
  smallest count searched.
Each also prints ``*_gap_s``: the longest time without a progress call (the dashboard's run row is written from
them, at most twice a second).
Bars: capacity of 10,000 copies on 5,000 nodes under 15 s; a drain of 50 of 5,000 nodes under 10 s;
progress at least once a second.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.workloads import build, make_pod  # noqa: E402
from scheduler_core import whatif  # noqa: E402
from scheduler_core import gcpolicy  # noqa: E402
from scheduler_core.scenario import scenario_from_data  # noqa: E402


def owned(raw: dict, i: int) -> dict:
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs-{i % 100}",
                                           "uid": f"rs-{i % 100}", "controller": True}]
    return raw


class Gaps:
    """A progress callback that keeps the longest pause between calls (and from the start to the first)."""

    def __init__(self):
        self.last = time.perf_counter()
        self.longest = 0.0

    def __call__(self, done, total, doing="") -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self.last)
        self.last = now

    def end(self) -> float:
        self.__call__(None, None)
        return round(self.longest, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--copies", type=int, default=10000)
    ap.add_argument("--drain", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    gcpolicy.configure()
    nodes, _, _ = build("SchedulingBasic_5000Nodes_10000Pods", nodes=args.nodes)
    out = {"nodes": args.nodes}

    empty = scenario_from_data({"nodes": nodes})
    template = make_pod("web", "default", "default")
    t, gaps = time.perf_counter(), Gaps()
    cap = whatif.capacity(empty, template, max_copies=args.copies, progress=gaps)
    out["capacity_s"] = round(time.perf_counter() - t, 2)
    out["capacity_gap_s"] = gaps.end()
    out["capacity_fit"] = cap["fit"]
    out["capacity_per_s"] = round(cap["fit"] / out["capacity_s"], 1)

    # A cluster with 10 pods a node, spread by the scheduler itself, every pod owned by a ReplicaSet.
    bound = [dict(owned(make_pod(p["pod"].split("/")[1], "default", "default"), i),
                  spec=dict(template["spec"], nodeName=p["node"]))
             for i, p in enumerate(whatif.capacity(empty, template, max_copies=10 * args.nodes)["placements"])]
    full = scenario_from_data({"nodes": nodes, "pods": bound})
    drained = [n["metadata"]["name"] for n in nodes[:args.drain]]
    t, gaps = time.perf_counter(), Gaps()
    dr = whatif.drain(full, drained, progress=gaps)
    out["drain_s"] = round(time.perf_counter() - t, 2)
    out["drain_gap_s"] = gaps.end()
    out["drain_evicted"] = len(dr["evicted"])
    out["drain_pending"] = len(dr["pending"])

    big = [dict(make_pod(f"big-{i}", "default", "default")) for i in range(20)]
    for p in big:
        p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "3900m", "memory": "1Gi"}}
    scen = scenario_from_data({"nodes": nodes, "pods": bound, "pending": big})
    t, gaps = time.perf_counter(), Gaps()
    add = whatif.add_nodes(scen, nodes[0], 5, progress=gaps)
    out["add_nodes_s"] = round(time.perf_counter() - t, 2)
    out["add_nodes_gap_s"] = gaps.end()
    out["add_nodes_smallest"] = add["smallest_count"]
    out["add_nodes_probes"] = len(add["probes"])
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>20}: {v}")


if __name__ == "__main__":
    main()
