"""The scheduler_perf workload shapes of ../shared/docs/bench-workloads.md, as Kubernetes API dicts."""
from __future__ import annotations

POD_CPU, POD_MEMORY = "100m", "500Mi"


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
    container = {"name": "pause", "image": "registry.k8s.io/pause:3.9",
                 "ports": [{"containerPort": 80, "protocol": "TCP"}],
                 "resources": {"requests": {"cpu": POD_CPU, "memory": POD_MEMORY},
                               "limits": {"cpu": POD_CPU, "memory": POD_MEMORY}}}
    spec = {"containers": [container], "schedulerName": "default-scheduler", "priority": 0}
    labels = {}
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
    elif template != "default":
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
}


def build(name: str, nodes: int | None = None, pods: int | None = None):
    """(node dicts, init pod dicts, measured pod dicts) for a workload, optionally resized."""
    n, zones, (ic, it, ins), (mc, mt, mns) = WORKLOADS[name]
    n = nodes or n
    if pods:
        mc = pods
    node_objs = [make_node(i, zones) for i in range(n)]
    init = [make_pod(f"init-{i}", ins, it) for i in range(ic)]
    measured = [make_pod(f"pod-{i}", mns, mt) for i in range(mc)]
    return node_objs, init, measured
