"""The bundled demo scenario: 50 nodes in three zones, GPU nodes with taints, and a starting set of pods."""
from __future__ import annotations

import random

from scheduler_core.versions import LATEST_VERSION

from .workload import pod_manifest

ZONES = ("zone-a", "zone-b", "zone-c")


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
    bound = []
    general = [n["metadata"]["name"] for n in nodes if n["metadata"]["name"].startswith("general-")]
    for i in range(60):
        pod = pod_manifest(f"base-{i:03d}", "prod", "base", rng.choice(("500m", "1", "2")),
                           rng.choice(("1Gi", "2Gi", "4Gi")), {}, owner="base-6f8b4")
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
        pending.append(pod_manifest(f"web-{i:03d}", "shop", "web", rng.choice(("250m", "500m")),
                                    rng.choice(("256Mi", "512Mi")), {}, owner="web-5d7c6"))
    for i in range(4):
        pending.append(pod_manifest(f"ingress-{i}", "edge", "ingress", "250m", "256Mi", {"host_port": 443},
                                    owner="ingress-84c2f"))
    return {"name": "demo", "kubeVersion": LATEST_VERSION, "nodes": nodes, "pods": bound, "pending": pending}


DEMO_WORKLOAD = {"rate": 3.0, "max_pods": 450, "max_pending": 40, "lifetime": 45.0, "namespace": "demo"}
