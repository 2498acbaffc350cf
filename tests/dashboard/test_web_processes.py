"""Two web processes (uvicorn) over one PostgreSQL database and one Redis channel layer, with a Celery worker driving
the cluster: a pod added through the REST API of one process reaches the websocket clients of both, every update
in the same order and without gaps; each process is one member of the cluster's group; the API and the pages of
the other process show the pod bound."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import ExitStack

import pytest
import redis
import websocket
from channels.layers import get_channel_layer
from django.conf import settings
from knox.models import AuthToken

from dashboard.models import Cluster, Pod
from dashboard.services import broadcast
from dashboard.services import clusters as svc

from .conftest import ROOT, web_process, database_url, make_user, session_key, small_scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


class LiveClient:
    """A websocket client of one process's live stream, its messages collected by a thread."""

    def __init__(self, base: str, cluster: str, session: str):
        self.ws = websocket.create_connection(f"{base.replace('http', 'ws')}/ws/clusters/{cluster}/", timeout=30,
                                              origin=base, cookie=f"{settings.SESSION_COOKIE_NAME}={session}")
        self.messages = [json.loads(self.ws.recv())]
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        self.ws.settimeout(0.5)
        while not self.closed.is_set():
            try:
                self.messages.append(json.loads(self.ws.recv()))
            except websocket.WebSocketTimeoutException:
                continue
            except (websocket.WebSocketException, OSError):
                return

    def updates(self) -> list:
        return [m for m in self.messages if m["kind"] == "update"]

    def close(self):
        self.closed.set()
        self.thread.join(5)
        self.ws.close()


def _request(base: str, path: str, token: str, body: dict | None = None):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode() if body is not None else None,
                                 method="POST" if body is not None else "GET",
                                 headers={"Content-Type": "application/json", "Authorization": f"Token {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, json.loads(r.read())


def _carrying(client: LiveClient, pod_key: str) -> dict | None:
    """The first update that brought the pod's scheduling cycle, if one came."""
    return next((m for m in client.updates() if any(c["pod"] == pod_key for c in m["cycles"])), None)


def test_two_web_processes_stream_every_update_to_their_clients(worker_factory, tmp_path):
    cluster = Cluster.objects.create(name="twoweb", tie_break="name")
    svc.load_scenario(cluster, small_scenario(12), "test")
    editor = make_user("two-web-editor", "editor")
    token, session = AuthToken.objects.create(user=editor)[1], session_key(editor)
    worker_factory()
    svc.set_state(cluster, Cluster.RUNNING)
    wait_for(lambda: Pod.objects.filter(cluster=cluster, queue=Pod.BOUND).count() == 12, 60, what="the scenario bound")
    env = dict(os.environ, DATABASE_URL=database_url(), REDIS_URL=settings.REDIS_URL,
               DJANGO_SETTINGS_MODULE="dashboard.settings")
    with ExitStack() as stack:
        first, second = (stack.enter_context(web_process(env, tmp_path / f"web{i}.log")) for i in (1, 2))
        clients = [LiveClient(base, "twoweb", session) for base in (first, first, second, second)]
        stack.callback(lambda: [c.close() for c in clients])
        assert all(c.messages[0]["kind"] == "hello" and c.messages[0]["queue"]["bound"] == 12 for c in clients)
        group_key = get_channel_layer()._group_key(broadcast.group_name(cluster.id))
        assert redis.Redis.from_url(settings.REDIS_URL).zcard(group_key) == 2   # one member per process, not socket

        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "two-procs", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "100m"}}}]}}
        status, _ = _request(first, "/api/clusters/twoweb/pods/", token, pod)
        assert status == 201
        wait_for(lambda: all(_carrying(c, "default/two-procs") for c in clients), 60, what="the update on both")
        time.sleep(1)   # a later update of the same tick train, if any, reaches both too

        carried = [_carrying(c, "default/two-procs") for c in clients]
        assert len({(m["epoch"], m["seq"]) for m in carried}) == 1   # the same update everywhere
        assert [c["result"] for c in carried[0]["cycles"] if c["pod"] == "default/two-procs"] == ["scheduled"]
        # every client got every update from the first one all of them saw, in order, without a gap
        streams = [[(m["epoch"], m["seq"]) for m in c.updates()] for c in clients]
        start = max(s[0] for s in streams)
        common = [s[s.index(start):] for s in streams]
        common = [s[:min(len(c) for c in common)] for s in common]   # read at slightly different moments
        assert common[0] and all(s == common[0] for s in common), streams
        assert [seq for _, seq in common[0]] == list(range(start[1], start[1] + len(common[0])))

        # the other process's API and page show the pod bound
        status, got = _request(second, "/api/clusters/twoweb/pods/default/two-procs/", token)
        assert status == 200 and got["queue"] == "bound" and got["node_name"]
        req = urllib.request.Request(second + "/clusters/twoweb/pods/default/two-procs/",
                                     headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200 and got["node_name"] in r.read().decode()


def test_processes_started_together_share_one_generated_key(tmp_path):
    """Without SECRET_KEY, every process (web replicas, workers) pointed at one SCHEDSCOPE_SECRET_FILE gets the same
    key, created once with mode 0600: a session signed by one process is valid in the others."""
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env.update(SCHEDSCOPE_SECRET_FILE=str(tmp_path / "secret"), DJANGO_SETTINGS_MODULE="dashboard.settings")
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    keys = {proc.communicate(timeout=60)[0].strip() for proc in procs}
    assert len(keys) == 1 and len(keys.pop()) >= 50
    assert (tmp_path / "secret").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret"]
