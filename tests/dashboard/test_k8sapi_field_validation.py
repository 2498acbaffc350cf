"""A simulated cluster's Kubernetes API decodes writes as kube-apiserver of the cluster's version does: fields the
version does not know (and names given twice) are refused under ``fieldValidation=Strict``, warned of under Warn
(the default) and dropped under Ignore, on create, update and strategic merge patch, in the real kube-apiserver v1.36.2's words (recorded by
tools/apiserver_texts.py in tests/golden/apiserver); a 1.30 cluster does not know pod-level resources and does not
serve resource.k8s.io/v1, whoever writes."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dashboard.models import Pod
from dashboard.services import credentials, objectstore
from dashboard.services.admitted import ValidationFailed

from .conftest import load_cluster, page_client
from .test_kube_versions import scenario

pytestmark = pytest.mark.django_db(transaction=True)
RECORDED = Path(__file__).resolve().parents[1] / "golden" / "apiserver"
LEVEL_RESOURCES = {"requests": {"cpu": "2", "memory": "1Gi"}}
WARNING = re.compile(r'299 - "(?:[^"\\]|\\.)*"')   # one warning of a Warning header (several are comma-joined)


def _recorded(name: str) -> tuple:
    cases = json.loads((RECORDED / f"{name}.cases.json").read_text())["cases"]
    return cases, json.loads((RECORDED / f"{name}.expected.json").read_text())["answers"]


def _kube(api, admin_user, name: str, version: str):
    cluster = load_cluster(api, dict(scenario(name, version), name=name))
    _row, token = credentials.create_token(cluster, "t", admin_user)
    c, auth = page_client(), {"HTTP_AUTHORIZATION": f"Bearer {token}"}

    def call(method: str, path: str, body: str = "", query: str = "", ctype: str = "application/json"):
        url = f"/clusters/{name}/k8s{path}" + (f"?{query}" if query else "")
        if method == "GET":
            return c.get(url, **auth)
        return c.generic(method, url, body, content_type=ctype, **auth)
    call.cluster = cluster
    return call


def _answer(r) -> dict:
    body = r.json()
    out = {"status": r.status_code, "warnings": WARNING.findall(r.headers.get("Warning", ""))}
    if body.get("kind") == "Status":
        out.update(reason=body.get("reason", ""), message=body.get("message", ""))
        causes = (body.get("details") or {}).get("causes")
        if causes:
            out["causes"] = causes
    return out


def test_strict_warn_and_ignore_answer_as_the_real_apiserver(api, admin_user):
    kube = _kube(api, admin_user, "strict", "1.36")
    cases, expected = _recorded("field-validation")
    differences = {}
    for case in cases:
        ours = _answer(kube(case["method"], case["path"], case["body"], case["query"],
                            case.get("ctype", "application/json")))
        if ours != expected[case["name"]]:
            differences[case["name"]] = {"kube": expected[case["name"]], "ours": ours}
    assert not differences, json.dumps(differences, indent=1)
    # what Warn and Ignore store: the object without the fields the version does not know
    stored = json.loads(kube("GET", "/api/v1/namespaces/default/pods/unknown-ignore").content)
    assert "foo" not in stored["spec"] and "bar" not in stored["spec"]["containers"][0]
    assert "extra" not in stored["metadata"]
    assert stored["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}


def _pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"resources": LEVEL_RESOURCES, "containers": [
                {"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "500m"}}}]}}


def test_a_1_30_cluster_drops_pod_level_resources_and_refuses_them_strictly(api, admin_user):
    kube = _kube(api, admin_user, "old", "1.30")
    pods = "/api/v1/namespaces/default/pods"
    r = kube("POST", pods, json.dumps(_pod("strict")), "fieldValidation=Strict")
    assert r.status_code == 400
    assert r.json()["message"] == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown '
                                   'field "spec.resources"')
    r = kube("POST", pods, json.dumps(_pod("warned")))
    assert r.status_code == 201 and r["Warning"] == '299 - "unknown field \\"spec.resources\\""'
    assert "resources" not in r.json()["spec"]
    row = Pod.objects.get(cluster=kube.cluster, name="warned")
    assert "resources" not in row.raw["spec"] and row.cpu_m == 500   # the containers' requests alone
    # the REST API and the pages (objectstore.insert_pods) admit the same way
    objectstore.insert_pods(kube.cluster, [_pod("rest")])
    row = Pod.objects.get(cluster=kube.cluster, name="rest")
    assert "resources" not in row.raw["spec"] and row.cpu_m == 500


def test_a_1_36_cluster_keeps_pod_level_resources(api, admin_user):
    kube = _kube(api, admin_user, "new", "1.36")
    r = kube("POST", "/api/v1/namespaces/default/pods", json.dumps(_pod("kept")), "fieldValidation=Strict")
    assert r.status_code == 201 and not r.has_header("Warning")
    assert r.json()["spec"]["resources"] == LEVEL_RESOURCES
    assert Pod.objects.get(cluster=kube.cluster, name="kept").cpu_m == 2000


def test_a_1_30_cluster_does_not_serve_resource_k8s_io(api, admin_user):
    kube = _kube(api, admin_user, "nodra", "1.30")
    groups = [g["name"] for g in kube("GET", "/apis").json()["groups"]]
    assert "resource.k8s.io" not in groups and "storage.k8s.io" in groups
    assert kube("GET", "/apis/resource.k8s.io/v1").status_code == 404
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                    "spec": {}}
    r = kube("POST", "/apis/resource.k8s.io/v1/deviceclasses", json.dumps(device_class))
    assert r.status_code == 404 and r.json()["message"] == "the server could not find the requested resource"
    # nor a scenario's: refused with the kind named
    with pytest.raises(ValidationFailed) as refused:
        from dashboard.services import clusters
        clusters.load_scenario(kube.cluster, dict(scenario("nodra", "1.30"), deviceclasses=[device_class]))
    assert refused.value.errors == {"scenario": ["DeviceClass gpu: resource.k8s.io/v1 is not served at "
                                                 "Kubernetes 1.30"]}


def test_a_scenario_loaded_at_1_30_is_served_without_the_fields_1_30_does_not_know(api):
    pending = _pod("level")
    pending["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    cluster = load_cluster(api, dict(scenario("restored", "1.30"), pending=[pending]))
    raw = Pod.objects.get(cluster=cluster, name="level").raw
    # spec.resources is unknown at 1.30; resourceClaims is known but cleared while DynamicResourceAllocation is off
    assert "resources" not in raw["spec"] and "resourceClaims" not in raw["spec"]
