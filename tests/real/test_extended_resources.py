"""Extended resources backed by devices (DRAExtendedResource) in scheduler mode against the real kube-apiserver
v1.36 (tests/envtest.py), with only kube's own ``system:kube-scheduler`` and ``system:volume-scheduler`` roles: a
pod asking ``example.com/gpu``, which no node offers itself but a DeviceClass names, is bound to the node whose
ResourceSlice has the device; its claim is created (generateName ``<pod>-extended-resources-``), allocated and
reserved, and the pod's ``status.extendedResourceClaimStatus`` names it. A claim update that another writer makes
conflict (409) is retried with the claim read again, as client-go's RetryOnConflict does."""
from __future__ import annotations

import threading

import pytest
from kubernetes import client as kclient
from kubernetes import config as kconfig

from scheduler_core.cluster.kube import KubeCluster
from scheduler_core.config import default_config
from scheduler_core.kuberun import KubeSchedulerRunner
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scheduler import Scheduler
from tests.envtest import ControlPlane, FakeKubelet, add_ready_node, ensure_namespace
from tests.real.conftest import grant_kube_scheduler_roles, wait_for
from tests.real.test_informers import call, create

KUBE_ROLE = "kube-role"
DRIVER = "gpu.example.com"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


@pytest.fixture
def plane(tmp_path):
    cp = ControlPlane(tmp_path / "cp", users={KUBE_ROLE: []}).start()
    admin = kconfig.new_client_from_config(config_file=str(cp.kubeconfig))
    ensure_namespace(admin, "default")
    grant_kube_scheduler_roles(admin, KUBE_ROLE)
    for node in ("node-0", "gpu-1"):
        add_ready_node(admin, node)
    create(admin, "/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                 "extendedResourceName": "example.com/gpu"}})
    create(admin, "/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-1-gpus"},
        "spec": {"driver": DRIVER, "nodeName": "gpu-1", "pool": {"name": "gpu-1", "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0"}]}})
    with FakeKubelet(admin):
        yield cp, admin
    admin.close()
    cp.stop()


def gpu_pod(name: str) -> dict:
    gpu = {"example.com/gpu": "1"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": gpu, "limits": gpu}}]}}


class InterferedCluster(KubeCluster):
    """The scheduler's client, before whose first claim status update another writer (the admin) labels the claim:
    the update then carries a stale resourceVersion and the API server answers 409."""

    def __init__(self, admin, **kw):
        super().__init__(**kw)
        self.admin, self.interfered = admin, 0

    def update_status(self, kind, raw):
        if kind == "ResourceClaim" and not self.interfered:
            self.interfered += 1
            path = f'{CLAIMS}/{raw["metadata"]["name"]}'
            current = call(self.admin, "GET", path)
            current["metadata"]["labels"] = {"team": "ml"}
            call(self.admin, "PUT", path, current)
        return super().update_status(kind, raw)


def run_scheduler(kube: KubeCluster, config, stop: threading.Event) -> threading.Thread:
    kube.start(wait=True)
    thread = threading.Thread(target=KubeSchedulerRunner(kube, Scheduler(kube, config, tie_break="name")).run,
                              args=(stop,), daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("interfered", [False, True], ids=["plain", "conflict-retried"])
def test_an_extended_resource_backed_by_a_device_class_gets_its_claim(plane, interfered):
    cp, admin = plane
    core = kclient.CoreV1Api(admin)
    config = default_config(in_tree_registry(), kube_version="1.36")
    options = {"kubeconfig": str(cp.kubeconfig_for(KUBE_ROLE)), "kube_version": config.features,
               "backoff_initial": 0.2}
    kube = InterferedCluster(admin, **options) if interfered else KubeCluster(**options)
    stop = threading.Event()
    thread = run_scheduler(kube, config, stop)
    try:
        core.create_namespaced_pod("default", gpu_pod("trainer"))
        wait_for(lambda: core.read_namespaced_pod("trainer", "default").spec.node_name, 90, what="the pod bound")
        pod = call(admin, "GET", "/api/v1/namespaces/default/pods/trainer")
        assert pod["spec"]["nodeName"] == "gpu-1"
        [claim] = call(admin, "GET", CLAIMS)["items"]
        meta = claim["metadata"]
        assert meta["name"].startswith("trainer-extended-resources-") and len(meta["name"]) == 32
        assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
        assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "trainer",
                                            "uid": pod["metadata"]["uid"], "controller": True}]
        assert meta["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        assert claim["spec"]["devices"]["requests"] == [{"name": "container-0-request-0", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]
        allocation = claim["status"]["allocation"]
        assert allocation["devices"]["results"] == [
            {"request": "container-0-request-0", "driver": DRIVER, "pool": "gpu-1", "device": "gpu-0"}]
        assert allocation["allocationTimestamp"]
        assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer",
                                                   "uid": pod["metadata"]["uid"]}]
        assert pod["status"]["extendedResourceClaimStatus"] == {
            "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                                 "requestName": "container-0-request-0"}],
            "resourceClaimName": meta["name"]}
        writes = [(e["verb"], e["objectRef"].get("subresource", ""), e["responseStatus"]["code"])
                  for e in cp.audit_events() if e.get("stage") == "ResponseComplete"
                  and e["user"]["username"] == KUBE_ROLE and e["objectRef"].get("resource") == "resourceclaims"
                  and e["verb"] in ("create", "update", "patch", "delete")]
        if interfered:
            assert meta["labels"] == {"team": "ml"}   # the other writer's change is kept
            assert writes == [("create", "", 201), ("update", "", 200), ("update", "status", 409),
                              ("update", "status", 200)]
        else:
            assert writes == [("create", "", 201), ("update", "", 200), ("update", "status", 200)]
        events = call(admin, "GET", "/apis/events.k8s.io/v1/namespaces/default/events")["items"]
        assert [e["note"] for e in events if e.get("reason") == "Scheduled"] == [
            "Successfully assigned default/trainer to gpu-1"]
    finally:
        stop.set()
        thread.join(30)
        kube.close()
