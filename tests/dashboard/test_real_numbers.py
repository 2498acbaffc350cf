"""Numbers of a real cluster (the real kube-apiserver v1.36 of tests/envtest.py) count every pod on a node,
whoever scheduled it: utilisation on the overview and the Nodes page, and what-if."""
from __future__ import annotations

import pytest
from kubernetes import client as kclient
from kubernetes import config as kconfig

from dashboard.models import Pod, WhatIfRun
from dashboard.services import queries, whatif
from tests.envtest import add_ready_node, ensure_namespace
from tests.real.conftest import control_plane  # noqa: F401 (the fixture)

from .conftest import wait_for
from .test_real_cluster import LoopThread, real_cluster

pytestmark = pytest.mark.django_db(transaction=True)


def _pod(name: str, cpu: str, scheduler: str = "default-scheduler") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": scheduler, "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}]}}


def _bind_elsewhere(core, name: str, cpu: str) -> None:
    """A pod of another scheduler, bound by it to node "full" through pods/binding."""
    core.create_namespaced_pod("default", _pod(name, cpu, scheduler="batch-scheduler"))
    core.create_namespaced_pod_binding(name, "default", kclient.V1Binding(
        metadata=kclient.V1ObjectMeta(name=name), target=kclient.V1ObjectReference(kind="Node", name="full")),
        _preload_content=False)


def test_pods_of_another_scheduler_count_on_their_node(control_plane, api, client):
    admin = kconfig.new_client_from_config(config_file=str(control_plane.kubeconfig))
    ensure_namespace(admin, "default")
    core = kclient.CoreV1Api(admin)
    add_ready_node(admin, "full", cpu="2")
    _bind_elsewhere(core, "batch-1", "1900m")   # before the loop watched
    cluster = real_cluster(api, "prod", control_plane.kubeconfig.read_text())
    loop = LoopThread(cluster)
    try:
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="batch-1").exists(), 30,
                 what="the pod bound before the loop watched")
        _bind_elsewhere(core, "batch-2", "50m")   # while it watches
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="batch-2", node_name="full").exists(), 30,
                 what="the pod another scheduler bound while the loop watched")
    finally:
        loop.stop()
    usage = {r["name"]: r for r in queries.node_usage(cluster)}["full"]
    assert (usage["cpu"], usage["cpu_pct"], usage["pods"]) == (1950, 98, 2)
    assert "98%" in client.get("/clusters/prod/").content.decode()
    assert "1.95 / 2" in client.get("/clusters/prod/nodes/").content.decode()
    node_page = client.get("/clusters/prod/nodes/full/").content.decode()
    assert "batch-1" in node_page and "batch-2" in node_page
    # what-if: a 2-cpu pod does not fit a node with 50m free
    run = whatif.create(cluster, WhatIfRun.CAPACITY,
                        whatif.question(cluster, WhatIfRun.CAPACITY, {"manifest": _pod("web", "2")}))
    whatif.execute(run.pk)
    run.refresh_from_db()
    assert run.state == WhatIfRun.DONE, run.error
    assert run.result["fit"] == 0
    assert run.result["stop"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
