"""Scheduler mode against the real kube-apiserver v1.36 (tests/envtest.py), with a fake kubelet: Schedscope
holds the Lease, binds a pod and writes kube's Scheduled event, and preempts a lower-priority pod for a higher one
(DisruptionTarget, the victim deleted, the Preempted event, the preemptor bound once it is gone); a pod whose
claim waits for its first consumer gets the local volume of the one node that has it (the PV's claimRef written
at PreBind, the claim then bound by the PV controller, played here by the test)."""
from __future__ import annotations

import threading

from kubernetes import client as kclient

from scheduler_core.cluster.kube import KubeCluster
from scheduler_core.cluster.leaderelection import LeaderElector, LeaseLock
from scheduler_core.config import default_config
from scheduler_core.kuberun import KubeSchedulerRunner
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scheduler import Scheduler
from tests.real.conftest import add_ready_node, wait_for
from tests.real.test_informers import call
from tests.real.test_observe import pod


def events_of(admin_client, reason: str) -> list:
    """The default namespace's events.k8s.io/v1 Events of ``reason`` (raw: the client's model refuses the ones
    without an eventTime that core/v1 writers leave)."""
    items = call(admin_client, "GET", "/apis/events.k8s.io/v1/namespaces/default/events")["items"]
    return [e for e in items if e.get("reason") == reason]


def test_bind_events_lease_and_preemption(control_plane, admin_client, kubelet):
    core = kclient.CoreV1Api(admin_client)
    add_ready_node(admin_client, "node-0", cpu="1")
    sched_api = kclient.SchedulingV1Api(admin_client)
    for name, value in (("low", 10), ("high", 1000)):
        sched_api.create_priority_class({"metadata": {"name": name}, "value": value})
    config = default_config(in_tree_registry(), kube_version="1.36")
    kube = KubeCluster(kubeconfig=str(control_plane.kubeconfig), kube_version=config.features, backoff_initial=0.2)
    kube.start(wait=True)
    elector = LeaderElector(LeaseLock(kube, "kube-system", "kube-scheduler", "schedscope-test"), 15, 10, 2)
    kube.write_fence = elector.valid_for
    stop = threading.Event()
    runner = threading.Thread(target=KubeSchedulerRunner(kube, Scheduler(kube, config, tie_break="name"),
                                                         elector).run, args=(stop,), daemon=True)
    runner.start()
    try:
        leases = kclient.CoordinationV1Api(admin_client)
        lease = wait_for(lambda: next((x for x in leases.list_namespaced_lease("kube-system").items
                                       if x.metadata.name == "kube-scheduler"), None), 60, what="the Lease")
        assert lease.spec.holder_identity == "schedscope-test"
        core.create_namespaced_pod("default", pod("victim", cpu="800m", priorityClassName="low"))
        wait_for(lambda: core.read_namespaced_pod("victim", "default").spec.node_name, 60, what="victim bound")
        scheduled = wait_for(lambda: events_of(admin_client, "Scheduled"), 30, what="the Scheduled event")
        assert scheduled[0]["note"] == "Successfully assigned default/victim to node-0"
        assert scheduled[0]["reportingController"] == "default-scheduler"

        core.create_namespaced_pod("default", pod("preemptor", cpu="800m", priorityClassName="high"))
        preempted = wait_for(lambda: events_of(admin_client, "Preempted"), 60, what="the Preempted event")
        preemptor = core.read_namespaced_pod("preemptor", "default")
        assert preempted[0]["regarding"]["name"] == "victim"
        assert preempted[0]["note"] == f"Preempted by pod {preemptor.metadata.uid} on node node-0"
        wait_for(lambda: core.read_namespaced_pod("preemptor", "default").spec.node_name == "node-0", 90,
                 what="the preemptor bound once the victim is gone")
        assert [p.metadata.name for p in core.list_namespaced_pod("default").items] == ["preemptor"]
        audit = [e for e in control_plane.audit_events() if e.get("objectRef", {}).get("name") == "victim"
                 and e.get("objectRef", {}).get("subresource") == "status" and e.get("verb") == "patch"]
        assert audit, "the victim's DisruptionTarget condition was not written"
    finally:
        stop.set()
        runner.join(30)
        kube.close()


def _pv_controller(core, stop: threading.Event) -> None:
    """kube-controller-manager's PV controller for a statically provisioned volume the scheduler chose: once the
    scheduler has written the PV's claimRef, the claim is bound to it (volumeName, bind-completed, phase Bound)."""
    while not stop.wait(0.2):
        for pv in core.list_persistent_volume().items:
            ref = pv.spec.claim_ref
            if ref is None:
                continue
            pvc = core.read_namespaced_persistent_volume_claim(ref.name, ref.namespace)
            if pvc.spec.volume_name:
                continue
            core.patch_namespaced_persistent_volume_claim(ref.name, ref.namespace, {
                "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                             "pv.kubernetes.io/bound-by-controller": "yes"}},
                "spec": {"volumeName": pv.metadata.name}})
            core.patch_namespaced_persistent_volume_claim_status(ref.name, ref.namespace,
                                                                 {"status": {"phase": "Bound"}})
            core.patch_persistent_volume_status(pv.metadata.name, {"status": {"phase": "Bound"}})


def test_a_pod_with_a_delayed_binding_claim_gets_the_volume_of_its_node(control_plane, admin_client, kubelet):
    core = kclient.CoreV1Api(admin_client)
    for node in ("node-0", "node-1"):
        add_ready_node(admin_client, node)
    kclient.StorageV1Api(admin_client).create_storage_class({
        "metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer"})
    core.create_persistent_volume({
        "metadata": {"name": "pv-1"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                 "local": {"path": "/mnt/disk"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}}})
    core.patch_persistent_volume_status("pv-1", {"status": {"phase": "Available"}})   # the PV controller's
    core.create_namespaced_persistent_volume_claim("default", {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                 "resources": {"requests": {"storage": "1Gi"}}}})
    core.create_namespaced_pod("default", pod("db", volumes=[
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]))
    config = default_config(in_tree_registry(), kube_version="1.36")
    kube = KubeCluster(kubeconfig=str(control_plane.kubeconfig), kube_version=config.features, backoff_initial=0.2)
    kube.start(wait=True)
    stop = threading.Event()
    threads = [threading.Thread(target=KubeSchedulerRunner(kube, Scheduler(kube, config, tie_break="name")).run,
                                args=(stop,), daemon=True),
               threading.Thread(target=_pv_controller, args=(core, stop), daemon=True)]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: core.read_namespaced_pod("db", "default").spec.node_name, 90, what="the pod bound")
        assert core.read_namespaced_pod("db", "default").spec.node_name == "node-1"
        pv = core.read_persistent_volume("pv-1")
        assert (pv.spec.claim_ref.namespace, pv.spec.claim_ref.name) == ("default", "data")
        assert pv.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
        assert core.read_namespaced_persistent_volume_claim("data", "default").spec.volume_name == "pv-1"
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        kube.close()
