"""What-if runs: the page, the API and the command ask the same validated question; the answer is the live
loop's own (a capacity count equals what the loop does once that many copies exist); runs go through a real
Celery worker; a restricted cluster's runs stay hidden; the three forms work in a browser."""
from __future__ import annotations

import json
import re
import shutil
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from dashboard.models import Cluster, Pod, SchedulingCycle, WhatIfRun
from dashboard.services import whatif
from dashboard.services.demo import demo_scenario
from dashboard.services.runner import Runner

from .conftest import api_client, load_cluster, make_user, page_client, small_scenario, wait_for
from .test_browser import ARGS, CHROMIUM, _shot, server  # noqa: F401  (server is a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

WEB = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "c:1",
                               "resources": {"requests": {"cpu": "1", "memory": "256Mi"}}}]}}


@pytest.fixture
def small(api):
    """The small scenario, its pending pods tried once by the loop."""
    return load_cluster(api, small_scenario(pending_web=4), steps=7)


def ask(cluster, kind: str, **data) -> WhatIfRun:
    """A run asked and answered in this process (the task's body)."""
    run = whatif.create(cluster, kind, whatif.question(cluster, kind, data))
    whatif.execute(run.pk)
    run.refresh_from_db()
    assert run.state == WhatIfRun.DONE, run.error
    return run


def _copies_in_the_loop(api, cluster, template: dict, n: int) -> tuple[list, str]:
    """``n`` copies of ``template`` created through the REST API and scheduled by the live loop: the nodes of
    those that were bound, and the last one's latest FitError."""
    for i in range(1, n + 1):
        body = dict(template, metadata=dict(template["metadata"], name=f"copy-{i}"))
        assert api.post(f"/api/clusters/{cluster.name}/pods/", {"manifest": body}, format="json").status_code == 201
    assert Runner(cluster.id, steps=3 * n).run()
    copies = {p.name: p.node_name for p in Pod.objects.filter(cluster=cluster, name__startswith="copy-")}
    last = SchedulingCycle.objects.filter(cluster=cluster, pod_name=f"copy-{n}").order_by("-seq").first()
    assert not copies[f"copy-{n}"]
    return sorted(node for node in copies.values() if node), last.message


def test_capacity_equals_what_the_loop_does_when_the_copies_exist(small, api):
    run = ask(small, "capacity", manifest=yaml.safe_dump(WEB))
    r = run.result
    fit = r["fit"]
    assert fit == 16 and not r["limited"]   # 5 nodes x 4 cpu, 2 cpu taken by the web pods; the gpu node is tainted
    assert r["headline"] == "16 copies fit; the next one does not:"
    assert r["stop"]["message"].startswith("0/6 nodes are available: 1 node(s) had untolerated taint(s), "
                                           "5 Insufficient cpu.")
    stop = run.traces.get(number=r["stop"]["trace"])
    assert (stop.pod_key, stop.result, stop.message) == (r["stop"]["pod"], "unschedulable", r["stop"]["message"])
    assert stop.suggestions and stop.matrix["filter_plugins"]
    # every plugin's verdict on every node, stored in the column form and read back as rows
    assert stop.node_list and len(stop.matrix["nodes"]) == 6 and all(stop.matrix["filter"])
    assert _copies_in_the_loop(api, small, WEB, fit + 1) == (sorted(p["node"] for p in r["placements"]),
                                                              r["stop"]["message"])


def test_capacity_on_the_demo_equals_the_loop(api):
    demo = load_cluster(api, demo_scenario(), steps=80)
    template = dict(WEB, metadata={"name": "batch", "namespace": "shop"}, spec={"containers": [
        {"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "3", "memory": "6Gi"}}}]})
    r = ask(demo, "capacity", manifest=template).result
    assert 10 < r["fit"] < 100 and not r["limited"]
    assert _copies_in_the_loop(api, demo, template, r["fit"] + 1) == (sorted(p["node"] for p in r["placements"]),
                                                                       r["stop"]["message"])


def test_a_stage_naming_a_long_pod_is_cut_to_its_column(small):
    """A pod's name may be 253 characters: the progress line naming it is cut, not a failed run."""
    run = WhatIfRun.objects.create(cluster=small, kind=WhatIfRun.DRAIN, state=WhatIfRun.RUNNING)
    whatif._Progress(run.pk, "eviction")(0, None, "explaining why ns/" + "p" * 253)
    stage = WhatIfRun.objects.get(pk=run.pk).stage
    assert len(stage) == WhatIfRun._meta.get_field("stage").max_length and stage.endswith("p…")


def _drain_result(placed: int, stranded: int, lost: int, blocked: int = 0) -> dict:
    """A drain's stored answer: ``placed`` pods re-created on 40 nodes, ``stranded`` left Pending for one of two
    reasons, ``lost`` bare pods, ``blocked`` evictions refused by one budget."""
    evicted = [{"pod": f"a/p-{i}", "from": "n-0", "replacement": f"a/p-{i}-x", "node": f"m-{i % 40:02d}"}
               for i in range(placed)]
    why = ("0/41 nodes are available: 41 Insufficient cpu.", "0/41 nodes are available: 41 Insufficient memory.")
    evicted += [{"pod": f"a/s-{i}", "from": "n-0", "replacement": f"a/s-{i}-x", "node": None, "why": why[i % 2]}
                for i in range(stranded)]
    evicted += [{"pod": f"a/bare-{i}", "from": "n-0", "replacement": None} for i in range(lost)]
    pending = [{"pod": f"a/s-{i}-x", "message": why[i % 2], "plugins": ["NodeResourcesFit"], "displaced": True}
               for i in range(stranded)]
    return {"nodes": ["n-0"], "evicted": evicted, "lost": [{"pod": f"a/bare-{i}", "from": "n-0"} for i in range(lost)],
            "skipped": [], "pending": pending, "utilisation_before": {}, "utilisation_after": {},
            "blocked": [{"pod": f"a/b-{i}", "node": "n-0", "budgets": ["web-pdb"], "message": whatif.core.PDB_VIOLATION}
                        for i in range(blocked)],
            "attempts": 1, "headline": "", "profile": "default"}


def test_a_drain_page_is_green_only_when_every_evicted_pod_is_placed_and_stays_short(small, client):
    """Thousands of evicted pods are a row per node and per reason (each group's pods listed up to a limit); the
    banner warns with the number of stranded pods, and is green only when none is."""
    stranded = WhatIfRun.objects.create(cluster=small, kind=WhatIfRun.DRAIN, state=WhatIfRun.DONE,
                                        result=_drain_result(3000, 25, 2))
    page = client.get(f"/clusters/{small.name}/whatif/{stranded.pk}/").content.decode()
    assert 'class="verdict warn"' in page and "<b>27 pods stranded</b>: 25 evicted pods left Pending, 2 lost" in page
    assert page.count("<tr>") < 120 and len(page) < 400_000
    assert "… and 25 more: <a href=" in page and ">all 75</a>" in page   # 75 pods per node, 50 named
    assert page.count("Insufficient cpu.") == 1 and "<b>13</b>" in page and "<b>12</b>" in page
    placed = WhatIfRun.objects.create(cluster=small, kind=WhatIfRun.DRAIN, state=WhatIfRun.DONE,
                                      result=_drain_result(30, 0, 0))
    page = client.get(f"/clusters/{small.name}/whatif/{placed.pk}/").content.decode()
    assert 'class="verdict ok"' in page and "<b>Every evicted pod was placed</b>: 30 pods on 30 remaining" in page
    blocked = WhatIfRun.objects.create(cluster=small, kind=WhatIfRun.DRAIN, state=WhatIfRun.DONE,
                                       result=_drain_result(30, 0, 0, blocked=400))
    page = client.get(f"/clusters/{small.name}/whatif/{blocked.pk}/").content.decode()
    assert 'class="verdict warn"' in page and "<b>400 evictions blocked by a PodDisruptionBudget</b>" in page
    assert '<td class="mono">web-pdb</td><td class="num"><b>400</b></td>' in page and "… and 350 more: " in page


def _pods_listed(html: str) -> list:
    return re.findall(r'<td class="mono">(a/[\w-]+)</td>', html)


def test_every_pod_of_a_drain_is_reachable_from_its_short_page(small, client):
    """Each group cut on the drain's page links its full list, and so does a section whose groups are cut; the
    lists are paged, and every pod is on one of their pages."""
    result = _drain_result(3000, 120, 70)
    why = [f"0/41 nodes are available: {i} Insufficient cpu." for i in range(60)]
    for i, e in enumerate(e for e in result["evicted"] if e["pod"].startswith("a/s-")):
        e["why"] = why[i % 60]   # 60 reasons: 10 past the groups listed
    run = WhatIfRun.objects.create(cluster=small, kind=WhatIfRun.DRAIN, state=WhatIfRun.DONE, result=result)
    base = f"/clusters/{small.name}/whatif/{run.pk}"
    page = client.get(base + "/").content.decode()
    assert f'<a href="{base}/pods/placed/?key=m-00">all 75</a>' in page
    assert f'… and 10 more reasons: <a href="{base}/pods/stranded/">all 120 pods left Pending</a>' in page
    assert f'… and 20 more: <a href="{base}/pods/lost/">all 70</a>' in page
    group = client.get(f"{base}/pods/placed/?key=m-00").content.decode()
    assert _pods_listed(group) == [f"a/p-{i}-x" for i in range(0, 3000, 40)]   # 75, one page
    assert "page 1 of 1" in group and "was a/p-40 on n-0" in group
    seen, number = [], 1
    while True:   # the whole section, page after page, following the "next" link
        html = client.get(f"{base}/pods/placed/?page={number}").content.decode()
        seen += _pods_listed(html)
        if "next →" not in html:
            break
        number += 1
    assert number == 15 and sorted(seen) == sorted(f"a/p-{i}-x" for i in range(3000))
    stranded = client.get(f"{base}/pods/stranded/").content.decode()
    assert len(_pods_listed(stranded)) == 120 and why[59] in stranded   # the reason of each pod named
    assert len(_pods_listed(client.get(f"{base}/pods/lost/").content.decode())) == 70
    for bad in ("/pods/nope/", "/pods/placed/?key=ghost", "/pods/lost/?key=n-0"):
        assert client.get(base + bad).status_code == 404
    # evictions blocked by PodDisruptionBudgets: each budget's group and the budgets past those listed
    result = _drain_result(30, 0, 0, blocked=400)
    for i, b in enumerate(result["blocked"]):
        b["budgets"] = [f"pdb-{i % 60:02d}"]   # 60 budgets: 10 past the groups listed, each blocking 6 or 7
    run = WhatIfRun.objects.create(cluster=small, kind=WhatIfRun.DRAIN, state=WhatIfRun.DONE, result=result)
    base = f"/clusters/{small.name}/whatif/{run.pk}"
    page = client.get(base + "/").content.decode()
    assert f'… and 10 more budgets: <a href="{base}/pods/blocked/">all 400 blocked evictions</a>' in page
    group = client.get(f"{base}/pods/blocked/?key=pdb-07").content.decode()
    assert _pods_listed(group) == [f"a/b-{i}" for i in range(7, 400, 60)]
    seen = []
    for number in (1, 2):
        html = client.get(f"{base}/pods/blocked/?page={number}").content.decode()
        assert "<th>budget</th>" in html and f"page {number} of 2" in html
        seen += _pods_listed(html)
    assert sorted(seen) == sorted(f"a/b-{i}" for i in range(400))
    capacity = WhatIfRun.objects.create(cluster=small, kind=WhatIfRun.CAPACITY, state=WhatIfRun.DONE, result={})
    assert client.get(f"/clusters/{small.name}/whatif/{capacity.pk}/pods/placed/").status_code == 404


def test_drain_and_add_nodes_answer_and_their_pages_render(small, client):
    drain = ask(small, "drain", nodes="n-0 n-1")
    assert drain.result["nodes"] == ["n-0", "n-1"]
    assert {e["pod"] for e in drain.result["evicted"]} == {
        p.key for p in Pod.objects.filter(cluster=small, node_name__in=["n-0", "n-1"])}
    page = client.get(f"/clusters/{small.name}/whatif/{drain.pk}/").content.decode()
    assert "Where the evicted pods went" in page and "lost (no controller)" in page

    add = ask(small, "add-nodes", like="n-0", count=2, targets="default/also-big")
    assert add.result["added"] == ["n-0-whatif-1", "n-0-whatif-2"]
    assert add.result["smallest_count"] is None  # 32 cpu never fits a 4-cpu node
    assert {p["pod"] for p in add.result["still_pending"]} == {"default/too-big", "default/also-big",
                                                                "default/wants-ssd"}
    traced = [p for p in add.result["still_pending"] if p.get("trace")][0]
    trace_page = client.get(f"/clusters/{small.name}/whatif/{add.pk}/traces/{traced['trace']}/")
    assert trace_page.status_code == 200
    assert b'id="filter-matrix"' in trace_page.content and b"What would fix it" in trace_page.content


def test_add_nodes_shows_the_smallest_counts_placement_and_leaves_out_pods_no_copy_takes(small, client, api):
    """A blank target leaves out the pods an empty copy of the node does not take (too big, a selector it
    lacks), saying why, so the smallest count is the others'; its placement is shown, every chosen pod placed."""
    for i in range(8):
        body = {"metadata": {"name": f"wide-{i}", "namespace": "default"}, "spec": {"containers": [
            {"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "3"}}}]}}
        assert api.post(f"/api/clusters/{small.name}/pods/", body, format="json").status_code == 201
    add = ask(small, "add-nodes", like="n-0", count=1)
    assert {p["pod"] for p in add.result["left_out"]} == {"default/too-big", "default/also-big", "default/wants-ssd"}
    assert add.result["targets"] == 8 and add.result["smallest_count"] == 3
    placed = add.result["at_smallest"]["placed"]
    assert len(placed) == 8 and all(p["node"] for p in placed)
    assert {"n-0-whatif-1", "n-0-whatif-2", "n-0-whatif-3"} <= {p["node"] for p in placed}
    page = client.get(f"/clusters/{small.name}/whatif/{add.pk}/").content.decode()
    assert 'id="add-smallest-placement"' in page and "With 3 nodes, the smallest count" in page
    assert 'id="add-left-out"' in page and "NodeResourcesFit: Insufficient cpu" in page
    assert "8 chosen pods (3 left out)" in page


@pytest.mark.parametrize("data, field, message", [
    ({"kind": "capacity", "manifest": "kind: Pod\nspec: {containers: [{name: c, resources: {requests: {cpu: x}}}]}"},
     "manifest", "spec.containers[0].resources.requests.cpu"),
    ({"kind": "capacity"}, "manifest", "give a Pod or workload manifest"),
    ({"kind": "capacity", "like": "default/nope"}, "like", "no pod default/nope in cluster small"),
    ({"kind": "capacity", "manifest": WEB, "max_copies": 10 ** 9}, "max_copies", "must be between 1 and 10000"),
    ({"kind": "drain", "nodes": ["n-0", "ghost"]}, "nodes", "no node ghost in cluster small"),
    ({"kind": "drain", "selector": "a=b=c"}, "selector", "found '=', expected: ',' or 'end of string'"),
    ({"kind": "add-nodes", "manifest": {"kind": "Pod"}}, "manifest", "kind Pod: expected a Node"),
    ({"kind": "add-nodes", "like": "n-0", "count": -1}, "count", "must be between 0 and 1000"),
])
def test_a_bad_question_gets_the_same_field_error_from_the_api_and_the_page(small, client, api, data, field, message):
    r = api.post(f"/api/clusters/{small.name}/whatif/", data, format="json")
    assert r.status_code == 400 and message in " ".join(r.json()[field]), r.content
    form = {k: (json.dumps(v) if isinstance(v, dict) else " ".join(v) if isinstance(v, list) else v)
            for k, v in data.items()}
    page = client.post(f"/clusters/{small.name}/whatif/", form).content.decode()
    assert message in page.replace("&quot;", '"').replace("&#x27;", "'")
    assert not WhatIfRun.objects.exists()


def test_viewers_read_editors_ask_and_a_restricted_cluster_stays_hidden(small):
    run = ask(small, "drain", nodes="n-0")
    viewer, editor, outsider = make_user("vi", "viewer"), make_user("ed", "editor"), make_user("out", "editor")
    assert api_client(viewer).post(f"/api/clusters/{small.name}/whatif/", {"kind": "drain", "nodes": ["n-0"]},
                                   format="json").status_code == 403
    assert page_client(viewer).post(f"/clusters/{small.name}/whatif/", {"kind": "drain", "nodes": "n-0"}
                                    ).status_code == 403
    assert api_client(viewer).get(f"/api/clusters/{small.name}/whatif/{run.pk}/").json()["state"] == "done"
    assert page_client(editor).get(f"/clusters/{small.name}/whatif/").status_code == 200
    Cluster.objects.filter(pk=small.pk).update(restricted=True)
    for url in (f"/clusters/{small.name}/whatif/", f"/clusters/{small.name}/whatif/{run.pk}/",
                f"/clusters/{small.name}/whatif/{run.pk}/status/", f"/clusters/{small.name}/whatif/{run.pk}/traces/1/"):
        assert page_client(outsider).get(url).status_code == 404, url
    for url in (f"/api/clusters/{small.name}/whatif/", f"/api/clusters/{small.name}/whatif/{run.pk}/"):
        assert api_client(outsider).get(url).status_code == 404, url


def test_a_question_asked_through_the_api_runs_in_a_celery_worker(small, api, worker_factory):
    worker_factory()
    r = api.post(f"/api/clusters/{small.name}/whatif/", {"kind": "capacity", "manifest": WEB, "max_copies": 5},
                 format="json")
    assert r.status_code == 202 and r.json()["state"] == "queued"
    url = f"/api/clusters/{small.name}/whatif/{r.json()['id']}/"
    done = wait_for(lambda: (lambda j: j if j["state"] in ("done", "failed") else None)(api.get(url).json()), 60,
                    0.2, "the what-if task")
    assert done["state"] == "done" and done["result"]["fit"] == 5 and done["result"]["limited"]
    trace = api.get(url + "traces/1/").json()
    assert trace["result"] == "scheduled" and trace["pod_name"] == "web-whatif-1"


def test_the_command_prints_the_answer_first(small, tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(WEB))
    out = StringIO()
    call_command("whatif", "capacity", "--cluster", small.name, str(pod), stdout=out)
    assert out.getvalue().startswith("16 copies fit; the next one does not:\n")
    out = StringIO()
    call_command("whatif", "drain", "--cluster", small.name, "n-0", "--json", stdout=out)
    assert json.loads(out.getvalue())["nodes"] == ["n-0"]
    with pytest.raises(CommandError, match="no node ghost in cluster small"):
        call_command("whatif", "drain", "--cluster", small.name, "ghost")
    with pytest.raises(CommandError, match="no saved profile version 'nope'"):
        call_command("whatif", "drain", "--cluster", small.name, "n-0", "--profile", "nope")


@pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed")
def test_the_three_questions_in_a_browser(server, tmp_path):  # noqa: F811
    """`make run`'s demo: each form asked by an admin in Chromium, the answer page, a decision trace."""
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser).new_page()
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(server + "/clusters/demo/whatif/")
        page.fill("textarea[name=manifest]", yaml.safe_dump(
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
             "spec": {"template": {"metadata": {"labels": {"app": "api"}}, "spec": {"containers": [
                 {"name": "c", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]}}}}))
        _shot(page, tmp_path, "whatif")
        page.click("#whatif-ask")
        expect(page.locator("#whatif-answer")).to_contain_text("copies fit; the next one does not", timeout=60000)
        expect(page.locator("#capacity-1")).to_contain_text("Insufficient cpu")
        _shot(page, tmp_path, "whatif-capacity")
        page.locator("#capacity-1 a", has_text="decision trace").click()
        expect(page.locator("#filter-matrix")).to_contain_text("NodeResourcesFit")
        expect(page.locator("#suggestions")).to_be_visible()
        _shot(page, tmp_path, "whatif-trace")

        page.goto(server + "/clusters/demo/whatif/?q=drain")
        page.fill("input[name=nodes]", "general-01 general-02")
        page.click("#whatif-ask")
        expect(page.locator("#drain-evicted")).to_contain_text("general-01", timeout=60000)
        # base-036 ran on general-01: re-created by its ReplicaSet, whose name its replacement's carries
        rs = next(p["metadata"]["ownerReferences"][0]["name"] for p in demo_scenario()["pods"]
                  if p["metadata"]["name"] == "base-036")
        expect(page.locator("#drain-evicted")).to_contain_text(
            re.compile(rf"prod/{rs}-whatif-\d+ \(was prod/base-036 on general-01\)"))
        expect(page.locator("#whatif-answer")).to_have_class("verdict ok")
        expect(page.locator("#whatif-answer")).to_contain_text("Every evicted pod was placed")
        expect(page.locator("#drain-utilisation")).to_be_visible()
        _shot(page, tmp_path, "whatif-drain")

        # thirty of the 36 general nodes: some evicted pods find no node (how many depends on what the demo's loop
        # has bound by then); the banner warns, the page groups them
        page.goto(server + "/clusters/demo/whatif/?q=drain")
        page.fill("input[name=nodes]", " ".join(f"general-{i:02d}" for i in range(1, 31)))
        page.click("#whatif-ask")
        expect(page.locator("#whatif-answer")).to_contain_text(re.compile(r"\d+ pods? stranded"), timeout=60000)
        expect(page.locator("#whatif-answer")).to_have_class("verdict warn")
        stranded = page.locator("#drain-stranded tbody tr")
        expect(stranded.first).to_contain_text("0/53 nodes are available")
        stranded.first.locator("summary").click()
        expect(stranded.first.locator("li").first).to_be_visible()
        assert page.locator("#drain-placed tbody tr").count() < 30   # a row per receiving node, not per pod
        _shot(page, tmp_path, "whatif-drain-stranded")
        # every stranded pod on one paged list (the run page links it when its groups are cut)
        page.goto(page.url.split("?")[0] + "pods/stranded/")
        expect(page.locator("#drain-pods thead")).to_contain_text("why (kube's FitError)")
        expect(page.locator("#drain-pods tbody tr").first).to_contain_text("0/53 nodes are available")
        _shot(page, tmp_path, "whatif-drain-pods")

        page.goto(server + "/clusters/demo/whatif/?q=add-nodes")
        page.fill("textarea[name=manifest]", yaml.safe_dump(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big", "labels": {
                "kubernetes.io/hostname": "big", "topology.kubernetes.io/zone": "zone-a"}},
             "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}))
        page.fill("input[name=count]", "2")
        page.fill("input[name=targets]", "data/analytics-huge")
        page.click("#whatif-ask")
        expect(page.locator("#add-smallest")).to_have_text("1", timeout=60000)
        expect(page.locator("#add-fit")).to_contain_text("data/analytics-huge")
        expect(page.locator("#add-smallest-placement")).to_contain_text("data/analytics-huge")
        # no pods chosen: those such a node never takes are left out, so the answer is a count, not "none"
        page.goto(server + "/clusters/demo/whatif/?q=add-nodes")
        page.fill("textarea[name=manifest]", yaml.safe_dump(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big", "labels": {
                "kubernetes.io/hostname": "big", "topology.kubernetes.io/zone": "zone-a"}},
             "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}))
        page.fill("input[name=count]", "1")
        page.click("#whatif-ask")
        expect(page.locator("#add-left-out")).to_contain_text("ml/trainer-8gpu", timeout=60000)
        expect(page.locator("#add-left-out")).to_contain_text("data/postgres-nvme")
        expect(page.locator("#add-smallest")).to_have_text(re.compile(r"^\d+$"))
        _shot(page, tmp_path, "whatif-add-nodes")
        page.goto(server + "/clusters/demo/whatif/")
        expect(page.locator("#whatif-runs tbody tr")).to_have_count(5)   # capacity, two drains, two add-nodes
        browser.close()


def test_what_if_runs_call_extenders_only_as_the_deployment_allows(small, settings):
    """A saved version naming an extender outside SCHEDSCOPE_EXTENDER_ALLOW (stored before the allow list was set):
    a what-if run with it never reaches that URL; the attempt fails with the policy's refusal."""
    from dashboard.models import SchedulerProfile
    from dashboard.profiles.models import ProfileVersion
    settings.SCHEDSCOPE = dict(settings.SCHEDSCOPE, EXTENDER_ALLOW=("http://127.0.0.1:9/allowed",))
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": [{"urlPrefix": "http://127.0.0.1:9/elsewhere", "filterVerb": "filter"}]}
    profile = SchedulerProfile.objects.create(name="with-extender", document=doc)
    version = ProfileVersion.objects.create(profile=profile, number=1, document=doc)
    run = whatif.create(small, "capacity", whatif.question(small, "capacity", {"manifest": WEB}), version=version)
    whatif.execute(run.pk)
    run.refresh_from_db()
    assert run.state == WhatIfRun.DONE and run.result["fit"] == 0
    assert "the URL is not under an allowed extender URL prefix" in run.result["stop"]["message"]


def test_gpu_questions_on_the_demo_count_claims_and_devices(api):
    """Copies of a pod asking a GPU through a claim template get claims of their own (7 GPUs of the demo's 10 are
    free); nodes added like a GPU node bring its ResourceSlice, so the pods that wait for devices fit. The pods
    are created while the loop is stopped: it makes their claims when it starts, as kube's controller does."""
    demo = load_cluster(api, demo_scenario(), steps=80)
    r = ask(demo, "capacity", like="ml/dra-infer-0").result
    assert (r["fit"], r["per_node"]) == (7, {"dra-gpu-1": 3, "dra-gpu-2": 3, "dra-gpu-3": 1})
    assert r["stop"]["message"].startswith("0/53 nodes are available: 44 cannot allocate all claims, ")
    spec = {k: v for k, v in Pod.objects.get(cluster=demo, namespace="ml", name="dra-infer-0").raw["spec"].items()
            if k != "nodeName"}
    for i in range(9):
        body = dict(WEB, metadata={"name": f"gpu-{i}", "namespace": "ml"}, spec=spec)
        assert api.post(f"/api/clusters/{demo.name}/pods/", {"manifest": body}, format="json").status_code == 201
    assert Runner(demo.id, steps=40).run()
    waiting = sorted(f"ml/{p.name}" for p in Pod.objects.filter(cluster=demo, name__startswith="gpu-", node_name=""))
    assert len(waiting) == 2   # 7 free GPUs for 9 pods
    r = ask(demo, "add-nodes", like="dra-gpu-1", count=1, targets=waiting).result
    assert sorted(p["pod"] for p in r["now_fit"]) == waiting
    assert {p["node"] for p in r["now_fit"]} == {"dra-gpu-1-whatif-1"} and r["smallest_count"] == 1
