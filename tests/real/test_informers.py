"""The informers of the cluster's version against the real kube-apiserver v1.36 (tests/envtest.py): v1.36's 18
kinds, each filled by a streaming watch-list (the real kube-scheduler's requests) and then watched; a watch from an
expired resourceVersion (410 Gone) syncs again without losing or repeating an object; and the DRA kinds reach
DynamicResources, which schedules a pod's claim on a real cluster (allocation and reservation written as kube
writes them) and explains the one no device can serve with kube's message."""
from __future__ import annotations

import collections
import json
import threading

from kubernetes import client as kclient
from kubernetes import config as kconfig

from scheduler_core import versions
from scheduler_core.cluster.kube import NAMESPACED, KubeCluster
from scheduler_core.config import default_config
from scheduler_core.kuberun import KubeSchedulerRunner
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scheduler import Scheduler
from tests.envtest import ControlPlane, ensure_namespace
from tests.real.conftest import add_ready_node, wait_for
from tests.real.test_observe import pod

DRIVER = "gpu.example.com"


def call(api_client, method: str, path: str, body: dict | None = None) -> dict:
    """One request of any kind as the admin; the JSON answer."""
    resp = api_client.call_api(path, method, body=body, auth_settings=["BearerToken"], _preload_content=False,
                               header_params={"Accept": "application/json", "Content-Type": "application/json"})
    return json.loads(resp.data)


def create(api_client, path: str, body: dict) -> dict:
    return call(api_client, "POST", path, body)


def template(labels: dict) -> dict:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}


def one_of_each(suffix: str, node: str) -> dict:
    """{kind: (list path, namespaced path to create it, body)} for the kinds other than Node and Pod."""
    name = f"o{suffix}"
    sel = {"app": name}
    ns = "/api/v1/namespaces/default"
    bodies = {
        "Namespace": ("/api/v1/namespaces", {"metadata": {"name": name}}),
        "PersistentVolume": ("/api/v1/persistentvolumes", {
            "metadata": {"name": name}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                                 "hostPath": {"path": f"/tmp/{name}"}}}),
        "PersistentVolumeClaim": (f"{ns}/persistentvolumeclaims", {
            "metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                 "resources": {"requests": {"storage": "1Gi"}}}}),
        "Service": (f"{ns}/services", {"metadata": {"name": name}, "spec": {"ports": [{"port": 80}],
                                                                            "selector": sel}}),
        "ReplicationController": (f"{ns}/replicationcontrollers", {
            "metadata": {"name": name}, "spec": {"replicas": 0, "selector": sel, "template": template(sel)}}),
        "ReplicaSet": ("/apis/apps/v1/namespaces/default/replicasets", {
            "metadata": {"name": name}, "spec": {"replicas": 0, "selector": {"matchLabels": sel},
                                                 "template": template(sel)}}),
        "StatefulSet": ("/apis/apps/v1/namespaces/default/statefulsets", {
            "metadata": {"name": name}, "spec": {"replicas": 0, "serviceName": name,
                                                 "selector": {"matchLabels": sel}, "template": template(sel)}}),
        "StorageClass": ("/apis/storage.k8s.io/v1/storageclasses", {
            "metadata": {"name": name}, "provisioner": "csi.example.com"}),
        "CSINode": ("/apis/storage.k8s.io/v1/csinodes", {"metadata": {"name": name}, "spec": {"drivers": []}}),
        "CSIDriver": ("/apis/storage.k8s.io/v1/csidrivers", {"metadata": {"name": f"{name}.example.com"},
                                                             "spec": {}}),
        "CSIStorageCapacity": ("/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities", {
            "metadata": {"name": name}, "storageClassName": name, "capacity": "10Gi"}),
        "PodDisruptionBudget": ("/apis/policy/v1/namespaces/default/poddisruptionbudgets", {
            "metadata": {"name": name}, "spec": {"minAvailable": 1, "selector": {"matchLabels": sel}}}),
        "DeviceClass": ("/apis/resource.k8s.io/v1/deviceclasses", {
            "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}),
        "ResourceClaim": ("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", {
            "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": name}}]}}}),
        "ResourceSlice": ("/apis/resource.k8s.io/v1/resourceslices", {
            "metadata": {"name": name},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": name, "generation": 0,
                                                                  "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}]}}),
        "VolumeAttachment": ("/apis/storage.k8s.io/v1/volumeattachments", {
            "metadata": {"name": name}, "spec": {"attacher": "csi.example.com", "nodeName": node,
                                                 "source": {"persistentVolumeName": name}}}),
    }
    return bodies


class Recorder:
    """Every handler call a KubeCluster delivers, counted by (what, kind, key)."""

    def __init__(self):
        self.calls = collections.Counter()

    def _count(self, what, kind, obj):
        if isinstance(obj, dict):
            meta = obj.get("metadata") or {}
            key = f'{meta.get("namespace", "")}/{meta.get("name")}'
        else:
            key = obj.key if kind == "Pod" else obj.name
        self.calls[(what, kind, key)] += 1

    def on_node_add(self, node):
        self._count("Add", "Node", node)

    def on_node_update(self, old, new):
        self._count("Update", "Node", new)

    def on_node_delete(self, node):
        self._count("Delete", "Node", node)

    def on_pod_add(self, p):
        self._count("Add", "Pod", p)

    def on_pod_update(self, old, new):
        self._count("Update", "Pod", new)

    def on_pod_delete(self, p):
        self._count("Delete", "Pod", p)

    def on_object_event(self, kind, action, old, new):
        self._count(action, kind, new if new is not None else old)


def watch_lists_of(plane) -> set:
    """The list paths the audit log shows opened as a streaming watch-list (sendInitialEvents)."""
    return {e["requestURI"].split("?")[0] for e in plane.audit_events()
            if e.get("verb") == "watch" and "sendInitialEvents=true" in e.get("requestURI", "")
            and "resourceVersionMatch=NotOlderThan" in e["requestURI"]}


def test_every_kind_of_the_version_arrives_through_a_watch_list(control_plane, admin_client):
    add_ready_node(admin_client, "node-0")
    kclient.CoreV1Api(admin_client).create_namespaced_pod("default", pod("before"))
    kinds = versions.kube_version("1.36").informers
    assert len(kinds) == 18
    for _kind, (path, body) in one_of_each("1", "node-0").items():
        create(admin_client, path, body)
    kube = KubeCluster(kubeconfig=str(control_plane.kubeconfig), kube_version="1.36", backoff_initial=0.2)
    try:
        recorder = Recorder()
        kube.subscribe(recorder)
        kube.start(wait=True)
        assert {inf.kind for inf in kube.informers} == {k for k, _p, _q in kinds}
        assert all(inf.watch_lists == 1 and inf.relists == 0 for inf in kube.informers), \
            [(inf.kind, inf.watch_lists) for inf in kube.informers]
        assert watch_lists_of(control_plane) >= {p for _k, p, _q in kinds}
        assert kube.get_pod("default", "before") is not None and "node-0" in {n.name for n in kube.list_nodes()}
        for kind, (_path, body) in one_of_each("1", "node-0").items():
            name = body["metadata"]["name"]
            if kind == "Namespace":
                assert name in kube.objects.namespace_labels
            else:
                assert kube.get_object(kind, f"default/{name}" if kind in NAMESPACED else name) is not None, kind
        # after the initial events, each kind goes on through the same streams
        kclient.CoreV1Api(admin_client).create_namespaced_pod("default", pod("after"))
        add_ready_node(admin_client, "node-1")
        later = one_of_each("2", "node-1")
        for _kind, (path, body) in later.items():
            create(admin_client, path, body)

        def arrived():
            kube.pump()
            return all(recorder.calls[("Add", kind, _key_of(kind, body))] == 1 for kind, (_p, body) in later.items()) \
                and recorder.calls[("Add", "Pod", "default/after")] == 1 and recorder.calls[("Add", "Node", "node-1")]
        wait_for(arrived, 30, what="the objects made after the start")
        assert all(inf.watch_lists == 1 for inf in kube.informers)
    finally:
        kube.close()


def _key_of(kind: str, body: dict) -> str:
    """The key Recorder counts an object by."""
    name = body["metadata"]["name"]
    return f"default/{name}" if kind in NAMESPACED else f"/{name}"


def test_an_expired_resource_version_syncs_again_without_losing_or_repeating(control_plane, admin_client):
    add_ready_node(admin_client, "node-0")
    core = kclient.CoreV1Api(admin_client)
    for name in ("kept", "gone"):
        core.create_namespaced_pod("default", pod(name))
    for name in ("kept", "gone"):
        create(admin_client, "/apis/resource.k8s.io/v1/deviceclasses", {"metadata": {"name": name}, "spec": {}})
    kube = KubeCluster(kubeconfig=str(control_plane.kubeconfig), kube_version="1.36", backoff_initial=0.2)
    try:
        recorder = Recorder()
        kube.subscribe(recorder)
        kube.start(wait=True)
        kube.pump()
        kube.stop()
        # while nothing watches: one of each kind made, one deleted
        core.create_namespaced_pod("default", pod("new"))
        core.delete_namespaced_pod("gone", "default", grace_period_seconds=0)
        create(admin_client, "/apis/resource.k8s.io/v1/deviceclasses", {"metadata": {"name": "new"}, "spec": {}})
        call(admin_client, "DELETE", "/apis/resource.k8s.io/v1/deviceclasses/gone")
        before = recorder.calls.copy()
        # etcd compacted past the resourceVersions the informers hold, and the apiserver restarted (its watch
        # cache forgets them too): each watch from them is answered 410 Gone
        control_plane.compact_etcd()
        control_plane.stop_apiserver()
        control_plane.start_apiserver()
        kube.start()
        informers = {inf.kind: inf for inf in kube.informers}

        def synced():
            kube.pump()
            return informers["Pod"].relists and informers["DeviceClass"].relists \
                and kube.get_pod("default", "new") is not None and kube.get_object("DeviceClass", "new") is not None
        wait_for(synced, 30, what="the relists after 410 Gone")
        kube.pump()
        after = recorder.calls - before
        assert after == collections.Counter({("Add", "Pod", "default/new"): 1, ("Delete", "Pod", "default/gone"): 1,
                                             ("Add", "DeviceClass", "/new"): 1, ("Delete", "DeviceClass", "/gone"): 1})
        assert {p.name for p in kube.list_pods()} == {"kept", "new"}
        assert set(kube.objects.device_classes) == {"kept", "new"}
        assert informers["Pod"].watch_lists == 2    # the sync after 410 is a watch-list again
    finally:
        kube.close()


def test_a_claim_is_allocated_on_a_real_cluster_and_a_claim_no_device_serves_is_explained(control_plane,
                                                                                          admin_client, kubelet):
    for node in ("node-0", "node-1"):
        add_ready_node(admin_client, node)
    create(admin_client, "/apis/resource.k8s.io/v1/deviceclasses", {
        "metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    create(admin_client, "/apis/resource.k8s.io/v1/resourceslices", {
        "metadata": {"name": "node-1-gpus"},
        "spec": {"driver": DRIVER, "nodeName": "node-1", "pool": {"name": "node-1", "generation": 0,
                                                                   "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0"}]}})
    for name, count in (("one", 1), ("two", 2)):
        create(admin_client, "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", {
            "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                          "allocationMode": "ExactCount",
                                                                          "count": count}}]}}})
    core = kclient.CoreV1Api(admin_client)
    for name in ("one", "two"):
        core.create_namespaced_pod("default", pod(f"wants-{name}", resourceClaims=[
            {"name": "gpu", "resourceClaimName": name}]))
    config = default_config(in_tree_registry(), kube_version="1.36")
    kube = KubeCluster(kubeconfig=str(control_plane.kubeconfig), kube_version=config.features, backoff_initial=0.2)
    kube.start(wait=True)
    sched = Scheduler(kube, config, tie_break="name")
    stop = threading.Event()
    runner = threading.Thread(target=KubeSchedulerRunner(kube, sched).run, args=(stop,), daemon=True)
    runner.start()
    try:
        wait_for(lambda: core.read_namespaced_pod("wants-one", "default").spec.node_name, 60,
                 what="the pod with a claim bound")
        assert core.read_namespaced_pod("wants-one", "default").spec.node_name == "node-1"
        claim = call(admin_client, "GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/one")
        assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        results = claim["status"]["allocation"]["devices"]["results"]
        assert [(r["driver"], r["pool"], r["device"]) for r in results] == [(DRIVER, "node-1", "gpu-0")]
        uid = core.read_namespaced_pod("wants-one", "default").metadata.uid
        assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "wants-one", "uid": uid}]

        def unschedulable_message():
            for c in core.read_namespaced_pod("wants-two", "default").status.conditions or ():
                if c.type == "PodScheduled" and c.reason == "Unschedulable":
                    return c.message
            return None
        message = wait_for(unschedulable_message, 60, what="the pod no device can serve reported")
        # the real kube-scheduler v1.36.2's message for this pod on these objects
        assert message == ("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
                           "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    finally:
        stop.set()
        runner.join(30)
        kube.close()


def test_a_server_that_refuses_watch_lists_is_listed_and_watched(tmp_path):
    plane = ControlPlane(tmp_path / "cp", feature_gates="WatchList=false").start()
    try:
        admin = kconfig.new_client_from_config(config_file=str(plane.kubeconfig))
        ensure_namespace(admin, "default")
        add_ready_node(admin, "node-0")
        kube = KubeCluster(kubeconfig=str(plane.kubeconfig), kube_version="1.36", backoff_initial=0.2)
        try:
            kube.start(wait=True)
            assert not any(inf.watch_list or inf.watch_lists for inf in kube.informers)
            kclient.CoreV1Api(admin).create_namespaced_pod("default", pod("after"))
            wait_for(lambda: kube.pump() >= 0 and kube.get_pod("default", "after"), 30, what="the watch")
            assert [n.name for n in kube.list_nodes()] == ["node-0"]
        finally:
            kube.close()
            admin.close()
    finally:
        plane.stop()
