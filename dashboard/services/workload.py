"""The demo's workload generator: keeps creating and deleting pods of varied shapes.

Most pods fit somewhere; a steady share cannot (no matching label, too large, missing toleration, a
topology-spread or anti-affinity rule), so the pending list always has pods stuck for different reasons.
"""
from __future__ import annotations

import json

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


SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"   # k8s.io/apimachinery/pkg/util/rand's alphanums
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


def pod_template(app: str, cpu: str, memory: str, extra: dict, priority: int = 0) -> dict:
    """The v1.PodTemplateSpec of one workload shape (labels and spec)."""
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
    return {"metadata": {"labels": {"app": app}}, "spec": spec}


def template_hash(template: dict) -> str:
    """A pod template's pod-template-hash in kube's form: a 32-bit FNV-1a hash of the template, its decimal digits
    through rand.SafeEncodeString."""
    h = 0x811C9DC5
    for b in json.dumps(template, sort_keys=True).encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(SAFE_ALPHANUMS[ord(c) % len(SAFE_ALPHANUMS)] for c in str(h))


def replica_set(namespace: str, template: dict, replicas: int, uid: str = "") -> dict:
    """The apps/v1 ReplicaSet of a pod template, as a Deployment makes one: named after the template's app label
    and its pod-template-hash, which its selector and its pods' labels carry. ``uid``: a scenario's (it keeps the
    uids it is given); a created one gets the server's."""
    labels = dict(template["metadata"]["labels"])
    labels["pod-template-hash"] = template_hash(template)
    name = f'{labels["app"]}-{labels["pod-template-hash"]}'
    meta = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if uid:
        meta["uid"] = uid
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": dict(template, metadata={"labels": labels})}}


def pod_of(template: dict, name: str, namespace: str, owner: dict | None = None) -> dict:
    """A v1.Pod made from a pod template; ``owner``: the ReplicaSet that controls it (its controller
    ownerReference; none: a bare pod)."""
    meta = {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}",
            "labels": dict(template["metadata"]["labels"])}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True,
                                    "blockOwnerDeletion": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": json.loads(json.dumps(template["spec"]))}


def pod_manifest(name: str, namespace: str, app: str, cpu: str, memory: str, extra: dict,
                 priority: int = 0) -> dict:
    """A bare v1.Pod of one workload shape."""
    return pod_of(pod_template(app, cpu, memory, extra, priority), name, namespace)


class WorkloadGenerator:
    """Each tick: create pods at ``rate`` per second up to ``max_pods``; delete bound pods that outlive ``lifetime``.
    Its pods are those of a ReplicaSet per shape and size (``replica_set``), which it scales to the pods it keeps
    (``scaled``)."""

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
        names = (replica_set(self.namespace, pod_template(app, cpu, mem, extra), 0)["metadata"]["name"]
                 for _w, app, cpus, mems, extra in SHAPES for cpu in cpus for mem in mems)
        self.scaled = frozenset(f"{self.namespace}/{name}" for name in names)   # its ReplicaSets, by key

    def _new_pod(self, replica_set_of) -> dict:
        _w, app, cpus, mems, extra = self.rng.choices(SHAPES, weights=self._weights)[0]
        template = pod_template(app, self.rng.choice(cpus), self.rng.choice(mems), extra)
        owner = replica_set_of(replica_set(self.namespace, template, 0))
        name = owner["metadata"]["name"] + "-" + "".join(self.rng.choices(SAFE_ALPHANUMS, k=5))
        return pod_of(owner["spec"]["template"], name, self.namespace, owner)

    def tick(self, now: float, engine, replica_set_of):
        """(new pod manifests, namespace/name keys of pods to delete) for this moment. ``replica_set_of(rs)``: the
        cluster's ReplicaSet of that name, created as ``rs`` when it has none."""
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
                raw = self._new_pod(replica_set_of)
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
