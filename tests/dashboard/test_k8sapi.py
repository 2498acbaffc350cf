"""The Kubernetes-compatible API of simulated clusters, served by the real Django app (the web process in a subprocess,
PostgreSQL) and driven by the official ``kubernetes`` client and by kubectl."""
from __future__ import annotations

import html
import ipaddress
import http.client
import json
import os
import re
import shutil
import subprocess
import threading
import time

import pytest
import yaml
from kubernetes import client as kclient
from kubernetes import config as kconfig
from kubernetes import watch as kwatch
from kubernetes.client.rest import ApiException

from scheduler_core.cluster.kube import KubeCluster
from scheduler_core.kuberun import KubeSchedulerRunner
from scheduler_core.scheduler import Scheduler
from tests.k8s_api_server import ApiServer, node, pod

from .conftest import database_url, page_client, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
# kubectl binaries to test with: $SCHEDSCOPE_KUBECTL (paths separated by ":"), else the one on PATH.
KUBECTLS = [p for p in os.environ.get("SCHEDSCOPE_KUBECTL", "").split(":") if p] or \
    [p for p in [shutil.which("kubectl")] if p]


@pytest.fixture(scope="module")
def server(tmp_path_factory, django_db_setup, django_db_blocker):
    """One server for the module, small watch window (40-80 changes) and 1s bookmarks."""
    with django_db_blocker.unblock():
        url = database_url()
    srv = ApiServer(tmp_path_factory.mktemp("k8sapi"), url, watch_window=40, bookmark_seconds=1)
    yield srv
    srv.stop()


def api_client(kubeconfig) -> kclient.ApiClient:
    return kconfig.new_client_from_config(config_file=str(kubeconfig))


def token_of(kubeconfig) -> str:
    return yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]


def status_of(err: ApiException) -> dict:
    return json.loads(err.value.body if hasattr(err, "value") else err.body)


def two_nodes() -> dict:
    return {"nodes": [node("n1"), node("n2", cpu="2")], "pods": [], "pending": []}


def raw_get(srv, path: str, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    conn.request("GET", path, headers=headers or {})
    resp = conn.getresponse()
    return resp.status, dict(resp.getheaders()), resp.read()


# -- discovery, auth, Connect ------------------------------------------------------------------------
def test_discovery_auth_and_connect(server, client, viewer_user):
    kc = server.create_cluster("disco", two_nodes())
    cfg = yaml.safe_load(kc.read_text())
    token = token_of(kc)
    base = "/clusters/disco/k8s"
    assert cfg["clusters"][0]["cluster"]["server"] == f"{server.url}{base}/t/{token}"
    # /version names the version the cluster's scheduler runs (1.36 for a new cluster): for its tokens only
    assert raw_get(server, f"{base}/version")[0] == 401
    status, _h, body = raw_get(server, f"{base}/version", {"Authorization": f"Bearer {token}"})
    assert status == 200 and json.loads(body)["gitVersion"] == "v1.36.2+schedscope"
    status, _h, body = raw_get(server, f"{base}/api")
    assert status == 401 and json.loads(body) == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                                  "status": "Failure", "message": "Unauthorized",
                                                  "reason": "Unauthorized", "code": 401}
    assert raw_get(server, f"{base}/api", {"Authorization": "Bearer nope"})[0] == 401
    assert raw_get(server, f"{base}/t/{'0' * 48}/api")[0] == 401
    status, _h, body = raw_get(server, f"{base}/api/v1", {"Authorization": f"Bearer {token}"})
    assert status == 200 and json.loads(body)["groupVersion"] == "v1"
    # a cluster that does not exist answers as a wrong token does: the API does not reveal cluster names
    refused = raw_get(server, f"{base}/api", {"Authorization": "Bearer nope"})
    for headers in ({"Authorization": f"Bearer {token}"}, {}):
        status, _h, body = raw_get(server, "/clusters/nosuch/k8s/api", headers)
        assert (status, body) == (401, refused[2])

    api = api_client(kc)
    assert kclient.VersionApi(api).get_code().git_version == "v1.36.2+schedscope"
    assert kclient.CoreApi(api).get_api_versions().versions == ["v1"]
    groups = {g.name: g.preferred_version.group_version for g in kclient.ApisApi(api).get_api_versions().groups}
    assert groups == {"apps": "apps/v1", "coordination.k8s.io": "coordination.k8s.io/v1",
                      "events.k8s.io": "events.k8s.io/v1", "policy": "policy/v1",
                      "resource.k8s.io": "resource.k8s.io/v1",
                      "scheduling.k8s.io": "scheduling.k8s.io/v1", "storage.k8s.io": "storage.k8s.io/v1"}
    core = {r.name: r for r in kclient.CoreV1Api(api).get_api_resources().resources}
    assert {"pods", "pods/binding", "pods/status", "nodes", "nodes/status", "namespaces", "events",
            "persistentvolumes", "persistentvolumeclaims", "bindings"} <= set(core)
    assert core["pods"].short_names == ["po"] and core["pods"].namespaced and "watch" in core["pods"].verbs
    assert core["pods/binding"].verbs == ["create"]
    leases = kclient.CoordinationV1Api(api).get_api_resources().resources
    assert [(r.name, r.kind) for r in leases] == [("leases", "Lease")]

    assert page_client(viewer_user).get("/clusters/disco/k8s/connect/").status_code == 403  # editors only
    page = client.get("/clusters/disco/k8s/connect/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "kubectl get pods -o wide -w" in text and "scheduler_core.kuberun" in text
    assert token not in text and f"{token[:8]}…" in text   # tokens are listed masked
    # made on the page: its kubeconfig is shown once; downloaded: the same, as a file
    shown = client.post("/clusters/disco/k8s/connect/", {"name": "laptop"}).content.decode()
    shown_cfg = yaml.safe_load(html.unescape(re.search(r'<pre class="mono" id="kubeconfig">(.*?)</pre>', shown,
                                                       re.S).group(1)))
    download = client.post("/clusters/disco/k8s/kubeconfig", {"name": "ci"})
    assert download["Content-Disposition"] == 'attachment; filename="disco.kubeconfig"'
    download_cfg = yaml.safe_load(download.content)
    assert download_cfg["current-context"] == "schedscope-disco"
    for cfg in (shown_cfg, download_cfg):
        new = cfg["users"][0]["user"]["token"]
        assert new != token and raw_get(server, f"{base}/api/v1", {"Authorization": f"Bearer {new}"})[0] == 200
        assert new not in client.get("/clusters/disco/k8s/connect/").content.decode()
    assert client.get("/clusters/disco/k8s/kubeconfig").status_code == 405   # nothing to fetch again


# -- pods: CRUD, selectors, conflicts, patches ------------------------------------------------------------
def test_pod_crud_selectors_conflicts_and_patches(server):
    api = api_client(server.create_cluster("crud", two_nodes()))
    core = kclient.CoreV1Api(api)
    created = core.create_namespaced_pod("default", pod("web-1", labels={"app": "web", "tier": "front"}))
    assert created.metadata.uid and created.metadata.resource_version and created.metadata.creation_timestamp
    spec = created.spec
    assert (spec.scheduler_name, spec.priority, spec.preemption_policy, spec.restart_policy) == \
        ("default-scheduler", 0, "PreemptLowerPriority", "Always")
    assert [(t.key, t.effect, t.toleration_seconds) for t in spec.tolerations] == [
        ("node.kubernetes.io/not-ready", "NoExecute", 300), ("node.kubernetes.io/unreachable", "NoExecute", 300)]
    assert (created.status.phase, created.status.qos_class) == ("Pending", "Burstable")
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("default", pod("web-1"))
    assert (err.value.status, status_of(err)["reason"], status_of(err)["message"]) == \
        (409, "AlreadyExists", 'pods "web-1" already exists')
    core.create_namespaced_pod("default", pod("db-1", labels={"app": "db"}))
    core.create_namespaced_pod("default", pod("other-1", labels={"app": "web", "canary": "yes"},
                                              scheduler="my-scheduler"))

    def names(**kw):
        return [p.metadata.name for p in core.list_namespaced_pod("default", **kw).items]
    assert names() == ["db-1", "other-1", "web-1"]
    assert names(label_selector="app=web") == ["other-1", "web-1"]
    assert names(label_selector="app in (web,db),!canary") == ["db-1", "web-1"]
    assert names(label_selector="app notin (web),tier") == []
    assert names(field_selector="spec.schedulerName=my-scheduler") == ["other-1"]
    assert names(field_selector="spec.schedulerName!=my-scheduler,status.phase=Pending") == ["db-1", "web-1"]
    assert names(field_selector="metadata.name=db-1") == ["db-1"]
    assert [p.metadata.name for p in core.list_pod_for_all_namespaces(field_selector="spec.nodeName=").items] == \
        ["db-1", "other-1", "web-1"]
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod("default", field_selector="spec.foo=bar")
    assert (err.value.status, status_of(err)["message"]) == (400, "field label not supported: spec.foo")
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod("default", label_selector="app in (web")
    assert err.value.status == 400 and status_of(err)["reason"] == "BadRequest"

    # pagination
    page1 = core.list_namespaced_pod("default", limit=2)
    assert [p.metadata.name for p in page1.items] == ["db-1", "other-1"]
    assert page1.metadata.remaining_item_count == 1 and page1.metadata._continue
    page2 = core.list_namespaced_pod("default", limit=2, _continue=page1.metadata._continue)
    assert [p.metadata.name for p in page2.items] == ["web-1"] and not page2.metadata._continue

    # optimistic concurrency
    stale = core.read_namespaced_pod("web-1", "default")
    core.patch_namespaced_pod("web-1", "default", {"metadata": {"labels": {"tier": "back"}}})
    stale.metadata.labels["x"] = "y"
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_pod("web-1", "default", stale)
    assert err.value.status == 409 and status_of(err)["message"] == (
        'Operation cannot be fulfilled on pods "web-1": the object has been modified; please apply your changes '
        'to the latest version and try again')
    assert status_of(err)["details"] == {"name": "web-1", "kind": "pods"}

    # strategic merge (containers by name), merge patch, JSON patch
    smp = core.patch_namespaced_pod("web-1", "default", {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}})
    c = smp.spec.containers[0]
    assert (c.image, c.resources.requests) == ("nginx:2", {"cpu": "500m", "memory": "256Mi"})
    merged = core.patch_namespaced_pod("web-1", "default", {"metadata": {"labels": {"tier": None, "m": "1"}}},
                                       _content_type="application/merge-patch+json")
    assert merged.metadata.labels == {"app": "web", "m": "1"}
    jp = core.patch_namespaced_pod("web-1", "default", [{"op": "add", "path": "/metadata/labels/j", "value": "2"},
                                                       {"op": "test", "path": "/metadata/labels/m", "value": "1"}])
    assert jp.metadata.labels == {"app": "web", "m": "1", "j": "2"}
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod("web-1", "default", [{"op": "test", "path": "/metadata/labels/m", "value": "9"}])
    assert err.value.status == 422
    unchanged = core.patch_namespaced_pod("web-1", "default", {"metadata": {"labels": {"j": "2"}}})
    assert unchanged.metadata.resource_version == jp.metadata.resource_version   # a no-op write is not a write
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod("web-1", "default", {"spec": {"nodeSelector": {"disk": "ssd"}}})
    assert err.value.status == 422 and status_of(err)["message"].startswith(
        'Pod "web-1" is invalid: spec: Forbidden: pod updates may not change fields other than')
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod("web-1", "default", {"x": 1}, _content_type="application/apply-patch+yaml")
    assert err.value.status == 415

    # validation and admission
    bad = pod("bad")
    del bad["spec"]["containers"][0]["image"]
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("default", bad)
    assert (err.value.status, status_of(err)["message"]) == (
        422, 'Pod "bad" is invalid: spec.containers[0].image: Required value')
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("nope", pod("x", namespace="nope"))
    assert (err.value.status, status_of(err)["message"]) == (404, 'namespaces "nope" not found')
    gen = core.create_namespaced_pod("default", {"metadata": {"generateName": "gen-"},
                                                 "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert gen.metadata.name.startswith("gen-") and len(gen.metadata.name) == 9
    assert gen.spec.containers[0].image_pull_policy == "Always" and gen.status.qos_class == "BestEffort"

    # delete returns the pod; then 404 with kube's Status
    deleted = core.delete_namespaced_pod("db-1", "default")
    assert deleted.metadata.name == "db-1"
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("db-1", "default")
    assert status_of(err) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": 'pods "db-1" not found', "reason": "NotFound",
                              "details": {"name": "db-1", "kind": "pods"}, "code": 404}
    gone = json.loads(core.delete_collection_namespaced_pod("default", label_selector="app=web",
                                                            _preload_content=False).data)
    assert gone["kind"] == "PodList" and [p["metadata"]["name"] for p in gone["items"]] == ["other-1", "web-1"]
    assert names() == [gen.metadata.name]


# -- binding, status, nodes -----------------------------------------------------------------------------
@pytest.mark.parametrize("version, gates, kept", [("1.36", "", False),
                                                  ("1.36", "ClearingNominatedNodeNameAfterBinding=false", True),
                                                  ("1.30", "", True)])
def test_binding_clears_nominated_node_name_at_1_36(server, version, gates, kept):
    """ClearingNominatedNodeNameAfterBinding (kube-apiserver 1.36, on by default): pods/binding clears
    status.nominatedNodeName and a bound pod's status may not be given another; 1.30, or the gate off, keeps it
    and allows it."""
    name = f"nominated-{version.replace('.', '-')}-{'off' if gates else 'default'}"
    core = kclient.CoreV1Api(api_client(server.create_cluster(name, two_nodes(), kube_version=version,
                                                              feature_gates=gates)))
    core.create_namespaced_pod("default", pod("a"))
    core.patch_namespaced_pod_status("a", "default", {"status": {"nominatedNodeName": "n2"}})
    core.create_namespaced_pod_binding("a", "default", kclient.V1Binding(
        metadata=kclient.V1ObjectMeta(name="a"), target=kclient.V1ObjectReference(kind="Node", name="n1")),
        _preload_content=False)
    bound = core.read_namespaced_pod("a", "default")
    assert bound.spec.node_name == "n1" and bound.status.nominated_node_name == ("n2" if kept else None)
    renominate = {"status": {"nominatedNodeName": "n1"}}
    if kept:
        assert core.patch_namespaced_pod_status("a", "default", renominate).status.nominated_node_name == "n1"
        return
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod_status("a", "default", renominate)
    assert (err.value.status, status_of(err)["message"]) == (
        422, 'Pod "a" is invalid: status.nominatedNodeName: Forbidden: may not be set on pods that are already bound '
             'to a node')
    cleared = core.patch_namespaced_pod_status("a", "default", {"status": {"nominatedNodeName": None}})
    assert cleared.status.nominated_node_name is None and cleared.spec.node_name == "n1"


def test_binding_status_subresources_and_nodes(server):
    api = api_client(server.create_cluster("bind", two_nodes()))
    core = kclient.CoreV1Api(api)
    core.create_namespaced_pod("default", pod("a"))
    core.create_namespaced_pod("default", pod("b"))
    body = kclient.V1Binding(metadata=kclient.V1ObjectMeta(name="a"),
                             target=kclient.V1ObjectReference(kind="Node", name="n1"))
    resp = core.create_namespaced_pod_binding("a", "default", body, _preload_content=False)
    assert resp.status == 201 and json.loads(resp.data) == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                                            "status": "Success", "code": 201}
    bound = core.read_namespaced_pod("a", "default")
    assert bound.spec.node_name == "n1" and bound.status.phase == "Running"   # the simulated kubelet runs it
    assert [(c.type, c.status) for c in bound.status.conditions] == [
        ("Initialized", "True"), ("Ready", "True"), ("ContainersReady", "True"), ("PodScheduled", "True")]
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod_binding("a", "default", body, _preload_content=False)
    assert (err.value.status, status_of(err)["message"]) == (
        409, 'Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n1"')
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod_binding("zz", "default", kclient.V1Binding(
            metadata=kclient.V1ObjectMeta(name="zz"), target=kclient.V1ObjectReference(name="n1")),
            _preload_content=False)
    assert (err.value.status, status_of(err)["message"]) == (404, 'pods "zz" not found')
    with pytest.raises(ApiException) as err:   # a UID precondition that does not hold
        core.create_namespaced_pod_binding("b", "default", kclient.V1Binding(
            metadata=kclient.V1ObjectMeta(name="b", uid="not-its-uid"),
            target=kclient.V1ObjectReference(name="n1")), _preload_content=False)
    assert err.value.status == 409 and "Precondition failed: UID in precondition: not-its-uid" in \
        status_of(err)["message"]
    # the legacy bindings resource (kube's docs' manual scheduling)
    api.call_api("/api/v1/namespaces/default/bindings", "POST", body={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"}, "target": {"kind": "Node", "name": "n2"}},
        auth_settings=["BearerToken"], _preload_content=False)
    assert core.read_namespaced_pod("b", "default").spec.node_name == "n2"
    assert [p.metadata.name for p in core.list_namespaced_pod("default", field_selector="spec.nodeName=n2").items] \
        == ["b"]

    # pods/status: conditions merge by type, nominatedNodeName set and cleared
    core.create_namespaced_pod("default", pod("c"))
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2 nodes"}
    p = core.patch_namespaced_pod_status("c", "default", {"status": {"conditions": [
        cond, {"type": "Custom", "status": "True"}], "nominatedNodeName": "n2"}})
    assert p.status.nominated_node_name == "n2" and [c.type for c in p.status.conditions] == ["PodScheduled", "Custom"]
    p = core.patch_namespaced_pod_status("c", "default", {"status": {"conditions": [dict(cond, message="again")],
                                                                     "nominatedNodeName": None}})
    assert p.status.nominated_node_name is None
    assert [(c.type, c.message) for c in p.status.conditions] == [("PodScheduled", "again"), ("Custom", None)]
    assert core.list_namespaced_pod("default", field_selector="status.nominatedNodeName=n2").items == []
    ignored = core.patch_namespaced_pod("c", "default", {"status": {"phase": "Running"}})
    assert ignored.status.phase == "Pending"   # the main resource does not write status

    # nodes: cordon, labels, status conditions by type
    n = core.patch_node("n2", {"spec": {"unschedulable": True}, "metadata": {"labels": {"disk": "ssd"}}})
    assert n.spec.unschedulable and n.metadata.labels["disk"] == "ssd"
    assert [x.metadata.name for x in core.list_node(field_selector="spec.unschedulable=true").items] == ["n2"]
    n = core.patch_node_status("n2", {"status": {"conditions": [{"type": "Ready", "status": "False"},
                                                                {"type": "MemoryPressure", "status": "False"}]}})
    assert [(c.type, c.status) for c in n.status.conditions] == [("Ready", "False"), ("MemoryPressure", "False")]
    assert n.status.allocatable["cpu"] == "2"
    with pytest.raises(ApiException) as err:
        core.patch_node("n2", {"spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}})
    assert err.value.status == 422 and status_of(err)["details"]["causes"][0]["field"] == "spec.taints[0].effect"


def test_an_outside_schedulers_pods_run_and_its_attempts_count(server, client):
    """Another scheduler working through the API: the pod it binds through pods/binding gets what the
    simulated kubelet reports (Running, a pod IP) as a change of its own, and its FailedScheduling Events
    (a series counting 3) are the attempts and the reason of the pending pod on the pending page."""
    api = api_client(server.create_cluster("outside", two_nodes()))
    core = kclient.CoreV1Api(api)
    core.create_namespaced_pod("default", pod("bound", scheduler="other"))
    wide = core.create_namespaced_pod("default", pod("wide", cpu="64", scheduler="other"))
    core.create_namespaced_pod_binding("bound", "default", {"metadata": {"name": "bound"}, "target": {"name": "n1"}},
                                       _preload_content=False)
    running = core.read_namespaced_pod("bound", "default")
    assert running.spec.node_name == "n1" and running.status.phase == "Running" and running.status.pod_ip
    assert {c.type for c in running.status.conditions} == {"Initialized", "Ready", "ContainersReady",
                                                           "PodScheduled"}
    assert [p.metadata.name for p in core.list_namespaced_pod("default", field_selector="status.phase=Pending")
            .items] == ["wide"]
    ev_api = kclient.EventsV1Api(api)
    message = "0/2 nodes are available: 2 Insufficient cpu."
    ev_api.create_namespaced_event("default", {
        "metadata": {"name": "wide.1", "namespace": "default"}, "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "other", "reportingInstance": "other-host", "action": "Scheduling",
        "reason": "FailedScheduling", "type": "Warning", "note": message,
        "regarding": {"kind": "Pod", "namespace": "default", "name": "wide", "uid": wide.metadata.uid}})
    for count in (2, 3):
        ev_api.patch_namespaced_event("wide.1", "default", {"series": {
            "count": count, "lastObservedTime": "2024-01-01T00:01:00.000000Z"}})
    page = client.get("/clusters/outside/pending/").content.decode()
    row = re.search(r'<tr data-pod="default/wide" data-attempts="(\d+)">.*?</tr>', page, re.S)
    assert row and row.group(1) == "3" and html.escape(message) in row.group(0)
    assert "default/bound" not in page


# -- watch ------------------------------------------------------------------------------------------------
def collect(stream, until, out, timeout=10.0):
    """Consume a Watch stream in a thread until ``until(events)``."""
    def run():
        for ev in stream:
            out.append(ev)
            if until(out):
                return
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_watch_events_selectors_bookmarks_and_410(server):
    kc = server.create_cluster("watch", two_nodes())
    core = kclient.CoreV1Api(api_client(kc))
    rv = core.list_namespaced_pod("default").metadata.resource_version
    events, on_n1 = [], []
    w = kwatch.Watch()
    t = collect(w.stream(core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=20),
                lambda evs: evs[-1]["type"] == "DELETED", events)
    w1 = kwatch.Watch()
    t1 = collect(w1.stream(core.list_pod_for_all_namespaces, field_selector="spec.nodeName=n1",
                           resource_version=rv, timeout_seconds=20), lambda evs: len(evs) == 3, on_n1)
    time.sleep(0.3)
    core.create_namespaced_pod("default", pod("w"))
    core.patch_namespaced_pod("w", "default", {"metadata": {"labels": {"a": "b"}}})
    core.create_namespaced_pod_binding("w", "default", {"metadata": {"name": "w"}, "target": {"name": "n1"}},
                                       _preload_content=False)
    core.delete_namespaced_pod("w", "default")
    t.join(10)
    t1.join(10)
    w.stop()
    w1.stop()
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "w"), ("MODIFIED", "w"), ("MODIFIED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]
    rvs = [int(e["object"].metadata.resource_version) for e in events]
    assert rvs == sorted(rvs) and len(set(rvs)) == 5 and rvs[0] > int(rv)
    assert events[2]["object"].spec.node_name == "n1" and events[2]["object"].status.phase == "Pending"
    assert events[3]["object"].status.phase == "Running"   # then its kubelet reports it running
    # with a field selector, binding brings the pod into view and deletion takes it out
    assert [e["type"] for e in on_n1] == ["ADDED", "MODIFIED", "DELETED"]

    # raw stream: chunked, with bookmarks, initial events and the end marker
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    token = token_of(kc)
    conn.request("GET", "/clusters/watch/k8s/api/v1/nodes?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                        "&resourceVersionMatch=NotOlderThan&timeoutSeconds=2",
                 headers={"Authorization": f"Bearer {token}"})
    resp = conn.getresponse()
    assert resp.getheader("Transfer-Encoding") == "chunked" and resp.getheader("Content-Type") == "application/json"
    lines = [json.loads(line) for line in resp.read().splitlines() if line.strip()]
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in lines[:3]] == [
        ("ADDED", "n1"), ("ADDED", "n2"), ("BOOKMARK", None)]
    assert lines[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert any(e["type"] == "BOOKMARK" for e in lines[3:])   # the periodic one (1s here)

    # resourceVersion older than the window: one ERROR event, 410 Expired; the client gives up with 410
    old_rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", pod("busy"))
    for i in range(100):
        core.patch_namespaced_pod("busy", "default", {"metadata": {"labels": {"i": str(i)}}})
    with pytest.raises(ApiException) as err:
        for _ in kwatch.Watch().stream(core.list_namespaced_pod, "default", resource_version=old_rv,
                                       timeout_seconds=5):
            pass
    assert err.value.status == 410
    status, _h, body = raw_get(server, f"/clusters/watch/k8s/api/v1/pods?watch=true&resourceVersion={old_rv}",
                               {"Authorization": f"Bearer {token}"})
    ev = json.loads(body.splitlines()[0])
    assert status == 200 and ev["type"] == "ERROR" and ev["object"]["code"] == 410
    assert ev["object"]["reason"] == "Expired" and ev["object"]["message"].startswith(
        f"too old resource version: {old_rv} (")
    # nodes had no change dropped from the window: a node watch from the same resourceVersion is fine
    status, _h, body = raw_get(server, f"/clusters/watch/k8s/api/v1/nodes?watch=true&resourceVersion={old_rv}"
                                       "&timeoutSeconds=1", {"Authorization": f"Bearer {token}"})
    assert status == 200 and b"ERROR" not in body


# -- the other kinds ------------------------------------------------------------------------------------------
def test_leases_events_priority_storage_policy_and_namespaces(server):
    api = api_client(server.create_cluster("kinds", two_nodes()))
    core = kclient.CoreV1Api(api)
    coord = kclient.CoordinationV1Api(api)
    lease = coord.create_namespaced_lease("kube-system", {"metadata": {"name": "l"}, "spec": {
        "holderIdentity": "me", "leaseDurationSeconds": 15}})
    rv = lease.metadata.resource_version
    coord.replace_namespaced_lease("l", "kube-system", {"metadata": {"name": "l", "resourceVersion": rv},
                                                        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 20}})
    with pytest.raises(ApiException) as err:
        coord.replace_namespaced_lease("l", "kube-system", {"metadata": {"name": "l", "resourceVersion": rv},
                                                            "spec": {"holderIdentity": "other"}})
    assert err.value.status == 409 and status_of(err)["message"].startswith(
        'Operation cannot be fulfilled on leases.coordination.k8s.io "l": the object has been modified')
    assert status_of(err)["details"] == {"name": "l", "group": "coordination.k8s.io", "kind": "leases"}
    deleted = coord.delete_namespaced_lease("l", "kube-system")
    assert (deleted.status, deleted.details.name, deleted.details.kind) == ("Success", "l", "leases")

    # events.k8s.io/v1 and core/v1 are two views of the same events
    target = core.create_namespaced_pod("default", pod("ev"))
    ev_api = kclient.EventsV1Api(api)
    ev = {"metadata": {"name": "ev.1", "namespace": "default"}, "eventTime": "2024-01-01T00:00:00.000000Z",
          "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-host",
          "action": "Scheduling", "reason": "FailedScheduling", "type": "Warning", "note": "0/2 nodes are available",
          "regarding": {"kind": "Pod", "namespace": "default", "name": "ev", "uid": target.metadata.uid}}
    ev_api.create_namespaced_event("default", ev)
    ev_api.patch_namespaced_event("ev.1", "default", {"series": {"count": 2,
                                                                 "lastObservedTime": "2024-01-01T00:01:00.000000Z"}})
    legacy = core.list_namespaced_event("default", field_selector=f"involvedObject.uid={target.metadata.uid},"
                                                                  "reason=FailedScheduling,type=Warning").items
    assert [(e.message, e.reporting_component, e.series.count, e.involved_object.name) for e in legacy] == [
        ("0/2 nodes are available", "default-scheduler", 2, "ev")]
    bad = dict(ev, metadata={"name": "ev.2", "namespace": "default"})
    del bad["reportingController"]
    with pytest.raises(ApiException) as err:
        ev_api.create_namespaced_event("default", bad)
    assert (err.value.status, status_of(err)["message"]) == (
        422, 'Event.events.k8s.io "ev.2" is invalid: reportingController: Required value')

    # PriorityClasses feed the Priority admission plugin
    sched_api = kclient.SchedulingV1Api(api)
    sched_api.create_priority_class({"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"})
    p = core.create_namespaced_pod("default", pod("prio", priorityClassName="high"))
    assert (p.spec.priority, p.spec.preemption_policy) == (1000, "Never")
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("default", pod("noclass", priorityClassName="nope"))
    assert (err.value.status, status_of(err)["message"]) == (
        403, 'pods "noclass" is forbidden: no PriorityClass with name nope was found')
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("default", pod("own-prio", priorityClassName="high", priority=5))
    assert err.value.status == 403 and "the integer value of priority (5) must not be provided" in \
        status_of(err)["message"]
    sched_api.create_priority_class({"metadata": {"name": "dflt"}, "value": 7, "globalDefault": True})
    assert core.create_namespaced_pod("default", pod("plain")).spec.priority == 7
    assert [c.metadata.name for c in sched_api.list_priority_class().items] == [
        "dflt", "high", "system-cluster-critical", "system-node-critical"]

    # storage: a claim bound to a pre-bound volume by the simulated PV controller
    storage = kclient.StorageV1Api(api)
    storage.create_storage_class({"metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner",
                                  "volumeBindingMode": "WaitForFirstConsumer"})
    core.create_namespaced_persistent_volume_claim("default", {
        "metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                                               "resources": {"requests": {"storage": "1Gi"}}}})
    core.create_persistent_volume({"metadata": {"name": "pv1"}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
        "hostPath": {"path": "/tmp"}, "claimRef": {"namespace": "default", "name": "data"}}})
    claim = core.read_namespaced_persistent_volume_claim("data", "default")
    assert (claim.status.phase, claim.spec.volume_name) == ("Bound", "pv1")
    assert core.read_persistent_volume("pv1").status.phase == "Bound"

    # PDBs
    policy = kclient.PolicyV1Api(api)
    policy.create_namespaced_pod_disruption_budget("default", {"metadata": {"name": "pdb"}, "spec": {
        "minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    assert [b.metadata.name for b in policy.list_pod_disruption_budget_for_all_namespaces().items] == ["pdb"]
    policy.patch_namespaced_pod_disruption_budget_status("pdb", "default", {"status": {"disruptionsAllowed": 1}})
    assert policy.read_namespaced_pod_disruption_budget("pdb", "default").status.disruptions_allowed == 1

    # namespaces take their objects with them; the system ones cannot be deleted
    core.create_namespace({"metadata": {"name": "team"}})
    assert core.read_namespace("team").metadata.labels == {"kubernetes.io/metadata.name": "team"}
    core.create_namespaced_pod("team", pod("t1", namespace="team"))
    core.delete_namespace("team")
    assert core.list_namespaced_pod("team").items == []
    with pytest.raises(ApiException) as err:
        core.delete_namespace("default")
    assert (err.value.status, status_of(err)["message"]) == (
        403, 'namespaces "default" is forbidden: this namespace may not be deleted')


def test_table_responses_for_kubectl(server):
    kc = server.create_cluster("table", two_nodes())
    kclient.CoreV1Api(api_client(kc)).create_namespaced_pod("default", pod("t"))
    token = token_of(kc)
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io," \
             "application/json"
    status, _h, body = raw_get(server, "/clusters/table/k8s/api/v1/namespaces/default/pods?includeObject=Object",
                               {"Authorization": f"Bearer {token}", "Accept": accept})
    assert status == 200
    table = json.loads(body)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]
    row = table["rows"][0]
    assert row["cells"][:4] == ["t", "0/1", "Pending", "0"] and row["cells"][6] == "<none>"
    assert row["object"]["kind"] == "Pod"
    status, _h, body = raw_get(server, "/clusters/table/k8s/api/v1/nodes",
                               {"Authorization": f"Bearer {token}", "Accept": accept})
    assert status == 200
    rows = [r["cells"][:2] + [r["cells"][4]] for r in json.loads(body)["rows"]]
    assert rows == [["n1", "Ready", "v1.30.0"], ["n2", "Ready", "v1.30.0"]]
    assert json.loads(body)["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


# -- kubectl ----------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on PATH")
@pytest.mark.parametrize("kubectl_bin", KUBECTLS)
def test_kubectl_apply_watch_describe_against_a_simulated_cluster(server, tmp_path, kubectl_bin):
    name = f"kubectl-{KUBECTLS.index(kubectl_bin)}"
    kc = server.create_cluster(name, two_nodes())
    env = {"KUBECONFIG": str(kc), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    print("\n" + subprocess.run([kubectl_bin, "version", "--client"], capture_output=True, text=True,
                                env=env).stdout.strip().splitlines()[0])

    def kubectl(*args, check=True):
        res = subprocess.run([kubectl_bin, *args], capture_output=True, text=True, env=env, timeout=60)
        if check:
            assert res.returncode == 0, res.stderr
        return res
    assert kubectl("get", "nodes").stdout.split("\n")[1].split()[:2] == ["n1", "Ready"]
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod("web", cpu="1")))
    (tmp_path / "big.yaml").write_text(yaml.safe_dump(pod("big", cpu="16")))
    watch = subprocess.Popen([kubectl_bin, "get", "pods", "-o", "wide", "-w"], stdout=subprocess.PIPE, text=True,
                             env=env)
    kube = KubeCluster(kubeconfig=str(kc), qps=0)
    kube.start()
    runner = KubeSchedulerRunner(kube, Scheduler(kube, tie_break="name"))
    stop = threading.Event()
    loop = threading.Thread(target=runner.run, args=(stop,), daemon=True)
    loop.start()
    try:
        assert kubectl("apply", "-f", str(tmp_path / "pod.yaml")).stdout.strip() == "pod/web created"
        assert kubectl("apply", "-f", str(tmp_path / "big.yaml")).stdout.strip() == "pod/big created"
        lines = []
        threading.Thread(target=lambda: lines.extend(iter(watch.stdout.readline, "")), daemon=True).start()

        def web_on_n1():
            return any(ln.split()[:1] == ["web"] and ln.split()[6] == "n1" for ln in list(lines)
                       if len(ln.split()) > 6)
        wait_for(web_on_n1, 30, what="kubectl get pods -w to show web on n1")
        assert lines[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
        assert kube.events.flush(10)
        assert kubectl("apply", "-f", str(tmp_path / "pod.yaml")).stdout.strip() == "pod/web unchanged"
        web = kubectl("describe", "pod", "web").stdout
        assert "Normal  Scheduled" in web and "Successfully assigned default/web to n1" in web
        big = kubectl("describe", "pod", "big").stdout
        assert "Warning  FailedScheduling" in big
        assert "0/2 nodes are available: 2 Insufficient cpu." in big
        assert "PodScheduled   False" in big
        events = kubectl("get", "events").stdout
        assert "Scheduled" in events and "FailedScheduling" in events
        by_last = kubectl("get", "events", "--sort-by=.lastTimestamp").stdout   # null on events.k8s.io Events
        assert "Scheduled" in by_last and "FailedScheduling" in by_last
        assert kubectl("delete", "pod", "web", "big").stdout.split("\n")[:2] == ['pod "web" deleted',
                                                                                 'pod "big" deleted']
        missing = kubectl("get", "pod", "web", check=False)
        assert missing.returncode == 1 and 'pods "web" not found' in missing.stderr
    finally:
        stop.set()
        loop.join(10)
        kube.close()
        watch.terminate()
        watch.wait(10)


@pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on PATH")
def test_repeated_events_are_one_event_series_as_kubectl_describe_shows_them(server, tmp_path):
    """kube's event series: the recorder's repeated FailedScheduling of one pod is one Event whose series counts
    them (its note the first one's); watchers see it created once and then modified; `kubectl describe` shows
    "(x3 over ...)"."""
    from dashboard.models import Cluster, Pod, SchedulingEvent
    from dashboard.services.recorder import Recorder
    from scheduler_core.objects import Pod as CorePod
    kc = server.create_cluster("series", {"nodes": [node("n1")], "pods": [], "pending": [pod("big", cpu="16")]})
    cluster = Cluster.objects.get(name="series")
    big = CorePod(Pod.objects.get(cluster=cluster, name="big").raw)
    rec = Recorder(cluster, flush_interval=0.05)
    for n in range(3):
        rec.record_event("FailedScheduling", f"0/1 nodes are available: 1 Insufficient cpu. (try {n})", pod=big,
                         type_="Warning")
        assert rec.flush(20)
    assert rec.close(20) and rec.failures == 0
    [event] = SchedulingEvent.objects.filter(cluster=cluster, pod_name="big")
    assert event.raw["series"]["count"] == 3 and event.message == event.raw["message"]
    assert event.raw["message"].endswith("(try 0)")
    assert event.raw["eventTime"] < event.raw["series"]["lastObservedTime"] == \
        event.time.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    env = {"KUBECONFIG": str(kc), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([KUBECTLS[0], "describe", "pod", "big"], capture_output=True, text=True, env=env,
                         timeout=60).stdout
    line = next(ln for ln in out.splitlines() if "FailedScheduling" in ln)
    assert re.search(r"\(x3 over \d+s\)", line) and line.endswith("(try 0)"), out


def test_the_simulated_kubelet_registers_nodes_at_the_clusters_version_and_gives_pods_ips_of_their_cidr(server):
    def unversioned(raw):
        raw["status"].pop("nodeInfo")
        return raw
    scenario = {"nodes": [node("n1"), unversioned(node("n2"))], "pods": [], "pending": [], "kubeVersion": "1.36"}
    core = kclient.CoreV1Api(api_client(server.create_cluster("kubelet", scenario)))
    # a node's own version stands; one that reports none is registered at the cluster's release
    assert [n.status.node_info.kubelet_version for n in core.list_node().items] == ["v1.30.0", "v1.36.2"]
    raw = unversioned(node("n3"))
    raw["spec"] = {"podCIDR": "10.244.7.0/24", "podCIDRs": ["10.244.7.0/24", "fd00:10:244:7::/64"]}
    assert core.create_node(raw).status.node_info.kubelet_version == "v1.36.2"
    core.create_namespaced_pod("default", pod("a"))
    core.create_namespaced_pod_binding("a", "default", kclient.V1Binding(
        metadata=kclient.V1ObjectMeta(name="a"), target=kclient.V1ObjectReference(kind="Node", name="n3")),
        _preload_content=False)
    status = core.read_namespaced_pod("a", "default").status
    v4, v6 = (ipaddress.ip_address(ip.ip) for ip in status.pod_ips)
    assert status.pod_ip == str(v4) and v4 in ipaddress.ip_network("10.244.7.0/24") and v4.packed[-1] > 1
    assert v6 in ipaddress.ip_network("fd00:10:244:7::/64")


@pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on PATH")
def test_kubectl_sees_replica_sets_pod_cidrs_and_pod_ips_as_in_a_real_cluster(server, tmp_path):
    """kubectl get rs lists the ReplicaSet its pods name (DESIRED, CURRENT and READY once the loop ran); get nodes
    -o wide shows each node's version and InternalIP, and its pod CIDR is a /24 of the cluster CIDR; get pods -o
    wide shows each running pod's IP in its node's pod CIDR."""
    from dashboard.models import Cluster
    from dashboard.services.runner import Runner
    from dashboard.services.workload import pod_of, pod_template, replica_set
    rs = replica_set("default", pod_template("web", "1", "1Gi", {}), 3, uid="rs-web-uid")
    pods = [pod_of(rs["spec"]["template"], f'{rs["metadata"]["name"]}-{s}', "default", rs) for s in "bcd"]
    kc = server.create_cluster("kubectl-rs", {"nodes": [node("n1"), node("n2")], "pods": [], "pending": pods,
                                              "replicasets": [rs]})
    assert Runner(Cluster.objects.get(name="kubectl-rs").id, steps=5).run()
    env = {"KUBECONFIG": str(kc), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}

    def kubectl(*args):
        res = subprocess.run([KUBECTLS[0], *args], capture_output=True, text=True, env=env, timeout=60)
        assert res.returncode == 0, res.stderr
        return [ln.split() for ln in res.stdout.strip().splitlines()]
    rows = kubectl("get", "rs", "-o", "wide")
    assert rows[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    name = rs["metadata"]["name"]
    assert rows[1][:4] == [name, "3", "3", "3"] and rows[1][5:] == [
        "web", "registry.example/web:1.0", f"app=web,pod-template-hash={name.split('-')[1]}"]
    nodes = kubectl("get", "nodes", "-o", "wide")
    assert nodes[0][:7] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP"]
    internal = {r[0]: r[5] for r in nodes[1:]}
    assert all(ipaddress.ip_address(ip) for ip in internal.values())
    cidrs = dict(r for r in kubectl("get", "nodes", "-o", "custom-columns=NAME:.metadata.name,CIDR:.spec.podCIDR",
                                    "--no-headers"))
    assert cidrs == {"n1": "10.0.0.0/24", "n2": "10.0.1.0/24"}
    listed = kubectl("get", "pods", "-o", "wide")
    assert listed[0][:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert len(listed) == 4
    for r in listed[1:]:
        assert r[2] == "Running" and ipaddress.ip_address(r[5]) in ipaddress.ip_network(cidrs[r[6]])
    described = subprocess.run([KUBECTLS[0], "describe", "pod", listed[1][0]], capture_output=True, text=True,
                               env=env, timeout=60).stdout
    assert f"Controlled By:  ReplicaSet/{name}" in described
