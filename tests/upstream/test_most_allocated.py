"""kube's noderesources/most_allocated_test.go, TestMostAllocatedScoringStrategy, case by case: NewFit with a
MostAllocated scoring strategy (or its validation error), PreScore, then Score on every node of the snapshot."""
import pytest

from .plugin_cases import make_pod
from .resource_scoring import (DEFAULT_RESOURCES, EXTENDED, EXTENDED_SET, NOT_DEFAULTED, big, node, pod, run_strategy,
                               running, small, two_containers, weight_error)

UPSTREAM = "pkg/scheduler/framework/plugins/noderesources/most_allocated_test.go"
UPSTREAM_VERSION = ("v1.34+ era (commit 030880a5: fwk package, backend/cache); the scoring rules the cases exercise "
                    "are v1.30's")
UPSTREAM_CASES = 14


def with_container(on=None):
    """st.MakePod().Container("container"): one container without requests (non-zero defaults apply)."""
    w = make_pod().container("container")
    return w.node(on) if on else w


# (name, requested pod, nodes, existing pods, resources, want scores, want error text, skip reason)
CASES = [
    ("nothing scheduled, nothing requested", pod(), [small("node1"), small("node2")], [], DEFAULT_RESOURCES, [0, 0],
     None, None),
    ("nothing scheduled, resources requested, differently sized nodes", two_containers(),
     [small("node1"), node("node2", {"cpu": "6000", "memory": "10000"})], [], DEFAULT_RESOURCES, [62, 50], None, None),
    ("Resources not set, pods scheduled with error", two_containers(),
     [small("node1"), node("node2", {"cpu": "6000", "memory": "10000"})], [], None, [0, 0], None, NOT_DEFAULTED),
    ("no resources requested, pods scheduled with resources", pod(), [big("node1"), big("node2")],
     [running("node1", "3000", "0"), running("node1", "3000", "0"), running("node2", "3000", "0"),
      running("node2", "3000", "5000")], DEFAULT_RESOURCES, [30, 42], None, None),
    ("resources requested, pods scheduled with resources", two_containers(), [big("node1"), big("node2")],
     [running("node1", "3000", "0"), running("node2", "3000", "5000")], DEFAULT_RESOURCES, [42, 55], None, None),
    ("resources requested equal node capacity",
     pod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
     [node("node1", {"cpu": "5000", "memory": "10000"}), node("node2", {"cpu": "10000", "memory": "9000"})], [],
     DEFAULT_RESOURCES, [95, 75], None, None),
    # kube names this case like the second one; Go runs it as "...#01", and so does this table.
    ("nothing scheduled, resources requested, differently sized nodes#01", two_containers(),
     [small("node1"), node("node2", {"cpu": "6000", "memory": "10000"})], [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [58, 50], None, None),
    ("no resources requested, pods scheduled, nonzero request for resource", with_container(),
     [node("node1", {"cpu": "250m", "memory": "1000Mi"}), node("node2", {"cpu": "250m", "memory": "1000Mi"})],
     [with_container("node1"), with_container("node1")], DEFAULT_RESOURCES, [80, 30], None, None),
    ("resource with negative weight", two_containers(), [small("node2")], [],
     [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}], None, weight_error(0), None),
    ("resource with zero weight", two_containers(), [small("node2")], [],
     [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}], None, weight_error(1), NOT_DEFAULTED),
    ("resource weight larger than MaxNodeScore", two_containers(), [small("node2")], [],
     [{"name": "memory", "weight": 101}], None, weight_error(0), None),
    ("bypass extended resource if the pod does not request", two_containers(),
     [node("node1", {"cpu": "6000", "memory": "10000"}),
      node("node2", {"cpu": "6000", "memory": "10000", EXTENDED: "4"})], [], EXTENDED_SET, [50, 50], None, None),
    ("honor extended resource if the pod request", pod({"cpu": "3000", "memory": "5000", EXTENDED: "2"}),
     [node("node1", {"cpu": "6000", "memory": "10000", EXTENDED: "4"}),
      node("node2", {"cpu": "6000", "memory": "10000", EXTENDED: "10"})], [], EXTENDED_SET, [50, 40], None, None),
    ("if the node doesn't have a resource", pod({"cpu": "3000", "memory": "4000"}),
     [node("node1", {"cpu": "6000", "memory": "10000"}),
      node("node2", {"cpu": "6000", "memory": "10000", EXTENDED: "4"})], [],
     [{"name": EXTENDED, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], [45, 45], None,
     None),
]


@pytest.mark.parametrize("p, nodes, existing, resources, want, want_err, skip", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_most_allocated_scoring_strategy(p, nodes, existing, resources, want, want_err, skip):
    run_strategy("MostAllocated", p, nodes, existing, resources, want, want_err, skip)
