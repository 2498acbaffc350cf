"""`make run` keeps what users made: the demo cluster is created on the first run only; a namespace and a pod created
through the cluster's Kubernetes API survive `make run` stopped (Ctrl-C) and started again; `make demo-reset` loads
the bundled scenario again."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import yaml
from kubernetes import client, config

from .conftest import ROOT, free_port, wait_for


def _env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'run.sqlite3'}", DJANGO_SETTINGS_MODULE="dashboard.settings")
    return env


def _make(target: str, env: dict, port: int, **popen):
    venv = Path(sys.executable).parent.parent
    return ["make", "-s", "-C", str(ROOT), target, f"VENV={venv}", f"PORT={port}"], dict(env=env, **popen)


@contextmanager
def make_run(tmp_path, port: int, run: int):
    """`make run` on ``port`` until it answers; stopped as Ctrl-C stops it. Yields its output file."""
    log_path = tmp_path / f"run{run}.log"
    cmd, kw = _make("run", _env(tmp_path), port)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **kw)

        def up():
            assert proc.poll() is None, log_path.read_text()
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/profiles/login/", timeout=2).status == 200
            except OSError:
                return False
        try:
            wait_for(up, 300, 0.2, "make run to serve")
            yield log_path
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(30)


def _api(tmp_path, port: int) -> client.CoreV1Api:
    kubeconfig = subprocess.run([sys.executable, str(ROOT / "manage.py"), "clustertoken", "demo", "--server",
                                 f"http://127.0.0.1:{port}"], cwd=ROOT, env=_env(tmp_path), check=True,
                                capture_output=True, text=True).stdout
    return client.CoreV1Api(config.new_client_from_config_dict(yaml.safe_load(kubeconfig)))


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "keep-me"},
       "spec": {"containers": [{"name": "c", "image": "nginx",
                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


def test_objects_made_with_the_api_survive_a_restart_and_demo_reset_is_explicit(tmp_path):
    port = free_port()
    with make_run(tmp_path, port, 1) as log:
        assert "demo cluster 'demo' created" in log.read_text()
        api = _api(tmp_path, port)
        api.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "mine"}})
        api.create_namespaced_pod("mine", POD)
        demo_pods = {p.metadata.name for p in api.list_namespaced_pod("default").items}
    with make_run(tmp_path, port, 2) as log:
        assert "demo cluster 'demo' kept as it was" in log.read_text()
        api = _api(tmp_path, port)
        assert "mine" in {n.metadata.name for n in api.list_namespace().items}
        assert [p.metadata.name for p in api.list_namespaced_pod("mine").items] == ["keep-me"]
        assert demo_pods <= {p.metadata.name for p in api.list_namespaced_pod("default").items}
    cmd, kw = _make("demo-reset", _env(tmp_path), port)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout
    assert "demo cluster 'demo' reset" in out
    with make_run(tmp_path, port, 3):
        api = _api(tmp_path, port)
        assert api.list_namespaced_pod("mine").items == []
        assert "mine" not in {n.metadata.name for n in api.list_namespace().items}
