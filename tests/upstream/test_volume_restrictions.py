"""kube's volumerestrictions/volume_restrictions_test.go, case by case: the GCE, AWS, RBD and iSCSI disk-conflict
tables and TestAccessModeConflicts. As in kube, Filter runs only when PreFilter succeeded."""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.helper.volume import pvc_not_found
from scheduler_core.plugins.volumerestrictions import (ERR_REASON_DISK_CONFLICT, ERR_REASON_RWOP_CONFLICT,
                                                       VolumeRestrictions)

from .plugin_cases import SUCCESS, handle, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions_test.go"
UPSTREAM_VERSION = ("v1.29-v1.30 era (commit bace36fb: ReadWriteOncePod GA, New(ctx, args, fh, feature.Features{}), "
                    "no queueing-hint tables)")
UPSTREAM_CASES = 22

SKIP = (Code.SKIP, [])
DISK_CONFLICT = (Code.UNSCHEDULABLE, [ERR_REASON_DISK_CONFLICT])


def run(h, pod, ni):
    """(PreFilter status, Filter status or None when PreFilter did not succeed)."""
    pl = VolumeRestrictions.new(None, h)
    state, p = new_state(), pod.obj()
    _res, pre = pl.pre_filter(state, p)
    if pre is not None:
        return status_tuple(pre), None
    return SUCCESS, status_tuple(pl.filter(state, p, ni))


def with_volume(vol):
    return make_pod().volume(vol)


def disk_cases(vol, vol2, extra=()):
    """The four cases every disk-conflict table shares (vol: the existing pod's volume, vol2: a different disk)."""
    return [
        ("nothing", make_pod(), [], SKIP, None),
        ("one state", make_pod(), [with_volume(vol)], SKIP, None),
        ("same state", with_volume(vol), [with_volume(vol)], SUCCESS, DISK_CONFLICT),
        ("different state", with_volume(vol2), [with_volume(vol)], SUCCESS, SUCCESS),
        *extra,
    ]


GCE = disk_cases({"name": "v", "gcePersistentDisk": {"pdName": "foo"}},
                 {"name": "v", "gcePersistentDisk": {"pdName": "bar"}},
                 [("pod with a volume that doesn't have restrictions",
                   with_volume({"name": "volume with no restriction"}), [], SKIP, None)])
AWS = disk_cases({"name": "v", "awsElasticBlockStore": {"volumeID": "foo"}},
                 {"name": "v", "awsElasticBlockStore": {"volumeID": "bar"}})
RBD = disk_cases({"name": "v", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
                 {"name": "v", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}})
ISCSI = disk_cases({"name": "v", "iscsi": {"targetPortal": "127.0.0.1:3260", "fsType": "ext4", "lun": 0,
                                           "iqn": "iqn.2016-12.server:storage.target01"}},
                   {"name": "v", "iscsi": {"targetPortal": "127.0.0.1:3260", "fsType": "ext4", "lun": 0,
                                           "iqn": "iqn.2017-12.server:storage.target01"}})


def check_disk_case(pod, existing, want_pre, want_filter):
    ni = node_info(None, [p.obj() for p in existing])
    assert run(handle(), pod, ni) == (want_pre, want_filter)


def params(cases):
    return pytest.mark.parametrize("pod, existing, want_pre, want_filter", [c[1:] for c in cases],
                                   ids=[c[0] for c in cases])


@params(GCE)
def test_gce_disk_conflicts(pod, existing, want_pre, want_filter):
    check_disk_case(pod, existing, want_pre, want_filter)


@params(AWS)
def test_aws_disk_conflicts(pod, existing, want_pre, want_filter):
    check_disk_case(pod, existing, want_pre, want_filter)


@params(RBD)
def test_rbd_disk_conflicts(pod, existing, want_pre, want_filter):
    check_disk_case(pod, existing, want_pre, want_filter)


@params(ISCSI)
def test_iscsi_disk_conflicts(pod, existing, want_pre, want_filter):
    check_disk_case(pod, existing, want_pre, want_filter)


def on_node_1(name, *claims):
    p = make_pod().name(name).namespace("default").node("node-1")
    for c in claims:
        p.pvc(c)
    return p


POD_WITH_ONE_PVC = on_node_1("pod-with-one-pvc", "claim-with-rwop-1")
POD_WITH_TWO_PVCS = on_node_1("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_ONE_CONFLICT = on_node_1("pod-with-one-conflict", "claim-with-rwop-1")
POD_WITH_TWO_CONFLICTS = on_node_1("pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_RWX = on_node_1("pod-with-rwx", "claim-with-rwx")
NODE_1 = make_node().name("node-1")


def claim(name, mode):
    return {"metadata": {"namespace": "default", "name": name}, "spec": {"accessModes": [mode]}}


RWOP_1 = claim("claim-with-rwop-1", "ReadWriteOncePod")
RWOP_2 = claim("claim-with-rwop-2", "ReadWriteOncePod")
RWX = claim("claim-with-rwx", "ReadWriteMany")
RWOP_CONFLICT = (Code.UNSCHEDULABLE, [ERR_REASON_RWOP_CONFLICT])

ACCESS_MODE = [
    ("nothing", make_pod(), [], [], [], [], SKIP, None),
    ("failed to get PVC", POD_WITH_ONE_PVC, [], [], [], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [pvc_not_found("claim-with-rwop-1")]), None),
    ("no access mode conflict", POD_WITH_ONE_PVC, [POD_WITH_RWX], [POD_WITH_RWX], [NODE_1], [RWOP_1, RWX],
     SKIP, None),
    ("access mode conflict, unschedulable", POD_WITH_ONE_CONFLICT, [POD_WITH_ONE_PVC, POD_WITH_RWX],
     [POD_WITH_ONE_PVC, POD_WITH_RWX], [NODE_1], [RWOP_1, RWX], SUCCESS, RWOP_CONFLICT),
    ("two conflicts, unschedulable", POD_WITH_TWO_CONFLICTS, [POD_WITH_TWO_PVCS, POD_WITH_RWX],
     [POD_WITH_TWO_PVCS, POD_WITH_RWX], [NODE_1], [RWOP_1, RWOP_2, RWX], SUCCESS, RWOP_CONFLICT),
]


@pytest.mark.parametrize("pod, node_pods, existing_pods, existing_nodes, existing_pvcs, want_pre, want_filter",
                         [c[1:] for c in ACCESS_MODE], ids=[c[0] for c in ACCESS_MODE])
def test_access_mode_conflicts(pod, node_pods, existing_pods, existing_nodes, existing_pvcs, want_pre, want_filter):
    h = handle([n.obj() for n in existing_nodes], [p.obj() for p in existing_pods],
               persistent_volume_claims=existing_pvcs)
    ni = node_info(None, [p.obj() for p in node_pods])
    assert run(h, pod, ni) == (want_pre, want_filter)
