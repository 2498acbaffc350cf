"""The Django app's web process (``python -m dashboard.serve``) in a subprocess, for tests that drive its
Kubernetes-compatible API with the official ``kubernetes`` client and kubectl. Clusters are created through the
dashboard's REST API."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


ADMIN_TOKEN = """
from django.contrib.auth.models import User
from knox.models import AuthToken
user = (User.objects.filter(username="api-test-admin").first()
        or User.objects.create_superuser("api-test-admin", "", None))
print(AuthToken.objects.create(user=user)[1])
"""


def _http(method: str, url: str, body=None, timeout: float = 30.0, token: str = ""):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        text = resp.read().decode()
        return resp.status, text


class ApiServer:
    """``python -m dashboard.serve`` on a free port of 127.0.0.1, against ``database_url``.

    ``watch_window`` and ``bookmark_seconds`` set the API's watch log size and bookmark period (small values
    make 410 Gone and bookmarks quick to reach in tests). With ``redis_url``, the full stack: Redis for the
    channel layer and Celery's broker, and a Celery worker (``--pool=threads``, as compose runs it) that runs
    the scheduler loops; without it the loops run in the web process.
    """

    def __init__(self, tmp_dir: Path, database_url: str, watch_window: int = 10000, bookmark_seconds: float = 60,
                 migrate: bool = False, redis_url: str = ""):
        self.tmp_dir = Path(tmp_dir)
        self.log_path = self.tmp_dir / "web.log"
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        env.update(DATABASE_URL=database_url, SCHEDSCOPE_AUTOSTART="0", DJANGO_SETTINGS_MODULE="dashboard.settings",
                   SCHEDSCOPE_K8S_WATCH_WINDOW=str(watch_window), SCHEDSCOPE_K8S_BOOKMARK_SECONDS=str(bookmark_seconds),
                   PYTHONUNBUFFERED="1")
        if redis_url:
            env["REDIS_URL"] = redis_url
        if migrate:
            subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                           check=True)
        self.env = env
        self.token = ""
        self.log = None
        self.port = 0
        self.worker = self.worker_log = None
        if redis_url:
            self._start_worker()
        self.start()
        self.url = f"http://127.0.0.1:{self.port}"

    def _start_worker(self) -> None:
        path = self.tmp_dir / "worker.log"
        self.worker_log = open(path, "w")
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "dashboard", "worker", "--pool=threads", "--concurrency=4", "-l",
             "info", "--without-gossip", "--without-mingle", "--without-heartbeat", "-n",
             f"apiserver-{os.getpid()}@%h"], cwd=ROOT, env=self.env, stdout=self.worker_log,
            stderr=subprocess.STDOUT, start_new_session=True)
        end = time.monotonic() + 60
        while "ready." not in path.read_text(errors="replace"):
            if self.worker.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"the Celery worker did not start:\n{path.read_text(errors='replace')}")
            time.sleep(0.1)

    def start(self) -> None:
        """Start the web process (on the port it had before, after ``stop``)."""
        if self.log is not None:
            self.log.close()
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dashboard.serve", "-b", "127.0.0.1", "-p", str(self.port),
             "dashboard.asgi:application"], cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        end = time.monotonic() + 60
        while True:
            m = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", self.text())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"the web process did not start:\n{self.text()}")
            time.sleep(0.05)

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _admin_token(self) -> str:
        """An admin's API token (the dashboard's REST API and pages need a signed-in user); made again when
        the tests' database was flushed since."""
        if self.token:
            try:
                _http("GET", f"{self.url}/api/", token=self.token)
                return self.token
            except urllib.error.HTTPError:
                pass
        self.token = subprocess.run([sys.executable, "manage.py", "shell", "-c", ADMIN_TOKEN], cwd=ROOT,
                                    env=self.env, check=True, capture_output=True, text=True).stdout.split()[-1]
        return self.token

    def create_cluster(self, name: str, scenario: dict, **fields) -> Path:
        """A simulated cluster loaded with ``scenario`` (``fields``: more of the cluster's, e.g. kube_version);
        returns the path of its kubeconfig."""
        self._admin_token()
        _http("POST", f"{self.url}/api/clusters/", {"name": name, "kind": "simulated", "tie_break": "name", **fields},
              token=self.token)
        status, text = _http("POST", f"{self.url}/api/clusters/{name}/scenario/", {"scenario": scenario},
                             token=self.token)
        assert status == 201, text
        return self.kubeconfig(name)

    def kubeconfig(self, name: str, token_name: str = "tests") -> Path:
        """A new API token of cluster ``name`` (made through the REST API); the path of its kubeconfig."""
        status, text = _http("POST", f"{self.url}/api/clusters/{name}/tokens/", {"name": token_name},
                             token=self._admin_token())
        assert status == 201, text
        path = self.tmp_dir / f"{name}-{token_name}.kubeconfig"
        path.write_text(json.loads(text)["kubeconfig"])
        return path

    def stop(self) -> None:
        """Stop the web process (``start`` starts it again) and the Celery worker, if there is one."""
        for proc in (self.proc, self.worker):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(10)
        self.log.close()
        if self.worker_log is not None:
            self.worker_log.close()


def node(name: str, cpu: str = "4", memory: str = "16Gi", zone: str = "a", labels=None, taints=None) -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
                                                  **(labels or {})}},
            "spec": {"taints": taints or []},
            "status": {"capacity": alloc, "allocatable": alloc, "conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kubeletVersion": "v1.30.0"}}}


def pod(name: str, cpu: str = "500m", memory: str = "256Mi", namespace: str = "default", labels=None,
        scheduler: str | None = None, **spec) -> dict:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                             "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}}
    if scheduler:
        body["spec"]["schedulerName"] = scheduler
    return body
