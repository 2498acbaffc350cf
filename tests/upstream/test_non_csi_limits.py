"""kube's nodevolumelimits/non_csi_test.go, case by case: TestEphemeralLimits, TestAzureDiskLimits, TestEBSLimits,
TestGCEPDLimits and TestGetMaxVols.

The version read is older than v1.30 (see UPSTREAM_VERSION). kube's fake PV lister gives every "some<F>Vol" volume an
EBS source whatever the filter, so the GCE and Azure tables count only in-line volumes of their own type (none):
all their cases fit. Duplicate case names get Go's "#01" suffix.
"""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.helper.volume import not_found
from scheduler_core.plugins.nodevolumelimits import (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, AzureDiskLimits,
                                                     EBSLimits, GCEPDLimits)
from scheduler_core.plugins.nodevolumelimits.non_csi import KUBE_MAX_PD_VOLS, max_volumes_from_env

from .plugin_cases import SUCCESS, handle, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/nodevolumelimits/non_csi_test.go"
UPSTREAM_VERSION = ("v1.27-v1.28 era (commit 083e3f3e: framework/fake listers, k8s.io/utils/pointer); no v1.30 "
                    "version could be read")
UPSTREAM_CASES = 69

EXCEEDED = (Code.UNSCHEDULABLE, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
NODE_NAME = "node-for-max-pd-test-1"
LIMIT_KEYS = {"EBS": "attachable-volumes-aws-ebs", "GCE": "attachable-volumes-gce-pd",
              "AzureDisk": "attachable-volumes-azure-disk"}
PLUGINS = {"EBS": EBSLimits, "GCE": GCEPDLimits, "AzureDisk": AzureDiskLimits}
PROVISIONERS = {"EBS": "kubernetes.io/aws-ebs", "GCE": "kubernetes.io/gce-pd"}


def ebs(volume_id):
    return {"name": volume_id, "awsElasticBlockStore": {"volumeID": volume_id}}


HOST_PATH = {"name": "host", "hostPath": {}}
ONE_VOL = make_pod().volume(ebs("ovp"))
TWO_VOL = make_pod().volume(ebs("tvp1")).volume(ebs("tvp2"))
SPLIT_VOLS = make_pod().volume(HOST_PATH).volume(ebs("svp"))
NON_APPLICABLE = make_pod().volume(HOST_PATH)
DELETED_PVC = make_pod().pvc("deletedPVC")
TWO_DELETED_PVC = make_pod().pvc("deletedPVC").pvc("anotherDeletedPVC")
DELETED_PV = make_pod().pvc("pvcWithDeletedPV")
DELETED_PV2 = make_pod().pvc("pvcWithDeletedPV")
ANOTHER_DELETED_PV = make_pod().pvc("anotherPVCWithDeletedPV")
EMPTY = make_pod()
UNBOUND_PVC = make_pod().pvc("unboundPVC")
UNBOUND_PVC2 = make_pod().pvc("unboundPVC")
ANOTHER_UNBOUND_PVC = make_pod().pvc("anotherUnboundPVC")
UNBOUND_INVALID_SC = make_pod().pvc("unboundPVCWithInvalidSCPod")
UNBOUND_DEFAULT_SC = make_pod().pvc("unboundPVCWithDefaultSCPod")


def one_pvc(f):
    return make_pod().pvc(f"some{f}Vol")


def split_pvc(f):
    return make_pod().pvc(f"someNon{f}Vol").pvc(f"some{f}Vol")


def fake_pvcs(f):
    """getFakePVCLister."""
    def claim(name, volume, sc):
        return {"metadata": {"name": name}, "spec": {"volumeName": volume, "storageClassName": sc}}
    return [claim(f"some{f}Vol", f"some{f}Vol", f), claim(f"someNon{f}Vol", f"someNon{f}Vol", f),
            claim("pvcWithDeletedPV", "pvcWithDeletedPV", f),
            claim("anotherPVCWithDeletedPV", "anotherPVCWithDeletedPV", f), claim("unboundPVC", "", f),
            claim("anotherUnboundPVC", "", f), claim("unboundPVCWithDefaultSCPod", "", "standard-sc"),
            claim("unboundPVCWithInvalidSCPod", "", "invalid-sc")]


def fake_pvs(f):
    """getFakePVLister: some<F>Vol has an EBS source (whatever the filter), someNon<F>Vol none."""
    return [{"metadata": {"name": f"some{f}Vol"}, "spec": {"awsElasticBlockStore": {"volumeID": f.lower() + "Vol"}}},
            {"metadata": {"name": f"someNon{f}Vol"}, "spec": {}}]


def run(f, new_pod, existing, max_vols, extra_claims=()):
    """Filter of the filter type's plugin on the node of getNodeWithPodAndVolumeLimits("node", ...)."""
    node = make_node().name(NODE_NAME).obj()
    node.allocatable[LIMIT_KEYS[f]] = max_vols
    h = handle([node], persistent_volumes=fake_pvs(f), persistent_volume_claims=fake_pvcs(f) + list(extra_claims),
               storage_classes=[{"metadata": {"name": f}, "provisioner": PROVISIONERS.get(f, "")}])
    pl = PLUGINS[f].new(None, h)
    state, p = new_state(), new_pod.obj()
    pl.pre_filter(state, p)
    return status_tuple(pl.filter(state, p, node_info(node, [q.obj() for q in existing])))


# -- TestEphemeralLimits --------------------------------------------------------------------------------------------

EPHEMERAL = make_pod().name("abc").namespace("test").uid("12345").volume({"name": "xyz", "ephemeral": {}})


def ephemeral_claim(owned=True):
    meta = {"namespace": "test", "name": "abc-xyz"}
    if owned:
        meta["ownerReferences"] = [{"kind": "Pod", "name": "abc", "uid": "12345", "controller": True}]
    return {"metadata": meta, "spec": {"volumeName": "missing", "storageClassName": "GCE"}}


MISSING_DRIFT = ("drift (older version; the version of the change not verified): kube made a missing claim an Error; "
                 "v1.30 returns UnschedulableAndUnresolvable for a NotFound claim, as scheduler_core does")
EPHEMERAL_CASES = [
    ("volume missing", [], 0, MISSING_DRIFT),
    ("volume not owned", [ephemeral_claim(False)], 0,
     (Code.ERROR, ["PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"])),
    ("volume unbound, allowed", [ephemeral_claim()], 1, SUCCESS),
    ("volume unbound, exceeds limit", [ephemeral_claim()], 0, EXCEEDED),
]


@pytest.mark.parametrize("claims, max_vols, want", [c[1:] for c in EPHEMERAL_CASES],
                         ids=[c[0] for c in EPHEMERAL_CASES])
def test_ephemeral_limits(claims, max_vols, want):
    if isinstance(want, str):
        assert run("GCE", EPHEMERAL, [], max_vols, claims) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [f'looking up PVC test/abc-xyz: '
                                                  f'{not_found("persistentvolumeclaim", "abc-xyz")}'])
        pytest.skip(want)
    assert run("GCE", EPHEMERAL, [], max_vols, claims) == want


# -- TestAzureDiskLimits / TestEBSLimits / TestGCEPDLimits ----------------------------------------------------------

def shared_cases(f, capacity_name, counted):
    """The table the three in-tree types share; ``counted``: whether the in-line EBS volumes and PVC-backed volumes
    count (EBS) or not (the others, whose own sources the table does not use)."""
    want = EXCEEDED if counted else SUCCESS
    return [
        (f"fits when node capacity >= new pod's {f} volumes", ONE_VOL, [TWO_VOL, ONE_VOL], 4, SUCCESS),
        (capacity_name, TWO_VOL, [ONE_VOL], 2, want),
        (f"new pod's count ignores non-{f} volumes", SPLIT_VOLS, [TWO_VOL], 3, SUCCESS),
        (f"existing pods' counts ignore non-{f} volumes", TWO_VOL, [SPLIT_VOLS, NON_APPLICABLE, EMPTY], 3, SUCCESS),
        (f"new pod's count considers PVCs backed by {f} volumes", one_pvc(f), [SPLIT_VOLS, NON_APPLICABLE, EMPTY], 3,
         SUCCESS),
        (f"new pod's count ignores PVCs not backed by {f} volumes", split_pvc(f), [SPLIT_VOLS, ONE_VOL], 3, SUCCESS),
        (f"existing pods' counts considers PVCs backed by {f} volumes", TWO_VOL, [ONE_VOL, one_pvc(f)], 3, want),
    ]


AZURE = [
    *shared_cases("AzureDisk", "fit when node capacity < new pod's AzureDisk volumes", False),
    ("already-mounted AzureDisk volumes are always ok to allow", TWO_VOL, [ONE_VOL, TWO_VOL, one_pvc("AzureDisk")], 4,
     SUCCESS),
    ("the same AzureDisk volumes are not counted multiple times", SPLIT_VOLS,
     [ONE_VOL, ONE_VOL, one_pvc("AzureDisk")], 3, SUCCESS),
]
GCE = [
    *shared_cases("GCE", "fit when node capacity < new pod's GCE volumes", False),
    ("already-mounted EBS volumes are always ok to allow", TWO_VOL, [ONE_VOL, TWO_VOL, one_pvc("GCE")], 4, SUCCESS),
    ("the same GCE volumes are not counted multiple times", SPLIT_VOLS, [ONE_VOL, ONE_VOL, one_pvc("GCE")], 3,
     SUCCESS),
]


def missing_cases(f):
    """The missing / unbound claim cases of the Azure and GCE tables (all fit: see the module docstring)."""
    return [
        ("pod with missing PVC is counted towards the PV limit", one_pvc(f), [ONE_VOL, DELETED_PVC], 2, SUCCESS),
        ("pod with missing PVC is counted towards the PV limit#01", one_pvc(f), [ONE_VOL, DELETED_PVC], 3, SUCCESS),
        ("pod with missing two PVCs is counted towards the PV limit twice", one_pvc(f), [ONE_VOL, TWO_DELETED_PVC], 3,
         SUCCESS),
        ("pod with missing PV is counted towards the PV limit", one_pvc(f), [ONE_VOL, DELETED_PV], 2, SUCCESS),
        ("pod with missing PV is counted towards the PV limit#01", one_pvc(f), [ONE_VOL, DELETED_PV], 3, SUCCESS),
        ("two pods missing the same PV are counted towards the PV limit only once", DELETED_PV2,
         [ONE_VOL, DELETED_PV], 2, SUCCESS),
        ("two pods missing different PVs are counted towards the PV limit twice", ANOTHER_DELETED_PV,
         [ONE_VOL, DELETED_PV], 2, SUCCESS),
        ("pod with unbound PVC is counted towards the PV limit", one_pvc(f), [ONE_VOL, UNBOUND_PVC], 2, SUCCESS),
        ("pod with unbound PVC is counted towards the PV limit#01", one_pvc(f), [ONE_VOL, UNBOUND_PVC], 3, SUCCESS),
        ("the same unbound PVC in multiple pods is counted towards the PV limit only once", UNBOUND_PVC2,
         [ONE_VOL, UNBOUND_PVC], 2, SUCCESS),
        ("two different unbound PVCs are counted towards the PV limit as two volumes", ANOTHER_UNBOUND_PVC,
         [ONE_VOL, UNBOUND_PVC], 2, SUCCESS),
    ]


AZURE += missing_cases("AzureDisk")
GCE += missing_cases("GCE")
EBS = [
    *shared_cases("EBS", "doesn't fit when node capacity < new pod's EBS volumes", True),
    ("already-mounted EBS volumes are always ok to allow", TWO_VOL, [ONE_VOL, TWO_VOL, one_pvc("EBS")], 4, SUCCESS),
    ("the same EBS volumes are not counted multiple times", SPLIT_VOLS, [ONE_VOL, ONE_VOL, one_pvc("EBS")], 3,
     SUCCESS),
    ("missing PVC is not counted towards the PV limit", one_pvc("EBS"), [ONE_VOL, DELETED_PVC], 1, EXCEEDED),
    ("missing PVC is not counted towards the PV limit#01", one_pvc("EBS"), [ONE_VOL, DELETED_PVC], 2, SUCCESS),
    ("two missing PVCs are not counted towards the PV limit twice", one_pvc("EBS"), [ONE_VOL, TWO_DELETED_PVC], 2,
     SUCCESS),
    ("unbound PVC with invalid SC is not counted towards the PV limit", UNBOUND_INVALID_SC, [ONE_VOL], 1, SUCCESS),
    ("unbound PVC from different provisioner is not counted towards the PV limit", UNBOUND_DEFAULT_SC, [ONE_VOL], 1,
     SUCCESS),
    ("pod with missing PV is counted towards the PV limit", one_pvc("EBS"), [ONE_VOL, DELETED_PV], 2, EXCEEDED),
    ("pod with missing PV is counted towards the PV limit#01", one_pvc("EBS"), [ONE_VOL, DELETED_PV], 3, SUCCESS),
    ("two pods missing the same PV are counted towards the PV limit only once", DELETED_PV2, [ONE_VOL, DELETED_PV], 2,
     SUCCESS),
    ("two pods missing different PVs are counted towards the PV limit twice", ANOTHER_DELETED_PV,
     [ONE_VOL, DELETED_PV], 2, EXCEEDED),
    ("pod with unbound PVC is counted towards the PV limit", one_pvc("EBS"), [ONE_VOL, UNBOUND_PVC], 2, EXCEEDED),
    ("pod with unbound PVC is counted towards the PV limit#01", one_pvc("EBS"), [ONE_VOL, UNBOUND_PVC], 3, SUCCESS),
    ("the same unbound PVC in multiple pods is counted towards the PV limit only once", UNBOUND_PVC2,
     [ONE_VOL, UNBOUND_PVC], 2, SUCCESS),
    ("two different unbound PVCs are counted towards the PV limit as two volumes", ANOTHER_UNBOUND_PVC,
     [ONE_VOL, UNBOUND_PVC], 2, EXCEEDED),
]


def table(cases):
    return pytest.mark.parametrize("new_pod, existing, max_vols, want", [c[1:] for c in cases],
                                   ids=[c[0] for c in cases])


@table(AZURE)
def test_azure_disk_limits(new_pod, existing, max_vols, want):
    assert run("AzureDisk", new_pod, existing, max_vols) == want


@table(EBS)
def test_ebs_limits(new_pod, existing, max_vols, want):
    assert run("EBS", new_pod, existing, max_vols) == want


@table(GCE)
def test_gcepd_limits(new_pod, existing, max_vols, want):
    assert run("GCE", new_pod, existing, max_vols) == want


# -- TestGetMaxVols -------------------------------------------------------------------------------------------------

MAX_VOLS = [
    ("Unable to parse maximum PD volumes value, using default value", "invalid", -1),
    ("Maximum PD volumes must be a positive value, using default value", "-2", -1),
    ("Parse maximum PD volumes value from env", "40", 40),
]


@pytest.mark.parametrize("raw, expected", [c[1:] for c in MAX_VOLS], ids=[c[0] for c in MAX_VOLS])
def test_get_max_vols(raw, expected, monkeypatch):
    monkeypatch.setenv(KUBE_MAX_PD_VOLS, raw)
    assert max_volumes_from_env() == expected
