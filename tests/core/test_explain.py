"""explain: verified counterfactuals for unschedulable pods, one hand-made scenario per kind."""
import io
import json
from contextlib import redirect_stdout

from scheduler_core.cli import main
from scheduler_core.explain import (Suggestion, explain, explain_preemption, format_quantity, pod_with_requests,
                                    near_value, with_diagnoses)
from scheduler_core.framework.status import Code, Status
from scheduler_core.objects import Pod
from scheduler_core.scenario import scenario_from_data
from scheduler_core.simulate import Simulation

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
REQ = "requiredDuringSchedulingIgnoredDuringExecution"


def node(name, cpu="4", memory="8Gi", pods="110", labels=None, taints=None, unschedulable=False, **extra):
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    alloc.update(extra)
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"metadata": {"name": name, "labels": dict({HOST: name}, **(labels or {}))}, "spec": spec,
            "status": {"allocatable": alloc, "capacity": alloc}}


def pod(name, cpu=None, memory=None, node_name=None, labels=None, ns="default", **spec_extra):
    requests = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    spec = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
    if node_name:
        spec["nodeName"] = node_name
    spec.update(spec_extra)
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "spec": spec}


def run(nodes, pending, bound=(), **objects):
    """Simulate; explain every unschedulable pod right after its attempt. Returns {pod name: suggestions}. Each
    answer is also made in two parts (without the attempt's preemption diagnosis, then with it added, rechecked
    or not), as the dashboard's engine makes it for replicas that share one explanation, and must be the same."""
    data = {"nodes": list(nodes), "pods": list(bound), "pending": list(pending)}
    data.update(objects)
    sim = Simulation(scenario_from_data(data), tie_break="name")
    out = {}
    for tr in sim.run():
        fwk = sim.frameworks[tr.pod.scheduler_name]
        if tr.unschedulable:
            handle_snapshot = fwk.handle.snapshot
            out[tr.pod.name] = explain(fwk, sim.snapshot, tr.pod, tr)
            assert fwk.handle.snapshot is handle_snapshot
            shared = explain(fwk, sim.snapshot, tr.pod, tr, preemption=False)
            for recheck in (True, False):   # right after the attempt, its dry run's answer needs no recheck
                parts = with_diagnoses(shared, explain_preemption(fwk, sim.snapshot, tr.pod, tr, recheck))
                assert [s.to_dict() for s in parts] == [s.to_dict() for s in out[tr.pod.name]]
            assert fwk.handle.snapshot is handle_snapshot
        else:
            assert explain(fwk, sim.snapshot, tr.pod, tr) == []
    return out


def by_kind(suggestions, kind):
    return [s for s in suggestions if s.kind == kind]


def texts(suggestions):
    return [s.text for s in suggestions]


# -- resources -----------------------------------------------------------------------------------
def test_resources_shortfall_per_node_with_free_and_add():
    got = run([node("n-12", cpu="2", memory="4Gi")],
              [pod("web", cpu="500m", memory="1Gi")],
              [pod("hog", cpu="1800m", memory="4Gi", node_name="n-12")])["web"]
    (s,) = [s for s in got if s.kind == "resources"]
    assert s.text == "node n-12 lacks 300m cpu and 1Gi memory; freeing it or adding a node like n-12 would fit"
    assert s.fits == ["n-12"] and s.adds_node and s.num_fits == 2
    assert s.change == {"nodes": ["n-12"], "free": {"cpu": "300m", "memory": "1Gi"}, "add_node_like": "n-12"}
    lowered = by_kind(got, "request")
    # Lowering memory to what is free (0) is impossible, so no lowering suggestion.
    assert lowered == []


def test_lowering_requests_fits_one_then_all():
    nodes = [node("a", cpu="1"), node("b", cpu="1"), node("c", cpu="1")]
    bound = [pod("x", cpu="600m", node_name="a"), pod("y", cpu="750m", node_name="b"),
             pod("z", cpu="700m", node_name="c")]
    got = run(nodes, [pod("web", cpu="500m")], bound)["web"]
    lowered = by_kind(got, "request")
    assert texts(lowered) == [   # the smaller cut first, though it fits fewer nodes
        "lowering the pod's cpu request from 500m to 400m would fit 1 node (a)",
        "lowering the pod's cpu request from 500m to 250m would fit 3 nodes (a, b and c)",
    ]
    assert lowered[1].change == {"pod": {"requests": {"cpu": "250m"}}}
    assert [s.size for s in lowered] == [0.2, 0.5]
    assert [s.kind for s in got] == ["preemption", "request", "request", "resources", "resources", "resources"]
    per_node = by_kind(got, "resources")
    assert texts(per_node)[0] == "node a lacks 100m cpu; freeing it or adding a node like a would fit"
    assert [s.nodes for s in per_node] == [["a"], ["c"], ["b"]]   # smallest shortfall first


def test_lowering_a_pod_level_request_edits_spec_resources():
    """At 1.36 a pod-level request is the pod's total: the lowered one goes to spec.resources."""
    nodes = [node("a", cpu="1")]
    web = pod("web", cpu="200m", resources={"requests": {"cpu": "800m"}})
    got = run(nodes, [web], [pod("x", cpu="500m", node_name="a")], kubeVersion="1.36")["web"]
    assert texts(by_kind(got, "request")) == ["lowering the pod's cpu request from 800m to 500m would fit 1 node (a)"]
    lowered = pod_with_requests(Pod(web), {"cpu": 500})
    assert lowered.raw["spec"]["resources"] == {"requests": {"cpu": "500m"}}
    assert lowered.requests == {"cpu": 500}


def test_lowering_two_resources_at_once():
    got = run([node("a", cpu="1", memory="2Gi")], [pod("web", cpu="800m", memory="2Gi")],
              [pod("x", cpu="500m", memory="1536Mi", node_name="a")])["web"]
    (s,) = by_kind(got, "request")
    assert s.text == ("lowering the pod's cpu request from 800m to 500m and memory request from 2Gi to 512Mi "
                      "would fit 1 node (a)")


def test_nodes_with_the_same_shortfall_are_grouped():
    nodes = [node(f"n{i}", cpu="1") for i in range(4)]
    bound = [pod(f"x{i}", cpu="900m", node_name=f"n{i}") for i in range(4)]
    got = run(nodes, [pod("web", cpu="500m")], bound)["web"]
    (s,) = by_kind(got, "resources")
    assert s.text == ("nodes n0, n1, n2 and n3 each lack 400m cpu; freeing that on any of them or adding a node "
                      "like n0 would fit")
    assert s.fits == ["n0", "n1", "n2", "n3"] and s.num_fits == 5


def test_max_per_kind_limits_per_node_suggestions():
    nodes = [node(f"n{i}", cpu="1") for i in range(8)]
    bound = [pod(f"x{i}", cpu=f"{900 - 10 * i}m", node_name=f"n{i}") for i in range(8)]
    data = {"nodes": nodes, "pods": bound, "pending": [pod("web", cpu="500m")]}
    sim = Simulation(scenario_from_data(data), tie_break="name")
    (tr,) = list(sim.run())
    got = explain(sim.frameworks["default-scheduler"], sim.snapshot, tr.pod, tr, max_per_kind=3)
    assert [s.nodes for s in by_kind(got, "resources")] == [["n7"], ["n6"], ["n5"]]


def test_no_node_big_enough_suggests_a_bigger_node():
    gpu = pod("train", cpu="1")
    gpu["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    got = run([node("n-1"), node("n-2", cpu="16")], [gpu])["train"]
    diag, add = by_kind(got, "resources")   # the diagnosis first, the bigger node as its own change
    assert diag.text == "no node has any nvidia.com/gpu allocatable (the pod requests 1)"
    assert diag.change == {} and diag.nodes == ["n-1", "n-2"] and got[0] is diag
    assert add.text == "adding a node like n-1 with 1 nvidia.com/gpu would fit"
    assert add.adds_node and add.fits == [] and add.change == {"add_node_like": "n-1",
                                                               "allocatable": {"nvidia.com/gpu": "1"}}
    big = run([node("n-1", cpu="2"), node("n-2", cpu="3")], [pod("big", cpu="6")])["big"]
    assert texts(by_kind(big, "resources")) == ["no node has 6 cpu allocatable (the most is 3 on n-2)",
                                                "adding a node like n-1 with 6 cpu would fit"]


def test_too_many_pods():
    got = run([node("n-1", pods="2")], [pod("web")], [pod("a", node_name="n-1"), pod("b", node_name="n-1")])["web"]
    (s,) = by_kind(got, "too-many-pods")
    assert s.text == "node n-1 is full (2/2 pods); freeing a pod slot or adding a node like n-1 would fit"
    assert s.fits == ["n-1"] and s.change["free_pod_slots"] == 1


# -- node selector and node affinity ---------------------------------------------------------------
def test_node_selector_label_missing_everywhere():
    nodes = [node("n-1", labels={"disk": "hdd"}), node("n-2", labels={"disk": "hdd"}), node("n-3")]
    got = run(nodes, [pod("db", nodeSelector={"disk": "ssd"})])["db"]
    assert "no node has label disk=ssd (nodes have disk=hdd (2))" in texts(got)
    (drop,) = [s for s in got if s.change.get("pod") == {"remove_node_selector": "disk"}]
    assert drop.text == "dropping nodeSelector disk=ssd would fit 3 nodes (n-1, n-2 and n-3)"
    (label,) = [s for s in got if "label_nodes" in s.change]
    # the smallest change: one node, verified labelled alone; the others named
    assert label.text == "labelling n-1 with disk=ssd would fit it; labelled so, 2 other nodes (n-2 and n-3) would " \
                         "fit too"
    assert label.change == {"label_nodes": ["n-1"], "labels": {"disk": "ssd"}, "also_fit": ["n-2", "n-3"]}
    assert label.fits == ["n-1"]
    got = run(nodes, [pod("ml", nodeSelector={"gpu": "a100"})])["ml"]
    assert "no node has label gpu=a100 (no node has a gpu label at all)" in texts(got)


def test_required_node_affinity_closest_term_and_drops():
    nodes = [node("n-1", labels={"zone": "a", "disk": "ssd"}), node("n-2", labels={"zone": "b", "disk": "ssd"})]
    terms = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["c"]},
                                   {"key": "disk", "operator": "In", "values": ["ssd"]}]},
             {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]},
                                   {"key": "gpu", "operator": "Exists"}]}]
    p = pod("db", affinity={"nodeAffinity": {REQ: {"nodeSelectorTerms": terms}}})
    got = run(nodes, [p])["db"]
    assert texts(got) == [   # diagnoses, then the drops (one requirement each: more nodes made feasible first)
        "no node has label zone=c (nodes have zone=a (1), zone=b (1))",
        "no node has label gpu",
        "node affinity term 0 is the closest: 2 nodes (n-1 and n-2) miss only zone=c",
        "preemption cannot help: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        "dropping zone=c from node affinity term 0 would fit 2 nodes (n-1 and n-2)",
        "dropping gpu from node affinity term 1 would fit 1 node (n-1)",
    ]
    assert got[4].change == {"pod": {"remove_node_affinity_requirement": {"term": 0, "matchExpressions": 0}}}


def test_matchfields_pin_to_missing_node():
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]}]
    got = run([node("n-1")], [pod("ds", affinity={"nodeAffinity": {REQ: {"nodeSelectorTerms": terms}}})])["ds"]
    assert "no node is named gone" in texts(got)
    assert "dropping metadata.name=gone from node affinity term 0 would fit 1 node (n-1)" in texts(got)


# -- taints, cordoned nodes, host ports --------------------------------------------------------------
def test_taints_toleration_counterfactual():
    gpu = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    nodes = [node(f"g-{i}", taints=gpu) for i in (1, 2, 3)]
    nodes.append(node("d-1", cpu="100m", taints=[{"key": "dedicated", "value": "x", "effect": "NoExecute"}]))
    got = run(nodes, [pod("web", cpu="500m")])["web"]
    tol = by_kind(got, "taints")
    assert texts(tol) == [
        "3 nodes (g-1, g-2 and g-3) would fit with a toleration for gpu=true:NoSchedule",
        "tolerating the taints of d-1 would not be enough (still rejected by NodeResourcesFit on 1)",
    ]
    assert tol[0].fits == ["g-1", "g-2", "g-3"] and got[1] is tol[0] and got[0].kind == "preemption"
    assert tol[0].change == {"pod": {"add_tolerations": [
        {"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]}}
    assert tol[1].still_blocked == {"NodeResourcesFit": 1}


def test_cordoned_nodes():
    taint = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    nodes = [node("c-1", unschedulable=True, taints=taint), node("c-2", cpu="100m", unschedulable=True)]
    got = run(nodes, [pod("web", cpu="500m")])["web"]
    (s,) = by_kind(got, "cordoned")
    assert s.text == "uncordoning c-1 would fit it (c-2 would still be rejected by NodeResourcesFit on 1)"
    assert s.fits == ["c-1"] and s.change == {"uncordon": ["c-1", "c-2"]}


def test_host_ports():
    ports = [{"containerPort": 8080, "hostPort": 8080}]
    nodes = [node("n-1"), node("n-2"), node("n-3", cpu="100m")]
    bound = [pod("a", node_name="n-1", containers=[{"name": "c", "ports": ports}]),
             pod("b", node_name="n-2", containers=[{"name": "c", "ports": ports}]),
             pod("c", node_name="n-3", containers=[{"name": "c", "ports": ports}])]
    got = run(nodes, [pod("web", cpu="500m", containers=[
        {"name": "c", "ports": ports, "resources": {"requests": {"cpu": "500m"}}}])], bound)["web"]
    (s,) = by_kind(got, "host-ports")
    assert s.text == ("port 8080/TCP is used on n-1, n-2 and n-3 (by default/a, default/b and default/c); "
                      "dropping hostPort 8080/TCP would fit 2 nodes (n-1 and n-2)")
    assert s.still_blocked == {"NodeResourcesFit": 1}
    assert s.change == {"pod": {"remove_host_port": {"hostIP": "0.0.0.0", "protocol": "TCP", "port": 8080}}}


# -- pod affinity, anti-affinity, topology spread --------------------------------------------------
def _term(labels, key):
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def test_pod_affinity_met_only_in_a_full_zone():
    nodes = [node("a-1", cpu="1", labels={"zone": "a"}), node("b-1", labels={"zone": "b"}),
             node("b-2", labels={"zone": "b"})]
    bound = [pod("db", cpu="1", node_name="a-1", labels={"app": "db"})]
    p = pod("api", cpu="500m", affinity={"podAffinity": {REQ: [_term({"app": "db"}, "zone")]}})
    got = run(nodes, [p], bound)["api"]
    (s,) = by_kind(got, "pod-affinity")
    assert s.text == ("pod affinity term 0 (app=db, topologyKey zone) is met only in zone a (1); 2 rejected nodes "
                      "lie elsewhere; dropping the term would fit 2 nodes (b-1 and b-2)")
    assert s.change == {"pod": {"remove_pod_affinity_term": 0}}


def test_pod_affinity_to_pods_that_do_not_exist():
    p = pod("api", labels={"app": "api"}, affinity={"podAffinity": {REQ: [_term({"app": "db"}, "zone")]}})
    got = run([node("a-1", labels={"zone": "a"})], [p])["api"]
    (s,) = by_kind(got, "pod-affinity")
    assert s.text == ("pod affinity term 0 (app=db, topologyKey zone) matches no existing pod (nor the pod itself); "
                      "dropping the term would fit 1 node (a-1)")


def test_pod_anti_affinity_term():
    nodes = [node(f"n-{i}") for i in (1, 2, 3)]
    bound = [pod(f"web-{i}", node_name=f"n-{i}", labels={"app": "web"}) for i in (1, 2, 3)]
    p = pod("web-4", labels={"app": "web"}, affinity={"podAntiAffinity": {REQ: [_term({"app": "web"}, HOST)]}})
    got = run(nodes, [p], bound)["web-4"]
    (s,) = by_kind(got, "pod-anti-affinity")
    assert s.text.startswith("pod anti-affinity term 0 (app=web, topologyKey kubernetes.io/hostname): matching "
                             "pods occupy kubernetes.io/hostname n-1 (default/web-1), n-2 (default/web-2), "
                             "n-3 (default/web-3), blocking 3 nodes; dropping the term would fit 3 nodes")
    assert s.num_fits == 3


def test_existing_pods_anti_affinity_evictions():
    nodes = [node("n-1", labels={"zone": "a"}), node("n-2", labels={"zone": "a"}),
             node("n-3", cpu="100m", labels={"zone": "b"})]
    guard = pod("guard", node_name="n-1", affinity={"podAntiAffinity": {REQ: [_term({"app": "web"}, "zone")]}})
    got = run(nodes, [pod("web", cpu="500m", labels={"app": "web"})], [guard])["web"]
    (s,) = by_kind(got, "existing-anti-affinity")
    assert s.text == ("existing pod default/guard on n-1 has required anti-affinity against this pod in zone=a, "
                      "blocking 2 nodes (n-1 and n-2); evicting it would fit 2 nodes (n-1 and n-2)")
    assert s.change == {"evict": ["default/guard"]}


def test_topology_spread_blocked_zones_and_max_skew():
    nodes = [node("za", labels={"zone": "a"}), node("zb", labels={"zone": "b"}),
             node("zc", cpu="1", labels={"zone": "c"})]
    bound = [pod(f"{z}{i}", cpu="100m" if z != "c" else "300m", node_name=f"z{z}", labels={"app": "web"})
             for z, n in (("a", 5), ("b", 5), ("c", 3)) for i in range(n)]
    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    p = pod("web", cpu="200m", labels={"app": "web"}, topologySpreadConstraints=spread)
    got = run(nodes, [p], bound)["web"]
    (s,) = by_kind(got, "topology-spread")
    assert s.text == ("topology spread maxSkew 1 on zone blocks a and b (counts a=5 b=5 c=3); "
                      "raising maxSkew to 3 would fit 2 nodes (za and zb)")
    assert s.nodes == ["za", "zb"]
    assert s.change == {"pod": {"topology_spread_constraint": 0, "max_skew": 3}}


def test_topology_spread_min_domains_and_missing_label():
    nodes = [node("za", labels={"zone": "a"}), node("nolabel")]
    bound = [pod("a0", node_name="za", labels={"app": "web"})]
    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2,
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    got = run(nodes, [pod("web", labels={"app": "web"}, topologySpreadConstraints=spread)], bound)["web"]
    t = texts(by_kind(got, "topology-spread"))
    assert "1 node (nolabel) lacks a topology label the spread constraints need (zone)" in t
    assert ("topology spread maxSkew 1 on zone blocks a (counts a=1; 1 domains < minDomains 2, so the minimum "
            "counts as 0); raising maxSkew to 2 would fit 1 node (za)") in t


# -- preemption, PreFilter, other plugins, passing nodes --------------------------------------------
def test_preemption_nominated_node_verified():
    got = run([node("n-1", cpu="1")], [pod("vip", cpu="800m", priorityClassName="x", priority=100)],
              [pod("low", cpu="500m", node_name="n-1")])["vip"]
    (s,) = by_kind(got, "preemption")
    assert s.text == "preemption nominated n-1: evicting default/low makes room"
    assert s.fits == ["n-1"] and s.change == {"evict": ["default/low"], "node": "n-1"}


def test_preemption_policy_never_and_no_victims():
    got = run([node("n-1", cpu="1")], [pod("p", cpu="2", preemptionPolicy="Never")])["p"]
    assert "preemption is disabled for this pod (preemptionPolicy: Never)" in texts(got)
    got = run([node("n-1", cpu="1")], [pod("p", cpu="2")])["p"]
    (s,) = by_kind(got, "preemption")
    assert s.text.startswith("preemption cannot help: 0/1 nodes are available: 1 No preemption victims found")


def test_prefilter_rejection():
    vols = [{"name": "data", "persistentVolumeClaim": {"claimName": "missing"}}]
    got = run([node("n-1")], [pod("db", volumes=vols)])["db"]
    assert got[0].kind == "prefilter"
    assert got[0].text == ('PreFilter plugin VolumeRestrictions rejects the pod on every node: '
                           'persistentvolumeclaim "missing" not found')
    assert got[0].nodes == ["n-1"]


def test_other_plugins_are_reported():
    pv = {"metadata": {"name": "pv-1", "labels": {ZONE: "z1"}},
          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                   "claimRef": {"namespace": "default", "name": "data"}},
          "status": {"phase": "Bound"}}
    pvc = {"metadata": {"name": "data", "namespace": "default",
                        "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
           "spec": {"volumeName": "pv-1", "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                    "resources": {"requests": {"storage": "1Gi"}}},
           "status": {"phase": "Bound"}}
    vols = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    nodes = [node("n-1", labels={ZONE: "z2"}), node("n-2", labels={ZONE: "z3"})]
    got = run(nodes, [pod("db", volumes=vols)], persistentvolumes=[pv], persistentvolumeclaims=[pvc])["db"]
    (s,) = by_kind(got, "plugin")
    assert s.text.startswith("VolumeZone rejects 2 nodes (n-1 and n-2): node(s) had no available volume zone (2)")
    assert s.text.endswith("it is the only obstacle on 2 nodes (n-1 and n-2)")


def test_nodes_passing_now_are_reported_as_changed():
    data = {"nodes": [node("n-1", cpu="1")], "pending": [pod("web", cpu="500m")],
            "pods": [pod("hog", cpu="800m", node_name="n-1")]}
    sim = Simulation(scenario_from_data(data), tie_break="name")
    (tr,) = list(sim.run())
    ni = sim.snapshot.get("n-1")
    ni.remove_pod(ni.pods[0])
    got = explain(sim.frameworks["default-scheduler"], sim.snapshot, tr.pod, tr)
    assert [s.kind for s in got] == ["changed", "preemption"]   # the stale trace row is recomputed
    assert got[0].fits == ["n-1"]
    # Without a trace the matrix is computed from the snapshot: nothing rejects the pod.
    assert texts(explain(sim.frameworks["default-scheduler"], sim.snapshot, tr.pod)) == [
        "1 node (n-1) passes every Filter plugin in this snapshot: the cluster changed since this attempt"]


def test_nodes_rejected_only_by_extenders():
    data = {"nodes": [node("n-1"), node("n-2", cpu="100m")], "pending": [pod("web", cpu="500m")]}
    sim = Simulation(scenario_from_data(data), tie_break="name")
    (tr,) = list(sim.run())
    assert tr.chosen == "n-1"
    tr.chosen, tr.unschedulable = None, True   # as if an extender had filtered n-1 out
    tr.node_statuses["n-1"] = Status(Code.UNSCHEDULABLE, "n-1 is draining")   # extender statuses name no plugin
    tr.extender_filter.append({"extender": "http://ext", "kept": [], "failed": {"n-1": "n-1 is draining"},
                               "unresolvable": {}})
    got = explain(sim.frameworks["default-scheduler"], sim.snapshot, tr.pod, tr)
    (s,) = by_kind(got, "extender")
    assert s.text == "1 node (n-1) passes every Filter plugin but the extenders reject them: n-1 is draining"
    assert s.nodes == ["n-1"] and s.fits == []


def test_explain_leaves_the_snapshot_untouched():
    data = {"nodes": [node("n-1", cpu="1", labels={"zone": "a"}), node("n-2", cpu="1", labels={"zone": "b"})],
            "pods": [pod("hog", cpu="800m", node_name="n-1", labels={"app": "web"}),
                     pod("hog2", cpu="800m", node_name="n-2")],
            "pending": [pod("web", cpu="500m", labels={"app": "web"})]}
    sim = Simulation(scenario_from_data(data), tie_break="name")
    (tr,) = list(sim.run())
    before = [(ni.name, ni.index, [p.key for p in ni.pods], dict(ni.requested), ni.node.raw, ni.image_states)
              for ni in sim.snapshot.node_infos]
    got = explain(sim.frameworks["default-scheduler"], sim.snapshot, tr.pod, tr)
    assert got
    after = [(ni.name, ni.index, [p.key for p in ni.pods], dict(ni.requested), ni.node.raw, ni.image_states)
             for ni in sim.snapshot.node_infos]
    assert before == after
    assert sim.frameworks["default-scheduler"].handle.snapshot is sim.snapshot


def test_to_dict_and_json():
    s = Suggestion("taints", "t", nodes=["a"], change={"pod": {}}, fits=["a", "b"], still_blocked={"X": 1})
    d = s.to_dict()
    assert d == {"kind": "taints", "text": "t", "nodes": ["a"], "change": {"pod": {}}, "fits": ["a", "b"],
                 "adds_node": False, "num_fits": 2, "still_blocked": {"X": 1}}
    json.dumps(d)


def test_pod_with_requests_sets_the_total_exactly():
    raw = {"metadata": {"name": "p"}, "spec": {
        "overhead": {"cpu": "100m"},
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
                           {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "300m"}}}],
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "500m"}}}, {"name": "b"}]}}
    p = Pod(raw)
    assert p.requests["cpu"] == 2100
    q = pod_with_requests(p, {"cpu": 700})
    assert q.requests["cpu"] == 700 and q.requests["memory"] == p.requests["memory"]
    assert p.raw["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"  # original untouched
    assert pod_with_requests(p, {"cpu": 50}) is None   # below the overhead


def test_format_quantity():
    assert format_quantity("cpu", 300) == "300m"
    assert format_quantity("cpu", 2000) == "2"
    assert format_quantity("memory", 2**30) == "1Gi"
    assert format_quantity("memory", 1536 * 2**20) == "1536Mi"
    assert format_quantity("memory", 1000) == "1000"
    assert format_quantity("nvidia.com/gpu", 2) == "2"


def test_cli_explain(tmp_path):
    data = {"nodes": [node("n-12", cpu="2", memory="4Gi")],
            "pods": [pod("hog", cpu="1800m", memory="4Gi", node_name="n-12")],
            "pending": [pod("web", cpu="500m", memory="1Gi")]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["simulate", str(path), "--tie-break", "name", "--explain"]) == 0
    out = buf.getvalue()
    assert ("  fix: node n-12 lacks 300m cpu and 1Gi memory; freeing it or adding a node like n-12 would fit\n"
            in out)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["simulate", str(path), "--tie-break", "name"]) == 0
    assert "fix:" not in buf.getvalue()


# -- order: diagnoses, then the smallest change first ------------------------------------------------
def test_order_toleration_then_request_then_selector_then_cluster_changes():
    gpu = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    nodes = [node("t-1", labels={"disk": "ssd"}, taints=gpu), node("s-1", cpu="1", labels={"disk": "ssd"}),
             node("p-1"), node("p-2")]
    got = run(nodes, [pod("db", cpu="500m", nodeSelector={"disk": "ssd"})],
              [pod("x", cpu="800m", node_name="s-1")])["db"]
    assert [(s.kind, s.rank) for s in got] == [
        ("preemption", 0), ("taints", 1), ("request", 3), ("node-selector", 5), ("node-selector", 8),
        ("resources", 9)]
    assert texts(got)[1:5] == [
        "1 node (t-1) would fit with a toleration for gpu=true:NoSchedule",
        "lowering the pod's cpu request from 500m to 200m would fit 1 node (s-1)",
        "dropping nodeSelector disk=ssd would fit 2 nodes (p-1 and p-2)",
        "labelling p-1 with disk=ssd would fit it; labelled so, 1 other node (p-2) would fit too",
    ]


def test_order_fewer_tolerations_first_and_changes_that_fit_nothing_last():
    a = {"key": "a", "value": "1", "effect": "NoSchedule"}
    b = {"key": "b", "value": "1", "effect": "NoSchedule"}
    nodes = [node("ab-1", taints=[a, b]), node("ab-2", taints=[a, b]), node("a-1", taints=[a]),
             node("c-1", cpu="100m", unschedulable=True)]
    got = run(nodes, [pod("web", cpu="500m")])["web"]
    assert [s.text for s in got] == [
        "preemption cannot help: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
        "1 node (a-1) would fit with a toleration for a=1:NoSchedule",
        "3 nodes (ab-1, ab-2 and a-1) would fit with tolerations for a=1:NoSchedule and b=1:NoSchedule",
        "c-1 is cordoned; uncordoning alone would not be enough (still rejected by NodeResourcesFit on 1)",
    ]
    assert [s.rank for s in got] == [0, 1, 1, 12] and [s.size for s in got[1:3]] == [1, 2]


def test_diagnoses_keep_the_analyses_order_whatever_they_fit():
    lacking = Suggestion("resources", "no node has 6 cpu allocatable (the most is 3 on n-2)", nodes=["n-1"])
    nominated = Suggestion("preemption", "preemption nominated n-1: evicting default/low makes room", nodes=["n-1"],
                           change={"evict": ["default/low"], "node": "n-1"}, fits=["n-1"])
    drop = Suggestion("node-selector", "dropping nodeSelector disk=ssd would fit 1 node (n-1)",
                      change={"pod": {"remove_node_selector": "disk"}}, fits=["n-1"])
    assert sorted([drop, lacking, nominated], key=Suggestion.order_key) == [lacking, nominated, drop]


def test_every_change_explain_makes_has_a_rank():
    fits = {"fits": ["n"]}
    pod_changes = {"add_tolerations": 1, "topology_spread_constraint": 2, "requests": 3, "remove_host_port": 4,
                   "remove_node_selector": 5, "remove_node_affinity_requirement": 5, "remove_pod_affinity_term": 6,
                   "remove_pod_anti_affinity_term": 6}
    for key, rank in pod_changes.items():
        assert Suggestion("k", "t", change={"pod": {key: 0}}, **fits).rank == rank, key
    cluster = [({"uncordon": ["n"]}, 7), ({"label_nodes": ["n"], "labels": {}}, 8),
               ({"nodes": ["n"], "free": {}, "add_node_like": "n"}, 9), ({"evict": ["ns/p"]}, 10),
               ({"add_node_like": "n", "allocatable": {}}, 11)]
    for change, rank in cluster:
        assert Suggestion("k", "t", change=change, **fits).rank == rank, change
    assert Suggestion("k", "t", change={"add_node_like": "n"}, adds_node=True).rank == 11
    assert Suggestion("k", "t", change={"uncordon": ["n"]}, still_blocked={"X": 1}).rank == 12
    assert Suggestion("k", "t", still_blocked={"X": 1}).rank == 12
    assert Suggestion("k", "t", fits=["n"]).rank == 0   # "changed": passes now, nothing to change


# -- near misses, control-plane nodes ------------------------------------------------------------------
def test_a_selector_key_the_nodes_nearly_have_is_named_and_verified():
    nodes = [node("n-1", labels={"disk": "ssd"}), node("n-2", labels={"disk": "hdd"}), node("n-3")]
    got = run(nodes, [pod("db", nodeSelector={"disktype": "ssd"})])["db"]
    (near,) = [s for s in got if "node_selector_key" in s.change.get("pod", {})]
    assert near.text == ("no node has label disktype=ssd, but 1 node has disk=ssd; nodeSelector disk=ssd in place "
                         "of disktype=ssd would fit 1 node (n-1)")
    assert near.change == {"pod": {"node_selector_key": {"from": "disktype", "to": "disk"}}}
    assert near.fits == ["n-1"] and near.rank == 5
    # in a node affinity term too; a key the nodes have with other values only is no near miss
    affinity = {"nodeAffinity": {REQ: {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "disktype", "operator": "In", "values": ["ssd"]}]}]}}}
    got = run(nodes, [pod("db", affinity=affinity)])["db"]
    (near,) = [s for s in got if "node_affinity_key" in s.change.get("pod", {})]
    assert near.text.endswith("the key disk in place of disktype in node affinity term 0 would fit 1 node (n-1)")
    got = run(nodes, [pod("db", nodeSelector={"disktype": "nvme"})])["db"]
    assert not [s for s in got if "node_selector_key" in s.change.get("pod", {})]


def test_a_toleration_key_that_nearly_names_a_taint_gets_the_exact_key():
    gpu = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    nodes = [node("gpu-1", taints=gpu), node("small", cpu="100m")]
    tolerations = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    got = run(nodes, [pod("train", cpu="1", tolerations=tolerations)])["train"]
    (near,) = [s for s in got if "toleration_key" in s.change.get("pod", {})]
    assert near.text == ("the pod's toleration of gpu does not tolerate the taint nvidia.com/gpu=present:NoSchedule: "
                         "another key; the key nvidia.com/gpu in that toleration would fit 1 node (gpu-1)")
    assert near.change["pod"]["toleration_key"] == {"index": 0, "from": "gpu", "to": "nvidia.com/gpu"}
    assert near.rank == 1
    # a toleration of another effect would not tolerate it with the key either: no hint
    tolerations[0]["effect"] = "NoExecute"
    got = run(nodes, [pod("train", cpu="1", tolerations=tolerations)])["train"]
    assert not [s for s in got if "toleration_key" in s.change.get("pod", {})]


def test_control_plane_nodes_are_suggested_only_when_nothing_else_fits():
    cp_taint = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    cp = node("cp-1", labels={"node-role.kubernetes.io/control-plane": ""}, taints=cp_taint)
    busy = node("w-1", cpu="1")
    got = run([cp, busy], [pod("web", cpu="2")])["web"]
    assert not [s for s in got if s.change.get("pod", {}).get("add_tolerations")]
    assert any(s.num_fits for s in got)   # lowering the request, adding a node like w-1, ...
    # nor named among the nodes whose taints tolerated would not be enough
    got = run([cp, busy], [pod("huge", cpu="8")])["huge"]
    assert not [s for s in got if "cp-1" in s.text and "tolerating" in s.text]
    # only the control plane could take it: then it is said
    got = run([cp], [pod("web", cpu="2")])["web"]
    (tol,) = [s for s in got if s.change.get("pod", {}).get("add_tolerations")]
    assert tol.fits == ["cp-1"]


# -- volumes -------------------------------------------------------------------------------------------------
def _claiming(name="db"):
    return pod(name, cpu="100m", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])


def _pv(name, size="10Gi", cls="manual"):
    return {"metadata": {"name": name}, "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                                                 "storageClassName": cls}, "status": {"phase": "Available"}}


def test_a_missing_claim_gets_one_created_verified():
    standard = {"metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class":
                                                                 "true"}},
                "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"}
    got = run([node("n-1"), node("n-2")], [_claiming()], storageclasses=[standard])["db"]
    (fix,) = by_kind(got, "volume")
    assert fix.text == ('persistentvolumeclaim "data" not found; creating PersistentVolumeClaim default/data '
                        "(StorageClass standard, 1Gi, ReadWriteOnce) would fit 2 nodes (n-1 and n-2)")
    assert fix.change["create_pvc"]["spec"]["storageClassName"] == "standard" and fix.rank == 7
    # no default class: a claim bound to an Available volume
    got = run([node("n-1")], [_claiming()], persistentvolumes=[_pv("pv-1")])["db"]
    (fix,) = by_kind(got, "volume")
    assert fix.text == ('persistentvolumeclaim "data" not found; creating PersistentVolumeClaim default/data bound '
                        "to PersistentVolume pv-1 (10Gi) would fit 1 node (n-1)")
    # nothing to create it with: no suggestion that would not fit
    got = run([node("n-1")], [_claiming()])["db"]
    assert by_kind(got, "volume") == []


def test_an_unbound_claim_of_a_class_without_provisioner_gets_a_volume_that_matches():
    manual = {"metadata": {"name": "manual"}, "provisioner": "kubernetes.io/no-provisioner",
              "volumeBindingMode": "Immediate"}
    claim = {"metadata": {"name": "data", "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}},
                      "storageClassName": "manual"}, "status": {"phase": "Pending"}}
    got = run([node("n-1")], [_claiming()], storageclasses=[manual], persistentvolumeclaims=[claim],
              persistentvolumes=[_pv("small", "1Gi"), _pv("big", "10Gi")])["db"]
    assert texts(by_kind(got, "volume")) == [
        "claim default/data is unbound: the StorageClass manual has no provisioner (nothing makes a "
        "PersistentVolume for it)",
        "claim default/data is unbound; binding it to PersistentVolume big (10Gi) would fit 1 node (n-1)"]
    assert by_kind(got, "volume")[1].change == {"bind_pvc": {"claim": "default/data", "volume": "big"}}


def test_a_selector_value_the_nodes_nearly_have_is_named_and_verified():
    nodes = [node("n-1", labels={"disktype": "ssd"}), node("n-2", labels={"disktype": "ssd"}),
             node("n-3", labels={"disktype": "ssd1"})]
    got = run(nodes, [pod("db", nodeSelector={"disktype": "SSD"})])["db"]
    # the value that differs only in case comes first and alone (ssd1 is also near, but further)
    (near,) = [s for s in got if "node_selector_value" in s.change.get("pod", {})]
    assert near.text == ("no node has label disktype=SSD, but 2 nodes have disktype=ssd; nodeSelector disktype=ssd in "
                         "place of disktype=SSD would fit 2 nodes (n-1 and n-2)")
    assert near.change == {"pod": {"node_selector_value": {"key": "disktype", "from": "SSD", "to": "ssd"}}}
    assert near.fits == ["n-1", "n-2"] and near.rank == 5
    # a value a few edits away, or with a separated part added, in a node affinity term
    affinity = {"nodeAffinity": {REQ: {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "disktype", "operator": "In", "values": ["hdd", "ssd2"]}]}]}}}
    got = run([node("n-3", labels={"disktype": "ssd1"}), node("n-4", labels={"disktype": "nvme-hdd"}),
               node("n-5", labels={"disktype": "tape"})], [pod("db", affinity=affinity)])["db"]
    near = [s for s in got if "node_affinity_value" in s.change.get("pod", {})]
    assert texts(near) == [
        "no node has label disktype in (hdd, ssd2), but 1 node has disktype=nvme-hdd; the value nvme-hdd in place of "
        "hdd for disktype in node affinity term 0 would fit 1 node (n-4)",
        "no node has label disktype in (hdd, ssd2), but 1 node has disktype=ssd1; the value ssd1 in place of ssd2 for "
        "disktype in node affinity term 0 would fit 1 node (n-3)"]
    assert near[1].change["pod"]["node_affinity_value"] == {"term": 0, "matchExpressions": 0, "key": "disktype",
                                                            "from": "ssd2", "to": "ssd1"}
    # a near value on a node that another plugin rejects is not suggested (verified), nor a far value
    got = run([node("n-1", labels={"disktype": "ssd"}, cpu="100m")], [pod("db", cpu="1",
                                                                          nodeSelector={"disktype": "SSD"})])["db"]
    assert not [s for s in got if "node_selector_value" in s.change.get("pod", {})]
    got = run([node("n-5", labels={"disktype": "tape"})], [pod("db", nodeSelector={"disktype": "ssd"})])["db"]
    assert not [s for s in got if "node_selector_value" in s.change.get("pod", {})]


def test_a_toleration_value_that_nearly_names_a_taints_gets_the_exact_value():
    gpu = [{"key": "gpu", "value": "gpu", "effect": "NoSchedule"}]
    nodes = [node("gpu-1", taints=gpu), node("small", cpu="100m")]
    tolerations = [{"key": "gpu", "operator": "Equal", "value": "Gpu", "effect": "NoSchedule"}]
    got = run(nodes, [pod("train", cpu="1", tolerations=tolerations)])["train"]
    (near,) = [s for s in got if "toleration_value" in s.change.get("pod", {})]
    assert near.text == ("the pod's toleration of gpu=Gpu does not tolerate the taint gpu=gpu:NoSchedule: another "
                         "value; the value gpu in that toleration would fit 1 node (gpu-1)")
    assert near.change["pod"]["toleration_value"] == {"index": 0, "from": "Gpu", "to": "gpu"}
    assert near.rank == 1
    # another effect, or a value far from the taint's: no hint
    for change in ({"effect": "NoExecute"}, {"value": "tpu-v5e"}):
        other = [dict(tolerations[0], **change)]
        got = run(nodes, [pod("train", cpu="1", tolerations=other)])["train"]
        assert not [s for s in got if "toleration_value" in s.change.get("pod", {})]


def test_near_value_rule():
    assert near_value("SSD", "ssd") == 0
    assert near_value("ssd", "ssd1") == near_value("ssd", "nvme-ssd") == near_value("ssd", "sdd") == 1
    assert near_value("ssd", "ssd") is None and near_value("ssd", "tape") is None
    assert near_value("a", "b") is None and near_value("ssd", "hdd-nvme") is None
