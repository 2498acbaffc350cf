"""Fault tests: real Celery workers against a private PostgreSQL and Redis that the tests stop and restart.
Run them with `make faults` (tests/faults/harness.py starts the private servers); `make test` skips them."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENABLED = os.environ.get("SCHEDSCOPE_FAULTS") == "1"
collect_ignore_glob = [] if ENABLED else ["test_*.py"]


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.1, what: str = "condition"):
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


@pytest.fixture(scope="session")
def services():
    from .harness import Services
    return Services()


def database_url() -> str:
    from django.db import connection
    d = connection.settings_dict
    return f"postgres://{d['USER'] or 'postgres'}@{d['HOST']}:{d['PORT']}/{d['NAME']}"


class Worker:
    """A `celery -A dashboard worker` process; kill() is SIGKILL to its whole process group."""

    count = 0

    def __init__(self, tmp_path, lock_ttl: float = 2.0, **env):
        from django.conf import settings
        Worker.count += 1
        self.n = Worker.count
        self.log_path = tmp_path / f"worker{self.n}.log"
        full = dict(os.environ, DATABASE_URL=database_url(), REDIS_URL=settings.REDIS_URL,
                    SCHEDSCOPE_LOCK_TTL=str(lock_ttl), SCHEDSCOPE_RECORDER_FLUSH="0.1",
                    SCHEDSCOPE_BROADCAST_INTERVAL="0.2", DJANGO_SETTINGS_MODULE="dashboard.settings", **env)
        self.log = open(self.log_path, "w")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "dashboard", "worker", "--pool=threads", "--concurrency=4",
             "-l", "info", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "-n", f"fault{self.n}-{os.getpid()}@%h"],
            cwd=ROOT, env=full, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 60):
        wait_for(lambda: "ready." in self.text() or self.proc.poll() is not None, timeout, 0.1, "the Celery worker")
        if self.proc.poll() is not None:
            pytest.fail(f"Celery worker exited:\n{self.text()[-3000:]}")
        return self

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self.log.close()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if not self.log.closed:
            self.log.close()


LOG_ROOT = Path(os.environ.get("FAULT_LOG_DIR", "/tmp/schedscope-fault-logs"))


@pytest.fixture
def workers(request):
    """Starts Celery workers; their logs stay in FAULT_LOG_DIR/<test>/ after the run."""
    import shutil
    tmp_path = LOG_ROOT / request.node.name
    shutil.rmtree(tmp_path, ignore_errors=True)
    tmp_path.mkdir(parents=True)
    started = []
    failed_before = request.session.testsfailed

    def start(wait=True, **kw):
        w = Worker(tmp_path, **kw)
        started.append(w)
        return w.wait_ready() if wait else w
    yield start
    for w in started:
        w.stop()
    if request.session.testsfailed > failed_before:   # the test failed: its workers' last words, in CI's output
        for w in started[-3:]:
            print(f"\n--- the end of worker {w.n}'s log ({w.log_path}):\n" + "\n".join(w.text().splitlines()[-80:]))


def scenario(n_nodes: int, n_pods: int, cpu_every: int = 10) -> dict:
    """n_nodes nodes in three zones and n_pods pending pods that all fit."""
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "250"}
    nodes = [{"metadata": {"name": f"node-{i:04d}", "labels": {"topology.kubernetes.io/zone": f"z{i % 3}",
                                                               "kubernetes.io/hostname": f"node-{i:04d}"}},
              "status": {"capacity": alloc, "allocatable": alloc}} for i in range(n_nodes)]
    pending = [{"metadata": {"name": f"p-{i:05d}", "namespace": "load", "uid": f"load-{i}"},
                "spec": {"containers": [{"name": "c", "image": "c:1", "resources": {"requests": {
                    "cpu": "1" if i % cpu_every == 0 else "100m", "memory": "256Mi"}}}]}} for i in range(n_pods)]
    return {"name": "faults", "nodes": nodes, "pods": [], "pending": pending}


def check_invariants(cluster) -> dict:
    """The promises: no pod bound twice, no node over allocatable, every committed binding has its cycle."""
    from django.db.models import Count, Sum

    from dashboard.models import Node, Pod, SchedulingCycle, SchedulingEvent
    double = (SchedulingCycle.objects.filter(cluster=cluster, result="scheduled").values("pod_uid")
              .annotate(n=Count("id")).filter(n__gt=1).count())
    double += (SchedulingEvent.objects.filter(cluster=cluster, reason="Scheduled").values("pod_uid")
               .annotate(n=Count("id")).filter(n__gt=1).count())
    used = {r["node_name"]: r for r in Pod.objects.filter(cluster=cluster).exclude(node_name="")
            .values("node_name").annotate(cpu=Sum("cpu_m"), mem=Sum("memory"), n=Count("id"))}
    over = 0
    for node in Node.objects.filter(cluster=cluster):
        u = used.get(node.name)
        if u and (u["cpu"] > node.allocatable.get("cpu", 0) or u["mem"] > node.allocatable.get("memory", 0)
                  or u["n"] > node.allocatable.get("pods", 1 << 62)):
            over += 1
    cycles = {c["seq"]: c for c in SchedulingCycle.objects.filter(cluster=cluster, result="scheduled")
              .values("seq", "pod_uid", "node")}
    orphans = 0
    bound = list(Pod.objects.filter(cluster=cluster).exclude(node_name="")
                 .values_list("uid", "node_name", "last_cycle"))
    for uid, node, seq in bound:
        c = cycles.get(seq)
        if c is None or c["pod_uid"] != uid or c["node"] != node:
            orphans += 1
    return {"bound": len(bound), "bound_twice": double, "over_allocatable": over, "bindings_without_cycle": orphans}


class Listener:
    """Receives a cluster's live updates from the channel layer in a background thread (what a browser
    gets), reconnecting when the layer is unreachable."""

    def __init__(self, cluster_id: int):
        import threading
        self.cluster_id = cluster_id
        self.messages = []
        self.errors = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        import asyncio
        asyncio.run(self._main())

    async def _main(self):
        import asyncio

        from channels.layers import get_channel_layer

        from dashboard.services.broadcast import group_name
        layer = get_channel_layer()
        channel = None
        while not self._stop:
            try:
                if channel is None:
                    channel = await layer.new_channel()
                    await layer.group_add(group_name(self.cluster_id), channel)
                msg = await asyncio.wait_for(layer.receive(channel), 0.5)
                self.messages.append((time.monotonic(), msg))
            except asyncio.TimeoutError:
                continue
            except Exception:  # the layer is away: retry, and join the group again (it may have been lost)
                self.errors += 1
                channel = None
                await asyncio.sleep(0.2)

    def bound(self) -> int:
        for _t, msg in reversed(self.messages):
            if msg.get("queue"):
                return msg["queue"]["bound"]
        return 0

    def close(self):
        self._stop = True
        self._thread.join(5)
