"""What-if planning: capacity, drain and added nodes decide as the scheduling loop does."""
from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_core import whatif
from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.scenario import load_scenario, scenario_from_data
from scheduler_core.scheduler import Scheduler
from scheduler_core.trace import CallbackSink
from tests.core.loop_fixtures import node_raw, pod_raw

GOLDEN_LOOP = Path(__file__).resolve().parents[1] / "golden" / "loop"


def owned(raw: dict, kind: str = "ReplicaSet", name: str = "web-rs") -> dict:
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": name,
                                           "uid": f"uid-{name}", "controller": True}]
    return raw


def scenario(nodes, bound=(), pending=(), **objects):
    return scenario_from_data({"nodes": list(nodes), "pods": list(bound), "pending": list(pending), **objects})


def live_placements(scen, copies: list) -> dict:
    """The scheduling loop with every copy created up front: pod key -> node (or the last FitError)."""
    clock = FakeClock()
    cluster = SimulatedCluster(scen.nodes, list(scen.bound_pods), dict(scen.objects), clock)
    last = {}
    sched = Scheduler(cluster, tie_break="name", clock=clock, trace_sink=CallbackSink(
        lambda tr: last.__setitem__(tr.pod.key, tr.message)))
    for raw in copies:
        cluster.add_pod(raw)
        sched.run_until_idle()
    return {k: (p.node_name or last.get(k)) for k, p in cluster.pods.items() if k.split("/", 1)[1].startswith("c-")}


def test_capacity_counts_copies_until_the_first_that_does_not_fit():
    scen = scenario([node_raw(f"n{i}", cpu="2") for i in range(3)],
                    bound=[pod_raw("big", cpu="1", node_name="n0")])
    result = whatif.capacity(scen, pod_raw("c", cpu="500m"))
    assert result["fit"] == 10
    assert result["per_node"] == {"n1": 4, "n2": 4, "n0": 2}
    assert result["stop"]["message"] == ("0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are "
                                         "available: 3 No preemption victims found for incoming pod.")
    assert result["stop"]["would_preempt"] == []
    assert result["stop"]["plugins"] == ["NodeResourcesFit"]
    assert result["stop"]["trace"].result == "unschedulable"
    assert result["stop"]["suggestions"][0]["kind"]


def test_capacity_equals_what_the_loop_does_when_the_copies_exist():
    scen = load_scenario(str(GOLDEN_LOOP / "loop-phase2-200n-big-pods.scenario.json"))
    template = max(scen.pending_pods, key=lambda p: p.requests.get("cpu", 0)).raw
    result = whatif.capacity(scen, template, max_copies=400)
    assert not result["limited"]
    n = result["fit"]
    copies = [whatif.pod_copy(template, f"c-{i}") for i in range(1, n + 2)]
    live = live_placements(scen, copies)
    ns = template["metadata"].get("namespace") or "default"
    assert [live[f"{ns}/c-{i}"] for i in range(1, n + 1)] == [p["node"] for p in result["placements"]]
    assert live[f"{ns}/c-{n + 1}"] == result["stop"]["message"]


def test_capacity_stops_at_max_copies_and_reports_progress():
    seen = []
    result = whatif.capacity(scenario([node_raw("n0")]), pod_raw("c"), max_copies=5,
                             progress=lambda done, total, doing: seen.append((done, total, doing)))
    assert (result["fit"], result["limited"], result["stop"]) == (5, True, None)
    assert seen[0] == (0, 5, "copying the cluster (1 nodes, 0 pods)")   # told while the copy is built
    assert seen[-1] == (5, 5, "")


def test_every_stage_of_a_long_run_reports_progress():
    """Drain and add-nodes tell what they do while they build each copy and after every scheduling attempt, so
    a probe over a big cluster never goes quiet for long."""
    seen = []
    scen = scenario([node_raw("n0", cpu="1"), node_raw("n1", cpu="1")],
                    bound=[owned(pod_raw("a", cpu="1", node_name="n0"))], pending=[pod_raw("p", cpu="1")])
    whatif.drain(scen, ["n0"], progress=lambda done, total, doing: seen.append((done, total, doing)))
    assert seen[0] == (0, None, "copying the cluster (2 nodes, 2 pods)")
    assert (0, None, "loading the scheduler's cache") in seen
    assert (0, None, "1 scheduling attempts") in seen     # the pending pod, before the drain
    assert (1, 1, "") in seen                             # the eviction
    assert (1, 1, "2 scheduling attempts") in seen        # its replacement, after
    seen.clear()
    big = scenario([node_raw("n0", cpu="1")], pending=[pod_raw("p", cpu="2")])
    whatif.add_nodes(big, node_raw("t", cpu="2"), 2, progress=lambda done, total, doing: seen.append((done, doing)))
    assert seen[0] == (0, "now +0 nodes: copying the cluster (1 nodes, 1 pods)")
    assert (1, "now +2 nodes: 1 scheduling attempts") in seen
    assert [done for done, doing in seen if not doing] == [1, 2, 3]    # probes with 0, 2, then 1 more nodes


def test_capacity_copies_skip_the_names_of_pods_the_cluster_has():
    """A cluster that already holds copies of an earlier run (c-whatif-1, c-whatif-2) gets new ones beside them."""
    scen = scenario([node_raw("n0")], bound=[pod_raw("c-whatif-1", node_name="n0"), pod_raw("c-whatif-3", node_name="n0")])
    result = whatif.capacity(scen, pod_raw("c"), max_copies=3)
    assert [p["pod"] for p in result["placements"]] == ["default/c-whatif-2", "default/c-whatif-4", "default/c-whatif-5"]


def test_capacity_preempts_only_when_asked():
    scen = scenario([node_raw("n0", cpu="1")], bound=[pod_raw("low", cpu="1", node_name="n0", priority=0)])
    template = pod_raw("c", cpu="1", priority=100)
    dry = whatif.capacity(scen, template)
    assert dry["fit"] == 0 and dry["evictions"] == []
    assert [e["pod"] for e in dry["stop"]["would_preempt"]] == ["default/low"]
    result = whatif.capacity(scen, template, preemption=True)
    assert result["fit"] == 1
    assert [e["pod"] for e in result["evictions"]] == ["default/low"]


def test_capacity_refuses_a_pod_no_profile_schedules():
    with pytest.raises(whatif.WhatIfError, match='no profile has schedulerName "other"'):
        whatif.capacity(scenario([node_raw("n0")]), pod_raw("c", scheduler_name="other"))


def test_drain_recreates_owned_pods_loses_bare_ones_and_skips_daemonsets():
    scen = scenario([node_raw("n0"), node_raw("n1"), node_raw("n2")], bound=[
        owned(pod_raw("web-1", node_name="n0")),
        pod_raw("bare", node_name="n0"),
        owned(pod_raw("agent-n0", node_name="n0"), kind="DaemonSet", name="agent"),
        owned(pod_raw("db-0", node_name="n0"), kind="StatefulSet", name="db"),
        owned(pod_raw("web-2", node_name="n1"))])
    result = whatif.drain(scen, ["n0"])
    assert result["nodes"] == ["n0"]
    assert [(e["pod"], e["replacement"]) for e in result["evicted"]] == [
        ("default/bare", None), ("default/db-0", "default/db-0"), ("default/web-1", "default/web-rs-whatif-2")]
    assert all(e["node"] in ("n1", "n2") for e in result["evicted"] if e["replacement"])
    assert result["lost"] == [{"pod": "default/bare", "from": "n0"}]
    assert result["skipped"] == [{"pod": "default/agent-n0", "node": "n0", "reason": "DaemonSet-managed"}]
    assert result["blocked"] == [] and result["pending"] == []
    assert result["utilisation_after"]["n1"]["pods"] + result["utilisation_after"]["n2"]["pods"] == 3


def test_drain_is_blocked_by_a_budget_whose_pods_have_nowhere_to_go():
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}
    bound = [owned(pod_raw(f"web-{i}", cpu="1", node_name=f"n{i}", labels={"app": "web"})) for i in range(2)]
    scen = scenario([node_raw("n0", cpu="1"), node_raw("n1", cpu="1")], bound=bound, poddisruptionbudgets=[pdb])
    result = whatif.drain(scen, ["n0"])
    assert result["evicted"] == []
    assert result["blocked"] == [{"pod": "default/web-0", "node": "n0", "budgets": ["default/web"],
                                  "message": "Cannot evict pod as it would violate the pod's disruption budget."}]


def test_drain_under_a_budget_evicts_one_at_a_time_as_replacements_land():
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    bound = [owned(pod_raw(f"web-{i}", cpu="1", node_name="n0", labels={"app": "web"})) for i in range(3)]
    scen = scenario([node_raw("n0", cpu="3"), node_raw("n1", cpu="3")], bound=bound, poddisruptionbudgets=[pdb])
    result = whatif.drain(scen, [], node_filter=lambda n: n.name == "n0")
    assert [e["pod"] for e in result["evicted"]] == ["default/web-0", "default/web-1", "default/web-2"]
    assert {e["node"] for e in result["evicted"]} == {"n1"}
    assert result["blocked"] == []
    assert result["utilisation_before"]["n1"]["cpu_pct"] == 0.0
    assert result["utilisation_after"]["n1"]["cpu_pct"] == 100.0


def test_drain_of_an_unknown_node_is_refused():
    with pytest.raises(whatif.WhatIfError, match='node "nope" not found'):
        whatif.drain(scenario([node_raw("n0")]), ["nope"])


def test_added_nodes_let_pending_pods_fit_and_the_smallest_count_is_found():
    pending = [pod_raw(f"p{i}", cpu="2") for i in range(5)]
    scen = scenario([node_raw("n0", cpu="2")], pending=pending)
    result = whatif.add_nodes(scen, node_raw("big", cpu="4"), 1)
    assert result["bound_before"] == 1
    assert result["added"] == ["big-whatif-1"]
    assert len(result["now_fit"]) == 2 and {p["node"] for p in result["now_fit"]} <= {"n0", "big-whatif-1"}
    assert len(result["still_pending"]) == 2
    assert result["still_pending"][0]["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert result["smallest_count"] == 2


def test_added_nodes_do_not_help_pods_they_cannot_take():
    pending = [pod_raw("gpu", cpu="1", node_selector={"gpu": "yes"})]
    result = whatif.add_nodes(scenario([node_raw("n0")], pending=pending), node_raw("cpu-node"), 3, max_search=8)
    assert result["now_fit"] == [] and result["smallest_count"] is None
    assert result["still_pending"][0]["plugins"] == ["NodeAffinity"]
    # as a chosen target, searched for in vain; by default left out, with why
    chosen = whatif.add_nodes(scenario([node_raw("n0")], pending=pending), node_raw("cpu-node"), 3, max_search=8,
                              targets=["default/gpu"])
    assert chosen["targets"] == 1 and chosen["smallest_count"] is None and chosen["left_out"] == []
    assert result["targets"] == 0 and result["left_out"] == [
        {"pod": "default/gpu", "why": "NodeAffinity: node(s) didn't match Pod's node affinity/selector"}]


def test_a_blank_target_leaves_out_the_pods_no_such_node_can_take_and_the_answer_shows_its_placement():
    """Pods that an empty copy of the node does not take (too big for it, a selector it lacks) are left out of
    the default targets, so the smallest count is the one for the others; the answer's placement is shown with
    that count, every target placed."""
    pending = ([pod_raw(f"p{i}", cpu="2") for i in range(7)] + [pod_raw("huge", cpu="64")]
               + [pod_raw("gpu", cpu="1", node_selector={"gpu": "yes"})])
    result = whatif.add_nodes(scenario([node_raw("n0", cpu="2")], pending=pending), node_raw("big", cpu="4"), 1)
    assert result["targets"] == 7 and result["smallest_count"] == 3
    assert [p["pod"] for p in result["left_out"]] == ["default/huge", "default/gpu"]
    assert result["left_out"][0]["why"] == "NodeResourcesFit: Insufficient cpu"
    best = result["at_smallest"]
    assert best["count"] == 3 and len(best["placed"]) == 7 and all(p["node"] for p in best["placed"])
    assert {p["node"] for p in best["placed"]} == {"n0", "big-whatif-1", "big-whatif-2", "big-whatif-3"}
    assert len(result["now_fit"]) == 2   # with the one node asked for
    lines = whatif.summary("add_nodes", result)
    assert "with 3 more nodes:" in lines
    assert "  left out (no such node fits it): default/huge: NodeResourcesFit: Insufficient cpu" in lines


def test_a_deployment_stands_for_its_pod_template_owned_by_a_replicaset():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
                  "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": pod_raw("x", cpu="1")["spec"]}}}
    template = whatif.template_from_manifest(deployment)
    assert template["metadata"]["namespace"] == "shop" and template["metadata"]["labels"] == {"app": "web"}
    assert template["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    assert whatif.capacity(scenario([node_raw("n0", cpu="2")]), template)["fit"] == 2
    with pytest.raises(whatif.WhatIfError, match="spec.template: required value"):
        whatif.template_from_manifest({"kind": "Deployment", "metadata": {"name": "d"}, "spec": {}})


def test_the_command_prints_the_answer_first(tmp_path, capsys):
    import json

    from scheduler_core.cli import main
    scen = tmp_path / "cluster.json"
    scen.write_text(json.dumps({"nodes": [node_raw("n0", cpu="2"), node_raw("n1", cpu="2")],
                                "pods": [owned(pod_raw("web-1", cpu="1", node_name="n0"))]}))
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(pod_raw("c", cpu="1")))
    assert main(["whatif", "capacity", str(scen), str(pod)]) == 0
    assert capsys.readouterr().out.startswith("3 copies fit; the next one does not:\n")
    assert main(["whatif", "drain", str(scen), "n0"]) == 0
    assert capsys.readouterr().out.startswith("0 evicted pods left Pending after draining n0 (1 evicted, 0 lost, "
                                              "0 blocked; 0 other pods were pending already)")
    assert main(["whatif", "capacity", str(scen), str(pod), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stop"]["trace"]["result"] == "unschedulable"
    assert main(["whatif", "drain", str(scen), "n9"]) == 2
    assert 'node "n9" not found' in capsys.readouterr().err


def test_added_nodes_target_only_the_pods_a_profile_serves_by_default():
    """A pending pod of a schedulerName no profile serves is never tried: it is not a target by default (else no
    count would ever be enough), though it stays pending in the answer."""
    pending = [pod_raw("p0", cpu="2"), pod_raw("nobodys", cpu="1", scheduler_name="nobody-scheduler")]
    result = whatif.add_nodes(scenario([node_raw("n0", cpu="1")], pending=pending), node_raw("cpu-node", cpu="2"),
                              1, max_search=8)
    assert result["targets"] == 1 and result["smallest_count"] == 1
    assert [p["pod"] for p in result["still_pending"]] == ["default/nobodys"]


# -- DRA: copies get their own claims, added nodes bring their devices ------------------------------------------
GPU_DRIVER = "gpu.example.com"


def gpu_scenario(gpus_per_node: dict, pending=()):
    """Nodes with ``gpus_per_node`` DRA devices each (a ResourceSlice per node), a DeviceClass, a claim template
    for ``count`` GPUs per pod (``gpus-N``), at Kubernetes 1.36."""
    slices = [{"metadata": {"name": f"{n}-gpus"},
               "spec": {"driver": GPU_DRIVER, "nodeName": n, "pool": {"name": n, "resourceSliceCount": 1},
                        "devices": [{"name": f"gpu-{i}"} for i in range(k)]}} for n, k in gpus_per_node.items()]
    templates = [{"metadata": {"name": f"gpus-{c}", "namespace": "default"},
                  "spec": {"spec": {"devices": {"requests": [
                      {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": c}}]}}}} for c in (1, 2)]
    return scenario_from_data({"kubeVersion": "1.36", "nodes": [node_raw(n, cpu="16") for n in gpus_per_node],
                               "pods": [], "pending": list(pending), "resourceslices": slices,
                               "deviceclasses": [{"metadata": {"name": "gpu"}, "spec": {}}],
                               "resourceclaimtemplates": templates})


def gpu_pod(name: str, gpus: int) -> dict:
    raw = pod_raw(name, cpu="100m")
    raw["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": f"gpus-{gpus}"}]
    return raw


def test_capacity_counts_devices_each_copy_claiming_its_own():
    scen = gpu_scenario({"g1": 3, "g2": 2, "cpu-only": 0})
    result = whatif.capacity(scen, gpu_pod("train", 2))
    assert result["fit"] == 2 and result["per_node"] == {"g1": 1, "g2": 1}
    assert result["stop"]["message"].startswith("0/3 nodes are available: 3 cannot allocate all claims.")
    assert whatif.capacity(scen, gpu_pod("infer", 1))["fit"] == 5


def test_added_nodes_like_a_gpu_node_bring_its_devices():
    scen = gpu_scenario({"g1": 2, "cpu-only": 0}, pending=[gpu_pod(f"p{i}", 2) for i in range(4)])
    template = next(n.raw for n in scen.nodes if n.name == "g1")
    result = whatif.add_nodes(scen, template, 2)
    assert result["bound_before"] == 1
    assert sorted(p["node"] for p in result["now_fit"]) == ["g1-whatif-1", "g1-whatif-2"]
    assert result["smallest_count"] == 3
    plain = next(n.raw for n in scen.nodes if n.name == "cpu-only")
    assert whatif.add_nodes(scen, plain, 2, max_search=4)["smallest_count"] is None
