"""How many cycles per second the recorder writes into PostgreSQL, and what emit() costs the scheduler.

Real traces are made once (the scheduler core on a cluster of --nodes nodes, every Filter plugin on
every node as the dashboard records them), then --cycles records are pushed through the Recorder into a
scratch database as fast as the producer can go; the clock stops when the last batch is committed.
With --bind, every cycle is followed by the binding of a pod of its own (cycle, bind, cycle, bind... as the
live engine records them); the pods are created before the clock starts. Prints one JSON object. Needs
PostgreSQL (default postgres://postgres@127.0.0.1:5432/schedscope_bench, created if missing).

    python bench/recorder_bench.py --nodes 50 --cycles 20000 [--bind]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def ensure_database(url: str) -> None:
    import psycopg
    from urllib.parse import urlparse
    u = urlparse(url)
    name = u.path.lstrip("/")
    with psycopg.connect(host=u.hostname or "127.0.0.1", port=u.port or 5432, user=u.username or "postgres",
                         password=u.password, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def django_on(url: str) -> None:
    """Django set up on the bench's own PostgreSQL database (created if missing, migrated), without Redis."""
    ensure_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    import django
    django.setup()
    from django.core.management import call_command
    call_command("migrate", verbosity=0)


def make_traces(n_nodes: int, n_pods: int) -> list:
    from bench.workloads import make_node, make_pod
    from scheduler_core.scenario import scenario_from_data
    from scheduler_core.simulate import Simulation
    nodes = [make_node(i, ["zone1", "zone2", "zone3"]) for i in range(n_nodes)]
    pending = [make_pod(f"pod-{i}", "default", "default") for i in range(n_pods)]
    # a few that fail, so that the stored matrices carry reasons too
    for i in range(0, n_pods, 10):
        pending[i]["spec"]["nodeSelector"] = {"disk": "nvme"}
    sim = Simulation(scenario_from_data({"nodes": nodes, "pending": pending}), tie_break="name")
    return list(sim.run())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--cycles", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--bind", action="store_true", help="record a binding after every cycle")
    ap.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL",
                                                             "postgres://postgres@127.0.0.1:5432/schedscope_bench"))
    args = ap.parse_args()
    django_on(args.database_url)
    from django.db import connection

    from dashboard.models import Cluster, Pod, SchedulingCycle
    from dashboard.services.recorder import Recorder

    traces = make_traces(args.nodes, min(200, args.cycles))
    cluster, _ = Cluster.objects.get_or_create(name="bench")
    SchedulingCycle.objects.filter(cluster=cluster).delete()
    Pod.objects.filter(cluster=cluster).delete()
    if args.bind:
        Pod.objects.bulk_create([Pod(cluster=cluster, uid=f"uid-{i}", namespace="bench", name=f"pod-{i}", raw={})
                                 for i in range(args.cycles)], batch_size=5000)
    rec = Recorder(cluster, batch_size=args.batch, max_buffer=args.cycles + 1, flush_interval=0.05, observe=False)
    t0 = time.perf_counter()
    emit_total = 0.0
    for i in range(args.cycles):
        tr = traces[i % len(traces)]
        e0 = time.perf_counter()
        seq = rec.record_trace(tr)
        if args.bind:
            rec.record_binding(f"uid-{i}", f"node-{i % args.nodes:05d}", seq, 1)
        emit_total += time.perf_counter() - e0
    produced = time.perf_counter() - t0
    ok = rec.flush(600)
    elapsed = time.perf_counter() - t0
    rec.close()
    written = SchedulingCycle.objects.filter(cluster=cluster).count()
    bound = Pod.objects.filter(cluster=cluster, queue=Pod.BOUND).count()
    with connection.cursor() as cur:
        cur.execute("SELECT avg(pg_column_size(matrix)) FROM dashboard_schedulingcycle WHERE cluster_id = %s",
                    [cluster.id])
        matrix_bytes = cur.fetchone()[0]
    print(json.dumps({
        "bench": "recorder", "database": "postgresql", "nodes": args.nodes, "cycles": args.cycles,
        "batch": args.batch, "bind": args.bind, "flushed": ok, "written": written, "bound": bound,
        "cycles_per_second": round(written / elapsed, 1), "records_per_second": round((written + bound) / elapsed, 1),
        "seconds": round(elapsed, 2),
        "producer_seconds": round(produced, 3), "emit_us_per_cycle": round(emit_total / args.cycles * 1e6, 2),
        "stored_matrix_bytes_avg": int(matrix_bytes or 0), "failures": rec.failures, "overflow": rec.overflow,
    }))
    return 0 if ok and written == args.cycles and bound == (args.cycles if args.bind else 0) else 1


if __name__ == "__main__":
    sys.exit(main())
