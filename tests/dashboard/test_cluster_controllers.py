"""What kube-controller-manager does in a simulated cluster, as kubectl sees it: node IPAM (each node a /24 of the
cluster CIDR, its pods' IPs in it) and the ReplicaSets that the demo's and the workload generator's pods name as
their controller, with the status the ReplicaSet controller gives them."""
from __future__ import annotations

import ipaddress
import random
import threading

import pytest

from dashboard.models import Cluster, Node, Pod
from dashboard.services import control, nodeipam
from dashboard.services.demo import demo_scenario
from dashboard.services.runner import Runner
from dashboard.services.workload import SHAPES, WorkloadGenerator, pod_template, replica_set
from tests.k8s_api_server import node

from .conftest import load_cluster, wait_for
from .test_store import k8s

pytestmark = pytest.mark.django_db(transaction=True)
TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"


def served_nodes(cluster, token) -> dict:
    _s, body = k8s(cluster, token, "GET", "/api/v1/nodes")
    return {n["metadata"]["name"]: n for n in body["items"]}


def test_each_node_gets_a_24_of_the_cluster_cidr_and_keeps_it(small, api):
    """The six nodes of the scenario get the first six blocks; one created through the API gets the next (after
    its creation, as the controller's patch), one added through the REST API the one after; a deleted node's
    block is free again; a write that changes a node's pod CIDR is refused in kube's words."""
    cluster, token = small
    nodes = served_nodes(cluster, token)
    assert {n: nodes[n]["spec"]["podCIDRs"] for n in nodes} == {
        name: [f"10.0.{i}.0/24"] for i, name in enumerate(["n-0", "n-1", "n-2", "n-3", "n-4", "gpu-0"])}
    assert all(n["spec"]["podCIDR"] == n["spec"]["podCIDRs"][0] for n in nodes.values())
    status, created = k8s(cluster, token, "POST", "/api/v1/nodes", node("from-kubectl"))
    assert status == 201 and "podCIDR" not in created["spec"]   # the create's answer: not allocated yet
    assert served_nodes(cluster, token)["from-kubectl"]["spec"]["podCIDRs"] == ["10.0.6.0/24"]
    resp = api.post(f"/api/clusters/{cluster.name}/nodes/",
                    {"manifest": {"metadata": {"name": "from-rest"},
                                  "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}},
                    format="json")
    assert resp.status_code == 201, resp.content
    assert Node.objects.get(cluster=cluster, name="from-rest").raw["spec"]["podCIDRs"] == ["10.0.7.0/24"]
    assert k8s(cluster, token, "DELETE", "/api/v1/nodes/n-2")[0] == 200
    assert k8s(cluster, token, "POST", "/api/v1/nodes", node("after-delete"))[0] == 201
    assert served_nodes(cluster, token)["after-delete"]["spec"]["podCIDRs"] == ["10.0.2.0/24"]
    moved = dict(served_nodes(cluster, token)["n-0"])
    moved["spec"] = dict(moved["spec"], podCIDR="10.0.9.0/24", podCIDRs=["10.0.9.0/24"])
    status, body = k8s(cluster, token, "PUT", "/api/v1/nodes/n-0", moved)
    assert status == 422 and body["details"]["causes"] == [{
        "reason": "FieldValueForbidden", "field": "spec.podCIDRs",
        "message": 'Forbidden: node updates may not change podCIDR except from "" to valid'}]


def test_the_allocator_searches_from_the_first_block_and_says_when_none_is_free():
    cidrs = nodeipam.CidrSet(["10.0.0.0/24", "10.0.2.0/24", "192.168.0.0/24", "not a cidr"])
    assert [cidrs.allocate() for _ in range(3)] == ["10.0.1.0/24", "10.0.3.0/24", "10.0.4.0/24"]
    given = {"metadata": {"name": "own"}, "spec": {"podCIDR": "10.0.5.0/24"}}
    assert cidrs.with_pod_cidr(given) is given and cidrs.allocate() == "10.0.6.0/24"
    full = nodeipam.CidrSet()
    full.used = set(range(full.size))
    assert full.size == 16384 and full.allocate() is None
    assert full.with_pod_cidr({"metadata": {"name": "late"}}) == {"metadata": {"name": "late"}}


def test_bound_pods_run_with_an_ip_of_their_nodes_pod_cidr(small):
    """kubectl get pods -o wide: each pod the loop bound has an IP in its node's block and the node's InternalIP
    as hostIP; kubectl get nodes -o wide: each node has an InternalIP and a version."""
    cluster, token = small
    assert Runner(cluster.id, steps=10).run()
    nodes = served_nodes(cluster, token)
    _s, pods = k8s(cluster, token, "GET", "/api/v1/pods")
    bound = [p for p in pods["items"] if p["spec"].get("nodeName")]
    assert len(bound) == 2
    for p in bound:
        n = nodes[p["spec"]["nodeName"]]
        assert ipaddress.ip_address(p["status"]["podIP"]) in ipaddress.ip_network(n["spec"]["podCIDR"])
        internal = {a["type"]: a["address"] for a in n["status"]["addresses"]}
        assert p["status"]["hostIP"] == internal["InternalIP"] and internal["Hostname"] == n["metadata"]["name"]
    _s, table = k8s(cluster, token, "GET", "/api/v1/nodes", headers={"Accept": TABLE})
    version = [c["name"] for c in table["columnDefinitions"]].index("Version")
    internal_ip = [c["name"] for c in table["columnDefinitions"]].index("Internal-IP")
    assert all(r["cells"][version].startswith("v1.") and r["cells"][internal_ip].startswith("10.")
               for r in table["rows"])


def test_a_loaded_scenarios_running_pods_have_ips_in_their_nodes_blocks(api):
    """The demo's 60 pods that run from the start (bound in the scenario) are reported by their nodes' kubelets."""
    cluster = load_cluster(api, demo_scenario())
    nodes = {n.name: n.raw for n in Node.objects.filter(cluster=cluster)}
    running = [p for p in Pod.objects.filter(cluster=cluster).exclude(node_name="")]
    assert len(running) == 60
    for p in running:
        status = p.raw["status"]
        assert status["phase"] == "Running" and {c["type"] for c in status["conditions"]} >= {"Ready"}
        assert ipaddress.ip_address(status["podIP"]) in ipaddress.ip_network(nodes[p.node_name]["spec"]["podCIDR"])


def replica_sets(cluster, token, namespace: str = "") -> dict:
    path = f"/apis/apps/v1/namespaces/{namespace}/replicasets" if namespace else "/apis/apps/v1/replicasets"
    status, body = k8s(cluster, token, "GET", path)
    assert status == 200, body
    return {f'{r["metadata"]["namespace"]}/{r["metadata"]["name"]}': r for r in body["items"]}


def test_every_controller_a_demo_pod_names_is_a_replica_set_kubectl_lists(api):
    """Each pod's controller ownerReference names a ReplicaSet of its namespace by name and uid, whose selector
    its labels match and whose template it is made of; after the loop ran, kubectl get rs counts them: DESIRED
    as the scenario says, CURRENT the pods, READY the running ones."""
    from dashboard.services import credentials
    cluster = load_cluster(api, demo_scenario())
    token = credentials.create_token(cluster, "tests", None)[1]
    assert Runner(cluster.id, steps=60).run()
    sets = replica_sets(cluster, token)
    assert {k.split("/")[0] for k in sets} == {"prod", "shop", "edge"} and len(sets) == 14
    owned = {}
    _s, pods = k8s(cluster, token, "GET", "/api/v1/pods")
    for p in pods["items"]:
        refs = [r for r in p["metadata"].get("ownerReferences") or () if r.get("controller")]
        if not refs:
            continue
        rs = sets[f'{p["metadata"]["namespace"]}/{refs[0]["name"]}']
        assert refs[0]["kind"] == "ReplicaSet" and refs[0]["uid"] == rs["metadata"]["uid"]
        assert all(p["metadata"]["labels"].get(k) == v for k, v in rs["spec"]["selector"]["matchLabels"].items())
        assert p["spec"]["containers"][0]["resources"] == rs["spec"]["template"]["spec"]["containers"][0]["resources"]
        owned.setdefault(refs[0]["name"], []).append(p)
    assert sum(len(v) for v in owned.values()) == 104   # 60 base, 40 web, 4 ingress
    for key, rs in sets.items():
        mine = owned[rs["metadata"]["name"]]
        running = sum(1 for p in mine if p["status"].get("phase") == "Running")
        assert rs["spec"]["replicas"] == len(mine) and rs["status"]["replicas"] == len(mine), key
        assert rs["status"]["readyReplicas"] == rs["status"]["availableReplicas"] == running, key
        assert rs["status"]["fullyLabeledReplicas"] == len(mine) and rs["status"]["terminatingReplicas"] == 0
    assert sum(r["status"]["readyReplicas"] for k, r in sets.items() if k.startswith("shop/")) > 0
    _s, table = k8s(cluster, token, "GET", "/apis/apps/v1/namespaces/prod/replicasets", headers={"Accept": TABLE})
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Desired", "Current", "Ready", "Age",
                                                               "Containers", "Images", "Selector"]
    for row in table["rows"]:
        name, desired, current, ready, age, containers, images, selector = row["cells"]
        assert desired == current == ready == len(owned[name]) and age != "<unknown>"
        assert (containers, images) == ("base", "registry.example/base:1.0")
        assert selector == f"app=base,pod-template-hash={name.split('-')[1]}"


def test_the_workload_generators_pods_belong_to_the_replica_sets_it_scales(api):
    """A running demo workload: the ReplicaSets its pods name are created (through kube's admission: a uid of the
    server's, spec defaults) and scaled to the pods they have, their status counting them."""
    from dashboard.services import credentials
    scenario = {"name": "gen", "nodes": [node(f"n-{i}", cpu="64", memory="256Gi") for i in range(4)], "pods": [],
                "pending": []}
    cluster = load_cluster(api, scenario)
    token = credentials.create_token(cluster, "tests", None)[1]
    Cluster.objects.filter(pk=cluster.pk).update(
        desired_state=Cluster.RUNNING, workload={"rate": 40.0, "max_pods": 400, "max_pending": 400, "lifetime": 600,
                                                 "namespace": "gen"})
    loop = threading.Thread(target=Runner(cluster.id).run, daemon=True)
    loop.start()
    try:
        wait_for(lambda: Pod.objects.filter(cluster=cluster).count() >= 40, 60, what="the generator's pods")
        # turned off while the loop runs: its ReplicaSets stay scaled to the pods it made
        Cluster.objects.filter(pk=cluster.pk).update(workload=None)
        control.send(cluster.id, "workload")

        def settled():
            sets = replica_sets(cluster, token, "gen").values()
            held = Pod.objects.filter(cluster=cluster).count()
            return all(r["spec"]["replicas"] == (r.get("status") or {}).get("replicas") for r in sets) and \
                sum(r["spec"]["replicas"] for r in sets) == held
        wait_for(settled, 60, what="the ReplicaSets scaled to the pods made")
    finally:
        Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.STOPPED)
        control.send(cluster.id, "state")
        loop.join(20)
    assert not loop.is_alive()
    sets = replica_sets(cluster, token, "gen")
    expected = WorkloadGenerator({"namespace": "gen"}, random.Random()).scaled
    assert sets and set(sets) <= expected
    counted = {}
    for p in Pod.objects.filter(cluster=cluster):
        ref = p.raw["metadata"]["ownerReferences"][0]
        rs = sets[f"gen/{ref['name']}"]
        assert ref["uid"] == rs["metadata"]["uid"] and p.name.startswith(ref["name"] + "-")
        counted[ref["name"]] = counted.get(ref["name"], 0) + 1
    assert {k.split("/")[1]: r["spec"]["replicas"] for k, r in sets.items()} == counted
    assert {k.split("/")[1]: r["status"]["replicas"] for k, r in sets.items()} == counted
    assert all(r["metadata"]["uid"] and r["metadata"]["creationTimestamp"] for r in sets.values())


def test_a_replica_set_is_named_after_its_template_in_kubes_form():
    _w, app, cpus, mems, extra = SHAPES[0]
    first = replica_set("ns", pod_template(app, cpus[0], mems[0], extra), 3)
    again = replica_set("ns", pod_template(app, cpus[0], mems[0], extra), 5)
    other = replica_set("ns", pod_template(app, cpus[1], mems[0], extra), 3)
    assert first["metadata"]["name"] == again["metadata"]["name"] != other["metadata"]["name"]
    name_hash = first["metadata"]["labels"]["pod-template-hash"]
    assert first["metadata"]["name"] == f"web-{name_hash}" and set(name_hash) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert first["spec"]["selector"]["matchLabels"] == first["spec"]["template"]["metadata"]["labels"] == {
        "app": "web", "pod-template-hash": name_hash}
