"""The pod-group vectors of tools/gang_oracle.py (what the real kube-scheduler v1.36.2 did with pod groups)
replayed in Schedscope's scheduling loop at 1.36 with the scenario's feature gates.

A derived scenario holds the cluster before its pending pods were created and the pending pods in creation order;
the replay adds them to a simulated cluster one by one, letting the loop schedule after each (kube-scheduler had
``BATCH_GAP`` between two; ``CYCLES`` cycles), with the name tie-break. Compared with kube's outcome:

1. per pod: kept out of the queue by a PreEnqueue plugin (the plugin and its message), bound, refused with the
   exact PodScheduled message, or deleted (a preemption victim);
2. the nodes the bound pods took, as a multiset (the scenarios leave no choice among equal nodes but which pod goes
   where, which kube draws at random);
3. each PodGroup's PodGroupScheduled condition (status, reason, message).
"""
from __future__ import annotations

import json
import os
from collections import Counter

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import config_for
from scheduler_core.plugins.registry import build_registry
from scheduler_core.scenario import Scenario, load_scenario
from scheduler_core.scheduler import Scheduler


# A group that fails is tried again at once (its members wait in backoffQ, which 1.36 pops when activeQ is empty, as
# kube-scheduler does, with the same outcome): the loop runs a few cycles after each pod, not until idle.
CYCLES = 10


def expected_path(scenario: str) -> str:
    return scenario[: -len(".scenario.json")] + ".expected.json"


def scenario_files(directory: str) -> list:
    return sorted(os.path.join(directory, f) for f in os.listdir(directory)
                  if f.endswith(".scenario.json") and os.path.exists(expected_path(os.path.join(directory, f))))


def replay(path: str) -> dict:
    """Schedscope's outcome of a derived scenario, in the expected file's shape."""
    scen = load_scenario(path)
    registry = build_registry()
    config = config_for(scen.config, registry, kube_version=scen.kube_version(), feature_gates=scen.feature_gates())
    features = config.features
    cluster_state = Scenario(scen.name, scen.nodes, [features.pod_as_read(p) for p in scen.bound_pods], [],
                             scen.objects, scen.config, scen.extra)
    clock = FakeClock(1_800_000_000.0)
    cluster = SimulatedCluster.from_scenario(cluster_state, clock=clock)
    sched = Scheduler(cluster, config, registry=registry, clock=clock, tie_break="name")
    sched.run_until_idle(CYCLES)
    for pod in scen.pending_pods:
        cluster.add_pod(features.pod_as_read(pod))
        sched.run_until_idle(CYCLES)
    decisions = []
    for pod in scen.pending_pods:
        live = cluster.get_pod(pod.namespace, pod.name)
        decision = {"pod": pod.key}
        if live is None:   # a preemption victim
            decision["deleted"] = True
            decisions.append(decision)
            continue
        pinfo = sched.queue.pod_info(pod.key)
        condition = next((c for c in live.conditions if c.get("type") == "PodScheduled"), None)
        if live.node_name:
            decision["bound_node"] = live.node_name
        elif pinfo is not None and pinfo.gated:
            plugin, message = pinfo.gated_by
            decision["gated"] = {"plugin": plugin, "message": message}
        elif condition is not None:
            decision.update(message=condition.get("message"), condition_reason=condition.get("reason"))
        decisions.append(decision)
    groups = {}
    for key, group in cluster.objects.pod_groups.items():
        condition = next((c for c in (group.get("status") or {}).get("conditions") or ()
                          if c["type"] == "PodGroupScheduled"), None)
        groups[key] = {k: condition.get(k, "") for k in ("status", "reason", "message")} if condition else None
    return {"decisions": decisions, "pod_groups": groups}


def compare(exp: dict, got: dict) -> list:
    """The differences between kube's outcome (``exp``) and Schedscope's (``got``)."""
    diffs = []
    mine = {d["pod"]: d for d in got["decisions"]}
    for want in exp["decisions"]:
        have = mine.get(want["pod"], {})
        for key in ("gated", "message", "condition_reason", "deleted"):
            if want.get(key) != have.get(key):
                diffs.append(f"{want['pod']} {key}: expected {want.get(key)!r}, got {have.get(key)!r}")
        if bool(want.get("bound_node")) != bool(have.get("bound_node")):
            diffs.append(f"{want['pod']} bound: expected {want.get('bound_node')}, got {have.get('bound_node')}")
    nodes = [Counter(d.get("bound_node") for d in doc["decisions"] if d.get("bound_node")) for doc in (exp, got)]
    if nodes[0] != nodes[1]:
        diffs.append(f"nodes taken: expected {sorted(nodes[0].elements())}, got {sorted(nodes[1].elements())}")
    for key, want in exp["pod_groups"].items():
        have = got["pod_groups"].get(key)
        if want != have:
            diffs.append(f"PodGroup {key} condition: expected {want}, got {have}")
    return diffs


def check(path: str) -> list:
    """The differences on one derived scenario (empty: equal)."""
    with open(expected_path(path), encoding="utf-8") as f:
        exp = json.load(f)
    return compare(exp, replay(path))
