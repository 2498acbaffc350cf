"""DRA end to end against `make run` (the demo at 1.36), with real clients: kubectl applies a DeviceClass, a
ResourceClaimTemplate and pods that use it; the in-process scheduler binds the one a free device can serve and
writes the allocation to its claim, the other gets FailedScheduling and its page names the selector that failed.
Then the real kube-scheduler v1.36.2, pointed at the same simulated cluster through its Kubernetes API (a cluster
token's kubeconfig), schedules DRA pods of its own profile there: its PreBind writes the claims' allocation, its
events reach the API, and its FailedScheduling text is the in-process scheduler's."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request

import pytest
import yaml

from tests.envtest import require_assets

from .conftest import ROOT, free_port, wait_for
from .test_demo_restart import _env, make_run

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl")
REAL_PROFILE = "kube-scheduler-v1-36"
DRIVER = "gpu.example.com"
NO_DEVICE_MODEL = "z9"


def _template(name: str, selector: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "walk"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "walk-gpu", "selectors": [{"cel": {"expression": selector}}]}}]}}}}


def _pod(name: str, template: str, scheduler: str = "default-scheduler") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "walk"},
            "spec": {"schedulerName": scheduler,
                     "containers": [{"name": "c", "image": "registry.example/cuda:12",
                                     "resources": {"claims": [{"name": "gpu"}],
                                                   "requests": {"cpu": "500m", "memory": "1Gi"}}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                     "tolerations": [{"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}


OBJECTS = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "walk"}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "walk-gpu"},
     "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
    _template("a100", f'device.attributes["{DRIVER}"].model == "a100"'),
    _template("no-device", f'device.attributes["{DRIVER}"].model == "{NO_DEVICE_MODEL}"'),
]


class Walk:
    """The running `make run`, its kubeconfig and kubectl."""

    def __init__(self, tmp, port: int):
        self.tmp, self.port = tmp, port
        self.kubeconfig = tmp / "kubeconfig"
        self.kubeconfig.write_text(subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "clustertoken", "demo", "--server", f"http://127.0.0.1:{port}"],
            cwd=ROOT, env=_env(tmp), check=True, capture_output=True, text=True).stdout)

    def kubectl(self, *args, stdin: str | None = None) -> str:
        done = subprocess.run(["kubectl", f"--kubeconfig={self.kubeconfig}", *args], input=stdin,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def apply(self, *objects) -> None:
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))

    def get(self, *args) -> dict:
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def events(self, pod: str, reason: str) -> list:
        return self.get("events", "-n", "walk", f"--field-selector=involvedObject.name={pod},reason={reason}")["items"]

    def failed_message(self, pod: str) -> str:
        found = wait_for(lambda: self.events(pod, "FailedScheduling"), 60, 0.5, f"FailedScheduling of {pod}")
        return found[0]["message"]

    def bound(self, pod: str) -> dict:
        return wait_for(lambda: (p := self.get("pod", "-n", "walk", pod))["spec"].get("nodeName") and p, 60, 0.5,
                        f"{pod} bound")

    def page(self, path: str) -> str:
        """A page as a signed-in admin (a session made in the server's database)."""
        code = ("from importlib import import_module\n"
                "from django.conf import settings\n"
                "from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model\n"
                "u = get_user_model().objects.filter(username='walker').first() or "
                "get_user_model().objects.create_superuser('walker', 'walker@example.com', None)\n"
                "s = import_module(settings.SESSION_ENGINE).SessionStore(); s[SESSION_KEY] = str(u.pk)\n"
                "s[BACKEND_SESSION_KEY] = 'django.contrib.auth.backends.ModelBackend'\n"
                "s[HASH_SESSION_KEY] = u.get_session_auth_hash(); s.create()\n"
                "print(settings.SESSION_COOKIE_NAME, s.session_key)")
        name, key = subprocess.run([sys.executable, str(ROOT / "manage.py"), "shell", "-c", code], cwd=ROOT,
                                   env=_env(self.tmp), check=True, capture_output=True, text=True).stdout.split()[-2:]
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers={"Cookie": f"{name}={key}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.read().decode()


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    tmp, port = tmp_path_factory.mktemp("dra-walk"), free_port()
    with make_run(tmp, port, 1):
        w = Walk(tmp, port)
        w.apply(*OBJECTS)
        yield w


def test_kubectl_walk_a_free_device_is_allocated_and_an_impossible_claim_is_explained(walk):
    walk.apply(_pod("trainer", "a100"), _pod("no-device", "no-device"))
    node = walk.bound("trainer")["spec"]["nodeName"]
    claim = yaml.safe_load(walk.kubectl("get", "resourceclaim", "-n", "walk", "trainer-gpu", "-o", "yaml"))
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert (result["driver"], result["pool"], result["request"]) == (DRIVER, node, "gpu")
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer",
                                               "uid": walk.get("pod", "-n", "walk", "trainer")["metadata"]["uid"]}]
    slices = walk.get("resourceslices", f"--field-selector=spec.nodeName={node}")["items"]
    device = next(d for s in slices for d in s["spec"]["devices"] if d["name"] == result["device"])
    assert device["attributes"]["model"] == {"string": "a100"}   # the device the selector asked for

    message = walk.failed_message("no-device")
    nodes = len(walk.get("nodes")["items"])
    assert message.startswith(f"0/{nodes} nodes are available: ") and " cannot allocate all claims" in message
    assert message.endswith(f"still not schedulable, preemption: 0/{nodes} nodes are available: {nodes} "
                            f"Preemption is not helpful for scheduling.")
    assert message in walk.kubectl("describe", "pod", "-n", "walk", "no-device").replace("\n ", " ")
    html = walk.page("/clusters/demo/pods/walk/no-device/")
    assert "claim selector #0 false" in html and f"{DRIVER}/model=a100" in html


def test_the_real_kube_scheduler_v1_36_schedules_claims_in_a_simulated_cluster(walk):
    binary = require_assets() / "kube-scheduler"
    config = walk.tmp / "scheduler.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(walk.kubeconfig)}, "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": REAL_PROFILE}]}))
    log = open(walk.tmp / "kube-scheduler.log", "w")
    proc = subprocess.Popen([str(binary), f"--config={config}", "--secure-port=0", "-v=2"], stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        walk.apply(_pod("kube-a100", "a100", REAL_PROFILE), _pod("kube-no-device", "no-device", REAL_PROFILE),
                   _pod("own-no-device", "no-device"))
        pod = walk.bound("kube-a100")
        node = pod["spec"]["nodeName"]
        claim = walk.get("resourceclaim", "-n", "walk", "kube-a100-gpu")
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert (result["pool"], claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]
                ["matchFields"][0]["values"]) == (node, [node])
        assert claim["status"]["reservedFor"][0]["uid"] == pod["metadata"]["uid"]
        assert "resource.kubernetes.io/delete-protection" in claim["metadata"]["finalizers"]
        (scheduled,) = wait_for(lambda: walk.events("kube-a100", "Scheduled"), 30, 0.5, "kube's Scheduled event")
        assert scheduled["message"] == f"Successfully assigned walk/kube-a100 to {node}"
        assert walk.failed_message("kube-no-device") == walk.failed_message("own-no-device")
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
