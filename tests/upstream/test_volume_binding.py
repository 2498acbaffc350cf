"""kube's volumebinding/volume_binding_test.go, TestVolumeBinding, case by case.

Each case runs PreFilter (status and PreFilterResult), then Filter on every node and PreScore, as kube's loop does.
kube's stateData is compared through its claim lists (bound / unbound delayed-binding claims, by name); its
per-class list of unbound volumes has no counterpart here (scheduler_core keeps, per claim, the candidate volumes
already filtered), so it is not compared.

Four cases turn the VolumeCapacityPriority gate on (alpha, off in v1.30; scheduler_core has no VolumeBinding scorer):
their PreFilter and Filter expectations are checked, then the case is skipped for its scores.
"""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.helper.volume import ANN_BIND_COMPLETED, pvc_not_found
from scheduler_core.plugins.volumebinding import ERR_UNBOUND_IMMEDIATE, STATE_KEY, VolumeBinding
from scheduler_core.plugins.volumebinding.binder import (ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT,
                                                         ERR_REASON_PV_NOT_EXIST)

from .plugin_cases import SUCCESS, handle, make_node, make_pod, new_state, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go"
UPSTREAM_VERSION = "v1.30-v1.32 era (commit 645c553f: testing/framework helpers, VolumeCapacityPriority in fts)"
UPSTREAM_CASES = 15
UPSTREAM_NOT_TRANSLATED = {
    "TestIsSchedulableAfterPersistentVolumeChange": "5 queueing-hint cases; SchedulerQueueingHints is off in v1.30 "
                                                    "and scheduler_core has no queueing hints",
}

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
SKIP = (Code.SKIP, [])
HOST = "kubernetes.io/hostname"
REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
NO_PV_TO_BIND = (UU, [ERR_REASON_BIND_CONFLICT])
CAPACITY_GATE = ("scores not applicable: the VolumeCapacityPriority gate is off in v1.30 and scheduler_core has no "
                 "VolumeBinding scorer (PreFilter and Filter were checked)")
STORAGE_CLASSES = [{"metadata": {"name": "immediate-sc"}, "volumeBindingMode": "Immediate"},
                   {"metadata": {"name": "wait-sc"}, "volumeBindingMode": "WaitForFirstConsumer"},
                   {"metadata": {"name": "wait-hdd-sc"}, "volumeBindingMode": "WaitForFirstConsumer"}]


def node(name, **labels):
    """makeNode: labelled kubernetes.io/hostname=<name>."""
    return make_node().name(name).label(HOST, name).labels(labels)


def pvc(name, sc, bound_pv=None, request=None, phase=None):
    """makePVC (namespace default), withBoundPV (volumeName and the bind-completed annotation), withRequestStorage,
    withPhase."""
    obj = {"metadata": {"name": name, "namespace": "default"}, "spec": {"storageClassName": sc}}
    if bound_pv:
        obj["spec"]["volumeName"] = bound_pv
        obj["metadata"]["annotations"] = {ANN_BIND_COMPLETED: "true"}
    if request:
        obj["spec"]["resources"] = {"requests": {"storage": request}}
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def pv(name, sc, phase=None, capacity=None, affinity=None):
    """makePV, withPhase, withCapacity, withNodeAffinity (one term, an In requirement per key)."""
    obj = {"metadata": {"name": name}, "spec": {"storageClassName": sc}}
    if phase:
        obj["status"] = {"phase": phase}
    if capacity:
        obj["spec"]["capacity"] = {"storage": capacity}
    if affinity:
        obj["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": list(v)} for k, v in affinity.items()]}]}}
    return obj


def pod(*claims):
    """makePod("pod-a") (namespace default) withPVCVolume(claim, "") for each claim."""
    w = make_pod().name("pod-a").namespace("default")
    for c in claims:
        w.volume({"name": "", "persistentVolumeClaim": {"claimName": c}})
    return w


def local(name, sc, capacity, host):
    return pv(name, sc, "Available", capacity, {HOST: [host]})


def zonal(name, capacity, region, zone):
    return pv(name, "wait-sc", "Available", capacity, {REGION: [region], ZONE: [zone]})


ZONE_NODES = [node(f"zone-{z}-node-{n}", **{REGION: f"region-{z}", ZONE: f"zone-{z}"}) for z in "abc" for n in "ab"]
ZONAL_PVS = [zonal("pv-a-0", "200Gi", "region-a", "zone-a"), zonal("pv-a-1", "200Gi", "region-a", "zone-a"),
             zonal("pv-b-0", "100Gi", "region-b", "zone-b"), zonal("pv-b-1", "100Gi", "region-b", "zone-b")]

# (name, pod, nodes, pvcs, pvs, args, want PreFilter status, want PreFilterResult, want state claims
#  (bound, unbound delayed), want Filter statuses, want PreScore status, scores (CAPACITY_GATE: not translated))
CASES = [
    ("pod has not pvcs", pod(), [node("node-a")], [], [], None, SKIP, None, None, [SUCCESS], SKIP, None),
    ("all bound", pod("pvc-a"), [node("node-a")], [pvc("pvc-a", "wait-sc", "pv-a")],
     [pv("pv-a", "wait-sc", "Available")], None, SUCCESS, None, (["pvc-a"], []), [SUCCESS], SKIP, None),
    ("all bound with local volumes", pod("pvc-a", "pvc-b"), [node("node-a")],
     [pvc("pvc-a", "wait-sc", "pv-a"), pvc("pvc-b", "wait-sc", "pv-b")],
     [pv("pv-a", "wait-sc", "Bound", affinity={HOST: ["node-a"]}),
      pv("pv-b", "wait-sc", "Bound", affinity={HOST: ["node-a"]})], None, SUCCESS, {"node-a"},
     (["pvc-a", "pvc-b"], []), [SUCCESS], SKIP, None),
    ("PVC does not exist", pod("pvc-a"), [node("node-a")], [], [], None, (UU, [pvc_not_found("pvc-a")]), None, None,
     None, None, None),
    ("Part of PVCs do not exist", pod("pvc-a", "pvc-b"), [node("node-a")], [pvc("pvc-a", "wait-sc", "pv-a")], [],
     None, (UU, [pvc_not_found("pvc-b")]), None, None, None, None, None),
    ("immediate claims not bound", pod("pvc-a"), [node("node-a")], [pvc("pvc-a", "immediate-sc")], [], None,
     (UU, [ERR_UNBOUND_IMMEDIATE]), None, None, None, None, None),
    ("unbound claims no matches", pod("pvc-a"), [node("node-a")], [pvc("pvc-a", "wait-sc")], [], None, SUCCESS, None,
     ([], ["pvc-a"]), [NO_PV_TO_BIND], SKIP, None),
    ("bound and unbound unsatisfied", pod("pvc-a", "pvc-b"), [node("node-a", foo="barbar")],
     [pvc("pvc-a", "wait-sc", "pv-a"), pvc("pvc-b", "wait-sc")],
     [pv("pv-a", "wait-sc", "Available", affinity={"foo": ["bar"]})], None, SUCCESS, None, (["pvc-a"], ["pvc-b"]),
     [(UU, [ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT])], SKIP, None),
    ("pvc not found", pod("pvc-a"), [node("node-a")], [], [], None, (UU, [pvc_not_found("pvc-a")]), None, None, None,
     None, None),
    ("pv not found", pod("pvc-a"), [node("node-a")], [pvc("pvc-a", "wait-sc", "pv-a")], [], None, SUCCESS, None,
     (["pvc-a"], []), [(UU, [ERR_REASON_PV_NOT_EXIST])], SKIP, None),
    ("pv not found claim lost", pod("pvc-a"), [node("node-a")], [pvc("pvc-a", "wait-sc", "pv-a", phase="Lost")], [],
     None, (UU, ['persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"']), None, None, None,
     None, None),
    ("local volumes with close capacity are preferred", pod("pvc-a"),
     [node("node-a"), node("node-b"), node("node-c")], [pvc("pvc-a", "wait-sc", request="50Gi")],
     [local("pv-a-0", "wait-sc", "200Gi", "node-a"), local("pv-a-1", "wait-sc", "200Gi", "node-a"),
      local("pv-b-0", "wait-sc", "100Gi", "node-b"), local("pv-b-1", "wait-sc", "100Gi", "node-b")], None, SUCCESS,
     None, ([], ["pvc-a"]), [SUCCESS, SUCCESS, NO_PV_TO_BIND], None, CAPACITY_GATE),
    ("local volumes with close capacity are preferred (multiple pvcs)", pod("pvc-0", "pvc-1"),
     [node("node-a"), node("node-b"), node("node-c")],
     [pvc("pvc-0", "wait-sc", request="50Gi"), pvc("pvc-1", "wait-hdd-sc", request="100Gi")],
     [local("pv-a-0", "wait-sc", "200Gi", "node-a"), local("pv-a-1", "wait-sc", "200Gi", "node-a"),
      local("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"), local("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
      local("pv-b-0", "wait-sc", "100Gi", "node-b"), local("pv-b-1", "wait-sc", "100Gi", "node-b"),
      local("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"), local("pv-b-3", "wait-hdd-sc", "100Gi", "node-b")], None,
     SUCCESS, None, ([], ["pvc-0", "pvc-1"]), [SUCCESS, SUCCESS, NO_PV_TO_BIND], None, CAPACITY_GATE),
    ("zonal volumes with close capacity are preferred", pod("pvc-a"), ZONE_NODES,
     [pvc("pvc-a", "wait-sc", request="50Gi")], ZONAL_PVS, None, SUCCESS, None, ([], ["pvc-a"]),
     [SUCCESS] * 4 + [NO_PV_TO_BIND] * 2, None, CAPACITY_GATE),
    ("zonal volumes with close capacity are preferred (custom shape)", pod("pvc-a"), ZONE_NODES,
     [pvc("pvc-a", "wait-sc", request="50Gi")], ZONAL_PVS,
     {"bindTimeoutSeconds": 300, "shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 3},
                                           {"utilization": 100, "score": 5}]}, SUCCESS, None, ([], ["pvc-a"]),
     [SUCCESS] * 4 + [NO_PV_TO_BIND] * 2, None, CAPACITY_GATE),
]


def names(claims):
    return [c["metadata"]["name"] for c in claims]


@pytest.mark.parametrize("p, nodes, pvcs, pvs, args, want_pre, want_result, want_claims, want_filter, "
                         "want_pre_score, scores", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_volume_binding(p, nodes, pvcs, pvs, args, want_pre, want_result, want_claims, want_filter, want_pre_score,
                        scores):
    h = handle([n.obj() for n in nodes], persistent_volumes=pvs, persistent_volume_claims=pvcs,
               storage_classes=STORAGE_CLASSES)
    pl = VolumeBinding.new(args or {"bindTimeoutSeconds": 300}, h)
    state, q = new_state(), p.obj()
    result, st = pl.pre_filter(state, q)
    assert (status_tuple(st), result) == (want_pre, want_result)
    if st is not None:
        return  # the framework runs no Filter after a PreFilter that did not succeed
    s = state.read(STATE_KEY)
    if want_claims is not None:
        assert (names(pvc_ for pvc_, _pv in s.claims.bound), names(s.claims.unbound_delay_binding)) == want_claims
    assert [status_tuple(pl.filter(state, q, ni)) for ni in h.snapshot.node_infos] == want_filter
    if scores == CAPACITY_GATE:
        pytest.skip(CAPACITY_GATE)
    assert status_tuple(pl.pre_score(state, q, h.snapshot.node_infos)) == want_pre_score
