"""Access control: anonymous users read and write nothing (every named URL, the websocket), viewers read but
do not write, editors write to simulated clusters and profiles, admins manage clusters; deploy checks."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from knox.models import AuthToken

from dashboard.models import Cluster, Node, Pod, SchedulerProfile
from dashboard.profiles.models import AuditLog, DryRun, ProfileVersion

from .conftest import ROOT, api_client, make_user, page_client, session_cookie, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)

# Open without signing in: the sign-in pages, the Prometheus scrape, the token-checked Kubernetes API.
EXEMPT = {"profiles:login", "admin:login", "metrics", "k8s-api", "k8s-api-token"}
SAMPLE = {"name": "acl", "cluster_name": "acl", "op": "start", "namespace": "default", "pod_name": "web-0",
          "node_name": "n-0", "key": "default/web-0", "format": "json", "app_label": "auth", "path": "api/v1/pods",
          "token": "ab", "kube_version": "1.36"}


def _names(patterns=None, prefix="", groups=()):
    """(qualified URL name, its keyword arguments) for every named URL of the URL conf."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        here = tuple(groups) + tuple(p.pattern.regex.groupindex)
        if isinstance(p, URLResolver):
            ns = f"{prefix}{p.namespace}:" if p.namespace else prefix
            yield from _names(p.url_patterns, ns, here)
        elif isinstance(p, URLPattern) and p.name:
            yield prefix + p.name, here


def _urls():
    seen = {}
    for name, kwargs in _names():
        url = reverse(name, kwargs={k: SAMPLE.get(k, "1") for k in kwargs})
        seen.setdefault(name, url)
    return seen


def _counts():
    from django.contrib.auth.models import Group, User
    return [m.objects.count() for m in (Cluster, Node, Pod, SchedulerProfile, ProfileVersion, AuditLog, DryRun,
                                        User, Group, AuthToken)]


@pytest.fixture
def acl(api):
    assert api.post("/api/clusters/", {"name": "acl", "tie_break": "name"}, format="json").status_code == 201
    assert api.post("/api/clusters/acl/scenario/", {"scenario": small_scenario(2)}, format="json").status_code == 201
    assert api.post("/api/profiles/", {"name": "acl-profile"}, format="json").status_code in (201, 400)
    return Cluster.objects.get(name="acl")


def test_anonymous_users_can_read_and_write_nothing(acl):
    urls = _urls()
    assert len(urls) > 40 and "control" in urls and "cluster-list" in urls and "profiles:edit" in urls
    before, anon = _counts(), page_client()
    checked = 0
    for name, url in sorted(urls.items()):
        if name in EXEMPT:
            continue
        for method in ("get", "post", "put", "patch", "delete"):
            resp = getattr(anon, method)(url, {} if method in ("get", "post") else "", follow=False)
            if url.startswith("/api/"):
                assert resp.status_code == 401, (name, method, url, resp.status_code)
            else:
                assert resp.status_code == 302, (name, method, url, resp.status_code)
                logins = ("/profiles/login/?next=", "/admin/login/?next=") if name.startswith("admin:") \
                    else ("/profiles/login/?next=",)  # some admin pages send to the admin's own sign-in
                assert resp["Location"].startswith(logins), (name, url, resp["Location"])
            checked += 1
    assert checked >= 5 * (len(urls) - len(EXEMPT))
    assert _counts() == before
    # a wrong API token is refused too
    bad = page_client()
    assert bad.get("/api/clusters/", HTTP_AUTHORIZATION="Token " + "0" * 40).status_code == 401
    assert bad.get("/clusters/acl/", HTTP_AUTHORIZATION="Token " + "0" * 40).status_code == 302
    # what stays open
    assert anon.get("/profiles/login/").status_code == 200
    # /metrics names every cluster: signed-in users or an API token, unless SCHEDSCOPE_METRICS_PUBLIC
    refused = anon.get("/metrics")
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Token"
    with override_settings(SCHEDSCOPE=dict(settings.SCHEDSCOPE, METRICS_PUBLIC=True)):
        assert anon.get("/metrics").status_code == 200


# Real objects of the acl fixture for the schema's path parameters; ``{name}`` by the collection it names.
SCHEMA_PATH_VALUES = {"cluster_name": "acl", "namespace": "default", "seq": "1", "id": "1", "username": "admin",
                      "profile_name": "acl-profile", "number": "1"}
SCHEMA_NAMES = {"clusters": "acl", "nodes": "n-0", "pods": "web-0", "profiles": "acl-profile"}


def _schema_path(template: str) -> str:
    parts, filled = template.strip("/").split("/"), []
    for i, part in enumerate(parts):
        if part == "{name}":
            part = SCHEMA_NAMES[parts[i - 2] if parts[i - 1] == "{namespace}" else parts[i - 1]]
        elif part.startswith("{"):
            part = SCHEMA_PATH_VALUES[part[1:-1]]
        filled.append(part)
    return "/" + "/".join(filled) + "/"


def test_anonymous_users_get_a_documented_refusal_from_every_api_operation(acl):
    """Operation by operation from the OpenAPI schema, on real objects: 401 with the Token challenge (documented),
    and nothing written."""
    from drf_spectacular.generators import SchemaGenerator
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    before, anon = _counts(), api_client()
    operations = [(method, template, op) for template, item in paths.items() for method, op in item.items()]
    assert len(operations) > 30 and {m for m, _t, _o in operations} == {"get", "post", "put", "patch", "delete"}
    for method, template, op in operations:
        resp = getattr(anon, method)(_schema_path(template), {}, format="json")
        assert resp.status_code == 401 and "401" in op["responses"], (method, template, resp.status_code)
        assert resp["WWW-Authenticate"] == "Token", (method, template)
        assert resp.json() == {"detail": "Authentication credentials were not provided."}, (method, template)
    assert _counts() == before


@pytest.mark.asyncio
async def test_websocket_needs_a_signed_in_session():
    from dashboard.asgi import application
    await database_sync_to_async(Cluster.objects.create)(name="wsacl")
    origin, host = (b"origin", b"http://localhost"), (b"host", b"localhost")
    for headers in ([origin, host], [origin, host, (b"cookie", b"sessionid=not-a-session")]):
        comm = WebsocketCommunicator(application, "/ws/clusters/wsacl/", headers=headers)
        connected, code = await comm.connect()
        assert not connected and code == 4401
        await comm.disconnect()
    cookie = await database_sync_to_async(lambda: session_cookie(make_user("wsviewer", "viewer")))()
    comm = WebsocketCommunicator(application, "/ws/clusters/wsacl/", headers=[origin, host, (b"cookie", cookie)])
    connected, _ = await comm.connect()
    assert connected
    assert (await comm.receive_json_from(timeout=5))["kind"] == "hello"
    await comm.disconnect()


NODE = {"metadata": {"name": "extra", "labels": {"topology.kubernetes.io/zone": "a"}},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
POD = {"metadata": {"name": "extra", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "100m"}}}]}}


def _writes(api, pages):
    """Status codes of every kind of write a non-admin might try."""
    return {
        "scenario": api.post("/api/clusters/acl/scenario/", {"scenario": small_scenario(1)}, format="json"),
        "add node": api.post("/api/clusters/acl/nodes/", {"manifest": NODE}, format="json"),
        "add pod": api.post("/api/clusters/acl/pods/", {"manifest": POD}, format="json"),
        "step": api.post("/api/clusters/acl/step/", {"n": 1}, format="json"),
        "start": api.post("/api/clusters/acl/start/"),
        "stop": api.post("/api/clusters/acl/stop/"),
        "delete pod": api.delete("/api/clusters/acl/pods/default/web-0/"),
        "profile": api.post("/api/profiles/", {"name": "by-api"}, format="json"),
        "page step": pages.post("/clusters/acl/control/step/"),
        "page profile": pages.post("/profiles/", {"name": "by-page"}),
    }


def test_viewer_reads_but_does_not_write(acl, viewer_user):
    api, pages = api_client(viewer_user), page_client(viewer_user)
    for url in ("/api/", "/api/clusters/", "/api/clusters/acl/", "/api/clusters/acl/nodes/", "/api/clusters/acl/pods/",
                "/api/clusters/acl/cycles/", "/api/clusters/acl/events/", "/api/profiles/", "/api/schema/"):
        assert api.get(url).status_code == 200, url
    assert pages.get("/")["Location"] == "/clusters/acl/"  # the only cluster
    for url in ("/clusters/acl/", "/clusters/acl/pending/", "/clusters/acl/nodes/", "/clusters/acl/nodes/n-0/",
                "/clusters/acl/events/", "/clusters/acl/pods/default/web-0/", "/profiles/"):
        assert pages.get(url).status_code == 200, url
    assert "Step</button>" not in pages.get("/clusters/acl/").content.decode()  # no controls for viewers
    # a token binds pods: only editors make one
    assert pages.post("/clusters/acl/k8s/kubeconfig", {"name": "v"}).status_code == 403
    assert pages.post("/clusters/acl/k8s/connect/", {"name": "v"}).status_code == 403
    before = _counts()
    codes = {k: r.status_code for k, r in _writes(api, pages).items()}
    assert codes == dict.fromkeys(codes, 403), codes
    assert api.post("/api/clusters/", {"name": "nope"}, format="json").status_code == 403
    assert api.delete("/api/clusters/acl/").status_code == 403
    assert _counts() == before


def test_editor_writes_simulated_clusters_and_profiles_but_not_clusters(acl, editor_user):
    api, pages = api_client(editor_user), page_client(editor_user)
    codes = {k: r.status_code for k, r in _writes(api, pages).items()}
    assert codes == {"scenario": 201, "add node": 201, "add pod": 201, "step": 202, "start": 200, "stop": 200,
                     "delete pod": 204, "profile": 201, "page step": 302, "page profile": 302}, codes
    assert "Step</button>" in pages.get("/clusters/acl/").content.decode()
    made = pages.post("/clusters/acl/k8s/kubeconfig", {"name": "editor"})
    assert made.status_code == 200 and made["Content-Disposition"] == 'attachment; filename="acl.kubeconfig"'
    # admin only: creating, changing and deleting clusters (their kubeconfigs), users
    assert api.post("/api/clusters/", {"name": "nope"}, format="json").status_code == 403
    assert api.patch("/api/clusters/acl/", {"tie_break": "random"}, format="json").status_code == 403
    assert api.delete("/api/clusters/acl/").status_code == 403
    assert pages.get("/admin/").status_code == 302
    assert Cluster.objects.filter(name="acl").exists() and not Cluster.objects.filter(name="nope").exists()


def test_a_cluster_that_is_not_there_is_a_404_for_every_role(acl, viewer_user, editor_user, admin_user):
    for user in (viewer_user, editor_user, admin_user):
        assert page_client(user).get("/clusters/no-such/events/").status_code == 404, user
        assert api_client(user).get("/api/clusters/no-such/pods/").status_code == 404, user


def test_api_token_and_session_csrf(acl, editor_user, admin_user):
    _row, token = AuthToken.objects.create(user=editor_user)
    anon = api_client()
    resp = anon.post("/api/clusters/acl/nodes/", {"manifest": NODE}, format="json",
                     HTTP_AUTHORIZATION=f"Token {token}")
    assert resp.status_code == 201
    # Prometheus' "authorization" sends the same header to /metrics
    metrics = page_client().get("/metrics", HTTP_AUTHORIZATION=f"Token {token}")
    assert metrics.status_code == 200 and 'cluster="acl"' in metrics.content.decode()
    # a session needs the CSRF token for writes (forms and the API alike); the redirect target stays on-site
    from django.test import Client
    strict = Client(enforce_csrf_checks=True, HTTP_HOST="localhost")
    strict.force_login(admin_user)
    assert strict.post("/clusters/acl/control/step/").status_code == 403
    assert strict.post("/api/clusters/acl/step/", {"n": 1}, content_type="application/json").status_code == 403
    page = page_client(admin_user)
    assert page.post("/clusters/acl/control/step/", {"next": "https://evil.example/"})["Location"] == "/clusters/acl/"
    assert api_client(admin_user).delete("/api/clusters/acl/").status_code == 204


def test_no_view_is_csrf_exempt_but_the_kubernetes_api():
    from rest_framework.views import APIView
    exempt = set()
    for name, kwargs in _names():
        match = get_resolver().resolve(reverse(name, kwargs={k: SAMPLE.get(k, "1") for k in kwargs}))
        cls = getattr(match.func, "cls", None)
        if getattr(match.func, "csrf_exempt", False) and not (isinstance(cls, type) and issubclass(cls, APIView)):
            exempt.add(name)
    # DRF's views are exempt from Django's check only because SessionAuthentication enforces CSRF itself
    assert exempt == {"k8s-api", "k8s-api-token"}


def test_check_deploy_is_clean_with_production_settings():
    from cryptography.fernet import Fernet
    env = dict(os.environ, DEBUG="0", HTTPS="1", SECRET_KEY=secrets.token_urlsafe(50),
               ALLOWED_HOSTS="schedscope.example.com", DJANGO_SETTINGS_MODULE="dashboard.settings",
               SCHEDSCOPE_ENCRYPTION_KEYS=Fernet.generate_key().decode())
    out = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                         env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout
    # without the encryption keys for stored kubeconfigs: a warning
    del env["SCHEDSCOPE_ENCRYPTION_KEYS"]
    out = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                         env=env, capture_output=True, text=True)
    assert out.returncode == 1 and "schedscope.W001" in out.stderr
