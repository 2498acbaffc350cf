"""Scenario files: kubectl List dumps, admission-like priority resolution, and one-line bad-input errors."""
import json

import pytest

from scheduler_core.cli import main as cli_main
from scheduler_core.scenario import ScenarioError, scenario_from_data


def test_priority_classes_in_a_list_resolve_pod_priorities():
    node = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}}
    classes = [{"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"},
               {"kind": "PriorityClass", "metadata": {"name": "dflt"}, "value": 7, "globalDefault": True}]
    pods = [{"kind": "Pod", "metadata": {"name": n, "namespace": "default"}, "spec": dict(spec, containers=[])}
            for n, spec in (("a", {"priorityClassName": "high"}), ("b", {}), ("c", {"priority": 3}))]
    scen = scenario_from_data({"kind": "List", "items": [node] + classes + pods})
    got = {p.name: (p.priority, p.preemption_policy) for p in scen.pending_pods}
    assert got == {"a": (1000, "Never"), "b": (7, "PreemptLowerPriority"), "c": (3, "PreemptLowerPriority")}


@pytest.mark.parametrize("mutate,expected", [
    (lambda s: s["pending"][0]["spec"]["containers"][0]["resources"]["requests"].update(cpu="12xyz"),
     'bad.json: pending[0] (default/p): spec.containers[0].resources.requests[cpu]: Invalid value: "12xyz": '
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (lambda s: s["pending"][0]["metadata"].pop("name"),
     "bad.json: pending[0] (default/?): metadata.name: Required value: name or generateName is required"),
    (lambda s: s["pending"][0]["spec"].update(nodeSelector=["x"]),
     "bad.json: pending[0] (default/p): spec.nodeSelector: expected object, got list"),
    (lambda s: s["pending"][0]["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "k", "operator": "Near", "values": ["v"]}]}]}}}),
     'bad.json: pending[0] (default/p): spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution'
     '.nodeSelectorTerms[0].matchExpressions[0].operator: unknown operator "Near"'),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, mutate, expected):
    scen = {"nodes": [{"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}}],
            "pending": [{"metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}]}
    mutate(scen)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scen))
    assert cli_main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: " + expected), err


def test_a_list_item_whose_kind_is_not_a_string_is_a_scenario_error():
    with pytest.raises(ScenarioError, match=r"items\[0\]\.kind: expected a string"):
        scenario_from_data({"kind": "List", "items": [{"kind": ["Pod"]}]}, label="x.json")
