"""The two ASGI handlers inside the real ASGI application: the Kubernetes API's (dashboard.k8sapi.handler) answers
without the pages' middleware and stops a watch whose client disconnects; the pages' and REST API's
(dashboard.pages_handler) runs the whole middleware chain, synchronously, around their views."""
from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.testing import ApplicationCommunicator

from dashboard.asgi import application
from dashboard.k8sapi import registry
from knox.models import AuthToken

from dashboard.models import Cluster
from dashboard.services import credentials

from .conftest import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def scope(path: str, token: str = "", query: str = "", scheme: str = "Bearer") -> dict:
    headers = [(b"host", b"testserver")] + ([(b"authorization", f"{scheme} {token}".encode())] if token else [])
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
            "headers": headers, "client": ("127.0.0.1", 5000), "server": ("testserver", 80)}


async def answer(app_scope: dict) -> tuple[int, dict, bytes]:
    comm = ApplicationCommunicator(application, app_scope)
    await comm.send_input({"type": "http.request", "body": b""})
    start = await comm.receive_output(10)
    body = b""
    while True:
        msg = await comm.receive_output(10)
        body += msg.get("body", b"")
        if not msg.get("more_body"):
            break
    await comm.wait(5)
    return start["status"], {k.decode().lower(): v.decode() for k, v in start["headers"]}, body


@pytest.fixture
def token():
    registry.forget()
    cluster = Cluster.objects.create(name="handled", kind=Cluster.SIMULATED)
    _row, secret = credentials.create_token(cluster, "kubectl", make_user("maker", "editor"))
    yield secret
    registry.forget()


def test_the_api_answers_without_the_pages_middleware(token):
    status, headers, body = asyncio.run(answer(scope("/clusters/handled/k8s/api/v1/namespaces", token)))
    assert status == 200 and json.loads(body)["kind"] == "NamespaceList"
    assert "content-security-policy" not in headers and "x-frame-options" not in headers   # no page middleware
    status, headers, _ = asyncio.run(answer(scope("/clusters/handled/k8s/api/v1/namespaces")))
    assert status == 401 and headers["content-type"] == "application/json"
    # the Connect page below the same prefix keeps the pages' stack: it asks for a login
    status, headers, _ = asyncio.run(answer(scope("/clusters/handled/k8s/connect/")))
    assert status == 302 and "/login" in headers["location"]
    assert "content-security-policy" in headers


def test_a_watch_stops_when_its_client_disconnects(token):
    async def watch_then_leave():
        comm = ApplicationCommunicator(application, scope("/clusters/handled/k8s/api/v1/namespaces", token,
                                                          "watch=1&resourceVersion=0"))
        await comm.send_input({"type": "http.request", "body": b""})
        assert (await comm.receive_output(10))["status"] == 200
        first = b""
        while not first:                        # the namespaces there are, as ADDED events
            first = (await comm.receive_output(10))["body"]
        assert b'"ADDED"' in first
        api, _pk = await registry.lookup("handled")
        assert len(api.watchers) == 1
        await comm.send_input({"type": "http.disconnect"})
        await comm.wait(5)                       # the application returns
        return api
    api = asyncio.run(watch_then_leave())
    assert not api.watchers


def test_pages_and_the_rest_api_run_the_whole_middleware_chain(token):
    user = make_user("reader", "viewer")
    key = AuthToken.objects.create(user=user)[1]
    status, headers, body = asyncio.run(answer(scope("/api/clusters/", key, scheme="Token")))
    assert status == 200 and "handled" in body.decode()
    assert headers["x-content-type-options"] == "nosniff" and "content-security-policy" in headers
    status, headers, _ = asyncio.run(answer(scope("/api/clusters/")))      # no token: DRF's 403, not a login page
    assert status in (401, 403)
    status, headers, _ = asyncio.run(answer(scope("/clusters/handled/")))  # a page: the login redirect
    assert status == 302 and "/login" in headers["location"] and headers["x-frame-options"] == "DENY"
