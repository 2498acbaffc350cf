"""The scheduler_perf workload shapes of ../shared/docs/bench-workloads.md, as Kubernetes API dicts."""
from __future__ import annotations

POD_CPU, POD_MEMORY = "100m", "500Mi"
# Templates that change only the pod's resources and priority (scheduler_perf pod-large-cpu, pod-low-priority,
# pod-high-priority): template -> (cpu request, limits equal to the requests, priority).
RESOURCE_TEMPLATES = {"large-cpu": ("9", False, 0), "low-priority": ("900m", True, 0),
                      "high-priority": ("3000m", True, 10)}


def make_node(i: int, zones) -> dict:
    name = f"node-{i:05d}"
    labels = {"kubernetes.io/hostname": name}
    if zones:
        labels["topology.kubernetes.io/zone"] = zones[i % len(zones)]
    res = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": name, "labels": labels},
            "spec": {}, "status": {"capacity": dict(res), "allocatable": dict(res),
                                   "conditions": [{"type": "Ready", "status": "True"}]}}


def make_pod(name: str, namespace: str, template: str) -> dict:
    """A pod of the scheduler_perf pod-default template plus the named template's additions."""
    cpu, limits, priority = RESOURCE_TEMPLATES.get(template, (POD_CPU, True, 0))
    resources = {"requests": {"cpu": cpu, "memory": POD_MEMORY}}
    if limits:
        resources["limits"] = {"cpu": cpu, "memory": POD_MEMORY}
    container = {"name": "pause", "image": "registry.k8s.io/pause:3.9",
                 "ports": [{"containerPort": 80, "protocol": "TCP"}], "resources": resources}
    spec = {"containers": [container], "schedulerName": "default-scheduler", "priority": priority}
    labels = {}
    if template == "low-priority":
        spec["terminationGracePeriodSeconds"] = 0
    if template in ("node-affinity", "node-affinity-zone1"):
        zones = ["zone1", "zone2"] if template == "node-affinity" else ["zone1"]
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": zones}]}]}}}
    elif template == "anti-affinity":
        labels = {"color": "green"}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": "kubernetes.io/hostname",
             "namespaces": ["sched-1", "sched-0"]}]}}
    elif template == "pod-affinity":
        labels = {"color": "blue"}
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"color": "blue"}}, "topologyKey": "topology.kubernetes.io/zone",
             "namespaces": ["sched-1", "sched-0"]}]}}
    elif template.startswith("spread"):
        labels = {"color": "blue"}
        spec["topologySpreadConstraints"] = [{
            "maxSkew": int(template.split("-")[1]), "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"color": "blue"}}}]
    elif template != "default" and template not in RESOURCE_TEMPLATES:
        raise ValueError(f"unknown pod template {template!r}")
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}", "labels": labels},
            "spec": spec, "status": {"phase": "Pending"}}


ZONES3 = ["zone1", "zone2", "zone3"]
MOONS = ["moon-1", "moon-2", "moon-3"]

# name: (nodes, zones, (init count, template, namespace), (measured count, template, namespace))
WORKLOADS = {
    "SchedulingBasic_5000Nodes_10000Pods": (5000, ZONES3, (1000, "default", "default"), (10000, "default", "default")),
    "SchedulingBasic_500Nodes": (500, ZONES3, (1000, "default", "default"), (2000, "default", "default")),
    "SchedulingNodeAffinity_5000Nodes": (5000, ["zone1"], (5000, "node-affinity", "default"),
                                         (1000, "node-affinity", "default")),
    "NodeAffinity3Zones_5000Nodes": (5000, ZONES3, (5000, "node-affinity-zone1", "default"),
                                     (1000, "node-affinity-zone1", "default")),
    "SchedulingPodAntiAffinity_5000Nodes": (5000, ZONES3, (1000, "anti-affinity", "sched-0"),
                                            (1000, "anti-affinity", "sched-1")),
    "SchedulingPodAffinity_5000Nodes": (5000, ["zone1"], (5000, "pod-affinity", "sched-0"),
                                        (1000, "pod-affinity", "sched-1")),
    "TopologySpreading_5000Nodes": (5000, MOONS, (5000, "default", "default"), (2000, "spread-5", "default")),
    "TopologySpreadingSkew1_5000Nodes": (5000, MOONS, (1000, "default", "default"), (1000, "spread-1", "default")),
    # Init pods asking for 9 cpus (nodes have 4) stay in unschedulablePods while the measured pods schedule.
    "Unschedulable_5000Nodes_200InitPods": (5000, None, (200, "large-cpu", "default"),
                                            (5000, "default", "default")),
    # 2000 low-priority pods of 900m fill the 500 nodes (4 each); each high-priority pod of 3 cpus preempts 3.
    "PreemptionBasic_500Nodes": (500, None, (2000, "low-priority", "default"), (500, "high-priority", "default")),
}


def build(name: str, nodes: int | None = None, pods: int | None = None, init_pods: int | None = None):
    """(node dicts, init pod dicts, measured pod dicts) for a workload, optionally resized."""
    n, zones, (ic, it, ins), (mc, mt, mns) = WORKLOADS[name]
    n = nodes or n
    if pods:
        mc = pods
    if init_pods is not None:
        ic = init_pods
    node_objs = [make_node(i, zones) for i in range(n)]
    init = [make_pod(f"init-{i}", ins, it) for i in range(ic)]
    measured = [make_pod(f"pod-{i}", mns, mt) for i in range(mc)]
    return node_objs, init, measured
