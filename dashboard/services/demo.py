"""The bundled demo scenario: 53 nodes in three zones, GPU nodes with taints (six with nvidia.com/gpu as an extended
resource, three whose GPUs are DRA devices of the DeviceClass gpu.example.com), and a starting set of pods."""
from __future__ import annotations

import random
import uuid

from scheduler_core.versions import LATEST_VERSION

from .workload import pod_manifest, pod_of, pod_template, replica_set

ZONES = ("zone-a", "zone-b", "zone-c")
DRA_DRIVER = "gpu.example.com"
DRA_TAINT = {"key": "example.com/gpu", "value": "true", "effect": "NoSchedule"}
DRA_GPUS = (("a100", "40Gi", 4), ("a100", "80Gi", 4), ("h100", "80Gi", 2))   # model, memory, devices per node


def _node(name, zone, cpu, memory, pods="110", labels=None, taints=None, extra=None):
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    alloc.update(extra or {})
    lab = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": zone,
           "topology.kubernetes.io/region": "demo-1"}
    lab.update(labels or {})
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
            "spec": {}, "status": {"capacity": dict(alloc), "allocatable": alloc,
                                   "conditions": [{"type": "Ready", "status": "True"}]}}
    if taints:
        node["spec"]["taints"] = taints
    return node


def demo_scenario(seed: int = 7) -> dict:
    """Golden-format scenario document (nodes, bound pods, pending pods) at the latest supported Kubernetes
    version."""
    rng = random.Random(seed)
    nodes = []
    for i in range(3):
        nodes.append(_node(f"control-plane-{i + 1}", ZONES[i], "4", "16Gi",
                           labels={"node-role.kubernetes.io/control-plane": ""},
                           taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]))
    for i in range(36):
        zone = ZONES[i % 3]
        labels = {"node-type": "general"}
        if i % 4 == 0:
            labels["disk"] = "ssd"
        nodes.append(_node(f"general-{i + 1:02d}", zone, "8", "32Gi", labels=labels))
    for i in range(5):
        nodes.append(_node(f"highmem-{i + 1}", ZONES[i % 3], "8", "128Gi", labels={"node-type": "highmem"}))
    for i in range(6):
        nodes.append(_node(f"gpu-{i + 1}", ZONES[i % 3], "16", "64Gi", labels={"node-type": "gpu",
                                                                           "accelerator": "nvidia-a100"},
                           taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                           extra={"nvidia.com/gpu": "4"}))
    bound, sets = [], {}
    general = [n["metadata"]["name"] for n in nodes if n["metadata"]["name"].startswith("general-")]
    for i in range(60):
        pod = _replica_set_pod(sets, f"base-{i:03d}", "prod", pod_template(
            "base", rng.choice(("500m", "1", "2")), rng.choice(("1Gi", "2Gi", "4Gi")), {}))
        pod["spec"]["nodeName"] = general[i % len(general)]
        pod["status"] = {"phase": "Running"}
        bound.append(pod)
    pending = [
        pod_manifest("trainer-8gpu", "ml", "trainer", "8", "32Gi", {"gpu": 8, "tolerate_gpu": True}, priority=1000),
        pod_manifest("inference-no-toleration", "ml", "inference", "2", "8Gi", {"gpu": 1}),
        pod_manifest("postgres-nvme", "data", "postgres", "2", "8Gi", {"selector": {"disk": "nvme"}}),
        pod_manifest("analytics-huge", "data", "analytics", "32", "64Gi", {}),
        pod_manifest("redis-highmem", "data", "redis", "2", "96Gi", {"selector": {"node-type": "highmem"}}),
    ]
    for i in range(40):
        pending.append(_replica_set_pod(sets, f"web-{i:03d}", "shop", pod_template(
            "web", rng.choice(("250m", "500m")), rng.choice(("256Mi", "512Mi")), {})))
    for i in range(4):
        pending.append(_replica_set_pod(sets, f"ingress-{i}", "edge",
                                        pod_template("ingress", "250m", "256Mi", {"host_port": 443})))
    dra = _dra_objects()
    nodes += dra.pop("nodes")
    pending += dra.pop("pending")
    return {"name": "demo", "kubeVersion": LATEST_VERSION, "nodes": nodes, "pods": bound, "pending": pending,
            "replicasets": list(sets.values()), **dra}


def _replica_set_pod(sets: dict, name: str, namespace: str, template: dict) -> dict:
    """A pod of the ReplicaSet of ``template`` in ``namespace`` (``sets``: by namespace and name, each made on
    its first pod, its spec.replicas the pods made of it)."""
    rs = replica_set(namespace, template, 0)
    key = (namespace, rs["metadata"]["name"])
    if key not in sets:
        rs["metadata"]["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedscope:demo:ReplicaSet:{key[0]}/{key[1]}"))
        sets[key] = rs
    rs = sets[key]
    rs["spec"]["replicas"] += 1
    return pod_of(rs["spec"]["template"], name, namespace, rs)


def _dra_claim_template(name: str, count: int = 1, model: str = "") -> dict:
    request = {"deviceClassName": DRA_DRIVER, "count": count}
    if model:
        request["selectors"] = [{"cel": {"expression": f'device.attributes["{DRA_DRIVER}"].model == "{model}"'}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}}


def _dra_pod(name: str, template: str) -> dict:
    pod = pod_manifest(name, "ml", "dra-" + template, "2", "8Gi", {})
    pod["spec"]["tolerations"] = [{"key": DRA_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}]
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return pod


def _dra_objects() -> dict:
    """Three tainted nodes whose GPUs are DRA devices (one ResourceSlice each), their DeviceClass, claim templates,
    and pods asking GPUs through them: some the devices can serve, and two they cannot (a model no device has,
    more GPUs than any node holds)."""
    nodes, slices = [], []
    for i, (model, memory, count) in enumerate(DRA_GPUS):
        name = f"dra-gpu-{i + 1}"
        nodes.append(_node(name, ZONES[i % 3], "16", "64Gi", labels={"node-type": "gpu-dra"}, taints=[DRA_TAINT]))
        devices = [{"name": f"gpu-{d}", "attributes": {"model": {"string": model}},
                    "capacity": {"memory": {"value": memory}}} for d in range(count)]
        slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                       "metadata": {"name": f"{name}-{DRA_DRIVER}"},
                       "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                "devices": devices}})
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRA_DRIVER},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}}
    templates = [_dra_claim_template("gpu"), _dra_claim_template("h100", model="h100"),
                 _dra_claim_template("b200", model="b200"), _dra_claim_template("eight-gpus", count=8)]
    pending = [_dra_pod("dra-infer-0", "gpu"), _dra_pod("dra-infer-1", "gpu"), _dra_pod("dra-h100", "h100"),
               _dra_pod("dra-b200", "b200"), _dra_pod("dra-eight-gpus", "eight-gpus")]
    return {"nodes": nodes, "pending": pending, "deviceclasses": [device_class], "resourceslices": slices,
            "resourceclaimtemplates": templates}


DEMO_WORKLOAD = {"rate": 3.0, "max_pods": 450, "max_pending": 40, "lifetime": 45.0, "namespace": "demo"}
