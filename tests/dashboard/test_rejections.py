"""The pending list as structure: a pod's rejections as (plugin, reason, nodes) chips, groups keyed by the
(plugin, reason) pairs without counts, the group filter (PostgreSQL here, SQLite in a subprocess), and the page
reading count, rows and pager from one snapshot."""
from __future__ import annotations

import json
import re

import pytest
from django.db import connection

from dashboard.models import Pod, SchedulingCycle
from dashboard.queryforms import PendingQuery
from dashboard.services import queries, rejections
from dashboard.services.rejections import Chip, chips, group_key, short_reason

from .conftest import load_cluster, run_on_sqlite, small_scenario

FIT, TAINT, AFFINITY = "NodeResourcesFit", "TaintToleration", "NodeAffinity"
SELECTOR = "node(s) didn't match Pod's node affinity/selector"
GPU_TAINT = "node(s) had untolerated taint {gpu: true}"


def test_short_reasons():
    assert short_reason("Insufficient cpu") == "Insufficient cpu"
    assert short_reason("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }") == \
        "node-role.kubernetes.io/control-plane"
    assert short_reason(GPU_TAINT) == "gpu=true"
    assert short_reason("node(s) had untolerated taint(s)") == "had untolerated taint(s)"
    assert short_reason(SELECTOR) == "didn't match Pod's node affinity/selector"
    assert short_reason("Too many pods") == "Too many pods"


def matrix(final, stopped, statuses, stop_plugins, prefilter=None):
    return {"nodes": [f"n-{i}" for i in range(len(final))], "final": final, "stopped": stopped,
            "statuses": [{"code": "Unschedulable", "reasons": r} for r in statuses], "stop_plugins": stop_plugins,
            "prefilter": prefilter or {"plugins": {}}}


def test_chips_count_each_nodes_reasons_under_the_plugin_that_stopped_it():
    # node 0 lacks cpu and memory (one status, two reasons), 1 lacks memory, 2 is tainted, 3 passes
    m = matrix(final=[1, 2, 3, 0], stopped=[0, 0, 1, -1],
               statuses=[["Insufficient cpu", "Insufficient memory"], ["Insufficient memory"], [GPU_TAINT]],
               stop_plugins=[FIT, TAINT])
    assert chips(m) == [Chip(FIT, "Insufficient memory", 2), Chip(FIT, "Insufficient cpu", 1),
                        Chip(TAINT, GPU_TAINT, 1)]
    assert chips({}) == [] and chips(matrix([0, 0], [-1, -1], [], [])) == []


def test_nodes_a_prefilter_result_left_out_count_under_that_plugin():
    m = matrix(final=[1, 1, 0], stopped=[-1, -1, -1], statuses=[["node is filtered out by the prefilter result"]],
               stop_plugins=[], prefilter={"plugins": {AFFINITY: {"node_names": ["n-2"]}, FIT: {"node_names": None}}})
    assert chips(m) == [Chip(AFFINITY, "node is filtered out by the prefilter result", 2)]


def test_group_key_leaves_counts_out():
    assert group_key({FIT: 36}, {"Insufficient memory": 36}) == group_key({FIT: 37}, {"Insufficient memory": 37})
    assert group_key({FIT: 3}, {"Insufficient memory": 3}) != group_key({FIT: 3}, {"Insufficient cpu": 3})
    pairs = [(FIT, "Insufficient cpu"), (TAINT, GPU_TAINT)]
    parsed = PendingQuery({"group": rejections.group_param(reversed(pairs))})
    assert parsed.is_valid() and rejections.key_of_pairs(parsed.cleaned_data["group"]) == \
        group_key({FIT: 1, TAINT: 2}, {GPU_TAINT: 2, "Insufficient cpu": 1})


@pytest.mark.parametrize("text", ["x", "[]", '[["a"]]', '[["a", 1]]', '{"a": "b"}', '[["a", "b\\u0000"]]'])
def test_a_group_parameter_that_is_not_pairs_is_refused(text):
    assert not PendingQuery({"group": text}).is_valid()


def zoned_scenario() -> dict:
    """small_scenario plus two pods that no node fits, each pinned to a zone: the same (plugin, reason) pairs
    (the gpu taint, the zone selector, cpu) on different numbers of nodes; at 1.30, whose taint reason names the
    taint (1.36's says "untolerated taint(s)")."""
    s = small_scenario(pending_web=0)
    s["name"], s["kubeVersion"] = "zoned", "1.30"
    big = next(p for p in s["pending"] if p["metadata"]["name"] == "too-big")
    for zone in ("a", "b"):
        spec = dict(big["spec"], nodeSelector={"topology.kubernetes.io/zone": zone})
        s["pending"].append({"metadata": {"name": f"big-in-{zone}", "namespace": "default", "uid": f"big-in-{zone}"},
                             "spec": spec})
    return s


def fit_error_histogram(message: str) -> dict:
    """{reason: nodes} of kube's FitError text (its Filter part)."""
    body = message.split(" nodes are available: ", 1)[1].split(". preemption:", 1)[0].rstrip(".")
    return {m["reason"]: int(m["n"]) for m in re.finditer(r"(?P<n>\d+) (?P<reason>.+?)(?:, (?=\d)|$)", body)}


@pytest.mark.django_db(transaction=True)
def test_chips_groups_and_the_group_filter_of_a_loaded_cluster(api, django_assert_num_queries):
    cluster = load_cluster(api, zoned_scenario(), steps=20)
    latest = {c.pod_name: c for c in SchedulingCycle.objects.filter(
        cluster=cluster, seq__in=Pod.objects.filter(cluster=cluster, node_name="").values("last_cycle"))}
    a, b = chips(latest["big-in-a"].matrix), chips(latest["big-in-b"].matrix)
    # zone a: n-1, n-3 lack cpu, gpu-0 is tainted, zone b's three nodes do not match; zone b: the other way round
    assert sorted(a, key=lambda c: c.plugin) == [Chip(AFFINITY, SELECTOR, 3), Chip(FIT, "Insufficient cpu", 2),
                                                  Chip(TAINT, GPU_TAINT, 1)]
    assert sorted(b, key=lambda c: c.plugin) == [Chip(AFFINITY, SELECTOR, 2), Chip(FIT, "Insufficient cpu", 3),
                                                  Chip(TAINT, GPU_TAINT, 1)]
    for c in latest.values():   # the chips add up to kube's message, reason by reason
        per_reason = {}
        for chip in chips(c.matrix):
            per_reason[chip.reason] = per_reason.get(chip.reason, 0) + chip.nodes
        assert per_reason == fit_error_histogram(c.message), c.message

    seqs = [c.seq for c in latest.values()]
    assert rejections.chips_of_cycles(cluster, seqs)[latest["big-in-a"].seq] == a
    with django_assert_num_queries(1):   # cached: no matrix read again
        assert rejections.chips_of_cycles(cluster, seqs)[latest["big-in-b"].seq] == b

    groups = rejections.pending_groups(cluster)
    assert groups["total"] == 5 and groups["more"] == 0
    assert [g["n"] for g in groups["groups"]] == [2, 2, 1]   # too-big and also-big, the zoned two, wants-ssd
    zoned = next(g for g in groups["groups"] if len(g["chips"]) == 3)
    assert [(c.plugin, c.reason, c.nodes) for c in zoned["chips"]] == [
        (AFFINITY, SELECTOR, 0), (FIT, "Insufficient cpu", 0), (TAINT, GPU_TAINT, 0)]
    too_big = next(g for g in groups["groups"] if [c.plugin for c in g["chips"]] == [FIT, TAINT])
    assert too_big["n"] == 2

    def members(param):
        pairs = json.loads(param)
        return sorted(p.name for p in queries.pending_pods(cluster, group=pairs).object_list)
    assert members(zoned["param"]) == ["big-in-a", "big-in-b"]
    assert members(too_big["param"]) == ["also-big", "too-big"]
    # a subset of a group's pairs is another group, not a part of it
    assert members(json.dumps([[FIT, "Insufficient cpu"]])) == []


@pytest.mark.django_db(transaction=True)
def test_the_pending_page_shows_chips_groups_and_agreeing_counts(api, client):
    cluster = load_cluster(api, zoned_scenario(), steps=20)
    body = client.get("/clusters/zoned/pending/").content.decode()
    assert '<b>NodeResourcesFit</b> · Insufficient cpu · 3' in body and "<b>TaintToleration</b> · gpu=true · 1" in body
    assert "kube's message" in body
    assert "0/6 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 2 Insufficient cpu, 3 node" in body
    pending = Pod.objects.filter(cluster=cluster, node_name="").count()
    assert f'id="pending-count" data-resync>{pending}<' in body and "page 1 of 1" in body
    assert body.count("<tr data-pod=") == pending
    zoned = next(g for g in rejections.pending_groups(cluster)["groups"] if len(g["chips"]) == 3)
    r = client.get("/clusters/zoned/pending/", {"group": zoned["param"]})
    body = r.content.decode()
    assert body.count("<tr data-pod=") == 2 and 'data-resync>2<' in body and "group: NodeAffinity" in body
    assert client.get("/clusters/zoned/pending/", {"group": "[1]"}).status_code == 400
    assert "<b>NodeAffinity</b> · didn&#x27;t match Pod&#x27;s node affinity/selector" in \
        client.get("/clusters/zoned/").content.decode()


def test_the_group_filter_on_sqlite(tmp_path):
    if connection.vendor == "sqlite":
        pytest.skip("this is the SQLite run")
    run_on_sqlite(tmp_path, [f"{__file__}::test_chips_groups_and_the_group_filter_of_a_loaded_cluster"])
