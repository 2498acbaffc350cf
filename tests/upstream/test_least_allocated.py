"""kube's noderesources/least_allocated_test.go, TestLeastAllocatedScoringStrategy, case by case: NewFit with a
LeastAllocated scoring strategy (or its validation error), PreScore, then Score on every node of the snapshot."""
import pytest

from .resource_scoring import (DEFAULT_RESOURCES, EXTENDED, EXTENDED_SET, NOT_DEFAULTED, big, node, pod, run_strategy,
                               running, small, two_containers, weight_error)

UPSTREAM = "pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go"
UPSTREAM_VERSION = ("v1.34+ era (commit 008b3652: fwk package, backend/cache); the scoring rules the cases exercise "
                    "(non-zero defaults, bypassed unrequested extended resources, weights) are v1.30's")
UPSTREAM_CASES = 16

# (name, requested pod, nodes, existing pods, resources, want scores, want error text, skip reason)
CASES = [
    ("nothing scheduled, nothing requested", pod(), [small("node1"), small("node2")], [], DEFAULT_RESOURCES,
     [100, 100], None, None),
    ("nothing scheduled, resources requested, differently sized nodes", two_containers(),
     [small("node1"), node("node2", {"cpu": "6000", "memory": "10000"})], [], DEFAULT_RESOURCES, [37, 50], None, None),
    ("Resources not set, pods scheduled with error", two_containers(),
     [small("node1"), node("node2", {"cpu": "6000", "memory": "10000"})], [], None, [0, 0], None, NOT_DEFAULTED),
    ("no resources requested, pods scheduled", pod(), [small("node1"), small("node2")],
     [pod(on="node1"), pod(on="node1"), pod(on="node2"), pod(on="node2")], DEFAULT_RESOURCES, [100, 100], None, None),
    ("no resources requested, pods scheduled with resources", pod(), [big("node1"), big("node2")],
     [running("node1", "3000", "0"), running("node1", "3000", "0"), running("node2", "3000", "0"),
      running("node2", "3000", "5000")], DEFAULT_RESOURCES, [70, 57], None, None),
    ("resources requested, pods scheduled with resources", two_containers(), [big("node1"), big("node2")],
     [running("node1", "3000", "0"), running("node2", "3000", "5000")], DEFAULT_RESOURCES, [57, 45], None, None),
    ("resources requested, pods scheduled with resources, differently sized nodes", two_containers(),
     [big("node1"), big("node2", "50000")], [running("node1", "3000", "0"), running("node2", "3000", "5000")],
     DEFAULT_RESOURCES, [57, 60], None, None),
    ("requested resources exceed node capacity", pod({"cpu": "3000", "memory": "0"}), [small("node1"), small("node2")],
     [running("node1", "3000", "0"), running("node2", "3000", "5000")], DEFAULT_RESOURCES, [50, 25], None, None),
    ("zero node resources, pods scheduled with resources", pod(), [node("node1"), node("node2")],
     [running("node1", "3000", "0"), running("node2", "3000", "5000")], DEFAULT_RESOURCES, [0, 0], None, None),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     two_containers(), [small("node1"), node("node2", {"cpu": "6000", "memory": "10000"})], [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [41, 50], None, None),
    ("resource with negative weight", two_containers(), [small("node1")], [],
     [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}], None, weight_error(0), None),
    ("resource with zero weight", two_containers(), [small("node1")], [],
     [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}], None, weight_error(1), NOT_DEFAULTED),
    ("resource weight larger than MaxNodeScore", two_containers(), [small("node1")], [],
     [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}], None, weight_error(1), None),
    ("bypass extended resource if the pod does not request", two_containers(),
     [node("node1", {"cpu": "6000", "memory": "10000"}),
      node("node2", {"cpu": "6000", "memory": "10000", EXTENDED: "4"})], [], EXTENDED_SET, [50, 50], None, None),
    ("honor extended resource if the pod requests", pod({"cpu": "3000", "memory": "5000", EXTENDED: "2"}),
     [node("node1", {"cpu": "6000", "memory": "10000", EXTENDED: "4"}),
      node("node2", {"cpu": "6000", "memory": "10000", EXTENDED: "10"})], [], EXTENDED_SET, [50, 60], None, None),
    ("if the node doesn't have a resource", pod({"cpu": "3000", "memory": "4000"}),
     [node("node1", {"cpu": "6000", "memory": "10000"}),
      node("node2", {"cpu": "6000", "memory": "10000", EXTENDED: "4"})], [],
     [{"name": EXTENDED, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], [55, 55], None,
     None),
]


@pytest.mark.parametrize("p, nodes, existing, resources, want, want_err, skip", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_least_allocated_scoring_strategy(p, nodes, existing, resources, want, want_err, skip):
    run_strategy("LeastAllocated", p, nodes, existing, resources, want, want_err, skip)
