"""Scheduler throughput on the scheduler_perf workloads of ../shared/docs/bench-workloads.md, and on upstream's
DRA workloads (v1.36.2 test/integration/scheduler_perf/dra/performance-config.yaml, bench/workloads.py).

    python bench/run.py WORKLOAD [--nodes N] [--pods M] [--init-pods K] [--record none|memory|db] [--runs 3]
                                 [--kube-version 1.30|1.36] [--json]
    python bench/run.py all --json      (the non-DRA workloads; at the default version unless --kube-version)
    python bench/run.py dra --json      (the DRA workloads, at 1.36; --seconds, --init-claims for the steady ones)

Each run happens in a fresh process: the cluster is built, the init pods are queued and scheduled
(not measured; init pods that cannot fit stay in unschedulablePods), then the measured pods are queued and
timed from just before the first ScheduleOne to the end of the last pod's bind. The scheduler runs on a
fake clock that stands still, except when activeQ is empty and pods wait in backoffQ (preemptors whose
victims are gone): the clock then jumps to the next backoffQ flush, which takes no wall time. A ScheduleOne
here is the queue pop, the scheduling cycle and, because this loop binds synchronously, the (no-op) binding
cycle too, so the latencies are slightly pessimistic.
The figure reported is the median pods/s of ``--runs`` runs, with that run's p50/p99 latency and peak RSS.

A DRA workload's cluster gets the DeviceClass and one ResourceSlice per node first (createResourceDriver), its
init namespace's claims (allocated up front on nodes in a seeded random order, allocResourceClaims) and claim
template before the init pods, and the measured namespace's before the measured pods; the cluster's resourceclaim
controller makes the template pods' claims when the pods are added. A steady one (SteadyState...) times batches
of 10 pods created, scheduled and deleted (the claim controller freeing their devices) for ``--seconds``
(upstream's 10): its pods/s counts the pods scheduled over that time, the adds and deletes included.
``kube_floor`` of a DRA workload is upstream's threshold (the higher of its two workloads of that shape, queueing
hints off and on; 1.36 locks the hints on), ``kube_thresholds`` both.

``--record memory`` keeps every CycleTrace in a list. ``--record db`` records every cycle through the
dashboard's Recorder (a TraceSink that writes batches with COPY) into a fresh PostgreSQL database made for
the run (``schedscope_bench_<pid>`` on the server of $BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432, migrated, dropped at the end). The init cycles are recorded and
committed before the measured phase starts. ``recorder_lag_s`` is the time from the end of the last
measured cycle to the commit of its row; ``rows_per_s`` is the measured cycles committed per second and
``pods_per_s_to_commit`` the measured pods per second, both from the first measured cycle to that commit.
The child runs under the project's .venv (Django) when it exists.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.workloads import (DRA_WORKLOADS, STEADY_BATCH, WORKLOADS, build, build_dra,  # noqa: E402
                             make_dra_pod)
from scheduler_core import gcpolicy  # noqa: E402
from scheduler_core.trace import TraceSink  # noqa: E402
from scheduler_core.versions import DEFAULT_VERSION, parse_version  # noqa: E402

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
    "Unschedulable_5000Nodes_200InitPods": (None, None, None, 590),
    "PreemptionBasic_500Nodes": (None, None, None, 570),
}
# The DRA workloads' version: upstream's dra/performance-config.yaml at v1.36.2.
DRA_VERSION = "1.36"


class _ListSink(TraceSink):
    """--record memory: every CycleTrace kept in a list."""

    def __init__(self):
        self.traces = []

    def emit(self, trace):
        self.traces.append(trace)

    def close(self):
        pass


class _BenchDatabase:
    """--record db: a fresh PostgreSQL database for one run, Django set up on it, the dashboard's Recorder."""

    def __init__(self, workload: str):
        from urllib.parse import urlparse
        server = urlparse(os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432"))
        self.name = f"schedscope_bench_{os.getpid()}"
        self.server = {"host": server.hostname or "127.0.0.1", "port": server.port or 5432,
                       "user": server.username or "postgres", "password": server.password}
        self._admin("DROP DATABASE IF EXISTS {}", "CREATE DATABASE {}")
        self.dropped = False
        atexit.register(self.drop)  # also when the run fails
        auth = server.username or "postgres"
        if server.password:
            auth += f":{server.password}"
        os.environ["DATABASE_URL"] = f"postgres://{auth}@{self.server['host']}:{self.server['port']}/{self.name}"
        os.environ.pop("REDIS_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
        import django
        django.setup()
        from django.conf import settings
        from django.core.management import call_command

        from dashboard.models import Cluster
        from dashboard.services.recorder import CYCLE, Recorder
        self.cycle_kind = CYCLE
        call_command("migrate", verbosity=0)
        cluster = Cluster.objects.create(name=workload)
        self.commits = []  # (highest cycle seq of a committed batch, perf_counter after its commit)
        # scheduler_core's Scheduler records its cycles only: no binding follows a cycle there
        conf = settings.SCHEDSCOPE
        self.recorder = Recorder(cluster, max_buffer=1_000_000, observe=False, on_commit=self._committed,
                                 bindings=False, batch_size=conf["RECORDER_BATCH_SIZE"],
                                 flush_interval=conf["RECORDER_FLUSH_SECONDS"], fork_cycles=conf["RECORDER_FORK_CYCLES"],
                                 fork_spacing=conf["RECORDER_FORK_SPACING_SECONDS"])

    def _committed(self, records):
        """on_commit (writer thread): when the batch holding each cycle seq was committed."""
        seqs = [payload["seq"] for kind, payload in records if kind == self.cycle_kind]
        if seqs:
            self.commits.append((max(seqs), time.perf_counter()))

    def commit_time(self, seq: int) -> float | None:
        """perf_counter time of the commit that wrote cycle ``seq``, or None if it was not committed."""
        return next((t for top, t in self.commits if top >= seq), None)

    def cycle_bytes(self, first_seq: int) -> dict:
        """Mean stored bytes of the cycles from ``first_seq`` on: the matrix column, the whole row, and the
        node lists they refer to (stored once, not per cycle)."""
        from django.db import connection
        with connection.cursor() as cur:
            cur.execute("SELECT avg(octet_length(matrix)), avg(pg_column_size(c.*)) FROM dashboard_schedulingcycle c "
                        "WHERE seq >= %s", [first_seq])
            matrix, row = cur.fetchone()
            cur.execute("SELECT count(*), coalesce(sum(octet_length(names)), 0) FROM dashboard_nodelist")
            lists, list_bytes = cur.fetchone()
        return {"matrix_bytes_per_cycle": round(float(matrix or 0)), "row_bytes_per_cycle": round(float(row or 0)),
                "node_lists": lists, "node_list_bytes": int(list_bytes)}

    def _admin(self, *statements):
        import psycopg
        with psycopg.connect(dbname="postgres", autocommit=True, **self.server) as conn:
            for sql in statements:
                conn.execute(sql.format(f'"{self.name}"'))

    def drop(self):
        """Drop the run's database (once)."""
        if self.dropped:
            return
        self.dropped = True
        from django.db import connections
        connections.close_all()
        self._admin("DROP DATABASE IF EXISTS {} WITH (FORCE)")


def _alloc_resource_claims(cluster, namespace: str, seed: int = 1) -> None:
    """scheduler_perf's allocResourceClaims: each unallocated claim of ``namespace`` in turn gets the first
    allocation the structured allocator finds on the nodes in a random order, stored at once."""
    import random

    from scheduler_core.dra.allocator import AllocatedState, Allocator

    objects = cluster.objects
    allocated = AllocatedState()
    for claim in objects.resource_claims.values():
        allocated.add_allocation((claim.get("status") or {}).get("allocation"))
    allocator = Allocator(allocated, objects.device_classes, objects.resource_slices.values())
    nodes = cluster.list_nodes()
    rng = random.Random(seed)
    for key, claim in list(objects.resource_claims.items()):
        if not key.startswith(namespace + "/") or (claim.get("status") or {}).get("allocation"):
            continue
        rng.shuffle(nodes)
        result = next((r for r in (allocator.allocate(node, [claim]) for node in nodes) if r), None)
        if result is None:
            raise SystemExit(f"could not allocate claim {key}")
        cluster.update_object("ResourceClaim", dict(claim, status={"allocation": result[0]}))
        allocated.add_allocation(result[0])


def _schedule_all(sched, fake_clock, lat: list) -> None:
    """ScheduleOne until activeQ and backoffQ are empty, the fake clock jumping to each backoffQ flush; appends
    each ScheduleOne's duration to ``lat``."""
    schedule_one, queue, clock = sched.schedule_one, sched.queue, time.perf_counter
    while True:
        if queue.num_active():
            s = clock()
            schedule_one()
            lat.append(clock() - s)
        elif queue.num_backoff():
            wakeup = sched.next_wakeup()
            if wakeup is None:
                return
            fake_clock.set(max(wakeup, fake_clock.now()))
            sched.process_timers()
            queue.tick()
        else:
            return


def _steady_state(cluster, sched, fake_clock, lat: list, namespace: str, kind: str, seconds: float) -> list:
    """createPods with steadyState: STEADY_BATCH pods created, scheduled, then deleted (their claims released by
    the claim controller), again and again for ``seconds``. Returns the pods scheduled."""
    from scheduler_core.objects import Pod

    scheduled, index, t0 = [], 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        batch = [Pod(make_dra_pod(index + i, namespace, kind)) for i in range(STEADY_BATCH)]
        index += STEADY_BATCH
        for p in batch:
            cluster.add_pod(p)
        _schedule_all(sched, fake_clock, lat)
        bound = [cluster.get_pod(p.namespace, p.name) for p in batch]
        if not all(p.node_name for p in bound):
            raise SystemExit(f"steady state: {sum(not p.node_name for p in bound)} pods of a batch not scheduled")
        scheduled.extend(bound)
        for p in bound:
            cluster.delete_pod(p)
    return scheduled


def run_once(name: str, nodes: int | None, pods: int | None, record: str, init_pods: int | None = None,
             trace: str = "kube", kube_version: str | None = None, seconds: float | None = None,
             init_claims: int | None = None) -> dict:
    """One measured run in this process. Returns the figures as a dict. ``trace``: "full" records every
    Filter plugin's verdict on every node (trace mode), "kube" what kube's search visited. ``kube_version``:
    the scheduler's (default: 1.36 for DRA workloads, the project's default otherwise). ``seconds``: a steady DRA
    workload's duration instead of upstream's; ``init_claims``: the claims a DRA workload allocates up front."""
    from scheduler_core.clock import FakeClock
    from scheduler_core.cluster.simulated import SimulatedCluster
    from scheduler_core.objects import Node, Pod
    from scheduler_core.scheduler import Scheduler

    gcpolicy.configure()
    dra = build_dra(name, nodes, pods, init_pods, init_claims) if name in DRA_WORKLOADS else None
    if dra is not None:
        kube_version = kube_version or DRA_VERSION
        if parse_version(kube_version) != DRA_VERSION:
            raise SystemExit(f"{name} needs --kube-version {DRA_VERSION} (DRA's resource.k8s.io/v1)")
        node_objs, init, measured = dra.nodes, dra.init, dra.measured
    else:
        node_objs, init, measured = build(name, nodes, pods, init_pods)
    sink = TraceSink()
    db = None
    if record == "memory":
        sink = _ListSink()
    elif record == "db":
        db = _BenchDatabase(name)
        sink = db.recorder
    cluster = SimulatedCluster([Node(n) for n in node_objs], objects=dra.cluster_objects if dra else None)
    fake_clock = FakeClock(time.time())
    sched = Scheduler(cluster, clock=fake_clock, tie_break="random", seed=1, trace_sink=sink,
                      trace_all_filters=trace == "full", kube_version=kube_version)
    t_setup = time.perf_counter()
    if dra is not None:
        for kind, raw in dra.init_objects:
            cluster.add_object(kind, raw)
        if dra.workload.init_claims:
            _alloc_resource_claims(cluster, "init")
    for p in init:
        cluster.add_pod(Pod(p))
    sched.run_until_idle()
    if db is not None and not db.recorder.flush(3600):
        raise SystemExit("the recorder did not commit the init cycles within an hour")
    if dra is not None:
        for kind, raw in dra.measure_objects:
            cluster.add_object(kind, raw)
    gcpolicy.settle()  # as the dashboard's engine does once a cluster is loaded
    t_init = time.perf_counter() - t_setup
    measured_pods = [Pod(p) for p in measured]
    for p in measured_pods:
        cluster.add_pod(p)
    evictions_before = len(cluster.evictions)
    first_measured_seq = db.recorder.next_seq if db is not None else 0
    lat = []
    clock = time.perf_counter
    t0 = clock()
    steady = dra is not None and dra.workload.steady_seconds
    if steady:
        measured = _steady_state(cluster, sched, fake_clock, lat, "test", dra.workload.pods,
                                 seconds or dra.workload.steady_seconds)
    else:
        _schedule_all(sched, fake_clock, lat)
    wall = clock() - t0
    if db is not None:
        rec = db.recorder
        before = rec.written_cycles
        last_seq = rec.next_seq - 1
        t_last = clock()
        flushed = rec.flush(3600)
        t_flushed = clock()
        rec.close()
        t_commit = db.commit_time(last_seq) or t_flushed
        recorded = {"recorder_lag_s": round(t_commit - t_last, 3), "recorder_flushed": flushed,
                    "rows": rec.written_cycles, "rows_per_s": round(len(lat) / (t_commit - t0), 1),
                    "pods_per_s_to_commit": round(len(measured) / (t_commit - t0), 1),
                    "recorder_failures": rec.failures, "recorder_overflow": rec.overflow,
                    "rows_written_after_last_cycle": rec.written_cycles - before}
        recorded.update(db.cycle_bytes(first_measured_seq))
        db.drop()
    # a steady workload's pods were all bound before they were deleted
    bound = len(measured) if steady else sum(1 for p in measured_pods if cluster.get_pod(p.namespace, p.name).node_name)
    out = {"workload": name, "kube_version": sched.features.version.name, "nodes": len(node_objs),
           "init_pods": len(init), "measured_pods": len(measured), "bound": bound, "attempts": len(lat),
           "preempted": len(cluster.evictions) - evictions_before,
           "record": record, "trace": trace,
           "pods_per_s": round(len(measured) / wall, 1), "seconds": round(wall, 3),
           "init_seconds": round(t_init, 2)}
    lat.sort()
    out["p50_ms"] = round(lat[len(lat) // 2] * 1000, 3) if lat else 0.0
    out["p99_ms"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 3) if lat else 0.0
    if record == "memory":
        out["traces"] = len(sink.traces)
    if db is not None:
        out.update(recorded)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def run_median(name: str, nodes, pods, record: str, runs: int, init_pods=None, trace: str = "kube",
               kube_version: str | None = None, seconds: float | None = None, init_claims: int | None = None) -> dict:
    """``runs`` runs, each in a fresh process; the one with the median pods/s, plus all figures."""
    results = []
    for _ in range(runs):
        python = sys.executable
        venv = os.path.join(ROOT, ".venv", "bin", "python")
        if record == "db" and os.path.exists(venv):
            python = venv
        cmd = [python, os.path.abspath(__file__), name, "--child", "--record", record, "--trace", trace]
        if nodes:
            cmd += ["--nodes", str(nodes)]
        if pods:
            cmd += ["--pods", str(pods)]
        if init_pods is not None:
            cmd += ["--init-pods", str(init_pods)]
        if kube_version:
            cmd += ["--kube-version", kube_version]
        if seconds:
            cmd += ["--seconds", str(seconds)]
        if init_claims is not None:
            cmd += ["--init-claims", str(init_claims)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"{name}: run failed:\n{proc.stderr}")
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    results.sort(key=lambda r: r["pods_per_s"])
    best = dict(results[len(results) // 2])
    best["runs_pods_per_s"] = [r["pods_per_s"] for r in results]
    best["median_pods_per_s"] = statistics.median(r["pods_per_s"] for r in results)
    best["min_pods_per_s"], best["max_pods_per_s"] = results[0]["pods_per_s"], results[-1]["pods_per_s"]
    if record == "db":
        to_commit = sorted(r["pods_per_s_to_commit"] for r in results)
        best["runs_pods_per_s_to_commit"] = to_commit
        best["min_pods_per_s_to_commit"] = to_commit[0]
    kube = KUBE.get(name)
    if kube is not None:
        best["kube_pods_per_s"], best["kube_p50_ms"], best["kube_p99_ms"], best["kube_floor"] = kube
    thresholds = DRA_WORKLOADS[name].thresholds if name in DRA_WORKLOADS else None
    if thresholds is not None:
        # upstream's two workloads of this shape (queueing hints off, on); 1.36 locks the hints on
        best["kube_thresholds"] = list(thresholds)
        best["kube_floor"] = max(thresholds)
    return best


def _text(r: dict) -> str:
    line = (f"{r['workload']}: {r['pods_per_s']} pods/s  p50 {r['p50_ms']} ms  p99 {r['p99_ms']} ms  "
            f"peak RSS {r['peak_rss_mb']} MB  ({r['bound']}/{r['measured_pods']} bound, record={r['record']}, "
            f"trace={r['trace']})")
    if len(r.get("runs_pods_per_s", ())) > 1:
        line += f"  runs {r['runs_pods_per_s']}"
    if "recorder_lag_s" in r:
        line += f"  recorder lag {r['recorder_lag_s']} s, {r['rows_per_s']} rows/s"
    if r.get("kube_pods_per_s") is not None:
        line += f"  [kube {r['kube_pods_per_s']} pods/s, floor {r['kube_floor']}]"
    elif r.get("kube_floor") is not None:
        line += f"  [kube floor {r['kube_floor']}]"
    return line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", help="a workload name, 'all' (the non-DRA ones) or 'dra' (upstream's DRA ones)",
                    choices=["all", "dra", *WORKLOADS, *DRA_WORKLOADS])
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--pods", type=int, help="measured pods")
    ap.add_argument("--init-pods", type=int, help="init pods (scale them with --nodes, e.g. 4 per node for Preemption)")
    ap.add_argument("--record", choices=["none", "memory", "db"], default="none")
    ap.add_argument("--trace", choices=["kube", "full"], default="kube",
                    help="full: every Filter plugin's verdict on every node (trace mode); kube: what kube's search visited")
    ap.add_argument("--kube-version", help=f"the scheduler's Kubernetes version (default: {DEFAULT_VERSION}; "
                                           f"{DRA_VERSION} for the DRA workloads, which need it)")
    ap.add_argument("--seconds", type=float, help="a steady DRA workload's duration (upstream's: 10)")
    ap.add_argument("--init-claims", type=int, help="claims a DRA workload allocates up front (scale with --nodes)")
    ap.add_argument("--runs", type=int, default=3, help="runs per workload, each in a fresh process")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_once(args.workload, args.nodes, args.pods, args.record, args.init_pods, args.trace,
                                  args.kube_version, args.seconds, args.init_claims)))
        return 0
    groups = {"all": list(WORKLOADS), "dra": list(DRA_WORKLOADS)}
    names = groups.get(args.workload, [args.workload])
    results = []
    for name in names:
        r = run_median(name, args.nodes, args.pods, args.record, args.runs, args.init_pods, args.trace,
                       args.kube_version, args.seconds, args.init_claims)
        results.append(r)
        if not args.json:
            print(_text(r), flush=True)
    if args.json:
        print(json.dumps(results if args.workload in groups else results[0], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
