"""The scheduler_perf workload shapes of ../shared/docs/bench-workloads.md, as Kubernetes API dicts."""
from __future__ import annotations

import dataclasses

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


# -- DRA: test/integration/scheduler_perf/dra/performance-config.yaml (v1.36.2) and its templates -------------------
DRA_DRIVER = "test-driver.cdi.k8s.io"
DRA_CLASS = "test-class"
DRA_CLAIM_TEMPLATE = "test-claim-template"
STEADY_BATCH = 10   # SteadyState's createPods count: pods created, scheduled and deleted together


@dataclasses.dataclass(frozen=True)
class DRAWorkload:
    """One workload of upstream's DRA test cases. Every node is a node-with-dra-test-driver with one ResourceSlice
    of ``claims_per_node`` devices (createResourceDriver's maxClaimsPerNode). ``pods``: "template" pods each ask one
    device through the ResourceClaimTemplate; "claim" pods share the claim test-claim-<index/5> with four others
    (one claim per five pods in each namespace). ``init_claims``: claims allocated on random nodes before the
    workload starts (allocResourceClaims). A steady workload (``steady_seconds``) creates STEADY_BATCH pods,
    waits until they are scheduled, deletes them and starts again, for that long. ``thresholds``: upstream's dra
    thresholds in pods/s (SchedulerQueueingHints off, on), or None where it sets none."""

    nodes: int
    claims_per_node: int
    pods: str
    init_pods: int = 0
    measure_pods: int = 0
    init_claims: int = 0
    steady_seconds: float = 0.0
    thresholds: tuple | None = None


DRA_WORKLOADS = {
    # SchedulingWithResourceClaimTemplate/5000pods_500nodes and .../5000pods_500nodes_QueueingHintsEnabled
    "SchedulingWithResourceClaimTemplate_5000pods_500nodes": DRAWorkload(
        500, 10, "template", init_pods=2500, measure_pods=2500, thresholds=(40, 56)),
    # SteadyStateClusterResourceClaimTemplate/{empty,half,full}_500nodes[_QueueingHintsEnabled]
    "SteadyStateClusterResourceClaimTemplate_empty_500nodes": DRAWorkload(
        500, 10, "template", steady_seconds=10.0, thresholds=(64, 64)),
    "SteadyStateClusterResourceClaimTemplate_half_500nodes": DRAWorkload(
        500, 10, "template", init_claims=2500, steady_seconds=10.0, thresholds=(70, 60)),
    "SteadyStateClusterResourceClaimTemplate_full_500nodes": DRAWorkload(
        500, 10, "template", init_claims=4990, steady_seconds=10.0, thresholds=(60, 60)),
    # SchedulingWithResourceClaim/5000pods_500nodes (not labelled performance upstream: no threshold)
    "SchedulingWithResourceClaim_5000pods_500nodes": DRAWorkload(
        500, 2, "claim", init_pods=2500, measure_pods=2500),
}


def make_dra_node(i: int) -> dict:
    """templates/node-with-dra-test-driver.yaml (generateName scheduler-perf-dra-; allocatable = capacity, as the
    API server defaults it)."""
    name = f"scheduler-perf-dra-{i:05d}"
    res = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": name, "labels": {"node-with-dra": "true"}},
            "spec": {}, "status": {"capacity": dict(res), "allocatable": dict(res),
                                   "conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}}


def make_resource_slice(node_name: str, capacity: int) -> dict:
    """createResourceDriver's resourceSlice: one slice per node, ``capacity`` identical devices instance-<i>."""
    devices = [{"name": f"instance-{i}",
                "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                               "driverVersion": {"version": "1.2.3"}, "dra.example.com/numa": {"int": i}},
                "capacity": {"memory": {"value": "1Gi"}}} for i in range(capacity)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": node_name},
            "spec": {"driver": DRA_DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 0, "resourceSliceCount": 1}, "devices": devices}}


def make_device_class() -> dict:
    """templates/deviceclass.yaml."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRA_CLASS},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}}


def _claim_spec() -> dict:
    return {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": DRA_CLASS}}]}}


def make_claim_template(namespace: str) -> dict:
    """templates/resourceclaimtemplate.yaml."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": DRA_CLAIM_TEMPLATE, "namespace": namespace}, "spec": {"spec": _claim_spec()}}


def make_claim(i: int, namespace: str) -> dict:
    """templates/resourceclaim.yaml: test-claim-<i>."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"test-claim-{i}", "namespace": namespace, "uid": f"{namespace}-test-claim-{i}"},
            "spec": _claim_spec()}


def make_dra_pod(i: int, namespace: str, pods: str) -> dict:
    """templates/pod-with-claim-template.yaml ("template", its generateName test-dra given index <i>) or
    templates/pod-with-claim-ref.yaml ("claim": test-dra-<i> sharing test-claim-<i/5>)."""
    if pods == "template":
        name, image, pod_claim = f"test-dra{i}", "registry.k8s.io/pause:3.10.1", {
            "name": "resource", "resourceClaimTemplateName": DRA_CLAIM_TEMPLATE}
    else:
        name, image, pod_claim = f"test-dra-{i}", "registry.k8s.io/pause:3.9", {
            "name": "resource", "resourceClaimName": f"test-claim-{i // 5}"}
    container = {"name": "pause", "image": image, "resources": {"claims": [{"name": "resource"}]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}"},
            "spec": {"containers": [container], "resourceClaims": [pod_claim],
                     "schedulerName": "default-scheduler", "priority": 0},
            "status": {"phase": "Pending"}}


@dataclasses.dataclass
class DRABuild:
    """A DRA workload's objects in the order upstream creates them: nodes, slices and class first, then the init
    namespace's objects and pods, then the measured namespace's."""

    workload: DRAWorkload
    nodes: list
    cluster_objects: dict   # SimulatedCluster objects: the DeviceClass and the ResourceSlices
    init_objects: list      # (kind, raw) in namespace init
    init: list
    measure_objects: list   # (kind, raw) in namespace test
    measured: list          # pods of a one-shot workload; empty for a steady one (made batch by batch)


def build_dra(name: str, nodes: int | None = None, pods: int | None = None, init_pods: int | None = None,
              init_claims: int | None = None) -> DRABuild:
    """A DRA workload, optionally resized (``pods``: measured pods; claims follow the pods of a "claim" one;
    ``init_claims``: the claims allocated up front)."""
    w = DRA_WORKLOADS[name]
    if init_claims is not None:
        w = dataclasses.replace(w, init_claims=init_claims)
    n = nodes or w.nodes
    ic = w.init_pods if init_pods is None else init_pods
    mc = pods or w.measure_pods
    node_objs = [make_dra_node(i) for i in range(n)]
    objects = {"deviceclasses": [make_device_class()],
               "resourceslices": [make_resource_slice(nd["metadata"]["name"], w.claims_per_node) for nd in node_objs]}
    if w.pods == "claim":
        init_objects = [("ResourceClaim", make_claim(i, "init")) for i in range(-(-ic // 5))]
        measure_objects = [("ResourceClaim", make_claim(i, "test")) for i in range(-(-mc // 5))]
    else:
        init_objects = [("ResourceClaim", make_claim(i, "init")) for i in range(w.init_claims)]
        if ic:
            init_objects.append(("ResourceClaimTemplate", make_claim_template("init")))
        measure_objects = [("ResourceClaimTemplate", make_claim_template("test"))]
    init = [make_dra_pod(i, "init", w.pods) for i in range(ic)]
    measured = [] if w.steady_seconds else [make_dra_pod(i, "test", w.pods) for i in range(mc)]
    return DRABuild(w, node_objs, objects, init_objects, init, measure_objects, measured)
