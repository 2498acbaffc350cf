"""StoreCounter.pods, each cluster's pod count kept by the database's triggers (migration 0012): it follows every
way pods come and go, and the size limit reads it instead of counting under the cluster's lock."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from dashboard.models import Cluster, Pod, StoreCounter
from dashboard.services import clusters as svc
from dashboard.services import objectstore

from .conftest import load_cluster, run_on_sqlite, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)


def pod(name: str, node: str = "") -> dict:
    spec = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team"}, "spec": spec}


def counted(cluster) -> tuple[int, int]:
    """(the counter, the rows)."""
    return objectstore.pod_count(cluster.pk), Pod.objects.filter(cluster=cluster).count()


def test_the_count_follows_every_writer_and_a_deleted_cluster_leaves_no_counter(api):
    cluster = load_cluster(api, small_scenario(pending_web=4))
    assert counted(cluster) == (7, 7)
    assert api.post(f"/api/clusters/{cluster.name}/pods/", pod("rest-1"), format="json").status_code == 201
    svc.add_pod(cluster, pod("page-1"))
    svc.add_pod(cluster, pod("on-n-1", node="n-1"))
    assert counted(cluster) == (10, 10)
    assert api.delete(f"/api/clusters/{cluster.name}/pods/team/rest-1/").status_code == 204
    assert counted(cluster) == (9, 9)
    svc.delete_node(cluster, "n-1")   # its pods go with it
    assert counted(cluster) == (8, 8)
    r = api.post(f"/api/clusters/{cluster.name}/scenario/", {"scenario": small_scenario(pending_web=1)},
                 format="json")
    assert r.status_code == 201
    assert counted(cluster) == (4, 4)
    other = load_cluster(api, dict(small_scenario(pending_web=2), name="other"))
    assert counted(other) == (5, 5) and counted(cluster) == (4, 4)
    svc.delete_cluster(cluster)
    assert not StoreCounter.objects.filter(cluster_id=cluster.pk).exists()
    assert counted(other) == (5, 5)


def test_the_limit_reads_the_count():
    cluster = Cluster.objects.create(name="limited")
    svc.add_pod(cluster, pod("a"))
    with override_settings(SCHEDSCOPE={**settings.SCHEDSCOPE, "MAX_PODS": 2}):
        svc.add_pod(cluster, pod("b"))
        with pytest.raises(objectstore.ValidationFailed) as err:
            svc.add_pod(cluster, pod("c"))
    assert err.value.errors == {"pods": ["a simulated cluster holds at most 2 pods; this would make 3"]}
    assert counted(cluster) == (2, 2)


def test_the_triggers_exist_on_sqlite_too(tmp_path):
    if connection.vendor == "sqlite":
        pytest.skip("this test runs the two above on SQLite, from the PostgreSQL run")
    run_on_sqlite(tmp_path, [f"{__file__}::test_the_count_follows_every_writer_and_a_deleted_cluster_leaves_no_counter",
                             f"{__file__}::test_the_limit_reads_the_count"])
