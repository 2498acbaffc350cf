"""kuberun's log at the default level against the real kube-apiserver v1.36 (tests/envtest.py), through an
apiserver restart: what happened in a few lines, never an HTTP header dump, a request body or a traceback."""
from __future__ import annotations

import subprocess
import sys

from kubernetes import client as kclient

from tests.envtest import ROOT
from tests.real.conftest import add_ready_node, wait_for

DUMPS = ("header:", "send: b", "reply: '", "HTTP response headers", "response body", "Traceback")


def test_the_default_log_has_no_header_dumps(control_plane, admin_client, tmp_path):
    core = kclient.CoreV1Api(admin_client)
    add_ready_node(admin_client, "n1")
    log_path = tmp_path / "kuberun.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "scheduler_core.kuberun", "--kubeconfig",
                                 str(control_plane.kubeconfig), "--leader-elect", "false"],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        core.create_namespaced_pod("default", {"metadata": {"name": "before"}, "spec": {
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})
        wait_for(lambda: core.read_namespaced_pod("before", "default").spec.node_name, 60, what="the first binding")
        control_plane.restart_apiserver(3)
        core.create_namespaced_pod("default", {"metadata": {"name": "after"}, "spec": {
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})
        wait_for(lambda: core.read_namespaced_pod("after", "default").spec.node_name, 90,
                 what="a binding after the restart")
    finally:
        proc.terminate()
        proc.wait(30)
    text = log_path.read_text()
    assert not [line for line in text.splitlines() if any(d in line for d in DUMPS)], text
    assert len(text.splitlines()) <= 12, text
