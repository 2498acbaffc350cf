"""Observe mode against the real kube-apiserver and the real kube-scheduler v1.36 (tests/envtest.py): a read-only
ShadowScheduler, connected as a user that may only get, list and watch, explains every pod kube-scheduler reports
FailedScheduling for, with kube's own message, again when the cluster changes while the pod waits; and the
apiserver's audit log holds no write by that user."""
from __future__ import annotations

import pytest
from kubernetes import client as kclient

from scheduler_core.cluster.kube import KubeCluster
from scheduler_core.shadow import ShadowScheduler
from tests.envtest import ControlPlane, ensure_namespace
from tests.real.conftest import add_ready_node, wait_for

OBSERVER = "observer"
READ_VERBS = ["get", "list", "watch"]
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection"}


def writes_by(plane, user: str) -> list:
    """The audit events of ``user``'s writes to the cluster (a SelfSubjectAccessReview stores nothing)."""
    return [e for e in plane.audit_events() if e.get("user", {}).get("username") == user
            and e.get("verb") in WRITE_VERBS and e.get("objectRef", {}).get("apiGroup") != "authorization.k8s.io"]


def grant_read_only(api_client, user: str) -> None:
    """A ClusterRole that may get, list and watch everything (and nothing else), bound to ``user``."""
    rbac = kclient.RbacAuthorizationV1Api(api_client)
    rbac.create_cluster_role({"metadata": {"name": f"{user}-read"},
                              "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": READ_VERBS}]})
    rbac.create_cluster_role_binding({
        "metadata": {"name": f"{user}-read"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{user}-read"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})


def pod(name: str, cpu: str = "100m", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": cpu, "memory": "16Mi"}}}], **spec}}


@pytest.fixture
def plane(tmp_path):
    cp = ControlPlane(tmp_path / "cp", scheduler=True, users={OBSERVER: []}).start()
    yield cp
    cp.stop()


def kube_message(core, name: str) -> str:
    """kube-scheduler's message for a pending pod: its PodScheduled=False condition."""
    p = core.read_namespaced_pod(name, "default")
    for c in p.status.conditions or ():
        if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable":
            return c.message
    return ""


def test_observe_explains_every_pending_pod_without_writing(plane):
    from kubernetes import config as kconfig
    admin = kconfig.new_client_from_config(config_file=str(plane.kubeconfig))
    core = kclient.CoreV1Api(admin)
    ensure_namespace(admin, "default")
    grant_read_only(admin, OBSERVER)
    for i in range(3):
        add_ready_node(admin, f"node-{i}", cpu="1", labels={"zone": f"z{i % 2}"})
    for i in range(3):   # 800m of each node's 1 cpu taken
        core.create_namespaced_pod("default", pod(f"filler-{i}", cpu="800m"))
    wait_for(lambda: all(p.spec.node_name for p in core.list_namespaced_pod("default").items), timeout=60,
             what="kube-scheduler binding the fillers")
    core.create_namespaced_pod("default", pod("half", cpu="500m"))
    core.create_namespaced_pod("default", pod("no-zone", nodeSelector={"zone": "z9"}))

    kube = KubeCluster(kubeconfig=str(plane.kubeconfig_for(OBSERVER)), read_only=True,
                       watch_failed_scheduling=True, backoff_initial=0.2)
    latest = {}
    try:
        kube.start(wait=True)
        shadow = ShadowScheduler(kube, kube_version="1.36", tie_break="name", reobserve_seconds=0.5,
                                 on_observe=lambda obs, tr: latest.__setitem__(obs.pod.split("/")[1], obs))

        def explained(names, prefix):
            """Every pod in ``names`` observed, the latest observation made with kube's current message."""
            kube.pump(0.2)
            shadow.observe_pending()
            return all(n in latest and latest[n].kube_message == kube_message(core, n)
                       and latest[n].kube_message.startswith(prefix) for n in names)

        wait_for(lambda: explained(["half", "no-zone"], "0/3 nodes"), timeout=90, what="both pods explained")
        for name in ("half", "no-zone"):
            assert latest[name].message == latest[name].kube_message, name
            assert latest[name].agree
        assert latest["half"].message.startswith("0/3 nodes are available: 3 Insufficient cpu."), latest["half"].message
        assert "3 node(s) didn't match Pod's node affinity/selector" in latest["no-zone"].message

        # The cluster changes while they wait (a node is cordoned): both are observed again on the new state.
        # kube does not retry them for a change that cannot help (its queueing hints), so its message stays.
        count, before = shadow.observations, {n: latest[n].kube_message for n in ("half", "no-zone")}
        core.patch_node("node-0", {"spec": {"unschedulable": True}})

        def reobserved():
            kube.pump(0.2)
            shadow.observe_pending()
            return all("1 node(s) were unschedulable" in latest[n].message for n in ("half", "no-zone"))
        wait_for(reobserved, timeout=60, what="the waiting pods observed again after the cluster changed")
        assert shadow.observations >= count + 2
        assert {n: latest[n].kube_message for n in ("half", "no-zone")} == before
        assert not latest["half"].agree

        # Uncordoned: kube retries, reports again, and the new observations agree with it again.
        core.patch_node("node-0", {"spec": {"unschedulable": False}})
        wait_for(lambda: explained(["half", "no-zone"], "0/3 nodes") and latest["half"].agree
                 and "were unschedulable" not in latest["half"].message, timeout=60,
                 what="kube's new report observed")
        for name in ("half", "no-zone"):
            assert latest[name].message == latest[name].kube_message, name

        # A node it fits joins: kube binds it and it no longer waits; a deleted pod no longer waits either.
        add_ready_node(admin, "node-4", cpu="1", labels={"zone": "z0"})
        core.delete_namespaced_pod("no-zone", "default", grace_period_seconds=0)
        wait_for(lambda: kube.pump(0.2) is not None and not shadow.waiting, timeout=60,
                 what="no pod waiting once one is bound and the other deleted")
        assert shadow.stats()["observed_agreed"] >= 4
    finally:
        kube.close()
        admin.close()

    reads = [e for e in plane.audit_events() if e.get("user", {}).get("username") == OBSERVER]
    assert {e.get("objectRef", {}).get("resource") for e in reads} >= {"pods", "nodes", "events"}
    assert writes_by(plane, OBSERVER) == []
