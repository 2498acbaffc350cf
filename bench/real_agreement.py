"""Agreement with the real kube-scheduler: the real kube-scheduler v1.36 schedules a real v1.36 kube-apiserver
(tests/envtest.py: ``$KUBEBUILDER_ASSETS`` or ../shared/envtest) with its default profile, and Schedscope's
observe mode (``ShadowScheduler`` over a read-only ``KubeCluster``, the same default profile at 1.36) runs beside
it and judges every binding and explains every pod kube reports unschedulable.

    python bench/real_agreement.py [--scenario quiet|demo|both] [--runs 1] [--json]

``quiet``: 4 nodes of 2-8 cpu and 4-16 Gi in two zones, 24 pods of 100m to 1.5 cpu made one at a time, each
bound before the next. ``demo``: the dashboard's demo at 1.36 (53 nodes: 36 general, 5 high-memory, 6 with
``nvidia.com/gpu``, 3 with DRA GPUs; 60 pods already bound; then its 54 pending pods made in one burst, in their
order), with the resourceclaim controller's work done here (each template's claim made and named in the pod's
status, as kube-controller-manager would). Reported per run: the bindings judged and how many agree exactly and
within ties (kube's node had Schedscope's best score), and the pods kube reported unschedulable with how many of
Schedscope's messages equal kube's, each the answer to kube's latest report of the pod (observe mode looks again
when the cluster changes while a pod waits, but kube does not retry on every change: its message may then be
older than the cluster); every disagreement is listed.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubernetes import client as kclient  # noqa: E402
from kubernetes import config as kconfig  # noqa: E402

from dashboard.services.demo import demo_scenario  # noqa: E402
from scheduler_core.cluster.kube import KubeCluster  # noqa: E402
from scheduler_core.config import default_config  # noqa: E402
from scheduler_core.dra.claims import claims_from_templates  # noqa: E402
from scheduler_core.plugins.registry import in_tree_registry  # noqa: E402
from scheduler_core.shadow import ShadowScheduler  # noqa: E402
from tests.envtest import ControlPlane, add_ready_node, ensure_namespace, require_assets  # noqa: E402

VERSION = "1.36"
SETTLE = 5.0          # seconds without a new binding, report or observation before a run counts as done
HIGH_PRIORITY = "demo-high"


def _call(admin, method: str, path: str, body=None, content_type: str = "application/json"):
    resp = admin.call_api(path, method, body=body, auth_settings=["BearerToken"], _preload_content=False,
                          header_params={"Accept": "application/json", "Content-Type": content_type})
    return json.loads(resp.data)


class Observer:
    """Observe mode beside kube-scheduler: a read-only KubeCluster and a ShadowScheduler, pumped on demand."""

    def __init__(self, plane):
        self.kube = KubeCluster(kubeconfig=str(plane.kubeconfig), read_only=True, watch_failed_scheduling=True,
                                kube_version=VERSION, backoff_initial=0.2)
        self.kube.start(wait=True)
        self.shadow = ShadowScheduler(self.kube, default_config(in_tree_registry(), kube_version=VERSION),
                                      tie_break="name", order_window=1.0, reobserve_seconds=1.0)
        self.answers = {}    # pod key -> the Observation made for kube's latest report of it
        self.last_activity = time.monotonic()

    def pump(self, timeout: float = 0.1) -> None:
        n = self.kube.pump(timeout) + self.shadow.judge_due()
        for obs in self.shadow.observe_pending():
            if obs.answers_report:   # not a later look on a cluster changed since kube's attempt
                self.answers[obs.pod] = obs
            n += 1
        if n:
            self.last_activity = time.monotonic()

    def settle(self, done, timeout: float = 300.0) -> None:
        """Pump until ``done()`` and nothing has happened for SETTLE seconds."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.pump()
            if done() and time.monotonic() - self.last_activity >= SETTLE:
                self.shadow.judge_bindings()
                return
        waiting = {k: (w.reported, w.kube_message[:60]) for k, w in self.shadow.waiting.items()}
        raise RuntimeError(f"the run did not settle: waiting {waiting}, answered {sorted(self.answers)}")

    def result(self, pods) -> dict:
        shadow = self.shadow
        bound = {p.key for p in pods if p.node_name}
        observed = {k: o for k, o in self.answers.items() if k not in bound}
        return {"bindings": shadow.decisions, "agreed": shadow.agreed, "within_ties": shadow.agreed_within_ties,
                "disagreements": [{"pod": r.pod, "kube": r.actual, "schedscope": r.shadow,
                                   "kube_score": r.actual_score, "schedscope_score": r.shadow_score,
                                   "reasons": r.actual_reasons} for r in shadow.records if not r.within_ties],
                "unschedulable": len(observed),
                "messages_equal": sum(o.agree for o in observed.values()),
                "message_differences": [{"pod": k, "kube": o.kube_message, "schedscope": o.message}
                                        for k, o in observed.items() if not o.agree]}

    def close(self) -> None:
        self.kube.close()


def quiet(admin, observer: Observer) -> dict:
    core = kclient.CoreV1Api(admin)
    for i, (cpu, memory) in enumerate((("2", "4Gi"), ("4", "8Gi"), ("4", "16Gi"), ("8", "8Gi"))):
        add_ready_node(admin, f"node-{i}", cpu=cpu, memory=memory, labels={"topology.kubernetes.io/zone": f"z{i % 2}"})
    sizes = (("100m", "128Mi"), ("250m", "512Mi"), ("500m", "1Gi"), ("1", "256Mi"), ("300m", "2Gi"),
             ("750m", "768Mi"), ("1500m", "1Gi"), ("200m", "3Gi"))
    for i in range(24):
        cpu, memory = sizes[i % len(sizes)]
        core.create_namespaced_pod("default", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"q{i:02d}"},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}})
        observer.settle(lambda n=f"q{i:02d}": (p := observer.kube.get_pod("default", n)) is not None
                        and (p.node_name or f"default/{n}" in observer.answers), 120)
    return observer.result(observer.kube.list_pods())


def _create_node(admin, raw: dict) -> None:
    status = raw["status"]
    extra = {k: v for k, v in status["allocatable"].items() if k not in ("cpu", "memory", "pods")}
    add_ready_node(admin, raw["metadata"]["name"], cpu=status["allocatable"]["cpu"],
                   memory=status["allocatable"]["memory"], pods=status["allocatable"].get("pods", "110"),
                   labels=raw["metadata"]["labels"], taints=raw["spec"].get("taints"), extra=extra)


def _pod_body(raw: dict) -> dict:
    """A demo pod as a user creates it: no uid, no status; its priority through a PriorityClass."""
    pod = copy.deepcopy(raw)
    pod["metadata"].pop("uid", None)
    pod.pop("status", None)
    if pod["spec"].pop("priority", None):
        pod["spec"]["priorityClassName"] = HIGH_PRIORITY
    return pod


def demo(admin, observer: Observer) -> dict:
    doc = demo_scenario()
    core = kclient.CoreV1Api(admin)
    pods = doc["pods"] + doc["pending"]
    for ns in sorted({p["metadata"]["namespace"] for p in pods}):
        ensure_namespace(admin, ns)
    _call(admin, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": HIGH_PRIORITY},
        "value": 1000})
    for node in doc["nodes"]:
        _create_node(admin, node)
    for dc in doc["deviceclasses"]:
        _call(admin, "POST", "/apis/resource.k8s.io/v1/deviceclasses", dc)
    for rs in doc["resourceslices"]:
        _call(admin, "POST", "/apis/resource.k8s.io/v1/resourceslices", rs)
    templates = {}
    for t in doc["resourceclaimtemplates"]:
        ns = t["metadata"]["namespace"]
        templates[f'{ns}/{t["metadata"]["name"]}'] = _call(
            admin, "POST", f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates", t)
    for raw in doc["pods"]:    # already bound: nodeName set at create, as a kubelet's static pods or a restore
        core.create_namespaced_pod(raw["metadata"]["namespace"], _pod_body(raw))
    observer.settle(lambda: sum(1 for p in observer.kube.list_pods() if p.node_name) == len(doc["pods"]), 120)
    for raw in doc["pending"]:
        created = admin.sanitize_for_serialization(
            core.create_namespaced_pod(raw["metadata"]["namespace"], _pod_body(raw)))
        with_status, claims = claims_from_templates(created, templates, {})
        ns = created["metadata"]["namespace"]
        for claim in claims:    # the resourceclaim controller's work
            _call(admin, "POST", f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims", claim)
        if claims:
            core.patch_namespaced_pod_status(created["metadata"]["name"], ns,
                                             {"status": {"resourceClaimStatuses":
                                                         with_status["status"]["resourceClaimStatuses"]}})
    names = {f'{p["metadata"]["namespace"]}/{p["metadata"]["name"]}' for p in doc["pending"]}

    def done():
        return all((p := observer.kube.get_pod(*key.split("/"))) is not None
                   and (p.node_name or key in observer.answers) for key in names)
    observer.settle(done, 300)
    return observer.result([p for p in observer.kube.list_pods() if p.key in names])


SCENARIOS = {"quiet": quiet, "demo": demo}


def one_run(name: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"schedscope-agreement-{name}-"))
    plane = ControlPlane(work / "cp", scheduler=True).start()
    try:
        admin = kconfig.new_client_from_config(config_file=str(plane.kubeconfig))
        ensure_namespace(admin, "default")
        observer = Observer(plane)
        try:
            return dict(SCENARIOS[name](admin, observer), scenario=name)
        finally:
            observer.close()
            admin.close()
    finally:
        plane.stop()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenario", choices=("quiet", "demo", "both"), default="both")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    require_assets()
    results = []
    for _ in range(args.runs):
        for name in (("quiet", "demo") if args.scenario == "both" else (args.scenario,)):
            results.append(one_run(name))
            if not args.json:
                r = results[-1]
                print(f'{name}: bindings {r["within_ties"]}/{r["bindings"]} within ties ({r["agreed"]} exact), '
                      f'unschedulable {r["messages_equal"]}/{r["unschedulable"]} messages equal', flush=True)
                for d in r["disagreements"] + r["message_differences"]:
                    print("  ", json.dumps(d), flush=True)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
