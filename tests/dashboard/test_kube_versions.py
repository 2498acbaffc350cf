"""Kubernetes versions in the dashboard: a cluster schedules by its version's rules and gates (switched while its
loop runs), its page says which, the demo is at the latest version, and bad versions, gates and profiles are
refused with kube's text on every path."""
from __future__ import annotations

import threading

import pytest
from django.core.management import call_command

from dashboard.models import Cluster, Pod, SchedulerProfile, SchedulingCycle
from dashboard.profiles import services as profiles
from dashboard.profiles.models import VersionSpan
from dashboard.services import clusters as svc
from dashboard.services import control, credentials, kubeversions
from dashboard.services.runner import Runner
from scheduler_core import gcpolicy

from .conftest import load_cluster, page_client, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# v1.36's NodeDeclaredFeatures (beta, on): a host-network pod without host users needs the node feature
# UserNamespacesHostNetworkSupport, which these nodes do not declare; v1.30 has no such plugin.
NEEDS_FEATURES = "0/2 nodes are available: 2 node(s) didn't match Pod's required features."
GATE_OFF = ("NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,InPlacePodLevelResourcesVerticalScaling=false,"
            "InPlacePodVerticalScalingInitContainers=false,RestartAllContainersOnContainerExits=false")
EBS_PROFILE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               "profiles": [{"schedulerName": "default-scheduler",
                             "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]}


def node(name: str) -> dict:
    alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": alloc, "allocatable": alloc}}


def host_network_pod(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"hostNetwork": True, "hostUsers": False,
                     "containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]}}


def scenario(name: str, version: str) -> dict:
    return {"name": name, "kubeVersion": version, "nodes": [node("n-0"), node("n-1")], "pods": [],
            "pending": [host_network_pod("hostnet-0")]}


def latest_cycle(cluster, pod_name):
    return SchedulingCycle.objects.filter(cluster=cluster, pod_name=pod_name).order_by("-seq").first()


def test_a_cluster_switched_between_1_30_and_1_36_schedules_by_the_versions_rules(api, client, monkeypatch):
    monkeypatch.setattr(gcpolicy, "settle", lambda: None)
    cluster = load_cluster(api, scenario("switch", "1.36"))
    assert cluster.kube_version == "1.36"   # the scenario's kubeVersion
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.RUNNING)
    runner = Runner(cluster.id)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: getattr(latest_cycle(cluster, "hostnet-0"), "result", "") == "unschedulable",
                 what="v1.36 refusing the pod")
        cycle = latest_cycle(cluster, "hostnet-0")
        assert cycle.message.startswith(NEEDS_FEATURES), cycle.message
        assert cycle.failing_plugins == {"NodeDeclaredFeatures": 2}
        html = client.get("/clusters/switch/").content.decode()
        assert "Kubernetes 1.36 (kube-scheduler v1.36.2&#x27;s rules)" in html
        assert 'id="kube-version-form"' in html

        # the page's form: the running loop rebuilds its scheduler at v1.30, which binds the pod
        r = client.post("/clusters/switch/kube-version/", {"kube_version": "1.30", "feature_gates": ""})
        assert r.status_code == 302
        wait_for(lambda: Pod.objects.get(cluster=cluster, name="hostnet-0").node_name, what="v1.30 binding the pod")
        assert latest_cycle(cluster, "hostnet-0").result == "scheduled"
        html = client.get("/clusters/switch/").content.decode()
        assert "Kubernetes 1.30 (kube-scheduler v1.30.0&#x27;s rules)" in html

        # back at 1.36 (through the REST API): a pod like it is refused again, with 1.36's text
        assert api.patch("/api/clusters/switch/", {"kube_version": "v1.36.2"}, format="json").status_code == 200
        assert Cluster.objects.get(pk=cluster.pk).kube_version == "1.36"
        r = api.post("/api/clusters/switch/pods/", host_network_pod("hostnet-1"), format="json")
        assert r.status_code == 201, r.content
        wait_for(lambda: getattr(latest_cycle(cluster, "hostnet-1"), "result", "") == "unschedulable",
                 what="v1.36 refusing the second pod")
        assert latest_cycle(cluster, "hostnet-1").message.startswith(NEEDS_FEATURES)

        # 1.36 with the gate off (kube refuses it while gates that depend on it are on): it fits
        with pytest.raises(svc.ValidationFailed) as err:
            svc.set_kube_version(cluster, "1.36", "NodeDeclaredFeatures=false")
        assert ("RestartAllContainersOnContainerExits is enabled, but depends on features that are disabled: "
                "[NodeDeclaredFeatures]") in err.value.errors["feature_gates"][0]
        svc.set_kube_version(cluster, "1.36", GATE_OFF)
        wait_for(lambda: Pod.objects.get(cluster=cluster, name="hostnet-1").node_name, what="the gate turned off")
        html = client.get("/clusters/switch/").content.decode()
        assert "NodeDeclaredFeatures=false" in html

        # each cycle is explained at the version it ran: the spans the recorder noted
        spans = list(VersionSpan.objects.filter(cluster=cluster).order_by("first_seq", "id")
                     .values_list("kube_version", "feature_gates"))
        assert spans == [("1.36", ""), ("1.30", ""), ("1.36", ""), ("1.36", GATE_OFF)]
        first = SchedulingCycle.objects.filter(cluster=cluster, pod_name="hostnet-0").order_by("seq").first()
        assert profiles.span_of_cycle(cluster, first.seq).kube_version == "1.36"
        assert profiles.span_of_cycle(cluster, latest_cycle(cluster, "hostnet-0").seq).kube_version == "1.30"
    finally:
        Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.STOPPED)
        control.send(cluster.id, "state")
        thread.join(15)


def test_the_demo_runs_the_latest_version(db):
    call_command("demo", "--stopped", "--no-workload")
    demo = Cluster.objects.get(name="demo")
    assert demo.kube_version == "1.36"
    assert kubeversions.describe(demo)["text"] == "Kubernetes 1.36 (kube-scheduler v1.36.2's rules)"
    assert kubeversions.scheduler_config(demo, None).features.name == "1.36"


def test_new_clusters_default_to_the_latest_version_and_real_ones_follow_their_server(api):
    r = api.post("/api/clusters/", {"name": "fresh"}, format="json")
    assert r.status_code == 201 and r.json()["kube_version"] == "1.36" and r.json()["server_version"] == ""
    r = api.post("/api/clusters/", {"name": "prod", "kind": "real", "kubeconfig": "/nowhere/kubeconfig"},
                 format="json")
    assert r.status_code == 201, r.content
    assert r.json()["kube_version"] == ""
    prod = Cluster.objects.get(name="prod")
    assert kubeversions.cluster_version(prod) == "1.36"   # not reached yet: the latest
    prod.server_version = "v1.31.4-eks-1"
    assert kubeversions.cluster_version(prod) == "1.30"   # the nearest supported
    assert kubeversions.describe(prod)["follows_server"]
    # a server version is the server's: the API does not write it
    assert api.patch("/api/clusters/prod/", {"server_version": "v9.9"}, format="json").status_code == 200
    assert Cluster.objects.get(name="prod").server_version == ""
    # only a real cluster follows its server
    r = api.patch("/api/clusters/fresh/", {"kube_version": ""}, format="json")
    assert r.status_code == 400 and "kube_version" in r.json()


def test_bad_versions_and_feature_gates_get_kubes_error_text(api, editor_user, viewer_user):
    load_cluster(api, scenario("gates", "1.36"))
    r = api.patch("/api/clusters/gates/", {"feature_gates": "NodeDeclaredFeatures=maybe"}, format="json")
    assert r.status_code == 400
    assert r.json() == {"feature_gates": ['invalid value of NodeDeclaredFeatures=maybe, err: strconv.ParseBool: '
                                          'parsing "maybe": invalid syntax']}
    r = api.patch("/api/clusters/gates/", {"feature_gates": "SchedulerQueueingHints=false"}, format="json")
    assert r.json() == {"feature_gates": ["cannot set feature gate SchedulerQueueingHints to false, feature is "
                                          "locked to true"]}
    # v1.30's featuregate package refuses a gate it does not know; v1.36's only warns
    r = api.patch("/api/clusters/gates/", {"kube_version": "1.30", "feature_gates": "NodeDeclaredFeatures=true"},
                  format="json")
    assert r.json() == {"feature_gates": ["unrecognized feature gate: NodeDeclaredFeatures"]}
    r = api.patch("/api/clusters/gates/", {"kube_version": "1.29"}, format="json")
    assert r.json() == {"kube_version": ["Kubernetes version 1.29 is not supported: supported versions are "
                                         "1.30, 1.36"]}
    cluster = Cluster.objects.get(name="gates")
    assert (cluster.kube_version, cluster.feature_gates) == ("1.36", "")

    # the page: an editor's bad gates are refused with the same text and change nothing; a viewer cannot change
    editor = page_client(editor_user)
    r = editor.post("/clusters/gates/kube-version/", {"kube_version": "1.36", "feature_gates": "AllBeta=perhaps"},
                    follow=True)
    assert 'invalid value of AllBeta=perhaps, err: strconv.ParseBool: parsing &quot;perhaps&quot;' in r.content.decode()
    assert Cluster.objects.get(name="gates").feature_gates == ""
    viewer = page_client(viewer_user)
    html = viewer.get("/clusters/gates/").content.decode()
    assert "Kubernetes 1.36" in html and 'id="kube-version-form"' not in html
    assert viewer.post("/clusters/gates/kube-version/", {"kube_version": "1.30"}).status_code == 403
    assert Cluster.objects.get(name="gates").kube_version == "1.36"


def test_a_profile_is_checked_at_its_version_and_at_each_clusters(api, admin_user):
    load_cluster(api, scenario("old", "1.30"))
    profile = profiles.create("ebs", EBS_PROFILE, None, kube_version="1.30")   # fine at 1.30
    assert api.patch("/api/clusters/old/", {"profile": "ebs"}, format="json").status_code == 200
    # the cluster cannot move to 1.36 with it: v1.36 no longer has EBSLimits
    r = api.patch("/api/clusters/old/", {"kube_version": "1.36"}, format="json")
    assert r.status_code == 400
    assert r.json()["profile"][0].startswith('profile ebs at Kubernetes 1.36: profiles[0].plugins.filter.enabled[0]: '
                                             'Invalid value: "EBSLimits"')
    with pytest.raises(svc.ValidationFailed):
        svc.set_kube_version(Cluster.objects.get(name="old"), "1.36", "")
    # nor can a 1.36 cluster take it, nor can a profile be written for 1.36 with it
    load_cluster(api, scenario("new", "1.36"))
    r = api.patch("/api/clusters/new/", {"profile": "ebs"}, format="json")
    assert r.status_code == 400 and "EBSLimits" in r.json()["profile"][0]
    with pytest.raises(profiles.Invalid) as err:
        profiles.create("ebs-136", EBS_PROFILE, None, kube_version="1.36")
    assert "EBSLimits" in str(err.value)
    # a new version of the profile is checked at the version of the clusters that run it
    ok = profiles.save_version(profile, dict(EBS_PROFILE, percentageOfNodesToScore=50), admin_user)
    assert ok.number == 2
    assert SchedulerProfile.objects.get(name="ebs").kube_version == "1.30"


def test_the_simulated_api_reports_the_clusters_version(api, admin_user):
    cluster = load_cluster(api, scenario("api", "1.30"))
    _row, token = credentials.create_token(cluster, "t", admin_user)
    c, auth = page_client(), {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    assert c.get("/clusters/api/k8s/version").status_code == 401   # which version runs is for its tokens
    assert c.get("/clusters/api/k8s/version", **auth).json()["gitVersion"] == "v1.30.0+schedscope"
    assert c.get("/clusters/api/k8s/openapi/v2", **auth).json()["info"]["version"] == "v1.30.0"
    svc.set_kube_version(cluster, "1.36", "")
    assert c.get("/clusters/api/k8s/version", **auth).json() == {
        "major": "1", "minor": "36", "gitVersion": "v1.36.2+schedscope", "gitCommit": "", "gitTreeState": "clean",
        "buildDate": "", "goVersion": "", "compiler": "schedscope", "platform": "linux/amd64"}
    assert c.get("/clusters/api/k8s/openapi/v3/api/v1", **auth).json()["info"]["version"] == "v1.36.2"
