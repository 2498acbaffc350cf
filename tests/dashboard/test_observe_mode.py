"""Observe mode of a real cluster (the real kube-apiserver and kube-scheduler v1.36 of tests/envtest.py), through
the dashboard's loop, connected as a get/list/watch-only user: a pod kube-scheduler cannot place is explained
(an attempt with what would fix it), its page shows kube's message beside Schedscope's with their agreement, the
pending list counts the attempts and ``manage.py explain`` answers; nothing is written to the cluster. The same
user in scheduler mode is refused at connect with every missing permission named; a cluster started while its
API server is down waits for it and resumes."""
from __future__ import annotations

import io
import logging
from html import escape

import pytest
import yaml
from django.core.management import call_command
from kubernetes import client as kclient
from kubernetes import config as kconfig

from dashboard.models import Cluster, Pod, SchedulingCycle, SchedulingEvent
from dashboard.services.runner import Runner
from tests.envtest import ControlPlane, add_ready_node, ensure_namespace, require_assets
from tests.real.test_observe import OBSERVER, grant_read_only, kube_message, pod, writes_by

from .conftest import wait_for
from .test_real_cluster import LoopThread, real_cluster

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def plane(tmp_path):
    require_assets()
    cp = ControlPlane(tmp_path / "cp", scheduler=True, users={OBSERVER: []}).start()
    yield cp
    cp.stop()


def test_observe_mode_explains_a_pending_pod_on_its_pages(plane, api, client):
    admin = kconfig.new_client_from_config(config_file=str(plane.kubeconfig))
    ensure_namespace(admin, "default")
    grant_read_only(admin, OBSERVER)
    core = kclient.CoreV1Api(admin)
    for i in range(2):
        add_ready_node(admin, f"node-{i}", cpu="1")
    core.create_namespaced_pod("default", pod("no-zone", nodeSelector={"zone": "z9"}))
    wait_for(lambda: kube_message(core, "no-zone"), 60, what="kube-scheduler's FailedScheduling")
    kubeconfig = yaml.safe_dump(yaml.safe_load(plane.kubeconfig_for(OBSERVER).read_text()))
    cluster = real_cluster(api, "observed", kubeconfig, mode="shadow")
    loop = LoopThread(cluster)
    try:
        row = wait_for(lambda: Pod.objects.filter(cluster=cluster, name="no-zone", attempts__gt=0)
                       .exclude(kube_message="").first(), 60, what="the pod explained")
        # the cluster changes while it waits: observed again, on the new state
        add_ready_node(admin, "node-2", cpu="1")
        # (until its not-ready taint is removed the new node is another reason: wait for the state after that)
        settled = "0/3 nodes are available: 3 node(s) didn't match"
        row = wait_for(lambda: Pod.objects.filter(cluster=cluster, name="no-zone", attempts__gt=row.attempts,
                                                  reason__startswith=settled).first(), 60,
                       what="the pod observed again after a node joined")
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="no-zone",
                                            kube_message__startswith="0/3 nodes").exists(), 60,
                 what="kube's new report recorded")
    finally:
        loop.stop()
    row = Pod.objects.get(cluster=cluster, name="no-zone")
    assert row.kube_message == kube_message(core, "no-zone")
    assert row.reason.startswith("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
    assert row.reason == row.kube_message and row.kube_agrees   # the core at the server's version, v1.36
    assert row.queue == Pod.UNSCHEDULABLE and row.attempts >= 2
    cycle = SchedulingCycle.objects.get(cluster=cluster, seq=row.last_cycle)
    assert cycle.result == SchedulingCycle.UNSCHEDULABLE and cycle.num_nodes == 3
    assert cycle.matrix.get("suggestions"), "what would fix it"

    page = client.get("/clusters/observed/pods/default/no-zone/").content.decode()
    assert 'id="observe-note"' in page and "They agree." in page
    assert f'<b>default-scheduler says</b> <span class="mono">{escape(row.kube_message)}</span>' in page
    assert "Not tried yet" not in page and "No cycle recorded" not in page
    pending = client.get("/clusters/observed/pending/").content.decode()
    assert "no-zone" in pending and "not tried yet" not in pending
    out = io.StringIO()
    call_command("explain", "default/no-zone", cluster="observed", stdout=out)
    assert "didn't match Pod's node affinity/selector" in out.getvalue()

    assert writes_by(plane, OBSERVER) == []


def test_read_only_credentials_in_scheduler_mode_are_refused_with_every_missing_permission(plane, api, client):
    admin = kconfig.new_client_from_config(config_file=str(plane.kubeconfig))
    grant_read_only(admin, OBSERVER)
    kubeconfig = yaml.safe_dump(yaml.safe_load(plane.kubeconfig_for(OBSERVER).read_text()))
    cluster = real_cluster(api, "readonly", kubeconfig, mode="scheduler")
    assert Runner(cluster.pk).run() is True
    ev = SchedulingEvent.objects.get(cluster=cluster, reason="ClusterUnavailable")
    assert ev.message.startswith(
        "cluster readonly: the credentials lack 13 permission(s) that scheduler mode needs: create pods/binding; "
        "patch pods/status; delete pods; create, patch events.events.k8s.io; update persistentvolumes; "
        "update persistentvolumeclaims; update, create, delete resourceclaims.resource.k8s.io; "
        "update resourceclaims.resource.k8s.io/status; create leases.coordination.k8s.io in kube-system; "
        'update leases.coordination.k8s.io "kube-scheduler" in kube-system; kubeconfig '), ev.message
    assert Cluster.objects.get(pk=cluster.pk).desired_state == Cluster.STOPPED
    page = client.get("/clusters/readonly/").content.decode()   # the cluster's page: its latest events
    assert escape(ev.message) in page


def test_a_cluster_started_while_its_api_server_is_down_resumes(plane, api, caplog):
    admin = kconfig.new_client_from_config(config_file=str(plane.kubeconfig))
    grant_read_only(admin, OBSERVER)
    add_ready_node(admin, "node-0", cpu="1")
    kubeconfig = yaml.safe_dump(yaml.safe_load(plane.kubeconfig_for(OBSERVER).read_text()))
    cluster = real_cluster(api, "outage", kubeconfig, mode="shadow")
    plane.stop_apiserver()
    caplog.set_level(logging.WARNING, logger="dashboard.runner")
    assert Runner(cluster.pk).run() is True
    assert "cannot be reached" in caplog.text and "trying again later" in caplog.text
    assert Cluster.objects.get(pk=cluster.pk).desired_state == Cluster.RUNNING   # the watchdog starts it again
    plane.start_apiserver()
    loop = LoopThread(cluster)   # what the watchdog starts
    try:
        wait_for(lambda: cluster.nodes.filter(name="node-0").exists(), 60, what="the cluster resumed")
    finally:
        loop.stop()
    assert SchedulingEvent.objects.filter(cluster=cluster, reason="ClusterUnavailable").count() == 1
