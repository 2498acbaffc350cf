"""The live path under load: the full stack (the web process, a Celery worker with --pool=threads, PostgreSQL,
Redis) with a cluster of 500 nodes and 5,000 pending pods being scheduled, watched by many websockets.

Phases, each on a freshly loaded scenario: (1) scheduling with no viewers (pods/s); (2) --viewers websockets
opened evenly within --open-seconds, then scheduling while they all watch (pods/s, broadcast-to-client lag);
(3) --page-viewers of them left open, scheduling again while pages are fetched (page p99); then every socket
closes at once and the Redis group members left are counted; (4) with the cluster running, --burst pods created
through the REST API from --burst-clients threads (bare v1.Pod bodies, an API token, keep-alive connections):
seconds until every create was answered (``burst_s``), answers other than 201, and seconds until every one of
them was bound (``burst_scheduled_s``, from the first create). Errors in the web process's and the worker's logs are
counted throughout. Uses its own database (created if missing) and Redis db (flushed). Prints one JSON object
with --json (otherwise key: value lines). Not a test: the figures depend on the machine's load.

    python bench/live_load.py --viewers 500 --json
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.recorder_bench import ensure_database  # noqa: E402

PAGES = ["/clusters/{c}/", "/clusters/{c}/pending/", "/clusters/{c}/nodes/", "/clusters/{c}/events/"]
UPDATE_AT = re.compile(r'\{"kind": "update", "epoch": "[^"]*", "seq": \d+, "at": ([0-9.e+]+)')
ERROR_LINE = re.compile(r"Traceback|\bERROR\b|Exception|took too long to shut down")


def scenario(n_nodes: int, n_pods: int) -> dict:
    alloc = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    nodes = [{"metadata": {"name": f"node-{i:04d}", "labels": {"topology.kubernetes.io/zone": f"z{i % 3}",
                                                               "kubernetes.io/hostname": f"node-{i:04d}"}},
              "status": {"capacity": alloc, "allocatable": alloc}} for i in range(n_nodes)]
    pending = [{"metadata": {"name": f"p-{i:05d}", "namespace": "load", "uid": f"load-{i}"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}}]}}
               for i in range(n_pods)]
    return {"name": "live-load", "nodes": nodes, "pods": [], "pending": pending}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def p99(values: list) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.99 * (len(values) - 1))))]


class Stack:
    """The web process and a Celery worker as subprocesses (their own process groups), logs in a temporary directory."""

    def __init__(self, env: dict, logdir: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.logs = {"web": logdir / "web.log", "worker": logdir / "worker.log"}
        self.procs = []
        for name, cmd in (("web", [sys.executable, "-m", "dashboard.serve", "-b", "127.0.0.1", "-p",
                                      str(self.port), "dashboard.asgi:application"]),
                          ("worker", [sys.executable, "-m", "celery", "-A", "dashboard", "worker", "--pool=threads",
                                      "--concurrency=4", "-l", "info", "--without-gossip", "--without-mingle",
                                      "--without-heartbeat", "-n", f"livebench-{os.getpid()}@%h"])):
            log = open(self.logs[name], "w")
            self.procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True))
        self._wait()

    def _wait(self):
        import urllib.request
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                web_up = urllib.request.urlopen(self.base + "/profiles/login/", timeout=2).status == 200
            except OSError:
                web_up = False
            if web_up and "ready." in self.logs["worker"].read_text(errors="replace"):
                return
            time.sleep(0.3)
        raise SystemExit("the stack did not start: see " + str(self.logs["web"].parent))

    def log_errors(self) -> int:
        return sum(1 for path in self.logs.values() for line in path.read_text(errors="replace").splitlines()
                   if ERROR_LINE.search(line))

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def schedule(cluster, scen: dict, timeout: float = 600) -> float:
    """Load the scenario, start the loop, wait until every pod is bound; pods/s from the first binding."""
    from dashboard.models import Cluster, Pod
    from dashboard.services import clusters as svc
    svc.set_state(cluster, Cluster.STOPPED)
    time.sleep(1)
    svc.load_scenario(cluster, scen, "live-load")
    total = len(scen["pending"])
    bound = Pod.objects.filter(cluster=cluster, queue=Pod.BOUND)
    svc.set_state(cluster, Cluster.RUNNING)
    end, first = time.monotonic() + timeout, None
    while time.monotonic() < end:
        n = bound.count()
        if n and first is None:
            first = (time.monotonic(), n)
        if n >= total:
            svc.set_state(cluster, Cluster.PAUSED)
            return (n - first[1]) / max(1e-6, time.monotonic() - first[0])
        time.sleep(0.2)
    raise SystemExit(f"scheduling did not finish in {timeout}s ({bound.count()}/{total} bound)")


class Viewers:
    """Websocket clients (aiohttp) in a thread of their own, each recording hello and update lags."""

    def __init__(self, base: str, cluster: str, cookie: str):
        self.url = base.replace("http", "ws") + f"/ws/clusters/{cluster}/"
        self.base, self.cluster, self.cookie = base, cluster, cookie
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.sockets, self.lags, self.connect_s, self.failed = [], [], [], []
        self.session = self._call(self._session())

    def _call(self, coro, timeout: float = 600):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _session(self):
        import aiohttp
        return aiohttp.ClientSession(headers={"Cookie": self.cookie, "Origin": self.base},
                                     connector=aiohttp.TCPConnector(limit=0))

    async def _one(self, delay: float):
        import aiohttp
        await asyncio.sleep(delay)
        start = time.monotonic()
        try:
            ws = await self.session.ws_connect(self.url, timeout=aiohttp.ClientWSTimeout(ws_close=30), autoping=True)
            hello = await ws.receive_json(timeout=30)
            assert hello["kind"] == "hello", hello
        except Exception as err:
            self.failed.append(f"{type(err).__name__}: {err}"[:200])
            return
        self.connect_s.append(time.monotonic() - start)
        self.sockets.append(ws)
        self.loop.create_task(self._listen(ws))

    async def _listen(self, ws):
        import aiohttp
        async for msg in ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            # no full JSON parse: the client's CPU is the machine's, which the scheduler shares
            at = UPDATE_AT.match(msg.data)
            if at:
                self.lags.append(time.time() - float(at.group(1)))

    def open(self, n: int, seconds: float):
        async def all_():
            await asyncio.gather(*(self._one(seconds * i / max(1, n)) for i in range(n)))
        self._call(all_())

    def close(self, keep: int = 0):
        """Close all sockets but ``keep``, all at once."""
        async def close_():
            doomed, self.sockets = self.sockets[keep:], self.sockets[:keep]
            await asyncio.gather(*(ws.close() for ws in doomed), return_exceptions=True)
        self._call(close_())

    def pages(self, until, concurrency: int = 2) -> list:
        """Milliseconds of page fetches (``concurrency`` at a time) until ``until`` (a threading.Event) is set."""
        async def fetch_for():
            times = []

            async def worker():
                i = 0
                while not until.is_set():
                    url = self.base + PAGES[i % len(PAGES)].format(c=self.cluster)
                    i += 1
                    start = time.monotonic()
                    async with self.session.get(url) as resp:
                        await resp.read()
                        assert resp.status == 200, (url, resp.status)
                    times.append((time.monotonic() - start) * 1000)
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return times
        return self._call(fetch_for())

    def shutdown(self):
        self._call(self.session.close())
        self.loop.call_soon_threadsafe(self.loop.stop)


def burst(base: str, cluster, token: str, n: int, clients: int, timeout: float = 600) -> dict:
    """``n`` pods created through the REST API from ``clients`` threads while the cluster runs: seconds until
    every create was answered, answers other than 201, seconds from the first create until all were bound."""
    import http.client
    import urllib.parse
    from concurrent.futures import ThreadPoolExecutor

    from dashboard.models import Cluster, Pod
    from dashboard.services import clusters as svc
    svc.set_state(cluster, Cluster.RUNNING)
    parts, local, errors = urllib.parse.urlsplit(base), threading.local(), []
    path = f"/api/clusters/{cluster.name}/pods/"

    def create(i: int):
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        body = json.dumps({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": f"burst-{i:05d}", "namespace": "burst"},
                           "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {
                               "requests": {"cpu": "10m", "memory": "16Mi"}}}]}})
        local.conn.request("POST", path, body, {"Content-Type": "application/json", "Authorization": f"Token {token}"})
        resp = local.conn.getresponse()
        answer = resp.read()
        if resp.status != 201:
            errors.append(f"{resp.status} {answer[:200]!r}")
    start = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        for fut in [pool.submit(create, i) for i in range(n)]:
            fut.result()
    answered = time.monotonic() - start
    bound = Pod.objects.filter(cluster=cluster, namespace="burst", queue=Pod.BOUND)
    while bound.count() < n - len(errors) and time.monotonic() - start < timeout:
        time.sleep(0.2)
    scheduled = time.monotonic() - start
    svc.set_state(cluster, Cluster.PAUSED)
    return {"burst": n, "burst_clients": clients, "burst_s": round(answered, 2),
            "burst_creates_per_s": round(n / answered, 1), "burst_errors": len(errors),
            "burst_error_samples": errors[:3], "burst_bound": bound.count(), "burst_scheduled_s": round(scheduled, 2)}


def group_members(redis_url: str, prefix: str = "schedscope") -> int:
    import redis
    client = redis.Redis.from_url(redis_url)
    return sum(client.zcard(key) for key in client.scan_iter(f"{prefix}:group:*"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--viewers", type=int, default=500)
    ap.add_argument("--page-viewers", type=int, default=200)
    ap.add_argument("--open-seconds", type=float, default=10.0, help="open the websockets evenly within this")
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--burst", type=int, default=10000, help="pods created through the REST API in phase 4 (0: none)")
    ap.add_argument("--burst-clients", type=int, default=32)
    ap.add_argument("--database-url", default=os.environ.get("LIVE_BENCH_DATABASE_URL",
                                                            "postgres://postgres@127.0.0.1:5432/schedscope_livebench"))
    ap.add_argument("--redis-url", default=os.environ.get("LIVE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/9"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    ensure_database(args.database_url)
    env = dict(os.environ, DATABASE_URL=args.database_url, REDIS_URL=args.redis_url,
               DJANGO_SETTINGS_MODULE="dashboard.settings", PYTHONPATH=str(ROOT), SCHEDSCOPE_AUTOSTART="0")
    os.environ.update(env)
    import django
    django.setup()
    import redis
    from django.core.management import call_command
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.test import Client
    from knox.models import AuthToken

    from dashboard.models import Cluster
    call_command("migrate", verbosity=0)
    redis.Redis.from_url(args.redis_url).flushdb()
    Cluster.objects.filter(name="live-load").delete()
    cluster = Cluster.objects.create(name="live-load")
    user = User.objects.filter(username="live-load").first() or User.objects.create_user("live-load")
    user.groups.add(Group.objects.get_or_create(name="editor")[0])   # the burst's creates need the editor role
    token = AuthToken.objects.create(user=user)[1]
    client = Client()
    client.force_login(user)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    scen = scenario(args.nodes, args.pods)
    logdir = Path(tempfile.mkdtemp(prefix="live-load-"))
    stack = Stack(env, logdir)
    viewers = None
    try:
        viewers = Viewers(stack.base, cluster.name, cookie)

        def schedule_with_pages() -> list:
            pages, done = [], threading.Event()
            fetcher = threading.Thread(target=lambda: pages.extend(viewers.pages(done)))
            fetcher.start()
            try:
                schedule(cluster, scen)
            finally:
                done.set()
                fetcher.join()
            return pages
        alone = schedule(cluster, scen)
        pages_alone = schedule_with_pages()
        viewers.open(args.viewers, args.open_seconds)
        watched = schedule(cluster, scen)
        viewers.close(keep=args.page_viewers)
        pages = schedule_with_pages()
        viewers.close()
        time.sleep(3)
        members_left = group_members(args.redis_url)
        bursts = burst(stack.base, cluster, token, args.burst, args.burst_clients) if args.burst else {}
        result = {
            "viewers": args.viewers, "nodes": args.nodes, "pods": args.pods,
            "connected_ratio": round(len(viewers.connect_s) / args.viewers, 3) if args.viewers else 1.0,
            "connect_p99_s": round(p99(viewers.connect_s), 3),
            "lag_p99_s": round(p99(viewers.lags), 3), "lag_p50_s": round(statistics.median(viewers.lags), 3)
            if viewers.lags else None, "updates_received": len(viewers.lags),
            "pods_per_s_alone": round(alone, 1), "pods_per_s_watched": round(watched, 1),
            "pods_per_s_ratio": round(watched / alone, 3),
            "page_p99_ms_no_viewers": round(p99(pages_alone), 1),
            "page_viewers": args.page_viewers, "page_requests": len(pages),
            "page_p50_ms": round(statistics.median(pages), 1) if pages else None, "page_p99_ms": round(p99(pages), 1),
            "connect_failures": sorted(set(viewers.failed))[:5],
            "groups_left_after_close": members_left, **bursts,
            "log_errors": stack.log_errors(), "logs": str(logdir),
        }
    finally:
        if viewers is not None:
            viewers.shutdown()
        try:
            Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.STOPPED)
        finally:
            stack.stop()
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
