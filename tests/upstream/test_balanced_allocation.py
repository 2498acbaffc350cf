"""kube's noderesources/balanced_allocation_test.go, TestNodeResourcesBalancedAllocation, case by case: PreScore
(when the case runs it), then Score on every node of the snapshot (no normalization)."""
import pytest

from scheduler_core.plugins.noderesources.balanced_allocation import BalancedAllocation

from .plugin_cases import handle, make_node, make_pod, new_state

UPSTREAM = "pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go"
UPSTREAM_VERSION = "v1.35 era (commit 00fdb4ff: DRA extended resources, SignPod); three cases are later behaviour"
UPSTREAM_CASES = 10
UPSTREAM_NOT_TRANSLATED = {
    "TestBalancedAllocationSignPod": "4 cases of SignPod (pod signatures for batched scheduling), a later feature "
                                     "with no v1.30 counterpart",
}

GPU = "nvidia.com/gpu"
DEFAULT_SET = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = DEFAULT_SET + [{"name": GPU, "weight": 1}]
BEST_EFFORT_SKIP = ("drift: PreScore returning Skip for a pod with no requests is later behaviour (v1.30's "
                    "balanced_allocation.go PreScore always succeeds; the release that added it is not verified)")
DRA = ("drift: DRA extended resources (DRAExtendedResource, DeviceClass extendedResourceName, ResourceSlices) are a "
       "later feature; v1.30 has no counterpart")


def make(name, milli_cpu, memory, scalar=None):
    """makeNode(name, milliCPU, memory, extendedResource): capacity = allocatable, no pod count."""
    res = {"cpu": f"{milli_cpu}m", "memory": str(memory), **{k: str(v) for k, v in (scalar or {}).items()}}
    w = make_node().name(name)
    w.raw["status"]["capacity"] = dict(res)
    w.raw["status"]["allocatable"] = dict(res)
    return w


def spec_pod(node, *containers):
    w = make_pod().node(node) if node else make_pod()
    for c in containers:
        w.req(c)
    return w


def cpu_and_memory_and_gpu():
    return spec_pod("node1", {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"})


def cpu_only():
    return spec_pod("node1", {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})


def cpu_and_memory():
    return spec_pod("node2", {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})


# (name, pod, nodes, existing pods, resources, run PreScore, want scores, skip reason)
CASES = [
    ("nothing scheduled, nothing requested, skip in PreScore", make_pod(), [make("node1", 4000, 10000),
                                                                           make("node2", 4000, 10000)], [],
     DEFAULT_SET, True, None, BEST_EFFORT_SKIP),
    ("nothing scheduled, resources requested, differently sized nodes", cpu_and_memory(),
     [make("node1", 4000, 10000), make("node2", 6000, 10000)], [], DEFAULT_SET, True, [87, 100], None),
    ("resources requested, pods scheduled with resources", cpu_and_memory(),
     [make("node1", 10000, 20000), make("node2", 10000, 20000)], [cpu_only(), cpu_and_memory()], DEFAULT_SET, True,
     [82, 95], None),
    ("resources requested, pods scheduled with resources, differently sized nodes", cpu_and_memory(),
     [make("node1", 10000, 20000), make("node2", 10000, 50000)], [cpu_only(), cpu_and_memory()], DEFAULT_SET, True,
     [82, 80], None),
    ("requested resources at node capacity", cpu_only(), [make("node1", 6000, 10000), make("node2", 6000, 10000)],
     [cpu_only(), cpu_and_memory()], DEFAULT_SET, True, [50, 75], None),
    ("include scalar resource on a node for balanced resource allocation", spec_pod(None, {"memory": "0", GPU: "1"}),
     [make("node1", 3500, 40000, {GPU: 8}), make("node2", 3500, 40000, {GPU: 8})],
     [cpu_and_memory(), cpu_and_memory_and_gpu()], WITH_GPU, True, [70, 65], None),
    ("node without the scalar resource should skip the scalar resource", cpu_and_memory(),
     [make("node1", 3500, 40000, {GPU: 8}), make("node2", 3500, 40000)], [], WITH_GPU, True, [63, 63], None),
    ("resources requested, pods scheduled with resources if PreScore not called", cpu_and_memory(),
     [make("node1", 10000, 20000), make("node2", 10000, 20000)], [cpu_only(), cpu_and_memory()], DEFAULT_SET, False,
     [82, 95], None),
    ("include DRA resource on a node for balanced resource allocation", None, [], [], None, True, None, DRA),
    ("include DRA resource on a node for balanced resource allocation if PreScore not called", None, [], [], None,
     False, None, DRA),
]


@pytest.mark.parametrize("p, nodes, existing, resources, run_pre_score, want, skip", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_node_resources_balanced_allocation(p, nodes, existing, resources, run_pre_score, want, skip):
    if skip == DRA:
        pytest.skip(skip)
    h = handle([n.obj() for n in nodes], [e.obj() for e in existing])
    pl, state, q = BalancedAllocation.new({"resources": resources}, h), new_state(), p.obj()
    if run_pre_score:
        assert pl.pre_score(state, q, h.snapshot.node_infos) is None   # v1.30: PreScore always succeeds
    if skip:
        pytest.skip(skip)
    got = []
    for ni in h.snapshot.node_infos:
        score, st = pl.score(state, q, ni)
        assert st is None
        got.append(score)
    assert got == want
