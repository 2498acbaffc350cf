"""The store of simulated clusters, in one process: quotas answered as kube-apiserver answers them,
the migration of existing clusters into the store, the scheduler loop following what the Kubernetes API
stores, and writers numbering their changes in the order they took the cluster's lock."""
from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from django.conf import settings
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor
from django.test import AsyncClient, override_settings

from dashboard.models import Cluster, Pod, SchedulingCycle, StoreChange, StoredObject
from dashboard.services import admitted, control, objectstore
from dashboard.services.runner import Runner
from tests.k8s_api_server import pod

from .conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def k8s(cluster, token, method: str, path: str, body=None, headers=None):
    """(status, JSON) of a request to the cluster's Kubernetes API (the real view); ``headers``: more of them."""
    client = AsyncClient()
    call = getattr(client, method.lower())
    kw = {"headers": {"Authorization": f"Bearer {token}", **(headers or {})}}
    if body is not None:
        kw.update(data=json.dumps(body), content_type="application/json")
    resp = asyncio.run(call(f"/clusters/{cluster.name}/k8s{path}", **kw))
    return resp.status_code, json.loads(resp.content or b"{}")


def test_an_exceeded_quota_is_a_403_naming_it(small):
    cluster, token = small
    held = Pod.objects.filter(cluster=cluster).count()
    with override_settings(SCHEDSCOPE={**settings.SCHEDSCOPE, "MAX_PODS": held + 1}):
        assert k8s(cluster, token, "POST", "/api/v1/namespaces/default/pods", pod("one-more"))[0] == 201
        status, body = k8s(cluster, token, "POST", "/api/v1/namespaces/default/pods", pod("too-many"))
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == (f'pods "too-many" is forbidden: exceeded quota: schedscope-cluster-quota, requested: '
                               f'pods=1, used: pods={held + 1}, limited: pods={held + 1}')
    assert not Pod.objects.filter(cluster=cluster, name="too-many").exists()


def test_the_bytes_quota(small):
    cluster, token = small
    with override_settings(SCHEDSCOPE={**settings.SCHEDSCOPE, "MAX_STORE_BYTES": 1}):
        status, body = k8s(cluster, token, "POST", "/api/v1/namespaces/default/pods", pod("any"))
    assert status == 403 and "exceeded quota: schedscope-cluster-quota, requested: storage=" in body["message"]


def test_the_loop_schedules_what_the_kubernetes_api_stores_and_the_api_sees_its_bindings(small):
    cluster, token = small
    assert Runner(cluster.id, steps=20).run()
    status, _ = k8s(cluster, token, "POST", "/api/v1/namespaces/default/pods", pod("from-kubectl", cpu="100m"))
    assert status == 201
    row = Pod.objects.get(cluster=cluster, name="from-kubectl")
    assert row.node_name == "" and row.rv == StoreChange.objects.filter(cluster=cluster).latest("rv").rv
    assert Runner(cluster.id, steps=4).run()   # a new loop lists the store (four pending pods)
    assert SchedulingCycle.objects.filter(cluster=cluster, pod_name="from-kubectl").exists()
    # a running loop follows the store: a pod written through the API meanwhile is scheduled by it, no restart
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.RUNNING)
    loop = threading.Thread(target=Runner(cluster.id).run, daemon=True)
    loop.start()
    try:
        wait_for(lambda: control.is_driven(cluster.id), 10, what="the loop to start")
        status, _ = k8s(cluster, token, "POST", "/api/v1/namespaces/default/pods", pod("while-running", cpu="100m"))
        assert status == 201
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="while-running").exclude(node_name="").exists(), 30,
                 what="the running loop to bind the API's pod")
    finally:
        Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.STOPPED)
        control.send(cluster.id, "state")
        loop.join(10)
    _s, served = k8s(cluster, token, "GET", "/api/v1/namespaces/default/pods/from-kubectl")
    assert served["spec"]["nodeName"] and served["status"]["phase"] == "Running"
    assert served["status"]["podIP"] and served["status"]["hostIP"]
    assert int(served["metadata"]["resourceVersion"]) == Pod.objects.get(pk=row.pk).rv
    _s, events = k8s(cluster, token, "GET",
                     "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dfrom-kubectl")
    assert [e["reason"] for e in events["items"]] == ["Scheduled"]
    # a pod that cannot fit: the scheduler's PodScheduled=False reaches the API
    _s, too_big = k8s(cluster, token, "GET", "/api/v1/namespaces/default/pods/too-big")
    cond = {c["type"]: c for c in too_big["status"].get("conditions") or ()}
    assert cond["PodScheduled"]["status"] == "False" and cond["PodScheduled"]["reason"] == "Unschedulable"


def test_existing_clusters_move_into_the_store():
    executor = MigrationExecutor(connection)
    before = [("dashboard", "0008_whatif")]
    after = executor.loader.graph.leaf_nodes("dashboard")
    executor.migrate(before)
    old = MigrationExecutor(connection).loader.project_state(before).apps
    cluster = old.get_model("dashboard", "Cluster").objects.create(name="old-one")
    old.get_model("dashboard", "Node").objects.create(cluster=cluster, name="n1", raw={"metadata": {"name": "n1"}})
    old.get_model("dashboard", "ClusterState").objects.create(cluster=cluster, resources={
        "services": [{"metadata": {"name": "svc", "namespace": "web"}}],
        "persistentvolumes": [{"metadata": {"name": "pv-1"}}]})
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(after)
    moved = {(o.kind, o.key): o.rv for o in StoredObject.objects.filter(cluster_id=cluster.pk)}
    assert set(moved) == {("Service", "web/svc"), ("PersistentVolume", "pv-1")}
    assert objectstore.current_rv(cluster.pk) == 3 and sorted(moved.values()) == [2, 3]   # through 0010's counter
    assert objectstore.scenario_objects(cluster.pk) == {"services": [{"metadata": {"name": "svc", "namespace": "web"}}],
                                                        "persistentvolumes": [{"metadata": {"name": "pv-1"}}]}


def test_a_write_whose_change_log_cannot_be_stored_fails_and_stores_nothing(small):
    cluster, _token = small
    rv = objectstore.current_rv(cluster.pk)
    StoreChange.objects.create(cluster=cluster, rv=rv + 1, kind="pods", type="ADDED", key="x/y", raw={})
    row = objectstore.pod_row(cluster, admitted.parsed("Pod", pod("collides")))
    with pytest.raises(IntegrityError):
        with objectstore.writing(cluster.pk) as w:
            objectstore.put_pod(w, row)   # takes rv + 1, which the log already holds
            row.save()
    assert not Pod.objects.filter(cluster=cluster, name="collides").exists()
    assert objectstore.current_rv(cluster.pk) == rv


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_write_that_waited_for_the_lock_numbers_after_the_one_it_waited_for():
    """rowlock.lock_cluster reads the counter in a statement after the lock's: read with the lock, it would be
    the counter from before the first write's commit, and the second write would reuse its resourceVersions."""
    cluster = Cluster.objects.create(name="waited")
    holding, seen = threading.Event(), {}

    def first():
        try:
            with objectstore.writing(cluster.pk) as w:
                for i in range(3):
                    w.log("pods", objectstore.ADDED, {"metadata": {"name": f"a{i}", "namespace": "ns"}})
                seen["first"] = w.rv
                holding.set()
                time.sleep(0.5)
        finally:
            connection.close()

    def second():
        try:
            holding.wait(10)
            with objectstore.writing(cluster.pk) as w:   # waits for the first's commit
                seen["second_start"] = w.start_rv
                seen["second"] = w.log("pods", objectstore.ADDED, {"metadata": {"name": "b", "namespace": "ns"}})
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen["second_start"] == seen["first"] == 3 and seen["second"] == 4
    assert objectstore.current_rv(cluster.pk) == 4
    assert sorted(StoreChange.objects.filter(cluster=cluster).values_list("rv", flat=True)) == [1, 2, 3, 4]
