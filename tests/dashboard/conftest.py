"""Fixtures for the Django tests: they run against real PostgreSQL and Redis (make test sets
DATABASE_URL and REDIS_URL) and, where they say so, a real Celery worker process."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def services(django_db_setup, django_db_blocker):
    """Fail fast unless the real services are configured (SCHEDSCOPE_ALLOW_SQLITE=1 relaxes the database)."""
    with django_db_blocker.unblock():
        vendor = connection.vendor
    if vendor != "postgresql" and os.environ.get("SCHEDSCOPE_ALLOW_SQLITE") != "1":
        pytest.exit("tests/dashboard need PostgreSQL: run them with `make test` (DATABASE_URL, REDIS_URL)", 2)
    if not settings.REDIS_URL:
        pytest.exit("tests/dashboard need Redis: run them with `make test` (REDIS_URL)", 2)
    import redis
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    yield
    from dashboard.services import livehub
    livehub.close_db()   # the live path's database thread keeps a connection to the test database


@pytest.fixture(autouse=True)
def fresh_k8s_api_registry():
    """Each test starts with the simulated Kubernetes API's process caches empty: tests reuse cluster names for new
    rows within the caches' one-second lifetime; and ends with them gone (their followers' database connections
    closed)."""
    from dashboard.k8sapi import registry
    registry.forget()
    yield
    registry.forget()


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.05, what: str = "condition"):
    """Poll until predicate() is truthy; returns its value or fails the test."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def web_process(env: dict, log_path):
    """``python -m dashboard.serve`` (the web process) on a free port of 127.0.0.1 with ``env`` (its output in
    ``log_path``); yields the base URL once the sign-in page answers, and stops it afterwards."""
    port = free_port()
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "dashboard.serve", "-b", "127.0.0.1", "-p", str(port),
                                 "dashboard.asgi:application"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"

        def up():
            if proc.poll() is not None:
                pytest.fail(f"the web process exited ({proc.returncode}); its output is in {log_path}")
            try:
                return urllib.request.urlopen(base + "/profiles/login/", timeout=2).status == 200
            except OSError:
                return False
        try:
            wait_for(up, 120, 0.2, "the web process")   # a loaded machine's start takes well over 30 s
            yield base
        finally:
            proc.terminate()
            proc.wait(15)


def database_url() -> str:
    """The URL of the test database (the one pytest-django created), for other processes."""
    d = connection.settings_dict
    auth = d["USER"] or "postgres"
    if d.get("PASSWORD"):
        auth += f":{d['PASSWORD']}"
    return f"postgres://{auth}@{d['HOST'] or '127.0.0.1'}:{d['PORT'] or 5432}/{d['NAME']}"


def run_on_sqlite(tmp_path, node_ids: list, timeout: float = 600) -> str:
    """Runs the tests ``node_ids`` in a pytest subprocess on a SQLite database in ``tmp_path`` (the embedded mode's
    database; same Redis) and fails with its output unless they all pass; returns that output."""
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{tmp_path / 'embedded.sqlite3'}", SCHEDSCOPE_ALLOW_SQLITE="1",
               REDIS_URL=settings.REDIS_URL, PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="dashboard.settings")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *node_ids],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and " passed" in out and " skipped" not in out, out[-8000:]
    return out


class WorkerProcess:
    """A real `celery -A dashboard worker` subprocess against the test database and Redis."""

    count = 0

    def __init__(self, tmp_path, lock_ttl: float = 3.0, queues: str = "celery,questions", pool: str = "threads",
                 concurrency: int = 4, idle: bool = False):
        WorkerProcess.count += 1
        self.log_path = tmp_path / f"worker{WorkerProcess.count}.log"
        env = dict(os.environ, DATABASE_URL=database_url(), REDIS_URL=settings.REDIS_URL,
                   SCHEDSCOPE_LOCK_TTL=str(lock_ttl), SCHEDSCOPE_RECORDER_FLUSH="0.1",
                   SCHEDSCOPE_RECORDER_FORK_SPACING="0.2",
                   SCHEDSCOPE_BROADCAST_INTERVAL="0.2", DJANGO_SETTINGS_MODULE="dashboard.settings")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            (["chrt", "--idle", "0"] if idle else []) + [sys.executable, "-m", "celery", "-A", "dashboard", "worker", "-Q", queues, f"--pool={pool}",
             f"--concurrency={concurrency}", "-l", "info", "--without-gossip", "--without-mingle",
             "--without-heartbeat",             "-n", f"test{WorkerProcess.count}-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: "ready." in self.text() or self.proc.poll() is not None, 60, 0.1, "the Celery worker")
        if self.proc.poll() is not None:
            pytest.fail(f"Celery worker exited:\n{self.text()}")

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self):
        """SIGKILL, as a crash: no cleanup, locks are left to expire."""
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
                self.proc.wait(120)   # a worker at the lowest priority exits slowly on a busy machine
        self.log.close()


@pytest.fixture
def worker_factory(tmp_path):
    started = []

    def start(**kw):
        w = WorkerProcess(tmp_path, **kw)
        started.append(w)
        return w
    yield start
    for w in started:
        w.stop()


def load_cluster(api, scenario: dict, steps: int = 0):
    """A cluster made and loaded through the API (tie-break by name), after ``steps`` cycles of an in-process
    loop; its row."""
    from dashboard.models import Cluster
    from dashboard.services.runner import Runner
    name = scenario["name"]
    assert api.post("/api/clusters/", {"name": name, "tie_break": "name"}, format="json").status_code == 201
    r = api.post(f"/api/clusters/{name}/scenario/", {"scenario": scenario}, format="json")
    assert r.status_code == 201, r.content
    cluster = Cluster.objects.get(name=name)
    if steps:
        assert Runner(cluster.id, steps=steps).run()
    return cluster


def small_scenario(pending_web: int = 12) -> dict:
    """6 nodes in two zones (one tainted), a few fitting pods and three that never fit."""
    def node(name, zone, cpu="4", taints=None, labels=None):
        lab = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
        lab.update(labels or {})
        alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
        return {"metadata": {"name": name, "labels": lab}, "spec": {"taints": taints or []},
                "status": {"capacity": alloc, "allocatable": alloc}}

    def pod(name, cpu="500m", selector=None, ns="default"):
        spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}
        if selector:
            spec["nodeSelector"] = selector
        return {"metadata": {"name": name, "namespace": ns, "uid": f"{ns}-{name}"}, "spec": spec}

    nodes = [node(f"n-{i}", "a" if i % 2 else "b") for i in range(5)]
    nodes.append(node("gpu-0", "a", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]))
    pending = [pod(f"web-{i}") for i in range(pending_web)]
    pending += [pod("too-big", cpu="64"), pod("wants-ssd", selector={"disk": "ssd"}), pod("also-big", cpu="32")]
    return {"name": "small", "nodes": nodes, "pods": [], "pending": pending}


# -- signed-in users: viewer (reads), editor (the "editor" group), admin (pytest-django's superuser) --------
def make_user(username: str, group: str = ""):
    """A user with password ``<username>-pw``, in ``group`` if given."""
    from django.contrib.auth.models import Group, User
    user = User.objects.create_user(username, password=f"{username}-pw")
    if group:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


@pytest.fixture
def viewer_user(db):
    return make_user("viewer", "viewer")


@pytest.fixture
def editor_user(db):
    return make_user("editor", "editor")


def page_client(user=None):
    """A Django test client, signed in as ``user`` (anonymous if None)."""
    from django.test import Client
    c = Client(HTTP_HOST="localhost")
    if user is not None:
        c.force_login(user)
    return c


def api_client(user=None):
    """A DRF test client authenticated as ``user`` (anonymous if None)."""
    from rest_framework.test import APIClient
    c = APIClient()
    if user is not None:
        c.force_authenticate(user)
    return c


@pytest.fixture
def client(admin_user):
    """The pages, signed in as an admin (overrides pytest-django's anonymous ``client``)."""
    return page_client(admin_user)


@pytest.fixture
def api(admin_user):
    """The REST API as an admin."""
    return api_client(admin_user)


@pytest.fixture
def small(api):
    """A small simulated cluster (small_scenario, two pending web pods) and a token of its Kubernetes API."""
    from dashboard.services import credentials
    cluster = load_cluster(api, small_scenario(pending_web=2))
    return cluster, credentials.create_token(cluster, "tests", None)[1]


def session_cookie(user) -> bytes:
    """A ``Cookie`` header value with a fresh signed-in session of ``user`` (websockets, browsers)."""
    return f"{settings.SESSION_COOKIE_NAME}={session_key(user)}".encode()


def session_key(user) -> str:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return store.session_key
