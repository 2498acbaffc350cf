"""The NumPy batch paths (NodeTable, filter_batch, score_batch, batch normalize, array selectHost) decide
exactly as the per-node paths: same feasible nodes, statuses, visited and processed nodes, raw and
normalized scores, totals and choices, on seeded random clusters, on every golden scenario in kube mode
and through the full scheduling loop (nominated pods, preemption)."""
import glob
import json
import os
import random

import numpy as np
import pytest

from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core import versions
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.snapshot import Snapshot
from scheduler_core.objects import Node, Pod
from scheduler_core.plugins.imagelocality import ImageLocality
from scheduler_core.plugins.interpodaffinity import InterPodAffinity
from scheduler_core.plugins.nodeaffinity import NodeAffinity
from scheduler_core.plugins.nodename import NodeName
from scheduler_core.plugins.noderesources import BalancedAllocation, Fit
from scheduler_core.plugins.nodeunschedulable import NodeUnschedulable
from scheduler_core.plugins.podtopologyspread import PodTopologySpread
from scheduler_core.plugins.tainttoleration import TaintToleration
from scheduler_core.scenario import load_scenario, scenario_from_data
from scheduler_core.scheduler import Scheduler
from scheduler_core.simulate import Simulation
from scheduler_core.trace import CallbackSink

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ZONES = ["z1", "z2", "z3"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
IMAGES = ["img/a:1", "img/b:2", "img/c"]


def rand_node(rng, i):
    name = f"n{i:03d}"
    labels = {"kubernetes.io/hostname": name}
    if rng.random() < 0.9:
        labels["topology.kubernetes.io/zone"] = rng.choice(ZONES)
    if rng.random() < 0.5:
        labels["disk"] = rng.choice(["ssd", "hdd"])
    alloc = {"cpu": rng.choice(["0", "1", "2", "4", "3500m"]), "memory": rng.choice(["0", "1Gi", "4Gi", "8Gi"]),
             "pods": str(rng.choice([0, 1, 3, 110]))}
    if rng.random() < 0.5:
        alloc["ephemeral-storage"] = rng.choice(["0", "10Gi", "100Gi"])
    if rng.random() < 0.2:
        alloc["example.com/gpu"] = "2"
    spec = {}
    if rng.random() < 0.3:
        spec["taints"] = [{"key": rng.choice(["a", "b"]), "value": rng.choice(["", "x"]), "effect": rng.choice(EFFECTS)}
                          for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    status = {"allocatable": alloc, "capacity": dict(alloc)}
    if rng.random() < 0.3:
        status["images"] = [{"names": [img], "sizeBytes": rng.choice([10, 300, 900]) * 1024 * 1024}
                            for img in rng.sample(IMAGES, rng.randint(1, 2))]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": status}


def rand_selector_term(rng):
    exprs = []
    for _ in range(rng.randint(0, 2)):
        op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
        key = rng.choice(["topology.kubernetes.io/zone", "disk", "missing"])
        e = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            e["values"] = rng.sample(ZONES + ["ssd", "hdd", "zz"], rng.randint(1, 3))
        exprs.append(e)
    term = {"matchExpressions": exprs}
    if rng.random() < 0.1:
        term["matchFields"] = [{"key": "metadata.name", "operator": rng.choice(["In", "NotIn"]),
                                "values": [f"n{rng.randrange(40):03d}"]}]
    return term


def rand_pod(rng, name, node_names=()):
    req = {}
    if rng.random() < 0.9:
        req["cpu"] = rng.choice(["100m", "500m", "1", "2"])
    if rng.random() < 0.8:
        req["memory"] = rng.choice(["128Mi", "1Gi", "3Gi"])
    if rng.random() < 0.2:
        req["ephemeral-storage"] = rng.choice(["1Gi", "50Gi"])
    if rng.random() < 0.05:
        req["example.com/gpu"] = "1"
    spec = {"containers": [{"name": "c", "image": rng.choice(IMAGES + ["other"]), "resources": {"requests": req}}],
            "schedulerName": "default-scheduler"}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": rng.choice(["a", "b"]), "operator": "Exists",
                                "effect": rng.choice(EFFECTS + [""])}]
    if rng.random() < 0.05:
        spec["tolerations"] = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"disk": rng.choice(["ssd", "hdd"])}
    aff = {}
    if rng.random() < 0.3:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [rand_selector_term(rng) for _ in range(rng.randint(1, 2))]}
    if rng.random() < 0.3:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": rand_selector_term(rng)} for _ in range(rng.randint(1, 2))]
    if aff:
        spec["affinity"] = {"nodeAffinity": aff}
    if node_names and rng.random() < 0.03:
        spec["nodeName"] = rng.choice(node_names)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": spec, "status": {"phase": "Pending"}}


COLORS = ["red", "blue", "green"]
TOPOLOGY_KEYS = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "disk"]


def rand_pod_selector(rng):
    if rng.random() < 0.8:
        return {"matchLabels": {"color": rng.choice(COLORS)}}
    return {"matchExpressions": [{"key": "color", "operator": rng.choice(["In", "NotIn"]),
                                  "values": rng.sample(COLORS, rng.randint(1, 2))}]}


def rand_pod_term(rng):
    term = {"labelSelector": rand_pod_selector(rng), "topologyKey": rng.choice(TOPOLOGY_KEYS)}
    r = rng.random()
    if r < 0.2:
        term["namespaces"] = ["default", "other"]
    elif r < 0.3:
        term["namespaceSelector"] = {}
    return term


def add_inter_pod_terms(rng, pod):
    """Labels, namespaces, topology spread constraints and pod (anti-)affinity terms on a rand_pod."""
    meta, spec = pod["metadata"], pod["spec"]
    if rng.random() < 0.8:
        meta["labels"] = {"color": rng.choice(COLORS)}
    if rng.random() < 0.15:
        meta["namespace"] = "other"
    if rng.random() < 0.4:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": rng.randint(1, 3), "topologyKey": rng.choice(TOPOLOGY_KEYS),
             "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
             "labelSelector": rand_pod_selector(rng),
             **({"minDomains": rng.randint(2, 4)} if rng.random() < 0.2 else {}),
             **({"nodeAffinityPolicy": "Honor"} if rng.random() < 0.2 else {}),
             **({"nodeTaintsPolicy": "Honor"} if rng.random() < 0.2 else {})}
            for _ in range(rng.randint(1, 2))]
    pod_aff = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = {}
        if rng.random() < 0.3:
            terms["requiredDuringSchedulingIgnoredDuringExecution"] = [rand_pod_term(rng)
                                                                        for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.3:
            terms["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": rand_pod_term(rng)}
                for _ in range(rng.randint(1, 2))]
        if terms:
            pod_aff[kind] = terms
    if pod_aff:
        spec.setdefault("affinity", {}).update(pod_aff)
    return pod


def rand_config(rng):
    strategy = rng.choice([
        None,
        {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]},
        {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3},
                                                 {"name": "ephemeral-storage", "weight": 1}]},
        {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
         "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 30, "score": 7},
                                                {"utilization": 100, "score": 10}]}},
    ])
    balanced = rng.choice([None, [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                  {"name": "ephemeral-storage", "weight": 1}]])
    plugin_config = []
    if strategy:
        plugin_config.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}})
    if balanced:
        plugin_config.append({"name": "NodeResourcesBalancedAllocation", "args": {"resources": balanced}})
    if rng.random() < 0.2:
        plugin_config.append({"name": "NodeAffinity", "args": {"addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                       "values": ["z1", "z2"]}]}]}}}})
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": plugin_config}]}
    if rng.random() < 0.7:
        doc["percentageOfNodesToScore"] = rng.choice([1, 10, 30, 50])
    return doc


def comparable(tr) -> dict:
    d = tr.to_dict()
    for k in ("durations_ms", "started_at"):
        d.pop(k, None)
    d["kube_stopped_at"] = list(tr.kube_stopped_at.items())  # built on demand in the batch path
    d["node_statuses_order"] = list(tr.node_statuses)
    return d


def run_sim(data, config, batch: bool, start: int, trace: bool = False):
    sim = Simulation(scenario_from_data(data), config_doc=config, tie_break="name", trace_all_filters=trace)
    sim.ctx.batch = batch
    sim.ctx.next_start_node_index = start
    out = []
    for tr in sim.run():
        out.append((comparable(tr), tr.processed_nodes, sim.ctx.next_start_node_index))
    return out


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("trace", [False, True], ids=["kube", "trace"])
def test_random_clusters_batch_equals_per_node(seed, trace):
    rng = random.Random(seed)
    n = rng.choice([5, 40, 130, 260])
    nodes = [rand_node(rng, i) for i in range(n)]
    names = [nd["metadata"]["name"] for nd in nodes]
    bound = []
    for i in range(rng.randint(0, n)):
        p = rand_pod(rng, f"b{i}")
        p["spec"]["nodeName"] = rng.choice(names)
        p["status"] = {"phase": "Running"}
        p["spec"].pop("affinity", None)
        bound.append(p)
    pending = [rand_pod(rng, f"p{i}", names) for i in range(25)]
    data = {"nodes": nodes, "pods": bound, "pending": pending}
    config = rand_config(rng)
    start = rng.randrange(n)
    a = run_sim(data, config, True, start, trace)
    b = run_sim(data, config, False, start, trace)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x == y


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("trace", [False, True], ids=["kube", "trace"])
def test_random_clusters_with_spread_and_pod_affinity_batch_equals_per_node(seed, trace):
    """PodTopologySpread and InterPodAffinity batch paths: spread constraints, pod (anti-)affinity terms on
    the incoming and on the bound pods, two namespaces."""
    rng = random.Random(1000 + seed)
    n = rng.choice([6, 40, 130, 260])
    nodes = [rand_node(rng, i) for i in range(n)]
    names = [nd["metadata"]["name"] for nd in nodes]
    bound = []
    for i in range(rng.randint(0, 2 * n)):
        p = add_inter_pod_terms(rng, rand_pod(rng, f"b{i}"))
        p["spec"]["nodeName"] = rng.choice(names)
        p["spec"].pop("topologySpreadConstraints", None)
        p["status"] = {"phase": "Running"}
        bound.append(p)
    pending = [add_inter_pod_terms(rng, rand_pod(rng, f"p{i}", names)) for i in range(25)]
    data = {"nodes": nodes, "pods": bound, "pending": pending}
    config = rand_config(rng)
    start = rng.randrange(n)
    a = run_sim(data, config, True, start, trace)
    b = run_sim(data, config, False, start, trace)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x == y


def _golden_scenarios():
    out = []
    for d in ("core", "config"):
        out += sorted(glob.glob(os.path.join(ROOT, "tests", "golden", d, "*.scenario.json")))
    return out


@pytest.mark.parametrize("path", _golden_scenarios(), ids=lambda p: os.path.basename(p).split(".")[0])
@pytest.mark.parametrize("trace", [False, True], ids=["kube", "trace"])
def test_golden_scenarios_batch_equals_per_node(path, trace):
    """Kube mode's batch search, and trace mode's FilterTable, give the per-node paths' traces."""
    scenario = load_scenario(path)
    runs = []
    for batch in (True, False):
        try:
            sim = Simulation(scenario, tie_break="name", trace_all_filters=trace)
        except Exception as err:  # a config the golden file expects to be rejected
            runs.append(("rejected", str(err)))
            continue
        sim.ctx.batch = batch
        runs.append([(comparable(tr), sim.ctx.next_start_node_index) for tr in sim.run()])
    assert runs[0] == runs[1]


def _loop_run(data, batch: bool, seed=None, tie_break="name"):
    from scheduler_core.scenario import scenario_from_data as sfd
    sc = sfd(data) if isinstance(data, dict) else data
    cluster = SimulatedCluster.from_scenario(sc)
    traces = []
    sched = Scheduler(cluster, tie_break=tie_break, seed=seed, trace_sink=CallbackSink(lambda t: traces.append(
        (comparable(t), t.processed_nodes, t.start_index))))
    sched.ctx.batch = batch
    sched.run_until_idle()
    for _ in range(3):
        sched.queue.flush_backoff_q_all()
        sched.run_until_idle()
    return traces, cluster.placements(), len(cluster.evictions)


def _load_loop_bench():
    import importlib.util
    spec = importlib.util.spec_from_file_location("loop_bench", os.path.join(ROOT, "bench", "loop_bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("seed", [1, 2])
def test_scheduling_loop_batch_equals_per_node(seed):
    """Taints, cordons, GPUs, spread, affinity, preemption and nominated pods through the whole loop."""
    data = _load_loop_bench().generate(nodes=120, pods=150, seed=seed)
    a = _loop_run(data, True)
    b = _loop_run(data, False)
    assert a[1] == b[1] and a[2] == b[2]
    assert len(a[0]) == len(b[0])
    for x, y in zip(a[0], b[0]):
        assert x == y


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "loop", "*.scenario.json"))),
                         ids=lambda p: os.path.basename(p).split(".")[0])
def test_golden_loop_scenarios_batch_equals_per_node(path):
    scenario = load_scenario(path)
    a = _loop_run(scenario, True)
    b = _loop_run(scenario, False)
    assert a == b


def test_nominated_pods_take_the_two_pass_path():
    rng = random.Random(7)
    nodes = [rand_node(rng, i) for i in range(30)]
    for nd in nodes:
        nd["spec"] = {}
        nd["status"]["allocatable"] = nd["status"]["capacity"] = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    pending = []
    for i in range(20):
        p = rand_pod(rng, f"p{i}")
        p["spec"].pop("affinity", None)
        p["spec"].pop("nodeSelector", None)
        p["spec"].pop("nodeName", None)
        p["spec"]["priority"] = rng.choice([0, 10])
        p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1500m"}}
        if i % 3 == 0:
            p["status"]["nominatedNodeName"] = nodes[rng.randrange(30)]["metadata"]["name"]
        pending.append(p)
    data = {"nodes": nodes, "pods": [], "pending": pending}
    a = _loop_run(data, True)
    b = _loop_run(data, False)
    assert a == b


# -- plugins in isolation --------------------------------------------------------------------------
def _snapshot(rng, n=60):
    nodes = [Node(rand_node(rng, i)) for i in range(n)]
    infos = []
    for nd in nodes:
        ni = NodeInfo(nd)
        for j in range(rng.randint(0, 3)):
            raw = rand_pod(rng, f"{nd.name}-b{j}")
            raw["spec"]["nodeName"] = nd.name
            ni.add_pod(Pod(raw))
        infos.append(ni)
    return Snapshot(infos)


@pytest.mark.parametrize("seed", range(15))
def test_plugins_batch_equal_per_node(seed):
    rng = random.Random(100 + seed)
    snap = _snapshot(rng)
    table = snap.table()
    rows = np.array(rng.sample(range(snap.num_nodes()), 45), dtype=np.int64)
    infos = [snap.node_infos[r] for r in rows]
    fits = [Fit(None), Fit({"scoringStrategy": {"type": "MostAllocated"}}),
            Fit({"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [
                {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}, {"name": "ephemeral-storage", "weight": 1}],
                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}, {"utilization": 60, "score": 3},
                                                       {"utilization": 100, "score": 0}]}}})]
    three = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                           {"name": "ephemeral-storage", "weight": 1}]}
    balanced = [BalancedAllocation(None), BalancedAllocation(three),
                BalancedAllocation(None, balance_change=True), BalancedAllocation(three, balance_change=True)]
    fit_136 = Fit(None, unresolvable_over_allocatable=True, summed_nonzero=True)
    filters = [NodeUnschedulable(), NodeName(), TaintToleration(), TaintToleration(generic_message=True),
               NodeAffinity(), fits[0], fit_136]
    scorers = fits + [fit_136] + balanced + [TaintToleration(), NodeAffinity(), ImageLocality(Handle(snap)),
                                             ImageLocality(Handle(snap), image_volumes=True)]
    for i in range(20):
        pod = Pod(rand_pod(rng, f"p{i}", [ni.name for ni in snap.node_infos]))
        for pl in filters:
            state = CycleState()
            if hasattr(pl, "pre_filter"):
                pl.pre_filter(state, pod)
            if hasattr(pl, "filter_batch_statuses"):
                res = pl.filter_batch_statuses(state, pod, table, rows)
                if res is None:
                    continue
                kinds, statuses = res
                for k, ni in zip(kinds.tolist(), infos):
                    st = pl.filter(state, pod, ni)
                    assert (None if k < 0 else statuses[k]) == (None if st is None else (st.code, tuple(st.reasons)))
                continue
            mask = pl.filter_batch(state, pod, table, rows)
            if mask is None:
                continue
            expect = [pl.filter(state, pod, ni) is not None for ni in infos]
            assert mask.tolist() == expect, pl.name
        for pl in scorers:
            state = CycleState()
            if hasattr(pl, "pre_score"):
                pl.pre_score(state, pod, infos)
            got = pl.score_batch(state, pod, table, rows)
            if got is None:
                continue
            expect = [pl.score(state, pod, ni)[0] for ni in infos]
            assert got.tolist() == expect, pl.name
            ext = pl.score_extensions()
            if ext is not None:
                pairs = [[ni.name, s] for ni, s in zip(infos, expect)]
                ext.normalize_score(state, pod, pairs)
                assert ext.normalize_score_batch(state, pod, got).tolist() == [s for _, s in pairs], pl.name


def test_table_rows_follow_snapshot_changes():
    rng = random.Random(5)
    snap = _snapshot(rng, 20)
    table = snap.table()
    ni = snap.node_infos[7]
    pod = Pod(rand_pod(rng, "extra"))
    ni.add_pod(pod.bound_to(ni.name))
    assert snap.table() is table
    assert table.pod_count[7] == len(ni.pods)
    assert table.req_cpu[7] == ni.requested.get("cpu", 0)
    clone = snap.node_infos[3].clone()
    clone.add_pod(Pod(rand_pod(rng, "dry-run")).bound_to(clone.name))
    assert snap.table().pod_count[3] == len(snap.node_infos[3].pods)  # clones do not touch the table


def test_table_marks_values_beyond_float_precision():
    node = Node({"metadata": {"name": "huge"}, "status": {"allocatable": {"cpu": "1", "memory": "100Pi", "pods": "9"}}})
    snap = Snapshot([NodeInfo(node)])
    table = snap.table()
    assert not table.exact
    state = CycleState()
    pod = Pod(rand_pod(random.Random(1), "p"))
    Fit(None).pre_filter(state, pod)
    assert Fit(None).filter_batch_statuses(state, pod, table, np.array([0])) is None


def test_golden_trace_json_has_plain_ints():
    path = _golden_scenarios()[0]
    sim = Simulation(load_scenario(path), tie_break="name", trace_all_filters=False)
    for tr in sim.run():
        json.dumps(tr.to_dict())


def test_filter_batch_status_matches_filter():
    rng = random.Random(11)
    snap = _snapshot(rng, 40)
    table = snap.table()
    rows = np.arange(40, dtype=np.int64)
    names = [ni.name for ni in snap.node_infos]
    for i in range(30):
        pod = Pod(rand_pod(rng, f"p{i}", names))
        for pl in (NodeUnschedulable(), NodeName(), NodeAffinity()):
            state = CycleState()
            mask = pl.filter_batch(state, pod, table, rows)
            if mask is None:
                continue
            for j in np.flatnonzero(mask):
                st = pl.filter(state, pod, snap.node_infos[j])
                assert (st.code, tuple(st.reasons)) == pl.filter_batch_status(state, pod)


def _inter_pod_snapshot(rng, n=60):
    nodes = [Node(rand_node(rng, i)) for i in range(n)]
    infos = []
    for nd in nodes:
        ni = NodeInfo(nd)
        for j in range(rng.randint(0, 4)):
            raw = add_inter_pod_terms(rng, rand_pod(rng, f"{nd.name}-b{j}"))
            raw["spec"]["nodeName"] = nd.name
            ni.add_pod(Pod(raw))
        infos.append(ni)
    return Snapshot(infos)


@pytest.mark.parametrize("seed", range(15))
def test_spread_and_inter_pod_affinity_batch_equal_per_node(seed):
    """filter_batch_statuses gives each row the status ``filter`` gives; score_batch and
    normalize_score_batch give the per-node scores, also after AddPod / RemovePod."""
    rng = random.Random(300 + seed)
    snap = _inter_pod_snapshot(rng)
    table = snap.table()
    handle = Handle(snap)
    rows = np.array(rng.sample(range(snap.num_nodes()), 45), dtype=np.int64)
    infos = [snap.node_infos[r] for r in rows]
    handle_136 = Handle(snap)
    handle_136.features = versions.features("1.36")
    plugins = [PodTopologySpread(None, handle), InterPodAffinity(None, handle),
               InterPodAffinity({"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True}, handle),
               InterPodAffinity(None, handle_136)]
    checked = 0
    for i in range(25):
        pod = Pod(add_inter_pod_terms(rng, rand_pod(rng, f"p{i}")))
        for pl in plugins:
            state = CycleState()
            _res, st = pl.pre_filter(state, pod)
            if st is None:
                for step in range(2):
                    kinds, statuses = pl.filter_batch_statuses(state, pod, table, rows)
                    for k, ni in zip(kinds.tolist(), infos):
                        got = pl.filter(state, pod, ni)
                        want = None if got is None else (got.code, tuple(got.reasons))
                        assert (None if k < 0 else statuses[k]) == want, pl.name
                        checked += k >= 0
                    other = snap.node_infos[rng.randrange(snap.num_nodes())]
                    extra = Pod(add_inter_pod_terms(rng, rand_pod(rng, f"x{i}"))).bound_to(other.name)
                    pl.add_pod(state, pod, extra, other)  # the counts change: the batch follows
            state = CycleState()
            if pl.pre_score(state, pod, infos) is not None:
                continue
            got = pl.score_batch(state, pod, table, rows)
            expect = [pl.score(state, pod, ni)[0] for ni in infos]
            assert got.tolist() == expect, pl.name
            pairs = [[ni.name, s] for ni, s in zip(infos, expect)]
            pl.normalize_score(state, pod, pairs)
            assert pl.normalize_score_batch(state, pod, got).tolist() == [s for _, s in pairs], pl.name
    assert checked


def test_lazy_statuses_are_built_on_demand_only():
    from scheduler_core.lazy import LazyDict, LazyList
    calls = []

    def build():
        calls.append(1)
        return {"a": 1, "b": 2}
    d = LazyDict(build, 2, [1, 2])
    assert len(d) == 2 and list(d.distinct_values()) == [1, 2] and not calls
    assert d.get("a") == 1 and dict(d) == {"a": 1, "b": 2} and calls == [1]
    d["c"] = 3
    assert len(d) == 3 and sorted(d.distinct_values()) == [1, 2, 3]
    lst = LazyList(lambda: ["x", "y"], 2)
    assert len(lst) == 2 and lst == ["x", "y"] and list(lst) == ["x", "y"] and "y" in lst


def test_rejected_nodes_kept_lazily_in_kube_mode():
    """A cycle rejecting most nodes: the statuses are shared and built on demand, equal to the per-node path."""
    rng = random.Random(3)
    nodes = [rand_node(rng, i) for i in range(300)]
    for i, nd in enumerate(nodes):
        nd["spec"] = {}
        nd["metadata"]["labels"]["topology.kubernetes.io/zone"] = ZONES[i % 3]
        nd["status"]["allocatable"] = nd["status"]["capacity"] = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    pending = []
    for i in range(10):
        p = rand_pod(rng, f"p{i}")
        p["spec"].pop("nodeName", None)
        p["spec"].pop("tolerations", None)
        p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                                         "values": ["z9" if i == 9 else "z1"]}]}]}}}
        p["spec"].pop("nodeSelector", None)
        pending.append(p)
    data = {"nodes": nodes, "pods": [], "pending": pending}
    traces = {}
    for batch in (True, False):
        config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "percentageOfNodesToScore": 20}
        sim = Simulation(scenario_from_data(data), config_doc=config, tie_break="name", trace_all_filters=False)
        sim.ctx.batch = batch
        traces[batch] = list(sim.run())
    lazy = traces[True][0]
    assert lazy.node_statuses._data is None and len(lazy.node_statuses) == len(traces[False][0].node_statuses)
    assert len({id(st) for st in lazy.node_statuses.values()}) == 1
    for a, b in zip(traces[True], traces[False]):
        assert [(n, st.code, st.reasons, st.plugin) for n, st in a.node_statuses.items()] == \
            [(n, st.code, st.reasons, st.plugin) for n, st in b.node_statuses.items()]
        assert dict(a.kube_stopped_at) == b.kube_stopped_at and list(a.evaluated_nodes) == b.evaluated_nodes
        assert a.message == b.message and a.processed_nodes == b.processed_nodes
    assert traces[True][-1].message.startswith("0/300 nodes are available")
