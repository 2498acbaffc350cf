"""The dashboard's scheduling path: dashboard.services.engine.Engine driven as Runner's loop drives it.

bench/run.py --record db times scheduler_core's Scheduler with the Recorder as its trace sink. This times
what a simulated cluster's loop really runs: the Cluster is loaded into a fresh database as a scenario
(clusters.load_scenario: nodes and the init pods, pending), Engine(cluster, recorder) is built from it with a
Recorder configured as Runner configures it (settings' batch size, buffer and flush interval, fenced by the
cluster's runner token, metrics observed; no broadcasting), the init pods are scheduled and committed (not
timed), then the measured pods are inserted as Pod rows (clusters.insert_pods, as the API and the workload
generator do) and handed to engine.add_pod (the loop's add_pod command). The timed loop is Runner's: bursts of
engine.schedule_one (per-attempt overrides, suggestions, journaled bindings and events handed to the recorder)
until it returns None, engine.sync_queue_states once per second, queue_counts each turn and a queue snapshot
every QUEUE_SNAPSHOT_SECONDS; when it returns None before every measured pod is bound (Preemption: the
preemptors wait out their 1 s backoff before they bind to their nominated nodes), the loop sleeps until the
scheduler's next wakeup, as the Runner does, and that wait (``backoff_wait_s``) is left out of the window, as
upstream's throughput collector leaves out the seconds with no new bound pod (bench/run.py jumps a fake
clock). Every cycle records the full trace (every Filter plugin's verdict on every node), as the dashboard's
loop does. Reported: pods/s, pods/s up to the commit of everything (pods_per_s_to_commit),
p50/p99 of schedule_one, the recorder's lag (end of the last cycle to the commit of everything), peak RSS, the
batches written by forked children and the scheduling process's minor page faults in the timed loop (the pages
it wrote while a child shared them are copied then), and the cycle, bound pod and event rows read back.
``--profile FILE`` writes cProfile stats of the timed loop (the scheduling thread) to FILE and of the
recorder's batch writes (its thread) to FILE.writer.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.run import _BenchDatabase  # noqa: E402
from bench.workloads import WORKLOADS, build  # noqa: E402


def _profile_writer(recorder, path: str) -> None:
    """cProfile the recorder's batch writes (its own thread) into ``path``, rewritten after each batch."""
    prof, write = cProfile.Profile(), recorder._write

    def profiled(batch, states):
        prof.enable()
        try:
            write(batch, states)
        finally:
            prof.disable()
            prof.dump_stats(path)

    recorder._write = profiled


def run(name: str, nodes: int | None, pods: int | None, profile: str | None = None) -> dict:
    db = _BenchDatabase(name)
    db.recorder.close()   # the runner's recorder is made below, on the loaded cluster
    from django.conf import settings

    from dashboard.models import Cluster, Pod, SchedulingCycle, SchedulingEvent
    from dashboard.services.clusters import insert_pods, load_scenario
    from dashboard.services.engine import Engine
    from dashboard.services.recorder import Recorder
    from dashboard.services.runner import BURST_SECONDS, next_seq

    conf = settings.SCHEDSCOPE
    node_objs, init, measured = build(name, nodes, pods)
    t_setup = time.perf_counter()
    cluster = Cluster.objects.get(name=name)
    load_scenario(cluster, {"nodes": node_objs, "pending": init}, source="bench")
    token = f"engine-bench-{os.getpid()}"
    Cluster.objects.filter(pk=cluster.pk).update(runner=token)
    cluster = Cluster.objects.select_related("profile").get(pk=cluster.pk)
    recorder = Recorder(cluster, first_seq=next_seq(cluster.id), batch_size=conf["RECORDER_BATCH_SIZE"],
                        max_buffer=conf["RECORDER_MAX_BUFFER"], flush_interval=conf["RECORDER_FLUSH_SECONDS"],
                        fork_cycles=conf["RECORDER_FORK_CYCLES"], fork_spacing=conf["RECORDER_FORK_SPACING_SECONDS"],
                        fence=token)
    engine = Engine(cluster, recorder)
    while engine.schedule_one() is not None:
        pass
    engine.sync_queue_states()
    if not recorder.flush(3600):
        raise SystemExit("the recorder did not commit the init cycles within an hour")
    insert_pods(cluster, measured)
    for raw in measured:
        engine.add_pod(raw)
    t_init = time.perf_counter() - t_setup

    lat = []
    clock = time.perf_counter
    monotonic = time.monotonic
    prof = cProfile.Profile() if profile else None
    if prof:
        _profile_writer(recorder, profile + ".writer")
        prof.enable()
    measured_keys = [(raw["metadata"].get("namespace") or "default", raw["metadata"]["name"]) for raw in measured]
    faults, forks = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, recorder.forked
    t0 = clock()
    waited = 0.0   # idle time waiting for a backoff to end, left out of the window (see the module docstring)
    next_sync = next_snapshot = 0.0
    busy = True
    while busy:
        end = monotonic() + BURST_SECONDS
        while monotonic() < end:
            s = clock()
            tr = engine.schedule_one()
            if tr is None:
                busy = False
                break
            lat.append(clock() - s)
        if not busy and not _all_bound(engine, measured_keys):
            wakeup = engine.scheduler.next_wakeup()
            if wakeup is not None:   # a preemptor waits out its backoff before it binds to its nominated node
                s = clock()
                time.sleep(max(0.0, wakeup - time.time()) + 0.001)
                waited += clock() - s
                busy = True
        now = monotonic()
        if now >= next_sync:
            engine.sync_queue_states()
            next_sync = now + 1.0
        counts = engine.queue_counts()
        if now >= next_snapshot:
            recorder.record_queue_snapshot(active=counts["active"], backoff=counts["backoff"],
                                           unschedulable=counts["unschedulable"], gated=counts["gated"],
                                           bound=counts["bound"], cycles_per_second=0.0, p50_ms=0.0, p99_ms=0.0)
            next_snapshot = now + conf["QUEUE_SNAPSHOT_SECONDS"]
    wall = clock() - t0 - waited
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    if prof:
        prof.disable()
        prof.dump_stats(profile)
    engine.sync_queue_states()   # as the loop does when it stops
    t_last = clock()
    flushed = recorder.flush(3600)
    lag = clock() - t_last
    recorder.close()
    forks = recorder.forked - forks
    rows = {"cycles_rows": SchedulingCycle.objects.filter(cluster=cluster).count(),
            "bound_pod_rows": Pod.objects.filter(cluster=cluster).exclude(node_name="").count(),
            "pod_rows": Pod.objects.filter(cluster=cluster).count(),
            "events_rows": SchedulingEvent.objects.filter(cluster=cluster).count()}
    db.drop()
    lat.sort()
    return {"workload": name, "nodes": len(node_objs), "init_pods": len(init), "measured_pods": len(measured),
            "attempts": len(lat), "bound": sum(1 for key in measured_keys if _bound(engine, key)),
            "pods_per_s": round(len(measured) / wall, 1), "seconds": round(wall, 3),
            "backoff_wait_s": round(waited, 3),
            "p50_ms": round(lat[len(lat) // 2] * 1000, 3) if lat else 0.0,
            "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 3) if lat else 0.0,
            "pods_per_s_to_commit": round(len(measured) / (wall + lag), 1),
            "recorder_lag_s": round(lag, 3), "recorder_flushed": flushed, "recorder_failures": recorder.failures,
            "recorder_overflow": recorder.overflow, "recorder_forks": forks,
            "minor_page_faults": faults, "init_seconds": round(t_init, 2), **rows,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def _bound(engine, key) -> bool:
    pod = engine.cluster.get_pod(*key)
    return pod is not None and bool(pod.node_name)


def _all_bound(engine, keys) -> bool:
    return all(_bound(engine, key) for key in keys)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", choices=list(WORKLOADS))
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--pods", type=int, help="measured pods")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--profile", metavar="FILE", help="cProfile stats of the timed loop to FILE, of the writer to FILE.writer")
    args = ap.parse_args(argv)
    r = run(args.workload, args.nodes, args.pods, args.profile)
    if args.json:
        print(json.dumps(r, indent=1))
    else:
        print(f"{r['workload']}: {r['pods_per_s']} pods/s  p50 {r['p50_ms']} ms  p99 {r['p99_ms']} ms  "
              f"recorder lag {r['recorder_lag_s']} s  peak RSS {r['peak_rss_mb']} MB  rows: {r['cycles_rows']} "
              f"cycles, {r['bound_pod_rows']}/{r['pod_rows']} pods bound, {r['events_rows']} events  "
              f"({r['attempts']} attempts, {r['measured_pods']} measured pods)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
