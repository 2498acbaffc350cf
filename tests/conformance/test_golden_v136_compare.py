"""The v1.36 oracle's comparison rules (golden_v136.compare) on hand-made decisions."""
from .golden_v136 import compare, expected_path

BOUND = {"pod": "ns/p", "unschedulable": False, "bound_node": "a", "top_nodes": ["a", "b"],
         "scoring_run_by_scheduler": True, "feasible_nodes": ["a", "b"],
         "scores": {"a": {"TaintToleration": {"weighted": 300}, "_total": 300},
                    "b": {"TaintToleration": {"weighted": 300}, "_total": 300}}}


def _got(**changes):
    got = {"pod": "ns/p", "unschedulable": False, "bound_node": "b", "top_nodes": ["b", "a"],
           "feasible_nodes": ["b", "a"],
           "scores": {"a": {"TaintToleration": {"raw": 0, "normalized": 100, "weight": 3, "weighted": 300},
                            "_total": 300},
                      "b": {"TaintToleration": {"raw": 0, "normalized": 100, "weight": 3, "weighted": 300},
                            "_total": 300}}}
    got.update(changes)
    return got


def test_bound_within_ties_and_scores():
    assert compare(BOUND, _got()) is None
    assert "top_nodes" in compare(BOUND, _got(top_nodes=["a"], bound_node="a"))
    assert "feasible nodes" in compare(BOUND, _got(feasible_nodes=["a", "b", "c"]))
    bad = _got()
    bad["scores"]["b"]["ImageLocality"] = {"weighted": 0}
    assert compare(BOUND, bad) == "scores[b] (expected, got): {'ImageLocality': (None, 0)}"
    bad = _got()
    bad["scores"]["a"]["_total"] = 301
    assert compare(BOUND, bad) == "scores[a]._total: expected 300, got 301"


def test_single_feasible_node_without_scoring():
    exp = {"pod": "ns/p", "unschedulable": False, "bound_node": "a", "top_nodes": ["a"],
           "scoring_run_by_scheduler": False, "feasible_nodes": ["a"], "scores": {}}
    assert compare(exp, _got(bound_node="a", top_nodes=["a"], feasible_nodes=["a"])) is None
    assert "feasible nodes" in compare(exp, _got(bound_node="a", top_nodes=["a"], feasible_nodes=["a", "b"]))


def test_unschedulable_message_and_nomination():
    exp = {"pod": "ns/p", "unschedulable": True, "bound_node": None, "message": "0/2 nodes are available: x.",
           "preemption": {"nominated_node": "a", "victims": ["ns/v"]}, "scores": {}}
    got = {"pod": "ns/p", "unschedulable": True, "message": "0/2 nodes are available: x.",
           "preemption": {"nominated_node": "b", "victims": ["ns/w"],
                          "possible_nominations": [{"node": "a", "victims": ["ns/v"]}]}}
    assert compare(exp, got) is None
    got["preemption"]["possible_nominations"] = []
    assert compare(exp, got).startswith("preemption: expected ('a', ['ns/v'])")
    assert compare(exp, dict(got, message="0/2 nodes are available: y.")).startswith("message:")
    assert compare(exp, {"pod": "ns/p", "unschedulable": False}).startswith("unschedulable:")


def test_expected_path():
    assert expected_path("d/x-01.scenario.json.xz") == "d/x-01.expected.json"
    assert expected_path("d/x-01.scenario.json") == "d/x-01.expected.json"
