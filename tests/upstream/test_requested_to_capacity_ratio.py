"""kube's noderesources/requested_to_capacity_ratio_test.go, case by case: NewFit with a RequestedToCapacityRatio
scoring strategy, then Score on every node (kube calls Score without PreScore here); and
helper.BuildBrokenLinearFunction at the table's points (here strategies.broken_linear)."""
import pytest

from scheduler_core.plugins.noderesources.fit import Fit
from scheduler_core.plugins.noderesources.strategies import broken_linear

from .plugin_cases import handle, new_state
from .resource_scoring import DEFAULT_RESOURCES, node, pod, running, small, two_containers

UPSTREAM = "pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio_test.go"
UPSTREAM_VERSION = ("v1.25-v1.27 era (commit 00b9ead0: NewFit(args, fh, features), Score by node name, "
                    "internal/cache); the scoring rules the cases exercise are v1.30's")
UPSTREAM_CASES = 14

SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
BIN_PACKING = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
FOO, BAR = "intel.com/foo", "intel.com/bar"


def fit(resources, shape, h):
    return Fit.new({"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": resources,
                                        "requestedToCapacityRatio": {"shape": shape}}}, h)


def scores(pl, q, h):
    state, got = new_state(), []
    for ni in h.snapshot.node_infos:
        score, st = pl.score(state, q, ni)
        assert st is None
        got.append(score)
    return got


def on(name):
    return pod(on=name)


STRATEGY = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)", pod(),
     [small("node1"), small("node2")], [on("node1"), on("node1")], [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have "
     "priority)", two_containers(), [small("node1"), node("node2", {"cpu": "6000", "memory": "10000"})],
     [on("node1"), on("node1")], [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have priority)", pod(),
     [small("node1"), node("node2", {"cpu": "6000", "memory": "10000"})],
     [running("node1", "3000", "5000"), running("node2", "3000", "5000")], [38, 50]),
]


@pytest.mark.parametrize("p, nodes, existing, want", [c[1:] for c in STRATEGY], ids=[c[0] for c in STRATEGY])
def test_requested_to_capacity_ratio_scoring_strategy(p, nodes, existing, want):
    h = handle([n.obj() for n in nodes], [e.obj() for e in existing])
    assert scores(fit(DEFAULT_RESOURCES, SHAPE, h), p.obj(), h) == want


BROKEN_LINEAR = [
    ("case_0", [(10, 1), (90, 9)],
     [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)]),
    ("case_1", [(0, 2), (40, 10), (100, 0)],
     [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ("case_2", [(0, 2), (40, 2), (100, 2)],
     [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
]


@pytest.mark.parametrize("points, assertions", [c[1:] for c in BROKEN_LINEAR], ids=[c[0] for c in BROKEN_LINEAR])
def test_broken_linear_function(points, assertions):
    f = broken_linear(points)
    assert [(p, f(p)) for p, _ in assertions] == assertions


def make(name, extended):
    """makeNode(name, 4000 milli-CPU, 10000Mi memory, extended resources)."""
    return node(name, {"cpu": "4000m", "memory": str(10000 * 1024 * 1024), **{k: str(v) for k, v in extended.items()}})


SINGLE_NODES = [make("node1", {FOO: 8}), make("node2", {FOO: 4})]

SINGLE = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod({FOO: "2"}), [pod()], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ", pod({FOO: "2"}),
     [pod({FOO: "2"}, on="node2")], [2, 10]),
    ("resources requested, pods scheduled with more resources", pod({FOO: "4"}), [pod()], [5, 10]),
]


@pytest.mark.parametrize("p, existing, want", [c[1:] for c in SINGLE], ids=[c[0] for c in SINGLE])
def test_resource_bin_packing_single_extended(p, existing, want):
    h = handle([n.obj() for n in SINGLE_NODES], [e.obj() for e in existing])
    assert scores(fit([{"name": FOO, "weight": 1}], BIN_PACKING, h), p.obj(), h) == want


MULTIPLE_NODES = [make("node1", {FOO: 8, BAR: 4}), make("node2", {FOO: 4, BAR: 8})]
POD1 = {FOO: "2", BAR: "2"}
POD2 = {FOO: "4", BAR: "2"}

MULTIPLE = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod(POD1), [pod()], [4, 3]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ", pod(POD1),
     [pod(POD2, on="node2")], [4, 7]),
    ("resources requested, pods scheduled with more resources", pod(POD2), [pod()], [5, 5]),
]


@pytest.mark.parametrize("p, existing, want", [c[1:] for c in MULTIPLE], ids=[c[0] for c in MULTIPLE])
def test_resource_bin_packing_multiple_extended(p, existing, want):
    h = handle([n.obj() for n in MULTIPLE_NODES], [e.obj() for e in existing])
    resources = [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}]
    assert scores(fit(resources, BIN_PACKING, h), p.obj(), h) == want
