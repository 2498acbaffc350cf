"""kube's volumebinding/binder_test.go, case by case: the FindPodVolumes, AssumePodVolumes, CheckBindings and
Capacity tables.

kube's ``findPodVolumes`` helper runs GetPodVolumeClaims, fails when unbound immediate claims remain, then
FindPodVolumes for one node; each case checks whether it failed, its conflict reasons (order ignored, as
checkReasons sorts) and the PodVolumes it chose (static bindings and dynamic provisions, compared as objects).
The without/with-provisioning tables run every scenario under three CSIDriver set-ups, as kube's subtests do
("<set-up>/<scenario>"); a case's expectation does not depend on the set-up except where kube's run function
adds ErrReasonNotEnoughSpace (capacity tracking on, no CSIStorageCapacity objects).

Fixtures follow kube's makeTestPVC/makeTestPV/makeCSINode/makeCSIDriver and the storage classes of newTestBinder.
kube's pods have an empty UID and its owned ephemeral claim names that UID; here a pod always has a UID (its
namespace/name when unset), so the owned claim's owner reference names the pod's UID, whatever it is.

kube's API updates go through its fake clientset, whose PV-controller reactor bumps resourceVersion; here an
update replaces the cluster object with a copy one version newer, and a deletion removes it.
DynamicProvision.NodeCapacity (the CSIStorageCapacity chosen, a later field kept for StorageCapacityScoring) has no
counterpart here; TestCapacity is compared on claims and reasons only.
"""
import copy

import pytest

from scheduler_core.plugins.helper.volume import (ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE,
                                                  MIGRATED_PLUGINS_ANNOTATION)
from scheduler_core.plugins.volumebinding.binder import (ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT,
                                                         ERR_REASON_NOT_ENOUGH_SPACE, ERR_REASON_PV_NOT_EXIST,
                                                         BinderError, BindingInfo, PodVolumes, VolumeBinder)
from scheduler_core.plugins.volumebinding.binder import pvc_key as claim_key

from .plugin_cases import handle, make_node, make_pod

UPSTREAM = "pkg/scheduler/framework/plugins/volumebinding/binder_test.go"
UPSTREAM_VERSION = ("v1.33 era (commit f6ddee95: scheduler/util/assumecache, DynamicProvision with NodeCapacity); "
                    "the v1.30 file is not in the index")
UPSTREAM_CASES = 151
UPSTREAM_NOT_TRANSLATED = {
    "TestBindAPIUpdate": "11 cases: API-update conflicts of kube's fake clientset and PV controller reactor "
                         "(they test the fake's version checks, not the binder's decisions)",
    "TestBindPodVolumes": "12 cases: timed goroutines (5s delays, bind timeouts) over the fake clientset",
}

PROVISIONER = "test-provisioner"
NODE_KEY, NODE_VALUE = "nodeKey", "node1"
WAIT, IMMEDIATE = "waitClass", "immediateClass"
WAIT_PROV, TOPO_MISMATCH = "waitClassWithProvisioner", "topoMismatchClass"
GCE_PD = "kubernetes.io/gce-pd"

STORAGE_CLASSES = [
    {"metadata": {"name": WAIT_PROV}, "volumeBindingMode": "WaitForFirstConsumer", "provisioner": PROVISIONER,
     "allowedTopologies": [{"matchLabelExpressions": [{"key": NODE_KEY, "values": [NODE_VALUE, "reference-value"]}]}]},
    {"metadata": {"name": IMMEDIATE}, "volumeBindingMode": "Immediate"},
    {"metadata": {"name": WAIT}, "volumeBindingMode": "WaitForFirstConsumer",
     "provisioner": "kubernetes.io/no-provisioner"},
    {"metadata": {"name": TOPO_MISMATCH}, "volumeBindingMode": "WaitForFirstConsumer", "provisioner": PROVISIONER,
     "allowedTopologies": [{"matchLabelExpressions": [{"key": NODE_KEY, "values": ["reference-value"]}]}]},
]

UNBOUND, PREBOUND, BOUND, SELECTED_NODE = range(4)


def make_test_pvc(name, size, node, state, pv_name, rv, cls):
    """makeTestPVC: namespace testns, uid pvc-uid, Filesystem mode."""
    pvc = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
           "metadata": {"name": name, "namespace": "testns", "uid": "pvc-uid", "resourceVersion": rv},
           "spec": {"resources": {"requests": {"storage": size}}, "storageClassName": cls,
                    "volumeMode": "Filesystem"}}
    if state == SELECTED_NODE:
        pvc["metadata"]["annotations"] = {ANN_SELECTED_NODE: node}
    if state == BOUND:
        pvc["metadata"]["annotations"] = {ANN_BIND_COMPLETED: "yes"}
    if state in (BOUND, PREBOUND):
        pvc["spec"]["volumeName"] = pv_name
    return pvc


def make_test_pv(name, node, capacity, rv, bound_to, cls):
    """makeTestPV: Available, Filesystem mode, node affinity nodeKey In [node], claimRef to ``bound_to``."""
    pv = {"metadata": {"name": name, "resourceVersion": rv},
          "spec": {"capacity": {"storage": capacity}, "storageClassName": cls, "volumeMode": "Filesystem"},
          "status": {"phase": "Available"}}
    if node:
        pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": NODE_KEY, "operator": "In", "values": [node]}]}]}}
    if bound_to is not None:
        m = bound_to["metadata"]
        pv["spec"]["claimRef"] = {"kind": bound_to.get("kind", ""), "apiVersion": bound_to.get("apiVersion", ""),
                                  "resourceVersion": m.get("resourceVersion", ""), "name": m["name"],
                                  "namespace": m["namespace"], "uid": m.get("uid", "")}
        pv["metadata"]["annotations"] = {ANN_BOUND_BY_CONTROLLER: "yes"}
    return pv


def pod_builder(pvcs=()):
    """makePod("test-pod").withNamespace("testns").withNodeName("node1").withPVCSVolume(pvcs)."""
    w = make_pod().name("test-pod").namespace("testns").node("node1")
    for i, c in enumerate(pvcs):
        w.volume({"name": f"vol{i}", "persistentVolumeClaim": {"claimName": c["metadata"]["name"]}})
    return w


def generic_ephemeral_pod(volume_name):
    return pod_builder().volume({"name": volume_name, "ephemeral": {}})


def generic_pvc(volume_name, owned):
    """makeGenericEphemeralPVC: bound to pv-bound (immediate class), controlled by the test pod when owned."""
    pvc = make_test_pvc("test-pod-" + volume_name, "1G", "", BOUND, "pv-bound", "1", IMMEDIATE)
    if owned:
        pod = generic_ephemeral_pod("").obj()
        pvc["metadata"]["ownerReferences"] = [{"name": pod.name, "uid": pod.uid, "controller": True}]
    return pvc


unboundPVC = make_test_pvc("unbound-pvc", "1G", "", UNBOUND, "", "1", WAIT)
unboundPVC2 = make_test_pvc("unbound-pvc2", "5G", "", UNBOUND, "", "1", WAIT)
preboundPVC = make_test_pvc("prebound-pvc", "1G", "", PREBOUND, "pv-node1a", "1", WAIT)
preboundPVCNode1a = make_test_pvc("unbound-pvc", "1G", "", PREBOUND, "pv-node1a", "1", WAIT)
boundPVC = make_test_pvc("bound-pvc", "1G", "", BOUND, "pv-bound", "1", WAIT)
boundPVCNode1a = make_test_pvc("unbound-pvc", "1G", "", BOUND, "pv-node1a", "1", WAIT)
immediateUnboundPVC = make_test_pvc("immediate-unbound-pvc", "1G", "", UNBOUND, "", "1", IMMEDIATE)
immediateBoundPVC = make_test_pvc("immediate-bound-pvc", "1G", "", BOUND, "pv-bound-immediate", "1", IMMEDIATE)
provisionedPVC = make_test_pvc("provisioned-pvc", "1Gi", "", UNBOUND, "", "1", WAIT_PROV)
provisionedPVC2 = make_test_pvc("provisioned-pvc2", "1Gi", "", UNBOUND, "", "1", WAIT_PROV)
provisionedPVCHigherVersion = make_test_pvc("provisioned-pvc2", "1Gi", "", UNBOUND, "", "2", WAIT_PROV)
noProvisionerPVC = make_test_pvc("no-provisioner-pvc", "1Gi", "", UNBOUND, "", "1", WAIT)
topoMismatchPVC = make_test_pvc("topo-mismatch-pvc", "1Gi", "", UNBOUND, "", "1", TOPO_MISMATCH)
provisionedPVCBound = make_test_pvc("provisioned-pvc", "1Gi", "", BOUND, "pv-bound", "1", WAIT_PROV)
provMigrationPVCBound = make_test_pvc("pvc-migration-provisioned", "1Gi", "", BOUND, "pv-migration-bound", "1",
                                      WAIT_PROV)
selectedNodePVC = make_test_pvc("provisioned-pvc", "1Gi", NODE_VALUE, SELECTED_NODE, "", "1", WAIT_PROV)
boundMigrationPVC = make_test_pvc("pvc-migration-bound", "1G", "", BOUND, "pv-migration-bound", "1", WAIT)
conflictingGenericPVC = generic_pvc("test-volume", False)
correctGenericPVC = generic_pvc("test-volume", True)

pvBoundGeneric = make_test_pv("pv-bound", "node1", "1G", "1", correctGenericPVC, WAIT)
pvNode1a = make_test_pv("pv-node1a", "node1", "5G", "1", None, WAIT)
pvNode1b = make_test_pv("pv-node1b", "node1", "10G", "1", None, WAIT)
pvNode1c = make_test_pv("pv-node1b", "node1", "5G", "1", None, WAIT)
pvNode2 = make_test_pv("pv-node2", "node2", "1G", "1", None, WAIT)
pvBound = make_test_pv("pv-bound", "node1", "1G", "1", boundPVC, WAIT)
pvNode1aBound = make_test_pv("pv-node1a", "node1", "5G", "1", unboundPVC, WAIT)
pvNode1bBound = make_test_pv("pv-node1b", "node1", "10G", "1", unboundPVC2, WAIT)
pvBoundImmediate = make_test_pv("pv-bound-immediate", "node1", "1G", "1", immediateBoundPVC, IMMEDIATE)
pvBoundImmediateNode2 = make_test_pv("pv-bound-immediate", "node2", "1G", "1", immediateBoundPVC, IMMEDIATE)


def migration_pv(labels, pvc, migration_enabled=True):
    """makeTestPVForCSIMigration: a GCE PD PV (an RBD one when migration is not enabled), no node affinity."""
    pv = make_test_pv("pv-migration-bound", "node1", "1G", "1", pvc, WAIT)
    del pv["spec"]["nodeAffinity"]
    pv["metadata"]["labels"] = dict(labels)
    if migration_enabled:
        pv["spec"]["gcePersistentDisk"] = {"pdName": "test-disk", "fsType": "ext4", "partition": 0,
                                           "readOnly": False}
    else:
        pv["spec"]["rbd"] = {"image": "test-disk"}
    return pv


zone1Labels = {"failure-domain.beta.kubernetes.io/zone": "us-east-1",
               "failure-domain.beta.kubernetes.io/region": "us-east-1a"}
migrationPVBound = migration_pv(zone1Labels, boundMigrationPVC)
migrationPVBoundToUnbound = migration_pv(zone1Labels, unboundPVC)
nonmigrationPVBoundToUnbound = migration_pv(zone1Labels, unboundPVC, False)


def binding(pvc, pv):
    return (pvc, pv)


def csi_node(name, migrated):
    return {"metadata": {"name": name, "annotations": {MIGRATED_PLUGINS_ANNOTATION: migrated}}}


def csi_driver(name, capacity):
    return {"metadata": {"name": name}, "spec": {"storageCapacity": capacity}}


csiNode1Migrated = csi_node("node1", GCE_PD)
csiNode1NotMigrated = csi_node("node1", "")
testNode = make_node().name("node1").label(NODE_KEY, NODE_VALUE)
node1 = make_node().name("node1").label("kubernetes.io/hostname", "node1").label(NODE_KEY, "node1")
node2 = make_node().name("node2").label("kubernetes.io/hostname", "node2").label(NODE_KEY, "node2")
node1Zone1 = make_node().name("node1").label("kubernetes.io/hostname", "node1").label("topology.gke.io/zone",
                                                                                     "us-east-1")
node1Zone2 = make_node().name("node1").label("kubernetes.io/hostname", "node1").label("topology.gke.io/zone",
                                                                                     "us-east-2")

DRIVERS = [("no CSIDriver", None), ("CSIDriver with capacity tracking", csi_driver(PROVISIONER, True)),
           ("CSIDriver without capacity tracking", csi_driver(PROVISIONER, False))]


def find_pod_volumes(pod_wrapper, node_wrapper, pvs=(), cache_pvcs=(), drivers=(), csi_nodes=()):
    """kube's findPodVolumes -> (PodVolumes or None, reasons, failed)."""
    node = node_wrapper.obj()
    h = handle([node], persistent_volumes=copy.deepcopy(list(pvs)),
               persistent_volume_claims=copy.deepcopy(list(cache_pvcs)), storage_classes=STORAGE_CLASSES,
               csi_drivers=list(drivers), csi_nodes=list(csi_nodes))
    binder = VolumeBinder(h, 10)
    claims, err = binder.get_pod_volume_claims(pod_wrapper.obj())
    if err is not None or claims.unbound_immediate:
        return None, [], True
    try:
        pod_volumes, reasons = binder.find_pod_volumes(claims, node, h.objects.csi_nodes.get(node.name))
    except BinderError:
        return None, [], True
    return pod_volumes, reasons, False


def check(pod_volumes, reasons, failed, should_fail, want_reasons, want_bindings, want_provisions):
    assert failed == should_fail
    assert sorted(reasons) == sorted(want_reasons)
    bindings = [] if pod_volumes is None else [(b.pvc, b.pv) for b in pod_volumes.static_bindings]
    provisions = [] if pod_volumes is None else list(pod_volumes.dynamic_provisions)
    assert bindings == list(want_bindings)
    assert provisions == list(want_provisions)


def scenario(pvcs=None, pvs=(), cache_pvcs=None, pod=None, bindings=(), provisions=(), reasons=(), fail=False,
             needs_capacity=False):
    return {"pvcs": pvcs or [], "pvs": pvs, "cache_pvcs": cache_pvcs, "pod": pod, "bindings": bindings,
            "provisions": provisions, "reasons": list(reasons), "fail": fail, "needs_capacity": needs_capacity}


WITHOUT_PROVISIONING = {
    "no-volumes": scenario(pod=pod_builder()),
    "no-pvcs": scenario(pod=pod_builder().volume({"emptyDir": {}})),
    "pvc-not-found": scenario(cache_pvcs=[], pvcs=[boundPVC], fail=True),
    "bound-pvc": scenario(pvcs=[boundPVC], pvs=[pvBound]),
    "bound-pvc,pv-not-exists": scenario(pvcs=[boundPVC], reasons=[ERR_REASON_PV_NOT_EXIST]),
    "prebound-pvc": scenario(pvcs=[preboundPVC], pvs=[pvNode1aBound], fail=True),
    "unbound-pvc,pv-same-node": scenario(pvcs=[unboundPVC], pvs=[pvNode2, pvNode1a, pvNode1b],
                                         bindings=[binding(unboundPVC, pvNode1a)]),
    "unbound-pvc,pv-different-node": scenario(pvcs=[unboundPVC], pvs=[pvNode2], reasons=[ERR_REASON_BIND_CONFLICT]),
    "two-unbound-pvcs": scenario(pvcs=[unboundPVC, unboundPVC2], pvs=[pvNode1a, pvNode1b],
                                 bindings=[binding(unboundPVC, pvNode1a), binding(unboundPVC2, pvNode1b)]),
    "two-unbound-pvcs,order-by-size": scenario(pvcs=[unboundPVC2, unboundPVC], pvs=[pvNode1a, pvNode1b],
                                               bindings=[binding(unboundPVC, pvNode1a),
                                                         binding(unboundPVC2, pvNode1b)]),
    "two-unbound-pvcs,partial-match": scenario(pvcs=[unboundPVC, unboundPVC2], pvs=[pvNode1a],
                                               bindings=[binding(unboundPVC, pvNode1a)],
                                               reasons=[ERR_REASON_BIND_CONFLICT]),
    "one-bound,one-unbound": scenario(pvcs=[unboundPVC, boundPVC], pvs=[pvBound, pvNode1a],
                                      bindings=[binding(unboundPVC, pvNode1a)]),
    "one-bound,one-unbound,no-match": scenario(pvcs=[unboundPVC, boundPVC], pvs=[pvBound, pvNode2],
                                               reasons=[ERR_REASON_BIND_CONFLICT]),
    "one-prebound,one-unbound": scenario(pvcs=[unboundPVC, preboundPVC], pvs=[pvNode1a, pvNode1b], fail=True),
    "immediate-bound-pvc": scenario(pvcs=[immediateBoundPVC], pvs=[pvBoundImmediate]),
    "immediate-bound-pvc-wrong-node": scenario(pvcs=[immediateBoundPVC], pvs=[pvBoundImmediateNode2],
                                               reasons=[ERR_REASON_NODE_CONFLICT]),
    "immediate-unbound-pvc": scenario(pvcs=[immediateUnboundPVC], fail=True),
    "immediate-unbound-pvc,delayed-mode-bound": scenario(pvcs=[immediateUnboundPVC, boundPVC], pvs=[pvBound],
                                                         fail=True),
    "immediate-unbound-pvc,delayed-mode-unbound": scenario(pvcs=[immediateUnboundPVC, unboundPVC], fail=True),
    "generic-ephemeral,no-pvc": scenario(pod=generic_ephemeral_pod("no-such-pvc"), fail=True),
    "generic-ephemeral,with-pvc": scenario(pod=generic_ephemeral_pod("test-volume"), cache_pvcs=[correctGenericPVC],
                                           pvs=[pvBoundGeneric]),
    "generic-ephemeral,wrong-pvc": scenario(pod=generic_ephemeral_pod("test-volume"),
                                            cache_pvcs=[conflictingGenericPVC], pvs=[pvBoundGeneric], fail=True),
}

WITH_PROVISIONING = {
    "one-provisioned": scenario(pvcs=[provisionedPVC], provisions=[provisionedPVC], needs_capacity=True),
    "two-unbound-pvcs,one-matched,one-provisioned": scenario(
        pvcs=[unboundPVC, provisionedPVC], pvs=[pvNode1a], bindings=[binding(unboundPVC, pvNode1a)],
        provisions=[provisionedPVC], needs_capacity=True),
    "one-bound,one-provisioned": scenario(pvcs=[boundPVC, provisionedPVC], pvs=[pvBound], provisions=[provisionedPVC],
                                          needs_capacity=True),
    "one-binding,one-selected-node": scenario(pvcs=[boundPVC, selectedNodePVC], pvs=[pvBound],
                                              provisions=[selectedNodePVC], needs_capacity=True),
    "immediate-unbound-pvc": scenario(pvcs=[immediateUnboundPVC], fail=True),
    "one-immediate-bound,one-provisioned": scenario(pvcs=[immediateBoundPVC, provisionedPVC], pvs=[pvBoundImmediate],
                                                    provisions=[provisionedPVC], needs_capacity=True),
    "invalid-provisioner": scenario(pvcs=[noProvisionerPVC], reasons=[ERR_REASON_BIND_CONFLICT]),
    "volume-topology-unsatisfied": scenario(pvcs=[topoMismatchPVC], reasons=[ERR_REASON_BIND_CONFLICT]),
}

# (name, pvs, pvcs, node, csi nodes, reasons)
WITH_CSI_MIGRATION = [
    ("pvc-bound", [migrationPVBound], [boundMigrationPVC], node1Zone1, [csiNode1Migrated], []),
    ("pvc-bound,csinode-not-migrated", [migrationPVBound], [boundMigrationPVC], node1Zone1, [csiNode1NotMigrated], []),
    ("pvc-bound,missing-csinode", [migrationPVBound], [boundMigrationPVC], node1Zone1, [], []),
    ("pvc-bound,node-different-zone", [migrationPVBound], [boundMigrationPVC], node1Zone2, [csiNode1Migrated],
     [ERR_REASON_NODE_CONFLICT]),
]


def matrix(table):
    return [pytest.param(driver, sc, id=f"{desc}/{name}") for desc, driver in DRIVERS for name, sc in table.items()]


def run(driver, sc):
    cache_pvcs = sc["pvcs"] if sc["cache_pvcs"] is None else sc["cache_pvcs"]
    pod = sc["pod"] or pod_builder(sc["pvcs"])
    got = find_pod_volumes(pod, testNode, sc["pvs"], cache_pvcs, [driver] if driver else [])
    reasons, provisions = list(sc["reasons"]), sc["provisions"]
    if sc["needs_capacity"] and driver is not None and driver["spec"]["storageCapacity"]:
        reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)   # no CSIStorageCapacity objects: provisioning is blocked
        provisions = ()
    check(*got, sc["fail"], reasons, sc["bindings"], provisions)


@pytest.mark.parametrize("driver, sc", matrix(WITHOUT_PROVISIONING))
def test_find_pod_volumes_without_provisioning(driver, sc):
    run(driver, sc)


@pytest.mark.parametrize("driver, sc", matrix(WITH_PROVISIONING))
def test_find_pod_volumes_with_provisioning(driver, sc):
    run(driver, sc)


@pytest.mark.parametrize("pvs, pvcs, node, csi_nodes, reasons", [c[1:] for c in WITH_CSI_MIGRATION],
                         ids=[c[0] for c in WITH_CSI_MIGRATION])
def test_find_pod_volumes_with_csi_migration(pvs, pvcs, node, csi_nodes, reasons):
    got = find_pod_volumes(pod_builder(pvcs), node, pvs, pvcs, csi_nodes=csi_nodes)
    check(*got, False, reasons, (), ())


# TestAssumePodVolumes: (name, pod pvcs, pvs, bindings, dynamic provisions, should fail, want all bound,
#  want bindings (None: the input bindings), want provisions (None: the input provisions))
ASSUME = [
    ("all-bound", [boundPVC], [pvBound], [], [], False, True, None, None),
    ("one-binding", [unboundPVC], [pvNode1a], [binding(unboundPVC, pvNode1a)], [], False, False,
     [binding(unboundPVC, pvNode1aBound)], []),
    ("two-bindings", [unboundPVC, unboundPVC2], [pvNode1a, pvNode1b],
     [binding(unboundPVC, pvNode1a), binding(unboundPVC2, pvNode1b)], [], False, False,
     [binding(unboundPVC, pvNode1aBound), binding(unboundPVC2, pvNode1bBound)], []),
    ("pv-already-bound", [unboundPVC], [pvNode1aBound], [binding(unboundPVC, pvNode1aBound)], [], False, False,
     [binding(unboundPVC, pvNode1aBound)], []),
    ("tmpupdate-failed", [unboundPVC], [pvNode1a], [binding(unboundPVC, pvNode1a), binding(unboundPVC2, pvNode1b)],
     [], True, False, None, None),
    ("one-binding, one-pvc-provisioned", [unboundPVC, provisionedPVC], [pvNode1a], [binding(unboundPVC, pvNode1a)],
     [provisionedPVC], False, False, [binding(unboundPVC, pvNode1aBound)], [selectedNodePVC]),
    ("one-binding, one-provision-tmpupdate-failed", [unboundPVC, provisionedPVCHigherVersion], [pvNode1a],
     [binding(unboundPVC, pvNode1a)], [provisionedPVC2], True, False, None, None),
]


def assume_env(pvcs, pvs, bindings, provisions):
    h = handle([testNode.obj()], persistent_volumes=copy.deepcopy(list(pvs)),
               persistent_volume_claims=copy.deepcopy(list(pvcs)), storage_classes=STORAGE_CLASSES)
    binder = VolumeBinder(h, 10)
    pod_volumes = PodVolumes([BindingInfo(copy.deepcopy(pv), copy.deepcopy(pvc)) for pvc, pv in bindings],
                             [copy.deepcopy(c) for c in provisions])
    return binder, pod_builder(pvcs).obj(), pod_volumes


def validate_assume(binder, bindings, provisions):
    """validateAssume: the cached PVs name their claims; the cached claims carry the selected node."""
    for pvc, pv in bindings:
        ref = binder.pv_cache.get(pv["metadata"]["name"])["spec"].get("claimRef")
        assert ref is not None and (ref["name"], ref["namespace"]) == (pvc["metadata"]["name"],
                                                                       pvc["metadata"]["namespace"])
    for pvc in provisions:
        got = binder.pvc_cache.get(claim_key(pvc))
        assert (got["metadata"].get("annotations") or {}).get(ANN_SELECTED_NODE) == NODE_VALUE


def validate_cache_restored(binder, bindings, provisions):
    """validateCacheRestored: cached PVs are the API objects again; cached claims have no selected node."""
    for _pvc, pv in bindings:
        name = pv["metadata"]["name"]
        cached = binder.pv_cache.get(name)
        assert cached is None or cached is binder.pv_cache.get_api(name)
    for pvc in provisions:
        got = binder.pvc_cache.get(claim_key(pvc))
        assert not (got["metadata"].get("annotations") or {}).get(ANN_SELECTED_NODE)


def validate_pod_cache(pod_volumes, bindings, provisions):
    assert [(b.pvc, b.pv) for b in pod_volumes.static_bindings] == list(bindings)
    assert list(pod_volumes.dynamic_provisions) == list(provisions)


@pytest.mark.parametrize("pvcs, pvs, bindings, provisions, should_fail, want_all_bound, want_bindings, "
                         "want_provisions", [c[1:] for c in ASSUME], ids=[c[0] for c in ASSUME])
def test_assume_pod_volumes(pvcs, pvs, bindings, provisions, should_fail, want_all_bound, want_bindings,
                            want_provisions):
    binder, pod, pod_volumes = assume_env(pvcs, pvs, bindings, provisions)
    all_bound, err = binder.assume_pod_volumes(pod, "node1", pod_volumes)
    assert (err is not None, all_bound) == (should_fail, want_all_bound)
    want_bindings = bindings if want_bindings is None else want_bindings
    want_provisions = provisions if want_provisions is None else want_provisions
    if should_fail:
        validate_cache_restored(binder, bindings, provisions)
    else:
        validate_assume(binder, want_bindings, want_provisions)
    validate_pod_cache(pod_volumes, want_bindings, want_provisions)


def test_revert_assumed_pod_volumes():
    """TestRevertAssumedPodVolumes (a single case)."""
    bindings, provisions = [binding(unboundPVC, pvNode1a)], [provisionedPVC]
    binder, pod, pod_volumes = assume_env([unboundPVC, provisionedPVC], [pvNode1a], bindings, provisions)
    all_bound, err = binder.assume_pod_volumes(pod, "node1", pod_volumes)
    assert (all_bound, err) == (False, None)
    validate_assume(binder, [binding(unboundPVC, pvNode1aBound)], [selectedNodePVC])
    binder.revert_assumed_pod_volumes(pod_volumes)
    validate_cache_restored(binder, bindings, provisions)


def with_selected_node(pvc, node=NODE_VALUE):
    """addProvisionAnn / pvcSetSelectedNode."""
    out = copy.deepcopy(pvc)
    out["metadata"].setdefault("annotations", {})[ANN_SELECTED_NODE] = node
    return out


def with_empty_annotations(pvc):
    """pvcSetEmptyAnnotations."""
    out = copy.deepcopy(pvc)
    out["metadata"]["annotations"] = {}
    return out


def without_claim_uid(pv):
    """pvRemoveClaimUID."""
    out = copy.deepcopy(pv)
    out["spec"]["claimRef"]["uid"] = ""
    return out


def api_update(store: dict, key: str, obj: dict):
    """An Update through kube's fake clientset: the reactor stores the object one resourceVersion newer."""
    new = copy.deepcopy(obj)
    new["metadata"]["resourceVersion"] = str(int(store[key]["metadata"].get("resourceVersion") or 0) + 1)
    store[key] = new


NIL_SLICES = ("not applicable: kube's nil-slice checks (a Go nil vs empty distinction; PodVolumes here always holds "
              "lists)")

# TestCheckBindings: (name, init PVs, init PVCs, bindings, provisioned PVCs, API PVs, API PVCs, delete PVs,
#  delete PVCs, should fail, want bound)
CHECK_BINDINGS = [
    ("nothing-to-bind-nil", [], [], None, None, [], [], False, False, True, False),
    ("nothing-to-bind-bindings-nil", [], [], None, [], [], [], False, False, True, False),
    ("nothing-to-bind-provisionings-nil", [], [], [], None, [], [], False, False, True, False),
    ("nothing-to-bind", [], [], [], [], [], [], False, False, False, True),
    ("binding-bound", [pvNode1aBound], [boundPVCNode1a], [binding(unboundPVC, pvNode1aBound)], [], [], [], False,
     False, False, True),
    ("binding-prebound", [pvNode1aBound], [preboundPVCNode1a], [binding(unboundPVC, pvNode1aBound)], [], [], [],
     False, False, False, False),
    ("binding-unbound", [pvNode1aBound], [unboundPVC], [binding(unboundPVC, pvNode1aBound)], [], [], [], False,
     False, False, False),
    ("binding-pvc-not-exists", [pvNode1aBound], [], [binding(unboundPVC, pvNode1aBound)], [], [], [], False, False,
     True, False),
    ("binding-pv-not-exists", [pvNode1aBound], [boundPVCNode1a], [binding(unboundPVC, pvNode1aBound)], [], [], [],
     True, False, True, False),
    ("binding-claimref-nil", [pvNode1a], [boundPVCNode1a], [binding(unboundPVC, pvNode1aBound)], [], [pvNode1a],
     [boundPVCNode1a], False, False, True, False),
    ("binding-claimref-uid-empty", [pvNode1aBound], [boundPVCNode1a], [binding(unboundPVC, pvNode1aBound)], [],
     [without_claim_uid(pvNode1aBound)], [boundPVCNode1a], False, False, True, False),
    ("binding-one-bound,one-unbound", [pvNode1aBound, pvNode1bBound], [boundPVCNode1a, unboundPVC2],
     [binding(unboundPVC, pvNode1aBound), binding(unboundPVC2, pvNode1bBound)], [], [], [], False, False, False,
     False),
    ("provisioning-pvc-bound", [pvBound], [provisionedPVCBound], [], [with_selected_node(provisionedPVC)], [],
     [with_selected_node(provisionedPVCBound)], False, False, False, True),
    ("provisioning-pvc-unbound", [], [with_selected_node(provisionedPVC)], [], [with_selected_node(provisionedPVC)],
     [], [], False, False, False, False),
    ("provisioning-pvc-not-exists", [], [provisionedPVC], [], [with_selected_node(provisionedPVC)], [], [], False,
     True, True, False),
    ("provisioning-pvc-annotations-nil", [], [provisionedPVC], [], [with_selected_node(provisionedPVC)], [],
     [provisionedPVC], False, False, True, False),
    ("provisioning-pvc-selected-node-dropped", [], [provisionedPVC], [], [with_selected_node(provisionedPVC)], [],
     [with_empty_annotations(provisionedPVC)], False, False, True, False),
    ("provisioning-pvc-selected-node-wrong-node", [], [provisionedPVC], [], [with_selected_node(provisionedPVC)], [],
     [with_selected_node(provisionedPVC, "wrong-node")], False, False, True, False),
    ("binding-bound-provisioning-unbound", [pvNode1aBound], [boundPVCNode1a, with_selected_node(provisionedPVC)],
     [binding(unboundPVC, pvNode1aBound)], [with_selected_node(provisionedPVC)], [], [], False, False, False, False),
    ("tolerate-provisioning-pvc-bound-pv-not-found", [pvNode1a], [provisionedPVC], [],
     [with_selected_node(provisionedPVC)], [], [with_selected_node(provisionedPVCBound)], True, False, False, False),
]


def check_bindings(nodes, csi_nodes, init_pvs, init_pvcs, bindings, provisioned, api_pvs, api_pvcs, delete_pvs,
                   delete_pvcs):
    """kube's checkBindings run: init the caches, assume the bindings and claims, apply API updates or deletions,
    then check. Returns (bound, failed)."""
    h = handle([n.obj() for n in nodes], persistent_volumes=copy.deepcopy(list(init_pvs)),
               persistent_volume_claims=copy.deepcopy(list(init_pvcs)), storage_classes=STORAGE_CLASSES,
               csi_nodes=list(csi_nodes))
    binder = VolumeBinder(h, 10)
    pod_volumes = PodVolumes([BindingInfo(copy.deepcopy(pv), copy.deepcopy(pvc)) for pvc, pv in bindings],
                             [copy.deepcopy(c) for c in provisioned])
    for b in pod_volumes.static_bindings:
        assert binder.pv_cache.assume(b.pv["metadata"]["name"], b.pv) is None
    for c in pod_volumes.dynamic_provisions:
        assert binder.pvc_cache.assume(claim_key(c), c) is None
    objects = h.objects
    if delete_pvs:
        for pv in init_pvs:
            objects.persistent_volumes.pop(pv["metadata"]["name"], None)
    else:
        for pv in api_pvs:
            api_update(objects.persistent_volumes, pv["metadata"]["name"], pv)
    if delete_pvcs:
        for pvc in init_pvcs:
            objects.persistent_volume_claims.pop(claim_key(pvc), None)
    else:
        for pvc in api_pvcs:
            api_update(objects.persistent_volume_claims, claim_key(pvc), pvc)
    try:
        return binder.check_bindings("node1", pod_volumes), False
    except BinderError:
        return False, True


@pytest.mark.parametrize("init_pvs, init_pvcs, bindings, provisioned, api_pvs, api_pvcs, delete_pvs, delete_pvcs, "
                         "should_fail, want_bound", [c[1:] for c in CHECK_BINDINGS],
                         ids=[c[0] for c in CHECK_BINDINGS])
def test_check_bindings(init_pvs, init_pvcs, bindings, provisioned, api_pvs, api_pvcs, delete_pvs, delete_pvcs,
                        should_fail, want_bound):
    if bindings is None or provisioned is None:
        pytest.skip(NIL_SLICES)
    got = check_bindings([node1], [], init_pvs, init_pvcs, bindings, provisioned, api_pvs, api_pvcs, delete_pvs,
                         delete_pvcs)
    assert got == (want_bound, should_fail)


# TestCheckBindingsWithCSIMigration: (name, init PVs, init PVCs, node, CSI nodes, bindings, provisioned PVCs,
#  API PVCs, should fail, want bound)
CHECK_BINDINGS_CSI_MIGRATION = [
    ("provisioning-pvc-bound", [migrationPVBound], [provMigrationPVCBound], node1Zone1, [csiNode1Migrated], [],
     [with_selected_node(provMigrationPVCBound)], [with_selected_node(provMigrationPVCBound)], False, True),
    ("binding-node-pv-same-zone", [migrationPVBoundToUnbound], [unboundPVC], node1Zone1, [csiNode1Migrated],
     [binding(unboundPVC, migrationPVBoundToUnbound)], [], [], False, False),
    ("binding-without-csinode", [migrationPVBoundToUnbound], [unboundPVC], node1Zone1, [],
     [binding(unboundPVC, migrationPVBoundToUnbound)], [], [], False, False),
    ("binding-non-migrated-plugin", [migrationPVBoundToUnbound], [unboundPVC], node1Zone1, [csiNode1NotMigrated],
     [binding(unboundPVC, migrationPVBoundToUnbound)], [], [], False, False),
    ("binding-node-pv-in-different-zones", [migrationPVBoundToUnbound], [unboundPVC], node1Zone2, [csiNode1Migrated],
     [binding(unboundPVC, migrationPVBoundToUnbound)], [], [], True, False),
    ("binding-node-pv-different-zones-migration-off", [nonmigrationPVBoundToUnbound], [unboundPVC], node1Zone2,
     [csiNode1Migrated], [binding(unboundPVC, nonmigrationPVBoundToUnbound)], [], [], False, False),
]


@pytest.mark.parametrize("init_pvs, init_pvcs, node, csi_nodes, bindings, provisioned, api_pvcs, should_fail, "
                         "want_bound", [c[1:] for c in CHECK_BINDINGS_CSI_MIGRATION],
                         ids=[c[0] for c in CHECK_BINDINGS_CSI_MIGRATION])
def test_check_bindings_with_csi_migration(init_pvs, init_pvcs, node, csi_nodes, bindings, provisioned, api_pvcs,
                                           should_fail, want_bound):
    got = check_bindings([node], csi_nodes, init_pvs, init_pvcs, bindings, provisioned, [], api_pvcs, False, False)
    assert got == (want_bound, should_fail)


def test_find_assume_volumes():
    """TestFindAssumeVolumes (a single case): after AssumePodVolumes, FindPodVolumes keeps choosing the same PV."""
    pvs, pvcs = [pvNode2, pvNode1a, pvNode1c], [unboundPVC]
    h = handle([testNode.obj()], persistent_volumes=copy.deepcopy(pvs), persistent_volume_claims=copy.deepcopy(pvcs),
               storage_classes=STORAGE_CLASSES)
    binder = VolumeBinder(h, 10)
    pod, node = pod_builder(pvcs).obj(), h.snapshot.node_infos[0].node

    def find():
        claims, err = binder.get_pod_volume_claims(pod)
        assert err is None and not claims.unbound_immediate
        return binder.find_pod_volumes(claims, node, None)

    pod_volumes, reasons = find()
    assert reasons == []
    expected = [(b.pvc, b.pv) for b in pod_volumes.static_bindings]
    all_bound, err = binder.assume_pod_volumes(pod, "node1", pod_volumes)
    assert (all_bound, err) == (False, None)
    validate_assume(binder, expected, [])
    expected = [(b.pvc, b.pv) for b in pod_volumes.static_bindings]   # the claimRef is now set on the PV
    for _ in range(50):
        again, reasons = find()
        assert reasons == []
        validate_pod_cache(again, expected, [])


def capacity(name, cls, node, cap, max_size):
    """makeCapacity: node topology matching the node's nodeKey label (every node when node is None)."""
    c = {"metadata": {"name": name}, "storageClassName": cls, "nodeTopology": {}}
    if node is not None:
        c["nodeTopology"]["matchLabels"] = {NODE_KEY: node.raw["metadata"]["labels"][NODE_KEY]}
    if cap:
        c["capacity"] = cap
    if max_size:
        c["maximumVolumeSize"] = max_size
    return c


networkAttachedCapacity = capacity("net", WAIT_PROV, None, "1Gi", "")
node1Capacity = capacity("net", WAIT_PROV, node1, "1Gi", "")
node2Capacity = capacity("net", WAIT_PROV, node2, "1Gi", "")

# TestCapacity: scenario -> (capacities, want provisions, want reasons)
CAPACITY = {
    "network-attached": ([networkAttachedCapacity], [provisionedPVC], []),
    "local-storage": ([node1Capacity], [provisionedPVC], []),
    "multiple": ([networkAttachedCapacity, node2Capacity, node1Capacity], [provisionedPVC], []),
    "no-storage": ([], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    "wrong-node": ([capacity("net", WAIT_PROV, node2, "1Gi", "")], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    "wrong-storage-class": ([capacity("net", WAIT, node1, "1Gi", "")], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    "insufficient-storage": ([capacity("net", WAIT_PROV, node1, "1Mi", "")], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    "insufficient-volume-size": ([capacity("net", WAIT_PROV, node1, "1Gi", "1Mi")], None,
                                 [ERR_REASON_NOT_ENOUGH_SPACE]),
    "zero-storage": ([capacity("net", WAIT_PROV, node1, "0Mi", "")], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    "zero-volume-size": ([capacity("net", WAIT_PROV, node1, "", "0Mi")], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    "nil-storage": ([capacity("net", WAIT_PROV, node1, "", "")], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
}


@pytest.mark.parametrize("opt_in, capacities, want_provisions, want_reasons",
                         [pytest.param(opt_in, *sc, id=f"CSIDriver.StorageCapacity={str(opt_in).lower()}/{name}")
                          for opt_in in (True, False) for name, sc in CAPACITY.items()])
def test_capacity(opt_in, capacities, want_provisions, want_reasons):
    pvcs = [provisionedPVC]
    h = handle([testNode.obj()], persistent_volume_claims=copy.deepcopy(pvcs), storage_classes=STORAGE_CLASSES,
               csi_drivers=[csi_driver(PROVISIONER, opt_in)])
    h.objects.csi_storage_capacities = copy.deepcopy(capacities)
    binder = VolumeBinder(h, 10)
    claims, err = binder.get_pod_volume_claims(pod_builder(pvcs).obj())
    assert err is None and not claims.unbound_immediate
    pod_volumes, reasons = binder.find_pod_volumes(claims, h.snapshot.node_infos[0].node, None)
    if not opt_in:
        want_reasons = []
    assert sorted(reasons) == sorted(want_reasons)
    assert pod_volumes.static_bindings == []
    if not want_reasons and want_provisions is not None:   # kube skips the claims check when reasons are expected
        assert pod_volumes.dynamic_provisions == want_provisions
