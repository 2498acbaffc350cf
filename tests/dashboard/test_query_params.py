"""Query parameters that used to answer 500: each page checks its parameters (dashboard.queryforms) and answers 400
naming the parameter; the simulated clusters' Kubernetes API reads integers as kube-apiserver does (400 with Go's
strconv text). The pending page's label filter works on PostgreSQL and on SQLite (the embedded mode)."""
from __future__ import annotations

import json

import pytest
from django.db import connection

from dashboard.models import SchedulerProfile, SchedulingCycle
from dashboard.profiles import services as profile_services
from dashboard.services import credentials
from dashboard.services.runner import Runner

from .conftest import load_cluster, run_on_sqlite, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)


def labelled_scenario() -> dict:
    alloc = {"cpu": "1", "memory": "1Gi", "pods": "110"}

    def pod(name, labels):
        return {"metadata": {"name": name, "namespace": "default", "labels": labels},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "8"}}}]}}
    return {"name": "labelled", "nodes": [{"metadata": {"name": "n1"}, "status": {"allocatable": alloc}}],
            "pods": [], "pending": [pod("web-a", {"app": "web", "tier": "front"}), pod("web-b", {"app": "web"}),
                                    pod("db-a", {"app": "db", "app.kubernetes.io/name": "pg"}), pod("bare", {})]}


def shown(page: str) -> set:
    return {name for name in ("web-a", "web-b", "db-a", "bare") if f"default/{name}<" in page}


def test_pending_label_filter(api, client):
    """`?labels=` selects by every key=value on this database (JSON containment on PostgreSQL, key extraction on
    SQLite, where it used to fail with NotSupportedError)."""
    load_cluster(api, labelled_scenario())
    for query, expected in [("app=web", {"web-a", "web-b"}), ("app=web,tier=front", {"web-a"}),
                            ("app.kubernetes.io/name=pg", {"db-a"}), ("app=nothing", set()),
                            (" app = db ", {"db-a"})]:
        r = client.get("/clusters/labelled/pending/", {"labels": query})
        assert r.status_code == 200, (query, r.status_code)
        assert shown(r.content.decode()) == expected, query
    r = client.get("/clusters/labelled/pending/", {"labels": "app"})
    assert r.status_code == 400 and "is not key=value" in r.content.decode()


def test_pending_label_filter_on_sqlite(tmp_path):
    if connection.vendor == "sqlite":
        pytest.skip("this is the SQLite run")
    run_on_sqlite(tmp_path, [f"{__file__}::test_pending_label_filter"])


@pytest.fixture
def small(api):
    return load_cluster(api, small_scenario(), steps=3)


@pytest.mark.parametrize("path, query, field", [
    ("events/", {"window": "999999999999"}, "window"),
    ("events/", {"until": "0001-01-01T00:00:00"}, "until"),
    ("events/", {"until": "0001-01-01T00:00:00+14:00", "window": "15"}, "until"),
    ("events/", {"window": "²"}, "window"),
    ("pending/", {"age": "99999999999999"}, "age"),
    ("pending/", {"attempts": "99999999999999"}, "attempts"),
    ("pending/", {"priority": "-99999999999999"}, "priority"),
    ("pending/", {"q": "a\x00b"}, "q"),
    ("pods/default/web-0/", {"cycle": "²"}, "cycle"),
    ("pods/default/web-0/", {"diff": "99999999999999999999"}, "diff"),
    ("pods/default/web-0/", {"fpage": "x"}, "fpage"),
    ("nodes/", {"page": "²"}, "page"),
    ("shadow/", {"page": "0"}, "page"),
])
def test_bad_page_parameters_answer_400_naming_them(small, client, path, query, field):
    r = client.get(f"/clusters/small/{path}", query)
    assert r.status_code == 400, (path, query)
    page = r.content.decode()
    assert "Bad request" in page and f"<b>{field}</b>:" in page


def test_good_page_parameters_still_work(small, client):
    seq = SchedulingCycle.objects.filter(cluster=small, pod_name="web-0").values_list("seq", flat=True).first()
    for path, query in [("events/", {"window": "15", "until": "2030-01-01T00:00"}), ("pending/", {"age": "60"}),
                        ("pods/default/web-0/", {"cycle": str(seq), "fpage": "99"}), ("nodes/", {"page": "7"}),
                        ("shadow/", {"page": "3"})]:
        assert client.get(f"/clusters/small/{path}", query).status_code == 200, (path, query)


def test_profile_version_against_must_be_a_version_number(admin_user, client):
    profile = SchedulerProfile.objects.create(name="p", document={
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    profile_services.ensure_versions(profile)
    assert client.get(f"/profiles/{profile.name}/v/1/?against=1").status_code == 200
    r = client.get(f"/profiles/{profile.name}/v/1/?against=abc")
    assert r.status_code == 400 and "<b>against</b>:" in r.content.decode()


def test_kubernetes_api_integer_parameters_are_read_as_kube_does(small, admin_user):
    from django.test import Client
    Runner(small.id, steps=0).run()
    _row, token = credentials.create_token(small, "t", admin_user)
    c = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    base = "/clusters/small/k8s/api/v1/pods"
    cases = [("limit=abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
             ("timeoutSeconds=abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
             ("watch=1&timeoutSeconds=1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax'),
             ("limit=%C2%B2", 'strconv.ParseInt: parsing "²": invalid syntax'),
             ("limit=9223372036854775808", 'strconv.ParseInt: parsing "9223372036854775808": value out of range')]
    for query, message in cases:
        r = c.get(f"{base}?{query}")
        assert r.status_code == 400, (query, r.content)
        assert json.loads(r.content) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                         "message": message, "reason": "BadRequest", "code": 400}
    r = c.get(f"{base}?limit=2&timeoutSeconds=-5")
    assert r.status_code == 200 and len(json.loads(r.content)["items"]) == 2
    assert c.delete(f"{base}?limit=x").status_code == 400
