"""kube's volumezone/volume_zone_test.go: TestSingleZone, TestMultiZone and TestWithBinding, case by case.

Each case runs PreFilter and then Filter with the same CycleState, as kube's loop does (Filter recomputes the
volumes' topologies when PreFilter stored nothing).

One expectation differs in text only: kube's test lister (testing/framework StorageClassLister) reports a missing
class as ``storageclasses.storage.k8s.io "Class_0" not found``, the scheduler's informer lister (which
scheduler_core follows) as ``storageclass.storage.k8s.io "Class_0" not found``; the case asserts the latter.
"""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.helper.volume import not_found
from scheduler_core.plugins.volumezone import (ERR_REASON_CONFLICT, LABEL_BETA_REGION, LABEL_BETA_ZONE,
                                               LABEL_REGION, LABEL_ZONE, VolumeZone)

from .plugin_cases import SUCCESS, handle, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go"
UPSTREAM_VERSION = ("v1.30 era (commit 52a622ad: testing/framework listers, PreFilter, the PVC/StorageClass/PV "
                    "queueing-hint tables)")
UPSTREAM_CASES = 24
UPSTREAM_NOT_TRANSLATED = {
    "TestIsSchedulableAfterPersistentVolumeClaimAdded": "7 queueing-hint cases",
    "TestIsSchedulableAfterStorageClassAdded": "3 queueing-hint cases",
    "TestIsSchedulableAfterPersistentVolumeChange": "6 queueing-hint cases; SchedulerQueueingHints is off in v1.30 "
                                                    "and scheduler_core has no queueing hints",
}

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
CONFLICT = (UU, [ERR_REASON_CONFLICT])
SKIP = (Code.SKIP, [])


def pv(name, labels):
    return {"metadata": {"name": name, "labels": dict(labels)}, "spec": {}}


def pvc(name, volume="", storage_class=None):
    spec = {}
    if volume:
        spec["volumeName"] = volume
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pod_with_volume(pod, claim):
    return make_pod().name(pod).namespace("default").pvc(claim)


def host(labels=None):
    n = make_node().name("host1")
    return n.labels(labels) if labels else n


def run(h, case_pod, node):
    """(PreFilter status, Filter status) with one CycleState."""
    pl = VolumeZone.new(None, h)
    state, p = new_state(), case_pod.obj()
    _res, pre = pl.pre_filter(state, p)
    return status_tuple(pre), status_tuple(pl.filter(state, p, node_info(node.obj())))


SINGLE_PVS = [
    pv("Vol_1", {LABEL_BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {LABEL_BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", {LABEL_BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", {LABEL_ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {LABEL_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", {LABEL_ZONE: "us-west1-a", LABEL_REGION: "us-west1-a"}),
]
SINGLE_PVCS = [pvc("PVC_1", "Vol_1"), pvc("PVC_2", "Vol_2"), pvc("PVC_3", "Vol_3"), pvc("PVC_4", "Vol_not_exist"),
               pvc("PVC_Stable_1", "Vol_Stable_1"), pvc("PVC_Stable_2", "Vol_Stable_2"),
               pvc("PVC_Stable_3", "Vol_Stable_3")]
USELESS = {"uselessLabel": "none"}

SINGLE_ZONE = [
    ("pod without volume", make_pod().name("pod_1").namespace("default"), host({LABEL_BETA_ZONE: "us-west1-a"}),
     SKIP, SUCCESS),
    ("node without labels", pod_with_volume("pod_1", "PVC_1"), host(), SUCCESS, SUCCESS),
    ("beta zone label matched", pod_with_volume("pod_1", "PVC_1"), host({LABEL_BETA_ZONE: "us-west1-a", **USELESS}),
     SUCCESS, SUCCESS),
    ("beta region label matched", pod_with_volume("pod_1", "PVC_2"),
     host({LABEL_BETA_REGION: "us-west1", **USELESS}), SUCCESS, SUCCESS),
    ("beta region label doesn't match", pod_with_volume("pod_1", "PVC_2"),
     host({LABEL_BETA_REGION: "no_us-west1", **USELESS}), SUCCESS, CONFLICT),
    ("beta zone label doesn't match", pod_with_volume("pod_1", "PVC_1"),
     host({LABEL_BETA_ZONE: "no_us-west1-a", **USELESS}), SUCCESS, CONFLICT),
    ("zone label matched", pod_with_volume("pod_1", "PVC_Stable_1"), host({LABEL_ZONE: "us-west1-a", **USELESS}),
     SUCCESS, SUCCESS),
    ("region label matched", pod_with_volume("pod_1", "PVC_Stable_2"), host({LABEL_REGION: "us-west1", **USELESS}),
     SUCCESS, SUCCESS),
    ("region label doesn't match", pod_with_volume("pod_1", "PVC_Stable_2"),
     host({LABEL_REGION: "no_us-west1", **USELESS}), SUCCESS, CONFLICT),
    ("zone label doesn't match", pod_with_volume("pod_1", "PVC_Stable_1"),
     host({LABEL_ZONE: "no_us-west1-a", **USELESS}), SUCCESS, CONFLICT),
    ("pv with zone and region, node with only zone", pod_with_volume("pod_1", "PVC_Stable_3"),
     host({LABEL_ZONE: "us-west1-a"}), SUCCESS, CONFLICT),
    ("pv with zone,node with beta zone", pod_with_volume("pod_1", "PVC_Stable_1"),
     host({LABEL_BETA_ZONE: "us-west1-a"}), SUCCESS, CONFLICT),
    ("pv with beta label,node with ga label, matched", pod_with_volume("pod_1", "PVC_1"),
     host({LABEL_ZONE: "us-west1-a"}), SUCCESS, SUCCESS),
    ("pv with beta label,node with ga label, don't match", pod_with_volume("pod_1", "PVC_1"),
     host({LABEL_ZONE: "us-west1-b"}), SUCCESS, CONFLICT),
]


@pytest.mark.parametrize("pod, node, want_pre, want_filter", [c[1:] for c in SINGLE_ZONE],
                         ids=[c[0] for c in SINGLE_ZONE])
def test_single_zone(pod, node, want_pre, want_filter):
    h = handle(persistent_volumes=SINGLE_PVS, persistent_volume_claims=SINGLE_PVCS)
    assert run(h, pod, node) == (want_pre, want_filter)


MULTI_PVS = [
    pv("Vol_1", {LABEL_BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {LABEL_BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", {LABEL_BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", {LABEL_ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {LABEL_ZONE: "us-west1-c__us-west1-a"}),
]
MULTI_PVCS = [pvc("PVC_1", "Vol_1"), pvc("PVC_2", "Vol_2"), pvc("PVC_3", "Vol_3"), pvc("PVC_4", "Vol_not_exist"),
              pvc("PVC_Stable_1", "Vol_Stable_1"), pvc("PVC_Stable_2", "Vol_Stable_2")]

MULTI_ZONE = [
    ("node without labels", pod_with_volume("pod_1", "PVC_3"), host(), SUCCESS, SUCCESS),
    ("beta zone label matched", pod_with_volume("pod_1", "PVC_3"), host({LABEL_BETA_ZONE: "us-west1-a", **USELESS}),
     SUCCESS, SUCCESS),
    ("beta zone label doesn't match", pod_with_volume("pod_1", "PVC_1"),
     host({LABEL_BETA_ZONE: "us-west1-b", **USELESS}), SUCCESS, CONFLICT),
    ("zone label matched", pod_with_volume("pod_1", "PVC_Stable_2"), host({LABEL_ZONE: "us-west1-a", **USELESS}),
     SUCCESS, SUCCESS),
    ("zone label doesn't match", pod_with_volume("pod_1", "PVC_Stable_1"),
     host({LABEL_ZONE: "us-west1-b", **USELESS}), SUCCESS, CONFLICT),
]


@pytest.mark.parametrize("pod, node, want_pre, want_filter", [c[1:] for c in MULTI_ZONE],
                         ids=[c[0] for c in MULTI_ZONE])
def test_multi_zone(pod, node, want_pre, want_filter):
    h = handle(persistent_volumes=MULTI_PVS, persistent_volume_claims=MULTI_PVCS)
    assert run(h, pod, node) == (want_pre, want_filter)


BINDING_SCS = [{"metadata": {"name": "Class_Immediate"}},
               {"metadata": {"name": "Class_Wait"}, "volumeBindingMode": "WaitForFirstConsumer"}]
BINDING_PVS = [pv("Vol_1", {LABEL_BETA_ZONE: "us-west1-a"})]
BINDING_PVCS = [pvc("PVC_1", "Vol_1"), pvc("PVC_NoSC", storage_class="Class_0"), pvc("PVC_EmptySC"),
                pvc("PVC_WaitSC", storage_class="Class_Wait"), pvc("PVC_ImmediateSC", storage_class="Class_Immediate")]
TEST_NODE = host({LABEL_BETA_ZONE: "us-west1-a", **USELESS})
NO_NAMES = (UU, ["PersistentVolumeClaim had no pv name and storageClass name"])
# kube's test lister says storageclasses.storage.k8s.io; the informer lister says storageclass (module docstring).
NO_CLASS = (UU, [not_found("storageclass.storage.k8s.io", "Class_0")])
NO_MODE = (UU, ['VolumeBindingMode not set for StorageClass "Class_Immediate"'])

WITH_BINDING = [
    ("label zone failure domain matched", pod_with_volume("pod_1", "PVC_1"), SUCCESS, SUCCESS),
    ("unbound volume empty storage class", pod_with_volume("pod_1", "PVC_EmptySC"), NO_NAMES, NO_NAMES),
    ("unbound volume no storage class", pod_with_volume("pod_1", "PVC_NoSC"), NO_CLASS, NO_CLASS),
    ("unbound volume immediate binding mode", pod_with_volume("pod_1", "PVC_ImmediateSC"), NO_MODE, NO_MODE),
    ("unbound volume wait binding mode", pod_with_volume("pod_1", "PVC_WaitSC"), SKIP, SUCCESS),
]


@pytest.mark.parametrize("pod, want_pre, want_filter", [c[1:] for c in WITH_BINDING],
                         ids=[c[0] for c in WITH_BINDING])
def test_with_binding(pod, want_pre, want_filter):
    h = handle(persistent_volumes=BINDING_PVS, persistent_volume_claims=BINDING_PVCS, storage_classes=BINDING_SCS)
    assert run(h, pod, TEST_NODE) == (want_pre, want_filter)
