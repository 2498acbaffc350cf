"""kube's nodevolumelimits/csi_test.go, TestCSILimits, case by case, each run at 1.36 and at 1.30.

The cases are v1.36.2's: its CSILimits counts the node's VolumeAttachments (buildFakeClientWithVALister) towards
the limit, which v1.30's does not, so the case that only fits without them (``AT_1_30``) fits at 1.30. kube's
listers here are its test fakes: objects without a namespace are read as "default" by scheduler_core,
and a missing claim is reported with the informer lister's text (``persistentvolumeclaim "x" not found``) where
kube's fake says ``persistentvolumeclaims``; the cases assert the informer's text.
"""
import pytest

from scheduler_core import versions
from scheduler_core.framework.status import Code
from scheduler_core.plugins.helper.volume import MIGRATED_PLUGINS_ANNOTATION, not_found
from scheduler_core.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, CSILimits

from .plugin_cases import SUCCESS, handle, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go"
UPSTREAM_VERSION = "v1.36.2 (openshift/microshift's deps/github.com/openshift/kubernetes)"
UPSTREAM_CASES = 38
UPSTREAM_NOT_TRANSLATED = {
    "TestCSILimitsQHint": "4 queueing-hint cases",
    "TestCSILimitsAddedPVCQHint": "5 queueing-hint cases",
    "TestCSILimitsDeletedVolumeAttachmentQHint": "6 queueing-hint cases; scheduler_core has no queueing hints",
    "TestCSILimitsAfterCSINodeUpdatedQHint": "queueing-hint cases",
}

EBS_CSI = "ebs.csi.aws.com"
GCE_CSI = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE_NAME = "node-for-max-pd-test-1"
EXCEEDED = (Code.UNSCHEDULABLE, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
SKIP = (Code.SKIP, [])
EPHEMERAL_MISSING = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                     [f'looking up PVC test/abc-xyz: {not_found("persistentvolumeclaim", "abc-xyz")}'])
NOT_OWNED = (Code.ERROR, ["PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"])
VA_EXCEEDED = "should count VolumeAttachments towards volume limit when no pods exist"
AT_1_30 = {VA_EXCEEDED: SUCCESS}   # v1.30 does not count VolumeAttachments


def pvc_pod(*claims):
    w = make_pod()
    for c in claims:
        w.pvc(c)
    return w


RUNNING = pvc_pod("csi-ebs.csi.aws.com-3")
PENDING_VOLUME = pvc_pod("csi-4")
UNBOUND_PVC_POD2 = pvc_pod("csi-4")
MISSING_PV = pvc_pod("csi-6")
NO_SC_PVC = pvc_pod("csi-5")
GCE_TWO_VOL = pvc_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE_VOL = pvc_pod("csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO_VOL = pvc_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
CSI_EBS_ONE_VOL = pvc_pod("csi-ebs.csi.aws.com-0")
CSI_EBS_TWO_VOL = pvc_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
IN_TREE_NON_MIGRATABLE = pvc_pod("csi-kubernetes.io/hostpath-0")
EPHEMERAL = make_pod().name("abc").namespace("test").uid("12345").volume({"name": "xyz", "ephemeral": {}})
EPHEMERAL_TWO = (make_pod().name("abc").namespace("test").uid("12345II").volume({"name": "x", "ephemeral": {}})
                 .volume({"name": "y", "ephemeral": {}}))
CONFIGMAP = {"name": "cm", "configMap": {}}
SECRET = {"name": "secret", "secret": {}}
INLINE_EBS = {"name": "inline", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}
IN_TREE_INLINE = make_pod().volume(INLINE_EBS)
IN_TREE_INLINE_SAME_ID = make_pod().volume({"name": "inline", "awsElasticBlockStore":
                                            {"volumeID": "csi-ebs.csi.aws.com-1"}})
ONLY_CONFIGMAP_AND_SECRET = make_pod().volume(CONFIGMAP).volume(SECRET)
PVC_WITH_CONFIGMAP_AND_SECRET = make_pod().volume(CONFIGMAP).volume(SECRET).pvc("csi-ebs.csi.aws.com-0")
EPHEMERAL_WITH_CONFIGMAP_AND_SECRET = (make_pod().name("abc").namespace("test").volume(CONFIGMAP).volume(SECRET)
                                       .volume({"name": "xyz", "ephemeral": {}}))
INLINE_MIGRATABLE_WITH_CONFIGMAP_AND_SECRET = make_pod().volume(CONFIGMAP).volume(SECRET).volume(INLINE_EBS)


def ephemeral_claim(pod_name, volume, uid, owned=True):
    meta = {"namespace": "test", "name": f"{pod_name}-{volume}"}
    if owned:
        meta["ownerReferences"] = [{"kind": "Pod", "name": pod_name, "uid": uid, "controller": True}]
    return {"metadata": meta, "spec": {"storageClassName": SC_NAME}}


EPHEMERAL_CLAIM = ephemeral_claim("abc", "xyz", "12345")
CONFLICTING_CLAIM = ephemeral_claim("abc", "xyz", "12345", owned=False)
EPHEMERAL_CLAIM_X = ephemeral_claim("abc", "x", "12345II")
EPHEMERAL_CLAIM_Y = ephemeral_claim("abc", "y", "12345II")


def fake_pvs(volume_name, drivers):
    """getFakeCSIPVLister: four volumes per driver, in-tree EBS and hostpath ones as their in-tree sources."""
    out = []
    for driver in drivers:
        for j in range(4):
            handle_ = f"{volume_name}-{driver}-{j}"
            if driver == EBS_IN_TREE:
                source = {"awsElasticBlockStore": {"volumeID": handle_}}
            elif driver == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": handle_}}
            out.append({"metadata": {"name": handle_}, "spec": source})
    return out


def fake_pvcs(volume_name, drivers):
    """getFakeCSIPVCLister: a bound claim per fake volume, then -4 (unbound, class), -5 (no class), -6 (missing PV)."""
    out = [{"metadata": {"name": f"{volume_name}-{d}-{j}"}, "spec": {"volumeName": f"{volume_name}-{d}-{j}"}}
           for d in drivers for j in range(4)]
    out.append({"metadata": {"name": f"{volume_name}-4"}, "spec": {"storageClassName": SC_NAME}})
    out.append({"metadata": {"name": f"{volume_name}-5"}, "spec": {}})
    out.append({"metadata": {"name": f"{volume_name}-6"},
                "spec": {"storageClassName": SC_NAME, "volumeName": "missing-in-action"}})
    return out


def volume_attachments(count, drivers):
    """buildFakeClientWithVALister: ``count`` VolumeAttachments per driver on the node, of the PVs csi-<driver>-j."""
    return [{"metadata": {"name": f"va-{d}-{j}"},
             "spec": {"nodeName": NODE_NAME, "attacher": d, "source": {"persistentVolumeName": f"csi-{d}-{j}"}}}
            for d in drivers for j in range(count)]


def csi_node(limit_source, limit, drivers):
    """getNodeWithPodAndVolumeLimits' CSINode, with migration of the in-tree EBS plugin on (enableMigrationOnNode)."""
    if limit_source not in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        return None
    entries = []
    if limit_source != "no-csi-driver":
        for d in drivers:
            entry = {"name": d, "nodeID": NODE_NAME}
            if limit_source == "csinode":
                entry["allocatable"] = {"count": limit}
            entries.append(entry)
    return {"metadata": {"name": NODE_NAME, "annotations": {MIGRATED_PLUGINS_ANNOTATION: EBS_IN_TREE}},
            "spec": {"drivers": entries}}


# (name, new pod, existing pods, extra claims, max volumes, VolumeAttachments, drivers, limit source, want Filter,
#  want PreFilter)
CASES = [
    (VA_EXCEEDED, CSI_EBS_ONE_VOL, [], [], 2, 2, [EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("should schedule pod when VolumeAttachments count does not exceed limit", CSI_EBS_ONE_VOL, [], [], 2, 1,
     [EBS_CSI], "csinode", SUCCESS, SUCCESS),
    ("fits when node volume limit >= new pods CSI volume", CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 4, 0,
     [EBS_CSI], "csinode", SUCCESS, SUCCESS),
    ("doesn't when node volume limit <= pods CSI volume", CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 2, 0,
     [EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("should when driver does not support volume limits", CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 2, 0,
     [EBS_CSI], "csinode-with-no-limit", SUCCESS, SUCCESS),
    ("count pending PVCs towards volume limit <= pods CSI volume", CSI_EBS_ONE_VOL,
     [PENDING_VOLUME, CSI_EBS_TWO_VOL], [], 2, 0, [EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume", CSI_EBS_ONE_VOL,
     [PENDING_VOLUME, UNBOUND_PVC_POD2, CSI_EBS_TWO_VOL], [], 4, 0, [EBS_CSI], "csinode", SUCCESS, SUCCESS),
    ("should count PVCs with invalid PV name but valid SC", CSI_EBS_ONE_VOL, [MISSING_PV, CSI_EBS_TWO_VOL], [], 2, 0,
     [EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("don't count pvcs with missing SC towards volume limit", CSI_EBS_ONE_VOL, [RUNNING, NO_SC_PVC], [], 2, 0,
     [EBS_CSI], "csinode", SUCCESS, SUCCESS),
    ("count pvcs with the same type towards volume limit", CSI_EBS_ONE_VOL, [GCE_TWO_VOL, CSI_EBS_TWO_VOL], [], 2, 0,
     [EBS_CSI, GCE_CSI], "csinode", EXCEEDED, SUCCESS),
    ("don't count pvcs with different type towards volume limit", GCE_TWO_VOL, [CSI_EBS_TWO_VOL, RUNNING], [], 2, 0,
     [EBS_CSI, GCE_CSI], "csinode", SUCCESS, SUCCESS),
    ("should count in-tree volumes if migration is enabled", IN_TREE_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, 0,
     [EBS_IN_TREE, EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("nil csi node", IN_TREE_INLINE, [IN_TREE_TWO_VOL], [], 0, 0, [EBS_IN_TREE, EBS_CSI], "", SUCCESS, SUCCESS),
    ("should count unbound in-tree volumes if migration is enabled", PENDING_VOLUME, [IN_TREE_TWO_VOL], [], 2, 0,
     [EBS_IN_TREE, EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("should not limit pod if volume used does not report limits", IN_TREE_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, 0,
     [EBS_IN_TREE, EBS_CSI], "csinode-with-no-limit", SUCCESS, SUCCESS),
    ("should not count non-migratable in-tree volumes", IN_TREE_NON_MIGRATABLE, [CSI_EBS_TWO_VOL], [], 2, 0,
     [HOSTPATH_IN_TREE, EBS_CSI], "csinode", SUCCESS, SUCCESS),
    ("should count in-tree inline volumes if migration is enabled", IN_TREE_INLINE, [IN_TREE_TWO_VOL], [], 2, 0,
     [EBS_IN_TREE, EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_ONE_VOL, [CSI_EBS_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_INLINE, [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], [], 3, 0, [EBS_IN_TREE, EBS_CSI], "csinode", EXCEEDED,
     SUCCESS),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_INLINE_SAME_ID, [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], [], 3, 0, [EBS_IN_TREE, EBS_CSI], "csinode",
     SUCCESS, SUCCESS),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", CSI_EBS_ONE_VOL,
     [IN_TREE_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("ephemeral volume missing", EPHEMERAL, [], [], 0, 0, [EBS_CSI], "csinode-with-no-limit", EPHEMERAL_MISSING,
     SUCCESS),
    ("ephemeral volume not owned", EPHEMERAL, [], [CONFLICTING_CLAIM], 0, 0, [EBS_CSI], "csinode-with-no-limit",
     NOT_OWNED, SUCCESS),
    ("ephemeral volume unbound", EPHEMERAL, [], [EPHEMERAL_CLAIM], 0, 0, [EBS_CSI], "csinode-with-no-limit", SUCCESS,
     SUCCESS),
    ("ephemeral doesn't when node volume limit <= pods CSI volume", EPHEMERAL, [RUNNING, CSI_EBS_TWO_VOL],
     [EPHEMERAL_CLAIM], 2, 0, [EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", CSI_EBS_ONE_VOL,
     [RUNNING, EPHEMERAL_TWO], [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], 2, 0, [EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral disabled",
     CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 3, 0, [EBS_CSI], "csinode", EXCEEDED,
     SUCCESS),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", CSI_EBS_ONE_VOL,
     [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 3, 0, [EBS_CSI], "csinode", EXCEEDED, SUCCESS),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", CSI_EBS_ONE_VOL,
     [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 5, 0, [EBS_CSI], "csinode", SUCCESS, SUCCESS),
    ("skip Filter when the pod only uses secrets and configmaps", ONLY_CONFIGMAP_AND_SECRET, [], [], 2, 0, [EBS_CSI],
     "csinode", None, SKIP),
    ("don't skip Filter when the pod has pvcs", PVC_WITH_CONFIGMAP_AND_SECRET, [], [], 2, 0, [EBS_CSI], "csinode",
     SUCCESS, SUCCESS),
    ("don't skip Filter when the pod has ephemeral volumes", EPHEMERAL_WITH_CONFIGMAP_AND_SECRET, [], [], 0, 0,
     [EBS_CSI], "csinode-with-no-limit", EPHEMERAL_MISSING, SUCCESS),
    ("don't skip Filter when the pod has inline migratable volumes", INLINE_MIGRATABLE_WITH_CONFIGMAP_AND_SECRET,
     [IN_TREE_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS_CSI], "csinode", EXCEEDED, SUCCESS),
]


@pytest.mark.parametrize("name, new_pod, existing, extra_claims, max_vols, va_count, drivers, limit_source, want, "
                         "want_pre", CASES, ids=[c[0] for c in CASES])
def test_csi_limits(name, new_pod, existing, extra_claims, max_vols, va_count, drivers, limit_source, want,
                    want_pre):
    node = make_node().name(NODE_NAME).obj()
    cn = csi_node(limit_source, max_vols, drivers)
    for version, expected in (("1.36", want), ("1.30", AT_1_30.get(name, want))):
        h = handle([node], persistent_volumes=fake_pvs("csi", drivers),
                   persistent_volume_claims=fake_pvcs("csi", drivers) + list(extra_claims),
                   storage_classes=[{"metadata": {"name": SC_NAME}, "provisioner": drivers[0]}],
                   csi_nodes=[cn] if cn else [], volume_attachments=volume_attachments(va_count, drivers))
        h.features = versions.features(version)
        pl = CSILimits.new(None, h)
        state, p = new_state(), new_pod.obj()
        _res, pre = pl.pre_filter(state, p)
        assert status_tuple(pre) == want_pre, version
        if want_pre != SKIP:
            ni = node_info(node, [q.obj() for q in existing])
            assert status_tuple(pl.filter(state, p, ni)) == expected, version


# TestVolumeLimitScalingGate: (name, gate, limit source, limit, CSIDriver present, preventPodSchedulingIfMissing,
#  want Filter)
NOT_INSTALLED = (Code.UNSCHEDULABLE, [f"{EBS_CSI} CSI driver is not installed on the node"])
SCALING_CASES = [
    ("gate enabled - allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing is not set", True,
     "no-csi-driver", 0, True, False, SUCCESS),
    ("gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing is true", True,
     "no-csi-driver", 0, True, True, NOT_INSTALLED),
    ("gate disabled - skip driver presence check (regardless of CSIDriver presence)", False, "no-csi-driver", 0,
     True, True, SUCCESS),
    ("gate enabled - driver installed within limit", True, "csinode", 2, True, True, SUCCESS),
    ("gate enabled - allow scheduling when CSIDriver object missing", True, "no-csi-driver", 0, False, False,
     SUCCESS),
]


@pytest.mark.parametrize("gate, limit_source, limit, driver_present, prevent, want", [c[1:] for c in SCALING_CASES],
                         ids=[c[0] for c in SCALING_CASES])
def test_volume_limit_scaling_gate(gate, limit_source, limit, driver_present, prevent, want):
    node = make_node().name(NODE_NAME).obj()
    cn = csi_node(limit_source, limit, [EBS_CSI])
    driver = {"metadata": {"name": EBS_CSI}, "spec": {"preventPodSchedulingIfMissing": True} if prevent else {}}
    h = handle([node], persistent_volumes=fake_pvs("csi", [EBS_CSI]),
               persistent_volume_claims=fake_pvcs("csi", [EBS_CSI]),
               storage_classes=[{"metadata": {"name": SC_NAME}, "provisioner": EBS_CSI}],
               csi_nodes=[cn] if cn else [], csi_drivers=[driver] if driver_present else [])
    h.features = versions.features("1.36", f"VolumeLimitScaling={str(gate).lower()}")
    pl = CSILimits.new(None, h)
    state, p = new_state(), CSI_EBS_ONE_VOL.obj()
    _res, pre = pl.pre_filter(state, p)
    assert status_tuple(pre) == SUCCESS
    assert status_tuple(pl.filter(state, p, node_info(node))) == want
