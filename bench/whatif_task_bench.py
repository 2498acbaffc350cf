"""The dashboard's what-if task on a stored cluster: how long it takes and how often its progress row changes.

A SchedulingBasic cluster (``--nodes`` nodes, ten pods a node placed by the scheduler, 20 pending pods that need a
node of their own) is loaded into a scratch PostgreSQL database (default
postgres://postgres@127.0.0.1:5432/schedscope_whatifbench, created if missing); then each question (capacity of
``--copies`` copies, a drain of ``--drain`` nodes, add-nodes of 5) runs as ``whatif.execute`` does in the worker,
while another thread reads the run's row every 50 ms. Prints, per question, the seconds taken and the longest time
the row's stage text stood still (bar: progress at least once a second).

    python bench/whatif_task_bench.py --json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.recorder_bench import django_on  # noqa: E402
from bench.whatif_bench import owned  # noqa: E402
from bench.workloads import build, make_pod  # noqa: E402


def cluster_document(n_nodes: int) -> dict:
    from scheduler_core import whatif
    from scheduler_core.scenario import scenario_from_data
    nodes, _, _ = build("SchedulingBasic_5000Nodes_10000Pods", nodes=n_nodes)
    template = make_pod("web", "default", "default")
    placed = whatif.capacity(scenario_from_data({"nodes": nodes}), template, max_copies=10 * n_nodes)["placements"]
    bound = [dict(owned(make_pod(p["pod"].split("/")[1], "default", "default"), i),
                  spec=dict(template["spec"], nodeName=p["node"])) for i, p in enumerate(placed)]
    big = [make_pod(f"big-{i}", "default", "default") for i in range(20)]
    for p in big:
        p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "3900m", "memory": "1Gi"}}
    return {"nodes": nodes, "pods": bound, "pending": big}


def watched(run_id: int) -> tuple[float, float, list]:
    """Run the task; (seconds, longest unchanged stage, the stages seen)."""
    from django.db import connection

    from dashboard.models import WhatIfRun
    from dashboard.services import whatif
    stages, stop = [], threading.Event()

    def poll():
        last, since = None, time.perf_counter()
        while not stop.is_set():
            row = WhatIfRun.objects.filter(pk=run_id).values_list("stage", "done").first()
            now = time.perf_counter()
            if row != last:
                stages.append((round(now - since, 2), row[0]))
                last, since = row, now
            time.sleep(0.05)
        connection.close()
    poller = threading.Thread(target=poll)
    start = time.perf_counter()
    poller.start()
    whatif.execute(run_id)
    took = time.perf_counter() - start
    stop.set()
    poller.join()
    return took, max(gap for gap, _ in stages[1:]) if len(stages) > 1 else took, stages


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--copies", type=int, default=10000)
    ap.add_argument("--drain", type=int, default=50)
    ap.add_argument("--stages", action="store_true", help="print every stage seen, with the time it stood")
    ap.add_argument("--database-url", default=os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/schedscope_whatifbench"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    django_on(args.database_url)
    from dashboard.models import Cluster, WhatIfRun
    from dashboard.services import clusters, whatif
    from scheduler_core import gcpolicy
    gcpolicy.configure()
    Cluster.objects.filter(name="whatifbench").delete()
    cluster = Cluster.objects.create(name="whatifbench")
    doc = cluster_document(args.nodes)
    t = time.perf_counter()
    clusters.load_scenario(cluster, doc, source="whatif-bench")
    out = {"nodes": args.nodes, "pods": len(doc["pods"]) + len(doc["pending"]),
           "load_s": round(time.perf_counter() - t, 2)}
    drained = " ".join(n["metadata"]["name"] for n in doc["nodes"][:args.drain])
    questions = {
        "capacity": (WhatIfRun.CAPACITY, {"manifest": json.dumps(make_pod("web", "default", "default")),
                                          "max_copies": args.copies}),
        "drain": (WhatIfRun.DRAIN, {"nodes": drained}),
        "add_nodes": (WhatIfRun.ADD_NODES, {"like": doc["nodes"][0]["metadata"]["name"], "count": 5}),
    }
    for label, (kind, data) in questions.items():
        run = whatif.create(cluster, kind, whatif.question(cluster, kind, data))
        took, gap, stages = watched(run.pk)
        run.refresh_from_db()
        out[f"{label}_s"], out[f"{label}_gap_s"], out[f"{label}_state"] = round(took, 2), round(gap, 2), run.state
        if args.stages:
            print(label, *stages, sep="\n  ", file=sys.stderr)
    out["load_average"] = os.getloadavg()[0]
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
