"""REST API, pages, metrics and management commands (PostgreSQL; cycles made by an in-process loop)."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from dashboard.models import Cluster, Node, Pod, SchedulingCycle
from dashboard.services.runner import Runner

from .conftest import small_scenario

pytestmark = pytest.mark.django_db(transaction=True)


# ValidateLabelName of an empty taint key, as kube-apiserver words it
EMPTY_TAINT_KEY = {"spec.taints[0].key": [
    'Invalid value: "": name part must be non-empty',
    "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]}


@pytest.fixture
def loaded(api):
    assert api.post("/api/clusters/", {"name": "small", "tie_break": "name"}, format="json").status_code == 201
    r = api.post("/api/clusters/small/scenario/", {"scenario": small_scenario()}, format="json")
    assert r.status_code == 201, r.content
    assert r.json() == {"nodes": 6, "bound": 0, "pending": 15}
    cluster = Cluster.objects.get(name="small")
    assert Runner(cluster.id, steps=20).run()
    return cluster


def test_invalid_scenario_is_400_and_writes_nothing(api, loaded):
    bad = small_scenario()
    bad["nodes"][2]["status"]["allocatable"]["cpu"] = "four"
    r = api.post("/api/clusters/small/scenario/", {"scenario": bad}, format="json")
    assert r.status_code == 400
    assert r.json()["scenario"][0].startswith("scenario: nodes[2] (n-2): status.") and '"four"' in r.json()["scenario"][0]
    assert Node.objects.filter(cluster=loaded).count() == 6
    assert api.post("/api/clusters/small/scenario/", {}, format="json").status_code == 400
    dup = small_scenario()
    dup["pending"].append(dup["pending"][0])
    r = api.post("/api/clusters/small/scenario/", {"scenario": dup}, format="json")
    assert r.status_code == 400 and "duplicate" in r.json()["scenario"][0]
    assert Pod.objects.filter(cluster=loaded).count() == 15


def test_yaml_upload(api, loaded):
    from django.core.files.uploadedfile import SimpleUploadedFile
    text = "nodes:\n- metadata: {name: y1}\n  status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}\n" \
           "pending:\n- metadata: {name: p1}\n  spec: {containers: [{name: c}]}\n"
    r = api.post("/api/clusters/small/scenario/", {"file": SimpleUploadedFile("s.yaml", text.encode())},
                 format="multipart")
    assert r.status_code == 201, r.content
    assert r.json() == {"nodes": 1, "bound": 0, "pending": 1}
    r = api.post("/api/clusters/small/scenario/", {"file": SimpleUploadedFile("s.yaml", b"nodes: [a: &x 1, *x]")},
                 format="multipart")
    assert r.status_code == 400


def test_nodes_and_pods_crud_with_field_errors(api, loaded):
    r = api.post("/api/clusters/small/nodes/", {"manifest": {"metadata": {"name": "x"},
                                                             "spec": {"taints": [{"effect": "NoSchedule"}]}}},
                 format="json")
    assert r.status_code == 400 and r.json() == EMPTY_TAINT_KEY
    r = api.post("/api/clusters/small/nodes/", {"manifest": {"metadata": {"name": "n-0"}}}, format="json")
    assert r.status_code == 400 and "already exists" in r.json()["metadata.name"][0]
    node = {"metadata": {"name": "n-9", "labels": {"disk": "ssd"}},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}
    assert api.post("/api/clusters/small/nodes/", {"manifest": node}, format="json").status_code == 201
    assert api.get("/api/clusters/small/nodes/n-9/").json()["labels"] == {"disk": "ssd"}
    assert api.delete("/api/clusters/small/nodes/n-9/").status_code == 204
    assert api.delete("/api/clusters/small/nodes/n-9/").status_code == 404
    pod = {"metadata": {"name": "late", "namespace": "ops"}, "spec": {"containers": [{"name": "c", "image": "c:1"}]}}
    assert api.post("/api/clusters/small/pods/", {"manifest": pod}, format="json").status_code == 201
    bad = {"metadata": {"name": "late2"}, "spec": {"priority": "high"}}
    r = api.post("/api/clusters/small/pods/", {"manifest": bad}, format="json")
    assert r.status_code == 400 and r.json() == {"spec.priority": ["Invalid value: expected integer"]}
    got = api.get("/api/clusters/small/pods/ops/late/").json()
    assert got["queue"] == "active" and got["node_name"] == ""
    assert api.delete("/api/clusters/small/pods/ops/late/").status_code == 204
    # who loaded the scenario and deleted (evicted) what, in the audit log
    from dashboard.profiles.models import AuditLog
    log = {(e.action, e.user.username if e.user else None): e.detail
           for e in AuditLog.objects.filter(cluster=loaded)}
    assert log[("scenario.load", "admin")] == {"source": "scenario", "nodes": 6, "bound": 0, "pending": 15}
    assert log[("node.delete", "admin")] == {"node": "n-9", "pods_deleted": 0}
    assert log[("pod.delete", "admin")]["pod"] == "ops/late"


def test_creates_take_the_bare_object_or_the_manifest_wrapper_through_one_validator(api, loaded):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": "ops"},
           "spec": {"containers": [{"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "100m"}}}]}}
    r = api.post("/api/clusters/small/pods/", pod, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["name"] == "bare" and r.json()["namespace"] == "ops" and r.json()["queue"] == "active"
    # metadata alone at the top is an object too (kind and apiVersion default as kube-apiserver defaults them)
    r = api.post("/api/clusters/small/pods/", {"metadata": {"name": "only-meta"},
                                               "spec": {"containers": [{"name": "c", "image": "c:1"}]}}, format="json")
    assert r.status_code == 201 and r.json()["namespace"] == "default"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-bare"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}
    assert api.post("/api/clusters/small/nodes/", node, format="json").status_code == 201
    assert Node.objects.filter(cluster=loaded, name="n-bare").exists()
    # the same field errors bare and wrapped; a wrong kind or apiVersion is refused in both forms
    wrong_kind = {"kind": ['Node in version "v1" cannot be handled as a Pod']}
    cases = [
        ("pods", dict(pod, metadata={"name": "p2"}, spec={"priority": "high"}),
         {"spec.priority": ["Invalid value: expected integer"]}),
        ("pods", dict(node, metadata={"name": "p3"}), wrong_kind),
        ("pods", dict(pod, metadata={"name": "p4"}, apiVersion="apps/v1"),
         {"apiVersion": ["the API version in the data (apps/v1) does not match the expected API version (v1)"]}),
        ("nodes", dict(pod, metadata={"name": "n-p"}), {"kind": ['Pod in version "v1" cannot be handled as a Node']}),
        ("nodes", dict(node, metadata={"name": "n-bad"}, spec={"taints": [{"effect": "NoSchedule"}]}),
         EMPTY_TAINT_KEY),
    ]
    for kind, body, errors in cases:
        for form in (body, {"manifest": body}):
            r = api.post(f"/api/clusters/small/{kind}/", form, format="json")
            assert r.status_code == 400 and r.json() == errors, (form, r.content)
    assert not Pod.objects.filter(cluster=loaded, name__in=["p2", "p3", "p4"]).exists()
    assert not Node.objects.filter(cluster=loaded, name__in=["n-p", "n-bad"]).exists()
    # a body that is neither says what is expected
    r = api.post("/api/clusters/small/pods/", {"spec": {"containers": []}}, format="json")
    assert r.status_code == 400
    assert r.json() == {"manifest": ['give the object itself (with "apiVersion", "kind" and "metadata" at the top) '
                                     'or {"manifest": {...}}']}
    # the schema shows both forms, with an example of each
    paths = json.loads(api.get("/api/schema/", HTTP_ACCEPT="application/json").content)["paths"]
    for path, kind in (("/api/clusters/{cluster_name}/pods/", "Pod"), ("/api/clusters/{cluster_name}/nodes/", "Node")):
        body = paths[path]["post"]["requestBody"]["content"]["application/json"]
        bare, wrapped = body["schema"]["anyOf"]
        assert bare["required"] == ["metadata"] and bare["properties"]["kind"]["enum"] == [kind, "", None]
        assert wrapped["required"] == ["manifest"] and wrapped["properties"]["manifest"] == bare
        examples = [e["value"] for e in body["examples"].values()]
        assert examples[0]["kind"] == kind and examples[1] == {"manifest": examples[0]}


def test_pods_cycles_events_filters_and_pagination(api, loaded):
    pods = api.get("/api/clusters/small/pods/?queue=unschedulable").json()
    assert sorted(p["name"] for p in pods["results"]) == ["also-big", "too-big", "wants-ssd"]
    assert api.get("/api/clusters/small/pods/?queue=bound").json()["count"] == 12
    assert api.get("/api/clusters/small/pods/?plugin=NodeAffinity").json()["results"][0]["name"] == "wants-ssd"

    cycles = api.get("/api/clusters/small/cycles/?page_size=5").json()
    assert cycles["count"] == 15 and len(cycles["results"]) == 5 and cycles["next"]
    assert api.get("/api/clusters/small/cycles/?result=unschedulable").json()["count"] == 3
    by_plugin = api.get("/api/clusters/small/cycles/?plugin=NodeAffinity").json()
    assert [c["pod"] for c in by_plugin["results"]] == ["default/wants-ssd"]
    one = api.get("/api/clusters/small/cycles/?pod=default/too-big").json()["results"][0]
    assert one["failing_plugins"] == {"NodeResourcesFit": 5, "TaintToleration": 1}
    detail = api.get(f"/api/clusters/small/cycles/{one['seq']}/").json()
    assert detail["matrix"]["stop_plugins"] and "durations" in detail
    node = SchedulingCycle.objects.filter(cluster=loaded, result="scheduled").first().node
    assert all(c["node"] == node for c in api.get(f"/api/clusters/small/cycles/?node={node}").json()["results"])
    assert api.get("/api/clusters/small/cycles/?since=not-a-date").status_code == 400
    assert api.get("/api/clusters/small/cycles/?since=2000-01-01T00:00:00Z").json()["count"] == 15

    events = api.get("/api/clusters/small/events/?reason=FailedScheduling").json()
    assert events["count"] == 3 and events["results"][0]["type"] == "Warning"
    sched = api.get("/api/clusters/small/events/?pod=default/web-0").json()["results"]
    assert sched[0]["reason"] == "Scheduled" and sched[0]["message"].startswith("Successfully assigned default/web-0 to ")


def test_answer_serializers_share_their_fields_and_give_each_row_its_own_values(api, loaded):
    """PodSerializer binds its fields once per class; the answers of a list, of one pod and of a create still
    carry each row's own values, as a freshly built DRF ModelSerializer gives them."""
    from rest_framework import serializers as drf

    from dashboard.api.serializers import NodeSerializer, PodSerializer

    class Fresh(drf.ModelSerializer):
        plugins = drf.ListField(source="plugin_list", child=drf.CharField(), read_only=True)

        class Meta:
            model = Pod
            fields = PodSerializer.Meta.fields

    pods = list(Pod.objects.filter(cluster=loaded).order_by("id"))
    assert PodSerializer(pods[0]).fields["name"] is PodSerializer(pods[1]).fields["name"]
    assert [PodSerializer(p).data for p in pods] == [Fresh(p).data for p in pods]
    assert PodSerializer(pods, many=True).data == Fresh(pods, many=True).data
    listed = api.get("/api/clusters/small/pods/?page_size=100").json()["results"]
    assert listed == [dict(Fresh(p).data) for p in pods]
    assert len({p["uid"] for p in listed}) == len(pods) == 15
    created = api.post("/api/clusters/small/pods/", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late"},
                                                   "spec": {"containers": [{"name": "c", "image": "x"}]}},
                       format="json").json()
    assert created == dict(Fresh(Pod.objects.get(cluster=loaded, name="late")).data)
    node = Node.objects.filter(cluster=loaded).first()
    assert NodeSerializer(node).data["name"] == node.name


def test_profiles_validate_the_configuration(api):
    bad = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "percentageOfNodesToScore": 200}
    r = api.post("/api/profiles/", {"name": "bad", "document": bad}, format="json")
    assert r.status_code == 400 and "document" in r.json()
    assert api.post("/api/profiles/", {"name": "default", "document": {}}, format="json").status_code == 201


def test_schema_metrics_pages_and_commands(api, loaded, client):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    paths = json.loads(schema.content)["paths"]
    assert "/api/clusters/{cluster_name}/cycles/" in paths and "/api/clusters/{name}/start/" in paths
    text = client.get("/metrics").content.decode()
    assert 'scheduler_pending_pods{cluster="small",queue="unschedulable"} 3.0' in text
    assert "scheduler_schedule_attempts_total{" in text and "scheduler_framework_extension_point_duration_seconds" in text
    for url in ("/clusters/small/", "/clusters/small/pending/?q=big", "/clusters/small/nodes/",
                "/clusters/small/nodes/gpu-0/", "/clusters/small/pods/default/too-big/",
                "/clusters/small/pods/default/web-1/"):
        assert client.get(url).status_code == 200, url
    page = client.get("/clusters/small/pods/default/too-big/").content.decode()
    assert "0/6 nodes are available" in page and 'class="cell fail stopped"' in page
    pending = client.get("/clusters/small/pending/?plugin=NodeResourcesFit").content.decode()
    assert "default/too-big" in pending and "default/wants-ssd" not in pending
    out = StringIO()
    call_command("explain", "default/too-big", "--cluster", "small", stdout=out)
    assert "unschedulable: 0/6 nodes are available" in out.getvalue()
    assert "gpu-0   TaintToleration: node(s) had untolerated taint(s)" in out.getvalue()


def test_loop_survives_a_failing_cycle(api, monkeypatch):
    from dashboard.services.engine import Engine
    assert api.post("/api/clusters/", {"name": "flaky", "tie_break": "name"}, format="json").status_code == 201
    assert api.post("/api/clusters/flaky/scenario/", {"scenario": small_scenario(3)}, format="json").status_code == 201
    real, calls = Engine.schedule_one, []

    def flaky(self):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("plugin bug")
        return real(self)
    monkeypatch.setattr(Engine, "schedule_one", flaky)
    runner = Runner(Cluster.objects.get(name="flaky").id, steps=10)
    assert runner.run()
    assert runner.failures == 1
    # the failed attempt left nothing behind; after the reload every pod got its cycle
    assert Pod.objects.filter(cluster__name="flaky", queue="bound").count() == 3
    assert SchedulingCycle.objects.filter(cluster__name="flaky").count() == 6


def test_workload_generator_is_turned_off_while_the_cluster_runs(api, loaded):
    """PATCH {"workload": null} stops the generator of a running loop (it used to run on until a pause)."""
    import threading

    from .conftest import wait_for
    assert api.patch("/api/clusters/small/", {"workload": {"namespace": "load", "rate": 50, "max_pending": 1000}},
                     format="json").status_code == 200
    Cluster.objects.filter(pk=loaded.pk).update(desired_state=Cluster.RUNNING)
    runner = Runner(loaded.id)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        generated = Pod.objects.filter(cluster=loaded, namespace="load")
        wait_for(lambda: generated.count() >= 5, 30, what="pods of the generator")
        assert api.patch("/api/clusters/small/", {"workload": None}, format="json").status_code == 200
        wait_for(lambda: runner.workload is None, 10, what="the loop to stop its generator")
        made = generated.count()
        api.patch("/api/clusters/small/", {"tie_break": "name"}, format="json")
        wait_for(lambda: runner.engine.queue_counts()["active"] == 0, 30, what="the loop to go on scheduling")
        assert generated.count() == made and runner.workload is None
        assert api.patch("/api/clusters/small/", {"workload": {"namespace": "load", "rate": 50}},
                         format="json").status_code == 200
        wait_for(lambda: generated.count() > made, 30, what="the generator to start again")
    finally:
        Cluster.objects.filter(pk=loaded.pk).update(desired_state=Cluster.STOPPED)
        from dashboard.services import control
        control.send(loaded.id, "state")
        thread.join(20)
    assert not thread.is_alive()
