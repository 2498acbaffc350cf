"""Restricted means invisible everywhere: /metrics, scenario-made profiles, the Kubernetes API's answers for
cluster names."""
from __future__ import annotations

import secrets
import statistics
import time

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.test import override_settings
from knox.models import AuthToken

from dashboard.models import Cluster, ClusterMembership
from dashboard.services import credentials, metrics

from .conftest import make_user, page_client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def two_clusters(db):
    Cluster.objects.create(name="open-one")
    Cluster.objects.create(name="secret-one", restricted=True)
    for name in ("open-one", "secret-one"):
        metrics.observe_cycle(name, "default-scheduler", "scheduled", {"total": 0.01, "Filter": 0.001}, ())


def _clusters_in(text: str) -> set[str]:
    return {name for name in ("open-one", "secret-one") if f'cluster="{name}"' in text}


def test_metrics_show_the_clusters_the_user_sees(two_clusters, admin_user):
    viewer, member = make_user("vi", "viewer"), make_user("member", "viewer")
    ClusterMembership.objects.create(cluster=Cluster.objects.get(name="secret-one"), user=member, role="viewer")
    assert _clusters_in(page_client(viewer).get("/metrics").content.decode()) == {"open-one"}
    assert _clusters_in(page_client(member).get("/metrics").content.decode()) == {"open-one", "secret-one"}
    assert _clusters_in(page_client(admin_user).get("/metrics").content.decode()) == {"open-one", "secret-one"}
    # a scrape token sees what its owner sees
    for owner, expected in ((viewer, {"open-one"}), (member, {"open-one", "secret-one"})):
        token = AuthToken.objects.create(user=owner)[1]
        resp = page_client().get("/metrics", HTTP_AUTHORIZATION=f"Token {token}")
        assert resp.status_code == 200 and _clusters_in(resp.content.decode()) == expected
    text = page_client(viewer).get("/metrics").content.decode()
    assert 'scheduler_pending_pods{cluster="open-one",queue="active"} 0.0' in text
    assert "# TYPE scheduler_schedule_attempts_total counter" in text
    # anonymous scrapers, where allowed, see the unrestricted clusters
    with override_settings(SCHEDSCOPE=dict(settings.SCHEDSCOPE, METRICS_PUBLIC=True)):
        assert _clusters_in(page_client().get("/metrics").content.decode()) == {"open-one"}


def _k8s_401(client, cluster: str, token: str):
    started = time.perf_counter()
    resp = client.get(f"/clusters/{cluster}/k8s/api/v1/pods", HTTP_AUTHORIZATION=f"Bearer {token}")
    return time.perf_counter() - started, resp


def test_the_kubernetes_api_answers_unknown_cluster_names_as_fast_as_known_ones(admin_user):
    cluster = Cluster.objects.create(name="timed", tie_break="name")
    credentials.create_token(cluster, "real", admin_user)
    client = page_client()
    # the same answer, after the same queries
    for name in ("timed", "missing"):
        _k8s_401(client, name, secrets.token_hex(24))   # the name lookup is cached a second: both warm
    answers = {}
    for name in ("timed", "missing"):
        with CaptureQueriesContext(connection) as queries:
            _seconds, resp = _k8s_401(client, name, secrets.token_hex(24))
        answers[name] = (resp.status_code, resp.content, len(queries))
    assert answers["timed"] == answers["missing"] and answers["timed"][0] == 401 and answers["timed"][2] >= 1
    # and as long: medians of interleaved requests with right-sized wrong tokens
    times = {"timed": [], "missing": []}
    for _ in range(200):
        for name in ("timed", "missing"):
            times[name].append(_k8s_401(client, name, secrets.token_hex(24))[0])
    known, unknown = statistics.median(times["timed"]), statistics.median(times["missing"])
    print(f"401 of a known cluster: median {known * 1000:.2f} ms, of an unknown one {unknown * 1000:.2f} ms")
    assert 0.8 < unknown / known < 1.25


@pytest.mark.asyncio
async def test_websockets_open_only_from_the_sites_own_origin(settings):
    from channels.testing import WebsocketCommunicator

    from dashboard.asgi import application
    settings.ALLOWED_HOSTS = ["localhost", "schedscope.example"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://dash.example:8443", "https://*.corp.example"]

    async def opens(origin: str, host: str = "localhost:8000", path: str = "/ws/clusters/none/") -> bool:
        headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin else [])
        comm = WebsocketCommunicator(application, path, headers=headers)
        connected, code = await comm.connect()
        await comm.disconnect()
        assert not connected
        return code == 4401   # past the origin check: the consumer's own refusal (no session)
    assert await opens("http://localhost:8000")
    for refused in ("http://localhost:8001", "http://localhost", "https://localhost:8000", "http://evil.example:8000",
                    "null", ""):
        assert not await opens(refused), refused
    assert not await opens("http://evil.example:8000", host="evil.example:8000")   # a host not allowed
    assert await opens("https://dash.example:8443") and not await opens("https://dash.example:8444")
    assert await opens("https://team.corp.example") and not await opens("http://team.corp.example")
