"""The simulated clusters' Kubernetes API over the one store: creates, scheduling while pods arrive, and a watch.

The real app as it runs on PostgreSQL (its own database, created if missing): the web process, Redis (its own db, flushed)
and a Celery worker that runs the scheduler loop; with ``--embedded``, the loop in the web process and no Redis.
It is driven with the official ``kubernetes`` client, as kubectl and outside schedulers drive it:

1. ``--creates`` pod creates from ``--threads`` threads into a stopped cluster of ``--nodes`` nodes: creates/s
   (each create is stored, with its resourceVersion and change log entry, before it is answered), and the CPU
   milliseconds per create of the server process, of this client and of the machine's PostgreSQL; then
   ``--rest-creates`` pods through the dashboard's REST API from ``--rest-threads`` threads (bare v1.Pod bodies,
   keep-alive connections): creates/s, answers other than 201, CPU per create;
2. the cluster running (the dashboard's loop follows the store) while ``--scheduled`` pods are created the same
   way: pods/s from the first create to the last binding stored;
3. a watch of one namespace while ``--events`` pods are created there: the lag from each create's answer
   (its commit) to the watch event carrying it, p50 / p99 / max.

Prints one JSON object with ``--json``. Not a test: the figures depend on the machine's load.

    python bench/api_bench.py --json
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubernetes import client as kclient  # noqa: E402
from kubernetes import config as kconfig  # noqa: E402
from kubernetes import watch as kwatch  # noqa: E402

from bench.recorder_bench import ensure_database  # noqa: E402
from tests.k8s_api_server import ApiServer, _http, node, pod  # noqa: E402


def create_pods(core, namespace: str, names, threads: int, stamp: dict | None = None) -> float:
    """Create pods named ``names`` from ``threads`` threads; seconds taken. ``stamp``: name -> the monotonic time
    each create was answered."""
    def one(name):
        # the answer read as bytes: deserializing V1Pod models costs the client more CPU than the server's create
        core.create_namespaced_pod(namespace, pod(name, cpu="10m", memory="16Mi", namespace=namespace),
                                   _preload_content=False).read()
        if stamp is not None:
            stamp[name] = time.monotonic()
    start = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        for fut in [pool.submit(one, n) for n in names]:
            fut.result()
    return time.monotonic() - start


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu_seconds() -> float:
    """CPU seconds used so far by this machine's PostgreSQL processes (0 when there are none to read)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if "(postgres)" in text:
            fields = text.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rest_create_pods(url: str, token: str, namespace: str, names, threads: int) -> tuple[float, int]:
    """Create pods through the dashboard's REST API (a bare v1.Pod body each, one keep-alive connection per
    thread); (seconds taken, answers other than 201)."""
    parts = urllib.parse.urlsplit(url)
    local = threading.local()
    errors = []

    def one(name):
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        body = json.dumps(pod(name, cpu="10m", memory="16Mi", namespace=namespace))
        local.conn.request("POST", parts.path, body,
                           {"Content-Type": "application/json", "Authorization": f"Token {token}"})
        resp = local.conn.getresponse()
        resp.read()
        if resp.status != 201:
            errors.append(resp.status)
    start = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        for fut in [pool.submit(one, n) for n in names]:
            fut.result()
    return time.monotonic() - start, len(errors)


def cluster_client(srv: ApiServer, name: str, nodes: int):
    srv.create_cluster(name, {"nodes": [node(f"n{i:04d}", cpu="64", memory="256Gi") for i in range(nodes)],
                              "pods": [], "pending": []})
    api = kconfig.new_client_from_config(config_file=str(srv.kubeconfig(name, "bench")))
    api.rest_client.pool_manager.connection_pool_kw["maxsize"] = 32
    core = kclient.CoreV1Api(api)
    for ns in ("bench", "watched"):
        core.create_namespace({"metadata": {"name": ns}})
    return core


def unbound(core, namespace: str) -> int:
    """How many pods of ``namespace`` wait for a node (a field-selected list: the server encodes only those)."""
    resp = core.list_namespaced_pod(namespace, field_selector="spec.nodeName=", _preload_content=False)
    return len(json.loads(resp.data)["items"])


def percentile(values, q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--creates", type=int, default=10000)
    ap.add_argument("--scheduled", type=int, default=5000)
    ap.add_argument("--events", type=int, default=100000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--rest-creates", type=int, default=10000, help="pods created through the REST API (0: none)")
    ap.add_argument("--rest-threads", type=int, default=32)
    ap.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/schedscope_api_bench")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/13", help="the full stack's Redis db (flushed)")
    ap.add_argument("--embedded", action="store_true", help="the scheduler loop in the web process, no Redis")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    ensure_database(args.database)
    out = {"nodes": args.nodes, "threads": args.threads, "stack": "embedded" if args.embedded else "full"}
    redis_url = ""
    if not args.embedded:
        import redis
        redis.Redis.from_url(args.redis_url).flushdb()
        redis_url = args.redis_url
    srv = ApiServer(Path(tempfile.mkdtemp(prefix="api-bench-")), args.database, migrate=True, redis_url=redis_url)
    try:
        name = f"api-bench-{int(time.time())}"   # a new cluster each run, in the bench's own database
        core = cluster_client(srv, name, args.nodes)
        server_cpu, client_cpu, db_cpu = cpu_seconds(srv.proc.pid), time.process_time(), postgres_cpu_seconds()
        took = create_pods(core, "bench", [f"c-{i:06d}" for i in range(args.creates)], args.threads)
        out.update(creates=args.creates, creates_per_s=round(args.creates / took, 1),
                   server_cpu_ms_per_create=round(1000 * (cpu_seconds(srv.proc.pid) - server_cpu) / args.creates, 2),
                   client_cpu_ms_per_create=round(1000 * (time.process_time() - client_cpu) / args.creates, 2),
                   postgres_cpu_ms_per_create=round(1000 * (postgres_cpu_seconds() - db_cpu) / args.creates, 2))

        if args.rest_creates:
            server_cpu, db_cpu = cpu_seconds(srv.proc.pid), postgres_cpu_seconds()
            took, errors = rest_create_pods(f"{srv.url}/api/clusters/{name}/pods/", srv._admin_token(), "bench",
                                            [f"r-{i:06d}" for i in range(args.rest_creates)], args.rest_threads)
            out.update(rest_creates=args.rest_creates, rest_threads=args.rest_threads,
                       rest_creates_per_s=round(args.rest_creates / took, 1), rest_errors=errors,
                       rest_server_cpu_ms_per_create=round(
                           1000 * (cpu_seconds(srv.proc.pid) - server_cpu) / args.rest_creates, 2),
                       rest_postgres_cpu_ms_per_create=round(
                           1000 * (postgres_cpu_seconds() - db_cpu) / args.rest_creates, 2))

        _http("POST", f"{srv.url}/api/clusters/{name}/start/", token=srv._admin_token())
        deadline = time.monotonic() + 600
        while unbound(core, "bench") and time.monotonic() < deadline:
            time.sleep(1.0)   # the first phase's pods, scheduled before the timed phase
        start = time.monotonic()
        create_pods(core, "bench", [f"s-{i:06d}" for i in range(args.scheduled)], args.threads)
        while unbound(core, "bench") and time.monotonic() < deadline:
            time.sleep(0.2)
        out.update(scheduled=args.scheduled,
                   scheduled_pods_per_s=round(args.scheduled / (time.monotonic() - start), 1))
        _http("POST", f"{srv.url}/api/clusters/{name}/stop/", token=srv._admin_token())

        seen, answered = {}, {}

        def watch():
            w = kwatch.Watch()
            for ev in w.stream(core.list_namespaced_pod, "watched", timeout_seconds=3600,
                               _preload_content=True):
                if ev["type"] == "ADDED":
                    seen.setdefault(ev["object"].metadata.name, time.monotonic())
                if len(seen) >= args.events:
                    w.stop()
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        time.sleep(1.0)
        create_pods(core, "watched", [f"w-{i:06d}" for i in range(args.events)], args.threads, answered)
        watcher.join(300)
        lags = [max(0.0, seen[n] - t) for n, t in answered.items() if n in seen]
        out.update(events=args.events, events_received=len(lags),
                   watch_lag_p50_s=round(statistics.median(lags), 4) if lags else None,
                   watch_lag_p99_s=round(percentile(lags, 0.99), 4), watch_lag_max_s=round(max(lags, default=0), 4))
    finally:
        srv.stop()
    out["load_average"] = os.getloadavg()[0]
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
