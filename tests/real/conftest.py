"""Fixtures for the tests against the real Kubernetes control plane (tests/envtest.py)."""
from __future__ import annotations

import time

import pytest
from kubernetes import client as kclient

from tests.envtest import ControlPlane, FakeKubelet, add_ready_node, ensure_namespace, require_assets


def grant_kube_scheduler_roles(api_client, user: str) -> None:
    """Bind kube's own roles of kube-scheduler (system:kube-scheduler, system:volume-scheduler) to ``user``."""
    rbac = kclient.RbacAuthorizationV1Api(api_client)
    for role in ("system:kube-scheduler", "system:volume-scheduler"):
        rbac.create_cluster_role_binding({
            "metadata": {"name": f"{user}-{role.split(':')[1]}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.1, what: str = "condition"):
    """Poll until predicate() is truthy; returns its value or fails the test."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


@pytest.fixture
def control_plane(tmp_path):
    """A fresh apiserver and etcd for one test (no scheduler), stopped afterwards."""
    require_assets()
    cp = ControlPlane(tmp_path / "cp").start()
    yield cp
    cp.stop()


@pytest.fixture
def admin_client(control_plane):
    from kubernetes import config as kconfig
    client = kconfig.new_client_from_config(config_file=str(control_plane.kubeconfig))
    ensure_namespace(client, "default")
    yield client
    client.close()


@pytest.fixture
def kubelet(admin_client):
    with FakeKubelet(admin_client) as k:
        yield k


__all__ = ["wait_for", "add_ready_node", "ensure_namespace"]
