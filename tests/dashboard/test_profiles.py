"""Scheduler profiles: editor round trip, kube's errors per field, versions/diff/rollback, dry run,
apply to a running Celery worker, permissions (PostgreSQL, Redis, a real worker)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from dashboard.models import Cluster, Pod, SchedulerProfile, SchedulingCycle
from dashboard.profiles import dryrun, services
from dashboard.profiles.forms import ProfileEditorForm
from dashboard.profiles.models import AuditLog, DryRun
from dashboard.services import clusters as svc

from .conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def fit_doc(strategy="LeastAllocated", weight=1, extra=None):
    doc = dict(API, profiles=[{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": strategy, "resources": [{"name": "cpu", "weight": weight}]}}}]}])
    doc.update(extra or {})
    return doc


def form_data(form, **changes):
    data = form.data_of_initial()
    data["source"] = "form"
    data.update(changes)
    for name in [k for k, v in data.items() if v is None]:
        del data[name]   # a switch turned off is a checkbox the browser does not send
    return data


def users():
    editor = User.objects.create_user("ed", password="pw")
    editor.groups.add(Group.objects.get_or_create(name="editor")[0])  # flushed between tests
    viewer = User.objects.create_user("vi", password="pw")
    return editor, viewer


def client(user):
    c = Client(HTTP_HOST="localhost")
    c.force_login(user)
    return c


def test_untouched_document_survives_and_edits_change_only_their_field():
    doc = fit_doc(extra={"extenders": [{"urlPrefix": "http://x", "filterVerb": "f", "weight": 2,
                                        "managedResources": [{"name": "example.com/foo"}]}],
                         "leaderElection": {"leaderElect": False}, "podMaxBackoffSeconds": 7})
    doc["profiles"][0]["plugins"] = {"score": {"enabled": [{"name": "ImageLocality", "weight": 3}],
                                               "disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}
    form = ProfileEditorForm(doc)
    same = ProfileEditorForm(doc, form_data(form))
    assert same.is_valid(), same.errors
    assert same.document == doc
    edited = ProfileEditorForm(doc, form_data(form, **{"p0.args.NodeResourcesFit.scoringStrategy.type": "MostAllocated",
                                                       "ext.0.weight": "5"}))
    assert edited.is_valid(), edited.errors
    expect = fit_doc("MostAllocated", extra={"extenders": [dict(doc["extenders"][0], weight=5)],
                                             "leaderElection": {"leaderElect": False}, "podMaxBackoffSeconds": 7})
    expect["profiles"][0]["plugins"] = doc["profiles"][0]["plugins"]
    assert edited.document == expect


@pytest.mark.parametrize("changes,field,message", [
    ({"p0.args.NodeResourcesFit.scoringStrategy.resources": "[{name: cpu, weight: 200}]"},
     "p0.args.NodeResourcesFit.scoringStrategy.resources",
     "scoringStrategy.resources[0].weight: Invalid value: 200: resource weight of cpu not in valid range (0, 100]"),
    ({"p0.percentageOfNodesToScore": "300"}, "p0.percentageOfNodesToScore",
     "profiles[0].percentageOfNodesToScore: Invalid value: 300: not in valid range [0-100]"),
    ({"g.podInitialBackoffSeconds": "0"}, "g.podInitialBackoffSeconds",
     "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    ({"p0.args.DefaultPreemption.minCandidateNodesPercentage": "120"},
     "p0.args.DefaultPreemption.minCandidateNodesPercentage",
     "minCandidateNodesPercentage: Invalid value: 120: not in valid range [0, 100]"),
    ({"p0.args.InterPodAffinity.hardPodAffinityWeight": "101"}, "p0.args.InterPodAffinity.hardPodAffinityWeight",
     "hardPodAffinityWeight"),
    ({"p0.args.PodTopologySpread.defaultConstraints": "[{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: "
      "ScheduleAnyway}]", "p0.args.PodTopologySpread.defaultingType": "List"},
     "p0.args.PodTopologySpread.defaultConstraints", "maxSkew: Invalid value: 0"),
    ({"ext.0.urlPrefix": "http://e", "ext.0.prioritizeVerb": "p", "ext.0.weight": "0"}, "ext.0.weight",
     "extenders[0].weight: Invalid value: 0"),
    # kube validates no plugin weight; NewFramework's overflow check refuses a negative one (its int64 sum wraps)
    ({"p0.score.TaintToleration.weight": "-5"}, "p0.score.TaintToleration.weight",
     "total score of Score plugins could overflow"),
    ({"p0.score.ImageLocality.weight": "3000000000"}, "__all__",   # kube's decoder names no index
     "cannot unmarshal number 3000000000 into Go struct field Plugin.profiles.plugins.score.enabled.weight of type "
     "int32"),
    ({"p0.queueSort.PrioritySort.on": None}, "p0.queueSort.moved",
     'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0'),
])
def test_kube_errors_are_shown_at_their_field(changes, field, message):
    form = ProfileEditorForm(fit_doc())
    bad = ProfileEditorForm(fit_doc(), form_data(form, **changes))
    assert not bad.is_valid()
    assert any(message in e for e in bad.errors.get(field, [])), bad.errors


def test_yaml_errors_without_a_field_go_to_their_section():
    decode = ProfileEditorForm(fit_doc(), {"source": "yaml", "yaml": "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                           "kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n"
                                           "  bogus: 1\n"})
    assert not decode.is_valid()
    assert decode.section_errors["profiles[0]"] == ['unknown field "profiles[0].bogus"']
    assert 'decode: unknown field "profiles[0].bogus"' in decode.non_field_errors()
    not_yaml = ProfileEditorForm(fit_doc(), {"source": "yaml", "yaml": "a: [1"})
    assert not not_yaml.is_valid() and "not valid YAML" in not_yaml.errors["yaml"][0]


def test_save_page_shows_errors_and_refuses_invalid(settings):
    editor, _ = users()
    profile = SchedulerProfile.objects.create(name="p", document=fit_doc())
    c = client(editor)
    page = c.get("/profiles/p/")
    assert page.status_code == 200
    form = page.context["form"]
    resp = c.post("/profiles/p/", form_data(form, **{"p0.args.NodeResourcesFit.scoringStrategy.resources":
                                                     "[{name: cpu, weight: 200}]"}))
    assert resp.status_code == 400
    assert b"not in valid range (0, 100]" in resp.content
    assert profile.versions.count() == 1
    bad_yaml = c.post("/profiles/p/", {"source": "yaml", "yaml": "apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n  bogus: 1\n"})
    assert bad_yaml.status_code == 400 and b'unknown field &quot;profiles[0].bogus&quot;' in bad_yaml.content
    ok = c.post("/profiles/p/", form_data(form, **{"p0.args.NodeResourcesFit.scoringStrategy.type": "MostAllocated",
                                                   "comment": "most"}))
    assert ok.status_code == 302
    assert profile.versions.get(number=2).document["profiles"][0]["pluginConfig"][0]["args"][
        "scoringStrategy"]["type"] == "MostAllocated"


def test_versions_diff_and_rollback():
    editor, _ = users()
    profile = SchedulerProfile.objects.create(name="v", document=fit_doc())
    v1 = services.ensure_versions(profile)
    v2 = services.save_version(profile, fit_doc("MostAllocated"), editor, "most")
    assert (v2.number, v2.author, v2.comment) == (2, editor, "most")
    d = services.diff(v1, v2)
    assert "--- v1\n+++ v2\n" in d and "-        type: LeastAllocated" in d and "+        type: MostAllocated" in d
    page = client(editor).get("/profiles/v/v/2/?against=1")
    assert b"+        type: MostAllocated" in page.content
    resp = client(editor).post("/profiles/v/v/1/rollback/")
    assert resp.status_code == 302
    v3 = profile.versions.get(number=3)
    assert v3.document == v1.document and v3.comment == "roll back to v1"
    with pytest.raises(services.Invalid):
        services.save_version(profile, fit_doc(weight=200), editor)


def two_node_cluster(name="dry", huge=True):
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}

    def node(n, zone):
        return {"metadata": {"name": n, "labels": {"topology.kubernetes.io/zone": zone}},
                "status": {"capacity": alloc, "allocatable": alloc}}

    def pod(n, cpu, node_name=None):
        spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}
        if node_name:
            spec["nodeName"] = node_name
        return {"metadata": {"name": n, "namespace": "default", "uid": n}, "spec": spec}
    scen = {"name": "dry", "nodes": [node("busy", "a"), node("empty", "b")], "pods": [pod("base", "2", "busy")],
            "pending": [pod("p1", "500m"), pod("p2", "500m")] + ([pod("huge", "3")] if huge else [])}
    cluster = Cluster.objects.create(name=name, tie_break="name")
    svc.load_scenario(cluster, scen, "test")
    return cluster


def test_dry_run_least_to_most_allocated_moves_pods():
    editor, _ = users()
    cluster = two_node_cluster()
    profile = SchedulerProfile.objects.create(name="dp", document=fit_doc())
    Cluster.objects.filter(pk=cluster.pk).update(profile=profile)
    services.ensure_versions(profile)
    cand = services.save_version(profile, fit_doc("MostAllocated"), editor)
    run = DryRun.objects.create(version=cand, cluster=cluster)
    dryrun.execute(run.pk)
    run.refresh_from_db()
    assert run.state == DryRun.DONE, run.error
    r = run.result
    # LeastAllocated: p1, p2 go to the empty node; huge (3 cpu) fits only there too.
    # MostAllocated: p1, p2 pack onto busy; huge still fits on empty.
    moved = {c["pod"]: (c["before"], c["after"]) for c in r["changes"]}
    assert moved == {"default/p1": ("empty", "busy"), "default/p2": ("empty", "busy")}
    assert r["summary"] == {"moved": 2, "became_schedulable": 0, "became_unschedulable": 0, "unchanged": 1}
    fit = next(s for s in r["changes"][0]["scores"] if s["plugin"] == "NodeResourcesFit")
    assert fit["before"] is not None and fit["after"] is not None
    zones = {z["zone"]: z for z in r["zones"]}
    assert zones["a"]["pods_before"] == 1 and zones["a"]["pods_after"] == 3
    assert zones["a"]["cpu_after"] > zones["a"]["cpu_before"]
    assert run.total == 6 and run.percent == 100
    assert r["nodes_changed"] == 2   # p1 and p2 leave empty for busy

    page = client(editor).get(f"/profiles/dry-runs/{run.pk}/").content.decode()
    assert "<b>3</b> pods compared" in page and "<b>2</b> nodes changed (gain or lose a pod)" in page
    assert "done · 6 of 6 placements" in page and "6 = 2 × the pods compared" in page
    # a plugin no placed pod scored on one side, a pod that became unschedulable without a message: no raw None
    r["plugins"][0]["after"] = None
    r["changes"].append({"pod": "default/gone", "kind": "became_unschedulable", "before": "busy", "after": None,
                         "message_before": "", "message_after": "", "scores": []})
    DryRun.objects.filter(pk=run.pk).update(result=r)
    page = client(editor).get(f"/profiles/dry-runs/{run.pk}/").content.decode()
    assert "None" not in page and "<td>–</td>" in page
    assert '<td><span class="muted">unschedulable</span></td>' in page


def test_permissions_and_audit():
    editor, viewer = users()
    profile = SchedulerProfile.objects.create(name="perm", document=fit_doc())
    cluster = two_node_cluster("perm")
    v1 = services.ensure_versions(profile)
    anon = Client(HTTP_HOST="localhost")
    assert anon.get("/profiles/perm/")["Location"] == "/profiles/login/?next=/profiles/perm/"
    assert client(viewer).get("/profiles/").status_code == 200
    for c, refused in ((anon, 302), (client(viewer), 403)):
        assert c.post("/profiles/perm/", {"source": "yaml", "yaml": "{}"}).status_code == refused
        assert c.post("/profiles/perm/v/1/apply/", {"cluster": "perm"}).status_code == refused
        assert c.post("/profiles/perm/v/1/dry-run/", {"cluster": "perm"}).status_code == refused
        assert c.post("/profiles/perm/v/1/rollback/").status_code == refused
        assert c.post("/profiles/perm/copy/", {"name": "c"}).status_code == refused
    assert not AuditLog.objects.filter(profile=profile).exists() and profile.versions.count() == 1
    assert client(editor).post("/profiles/perm/v/1/apply/", {"cluster": "perm"}).status_code == 302
    log = AuditLog.objects.get(action="apply")
    assert (log.user, log.version, log.cluster) == (editor, v1, cluster)
    assert Cluster.objects.get(pk=cluster.pk).profile == profile


def test_apply_switches_the_running_worker(worker_factory):
    editor, _ = users()
    worker_factory()
    cluster = two_node_cluster("live", huge=False)
    profile = SchedulerProfile.objects.create(name="live", document=fit_doc())
    Cluster.objects.filter(pk=cluster.pk).update(profile=profile)
    v1 = services.ensure_versions(profile)
    svc.set_state(cluster, Cluster.RUNNING)
    wait_for(lambda: Pod.objects.filter(cluster=cluster, name="p2", queue="bound").exists(), 60, what="first pods")
    assert Pod.objects.get(cluster=cluster, name="p1").node_name == "empty"
    first = SchedulingCycle.objects.filter(cluster=cluster).order_by("seq").first()
    assert services.version_of_cycle(cluster, first.seq) == v1
    v2 = services.save_version(profile, fit_doc("MostAllocated"), editor)
    services.apply(v2, editor)
    wait_for(lambda: cluster.version_spans.filter(version=v2).exists(), 30, what="the worker to reload")
    svc.add_pod(cluster, {"metadata": {"name": "after", "namespace": "default", "uid": "after"}, "spec": {
        "containers": [{"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "100m"}}}]}})
    wait_for(lambda: Pod.objects.filter(cluster=cluster, name="after", queue="bound").exists(), 30, what="new pod")
    # LeastAllocated put p1, p2 on the empty node; MostAllocated now packs onto the busier one
    assert Pod.objects.get(cluster=cluster, name="after").node_name == "busy"
    cycle = SchedulingCycle.objects.get(cluster=cluster, pod_name="after")
    assert services.version_of_cycle(cluster, cycle.seq) == v2
    assert services.version_of_cycle(cluster, first.seq) == v1
    svc.set_state(cluster, Cluster.STOPPED)


def test_dry_run_runs_as_a_celery_task_with_progress(worker_factory):
    editor, _ = users()
    worker_factory()
    cluster = two_node_cluster("celery-dry")
    profile = SchedulerProfile.objects.create(name="cd", document=fit_doc())
    Cluster.objects.filter(pk=cluster.pk).update(profile=profile)
    services.ensure_versions(profile)
    services.save_version(profile, fit_doc("MostAllocated"), editor)
    resp = client(editor).post("/profiles/cd/v/2/dry-run/", {"cluster": "celery-dry", "source": "pending"})
    assert resp.status_code == 302
    run = DryRun.objects.get()
    wait_for(lambda: DryRun.objects.filter(pk=run.pk, state=DryRun.DONE).exists(), 60, what="the dry-run task")
    status = client(editor).get(f"/profiles/dry-runs/{run.pk}/status/").json()
    assert status == {"state": "done", "done": 6, "total": 6, "percent": 100, "error": ""}
    page = client(editor).get(f"/profiles/dry-runs/{run.pk}/")
    assert b"<b>2</b> moved" in page.content and b"default/p1" in page.content
