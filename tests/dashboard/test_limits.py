"""Hostile input: oversized bodies refused with 413 before they are read, cluster size limits as 400s with
field paths."""
from __future__ import annotations

import asyncio
import copy
import json

import pytest
from django.conf import settings

from dashboard.bodylimit import BodySizeLimit
from dashboard.models import Cluster, Node

from .conftest import small_scenario


def _run(app, headers, chunks):
    """Drive an ASGI http app; returns (status, body, number of body chunks it read)."""
    sent, read = [], [0]
    queue = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]

    async def receive():
        if read[0] < len(queue):
            read[0] += 1
            return queue[read[0] - 1]
        await asyncio.sleep(3600)

    async def send(msg):
        sent.append(msg)

    scope = {"type": "http", "method": "POST", "path": "/api/clusters/x/scenario/", "headers": headers,
             "query_string": b"", "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 80),
             "client": ("127.0.0.1", 1234), "root_path": ""}
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], body, read[0]


def test_200_mb_scenario_is_refused_before_it_is_read():
    from dashboard.asgi import application
    size = 200 * 1024 * 1024
    status, body, read = _run(application, [(b"content-length", str(size).encode()),
                                            (b"content-type", b"application/json"), (b"host", b"localhost")],
                              [b"{"])
    assert status == 413 and read == 0
    assert b"larger than" in body
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == settings.SCHEDSCOPE["MAX_BODY_BYTES"] < size


def test_chunked_body_is_cut_off_at_the_limit():
    reached = []

    async def app(scope, receive, send):
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect" or not msg.get("more_body"):
                break
        reached.append(msg["type"])

    status, _body, read = _run(BodySizeLimit(app, 1000), [], [b"x" * 400] * 10)
    assert status == 413 and read == 3 and reached == ["http.disconnect"]
    status, _body, _read = _run(BodySizeLimit(app, 1000), [(b"content-length", b"nope")], [b""])
    assert status == 400


@pytest.mark.django_db(transaction=True)
def test_cluster_size_limits_are_400s_with_field_paths(settings, api):
    settings.SCHEDSCOPE = dict(settings.SCHEDSCOPE, MAX_NODES=5, MAX_PODS=10)
    Cluster.objects.create(name="limits")
    resp = api.post("/api/clusters/limits/scenario/", {"scenario": small_scenario(12)}, format="json")
    assert resp.status_code == 400
    errors = resp.json()
    assert "at most 5 nodes" in errors["nodes"][0] and "at most 10 pods" in errors["pods"][0]
    scen = small_scenario(2)
    scen["nodes"] = scen["nodes"][:5]
    assert api.post("/api/clusters/limits/scenario/", {"scenario": scen}, format="json").status_code == 201
    node = copy.deepcopy(scen["nodes"][0])
    node["metadata"]["name"] = "one-too-many"
    resp = api.post("/api/clusters/limits/nodes/", {"manifest": node}, format="json")
    assert resp.status_code == 400 and "nodes" in resp.json(), resp.content
    assert Node.objects.filter(cluster__name="limits").count() == 5
    resp = api.post("/api/clusters/limits/nodes/", data=json.dumps({"manifest": {"metadata": {"name": 7}}}),
                    content_type="application/json")
    assert resp.status_code == 400
