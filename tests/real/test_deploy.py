"""deploy/'s overlays against the real kube-apiserver v1.36 (tests/envtest.py): each applies (server-side dry run,
then for real), and each mode's ServiceAccount can do what that mode needs and nothing that it does not
(``kubectl auth can-i --as``, answered by the apiserver's RBAC authorizer)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from scheduler_core import versions
from tests.envtest import ROOT

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="no kubectl (apt-get install -y kubernetes-client)")


def kubectl(cp, *args) -> subprocess.CompletedProcess:
    return subprocess.run([KUBECTL, "--kubeconfig", str(cp.kubeconfig), *args], capture_output=True, text=True,
                          timeout=60)


def can(cp, mode: str, verb: str, resource: str, namespace: str = "kube-system") -> bool:
    """Whether the mode's ServiceAccount may ``verb`` ``resource`` (``pods/status``: a subresource)."""
    resource, _, sub = resource.partition("/")
    out = kubectl(cp, "auth", "can-i", verb, resource, "-n", namespace, *([f"--subresource={sub}"] if sub else []),
                  f"--as=system:serviceaccount:kube-system:schedscope-{mode}")
    assert out.stdout.strip() in ("yes", "no"), out.stderr
    return out.stdout.strip() == "yes"


def watched():
    for _kind, path, _query in versions.kube_version(versions.LATEST_VERSION).informers:
        parts = path.strip("/").split("/")
        yield parts[-1] if parts[0] == "api" else f"{parts[-1]}.{parts[1]}"


@pytest.mark.parametrize("mode", ["scheduler", "observe"])
def test_an_overlay_applies_and_its_account_has_least_rights(control_plane, mode):
    overlay = os.path.join(ROOT, "deploy", "overlays", mode)
    dry = kubectl(control_plane, "apply", "-k", overlay, "--dry-run=server")
    assert dry.returncode == 0, dry.stderr
    assert f"deployment.apps/schedscope-{mode} created (server dry run)" in dry.stdout
    assert not can(control_plane, mode, "list", "pods")   # a dry run creates nothing
    real = kubectl(control_plane, "apply", "-k", overlay)
    assert real.returncode == 0, real.stderr
    for resource in watched():
        assert can(control_plane, mode, "watch", resource, "default"), resource
    assert not can(control_plane, mode, "get", "secrets")
    assert not can(control_plane, mode, "create", "pods")
    assert not can(control_plane, mode, "delete", "nodes")
    writes = [("create", "pods/binding", "default"), ("patch", "pods/status", "default"),
              ("delete", "pods", "default"), ("create", "events.events.k8s.io", "default"),
              ("update", "leases.coordination.k8s.io", "kube-system")]
    for verb, resource, namespace in writes:
        assert can(control_plane, mode, verb, resource, namespace) is (mode == "scheduler"), (verb, resource)
    assert not can(control_plane, mode, "update", "leases.coordination.k8s.io", "default")
    assert can(control_plane, mode, "list", "events", "default") is (mode == "observe")
