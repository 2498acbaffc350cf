"""Credentials told plainly, against the real kube-apiserver v1.36 (tests/envtest.py): ``kuberun`` checks every
permission its mode needs at connect and exits 1 with one line naming all the missing ones (no traceback); a token
the API server does not know is a 401, worded apart from a 403; kube's own ``system:kube-scheduler`` and
``system:volume-scheduler`` roles are enough (docs/REAL_CLUSTERS.md)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from kubernetes import config as kconfig

from tests.envtest import ROOT, ControlPlane, ensure_namespace
from tests.real.conftest import grant_kube_scheduler_roles, wait_for
from tests.real.test_observe import grant_read_only

READER, KUBE_ROLE, STRANGER = "reader", "kube-role", "stranger"


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    cp = ControlPlane(tmp_path_factory.mktemp("cred") / "cp", users={READER: [], KUBE_ROLE: [], STRANGER: []}).start()
    admin = kconfig.new_client_from_config(config_file=str(cp.kubeconfig))
    ensure_namespace(admin, "default")
    grant_read_only(admin, READER)
    grant_kube_scheduler_roles(admin, KUBE_ROLE)
    admin.close()
    yield cp
    cp.stop()


def kuberun(kubeconfig, *args, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scheduler_core.kuberun", "--kubeconfig", str(kubeconfig),
                           "--kube-version", "1.36", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def error_line(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 1, (out.returncode, out.stderr[-2000:])
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    lines = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, out.stderr[-2000:]
    return lines[0]


def test_read_only_credentials_in_scheduler_mode_name_every_missing_permission(plane):
    line = error_line(kuberun(plane.kubeconfig_for(READER)))
    assert line == ("error: the credentials lack 13 permission(s) that scheduler mode needs: create pods/binding; "
                    "patch pods/status; delete pods; create, patch events.events.k8s.io; "
                    "update persistentvolumes; update persistentvolumeclaims; "
                    "update, create, delete resourceclaims.resource.k8s.io; "
                    "update resourceclaims.resource.k8s.io/status; "
                    "create leases.coordination.k8s.io in kube-system; "
                    'update leases.coordination.k8s.io "kube-scheduler" in kube-system'), line


def test_read_only_credentials_are_enough_to_observe(plane, tmp_path):
    report = tmp_path / "report.json"
    out = kuberun(plane.kubeconfig_for(READER), "--shadow", "--duration", "2", "--shadow-report", str(report))
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(report.read_text())["stats"]["decisions"] == 0


def test_kube_scheduler_roles_are_enough_for_the_scheduler_mode(plane):
    """Schedscope follows the kinds kube-scheduler of the version follows, and writes what it writes."""
    out = kuberun(plane.kubeconfig_for(KUBE_ROLE), "--duration", "2")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "error:" not in out.stderr and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "started leading" in out.stderr, out.stderr[-2000:]


def test_unknown_token_is_a_401_not_a_403(plane, tmp_path):
    doc = plane.kubeconfig_dict()
    doc["users"] = [{"name": "x", "user": {"token": "not-a-token"}}]
    doc["contexts"][0]["context"]["user"] = "x"
    path = tmp_path / "bad.kubeconfig"
    path.write_text(json.dumps(doc))
    line = error_line(kuberun(path))
    assert line.startswith("error: the API server does not accept the credentials (401 Unauthorized"), line


def test_a_user_without_any_role_is_refused_with_everything_it_lacks(plane):
    line = error_line(kuberun(plane.kubeconfig_for(STRANGER), "--shadow"))
    assert line.startswith("error: the credentials lack 38 permission(s) that observe mode needs: list, watch nodes; "
                           "list, watch pods;"), line
    assert line.endswith("list, watch volumeattachments.storage.k8s.io; list, watch events"), line


def test_a_restarting_api_server_is_waited_for_not_taken_for_a_verdict(plane, tmp_path):
    """kuberun started while the API server is down waits for it; the requests refused while it loads its RBAC
    (the first second back) are retried, so observe mode starts (exit 0) instead of naming missing permissions."""
    plane.stop_apiserver()
    log = tmp_path / "kuberun.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "scheduler_core.kuberun", "--kubeconfig",
                                 str(plane.kubeconfig_for(READER)), "--kube-version", "1.36", "--shadow",
                                 "--duration", "1"], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "requests to the API server fail" in log.read_text(), 30,
                 what="kuberun waiting for the API server")
        plane.start_apiserver(wait=False)
        proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
        plane.wait_ready()
    text = log.read_text()
    assert proc.returncode == 0, text[-2000:]
    assert "error:" not in text and "Traceback" not in text, text[-2000:]
