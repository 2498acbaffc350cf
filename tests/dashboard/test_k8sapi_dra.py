"""resource.k8s.io/v1 in a simulated cluster's Kubernetes API: DeviceClass, ResourceSlice, ResourceClaim (with its
status subresource) and ResourceClaimTemplate are discovered, validated by the one validator, selected by
kube's fields, printed as kubectl's tables, and reach the scheduler's store."""
from __future__ import annotations

import copy
import json

import pytest

from dashboard.services import credentials, objectstore
from scheduler_core import versions

from .conftest import load_cluster, page_client
from .test_kube_versions import scenario

pytestmark = pytest.mark.django_db(transaction=True)
BASE = "/clusters/dra/k8s/apis/resource.k8s.io/v1"
DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
                "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "one-gpu", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}
ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n-0",
                                       "device": "gpu-0"}]}}


def a_slice(node: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
            "spec": {"driver": "gpu.example.com", "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}]}}


@pytest.fixture
def kube(api, admin_user):
    cluster = load_cluster(api, dict(scenario("dra", "1.36"), name="dra"))
    _row, token = credentials.create_token(cluster, "t", admin_user)
    c, auth = page_client(), {"HTTP_AUTHORIZATION": f"Bearer {token}"}

    def call(method: str, path: str, body=None, accept="application/json", **query):
        if method == "get":
            return c.get(f"{BASE}{path}", query, HTTP_ACCEPT=accept, **auth)
        return getattr(c, method)(f"{BASE}{path}", json.dumps(body), content_type="application/json", **auth)
    call.cluster, call.client, call.auth = cluster, c, auth
    return call


def test_the_kinds_are_discovered_created_validated_and_selected(kube):
    listed = {r["name"]: r for r in kube("get", "").json()["resources"]}
    assert set(listed) == {"deviceclasses", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates",
                           "resourceslices"}
    assert not listed["deviceclasses"]["namespaced"] and listed["resourceclaims"]["namespaced"]

    bad = dict(DEVICE_CLASS, spec={"selectors": [{"cel": {"expression": "device.driver =="}}]})
    r = kube("post", "/deviceclasses", bad)
    assert r.status_code == 422 and r.json()["reason"] == "Invalid"
    assert r.json()["details"]["causes"][0]["field"] == "spec.selectors[0].cel.expression"
    assert kube("post", "/deviceclasses", DEVICE_CLASS).status_code == 201
    for node in ("n-0", "n-1"):
        assert kube("post", "/resourceslices", a_slice(node)).status_code == 201
    names = [s["metadata"]["name"] for s in kube("get", "/resourceslices", fieldSelector="spec.nodeName=n-1")
             .json()["items"]]
    assert names == ["n-1-gpu"]
    assert len(kube("get", "/resourceslices", fieldSelector="spec.driver=gpu.example.com").json()["items"]) == 2
    r = kube("get", "/resourceslices", fieldSelector="spec.pool=n-0")
    assert r.status_code == 400 and r.json()["message"] == "field label not supported: spec.pool"
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpu", "namespace": "default"}, "spec": {"spec": CLAIM["spec"]}}
    assert kube("post", "/namespaces/default/resourceclaimtemplates", template).status_code == 201
    # what the scheduler reads: the cluster's store
    objects = objectstore.scenario_objects(kube.cluster.pk)
    assert [o["metadata"]["name"] for o in objects["resourceslices"]] == ["n-0-gpu", "n-1-gpu"]
    assert [o["metadata"]["name"] for o in objects["deviceclasses"]] == ["gpu.example.com"]


def test_a_claims_status_is_written_only_through_its_subresource(kube):
    assert kube("post", "/namespaces/default/resourceclaims", CLAIM).status_code == 201
    path = "/namespaces/default/resourceclaims/one-gpu"
    claim = kube("get", path).json()
    allocated = dict(copy.deepcopy(claim), status={"allocation": ALLOCATION})
    r = kube("put", path, allocated)   # the main resource keeps its status
    assert r.status_code == 200 and not r.json().get("status", {}).get("allocation")
    r = kube("put", f"{path}/status", dict(allocated, metadata=r.json()["metadata"]))
    assert r.status_code == 200 and r.json()["status"]["allocation"] == ALLOCATION
    table = kube("get", "/namespaces/default/resourceclaims", accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [c["name"] for c in table.json()["columnDefinitions"]] == ["Name", "State", "Age"]
    assert [row["cells"][:2] for row in table.json()["rows"]] == [["one-gpu", "allocated"]]


def test_a_claim_sent_as_protobuf_decodes_as_go_writes_its_json():
    from dashboard.k8sapi import protobuf

    from .test_k8sapi_protobuf import envelope, field
    kube = versions.kube_version("1.36")
    request = field(1, "gpu") + field(2, field(1, "gpu.example.com"))
    claim = field(1, field(1, "one-gpu") + field(3, "default")) + field(2, field(1, field(1, request)))
    assert protobuf.decode(envelope("resource.k8s.io/v1", "ResourceClaim", claim), kube) == {
        "kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": "one-gpu", "namespace": "default", "creationTimestamp": None},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        "status": {}}


def test_writes_get_kube_apiservers_defaults(kube):
    """SetDefaults_ExactDeviceRequest and friends: kube-scheduler refuses a request without an allocation mode
    ("unsupported count mode"), so what the API stores, and the claims made from templates, carry them."""
    first_available = {"name": "any", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.example.com", "tolerations": [{"key": "k", "effect": "NoSchedule"}]},
        {"name": "all", "deviceClassName": "gpu.example.com", "allocationMode": "All"}]}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [CLAIM["spec"]["devices"]["requests"][0],
                                                           first_available]}}}}
    stored = kube("post", "/namespaces/default/resourceclaimtemplates", template).json()
    exactly, (big, every) = (r.get("exactly") or r.get("firstAvailable")
                             for r in stored["spec"]["spec"]["devices"]["requests"])
    assert exactly == {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}
    assert (big["allocationMode"], big["count"], big["tolerations"][0]["operator"]) == ("ExactCount", 1, "Equal")
    assert every["allocationMode"] == "All" and "count" not in every
    tainted = a_slice("n-0")
    tainted["spec"]["devices"][0]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    stored = kube("post", "/resourceslices", tainted).json()
    assert stored["spec"]["devices"][0]["taints"][0]["timeAdded"].endswith("Z")
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = 3
    stored = kube("post", "/namespaces/default/resourceclaims", claim).json()
    assert stored["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] == "ExactCount"
    assert stored["spec"]["devices"]["requests"][0]["exactly"]["count"] == 3


def test_claims_made_from_templates_carry_the_defaults():
    from scheduler_core.dra.claims import claim_from_template
    template = {"metadata": {"name": "gpu", "namespace": "default"}, "spec": {"spec": CLAIM["spec"]}}
    pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u"}}
    claim = claim_from_template(pod, {"name": "gpu", "resourceClaimTemplateName": "gpu"}, template)
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] == "ExactCount"
    assert "allocationMode" not in CLAIM["spec"]["devices"]["requests"][0]["exactly"]   # the template is not changed


def test_admin_access_needs_the_namespaces_label(kube):
    """AuthorizedForAdmin: kube-apiserver refuses a claim or template asking admin access to devices, and a claim
    status granting it, in a namespace without resource.kubernetes.io/admin-access=true."""
    admin = copy.deepcopy(CLAIM)
    admin["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    r = kube("post", "/namespaces/default/resourceclaims", admin)
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [{
        "reason": "FieldValueForbidden", "field": "spec.devices.requests[0].adminAccess",
        "message": "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
                   "label on the containing namespace"}]
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "admin", "namespace": "default"}, "spec": {"spec": admin["spec"]}}
    assert kube("post", "/namespaces/default/resourceclaimtemplates", template).status_code == 422
    # a claim status granting admin access in such a namespace
    assert kube("post", "/namespaces/default/resourceclaims", CLAIM).status_code == 201
    path = "/namespaces/default/resourceclaims/one-gpu/status"
    stored = kube("get", "/namespaces/default/resourceclaims/one-gpu").json()
    granted = copy.deepcopy(ALLOCATION)
    granted["devices"]["results"][0]["adminAccess"] = True
    r = kube("put", path, dict(stored, status={"allocation": granted}))
    assert r.status_code == 422 and r.json()["details"]["causes"][0]["field"] == \
        "status.allocation.devices.results[0].adminAccess"
    # labelled, the namespace allows both
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "admins", "labels": {"resource.kubernetes.io/admin-access": "true"}}}
    assert kube.client.post(f"{BASE.split('/apis/')[0]}/api/v1/namespaces", json.dumps(ns),
                            content_type="application/json", **kube.auth).status_code == 201
    assert kube("post", "/namespaces/admins/resourceclaims", dict(admin, metadata={"name": "a", "namespace": "admins"})
                ).status_code == 201


def test_an_extended_resource_a_device_class_backs_gets_its_claim_from_the_loop(kube):
    """DRAExtendedResource: the loop's DynamicResources creates the pod's claim at PreBind (generateName
    <pod>-extended-resources-) and names it in status.extendedResourceClaimStatus; both are served by the API."""
    from dashboard.services.runner import Runner
    gpu_class = dict(DEVICE_CLASS, spec=dict(DEVICE_CLASS["spec"], extendedResourceName="example.com/gpu"))
    assert kube("post", "/deviceclasses", gpu_class).status_code == 201
    assert kube("post", "/resourceslices", a_slice("n-1")).status_code == 201
    core = f"{BASE.split('/apis/')[0]}/api/v1/namespaces/default/pods"
    gpu = {"example.com/gpu": "1"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"},
           "spec": {"containers": [{"name": "main", "image": "app",
                                    "resources": {"requests": gpu, "limits": gpu}}]}}
    assert kube.client.post(core, json.dumps(pod), content_type="application/json", **kube.auth).status_code == 201
    assert Runner(kube.cluster.id, steps=3).run()

    [claim] = kube("get", "/namespaces/default/resourceclaims").json()["items"]
    meta = claim["metadata"]
    assert meta["name"].startswith("trainer-extended-resources-") and len(meta["name"]) == 32
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    pod = kube.client.get(f"{core}/trainer", HTTP_ACCEPT="application/json", **kube.auth).json()
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "trainer",
                                        "uid": pod["metadata"]["uid"], "controller": True}]
    assert claim["spec"]["devices"]["requests"] == [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "container-0-request-0", "driver": "gpu.example.com", "pool": "n-1", "device": "gpu-0"}]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}]
    assert pod["spec"]["nodeName"] == "n-1"
    assert pod["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-0"}],
        "resourceClaimName": meta["name"]}
    table = kube("get", "/namespaces/default/resourceclaims", accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [row["cells"][:2] for row in table.json()["rows"]] == [[meta["name"], "allocated,reserved"]]
