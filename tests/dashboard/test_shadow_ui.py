"""Shadow mode on a simulated cluster: the loop binds nothing itself; each binding someone else makes (manual
bindings here) is compared with the active profile's choice, recorded (ShadowDecision with the shadow's cycle) and
shown on /clusters/<name>/shadow/ (agreement overall and over time, every disagreement, paged)."""
from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from dashboard.models import Cluster, Pod, SchedulingCycle, ShadowDecision
from dashboard.services import shadowview
from dashboard.services.retention import prune

from .conftest import api_client, page_client, small_scenario, wait_for
from .test_manual_bind import LoopThread, binding_url, to_node

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def shadow_cluster(api):
    assert api.post("/api/clusters/", {"name": "small", "tie_break": "name"}, format="json").status_code == 201
    assert api.post("/api/clusters/small/scenario/", {"scenario": small_scenario()}, format="json").status_code == 201
    r = api.patch("/api/clusters/small/", {"mode": "shadow"}, format="json")
    assert r.status_code == 200 and r.json()["mode"] == "shadow"
    cluster = Cluster.objects.get(name="small")
    loop = LoopThread(cluster)
    yield cluster
    loop.stop()


def bind(user, pod: str, node: str) -> dict:
    r = api_client(user).post(binding_url(pod), to_node(node), format="json")
    assert r.status_code == 201, r.content
    return r.json()


def test_other_schedulers_bindings_are_compared_and_recorded(shadow_cluster, api, editor_user, client):
    assert api.post("/api/clusters/small/step/", {"n": 5}, format="json").status_code == 202
    bind(editor_user, "default/web-0", "n-0")        # every n-* node is empty: a tie, which "name" breaks to n-0
    bind(editor_user, "default/web-1", "gpu-0")      # tainted: the profile's TaintToleration rejects it
    bind(editor_user, "default/web-2", "n-0")        # n-0 now holds web-0: an empty node scores higher
    bind(editor_user, "default/too-big", "n-1")      # 64 cpu: the profile finds no node at all

    rows = {d.pod_name: d for d in ShadowDecision.objects.filter(cluster=shadow_cluster)}
    assert set(rows) == {"web-0", "web-1", "web-2", "too-big"}
    agree = rows["web-0"]
    assert (agree.actual_node, agree.shadow_node, agree.agree, agree.within_ties) == ("n-0", "n-0", True, True)
    assert agree.scheduler == "default-scheduler" and agree.profile == "default-scheduler"
    tainted = rows["web-1"]
    assert (tainted.shadow_node, tainted.agree, tainted.actual_feasible) == ("n-1", False, False)
    assert tainted.actual_reasons == ["node(s) had untolerated taint(s)"] and tainted.actual_score is None
    scored = rows["web-2"]
    assert scored.shadow_node not in ("", "n-0") and scored.actual_feasible and not scored.within_ties
    assert scored.shadow_score > scored.actual_score
    none = rows["too-big"]
    assert none.shadow_node == "" and not none.agree and none.message.startswith("0/6 nodes are available")
    assert none.num_feasible == 0

    # the only cycles are the shadow's, one per comparison, each linked from its decision: the loop bound nothing
    cycles = {c.seq: c for c in SchedulingCycle.objects.filter(cluster=shadow_cluster)}
    assert sorted(cycles) == sorted(d.cycle_seq for d in rows.values())
    for d in rows.values():
        c = cycles[d.cycle_seq]
        assert (c.pod_name, c.node) == (d.pod_name, d.shadow_node)
    assert cycles[none.cycle_seq].result == "unschedulable"
    assert Pod.objects.filter(cluster=shadow_cluster, node_name="").count() == 15 - 4

    page = client.get("/clusters/small/shadow/").content.decode()
    assert re.search(r'id="shadow-decisions">4<', page) and re.search(r'id="shadow-agreement">25.0 %<', page)
    assert re.search(r'id="shadow-infeasible">2<', page)  # gpu-0, and n-1 for too-big
    table = re.search(r'<table id="disagreements">.*?</table>', page, re.S).group(0)
    assert table.count("<tr>") == 1 + 3 and "web-0" not in table
    assert "the profile&#x27;s Filter plugins reject gpu-0: node(s) had untolerated taint(s)" in table
    assert f"{scored.shadow_node} scores {scored.shadow_score}, n-0 scores {scored.actual_score}" in table
    assert "the profile finds no node: 0/6 nodes are available" in table
    assert f'/clusters/small/pods/default/web-1/?cycle={tainted.cycle_seq}#decision' in table
    chart = json.loads(re.search(r'<script id="shadow-chart-data" type="application/json">(.*?)</script>',
                                 page, re.S).group(1))
    assert chart["unit"] == "minute" and sum(chart["decisions"]) == 4 and sum(chart["agreed"]) == 1
    assert chart["rate"][-1] is not None

    pod_page = client.get(f"/clusters/small/pods/default/web-1/?cycle={tainted.cycle_seq}").content.decode()
    note = re.search(r'<p class="shadow-note".*?</p>', pod_page, re.S).group(0)
    assert "bound to <b>gpu-0</b>" in note and "would have chosen <b>n-1</b>" in note
    assert f"Decision trace · cycle {tainted.cycle_seq}" in pod_page


def test_scheduler_mode_compares_nothing_until_the_running_loop_switches_to_shadow(api, editor_user):
    assert api.post("/api/clusters/", {"name": "small", "tie_break": "name"}, format="json").status_code == 201
    assert api.post("/api/clusters/small/scenario/", {"scenario": small_scenario()}, format="json").status_code == 201
    cluster = Cluster.objects.get(name="small")
    loop = LoopThread(cluster)
    try:
        bind(editor_user, "default/web-0", "gpu-0")
        assert not ShadowDecision.objects.exists()
        text = page_client(editor_user).get("/clusters/small/shadow/").content.decode()
        assert "runs in scheduler mode" in text and "No disagreement recorded." in text
        assert api.patch("/api/clusters/small/", {"mode": "shadow"}, format="json").status_code == 200
        wait_for(lambda: loop.runner.engine.shadow is not None, 30, what="the loop to reload in shadow mode")
        bind(editor_user, "default/web-1", "gpu-0")
    finally:
        loop.stop()
    decision = ShadowDecision.objects.get(cluster=cluster)
    assert (decision.pod_name, decision.actual_node, decision.agree) == ("web-1", "gpu-0", False)
    assert "runs in shadow mode" in page_client(editor_user).get("/clusters/small/shadow/").content.decode()


def test_disagreements_are_paged_and_bucketed_by_hour_over_long_spans(api, client):
    assert api.post("/api/clusters/", {"name": "big", "mode": "shadow"}, format="json").status_code == 201
    cluster = Cluster.objects.get(name="big")
    now = timezone.now()
    ShadowDecision.objects.bulk_create([
        ShadowDecision(cluster=cluster, time=now - timedelta(hours=i), pod_uid=f"u{i}", pod_namespace="ns",
                       pod_name=f"p{i:02}", scheduler="default-scheduler", profile="default-scheduler",
                       actual_node="a", shadow_node="b" if i % 3 else "a", agree=i % 3 == 0,
                       within_ties=i % 3 == 0, actual_feasible=True, actual_score=10, shadow_score=20)
        for i in range(90)])
    stats = shadowview.summary(cluster)
    assert (stats["decisions"], stats["agreed"], stats["agreement_rate"]) == (90, 30, 33.3)
    chart = shadowview.timeline(cluster, stats["first"], stats["last"])
    assert chart["unit"] == "hour" and len(chart["buckets"]) == 90 and chart["rate"].count(100.0) == 30
    first = client.get("/clusters/big/shadow/").content.decode()
    assert "page 1 of 2" in first and first.count('<td class="t">') == shadowview.PER_PAGE
    assert "p01" in first and "p00" not in first   # newest first; p00 agreed
    second = client.get("/clusters/big/shadow/?page=2").content.decode()
    assert second.count('<td class="t">') == 60 - shadowview.PER_PAGE and "p89" in second
    prune(cluster.id, days=1.49, max_cycles=0)        # retention: decisions older than ~35.8 h go
    assert ShadowDecision.objects.filter(cluster=cluster).count() == 36
