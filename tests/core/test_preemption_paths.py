"""The faster preemption paths decide exactly as before: the dry run shares the CycleState when no PreFilter
extension is active and runs the plain Filter on nodes without a nominated pod to add, and the batch Filter
sends only nodes with nominated pods of priority >= the pod's through the two-pass Filter. On seeded random
clusters with priorities, PDBs, nominated pods, pod anti-affinity and spread constraints, every cycle (statuses, preemption record, victims, nominated node),
the placements, the evictions and the nominations are the same as with the old behaviour (patched back in:
state cloned for every dry-run node and two-pass Filter, the two-pass Filter for every node with nominated
pods), on the batch and on the per-node Filter path. The old behaviour also has no ResourceFilter (it exists only
without PreFilter extensions): every dry-run node is a copy, every pass with nominated pods a copy too."""
import random

import pytest

from scheduler_core import schedule_one
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.runtime import Framework
from scheduler_core.plugins import defaultpreemption
from scheduler_core.scenario import scenario_from_data
from scheduler_core.scheduler import Scheduler
from scheduler_core.trace import CallbackSink

COLORS = ["red", "blue", "green"]


def _node(rng, i, varied=False):
    """A node; ``varied``: some are tainted, cordoned, short of pod slots or have GPUs (what the dry run's
    node-only plugins and NodeResourcesFit's other reasons see)."""
    name = f"n{i:03d}"
    cpu = rng.choice(["2", "3", "4"])
    resources = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    spec = {}
    if varied:
        if rng.random() < 0.15:
            resources["pods"] = str(rng.randint(2, 4))
        if rng.random() < 0.3:
            resources["example.com/gpu"] = str(rng.randint(1, 2))
        if rng.random() < 0.1:
            spec["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
        if rng.random() < 0.05:
            spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": rng.choice(["z1", "z2"])}},
            "spec": spec, "status": {"allocatable": resources, "capacity": dict(resources)}}


def _pod(rng, name, priority, cpu, node=None, nominated=None, constraints=False):
    color = rng.choice(COLORS)
    spec = {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu}}}],
            "priority": priority, "schedulerName": "default-scheduler"}
    if constraints and rng.random() < 0.3:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": "kubernetes.io/hostname"}]}}
    elif constraints and rng.random() < 0.2:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"color": color}}}]
    status = {"phase": "Running" if node else "Pending"}
    if node:
        spec["nodeName"] = node
        if rng.random() < 0.7:
            status["startTime"] = f"2026-01-01T00:{rng.randrange(60):02d}:00Z"
    if nominated:
        status["nominatedNodeName"] = nominated
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": name, "labels": {"color": color}},
            "spec": spec, "status": status}


def _vary_pending(rng, pod):
    """Some pending pods want a GPU, tolerate the taint or select a zone."""
    spec = pod["spec"]
    if rng.random() < 0.2:
        spec["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(["z1", "z2"])}
    return pod


def random_preemption_cluster(seed: int, n: int = 40, varied: bool = False) -> dict:
    """Full nodes of low-priority pods, PDBs over their colors, and pending pods of mixed priorities
    (some already nominated, some with anti-affinity or spread constraints); ``varied``: also taints,
    cordons, few pod slots, GPUs, tolerations and node selectors, with no PDB and no anti-affinity or spread
    constraint (no PreFilter extension: the dry runs run on sums, and on NodeTable rows when the pod wants no
    GPU)."""
    rng = random.Random(seed)
    nodes = [_node(rng, i, varied) for i in range(n)]
    pods = []
    for nd in nodes:
        for j in range(int(nd["status"]["allocatable"]["cpu"]) + rng.randint(-1, 0)):
            pods.append(_pod(rng, f"{nd['metadata']['name']}-b{j}", rng.choice([0, 0, 1, 5]),
                             rng.choice(["700m", "900m"]), node=nd["metadata"]["name"], constraints=not varied))
    pdbs = [{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
             "metadata": {"name": f"pdb-{c}", "namespace": "default"},
             "spec": {"selector": {"matchLabels": {"color": c}}},
             "status": {"disruptionsAllowed": rng.choice([0, 1, 3])}} for c in rng.sample(COLORS, 2)]
    if varied:
        pdbs = []
    pending = []
    for i in range(rng.randint(15, 30)):
        nominated = rng.choice(nodes)["metadata"]["name"] if rng.random() < 0.3 else None
        if varied and rng.random() < 0.1:
            nominated = "gone"   # a node that is not (or no longer) in the cluster
        pod = _pod(rng, f"p{i:02d}", rng.choice([0, 5, 10, 10, 10]), rng.choice(["1", "1500m", "2500m"]),
                   nominated=nominated, constraints=not varied)
        pending.append(_vary_pending(rng, pod) if varied else pod)
    return {"nodes": nodes, "pods": pods, "pending": pending, "poddisruptionbudgets": pdbs}


def _run(data, batch: bool, seed: int, old: bool, monkeypatch, trace: bool = False):
    with monkeypatch.context() as m:
        if old:
            # The old behaviour: a cloned CycleState for every dry-run node and two-pass Filter, the two-pass
            # Filter for every dry-run check and for every node with a nominated pod in the batch Filter.
            m.setattr(Framework, "has_pre_filter_extensions", lambda self, state: True)
            m.setattr(defaultpreemption, "nominated_pods_to_add", lambda pod, name, nominated: [pod])
            m.setattr(schedule_one, "nominated_pods_to_add", lambda pod, name, nominated: [pod])
        cluster = SimulatedCluster.from_scenario(scenario_from_data(data))
        traces = []

        def keep(tr):
            d = tr.to_dict()
            for k in ("durations_ms", "started_at"):
                d.pop(k, None)
            d["node_statuses_order"] = list(tr.node_statuses)
            traces.append((d, tr.processed_nodes, tr.start_index))
        sched = Scheduler(cluster, tie_break="random", seed=seed, trace_sink=CallbackSink(keep), trace_all_filters=trace)
        sched.ctx.batch = batch
        sched.run_until_idle()
        for _ in range(3):
            sched.queue.flush_backoff_q_all()
            sched.run_until_idle()
        nominations = sorted((p.key, p.nominated_node_name) for p in cluster.list_pods() if p.nominated_node_name)
        return traces, cluster.placements(), cluster.evictions, nominations


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("varied", [False, True], ids=["plain", "varied"])
def test_random_preemption_clusters_decide_as_before(seed, varied, monkeypatch):
    data = random_preemption_cluster(seed, varied=varied)
    old = _run(data, False, seed, True, monkeypatch)
    assert old[2]  # victims were evicted
    for batch, is_old in ((True, True), (True, False), (False, False)):
        new = _run(data, batch, seed, is_old, monkeypatch)
        assert new[1:] == old[1:]
        assert len(new[0]) == len(old[0])
        for x, y in zip(new[0], old[0]):
            assert x == y


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("varied", [False, True], ids=["plain", "varied"])
def test_random_preemption_clusters_decide_as_before_in_trace_mode(seed, varied, monkeypatch):
    """Trace mode (every Filter plugin on every node): the FilterTable path, where the nominated pods' pass runs
    on the table's columns and summed requests, against the old per-node trace path."""
    data = random_preemption_cluster(seed, varied=varied)
    old = _run(data, False, seed, True, monkeypatch, trace=True)
    for batch in (True, False):
        new = _run(data, batch, seed, False, monkeypatch, trace=True)
        assert new[1:] == old[1:]
        assert len(new[0]) == len(old[0])
        for x, y in zip(new[0], old[0]):
            assert x == y


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("absolute", [1, 3, 7])
def test_a_dry_run_that_stops_at_few_candidates_decides_as_the_per_node_one(seed, absolute, monkeypatch):
    """minCandidateNodesAbsolute below the candidates there are: the dry run on NodeTable rows stops at the same
    candidate as the per-node one, also when it sized its window from the previous dry run's share."""
    monkeypatch.setattr(defaultpreemption.DefaultPreemption, "calculate_num_candidates",
                        lambda self, num_nodes: min(absolute, num_nodes))
    data = random_preemption_cluster(seed, varied=True)
    for trace in (False, True):
        old = _run(data, False, seed, True, monkeypatch, trace=trace)
        assert old[2]
        new = _run(data, True, seed, False, monkeypatch, trace=trace)
        assert new[1:] == old[1:]
        assert new[0] == old[0]


def _scheduler(data):
    cluster = SimulatedCluster.from_scenario(scenario_from_data(data))
    return Scheduler(cluster, tie_break="name"), cluster


def _full_cluster(n=10, pending_priority=10, constraints=False):
    rng = random.Random(3)
    nodes = [_node(rng, i) for i in range(n)]
    for nd in nodes:
        nd["status"]["allocatable"]["cpu"] = nd["status"]["capacity"]["cpu"] = "2"
    pods = [_pod(rng, f"b{i}", 0, "900m", node=nodes[i // 2]["metadata"]["name"]) for i in range(2 * n)]
    pending = [_pod(rng, "hi", pending_priority, "1500m")]
    if constraints:
        pending[0]["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"color": "none"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    return {"nodes": nodes, "pods": pods, "pending": pending}


@pytest.mark.parametrize("constraints, clones", [(False, 0), (True, 10)])
def test_dry_run_clones_the_state_only_for_prefilter_extensions(constraints, clones, monkeypatch):
    """The default profile with a plain pod skips InterPodAffinity and PodTopologySpread: the dry run reads
    the CycleState and needs no copy per node; with anti-affinity every dry-run node gets its copy."""
    sched, cluster = _scheduler(_full_cluster(constraints=constraints))
    calls = []
    orig = CycleState.clone
    monkeypatch.setattr(CycleState, "clone", lambda self: calls.append(1) or orig(self))
    sched.run_until_idle()
    assert len(cluster.evictions) == 2
    assert len(calls) == clones


def test_lower_priority_nominations_stay_on_the_batch_filter(monkeypatch):
    """Nodes whose nominated pods all have a lower priority than the pod take the batch Filter: the two-pass
    Filter would add none of them."""
    data = _full_cluster(n=20)
    for nd in data["nodes"]:
        nd["status"]["allocatable"]["cpu"] = nd["status"]["capacity"]["cpu"] = "4"
    rng = random.Random(5)
    data["pending"] = [_pod(rng, f"low{i}", 0, "100m", nominated=data["nodes"][i]["metadata"]["name"])
                       for i in range(10)]
    data["pending"].append(_pod(rng, "hi", 10, "1"))
    sched, cluster = _scheduler(data)
    per_node = []
    orig = Framework.run_filter_with_nominated_pods
    monkeypatch.setattr(Framework, "run_filter_with_nominated_pods",
                        lambda self, state, pod, ni, nom=None: per_node.append(pod.name) or orig(self, state, pod, ni, nom))
    sched.schedule_one()  # "hi" first (higher priority): the ten nominations are all of priority 0
    assert cluster.get_pod("default", "hi").node_name
    assert per_node == []
