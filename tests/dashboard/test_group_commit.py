"""Concurrent writes committed in groups (dashboard.services.groupcommit): the REST API's and pages' pod creates
share a transaction per group; a clash or the size limit fails only the create concerned. And the REST API's
token check in one query: a deleted or expired token is refused."""
from __future__ import annotations

import datetime
import json
import threading
import time

import pytest
from django.db import connection
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from dashboard.models import Cluster, Pod, StoreChange
from dashboard.profiles.models import AuditLog
from dashboard.services import clusters as svc
from dashboard.services import admitted, objectstore
from dashboard.services.groupcommit import GroupCommit, Item

from .conftest import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def pod_manifest(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team"},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def test_writes_queued_during_a_commit_are_committed_together_next():
    release, groups = threading.Event(), []

    def commit(batch):
        groups.append([item.payload for item in batch])
        if len(groups) == 1:
            release.wait(10)
        for item in batch:
            if item.payload == "bad":
                item.error = ValueError("bad payload")
            else:
                item.result = item.payload.upper()

    group = GroupCommit(commit)
    answers = {}

    def submit(payload):
        try:
            answers[payload] = group.submit(payload)
        except ValueError as err:
            answers[payload] = str(err)

    first = threading.Thread(target=submit, args=("a",))
    first.start()
    while not groups:
        time.sleep(0.01)
    others = [threading.Thread(target=submit, args=(p,)) for p in ("b", "c", "bad", "d")]
    for t in others:
        t.start()
    while len(group.queue) < 4:
        time.sleep(0.01)
    release.set()
    for t in [first] + others:
        t.join(10)
    assert groups[0] == ["a"] and sorted(groups[1]) == ["b", "bad", "c", "d"] and len(groups) == 2
    assert answers == {"a": "A", "b": "B", "c": "C", "d": "D", "bad": "bad payload"}
    assert not group.leading and not group.queue


def _items(cluster, names, user=None):
    return [Item(([objectstore.pod_row(cluster, admitted.parsed("Pod", pod_manifest(name)))],
                  [svc.audit_row(user, "pod.create", cluster, pod=name)])) for name in names]


def test_a_clash_in_a_group_fails_only_its_create():
    cluster = Cluster.objects.create(name="grouped")
    svc.add_pod(cluster, pod_manifest("taken"))
    batch = _items(cluster, ["p1", "taken", "p2"])
    objectstore._commit_pod_creates(cluster.pk, "", batch)
    assert [item.error is None for item in batch] == [True, False, True]
    assert "already exists" in str(batch[1].error.errors)
    assert set(Pod.objects.filter(cluster=cluster).values_list("name", flat=True)) == {"taken", "p1", "p2"}
    changes = list(StoreChange.objects.filter(cluster=cluster).order_by("rv").values_list("rv", "key"))
    assert [key for _rv, key in changes] == ["team/taken", "team/p1", "team/p2"]
    assert len({rv for rv, _key in changes}) == 3
    assert AuditLog.objects.filter(cluster=cluster, action="pod.create").count() == 3


def test_the_size_limit_is_counted_under_the_lock_once_per_group(settings):
    settings.SCHEDSCOPE = dict(settings.SCHEDSCOPE, MAX_PODS=3)
    cluster = Cluster.objects.create(name="bounded")
    svc.add_pod(cluster, pod_manifest("first"))
    batch = _items(cluster, ["p1", "p2", "p3", "p4"])
    objectstore._commit_pod_creates(cluster.pk, "", batch)
    assert [item.error is None for item in batch] == [True, True, False, False]
    assert batch[2].error.errors == {"pods": ["a simulated cluster holds at most 3 pods; this would make 4"]}
    assert Pod.objects.filter(cluster=cluster).count() == 3
    assert AuditLog.objects.filter(cluster=cluster, action="pod.create").count() == 3


def test_concurrent_rest_creates_are_all_stored_with_their_own_answers():
    cluster = Cluster.objects.create(name="burst")
    user = make_user("burster", "editor")
    key = AuthToken.objects.create(user=user)[1]
    answers, threads = [], []

    def client(n):
        c = APIClient()
        c.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        for i in range(8):
            name = "dup" if n == 0 and i == 0 else f"c{n}-{i}"
            resp = c.post("/api/clusters/burst/pods/", json.dumps(pod_manifest(name)),
                          content_type="application/json")
            answers.append((name, resp.status_code, resp.json()))
        connection.close()

    svc.add_pod(cluster, pod_manifest("dup"))
    started = timezone.now()
    for n in range(8):
        threads.append(threading.Thread(target=client, args=(n,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(answers) == 64
    for name, status, body in answers:
        if name == "dup":
            assert status == 400 and "already exists" in json.dumps(body)
        else:
            assert status == 201 and body["name"] == name, (name, body)
    rows = {name: rv for name, rv in Pod.objects.filter(cluster=cluster).values_list("name", "rv")}
    assert len(rows) == 64 and len(set(rows.values())) == 64
    logged = dict(StoreChange.objects.filter(cluster=cluster).values_list("key", "rv"))
    assert all(logged[f"team/{name}"] == rv for name, rv in rows.items())
    audits = AuditLog.objects.filter(cluster=cluster, action="pod.create", user=user)
    assert audits.count() == 63
    uids = dict(Pod.objects.filter(cluster=cluster).values_list("name", "uid"))
    assert sorted(a.detail["pod"] for a in audits) == sorted(f"team/{n}" for n in uids if n != "dup")
    assert all(a.detail["uid"] == uids[a.detail["pod"].split("/")[1]] for a in audits)
    assert all(started <= a.time <= timezone.now() for a in audits)


def test_a_deleted_or_expired_rest_token_is_refused():
    Cluster.objects.create(name="tokens")
    user = make_user("holder", "viewer")
    row, key = AuthToken.objects.create(user=user)
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert c.get("/api/clusters/").status_code == 200
    row.delete()
    assert c.get("/api/clusters/").status_code == 401
    row, key = AuthToken.objects.create(user=user, expiry=datetime.timedelta(hours=1))
    c.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert c.get("/api/clusters/").status_code == 200
    AuthToken.objects.filter(pk=row.pk).update(expiry=timezone.now() - datetime.timedelta(seconds=1))
    assert c.get("/api/clusters/").status_code == 401
    assert not AuthToken.objects.filter(pk=row.pk).exists()
    assert c.get("/api/clusters/", HTTP_AUTHORIZATION="Token zz-not-hex").status_code == 401
