"""Vectors of the real kube-scheduler v1.36.2 on pods with pod-level resources and pods resized in place.

Each scenario below runs on a fresh real control plane (``tests/envtest.py``: kube-apiserver, etcd and
kube-scheduler at ``-v=10``, v1.36's default feature gates): its nodes are made Ready, its bound pods created on
their nodes with the status a kubelet resizing them would write (``status.containerStatuses[].resources`` and
``allocatedResources``, pod-level ``status.resources``, the PodResizePending / PodResizeInProgress conditions),
then its one pending pod is created and the real scheduler decides. What the apiserver stored is written as
``NAME.scenario.json`` and kube's decision as ``NAME.expected.json``, in the format of
``../shared/golden-v136/README.md`` (binding, FailedScheduling message, every plugin's weighted score per node from
the ``Plugin scored node for pod`` log lines), which ``tests.conformance.golden_v136`` compares.

    KUBEBUILDER_ASSETS=/root/.cache/schedscope-envtest/v1.36.2 \\
        python -m tests.conformance.pod_resources_oracle tests/golden/v136-pod-resources
"""
from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

from tests.envtest import ControlPlane, add_ready_node, ensure_namespace

NAMESPACE = "default"
SCORE_LINE = re.compile(r'"Plugin scored node for pod" pod="([^"]+)" plugin="([^"]+)" node="([^"]+)" score=(\d+)')


def container(name: str, requests=None, limits=None, image: str = "registry.k8s.io/pause:3.10") -> dict:
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": image, "resources": res}


def pod(name: str, containers, resources=None, node: str = "", priority_class: str = "") -> dict:
    spec = {"containers": containers, "terminationGracePeriodSeconds": 0}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if resources:
        spec["resources"] = resources
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}


def resized(name: str, spec_cpu: str, actuated_cpu: str, allocated_cpu: str, condition=None) -> dict:
    """The status of a running one-container pod whose kubelet reports ``actuated_cpu`` / ``allocated_cpu``."""
    status = {"phase": "Running",
              "containerStatuses": [{"name": name, "image": "registry.k8s.io/pause:3.10", "imageID": "",
                                     "ready": True, "restartCount": 0, "started": True,
                                     "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
                                     "allocatedResources": {"cpu": allocated_cpu},
                                     "resources": {"requests": {"cpu": actuated_cpu}}}],
              "conditions": []}
    if condition:
        status["conditions"].append(dict(condition, status="True", lastTransitionTime="2026-01-01T00:00:00Z"))
    return status


RUNNING = {"phase": "Running"}

# name -> (description, nodes [(name, cpu, memory)], bound pods [(pod, status)], pending pod)
SCENARIOS = {
    "plr01-pod-level-requests": (
        "Pod-level requests (spec.resources) count instead of the containers' sum, on the node's pods and the "
        "incoming pod: n1 has a pod whose pod-level cpu 2 is above its containers' 1.",
        [("n1", "4", "16Gi"), ("n2", "4", "16Gi"), ("n3", "8", "32Gi")],
        [(pod("busy", [container("app", {"cpu": "1", "memory": "1Gi"})],
              {"requests": {"cpu": "2", "memory": "4Gi"}}, node="n1"), RUNNING)],
        pod("web", [container("app", {"cpu": "500m"}), container("sidecar")],
            {"requests": {"cpu": "2500m", "memory": "1Gi"}})),
    "plr02-pod-level-too-large": (
        "A pod-level cpu request above every node's allocatable: Insufficient cpu, unresolvable at 1.36.",
        [("n1", "4", "16Gi"), ("n2", "4", "16Gi")],
        [],
        pod("huge", [container("app", {"cpu": "1"})], {"requests": {"cpu": "5"}})),
    "plr03-pod-level-memory-only": (
        "Pod-level memory only: cpu comes from the containers (100m each for scoring when they request none).",
        [("n1", "4", "8Gi"), ("n2", "2", "8Gi")],
        [(pod("cache", [container("a"), container("b")], {"requests": {"memory": "3Gi"}}, node="n1"), RUNNING),
         (pod("worker", [container("a", {"cpu": "1"})], {"requests": {"memory": "1Gi"}}, node="n2"), RUNNING)],
        pod("api", [container("a"), container("b", {"memory": "512Mi"})], {"requests": {"memory": "2Gi"}})),
    "rsz01-resize-in-progress-up": (
        "A pod being resized up (spec cpu 3, actuated and allocated 3 while the spec said 1 before): n1 counts 3.",
        [("n1", "4", "16Gi"), ("n2", "4", "16Gi")],
        [(pod("growing", [container("app", {"cpu": "3"})], node="n1"),
          resized("app", "3", "3", "3", {"type": "PodResizeInProgress"}))],
        pod("next", [container("app", {"cpu": "1500m"})])),
    "rsz02-resize-deferred": (
        "A resize up that the kubelet deferred (PodResizePending Deferred): the larger spec counts already.",
        [("n1", "4", "16Gi"), ("n2", "4", "16Gi")],
        [(pod("waiting", [container("app", {"cpu": "3"})], node="n1"),
          resized("app", "3", "1", "1", {"type": "PodResizePending", "reason": "Deferred",
                                         "message": "Node didn't have enough capacity"}))],
        pod("next", [container("app", {"cpu": "1500m"})])),
    "rsz03-resize-infeasible": (
        "A resize up the node can never give (PodResizePending Infeasible): only what is actuated or allocated "
        "counts.",
        [("n1", "4", "16Gi"), ("n2", "4", "16Gi")],
        [(pod("stuck", [container("app", {"cpu": "3"})], node="n1"),
          resized("app", "3", "1", "1", {"type": "PodResizePending", "reason": "Infeasible",
                                         "message": "Node didn't have enough capacity"}))],
        pod("next", [container("app", {"cpu": "1500m"})])),
    "rsz04-resize-down-not-actuated": (
        "A resize down not actuated yet (spec 1, still running with 3): the larger actuated value counts.",
        [("n1", "4", "16Gi"), ("n2", "4", "16Gi")],
        [(pod("shrinking", [container("app", {"cpu": "1"})], node="n1"),
          resized("app", "1", "3", "1", {"type": "PodResizeInProgress"}))],
        pod("next", [container("app", {"cpu": "1500m"})])),
    "plr04-preempt-pod-level-victim": (
        "Preemption on a node whose low-priority pod holds its pod-level cpu 3 (its container asks 1): removing it "
        "frees 3.",
        [("n1", "4", "16Gi")],
        [(pod("batch", [container("app", {"cpu": "1"})], {"requests": {"cpu": "3"}}, node="n1"), RUNNING)],
        pod("urgent", [container("app", {"cpu": "2"})], priority_class="high")),
    "rsz05-pod-level-resize": (
        "A pod whose pod-level cpu is being resized down (spec 1, still running with 3): its pod-level status "
        "resources count (InPlacePodLevelResourcesVerticalScaling).",
        [("n1", "4", "16Gi"), ("n2", "4", "16Gi")],
        [(pod("pooled", [container("app", {"cpu": "500m"})], {"requests": {"cpu": "1"}}, node="n1"),
          dict(resized("app", "500m", "500m", "500m", {"type": "PodResizeInProgress"}),
               resources={"requests": {"cpu": "3"}}, allocatedResources={"cpu": "1"}))],
        pod("next", [container("app", {"cpu": "1500m"})])),
}


def _raw(response) -> dict:
    return json.loads(response.data)


def _stored(core, kind: str, name: str) -> dict:
    if kind == "Node":
        obj = _raw(core.read_node(name, _preload_content=False))
    else:
        obj = _raw(core.read_namespaced_pod(name, NAMESPACE, _preload_content=False))
    obj.setdefault("apiVersion", "v1")
    obj.setdefault("kind", kind)
    obj["metadata"].pop("managedFields", None)
    return obj


def _watched_states(api, core, name: str, resource_version: str):
    """The pending pod's states as the apiserver wrote them after ``resource_version``, in order (a watch, so
    that a failed attempt is seen even when the pod is bound right after)."""
    from kubernetes import watch
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_pod, NAMESPACE, field_selector=f"metadata.name={name}",
                          resource_version=resource_version, timeout_seconds=120):
        yield api.sanitize_for_serialization(event["object"])


def _failed(state: dict):
    """The PodScheduled=False condition's message of a pod state, or None."""
    for cond in (state.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False" and cond.get("message"):
            return cond["message"]
    return None


def _decision(api, core, created: dict, log: Path, bound_names) -> dict:
    """The pending pod's first decision: bound node or FailedScheduling message (and the node it was nominated to,
    with the victims: the bound pods that went before it was bound), scores."""
    name = created["metadata"]["name"]
    key = f"{NAMESPACE}/{name}"
    bound = message = nominated = after = None
    for state in _watched_states(api, core, name, created["metadata"]["resourceVersion"]):
        node = state["spec"].get("nodeName")
        if message is None and node:
            bound = node
            break
        if message is None:
            message = _failed(state)
            nominated = (state.get("status") or {}).get("nominatedNodeName") if message else None
            if message and not nominated:
                break
        elif node:
            after = node
            break
    if bound is None and message is None:
        raise TimeoutError(f"no decision on {name}")
    scores = {}   # an attempt that found no node scored none (the log's later lines are later attempts')
    for pod_key, plugin, node, score in SCORE_LINE.findall(log.read_text(errors="replace")) if bound else ():
        if pod_key == key:
            scores.setdefault(node, {})[plugin] = {"weighted": int(score)}
    for per_plugin in scores.values():
        per_plugin["_total"] = sum(v["weighted"] for v in per_plugin.values())
    top = max((s["_total"] for s in scores.values()), default=None)
    decision = {"pod": key, "priority": created["spec"].get("priority", 0), "bound_node": bound,
                "unschedulable": not bound, "message": message, "scoring_run_by_scheduler": bool(scores),
                "feasible_nodes": sorted(scores) if scores else ([bound] if bound else []),
                "top_nodes": sorted(n for n, s in scores.items() if s["_total"] == top) if scores else
                ([bound] if bound else []),
                "top_score": top, "scores": scores}
    if nominated:
        left = {q["metadata"]["name"] for q in json.loads(core.list_namespaced_pod(
            NAMESPACE, _preload_content=False).data)["items"]}
        decision["preemption"] = {"nominated_node": nominated, "bound_node_after": after,
                                  "victims": sorted(f"{NAMESPACE}/{b}" for b in bound_names if b not in left)}
    return decision


def run_scenario(name: str, work: Path) -> tuple[dict, dict]:
    from kubernetes import client as kclient
    from kubernetes import config as kconfig
    description, nodes, bound, pending = SCENARIOS[name]
    cp = ControlPlane(work / name, scheduler=True, scheduler_v=10).start()
    try:
        api = kconfig.new_client_from_config(str(cp.kubeconfig))
        core = kclient.CoreV1Api(api)
        ensure_namespace(api, NAMESPACE)
        kclient.SchedulingV1Api(api).create_priority_class(
            {"metadata": {"name": "high"}, "value": 1000, "description": "the preemptors of these scenarios"})
        for node, cpu, memory in nodes:
            add_ready_node(api, node, cpu=cpu, memory=memory)
        for body, status in bound:
            core.create_namespaced_pod(NAMESPACE, body)
            core.patch_namespaced_pod_status(body["metadata"]["name"], NAMESPACE, {"status": status})
        # one pod informer: the scheduler sees these writes before the pending pod's creation
        scenario = {"name": name, "description": description, "kubeVersion": "1.36",
                    "nodes": [_stored(core, "Node", n) for n, _c, _m in nodes],
                    "pods": [_stored(core, "Pod", b["metadata"]["name"]) for b, _s in bound]}
        created = _raw(core.create_namespaced_pod(NAMESPACE, pending, _preload_content=False))
        decision = _decision(api, core, created, cp.scheduler_log, [b["metadata"]["name"] for b, _s in bound])
        stored_pending = _stored(core, "Pod", pending["metadata"]["name"])
        stored_pending["spec"].pop("nodeName", None)
        stored_pending["status"] = {"phase": "Pending"}
        scenario["pending"] = [stored_pending]
        expected = {"scenario": name, "source_scenario": name, "queue_index": 0, "kubernetes_version": "v1.36.2",
                    "oracle": "live", "profile": "default-scheduler", "decisions": [decision]}
        return scenario, expected
    finally:
        cp.stop()


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(__doc__)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    names = args[1:] or list(SCENARIOS)
    with tempfile.TemporaryDirectory(prefix="pod-resources-oracle-") as work:
        for name in names:
            scenario, expected = run_scenario(name, Path(work))
            (out / f"{name}.scenario.json").write_text(json.dumps(scenario, indent=1) + "\n")
            (out / f"{name}.expected.json").write_text(json.dumps(expected, indent=1) + "\n")
            d = expected["decisions"][0]
            print(f"{name}: {d['bound_node'] or d['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
