#!/usr/bin/env python3
"""Writes the pod-group scenarios of this folder (``gang-oNN-*.scenario.json``): the golden format with
``podgroups`` (scheduling.k8s.io/v1alpha2 PodGroups) and pods naming theirs in ``spec.schedulingGroup``, at 1.36 with
GenericWorkload, GangScheduling and TopologyAwareWorkloadScheduling on (``featureGates``). Their vectors come from
the real kube-scheduler (README.md of this folder says how)."""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
TS = "2026-01-10T08:00:00Z"
RACK = "topology.example.com/rack"


def node(name, cpu="4", rack=None) -> dict:
    alloc = {"cpu": cpu, "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    if rack:
        labels[RACK] = rack
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {},
            "status": {"capacity": dict(alloc), "allocatable": dict(alloc),
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status", "lastHeartbeatTime": TS,
                                       "lastTransitionTime": TS}]}}


def pod(name, group=None, cpu="3", namespace="team", priority=0) -> dict:
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
            "priority": priority}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def pod_group(name, min_count=None, topology=None, namespace="team") -> dict:
    policy = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    spec = {"schedulingPolicy": policy}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def scenario(name, description, nodes, pending, groups, pods=()) -> dict:
    return {"name": name, "description": description, "kubeVersion": "1.36", "featureGates": GATES,
            "nodes": nodes, "pods": list(pods), "pending": pending, "podgroups": groups}


SCENARIOS = [
    scenario("gang-o01-fits", "a gang of three that fits, one member per node",
             [node(f"n{i}") for i in range(1, 4)],
             [pod(f"worker-{i}", "train") for i in range(3)], [pod_group("train", 3)]),
    scenario("gang-o02-does-not-fit", "a gang of four where only three members fit: nobody is bound",
             [node(f"n{i}") for i in range(1, 4)],
             [pod(f"worker-{i}", "train") for i in range(4)], [pod_group("train", 4)]),
    scenario("gang-o03-min-count", "fewer members than minCount wait in the queue; minCount 2 of 3 members where "
             "the third does not fit binds two; a pod whose PodGroup does not exist waits for it",
             [node("n1"), node("n2")],
             [pod("a-0", "short"), pod("a-1", "short"), pod("b-0", "pair"), pod("b-1", "pair"), pod("b-2", "pair"),
              pod("lost", "ghost", cpu="1")],
             [pod_group("short", 3), pod_group("pair", 2)]),
    scenario("gang-o04-topology-one-rack", "a gang with a rack constraint: only rack-a holds three members",
             [node("a1", cpu="10", rack="rack-a"), node("b1", rack="rack-b"), node("b2", rack="rack-b")],
             [pod(f"worker-{i}", "train") for i in range(3)], [pod_group("train", 3, RACK)]),
    scenario("gang-o05-topology-no-rack", "a gang with a rack constraint that no rack holds (two racks of the same "
             "shape): 0/2 placements",
             [node("a1", rack="rack-a"), node("a2", rack="rack-a"), node("b1", rack="rack-b"),
              node("b2", rack="rack-b")],
             [pod(f"worker-{i}", "train") for i in range(3)], [pod_group("train", 3, RACK)]),
    scenario("gang-o06-topology-domain-kept", "minCount 2 of 3 members with a rack constraint: the quorum goes to "
             "the only rack that holds two; the third member, which comes later, is held to that rack though "
             "rack-b has room for it",
             [node("a1", rack="rack-a"), node("b1", cpu="2", rack="rack-b")],
             [pod(f"worker-{i}", "train", cpu="2") for i in range(3)], [pod_group("train", 2, RACK)]),
    scenario("gang-o07-basic-policy", "a PodGroup with the basic policy: its pods are scheduled as a group without "
             "a quorum; the one that does not fit fails alone",
             [node("n1"), node("n2")],
             [pod(f"worker-{i}", "batch") for i in range(3)], [pod_group("batch")]),
    scenario("gang-o08-priority-order", "members come in priority order: the two high-priority members make the "
             "quorum (minCount 2) and are bound; the low-priority one comes last and finds no room",
             [node("n1"), node("n2")],
             [pod("low", "train", priority=0), pod("high-0", "train", priority=100),
              pod("high-1", "train", priority=100)], [pod_group("train", 2)]),
]


def main() -> None:
    for s in SCENARIOS:
        (HERE / f"{s['name']}.scenario.json").write_text(json.dumps(s, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
