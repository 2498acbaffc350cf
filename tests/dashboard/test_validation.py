"""Every write path refuses what kube-apiserver refuses (scheduler_core.objects.validation): the REST API with
400 and field paths, the Kubernetes API with 422 Invalid Status, scenarios and loadscenario storing nothing;
uploads nested 100,000 deep are 400s; pages survive rows stored before the validator existed."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from dashboard.models import Cluster, Node, Pod, SchedulingEvent
from dashboard.services import clusters as svc
from dashboard.services import credentials
from dashboard.services.runner import Runner
from tests.k8s_api_server import node, pod

from .conftest import load_cluster, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)
DEEP = 100_000
DEEP_JSON = "[" * DEEP + "]" * DEEP
DEEP_YAML = "a: " + "{b: " * DEEP + "1" + "}" * DEEP
SUBDOMAIN_START = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"


@pytest.fixture
def small(api):
    return load_cluster(api, small_scenario(pending_web=2))


def counts(cluster) -> tuple:
    return Node.objects.filter(cluster=cluster).count(), Pod.objects.filter(cluster=cluster).count()


# -- REST API ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cpu", ["1e309", "99999999999999999999Ei"])
def test_node_with_an_uncountable_allocatable_is_400(api, client, small, cpu):
    before = counts(small)
    r = api.post("/api/clusters/small/nodes/", {"manifest": node("huge", cpu=cpu)}, format="json")
    assert r.status_code == 400, r.content
    assert list(r.json()) == ["status.capacity.cpu", "status.allocatable.cpu"]
    assert r.json()["status.allocatable.cpu"][0].startswith(f'Invalid value: "{cpu}": must be less than or equal to')
    assert counts(small) == before
    assert client.get("/clusters/small/nodes/").status_code == 200


@pytest.mark.parametrize("name", ["a\x00b", "../../etc", "has space", "Capital", "a/b", "x" * 254])
def test_pod_and_node_names_follow_kube_rules(api, small, name):
    before = counts(small)
    r = api.post("/api/clusters/small/pods/", {"manifest": pod(name)}, format="json")
    assert r.status_code == 400, r.content
    assert list(r.json()) == ["metadata.name"]
    detail = r.json()["metadata.name"][-1].split(": ", 2)[2]
    assert detail.startswith(SUBDOMAIN_START) or detail == "must be no more than 253 characters", detail
    r = api.post("/api/clusters/small/nodes/", {"manifest": node(name)}, format="json")
    assert r.status_code == 400 and "metadata.name" in r.json()   # (and its hostname label, for most)
    assert counts(small) == before


def test_labels_namespaces_and_requests_are_400_with_field_paths(api, small):
    before = counts(small)
    cases = [
        (pod("p1", labels={"app": "v" * 64}), "metadata.labels",
         f'Invalid value: "{"v" * 64}": must be no more than 63 characters'),
        (pod("p2", namespace="Ops Team"), "metadata.namespace", 'Invalid value: "Ops Team": a lowercase RFC 1123 label'),
        (pod("p3", cpu="-1"), "spec.containers[0].resources.requests[cpu]",
         'Invalid value: "-1": must be greater than or equal to 0'),
        (pod("p4", cpu="1e18"), "spec.containers[0].resources.requests[cpu]",
         'Invalid value: "1e18": must be less than or equal to 9223372036854775807m'),
        (pod("p5", memory="1e309"), "spec.containers[0].resources.requests[memory]",
         'Invalid value: "1e309": must be less than or equal to 9223372036854775807'),
    ]
    for manifest, field, message in cases:
        r = api.post("/api/clusters/small/pods/", {"manifest": manifest}, format="json")
        assert r.status_code == 400, (manifest, r.content)
        assert list(r.json()) == [field] and r.json()[field][0].startswith(message), r.json()
    # a JSON number that overflowed the bigint column before (cpu_m = 10^21 millicores)
    r = api.post("/api/clusters/small/pods/", {"manifest": pod("p6", cpu=1e18)}, format="json")
    assert r.status_code == 400 and "spec.containers[0].resources.requests[cpu]" in r.json()
    assert counts(small) == before


def test_scenario_with_one_bad_object_stores_nothing(api, small):
    before = counts(small)
    for mutate in (lambda s: s["nodes"][3]["status"]["allocatable"].update(cpu="1e309"),
                   lambda s: s["pending"][1]["metadata"].update(name="web/1"),
                   lambda s: s["pending"][0]["metadata"].update(labels={"k": "x" * 64})):
        bad = small_scenario(pending_web=2)
        mutate(bad)
        r = api.post("/api/clusters/small/scenario/", {"scenario": bad}, format="json")
        assert r.status_code == 400 and "Invalid value" in r.json()["scenario"][0], r.content
        assert counts(small) == before


def test_loadscenario_command_refuses_an_invalid_object(tmp_path, small):
    bad = small_scenario(pending_web=2)
    bad["pending"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "-1"
    path = tmp_path / "small.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(CommandError, match=r"requests\[cpu\]: Invalid value: \"-1\""):
        call_command("loadscenario", str(path), "--cluster", "small")
    assert counts(small) == (6, 5)


def test_generated_workload_pods_are_validated(small):
    bad = pod("gen-1", namespace="Not A Namespace")
    with pytest.raises(svc.ValidationFailed) as err:
        svc.insert_pods(small, [pod("gen-0"), bad])
    assert list(err.value.errors) == ["metadata.namespace"]
    assert counts(small) == (6, 5)   # neither pod stored


def test_workload_spec_is_validated_on_every_write_path(api, client, small):
    for spec, field in (({"namespace": "Not A Namespace"}, "workload.namespace"),
                        ({"rate": "fast"}, "workload.rate"), ({"max_pods": -1}, "workload.max_pods"), ([1], "workload")):
        r = api.patch("/api/clusters/small/", {"workload": spec}, format="json")
        assert r.status_code == 400 and r.json()["workload"][0].startswith(f"{field}: "), r.content
    assert api.patch("/api/clusters/small/", {"workload": {"namespace": "load", "rate": 5}},
                     format="json").status_code == 200
    url = f"/admin/dashboard/cluster/{small.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {k: ("" if v is None else v) for k, v in form.initial.items() if k not in ("workload", "heartbeat", "profile")}
    data.update(workload=json.dumps({"namespace": "Bad NS"}), heartbeat_0="", heartbeat_1="",
                **{"memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0"})
    r = client.post(url, data)
    assert r.status_code == 200 and "workload.namespace: Invalid value" in r.content.decode()
    assert Cluster.objects.get(pk=small.pk).workload == {"namespace": "load", "rate": 5}


def test_admin_does_not_write_nodes_pods_or_scenario_objects(client, small):
    row = Node.objects.filter(cluster=small).first()
    assert client.get("/admin/dashboard/node/add/").status_code == 403
    assert client.post(f"/admin/dashboard/node/{row.pk}/change/", {"name": "A/..", "cluster": small.pk}).status_code \
        == 403
    assert client.get("/admin/dashboard/pod/add/").status_code == 403
    assert client.get("/admin/dashboard/clusterstate/add/").status_code == 403
    assert client.get(f"/admin/dashboard/node/{row.pk}/change/").status_code == 200   # viewing stays
    assert Node.objects.get(pk=row.pk).name == row.name


# -- uploads nested 100,000 deep -----------------------------------------------------------------------
def test_deeply_nested_uploads_are_400(api, small):
    before = counts(small)
    for url in ("/api/clusters/small/nodes/", "/api/clusters/small/pods/", "/api/clusters/small/scenario/",
                "/api/profiles/"):
        r = api.post(url, DEEP_JSON, content_type="application/json")
        assert r.status_code == 400 and "exceeded max depth of 100" in r.json()["detail"], (url, r.content)
    for name, text in (("deep.json", DEEP_JSON), ("deep.yaml", DEEP_YAML)):
        r = api.post("/api/clusters/small/scenario/", {"file": SimpleUploadedFile(name, text.encode())},
                     format="multipart")
        assert r.status_code == 400 and "exceeded max depth of 100" in r.json()["scenario"][0], r.content
    r = api.post("/api/clusters/small/scenario/", {"scenario": DEEP_JSON}, format="multipart")
    assert r.status_code == 400 and "exceeded max depth of 100" in r.json()["scenario"][0], r.content
    assert counts(small) == before


# -- the Kubernetes API ----------------------------------------------------------------------------------
def k8s(client, cluster, method: str, path: str, body: str, ctype: str = "application/json"):
    _row, token = credentials.create_token(cluster, "tests", None)
    r = getattr(client, method)(f"/clusters/{cluster.name}/k8s/t/{token}{path}", body, content_type=ctype)
    return r.status_code, json.loads(r.content)


def test_k8s_api_answers_422_invalid_with_causes(client, small):
    status, body = k8s(client, small, "post", "/api/v1/namespaces/default/pods", json.dumps(pod("Web_1")))
    assert status == 422, body
    assert (body["kind"], body["reason"], body["code"]) == ("Status", "Invalid", 422)
    assert body["message"].startswith(f'Pod "Web_1" is invalid: metadata.name: Invalid value: "Web_1": '
                                      f"{SUBDOMAIN_START}")
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.name",
                                          "message": body["message"].split("metadata.name: ", 1)[1]}]
    status, body = k8s(client, small, "post", "/api/v1/nodes", json.dumps(node("big", cpu="1e309")))
    assert status == 422 and [c["field"] for c in body["details"]["causes"]] == \
        ["status.capacity.cpu", "status.allocatable.cpu"]
    status, body = k8s(client, small, "post", "/api/v1/namespaces/default/pods",
                       json.dumps(pod("neg", cpu="-1", labels={"tier": "x" * 64})))
    assert status == 422 and [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("metadata.labels", f'Invalid value: "{"x" * 64}": must be no more than 63 characters'),
        ("spec.containers[0].resources.requests[cpu]", 'Invalid value: "-1": must be greater than or equal to 0')]
    # updates and patches are validated too: a node's status cannot become uncountable
    status, body = k8s(client, small, "patch", "/api/v1/nodes/n-0/status",
                       json.dumps({"status": {"allocatable": {"cpu": "-2"}}}), "application/merge-patch+json")
    assert status == 422 and body["details"]["causes"][0]["field"] == "status.allocatable.cpu", body
    status, body = k8s(client, small, "patch", "/api/v1/nodes/n-0",
                       json.dumps({"metadata": {"labels": {"a/b/c": "x"}}}), "application/merge-patch+json")
    assert status == 422 and body["details"]["causes"][0]["field"] == "metadata.labels", body
    status, body = k8s(client, small, "get", "/api/v1/nodes/n-0", "")
    assert status == 200 and body["status"]["allocatable"]["cpu"] == "4" and "a/b/c" not in body["metadata"]["labels"]


def test_k8s_api_refuses_deep_bodies_with_400(client, small):
    for body, ctype in ((DEEP_JSON, "application/json"), (DEEP_YAML, "application/yaml")):
        status, out = k8s(client, small, "post", "/api/v1/namespaces/default/pods", body, ctype)
        assert (status, out["reason"]) == (400, "BadRequest") and "exceeded max depth of 100" in out["message"]


# -- rows stored before the validator ------------------------------------------------------------------------
def test_pages_survive_old_rows_with_invalid_names_and_quantities(api, client, small):
    Pod.objects.create(cluster=small, uid="old-1", namespace="default", name="a/b", queue=Pod.ACTIVE,
                       raw={"metadata": {"name": "a/b", "namespace": "default"}, "spec": {}})
    SchedulingEvent.objects.create(cluster=small, time=timezone.now(), reason="FailedScheduling",
                                   pod_namespace="default", pod_name="a/b", message="old")
    Node.objects.create(cluster=small, name="huge", allocatable={"cpu": 10**312, "memory": 10**312, "pods": 110},
                        raw={"metadata": {"name": "huge"}, "status": {"allocatable": {"cpu": "1e309"}}})
    for page in ("events", "pending", "nodes", ""):
        r = client.get(f"/clusters/small/{page}/" if page else "/clusters/small/")
        assert r.status_code == 200, page
        assert page in ("nodes",) or "default/a/b" in r.content.decode()
    assert client.get("/clusters/small/nodes/huge/").status_code == 200
    # the Kubernetes API and the loop leave out rows they can no longer read instead of failing
    status, body = k8s(client, small, "get", "/api/v1/nodes", "")
    assert status == 200 and len(body["items"]) == 6 and "huge" not in [n["metadata"]["name"] for n in body["items"]]
    assert Runner(small.id, steps=5).run()
    assert Cluster.objects.get(pk=small.pk).cycles.exists()
