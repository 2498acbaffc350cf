"""The demo's workload generator: keeps creating and deleting pods of varied shapes.

Most pods fit somewhere; a steady share cannot (no matching label, too large, missing toleration, a
topology-spread or anti-affinity rule), so the pending list always has pods stuck for different reasons.
"""
from __future__ import annotations

import uuid

from scheduler_core.objects.field import invalid
from scheduler_core.objects.identifiers import is_dns1123_label

SHAPES = (
    # weight, name, cpu, memory, extra spec
    (30, "web", ("100m", "250m", "500m"), ("128Mi", "256Mi", "512Mi"), {}),
    (14, "api", ("500m", "1"), ("512Mi", "1Gi"), {"spread": True}),
    (12, "batch", ("1", "2", "3"), ("2Gi", "4Gi", "6Gi"), {}),
    (6, "cache", ("1",), ("24Gi", "40Gi"), {"selector": {"node-type": "highmem"}}),
    (5, "train", ("4",), ("16Gi",), {"gpu": 1, "tolerate_gpu": True}),
    (2, "train-untolerated", ("2",), ("8Gi",), {"gpu": 1}),
    (2, "nvme-db", ("1",), ("2Gi",), {"selector": {"disk": "nvme"}}),
    (2, "huge", ("24",), ("8Gi",), {}),
    (2, "ingress", ("250m",), ("256Mi",), {"host_port": 443}),
)


NUMBERS = {"rate": 2.0, "max_pods": 400, "max_pending": 60, "lifetime": 60.0}


def spec_errors(spec) -> dict:
    """What is wrong with a generator spec ({field: [messages]}): the pods' namespace must be a DNS-1123 label
    (its pods are validated again when created), the rates and limits non-negative numbers."""
    if not isinstance(spec, dict):
        return {"workload": ["expected an object"]}
    errors = {}
    ns = spec.get("namespace", "demo")
    msgs = is_dns1123_label(ns) if isinstance(ns, str) else ("expected a string",)
    if msgs:
        errors["workload.namespace"] = [invalid("namespace", ns, m).body() for m in msgs]
    for field in NUMBERS:
        v = spec.get(field, NUMBERS[field])
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1e9:
            errors[f"workload.{field}"] = [invalid(field, v, "must be a number from 0 to 1e9").body()]
    return errors


def pod_manifest(name: str, namespace: str, app: str, cpu: str, memory: str, extra: dict, priority: int = 0,
                 owner: str = "") -> dict:
    """A v1.Pod for one workload shape; ``owner``: the ReplicaSet that controls it (none: a bare pod)."""
    container = {"name": app, "image": f"registry.example/{app}:1.0",
                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if extra.get("gpu"):
        container["resources"]["requests"]["nvidia.com/gpu"] = str(extra["gpu"])
        container["resources"]["limits"] = {"nvidia.com/gpu": str(extra["gpu"])}
    if extra.get("host_port"):
        container["ports"] = [{"containerPort": extra["host_port"], "hostPort": extra["host_port"], "protocol": "TCP"}]
    spec = {"containers": [container]}
    if priority:   # a scenario's pods (the demo's) say their priority; a created pod's comes from its class
        spec["priority"] = priority
    if extra.get("selector"):
        spec["nodeSelector"] = dict(extra["selector"])
    if extra.get("tolerate_gpu"):
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if extra.get("spread"):
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}}}]
    meta = {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}", "labels": {"app": app}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                    "uid": f"{namespace}-{owner}", "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


class WorkloadGenerator:
    """Each tick: create pods at ``rate`` per second up to ``max_pods``; delete bound pods that outlive ``lifetime``."""

    def __init__(self, spec: dict, rng):
        self.rate = float(spec.get("rate", NUMBERS["rate"]))
        self.max_pods = int(spec.get("max_pods", NUMBERS["max_pods"]))
        self.max_pending = int(spec.get("max_pending", NUMBERS["max_pending"]))
        self.lifetime = float(spec.get("lifetime", NUMBERS["lifetime"]))
        self.namespace = spec.get("namespace", "demo")
        self.rng = rng
        self._last = None
        self._carry = 0.0
        self._born = {}
        self._weights = [s[0] for s in SHAPES]

    def _new_pod(self) -> dict:
        _w, app, cpus, mems, extra = self.rng.choices(SHAPES, weights=self._weights)[0]
        name = f"{app}-{uuid.uuid4().hex[:10]}"
        return pod_manifest(name, self.namespace, app, self.rng.choice(cpus), self.rng.choice(mems), extra,
                            owner=f"{app}-7c9d5")

    def tick(self, now: float, engine):
        """(new pod manifests, namespace/name keys of pods to delete) for this moment."""
        if self._last is None:
            self._last = now
        self._carry += (now - self._last) * self.rate
        self._last = now
        add, delete = [], []
        pending = engine.num_pending()
        total = engine.num_pods()
        while self._carry >= 1:
            self._carry -= 1
            if total < self.max_pods and pending < self.max_pending:
                raw = self._new_pod()
                self._born[f"{raw['metadata']['namespace']}/{raw['metadata']['name']}"] = now
                add.append(raw)
                total += 1
                pending += 1
        for key, born in list(self._born.items()):
            if now - born >= self.lifetime * (0.5 + self.rng.random()):
                del self._born[key]
                if engine.has_pod(key):
                    delete.append(key)
        return add, delete
