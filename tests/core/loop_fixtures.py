"""Small builders shared by the loop tests (queue, cache, scheduler): nodes and pods as API dicts."""
from __future__ import annotations

from scheduler_core.objects import Node, Pod


def node_raw(name, cpu="4", memory="32Gi", pods="110", labels=None, taints=None, unschedulable=False, images=None):
    lab = {"kubernetes.io/hostname": name}
    lab.update(labels or {})
    res = {"cpu": cpu, "memory": memory, "pods": pods}
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status = {"capacity": dict(res), "allocatable": dict(res)}
    if images:
        status["images"] = [{"names": list(n), "sizeBytes": s} for n, s in images]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": name, "labels": lab},
            "spec": spec, "status": status}


def node(name, **kw) -> Node:
    return Node(node_raw(name, **kw))


def pod_raw(name, cpu="100m", memory="100Mi", priority=0, node_name="", namespace="default", labels=None,
            scheduler_name=None, gates=None, affinity=None, nominated="", tolerations=None, ports=None,
            node_selector=None, preemption_policy=None, volumes=None):
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if ports:
        container["ports"] = [{"containerPort": p, "hostPort": p} for p in ports]
    spec = {"containers": [container], "priority": priority}
    if node_name:
        spec["nodeName"] = node_name
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector
    if preemption_policy:
        spec["preemptionPolicy"] = preemption_policy
    if volumes:
        spec["volumes"] = volumes
    status = {"phase": "Running" if node_name else "Pending"}
    if nominated:
        status["nominatedNodeName"] = nominated
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                         "labels": dict(labels or {})},
            "spec": spec, "status": status}


def pod(name, **kw) -> Pod:
    return Pod(pod_raw(name, **kw))


def required_pod_affinity(labels: dict, topology_key="kubernetes.io/hostname") -> dict:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": labels}, "topologyKey": topology_key}]}}
