"""kube-scheduler's own requests against a simulated cluster's API, over HTTP, as client-go v1.30 sends them by
default (protobuf bodies, ``Accept: application/vnd.kubernetes.protobuf, */*``): the bodies the real Kubernetes
serializers made (/work/shared/k8s-wire), and kube-apiserver's answers to them."""
from __future__ import annotations

import http.client
import json
import threading
import time

import pytest
import yaml

from dashboard.k8sapi import protobuf
from tests.k8s_api_server import ApiServer, node, pod

from .conftest import database_url
from .test_k8sapi_protobuf import BODIES, WIRE, field

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.skipif(not BODIES, reason="no k8s-wire fixtures")]
PROTOBUF = "application/vnd.kubernetes.protobuf"
CLIENT_GO = {"Accept": f"{PROTOBUF}, */*", "Content-Type": PROTOBUF}
POD = "web-7d4b9c8f6d-x2kq9"
POD_UID = "5f0c3a2e-8a1b-4c7d-9e6f-0a1b2c3d4e5f"
# the kinds a default kube-scheduler v1.30 lists and watches (its informers and the plugins' listers), then those
# v1.36 adds (VolumeAttachments for the CSI volume limits, DynamicResources' kinds)
SCHEDULER_INFORMERS = (
    "/api/v1/pods", "/api/v1/nodes", "/api/v1/namespaces", "/api/v1/persistentvolumes",
    "/api/v1/persistentvolumeclaims", "/api/v1/services", "/api/v1/replicationcontrollers",
    "/apis/apps/v1/replicasets", "/apis/apps/v1/statefulsets", "/apis/policy/v1/poddisruptionbudgets",
    "/apis/storage.k8s.io/v1/storageclasses", "/apis/storage.k8s.io/v1/csinodes",
    "/apis/storage.k8s.io/v1/csidrivers", "/apis/storage.k8s.io/v1/csistoragecapacities",
    "/apis/storage.k8s.io/v1/volumeattachments", "/apis/resource.k8s.io/v1/deviceclasses",
    "/apis/resource.k8s.io/v1/resourceclaims", "/apis/resource.k8s.io/v1/resourceslices")


@pytest.fixture(scope="module")
def server(tmp_path_factory, django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        url = database_url()
    srv = ApiServer(tmp_path_factory.mktemp("k8swire"), url)
    yield srv
    srv.stop()


class Api:
    """Raw HTTP against one cluster's API, the token in the Authorization header as client-go sends it."""

    def __init__(self, srv: ApiServer, cluster: str, kubeconfig):
        self.port = srv.port
        self.base = f"/clusters/{cluster}/k8s"
        self.token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]

    def call(self, method: str, path: str, body: bytes | None = None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request(method, self.base + path, body=body,
                     headers={"Authorization": f"Bearer {self.token}", **(headers or {})})
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, resp.getheader("Content-Type"), json.loads(data) if data else None

    def send(self, method: str, path: str, fixture: str | bytes):
        """A protobuf body (a fixture's name, or bytes) as client-go sends it."""
        body = fixture if isinstance(fixture, bytes) else (WIRE / f"{fixture}.pb").read_bytes()
        return self.call(method, path, body, CLIENT_GO)

    def send_json(self, method: str, path: str, fixture: str, ctype: str = "application/json"):
        return self.call(method, path, (WIRE / f"{fixture}.json").read_bytes(),
                         {"Accept": "application/json, */*", "Content-Type": ctype})


def with_meta(fixture: str, **meta) -> bytes:
    """A fixture's protobuf body with ObjectMeta's uid or resourceVersion replaced (this server's values)."""
    wanted = {{"uid": 5, "resourceVersion": 6}[k]: v for k, v in meta.items()}
    body = (WIRE / f"{fixture}.pb").read_bytes()
    env = {n: v for n, _w, v in protobuf.fields(body[4:])}

    def object_meta(data: bytes) -> bytes:
        return b"".join(field(n, wanted.get(n, v)) for n, _w, v in protobuf.fields(data))

    obj = b"".join(field(n, object_meta(v) if n == 1 else v) for n, _w, v in protobuf.fields(env[2]))
    return body[:4] + field(1, env[1]) + field(2, obj) + field(3, env[3]) + field(4, env[4])


@pytest.fixture
def api(server, request):
    """A cluster of its own for each test (the database is emptied between tests)."""
    scenario = {"nodes": [node("kind-worker"), node("kind-worker2")], "pods": [],
                "pending": [dict(pod(POD, labels={"app": "web"}), metadata={"name": POD, "namespace": "default",
                                                                             "uid": POD_UID, "labels": {"app": "web"}}),
                            pod("low-prio-6c9f7-abcde"), pod("victim")]}
    name = request.node.name.removeprefix("test_").replace("_", "-")[:40].strip("-")
    return Api(server, name, server.create_cluster(name, scenario))


def test_binding_then_a_second_binding_is_a_conflict(api):
    status, ctype, body = api.send("POST", f"/api/v1/namespaces/default/pods/{POD}/binding", "binding")
    assert (status, ctype) == (201, "application/json")
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    _s, _c, got = api.call("GET", f"/api/v1/namespaces/default/pods/{POD}", headers=CLIENT_GO)
    assert got["spec"]["nodeName"] == "kind-worker2"
    status, _c, body = api.send("POST", f"/api/v1/namespaces/default/pods/{POD}/binding", "binding")
    want = json.loads((WIRE / "status-conflict.json").read_text())
    want["message"] = want["message"].replace('"kind-worker"', '"kind-worker2"')
    assert (status, body) == (409, want)


def test_pod_status_update_as_the_full_pod(api):
    path = f"/api/v1/namespaces/default/pods/{POD}/status"
    # the fixture's resourceVersion is not this server's: 409, the same answer the JSON twin gets
    stale = api.send("PUT", path, "pod-status-update")
    assert stale[0] == 409 and "the object has been modified" in stale[2]["message"]
    assert api.send_json("PUT", path, "pod-status-update") == stale
    _s, _c, current = api.call("GET", f"/api/v1/namespaces/default/pods/{POD}")
    status, _c, body = api.send("PUT", path, with_meta("pod-status-update",
                                                       resourceVersion=current["metadata"]["resourceVersion"]))
    assert status == 200, body
    assert body["status"]["nominatedNodeName"] == "kind-worker"
    assert body["status"]["conditions"][0]["reason"] == "Unschedulable"
    assert body["spec"] == current["spec"]                 # pods/status keeps the spec


def test_pod_status_strategic_merge_patch(api):
    """What kube-scheduler itself sends for the PodScheduled condition and nominatedNodeName (util.PatchPodStatus)."""
    status, _c, body = api.send_json("PATCH", f"/api/v1/namespaces/default/pods/{POD}/status", "pod-status-patch",
                                     "application/strategic-merge-patch+json")
    assert status == 200, body
    assert body["status"]["nominatedNodeName"] == "kind-worker"
    assert [(c["type"], c["status"], c["reason"]) for c in body["status"]["conditions"]] == [
        ("PodScheduled", "False", "Unschedulable")]


def test_lease_create_and_renew(api):
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    status, _c, lease = api.send("POST", path, "lease-create")
    assert status == 201 and lease["spec"]["holderIdentity"].startswith("kind-control-plane_")
    assert lease["spec"]["leaseDurationSeconds"] == 15 and lease["spec"]["renewTime"].endswith("Z")
    assert api.send("POST", path, "lease-create")[0] == 409
    renew = with_meta("lease-update", uid=lease["metadata"]["uid"],
                      resourceVersion=lease["metadata"]["resourceVersion"])
    status, _c, renewed = api.send("PUT", f"{path}/kube-scheduler", renew)
    assert status == 200, renewed
    assert renewed["spec"]["renewTime"] == "2024-04-17T10:00:03.311205Z" and renewed["spec"]["leaseTransitions"] == 1
    assert int(renewed["metadata"]["resourceVersion"]) > int(lease["metadata"]["resourceVersion"])


def test_events_both_apis_and_the_events_v1_field_selectors(api):
    path = "/apis/events.k8s.io/v1/namespaces/default/events"
    for fixture in ("events-v1-failedscheduling", "events-v1-scheduled"):
        status, _c, ev = api.send("POST", path, fixture)
        assert status == 201, ev
        assert ev["regarding"]["name"] == POD and ev["reportingController"] == "default-scheduler"
    # a repeat: client-go patches the series in, and POSTs the full event only when that PATCH got 404
    name = json.loads((WIRE / "events-v1-series.json").read_text())["metadata"]["name"]
    status, _c, patched = api.send_json("PATCH", f"{path}/{name}", "events-v1-series-patch",
                                        "application/strategic-merge-patch+json")
    assert status == 200 and patched["series"]["count"] == 3
    assert api.send("POST", path, "events-v1-series")[0] == 409
    status, _c, core = api.send("POST", "/api/v1/namespaces/default/events", "core-v1-event-failedscheduling")
    assert status == 201 and core["involvedObject"]["name"] == POD
    assert core["source"] == {"component": "default-scheduler"}
    status, _c, found = api.call("GET", f"{path}?fieldSelector=regarding.name={POD},reportingController="
                                        "default-scheduler,reason=Scheduled")
    assert status == 200 and [e["reason"] for e in found["items"]] == ["Scheduled"]
    status, _c, found = api.call("GET", f"{path}?fieldSelector=regarding.kind=Pod,regarding.namespace=default")
    assert len(found["items"]) == 3
    status, _c, err = api.call("GET", f"{path}?fieldSelector=involvedObject.name={POD}")
    assert (status, err["message"]) == (400, "field label not supported: involvedObject.name")


def test_eviction_and_deletes(api):
    status, _c, body = api.send("POST", "/api/v1/namespaces/default/pods/low-prio-6c9f7-abcde/eviction", "eviction")
    assert (status, body) == (201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
    assert api.call("GET", "/api/v1/namespaces/default/pods/low-prio-6c9f7-abcde")[0] == 404
    status, _c, err = api.send("POST", "/api/v1/namespaces/default/pods/victim/eviction", "eviction")
    assert (status, err["message"]) == (400, "name in URL does not match name in Eviction object")
    status, _c, err = api.send("DELETE", "/api/v1/namespaces/default/pods/victim", "delete-options-preconditions")
    assert status == 409 and err["message"].startswith('Operation cannot be fulfilled on pods "victim": '
                                                       "Precondition failed: UID in precondition:")
    status, _c, gone = api.send("DELETE", "/api/v1/namespaces/default/pods/victim", "delete-options")
    assert status == 200 and gone["metadata"]["name"] == "victim"


def test_media_types_and_body_limit(api):
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    status, _c, err = api.call("POST", path, b"\xa1", {"Content-Type": "application/cbor"})
    assert (status, err["reason"], err["message"]) == (
        415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types "
        "include: application/json, application/yaml, application/vnd.kubernetes.protobuf")
    status, _c, err = api.send("POST", path, b"k8s\x00" + field(1, field(1, "v1") + field(2, "Lease")))
    assert (status, err["reason"]) == (400, "BadRequest") and "no kind 'Lease' of version 'v1'" in err["message"]
    big = json.dumps({"metadata": {"name": "big", "annotations": {"a": "x" * (3 * 1024 * 1024)}}}).encode()
    status, _c, err = api.call("POST", path, big, {"Content-Type": "application/json"})
    assert (status, err["reason"], err["message"]) == (413, "RequestEntityTooLarge",
                                                       "Request entity too large: limit is 3145728")


def test_every_informer_of_a_default_kube_scheduler_lists_and_watches(api):
    for path in SCHEDULER_INFORMERS:
        status, ctype, body = api.call("GET", f"{path}?limit=500&resourceVersion=0", headers=CLIENT_GO)
        assert (status, ctype) == (200, "application/json"), path
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=30)
        conn.request("GET", f"{api.base}{path}?watch=true&timeoutSeconds=1&allowWatchBookmarks=true"
                            f"&resourceVersion={body['metadata']['resourceVersion']}",
                     headers={"Authorization": f"Bearer {api.token}", **CLIENT_GO})
        resp = conn.getresponse()
        assert resp.status == 200, path
        resp.read()
        conn.close()


def test_csistoragecapacities_are_served_like_the_other_kinds(api):
    path = "/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities"
    cap = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "csisc-1"},
           "storageClassName": "fast", "capacity": "100Gi",
           "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}}
    status, _c, made = api.call("POST", path, json.dumps(cap).encode(), {"Content-Type": "application/json"})
    assert status == 201 and made["capacity"] == "100Gi" and made["metadata"]["namespace"] == "kube-system"
    assert api.call("GET", f"{path}/csisc-1")[2]["storageClassName"] == "fast"
    listed = api.call("GET", "/apis/storage.k8s.io/v1/csistoragecapacities")[2]
    assert listed["kind"] == "CSIStorageCapacityList"
    assert [c["metadata"]["name"] for c in listed["items"]] == ["csisc-1"]
    assert api.call("DELETE", f"{path}/csisc-1")[0] == 200
    assert api.call("GET", f"{path}/csisc-1")[0] == 404
    _s, _c, doc = api.call("GET", "/apis/storage.k8s.io/v1")
    assert "csistoragecapacities" in [r["name"] for r in doc["resources"]]


def test_eviction_honours_pod_disruption_budgets(api):
    running = dict(pod("guarded", labels={"app": "db"}), status={"phase": "Running"})
    assert api.call("POST", "/api/v1/namespaces/default/pods", json.dumps(running).encode(),
                    {"Content-Type": "application/json"})[0] == 201
    st, _c, p = api.call("GET", "/api/v1/namespaces/default/pods/guarded")
    p["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    assert api.call("PUT", "/api/v1/namespaces/default/pods/guarded/status", json.dumps(p).encode(),
                    {"Content-Type": "application/json"})[0] == 200
    pdb = {"metadata": {"name": "db"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}}
    pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
    _s, _c, made = api.call("POST", pdbs, json.dumps(pdb).encode(), {"Content-Type": "application/json"})
    made["status"] = {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1,
                      "observedGeneration": 0}
    assert api.call("PUT", f"{pdbs}/db/status", json.dumps(made).encode(), {"Content-Type": "application/json"})[0] \
        == 200
    eviction = json.dumps({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded"}}).encode()
    evict = "/api/v1/namespaces/default/pods/guarded/eviction"
    status, _c, err = api.call("POST", evict, eviction, {"Content-Type": "application/json"})
    assert (status, err["reason"], err["message"], err["details"]) == (
        429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
        {"causes": [{"reason": "DisruptionBudget", "message": "The disruption budget db needs 1 healthy pods and "
                                                                 "has 1 currently"}]})
    _s, _c, made = api.call("GET", f"{pdbs}/db")
    made["status"].update(disruptionsAllowed=1, currentHealthy=2)
    assert api.call("PUT", f"{pdbs}/db/status", json.dumps(made).encode(), {"Content-Type": "application/json"})[0] \
        == 200
    assert api.call("POST", evict, eviction, {"Content-Type": "application/json"})[0] == 201
    _s, _c, after = api.call("GET", f"{pdbs}/db")
    assert after["status"]["disruptionsAllowed"] == 0 and "guarded" in after["status"]["disruptedPods"]
    assert after["status"]["conditions"][-1]["reason"] == "InsufficientPods"
    assert api.call("GET", "/api/v1/namespaces/default/pods/guarded")[0] == 404


def test_tokens_in_the_path_never_reach_the_access_log(server, api):
    """kubeconfigs of plain HTTP deployments carry the token in the path; the access log shows it redacted."""
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=30)
    conn.request("GET", f"{api.base}/t/{api.token}/api/v1/nodes?limit=1")
    resp = conn.getresponse()
    assert resp.status == 200
    resp.read()
    conn.close()
    deadline = time.monotonic() + 10
    while f"{api.base}/t/[redacted]/api/v1/nodes" not in server.text() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = server.text()
    assert f'"GET {api.base}/t/[redacted]/api/v1/nodes?limit=1 HTTP/1.1" 200' in log
    assert api.token not in log


def test_paged_lists_are_a_snapshot_of_their_first_page(api):
    """The pages after the first serve the list as of its resourceVersion, as kube-apiserver does from etcd."""
    pods = "/api/v1/namespaces/default/pods"
    status, _c, page1 = api.call("GET", f"{pods}?limit=2")
    names = [p["metadata"]["name"] for p in page1["items"]]
    assert names == ["low-prio-6c9f7-abcde", "victim"] and page1["metadata"]["remainingItemCount"] == 1
    # after the first page: one pod deleted, one created after the start key
    assert api.call("DELETE", f"{pods}/{POD}")[0] == 200
    assert api.call("POST", pods, json.dumps(pod("zz-new")).encode(), {"Content-Type": "application/json"})[0] == 201
    status, _c, page2 = api.call("GET", f"{pods}?limit=2&continue={page1['metadata']['continue']}")
    assert status == 200 and [p["metadata"]["name"] for p in page2["items"]] == [POD]
    assert page2["metadata"]["resourceVersion"] == page1["metadata"]["resourceVersion"]
    assert "continue" not in page2["metadata"]
    status, _c, fresh = api.call("GET", f"{pods}?limit=2&labelSelector=app!=nothing")
    assert [p["metadata"]["name"] for p in fresh["items"]] == ["low-prio-6c9f7-abcde", "victim"]
    assert "remainingItemCount" not in fresh["metadata"] and fresh["metadata"]["continue"]   # selectors: no count
    status, _c, err = api.call("GET", f"{pods}?limit=ten")
    assert (status, err["message"]) == (400, 'strconv.ParseInt: parsing "ten": invalid syntax')
    for path in SCHEDULER_INFORMERS + ("/apis/coordination.k8s.io/v1/leases", "/api/v1/events",
                                       "/apis/events.k8s.io/v1/events", "/apis/scheduling.k8s.io/v1/priorityclasses"):
        status, _c, first = api.call("GET", f"{path}?limit=1")
        assert status == 200 and len(first["items"]) <= 1, path


def test_big_lists_do_not_hold_up_other_requests(api):
    """Three concurrent lists of ~120 MB each: a small GET meanwhile waits far less than a list takes (the API's
    work runs off the event loop, lists are encoded item by item and sent in pieces)."""
    pods = "/api/v1/namespaces/default/pods"
    for i in range(120):
        big = pod(f"big-{i:02d}")
        big["spec"]["containers"][0]["args"] = ["x" * 1000] * 1000   # 1 MB (annotations stop at kube's 256 KiB)
        assert api.call("POST", pods, json.dumps(big).encode(), {"Content-Type": "application/json"})[0] == 201
    lists, small = [], []

    def lister():
        t = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=120)
        conn.request("GET", f"{api.base}/api/v1/pods", headers={"Authorization": f"Bearer {api.token}"})
        assert len(conn.getresponse().read()) > 120_000_000
        lists.append(time.monotonic() - t)

    threads = [threading.Thread(target=lister) for _ in range(3)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        t = time.monotonic()
        assert api.call("GET", f"{pods}/victim")[0] == 200
        small.append(time.monotonic() - t)
    for t in threads:
        t.join()
    assert len(lists) == 3
    # on the event loop, a small GET waited for whole lists to be encoded: a handful got through, the first after
    # most of a list's time
    assert len(small) >= 10 and max(small) < 0.5 * min(lists), (small, lists)
