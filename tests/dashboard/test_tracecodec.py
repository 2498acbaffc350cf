"""tracecodec.trace_fields (what the recorder stores, straight from the CycleTrace) gives exactly what the
reference encoding cycle_fields(trace.to_dict()) gives: on every golden scenario's traces (core and config, trace mode and
kube mode) and through the scheduling loop on the loop scenarios, with the score arrays and lazy rejected
statuses still unbuilt and after to_dict() built them; and what the recorder hands to on_commit."""
from __future__ import annotations

import glob
import json
import os
from types import SimpleNamespace

import pytest
from django.db import connection

from dashboard import fields as fields_module
from dashboard.models import Cluster, NodeList, SchedulingCycle
from dashboard.packing import pack_json, unpack_json
from dashboard.services.broadcast import cycle_summary
from dashboard.services.engine import FAILED_CODES, Engine
from dashboard.services.recorder import Recorder, _Emitted
from dashboard.services.tracecodec import COLUMNS, NOT_RUN, PASS, NodeLists, expand, trace_fields
from scheduler_core.lazy import LazyDict
from scheduler_core.run import LoopRun
from scheduler_core.scenario import load_scenario, scenario_from_data
from scheduler_core.simulate import Simulation
from scheduler_core.trace import CallbackSink

from .conftest import small_scenario
from .cycle_reference import cycle_fields

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
GOLDEN = sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "core", "*.scenario.json")) +
                glob.glob(os.path.join(ROOT, "tests", "golden", "config", "*.scenario.json")))
LOOP = sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "loop", "*.scenario.json")))


def _name(path):
    return os.path.basename(path).split(".")[0]


def stored(fields: dict) -> str:
    """The row as the recorder stores it (JSON columns as text, key order kept)."""
    return json.dumps(fields, default=str)


def check(traces, at_emit=None):
    """trace_fields before and after to_dict() equals cycle_fields(to_dict()), byte for byte."""
    assert traces
    for i, tr in enumerate(traces):
        new = trace_fields(tr)
        if at_emit is not None:
            assert stored(new) == at_emit[i], "the trace changed after it was emitted"
        old = cycle_fields(tr.to_dict())
        assert new == old
        assert stored(new) == stored(old)
        assert stored(trace_fields(tr)) == stored(old)  # from the dicts to_dict() built


@pytest.mark.parametrize("trace_mode", [True, False], ids=["trace", "kube"])
@pytest.mark.parametrize("path", GOLDEN, ids=_name)
def test_golden_scenarios(path, trace_mode):
    try:
        sim = Simulation(load_scenario(path), tie_break="name", trace_all_filters=trace_mode)
    except Exception:  # a config the golden file expects to be rejected
        pytest.skip("configuration rejected")
    check(list(sim.run()))


@pytest.mark.parametrize("path", LOOP, ids=_name)
def test_loop_scenarios(path):
    """Encoded when emitted and again after the run: the loop does not change a trace after emitting it."""
    traces, at_emit = [], []

    def keep(tr):
        traces.append(tr)
        at_emit.append(stored(trace_fields(tr)))

    LoopRun(load_scenario(path), tie_break="name", trace_sink=CallbackSink(keep)).run()
    check(traces, at_emit)


def _engine_record(tr, attempt: int, suggestions: list) -> dict:
    """The to_dict() record the dashboard engine completes: its attempt count, result, error, suggestions."""
    d = tr.to_dict()
    d["attempt"] = attempt
    if tr.status_code:
        d["result"] = "unschedulable" if tr.status_code in FAILED_CODES else "error"
        d["bound_node"] = None
        if tr.bind_error and not d.get("error"):
            d["error"] = tr.bind_error
        if d["result"] == "unschedulable" and tr.unschedulable:
            d["suggestions"] = suggestions
    return d


@pytest.mark.parametrize("path", GOLDEN[::4], ids=_name)
def test_overrides_match_the_engine_record(path):
    """A trace queued with the engine's overrides (record_trace) is stored as that completed record."""
    try:
        traces = list(Simulation(load_scenario(path), tie_break="name", trace_all_filters=True).run())
    except Exception:
        pytest.skip("configuration rejected")
    suggestions = [{"kind": "remove-taint", "node": "n1"}]
    engine = SimpleNamespace(_suggest=lambda tr, attempt: (suggestions, None))
    for tr in traces:
        over = Engine._overrides(engine, tr, tr.attempt + 3)
        assert _Emitted(1, tr, over).encode() == cycle_fields(_engine_record(tr, tr.attempt + 3, suggestions))


def test_lazy_parts_are_not_built():
    """Encoding neither builds nor stores the lazy rejected statuses and visited nodes, nor turns the score
    arrays into dicts."""
    unbuilt = []
    for path in GOLDEN:
        try:
            sim = Simulation(load_scenario(path), tie_break="name", trace_all_filters=False)
        except Exception:
            continue
        for tr in sim.run():
            if isinstance(tr.node_statuses, LazyDict) and tr.node_statuses._data is None:
                unbuilt.append(tr)
    assert unbuilt
    assert any(tr._score_arrays is not None for tr in unbuilt)
    for tr in unbuilt:
        arrays = tr._score_arrays
        fields = trace_fields(tr)
        assert tr.node_statuses._data is None and tr.evaluated_nodes._data is None
        assert tr._score_arrays is arrays
        assert fields["failing_plugins"]


@pytest.mark.django_db(transaction=True)
def test_emitted_traces_reach_on_commit_as_their_summary():
    """A broadcaster's cycle_summary of an emitted trace is what it was for the to_dict() record."""
    committed = []
    rec = Recorder(Cluster.objects.create(name="codec"), batch_size=4, flush_interval=0.05,
                   on_commit=committed.extend)
    trs = list(Simulation(scenario_from_data(small_scenario(3)), tie_break="name").run())
    for tr in trs:
        rec.emit(tr)
    assert rec.flush(20)
    rec.close()
    assert [k for k, _p in committed] == ["cycle"] * len(trs)
    assert [cycle_summary(p) for _k, p in committed] == \
        [cycle_summary(dict(tr.to_dict(), seq=i)) for i, tr in enumerate(trs, 1)]


def readable(matrix: dict) -> dict:
    """A row-form matrix with its status numbers replaced by the statuses (their numbering may differ)."""
    statuses = matrix["statuses"]

    def status(i):
        return "not run" if i == NOT_RUN else None if i == PASS else statuses[i - 1]

    nodes = matrix["nodes"]
    stop_plugins = matrix["stop_plugins"]
    out = {k: v for k, v in matrix.items() if k not in ("statuses", "stop_plugins", "filter", "final", "stopped")}
    out["filter"] = [[status(i) for i in row] if row is not None else None for row in matrix["filter"]]
    out["final"] = [status(i) for i in matrix["final"]]
    out["stopped"] = [stop_plugins[i] if i != NOT_RUN else None for i in matrix["stopped"]]
    assert len(nodes) == len(out["filter"]) == len(out["final"]) == len(out["stopped"])
    return out


@pytest.mark.parametrize("path", GOLDEN + LOOP, ids=_name)
def test_column_form_expands_to_the_row_form(path):
    """Trace mode with a node list: the column form (codes per plugin over node rows), expanded with the
    stored names, reads as the row form of the same trace, and the other fields are the same."""
    try:
        sim = Simulation(load_scenario(path), tie_break="name", trace_all_filters=True)
    except Exception:
        pytest.skip("configuration rejected")
    lists = NodeLists()
    stored_lists = {}
    columns_seen = 0
    for tr in sim.run():
        rows = trace_fields(tr)
        cols = trace_fields(tr, lists)
        stored_lists.update(lists.take_used())
        if tr.filter_table is None:
            assert cols == rows
            continue
        columns_seen += 1
        m = cols.pop("matrix")
        assert m["format"] == COLUMNS and "nodes" not in m
        names = unpack_json(stored_lists[m["node_list"]])
        assert readable(expand(m, names)) == readable(rows.pop("matrix"))
        assert cols == rows
    assert columns_seen


@pytest.mark.django_db(transaction=True)
def test_recorder_stores_full_traces_in_column_form():
    """Through the recorder: one node list for every cycle, the row form read back from the database, and the
    matrix of a 300-node full-trace cycle smaller than in the row form (which lists the node names)."""
    names = [f"node-{i:04d}" for i in range(300)]
    scenario = {"name": "wide", "nodes": [{"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                                           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
                                          for n in names],
                "pods": [], "pending": [{"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
                                         "spec": {"containers": [{"name": "c", "resources": {"requests": {
                                             "cpu": "3" if i % 2 else "100"}}}]}} for i in range(6)]}
    cluster = Cluster.objects.create(name="wide")
    rec = Recorder(cluster, batch_size=4, flush_interval=0.05)
    traces = list(Simulation(scenario_from_data(scenario), tie_break="name", trace_all_filters=True).run())
    for tr in traces:
        rec.emit(tr)
    assert rec.flush(20)
    rec.close()
    assert NodeList.objects.count() == 1
    cycles = list(SchedulingCycle.objects.filter(cluster=cluster).order_by("seq"))
    assert [c.result for c in cycles] == ["unschedulable", "scheduled"] * 3
    for tr, cycle in zip(traces, cycles):
        want = trace_fields(tr)["matrix"]
        assert readable(cycle.matrix) == readable(want)
        assert len(cycle.matrix["nodes"]) == 300 and all(cycle.matrix["filter"])
    with connection.cursor() as cur:
        cur.execute("SELECT matrix FROM dashboard_schedulingcycle WHERE id = %s", [cycles[1].pk])
        packed = bytes(cur.fetchone()[0])
    assert unpack_json(packed)["format"] == COLUMNS
    assert len(packed) < len(pack_json(trace_fields(traces[1])["matrix"]))


@pytest.mark.django_db(transaction=True)
def test_suggestions_name_nodes_by_row_in_the_column_form():
    """A failing cycle's suggestions name their nodes (nodes, fits, change.nodes) by runs of rows of the cycle's
    node list, and read back as the names, in their order; a list naming a node the list lacks stays names."""
    names = [f"node-{i:04d}" for i in range(300)]
    scenario = {"name": "wide", "nodes": [{"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                                           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
                                          for n in names],
                "pods": [], "pending": [{"metadata": {"name": "big", "namespace": "default", "uid": "u-big"},
                                         "spec": {"containers": [{"name": "c", "resources": {"requests": {
                                             "cpu": "100"}}}]}}]}
    rotated = names[150:] + names[:150]
    suggestions = [
        {"kind": "resources", "text": "nodes lack cpu", "nodes": names, "fits": rotated,
         "change": {"nodes": names[10:20] + names[5:8], "free": {"cpu": "96"}}, "adds_node": True},
        {"kind": "request", "text": "lower the request", "nodes": [], "fits": names[:3] + ["added-later"],
         "change": {"pod": {"requests": {"cpu": "1"}}}},
        {"kind": "taint", "text": "tolerate the taint", "nodes": names[40:90], "fits": names[299:] + names[:1]},
    ]
    cluster = Cluster.objects.create(name="wide-suggestions")
    rec = Recorder(cluster, batch_size=4, flush_interval=0.05)
    [tr] = Simulation(scenario_from_data(scenario), tie_break="name", trace_all_filters=True).run()
    rec.record_trace(tr, result="unschedulable", suggestions=suggestions)
    assert rec.flush(20)
    rec.close()
    cycle = SchedulingCycle.objects.get(cluster=cluster)
    assert cycle.matrix["suggestions"] == suggestions
    with connection.cursor() as cur:
        cur.execute("SELECT matrix FROM dashboard_schedulingcycle WHERE id = %s", [cycle.pk])
        packed = unpack_json(bytes(cur.fetchone()[0]))["suggestions"]
    assert packed[0]["nodes_rows"] == [[0, 300]] and "nodes" not in packed[0]
    assert packed[0]["fits_rows"] == [[150, 150], [0, 150]]
    assert packed[0]["change"] == {"nodes_rows": [[10, 10], [5, 3]], "free": {"cpu": "96"}}
    assert packed[1]["fits"] == names[:3] + ["added-later"] and packed[1]["nodes"] == []
    assert packed[2]["nodes_rows"] == [[40, 50]] and packed[2]["fits_rows"] == [[299, 1], [0, 1]]
    NodeList.objects.all().delete()   # pruned while the cycle still refers to it: the packed lists read empty
    fields_module._NODE_LISTS.clear()
    pruned = SchedulingCycle.objects.get(cluster=cluster).matrix
    assert pruned["node_list_missing"]
    assert pruned["suggestions"][0] == dict(suggestions[0], nodes=[], fits=[],
                                            change={"nodes": [], "free": {"cpu": "96"}})
    assert pruned["suggestions"][1] == suggestions[1]
    assert pruned["suggestions"][2] == dict(suggestions[2], nodes=[], fits=[])
