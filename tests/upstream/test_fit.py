"""kube's noderesources/fit_test.go, case by case: TestEnoughRequests (PreFilter, Filter status, and Fits' list of
insufficient resources, compared here by reason), TestPreFilterDisabled, TestNotEnoughRequests, TestStorageRequests.

Pods are built as kube's newResourcePod does: one container per framework.Resource, whose ResourceList() always
carries cpu, memory, pods and ephemeral-storage (zeros included) plus the scalar resources.
"""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.noderesources.fit import Fit

from .plugin_cases import SUCCESS, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/noderesources/fit_test.go"
UPSTREAM_VERSION = ("v1.17-v1.18 era (commit 007f7ae7: framework/v1alpha1, NewFit(args, nil)), the only version "
                    "at hand; v1.30's fit.go gives the same reasons ('Insufficient <name>', 'Too many pods')")
UPSTREAM_CASES = 41

EXT_A, EXT_B = "example.com/aaa", "example.com/bbb"
K8S_A, K8S_B = "kubernetes.io/something", "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
U = Code.UNSCHEDULABLE


def r(cpu=0, mem=0, storage=0, **scalars):
    """framework.Resource{MilliCPU, Memory, EphemeralStorage, ScalarResources}.ResourceList()."""
    out = {"cpu": f"{cpu}m", "memory": str(mem), "pods": "0", "ephemeral-storage": str(storage)}
    out.update({k: str(v) for k, v in scalars.items()})
    return out


def resource_pod(*usage, init=(), overhead=None):
    """newResourcePod(usage...), newResourceInitPod(pod, init...), newResourceOverheadPod(pod, overhead)."""
    w = make_pod()
    w.raw["spec"]["containers"] = [{"name": f"c{i}", "resources": {"requests": u}} for i, u in enumerate(usage)]
    if init:
        w.raw["spec"]["initContainers"] = [{"name": f"i{i}", "resources": {"requests": u}}
                                           for i, u in enumerate(init)]
    if overhead:
        w.raw["spec"]["overhead"] = dict(overhead)
    return w


def fit_node(milli_cpu, memory, pods, ext_a, storage, huge_a, capacity=True):
    """makeResources / makeAllocatableResources as the node's capacity and allocatable."""
    res = {"cpu": f"{milli_cpu}m", "memory": str(memory), "pods": str(pods), EXT_A: str(ext_a),
           "ephemeral-storage": str(storage), HUGE_A: str(huge_a)}
    w = make_node().name("node")
    w.raw["status"]["capacity"] = dict(res) if capacity else {}
    w.raw["status"]["allocatable"] = dict(res)
    return w


def insufficient(*names):
    return [f"Insufficient {n}" for n in names]


def status(reasons):
    return (U, reasons) if reasons else SUCCESS


E = resource_pod  # brevity in the tables

# (name, pod, pod on the node, ignored resources, want insufficient reasons)
ENOUGH = [
    ("no resources requested always fits", make_pod(), E(r(10, 20)), None, []),
    ("too many resources fails", E(r(1, 1)), E(r(10, 20)), None, insufficient("cpu", "memory")),
    ("too many resources fails due to init container cpu", E(r(1, 1), init=[r(3, 1)]), E(r(8, 19)), None,
     insufficient("cpu")),
    ("too many resources fails due to highest init container cpu", E(r(1, 1), init=[r(3, 1), r(2, 1)]), E(r(8, 19)),
     None, insufficient("cpu")),
    ("too many resources fails due to init container memory", E(r(1, 1), init=[r(1, 3)]), E(r(9, 19)), None,
     insufficient("memory")),
    ("too many resources fails due to highest init container memory", E(r(1, 1), init=[r(1, 3), r(1, 2)]),
     E(r(9, 19)), None, insufficient("memory")),
    ("init container fits because it's the max, not sum, of containers and init containers",
     E(r(1, 1), init=[r(1, 1)]), E(r(9, 19)), None, []),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     E(r(1, 1), init=[r(1, 1), r(1, 1)]), E(r(9, 19)), None, []),
    ("both resources fit", E(r(1, 1)), E(r(5, 5)), None, []),
    ("one resource memory fits", E(r(2, 1)), E(r(9, 5)), None, insufficient("cpu")),
    ("one resource cpu fits", E(r(1, 2)), E(r(5, 19)), None, insufficient("memory")),
    ("equal edge case", E(r(5, 1)), E(r(5, 19)), None, []),
    ("equal edge case for init container", E(r(4, 1), init=[r(5, 1)]), E(r(5, 19)), None, []),
    ("extended resource fits", E(r(**{EXT_A: 1})), E(r()), None, []),
    ("extended resource fits for init container", E(r(), init=[r(**{EXT_A: 1})]), E(r()), None, []),
    ("extended resource capacity enforced", E(r(1, 1, **{EXT_A: 10})), E(r(0, 0, **{EXT_A: 0})), None,
     insufficient(EXT_A)),
    ("extended resource capacity enforced for init container", E(r(), init=[r(1, 1, **{EXT_A: 10})]),
     E(r(0, 0, **{EXT_A: 0})), None, insufficient(EXT_A)),
    ("extended resource allocatable enforced", E(r(1, 1, **{EXT_A: 1})), E(r(0, 0, **{EXT_A: 5})), None,
     insufficient(EXT_A)),
    ("extended resource allocatable enforced for init container", E(r(), init=[r(1, 1, **{EXT_A: 1})]),
     E(r(0, 0, **{EXT_A: 5})), None, insufficient(EXT_A)),
    ("extended resource allocatable enforced for multiple containers",
     E(r(1, 1, **{EXT_A: 3}), r(1, 1, **{EXT_A: 3})), E(r(0, 0, **{EXT_A: 2})), None, insufficient(EXT_A)),
    ("extended resource allocatable admits multiple init containers",
     E(r(), init=[r(1, 1, **{EXT_A: 3}), r(1, 1, **{EXT_A: 3})]), E(r(0, 0, **{EXT_A: 2})), None, []),
    ("extended resource allocatable enforced for multiple init containers",
     E(r(), init=[r(1, 1, **{EXT_A: 6}), r(1, 1, **{EXT_A: 3})]), E(r(0, 0, **{EXT_A: 2})), None,
     insufficient(EXT_A)),
    ("extended resource allocatable enforced for unknown resource", E(r(1, 1, **{EXT_B: 1})), E(r()), None,
     insufficient(EXT_B)),
    ("extended resource allocatable enforced for unknown resource for init container",
     E(r(), init=[r(1, 1, **{EXT_B: 1})]), E(r()), None, insufficient(EXT_B)),
    ("kubernetes.io resource capacity enforced", E(r(1, 1, **{K8S_A: 10})), E(r()), None, insufficient(K8S_A)),
    ("kubernetes.io resource capacity enforced for init container", E(r(), init=[r(1, 1, **{K8S_B: 10})]), E(r()),
     None, insufficient(K8S_B)),
    ("hugepages resource capacity enforced", E(r(1, 1, **{HUGE_A: 10})), E(r(0, 0, **{HUGE_A: 0})), None,
     insufficient(HUGE_A)),
    ("hugepages resource capacity enforced for init container", E(r(), init=[r(1, 1, **{HUGE_A: 10})]),
     E(r(0, 0, **{HUGE_A: 0})), None, insufficient(HUGE_A)),
    ("hugepages resource allocatable enforced for multiple containers",
     E(r(1, 1, **{HUGE_A: 3}), r(1, 1, **{HUGE_A: 3})), E(r(0, 0, **{HUGE_A: 2})), None, insufficient(HUGE_A)),
    ("skip checking ignored extended resource", E(r(1, 1, **{EXT_B: 1})), E(r()), [EXT_B], []),
    ("resources + pod overhead fits", E(r(1, 1), overhead={"cpu": "3m", "memory": "13"}), E(r(5, 5)), None, []),
    ("requests + overhead does not fit for memory", E(r(1, 1), overhead={"cpu": "1m", "memory": "15"}), E(r(5, 5)),
     None, insufficient("memory")),
]


@pytest.mark.parametrize("p, existing, ignored, want", [c[1:] for c in ENOUGH], ids=[c[0] for c in ENOUGH])
def test_enough_requests(p, existing, ignored, want):
    ni = node_info(fit_node(10, 20, 32, 5, 20, 5).obj(), [existing.node("node").obj()])
    pl = Fit.new({"ignoredResources": ignored} if ignored else None, None)
    state, q = new_state(), p.obj()
    _, st = pl.pre_filter(state, q)
    assert st is None
    assert status_tuple(pl.filter(state, q, ni)) == status(want)
    assert pl.insufficient(q.requests, ni) == want   # Fits(pod, nodeInfo, ignoredResources)


def test_pre_filter_disabled():
    """TestPreFilterDisabled: Filter without PreFilter is an Error in kube."""
    ni = node_info(fit_node(0, 0, 0, 0, 0, 0).obj(), [])
    st = Fit.new(None, None).filter(new_state(), make_pod().obj(), ni)
    assert status_tuple(st) == (Code.ERROR, ['error reading "PreFilterNodeResourcesFit" from cycleState: not found'])


NOT_ENOUGH = [
    ("even without specified resources predicate fails when there's no space for additional pod", make_pod(),
     E(r(10, 20))),
    ("even if both resources fit predicate fails when there's no space for additional pod", E(r(1, 1)), E(r(5, 5))),
    ("even for equal edge case predicate fails when there's no space for additional pod", E(r(5, 1)), E(r(5, 19))),
    ("even for equal edge case predicate fails when there's no space for additional pod due to init container",
     E(r(5, 1), init=[r(5, 1)]), E(r(5, 19))),
]


@pytest.mark.parametrize("p, existing", [c[1:] for c in NOT_ENOUGH], ids=[c[0] for c in NOT_ENOUGH])
def test_not_enough_requests(p, existing):
    ni = node_info(fit_node(10, 20, 1, 0, 0, 0, capacity=False).obj(), [existing.node("node").obj()])
    pl, state, q = Fit.new(None, None), new_state(), p.obj()
    _, st = pl.pre_filter(state, q)
    assert st is None
    assert status_tuple(pl.filter(state, q, ni)) == (U, ["Too many pods"])


STORAGE = [
    ("due to container scratch disk", E(r(1, 1)), E(r(10, 10)), (U, insufficient("cpu"))),
    ("pod fit", E(r(1, 1)), E(r(2, 10)), SUCCESS),
    ("storage ephemeral local storage request exceeds allocatable", E(r(storage=25)), E(r(2, 2)),
     (U, insufficient("ephemeral-storage"))),
    ("pod fits", E(r(storage=10)), E(r(2, 2)), SUCCESS),
]


@pytest.mark.parametrize("p, existing, want", [c[1:] for c in STORAGE], ids=[c[0] for c in STORAGE])
def test_storage_requests(p, existing, want):
    ni = node_info(fit_node(10, 20, 32, 5, 20, 5).obj(), [existing.node("node").obj()])
    pl, state, q = Fit.new(None, None), new_state(), p.obj()
    _, st = pl.pre_filter(state, q)
    assert st is None
    assert status_tuple(pl.filter(state, q, ni)) == want
