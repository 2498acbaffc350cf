"""Manual bindings (a Binding object) from the REST API and the pod page: made by the cluster's loop, which then
accounts for them (queue, node resources); refusals with kube's status codes; the ManualBinding event, the Filter
plugins the binding ignores, the audit log; loops in a thread (embedded mode), over Redis and in a Celery worker."""
from __future__ import annotations

import asyncio
import re
import shutil
import threading

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings
from django.utils.html import escape

from dashboard.models import Cluster, Pod, SchedulingCycle, SchedulingEvent
from dashboard.profiles.models import AuditLog
from dashboard.services import binding, control
from dashboard.services.runner import Runner

from .conftest import api_client, load_cluster, page_client, small_scenario, wait_for
from .test_browser import ARGS, CHROMIUM, _shot, server  # noqa: F401 (the embedded server fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def binding_url(pod: str, cluster: str = "small") -> str:
    ns, name = pod.split("/")
    return f"/api/clusters/{cluster}/pods/{ns}/{name}/binding/"


def to_node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Binding", "target": {"apiVersion": "v1", "kind": "Node", "name": name}}


@pytest.fixture
def loaded(api):
    """The small cluster after 20 cycles: the web pods bound, too-big, wants-ssd and also-big pending."""
    cluster = load_cluster(api, small_scenario(), steps=20)
    assert set(Pod.objects.filter(cluster=cluster, node_name="").values_list("name", flat=True)) == {
        "too-big", "wants-ssd", "also-big"}
    return cluster


class LoopThread:
    """The cluster's loop in a thread of the test (the cluster paused: it takes commands, runs no cycles)."""

    def __init__(self, cluster):
        self.cluster = cluster
        Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.PAUSED)
        self.runner = Runner(cluster.id)
        self.thread = threading.Thread(target=self.runner.run, daemon=True)
        self.thread.start()
        wait_for(lambda: control.is_driven(cluster.id), 20, what="the loop to take the cluster")

    def stop(self):
        Cluster.objects.filter(pk=self.cluster.pk).update(desired_state=Cluster.STOPPED)
        control.send(self.cluster.id, "state")
        self.thread.join(20)
        assert not self.thread.is_alive()


@pytest.fixture
def loop(loaded):
    running = LoopThread(loaded)
    yield running
    running.stop()


def test_binding_through_the_api_is_made_by_the_loop_which_accounts_for_it(loaded, loop, editor_user, api):
    editor = api_client(editor_user)
    before = Pod.objects.get(cluster=loaded, name="also-big")
    r = editor.post(binding_url("default/also-big"), to_node("n-1"), format="json")
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["pod"] == "default/also-big" and body["node"] == "n-1" and body["stored"] is True
    assert body["rejections"] == {"NodeResourcesFit": "Insufficient cpu"}
    row = Pod.objects.get(pk=before.pk)
    assert (row.node_name, row.queue) == ("n-1", Pod.BOUND) and row.bound_at is not None
    assert (row.attempts, row.last_cycle) == (before.attempts, before.last_cycle)  # no cycle of ours decided it
    ev = SchedulingEvent.objects.get(cluster=loaded, reason="ManualBinding", pod_name="also-big")
    assert ev.type == "Warning" and ev.node == "n-1"
    assert "Manually assigned default/also-big to n-1 by editor" in ev.message
    assert "NodeResourcesFit (Insufficient cpu)" in ev.message and "kubelet would reject" in ev.message
    audit = AuditLog.objects.get(action="pod.bind", cluster=loaded)
    assert audit.user == editor_user
    assert audit.detail == {"pod": "default/also-big", "uid": before.uid, "node": "n-1",
                            "rejections": {"NodeResourcesFit": "Insufficient cpu"}}

    # The loop's cache counts the 32 cpu on n-1 and its queue no longer holds the pod: a new small pod is not
    # placed on n-1, and also-big is never tried again.
    new_pod = {"metadata": {"name": "late", "namespace": "default", "uid": "late"},
               "spec": {"containers": [{"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "100m"}}}]}}
    assert api.post("/api/clusters/small/pods/", {"manifest": new_pod}, format="json").status_code == 201
    seq_before = SchedulingCycle.objects.filter(cluster=loaded).order_by("-seq").values_list("seq", flat=True)[0]
    assert api.post("/api/clusters/small/step/", {"n": 5}, format="json").status_code == 202
    late = wait_for(lambda: SchedulingCycle.objects.filter(cluster=loaded, pod_name="late").first(), 20,
                    what="the new pod's cycle")
    assert late.result == "scheduled" and late.node != "n-1"
    assert late.failing_plugins == {"NodeResourcesFit": 1, "TaintToleration": 1}  # n-1 and gpu-0
    assert not SchedulingCycle.objects.filter(cluster=loaded, pod_name="also-big", seq__gt=seq_before).exists()


def test_a_binding_reaches_the_clusters_websocket_as_an_event_of_the_pod(loaded, loop, editor_user):
    """What the live pod page reacts to (Channels' WebsocketCommunicator against the ASGI application): the
    update after a manual binding carries the pod's ManualBinding event under the pod's key."""
    from .test_live import _open, _signed_in
    cookie = _signed_in(1, "watcher")[0]
    pod = Pod.objects.get(cluster=loaded, name="wants-ssd")

    async def watch() -> dict:
        comm = await _open(cookie, loaded.name)
        await database_sync_to_async(binding.bind_pod)(loaded, pod, "n-2", editor_user)
        while True:   # queue counts may come first; the test's timeout bounds the wait
            msg = await comm.receive_json_from(timeout=30)
            mine = [e for e in msg.get("events") or [] if e["pod"] == "default/wants-ssd"]
            if mine:
                await comm.disconnect()
                return mine[0]
    event = asyncio.run(watch())
    assert event["reason"] == "ManualBinding" and event["node"] == "n-2"
    assert event["message"].startswith("Manually assigned default/wants-ssd to n-2 by editor")


def test_refusals_have_kubes_status_and_a_field_path(loaded, loop, editor_user, viewer_user):
    editor = api_client(editor_user)
    r = editor.post(binding_url("default/web-0"), to_node("n-2"), format="json")
    bound_to = Pod.objects.get(cluster=loaded, name="web-0").node_name
    assert r.status_code == 409 and r.json()["detail"] == f'pod web-0 is already assigned to node "{bound_to}"'
    r = editor.post(binding_url("default/too-big"), to_node("n-404"), format="json")
    assert r.status_code == 400 and r.json() == {"target.name": ['nodes "n-404" not found']}
    r = editor.post(binding_url("default/too-big"), {"target": {"kind": "Node"}}, format="json")
    assert r.status_code == 400 and "name" in r.json()["target"]
    r = editor.post(binding_url("default/too-big"), {"target": {"kind": "Pod", "name": "n-1"}}, format="json")
    assert r.status_code == 400 and "kind" in r.json()["target"]
    r = editor.post(binding_url("default/too-big"), dict(to_node("n-1"), metadata={"name": "other"}), format="json")
    assert r.status_code == 400 and list(r.json()) == ["metadata.name"]
    r = editor.post(binding_url("default/too-big"), dict(to_node("n-1"), metadata={"uid": "not-its-uid"}),
                    format="json")
    assert r.status_code == 409 and r.json()["field"] == "metadata.uid"
    assert editor.post(binding_url("default/nope"), to_node("n-1"), format="json").status_code == 404
    assert api_client(viewer_user).post(binding_url("default/too-big"), to_node("n-1"),
                                        format="json").status_code == 403
    assert api_client().post(binding_url("default/too-big"), to_node("n-1"), format="json").status_code in (401, 403)
    assert Pod.objects.get(cluster=loaded, name="too-big").node_name == ""
    assert not AuditLog.objects.filter(action="pod.bind").exists()
    assert not SchedulingEvent.objects.filter(cluster=loaded, reason="ManualBinding").exists()


def test_dry_run_checks_without_binding(loaded, loop, editor_user):
    editor = api_client(editor_user)
    r = editor.post(binding_url("default/wants-ssd") + "?dryRun=All", to_node("n-0"), format="json")
    assert r.status_code == 201, r.content
    assert r.json()["rejections"] == {"NodeAffinity": "node(s) didn't match Pod's node affinity/selector"}
    assert r.json()["stored"] is None and r.json()["message"].startswith("Would assign default/wants-ssd to n-0")
    assert editor.post(binding_url("default/wants-ssd") + "?dryRun=Some", to_node("n-0"),
                       format="json").status_code == 400
    assert Pod.objects.get(cluster=loaded, name="wants-ssd").node_name == ""
    assert not AuditLog.objects.filter(action="pod.bind").exists()


def test_a_stopped_cluster_gets_a_short_lived_loop(loaded, editor_user):
    """Embedded mode: no loop drives the cluster; the request starts one, which binds, answers and stops."""
    assert not control.is_driven(loaded.id)
    with override_settings(SCHEDULER_MODE="thread"):
        r = api_client(editor_user).post(binding_url("default/too-big"), to_node("n-3"), format="json")
    assert r.status_code == 201, r.content
    assert Pod.objects.get(cluster=loaded, name="too-big").node_name == "n-3"
    wait_for(lambda: not control.is_driven(loaded.id), 20, what="the short-lived loop to stop")
    # the next loop rebuilds from the database: n-3 holds too-big's 64 cpu, so nothing else fits there
    Runner(loaded.id, steps=5).run()
    assert Pod.objects.get(cluster=loaded, name="too-big").node_name == "n-3"


def test_pod_page_form_for_editors_only(loaded, loop, editor_user, viewer_user):
    editor = page_client(editor_user)
    page = editor.get("/clusters/small/pods/default/wants-ssd/").content.decode()
    assert 'id="bind-open"' in page and "bind-form" not in page  # the choices are checked only when asked for
    page = editor.get("/clusters/small/pods/default/wants-ssd/?binding=1").content.decode()
    form = re.search(r'<form class="bind-form".*?</form>', page, re.S).group(0)
    assert 'name="csrfmiddlewaretoken"' in form and 'value="gpu-0"' in form and "Bind manually" in form
    assert 'action="/clusters/small/pods/default/wants-ssd/bind/"' in form
    for viewer_page in ("", "?binding=1"):
        text = page_client(viewer_user).get(f"/clusters/small/pods/default/wants-ssd/{viewer_page}").content.decode()
        assert "bind-form" not in text and "bind-open" not in text
    bound_page = editor.get("/clusters/small/pods/default/web-0/?binding=1").content.decode()
    assert "bind-form" not in bound_page
    assert page_client(viewer_user).post("/clusters/small/pods/default/wants-ssd/bind/",
                                         {"node": "n-0"}).status_code == 403

    r = editor.post("/clusters/small/pods/default/wants-ssd/bind/", {"node": "n-0", "check": "1"}, follow=True)
    text = r.content.decode()
    assert r.redirect_chain[-1][0] == "/clusters/small/pods/default/wants-ssd/?bind=n-0#bind"
    assert 'class="flash-warning"' in text and "Would assign default/wants-ssd to n-0" in text
    assert "NodeAffinity" in text and 'value="n-0" required checked' in text
    assert Pod.objects.get(cluster=loaded, name="wants-ssd").node_name == ""

    # n-0 fails NodeAffinity: "Bind manually" asks first and binds nothing
    r = editor.post("/clusters/small/pods/default/wants-ssd/bind/", {"node": "n-0", "bind": "1"}, follow=True)
    text = r.content.decode()
    assert r.redirect_chain[-1][0] == "/clusters/small/pods/default/wants-ssd/?bind=n-0&confirm=1#bind"
    confirm = re.search(r'<form class="bind-confirm".*?</form>', text, re.S).group(0)
    assert "n-0 fails NodeAffinity (node(s) didn&#x27;t match Pod&#x27;s node affinity/selector)" in confirm
    assert 'name="confirmed" value="1"' in confirm and 'value="n-0"' in confirm
    assert Pod.objects.get(cluster=loaded, name="wants-ssd").node_name == ""
    assert not SchedulingEvent.objects.filter(cluster=loaded, reason="ManualBinding").exists()

    r = editor.post("/clusters/small/pods/default/wants-ssd/bind/", {"node": "n-0", "bind": "1", "confirmed": "1"},
                    follow=True)
    text = r.content.decode()
    assert "Manually assigned default/wants-ssd to n-0 by editor" in text and 'class="flash-warning"' in text
    assert "bind-form" not in text and Pod.objects.get(cluster=loaded, name="wants-ssd").node_name == "n-0"
    r = editor.post("/clusters/small/pods/default/wants-ssd/bind/", {"node": "n-1", "bind": "1"}, follow=True)
    assert 'class="flash-error"' in r.content.decode()
    assert escape('pod wants-ssd is already assigned to node "n-0"') in r.content.decode()


def test_a_node_that_fits_binds_without_confirmation(loaded, loop, api, editor_user):
    ssd = {"metadata": {"name": "ssd-0", "labels": {"disk": "ssd"}},
           "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
    assert api.post("/api/clusters/small/nodes/", {"manifest": ssd}, format="json").status_code == 201
    wait_for(lambda: api.post(binding_url("default/wants-ssd") + "?dryRun=All", to_node("ssd-0"),
                              format="json").status_code == 201, 20, what="the loop to follow the new node")
    r = page_client(editor_user).post("/clusters/small/pods/default/wants-ssd/bind/", {"node": "ssd-0", "bind": "1"},
                                      follow=True)
    assert r.redirect_chain[-1][0] == "/clusters/small/pods/default/wants-ssd/"
    assert 'class="flash-success"' in r.content.decode()
    assert Pod.objects.get(cluster=loaded, name="wants-ssd").node_name == "ssd-0"


def test_binding_choices_mark_each_node_with_its_rejecting_plugins(loaded, api, monkeypatch):
    from dashboard.services import bindfit
    pod = Pod.objects.get(cluster=loaded, name="wants-ssd")
    choices = bindfit.node_choices(loaded, pod)
    marks = {n["name"]: (n["fits"], sorted(n["rejections"])) for n in choices["nodes"]}
    assert marks["n-0"] == (False, ["NodeAffinity"])
    assert marks["gpu-0"] == (False, ["NodeAffinity", "TaintToleration"])
    assert choices["matching"] == choices["shown"] == 6 and not choices["error"]
    ssd = {"metadata": {"name": "ssd-0", "labels": {"disk": "ssd"}},
           "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
    assert api.post("/api/clusters/small/nodes/", {"manifest": ssd}, format="json").status_code == 201
    assert bindfit.node_choices(loaded, pod, q="ssd")["nodes"] == [{"name": "ssd-0", "fits": True, "rejections": {}}]
    # big clusters: at most SHOWN nodes are checked, the chosen one always among them
    monkeypatch.setattr(bindfit, "SHOWN", 2)
    capped = bindfit.node_choices(loaded, pod, q="n-", chosen="gpu-0")
    assert [n["name"] for n in capped["nodes"]] == ["gpu-0", "n-0", "n-1"]
    assert (capped["matching"], capped["shown"]) == (5, 3)
    assert capped["chosen"]["rejections"]["TaintToleration"].startswith("node(s) had untolerated taint")


def test_bind_through_redis_to_a_loop_in_a_celery_worker(loaded, editor_user, worker_factory):
    """Celery mode end to end: the request starts a loop in the worker, which binds and answers over Redis."""
    worker_factory()
    r = api_client(editor_user).post(binding_url("default/wants-ssd"), to_node("n-2"), format="json")
    assert r.status_code == 201, r.content
    assert r.json()["rejections"] == {"NodeAffinity": "node(s) didn't match Pod's node affinity/selector"}
    assert Pod.objects.get(cluster=loaded, name="wants-ssd").node_name == "n-2"
    assert SchedulingEvent.objects.filter(cluster=loaded, reason="ManualBinding", node="n-2").count() == 1


@pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed")
def test_bind_form_in_a_browser(server, tmp_path):
    """The pod page's manual binding in headless Chromium against the embedded server (`make run`'s demo
    cluster): the nodes with their marks, Check, the confirmation a failing node asks for, then the binding."""
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser, width=1280).new_page()
        page.goto(server + "/clusters/demo/pods/ml/inference-no-toleration/")
        expect(page.locator("#verdict")).to_contain_text("untolerated taint", timeout=30000)
        page.click("#bind-open")
        nodes = page.locator("#bind-nodes li")
        expect(nodes).to_have_count(50)   # bindfit.SHOWN of 53
        gpu = nodes.filter(has=page.locator('input[value="gpu-1"]'))
        expect(gpu).to_have_class("fails")
        expect(gpu).to_contain_text("✗")
        expect(gpu.locator(".chip.fail")).to_have_text(["TaintToleration"])
        expect(nodes.filter(has=page.locator('input[value="general-01"]')).locator(".chip.fail")).to_have_text(
            ["NodeResourcesFit"])
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        page.fill('.bind-search input[name="bq"]', "gpu")
        page.click(".bind-search button")
        expect(nodes).to_have_count(9)   # gpu-1..6 and dra-gpu-1..3
        page.check('#bind-nodes input[value="gpu-1"]')
        page.click("#bind-form button[name=check]")
        expect(page.locator("#flash .flash-warning")).to_contain_text(
            "Would assign ml/inference-no-toleration to gpu-1 by e2e-admin; the node fails Filter plugin "
            "TaintToleration", timeout=30000)
        expect(page.locator('#bind-nodes input[value="gpu-1"]')).to_be_checked()
        page.click("#bind-form button[name=bind]")
        # gpu-1 fails TaintToleration: nothing is bound yet, the page asks
        confirm = page.locator("#bind-confirm")
        expect(confirm).to_contain_text("gpu-1 fails TaintToleration", timeout=30000)
        expect(page.locator("#pod-queue")).to_be_visible()
        page.evaluate("window.scrollTo(0, 0)")
        _shot(page, tmp_path, "pod-bind-confirm", full_page=False)
        confirm.locator("button[name=bind]").click()
        expect(page.locator("#flash")).to_contain_text("Manually assigned ml/inference-no-toleration to gpu-1",
                                                       timeout=30000)
        expect(page.locator(".podinfo")).to_contain_text("bound to gpu-1")
        expect(page.locator("#bind-form")).to_have_count(0)
        browser.close()
