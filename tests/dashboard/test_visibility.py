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


FIT = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
       "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
           "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}}}]}]}


def test_a_scenario_made_profile_is_named_neutrally_and_hidden_with_its_cluster(admin_user):
    from dashboard.models import SchedulerProfile
    from .conftest import api_client
    admin = api_client(admin_user)
    assert admin.post("/api/clusters/", {"name": "vault-team", "restricted": True}, format="json").status_code == 201
    scenario = {"name": "merger-plan", "config": FIT, "nodes": [], "pods": [], "pending": []}
    assert admin.post("/api/clusters/vault-team/scenario/", {"scenario": scenario}, format="json").status_code == 201
    made = Cluster.objects.get(name="vault-team").profile
    assert made is not None and made.name.startswith("scenario-")
    assert "vault" not in made.name and "merger" not in made.name
    # loaded again: the same profile, a new version
    assert admin.post("/api/clusters/vault-team/scenario/", {"scenario": scenario}, format="json").status_code == 201
    assert Cluster.objects.get(name="vault-team").profile == made and SchedulerProfile.objects.count() == 1
    SchedulerProfile.objects.create(name="unused", document={})
    outsider, member = make_user("outsider", "editor"), make_user("member", "viewer")
    ClusterMembership.objects.create(cluster=Cluster.objects.get(name="vault-team"), user=member, role="viewer")
    for user, sees in ((outsider, False), (member, True), (admin_user, True)):
        pages, api = page_client(user), api_client(user)
        listed = pages.get("/profiles/").content.decode()
        assert (made.name in listed) == sees and "unused" in listed, user
        assert ({p["name"] for p in api.get("/api/profiles/").json()["results"]} == {"unused", made.name}
                if sees else {"unused"}), user
        for url in (f"/profiles/{made.name}/", f"/profiles/{made.pk}/", f"/api/profiles/{made.name}/",
                    f"/api/profiles/{made.name}/versions/"):
            assert (api.get(url) if url.startswith("/api/") else pages.get(url)).status_code in (
                (200, 301) if sees else (404,)), (user, url)
    # writing it as an outsider: no such profile, not "needs the editor role on every cluster that uses it"
    pages, api = page_client(outsider), api_client(outsider)
    for resp in (pages.post(f"/profiles/{made.name}/", {"source": "yaml", "yaml": "{}"}),
                 pages.post(f"/profiles/{made.name}/v/1/dry-run/", {"cluster": "vault-team"}),
                 api.post(f"/api/profiles/{made.name}/versions/", {"document": {}}, format="json"),
                 api.delete(f"/api/profiles/{made.name}/")):
        assert resp.status_code == 404 and "every cluster" not in resp.content.decode()
    # nor can an outsider name it for a cluster or a question
    assert admin.post("/api/clusters/", {"name": "open-team"}, format="json").status_code == 201
    ClusterMembership.objects.create(cluster=Cluster.objects.get(name="open-team"), user=outsider, role="editor")
    refused = api.patch("/api/clusters/open-team/", {"profile": made.name}, format="json")
    assert refused.status_code in (400, 403) and Cluster.objects.get(name="open-team").profile is None
    asked = api.post("/api/clusters/open-team/whatif/", {"kind": "drain", "nodes": [], "version": made.name},
                     format="json")
    assert asked.status_code == 400 and "no saved profile version" in asked.content.decode()
    page = pages.get("/clusters/open-team/whatif/").content.decode()
    assert made.name not in page
