"""Volume plugins: the cases of kube's volume_restrictions_test.go, volume_zone_test.go, csi_test.go,
non_csi_test.go, volume_binding_test.go and binder_test.go, plus the assume cache across pods."""
import pytest

from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.snapshot import ClusterObjects, Snapshot
from scheduler_core.framework.status import Code
from scheduler_core.objects.node import Node
from scheduler_core.objects.pod import Pod
from scheduler_core.plugins.helper import csi_translation as csitrans
from scheduler_core.plugins.helper.volume import (ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE,
                                                  MIGRATED_PLUGINS_ANNOTATION, bind_volume_to_claim,
                                                  csi_attach_limit_key, local_pv_node_names,
                                                  match_topology_selector_terms)
from scheduler_core.plugins.nodevolumelimits import (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, AzureDiskLimits, CSILimits,
                                                     EBSLimits, GCEPDLimits)
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.plugins.volumebinding import ERR_UNBOUND_IMMEDIATE, VolumeBinding
from scheduler_core.plugins.volumebinding.binder import (ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT,
                                                         ERR_REASON_NOT_ENOUGH_SPACE, ERR_REASON_PV_NOT_EXIST)
from scheduler_core.plugins.volumerestrictions import (ERR_REASON_DISK_CONFLICT, ERR_REASON_RWOP_CONFLICT,
                                                       VolumeRestrictions)
from scheduler_core.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone

NS = "default"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

_seq = [0]


# -- object builders ---------------------------------------------------------------------------------

def pod(*volumes, name=None, node="", ns=NS, uid=None):
    _seq[0] += 1
    name = name or f"pod-{_seq[0]}"
    meta = {"name": name, "namespace": ns, "uid": uid or f"uid-{name}"}
    spec = {"containers": [{"name": "c"}], "volumes": list(volumes)}
    if node:
        spec["nodeName"] = node
    return Pod({"metadata": meta, "spec": spec})


def claim_vol(claim, name=None):
    return {"name": name or claim, "persistentVolumeClaim": {"claimName": claim}}


def node(name, labels=None, allocatable=None):
    lbl = {HOST: name}
    lbl.update(labels or {})
    status = {"allocatable": dict({"pods": "110"}, **(allocatable or {}))}
    return Node({"metadata": {"name": name, "labels": lbl}, "status": status})


def pvc(name, volume="", sc="", modes=("ReadWriteOnce",), size="1Gi", ns=NS, bound=None, ann=None, **extra):
    """A claim; ``bound`` defaults to True when it names a volume (bind-completed annotation)."""
    annotations = dict(ann or {})
    if bound if bound is not None else bool(volume):
        annotations[ANN_BIND_COMPLETED] = "yes"
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if volume:
        spec["volumeName"] = volume
    if sc is not None:
        spec["storageClassName"] = sc
    spec.update(extra.pop("spec", {}))
    obj = {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "resourceVersion": "1",
                        "annotations": annotations}, "spec": spec}
    obj.update(extra)
    return obj


def pv(name, sc="", size="10Gi", claim=None, phase="Available", labels=None, affinity=None, source=None,
       modes=("ReadWriteOnce",), version="1"):
    spec = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": sc}
    spec.update(source or {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{name}"}})
    if claim is not None:
        spec["claimRef"] = {"namespace": NS, "name": claim}
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    return {"metadata": {"name": name, "labels": labels or {}, "resourceVersion": version}, "spec": spec,
            "status": {"phase": phase}}


def term(key, *values):
    return {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}


def sc(name, mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner", **extra):
    obj = {"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}
    obj.update(extra)
    return obj


def csinode(name, drivers=(), migrated=None):
    meta = {"name": name}
    if migrated:
        meta["annotations"] = {MIGRATED_PLUGINS_ANNOTATION: migrated}
    return {"metadata": meta, "spec": {"drivers": [
        {"name": d, "nodeID": name, **({"allocatable": {"count": c}} if c is not None else {})}
        for d, c in drivers]}}


def cluster(nodes, pods=(), pvs=(), pvcs=(), scs=(), csinodes=(), csidrivers=()):
    infos = [NodeInfo(n) for n in nodes]
    by_name = {ni.name: ni for ni in infos}
    for p in pods:
        by_name[p.node_name].add_pod(p)
    objects = ClusterObjects(persistent_volumes=pvs, persistent_volume_claims=pvcs, storage_classes=scs,
                             csi_nodes=csinodes, csi_drivers=csidrivers)
    return Handle(snapshot=Snapshot(infos, objects))


def run(plugin, p):
    """PreFilter, then Filter on every node: (prefilter code, prefilter reasons, result, {node: (code, reasons)})."""
    state = CycleState()
    res, st = plugin.pre_filter(state, p)
    if st is not None:
        return st.code, st.reasons, res, {}
    out = {}
    for ni in plugin.handle.snapshot.node_infos:
        fst = plugin.filter(state, p, ni)
        out[ni.name] = (Code.SUCCESS, []) if fst is None else (fst.code, fst.reasons)
    return Code.SUCCESS, [], res, out


OK = (Code.SUCCESS, [])


def test_registry_names_the_volume_plugins():
    reg = in_tree_registry()
    assert reg["NodeVolumeLimits"] is CSILimits
    for name in ("VolumeRestrictions", "VolumeBinding", "VolumeZone", "EBSLimits", "GCEPDLimits",
                 "AzureDiskLimits", "CinderLimits"):
        assert reg[name].name == name


def test_pods_without_volumes_skip_every_volume_plugin():
    h = cluster([node("n1")])
    for cls in (VolumeRestrictions, VolumeZone, CSILimits, EBSLimits, GCEPDLimits, AzureDiskLimits, VolumeBinding):
        assert run(cls.new(None, h), pod())[0] == Code.SKIP, cls.name


# -- VolumeRestrictions --------------------------------------------------------------------------------

GCE_A = {"name": "a", "gcePersistentDisk": {"pdName": "foo"}}
GCE_A_RO = {"name": "a", "gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
GCE_B = {"name": "b", "gcePersistentDisk": {"pdName": "bar"}}


@pytest.mark.parametrize("new, existing, want", [
    (GCE_A, [], OK),
    (GCE_A, [GCE_B], OK),
    (GCE_A, [GCE_A], (U, [ERR_REASON_DISK_CONFLICT])),
    (GCE_A_RO, [GCE_A], (U, [ERR_REASON_DISK_CONFLICT])),
    (GCE_A_RO, [GCE_A_RO], OK),
    ({"name": "a", "awsElasticBlockStore": {"volumeID": "foo"}},
     [{"name": "x", "awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}], (U, [ERR_REASON_DISK_CONFLICT])),
    ({"name": "a", "awsElasticBlockStore": {"volumeID": "foo"}},
     [{"name": "x", "awsElasticBlockStore": {"volumeID": "bar"}}], OK),
    ({"name": "a", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}},
     [{"name": "x", "rbd": {"monitors": ["b", "c"], "pool": "foo", "image": "bar"}}], (U, [ERR_REASON_DISK_CONFLICT])),
    ({"name": "a", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}},
     [{"name": "x", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar"}}], OK),
    ({"name": "a", "rbd": {"monitors": ["a"], "image": "bar"}},
     [{"name": "x", "rbd": {"monitors": ["a"], "pool": "rbd", "image": "bar"}}], (U, [ERR_REASON_DISK_CONFLICT])),
    ({"name": "a", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01"}},
     [{"name": "x", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01"}}],
     (U, [ERR_REASON_DISK_CONFLICT])),
    ({"name": "a", "iscsi": {"iqn": "iqn.a", "readOnly": True}},
     [{"name": "x", "iscsi": {"iqn": "iqn.a", "readOnly": True}}], OK),
])
def test_disk_conflicts(new, existing, want):
    h = cluster([node("n1")], [pod(*existing, node="n1")] if existing else [])
    code, _r, _res, per_node = run(VolumeRestrictions.new(None, h), pod(new))
    assert code == Code.SUCCESS
    assert per_node["n1"] == want


def test_read_write_once_pod_conflicts():
    claims = [pvc("rwop", volume="pv-1", modes=("ReadWriteOncePod",)), pvc("rwo", volume="pv-2")]
    holder = pod(claim_vol("rwop"), node="n1")
    h = cluster([node("n1"), node("n2")], [holder], pvcs=claims)
    pl = VolumeRestrictions.new(None, h)
    # not in use (or not ReadWriteOncePod): nothing to check
    assert run(pl, pod(claim_vol("rwo")))[0] == Code.SKIP
    # in use by a scheduled pod: Unschedulable on every node (preemption may help)
    code, _r, _res, per_node = run(pl, pod(claim_vol("rwop")))
    assert code == Code.SUCCESS
    assert per_node == {"n1": (U, [ERR_REASON_RWOP_CONFLICT]), "n2": (U, [ERR_REASON_RWOP_CONFLICT])}
    # a missing claim is UnschedulableAndUnresolvable in PreFilter
    code, reasons, _res, _ = run(pl, pod(claim_vol("missing")))
    assert (code, reasons) == (UU, ['persistentvolumeclaim "missing" not found'])


def test_read_write_once_pod_preemption_extensions():
    claims = [pvc("rwop", volume="pv-1", modes=("ReadWriteOncePod",))]
    holder = pod(claim_vol("rwop"), node="n1")
    h = cluster([node("n1")], [holder], pvcs=claims)
    pl = VolumeRestrictions.new(None, h)
    ni = h.snapshot.get("n1")
    state = CycleState()
    incoming = pod(claim_vol("rwop"))
    assert pl.pre_filter(state, incoming) == (None, None)
    dry_run = state.clone()
    assert pl.remove_pod(dry_run, incoming, holder, ni) is None
    assert pl.filter(dry_run, incoming, ni) is None          # evicting the holder helps
    assert pl.filter(state, incoming, ni).reasons == [ERR_REASON_RWOP_CONFLICT]   # the clone was a copy
    assert pl.add_pod(dry_run, incoming, holder, ni) is None
    assert pl.filter(dry_run, incoming, ni).code == U


# -- VolumeZone ----------------------------------------------------------------------------------------

def zone_cluster(nodes):
    pvs = [pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}, claim="PVC_1"),
           pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}, claim="PVC_2"),
           pv("Vol_3", labels={BETA_REGION: "us-west1-b__us-west1-c"}, claim="PVC_3"),
           pv("Vol_GA", labels={ZONE: "us-west1-a"}, claim="PVC_GA"),
           pv("Vol_bad", labels={ZONE: "a____b"}, claim="PVC_bad")]
    pvcs = [pvc("PVC_1", volume="Vol_1"), pvc("PVC_2", volume="Vol_2"), pvc("PVC_3", volume="Vol_3"),
            pvc("PVC_GA", volume="Vol_GA"), pvc("PVC_bad", volume="Vol_bad"),
            pvc("PVC_NoSC", sc=""), pvc("PVC_EmptySC", sc="Class_0"), pvc("PVC_WFFC", sc="Class_WFFC"),
            pvc("PVC_Immediate", sc="Class_Immediate"), pvc("PVC_Missing", volume="Vol_missing")]
    scs = [{"metadata": {"name": "Class_0"}, "provisioner": "x"}, sc("Class_WFFC"), sc("Class_Immediate", "Immediate")]
    return cluster(nodes, pvs=pvs, pvcs=pvcs, scs=scs)


@pytest.mark.parametrize("claim, labels, want", [
    ("PVC_1", {BETA_ZONE: "us-west1-a"}, OK),
    ("PVC_1", {BETA_ZONE: "us-west1-b"}, (UU, [ERR_REASON_CONFLICT])),
    ("PVC_1", {ZONE: "us-west1-a"}, OK),                      # beta PV label matches the GA node label
    ("PVC_1", {}, OK),                                        # node without zone labels
    ("PVC_1", {REGION: "us-west1"}, (UU, [ERR_REASON_CONFLICT])),
    ("PVC_2", {BETA_REGION: "us-west1"}, OK),
    ("PVC_2", {BETA_REGION: "no_us-west1"}, (UU, [ERR_REASON_CONFLICT])),
    ("PVC_3", {BETA_REGION: "us-west1-c"}, OK),               # multi-zone label joined with "__"
    ("PVC_3", {BETA_REGION: "us-west1-a"}, (UU, [ERR_REASON_CONFLICT])),
    ("PVC_GA", {ZONE: "us-west1-a"}, OK),
    ("PVC_GA", {BETA_ZONE: "us-west1-a"}, (UU, [ERR_REASON_CONFLICT])),   # GA PV label is not translated back
])
def test_volume_zone_filter(claim, labels, want):
    h = zone_cluster([Node({"metadata": {"name": "n1", "labels": labels}})])
    code, _r, _res, per_node = run(VolumeZone.new(None, h), pod(claim_vol(claim)))
    assert code == Code.SUCCESS
    assert per_node["n1"] == want


@pytest.mark.parametrize("claim, want", [
    ("PVC_bad", (Code.SKIP, [])),                             # unparsable label value is ignored
    ("PVC_WFFC", (Code.SKIP, [])),                            # unbound WaitForFirstConsumer: not yet known
    ("PVC_NoSC", (UU, ["PersistentVolumeClaim had no pv name and storageClass name"])),
    ("PVC_EmptySC", (UU, ['VolumeBindingMode not set for StorageClass "Class_0"'])),
    ("PVC_Immediate", (UU, ["PersistentVolume had no name"])),
    ("PVC_Missing", (UU, ['persistentvolume "Vol_missing" not found'])),
    ("PVC_Nope", (UU, ['persistentvolumeclaim "PVC_Nope" not found'])),
])
def test_volume_zone_prefilter(claim, want):
    h = zone_cluster([node("n1", {BETA_ZONE: "us-west1-a"})])
    code, reasons, _res, _ = run(VolumeZone.new(None, h), pod(claim_vol(claim)))
    assert (code, reasons) == want


# -- NodeVolumeLimits (CSI) ----------------------------------------------------------------------------

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"


def csi_cluster(existing=(), limit=2, csinode_kw=None, allocatable=None, extra_pvs=(), extra_pvcs=(), scs=()):
    pvs = [pv(f"pv-{i}", source={"csi": {"driver": EBS, "volumeHandle": f"vol-{i}"}}, claim=f"c-{i}")
           for i in range(6)]
    pvcs = [pvc(f"c-{i}", volume=f"pv-{i}") for i in range(6)]
    nodes = [node("n1", allocatable=allocatable)]
    cn = [csinode("n1", [(EBS, limit)], **(csinode_kw or {}))] if limit is not None or csinode_kw else []
    return cluster(nodes, [pod(*[claim_vol(c) for c in cl], node="n1") for cl in existing],
                   pvs=pvs + list(extra_pvs), pvcs=pvcs + list(extra_pvcs), scs=scs, csinodes=cn)


@pytest.mark.parametrize("existing, new, limit, want", [
    ([["c-0"]], ["c-1"], 2, OK),
    ([["c-0", "c-1"]], ["c-2"], 2, (U, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])),
    ([["c-0", "c-1"]], ["c-0"], 2, OK),                       # already attached for another pod: not counted again
    ([["c-0"], ["c-0"]], ["c-1"], 2, OK),                     # a shared volume counts once
    ([], ["c-0", "c-1", "c-2"], 2, (U, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])),
    ([["c-0", "c-1"]], ["c-2"], None, OK),                    # no CSINode: no limit
])
def test_csi_limits(existing, new, limit, want):
    h = csi_cluster(existing, limit)
    code, _r, _res, per_node = run(CSILimits.new(None, h), pod(*[claim_vol(c) for c in new]))
    assert code == Code.SUCCESS
    assert per_node["n1"] == want


def test_csi_limits_from_node_allocatable_and_missing_claim():
    key = csi_attach_limit_key(EBS)
    h = csi_cluster([["c-0"]], limit=None, allocatable={key: "1"})
    pl = CSILimits.new(None, h)
    assert run(pl, pod(claim_vol("c-1")))[3]["n1"] == (U, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
    assert run(pl, pod(claim_vol("nope"), name="p"))[3]["n1"] == (
        UU, ['looking up PVC default/nope: persistentvolumeclaim "nope" not found'])


def test_csi_limits_unbound_claim_counts_through_storage_class():
    scs = [sc("csi-sc", provisioner=EBS), sc("intree-sc", provisioner="kubernetes.io/aws-ebs")]
    extra = [pvc("unbound", sc="csi-sc"), pvc("unbound-2", sc="csi-sc"), pvc("intree", sc="intree-sc")]
    h = csi_cluster([["c-0"]], limit=2, extra_pvcs=extra, scs=scs)
    pl = CSILimits.new(None, h)
    assert run(pl, pod(claim_vol("unbound")))[3]["n1"] == OK
    assert run(pl, pod(claim_vol("unbound"), claim_vol("unbound-2")))[3]["n1"][0] == U
    # an in-tree provisioner counts as its CSI driver once migrated (any CSINode, in v1.30)
    assert run(pl, pod(claim_vol("intree"), claim_vol("unbound")))[3]["n1"][0] == U


def test_csi_limits_count_migrated_in_tree_volumes():
    ebs_pv = pv("ebs-pv", source={"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-abc"}}, claim="ebs")
    inline = {"name": "inline", "awsElasticBlockStore": {"volumeID": "vol-abc"}}
    h = csi_cluster([["c-0"]], limit=2, extra_pvs=[ebs_pv], extra_pvcs=[pvc("ebs", volume="ebs-pv")])
    pl = CSILimits.new(None, h)
    assert run(pl, pod(inline))[0] == Code.SUCCESS             # in-line migratable volume: not skipped
    assert run(pl, pod(claim_vol("ebs")))[3]["n1"] == OK       # 1 + 1 <= 2
    # the in-line and the PV volume are the same EBS disk (vol-abc): counted once
    assert run(pl, pod(claim_vol("ebs"), inline))[3]["n1"] == OK
    assert run(pl, pod(claim_vol("ebs"), claim_vol("c-1")))[3]["n1"][0] == U


def test_csi_limits_ephemeral_volume_must_belong_to_pod():
    owner = pod({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}, name="eph", uid="u-eph")
    mine = pvc("eph-scratch", volume="pv-5")
    mine["metadata"]["ownerReferences"] = [{"uid": "u-eph", "controller": True, "kind": "Pod", "name": "eph"}]
    h = csi_cluster([["c-0", "c-1"]], limit=2, extra_pvcs=[mine])
    assert run(CSILimits.new(None, h), owner)[3]["n1"][0] == U
    other = pod({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}, name="eph", uid="u-other")
    assert run(CSILimits.new(None, h), other)[3]["n1"] == (
        Code.ERROR, ["PVC default/eph-scratch was not created for pod default/eph (pod is not owner)"])


# -- in-tree limits ------------------------------------------------------------------------------------

def ebs_vol(i):
    return {"name": f"v{i}", "awsElasticBlockStore": {"volumeID": f"ebs-{i}"}}


@pytest.mark.parametrize("instance, allocatable, existing, new, want_fit", [
    ("m4.large", None, 38, 1, True),
    ("m4.large", None, 39, 1, False),           # default limit 39
    ("m5.large", None, 24, 1, True),
    ("m5.large", None, 25, 1, False),           # nitro instances: 25
    ("t3.medium", None, 25, 1, False),
    ("m4.large", {"attachable-volumes-aws-ebs": "3"}, 3, 1, False),
    ("m4.large", {"attachable-volumes-aws-ebs": "3"}, 2, 1, True),
    ("m4.large", None, 39, 0, True),            # the new pod's volume is already on the node
])
def test_ebs_limits(instance, allocatable, existing, new, want_fit):
    n = node("n1", {"node.kubernetes.io/instance-type": instance}, allocatable)
    pods = [pod(*[ebs_vol(i) for i in range(existing)], node="n1")] if existing else []
    h = cluster([n], pods)
    new_pod = pod(*[ebs_vol(100 + i) for i in range(new)]) if new else pod(ebs_vol(0))
    code, _r, _res, per_node = run(EBSLimits.new(None, h), new_pod)
    assert code == Code.SUCCESS
    assert per_node["n1"] == (OK if want_fit else (U, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED]))


def test_in_tree_limits_env_override_and_migration(monkeypatch):
    pods = [pod(*[{"name": f"g{i}", "gcePersistentDisk": {"pdName": f"pd-{i}"}} for i in range(2)], node="n1")]
    new = pod({"name": "g", "gcePersistentDisk": {"pdName": "pd-new"}})
    h = cluster([node("n1")], pods)
    pl = GCEPDLimits.new(None, h)
    assert run(pl, new)[3]["n1"] == OK                        # default 16
    monkeypatch.setenv("KUBE_MAX_PD_VOLS", "2")
    assert run(pl, new)[3]["n1"] == (U, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
    # with a CSINode the in-tree plugin is migrated: NodeVolumeLimits counts instead
    h2 = cluster([node("n1")], pods, csinodes=[csinode("n1", [(GCE, 16)])])
    assert run(GCEPDLimits.new(None, h2), new)[3]["n1"] == OK


def test_in_tree_limits_count_claims():
    azure_pv = pv("az", source={"azureDisk": {"diskName": "disk-1", "diskURI": "uri-1"}}, claim="az")
    scs = [sc("azure", "Immediate", "kubernetes.io/azure-disk")]
    claims = [pvc("az", volume="az"), pvc("az-unbound", sc="azure"), pvc("other", sc="")]
    h = cluster([node("n1", allocatable={"attachable-volumes-azure-disk": "1"})],
                [pod(claim_vol("az"), node="n1")], pvs=[azure_pv], pvcs=claims, scs=scs)
    pl = AzureDiskLimits.new(None, h)
    assert run(pl, pod(claim_vol("az")))[3]["n1"] == OK        # same disk
    assert run(pl, pod(claim_vol("az-unbound")))[3]["n1"][0] == U   # unbound, provisioner matches: counted
    assert run(pl, pod(claim_vol("other")))[3]["n1"] == OK    # no class: not ours
    assert run(pl, pod(claim_vol("gone")))[3]["n1"] == (
        UU, ['looking up PVC default/gone: persistentvolumeclaim "gone" not found'])
    assert run(pl, pod(claim_vol("az")))[0] == Code.SUCCESS    # claims are not skipped (may hide our type)


# -- VolumeBinding -------------------------------------------------------------------------------------

def binding_plugin(h, args=None):
    return VolumeBinding.new(args, h)


def test_volume_binding_prefilter_outcomes():
    scs = [sc("wait"), sc("immediate", "Immediate")]
    claims = [pvc("bound", volume="pv-a"), pvc("unbound-wait", sc="wait"),
              pvc("unbound-imm", sc="immediate"), pvc("lost", volume="pv-x", status={"phase": "Lost"}),
              pvc("deleting", volume="pv-a")]
    claims[-1]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    h = cluster([node("n1")], pvs=[pv("pv-a", claim="bound", phase="Bound")], pvcs=claims, scs=scs)
    pl = binding_plugin(h)
    assert run(pl, pod({"name": "e", "emptyDir": {}}))[0] == Code.SKIP
    assert run(pl, pod(claim_vol("bound")))[:3] == (Code.SUCCESS, [], None)
    assert run(pl, pod(claim_vol("unbound-imm")))[:2] == (UU, [ERR_UNBOUND_IMMEDIATE])
    # pre-bound to a PV by the user but not yet bound by the controller: treated as immediate
    claims.append(pvc("prebound", volume="pv-a", sc="wait", bound=False))
    pl = binding_plugin(cluster([node("n1")], pvs=[pv("pv-a", claim="bound", phase="Bound")], pvcs=claims, scs=scs))
    assert run(pl, pod(claim_vol("prebound")))[:2] == (UU, [ERR_UNBOUND_IMMEDIATE])
    assert run(pl, pod(claim_vol("bound"), claim_vol("nope")))[:2] == (
        UU, ['persistentvolumeclaim "nope" not found'])
    assert run(pl, pod(claim_vol("lost")))[:2] == (
        UU, ['persistentvolumeclaim "lost" bound to non-existent persistentvolume "pv-x"'])
    assert run(pl, pod(claim_vol("deleting")))[:2] == (UU, ['persistentvolumeclaim "deleting" is being deleted'])
    assert run(pl, pod({"name": "scratch", "ephemeral": {}}, name="eph"))[:2] == (
        UU, ['waiting for ephemeral volume controller to create the persistentvolumeclaim "eph-scratch"'])
    assert pl.pre_score(CycleState(), pod(claim_vol("bound")), h.snapshot.node_infos).code == Code.SKIP


def test_volume_binding_bound_claims():
    local = pv("local", claim="c-local", phase="Bound", affinity=[term(HOST, "n2")])
    zonal = pv("zonal", claim="c-zonal", phase="Bound", affinity=[term(ZONE, "z1")])
    claims = [pvc("c-local", volume="local"), pvc("c-zonal", volume="zonal"), pvc("c-ghost", volume="ghost")]
    nodes = [node("n1", {ZONE: "z1"}), node("n2", {ZONE: "z2"}), node("n3", {ZONE: "z1"})]
    pl = binding_plugin(cluster(nodes, pvs=[local, zonal], pvcs=claims))
    code, _r, res, per_node = run(pl, pod(claim_vol("c-local")))
    assert res == {"n2"}                                      # a local PV narrows the nodes (PreFilterResult)
    assert per_node["n2"] == OK and per_node["n1"] == (UU, [ERR_REASON_NODE_CONFLICT])
    code, _r, res, per_node = run(pl, pod(claim_vol("c-zonal")))
    assert res is None
    assert per_node == {"n1": OK, "n2": (UU, [ERR_REASON_NODE_CONFLICT]), "n3": OK}
    code, _r, res, per_node = run(pl, pod(claim_vol("c-ghost")))
    assert res is None and per_node["n1"] == (UU, [ERR_REASON_PV_NOT_EXIST])
    # both local and zonal: intersection of the local nodes, and every failing reason is listed
    code, _r, res, per_node = run(pl, pod(claim_vol("c-local"), claim_vol("c-zonal")))
    assert res == {"n2"} and per_node["n2"] == (UU, [ERR_REASON_NODE_CONFLICT])


def test_volume_binding_bound_and_unbound_unsatisfied_lists_both_reasons():
    zonal = pv("zonal", claim="c-zonal", phase="Bound", affinity=[term(ZONE, "z9")])
    claims = [pvc("c-zonal", volume="zonal"), pvc("c-wait", sc="wait")]
    pl = binding_plugin(cluster([node("n1", {ZONE: "z1"})], pvs=[zonal], pvcs=claims, scs=[sc("wait")]))
    per_node = run(pl, pod(claim_vol("c-zonal"), claim_vol("c-wait")))[3]
    assert per_node["n1"] == (UU, [ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT])


def wffc_cluster(pvs, claims, nodes=None, scs=None):
    return cluster(nodes or [node("n1"), node("n2")], pvs=pvs, pvcs=claims, scs=scs or [sc("local")])


def test_find_matching_volume_rules():
    pvs = [pv("small", "local", "5Gi", affinity=[term(HOST, "n1")]),
           pv("big", "local", "100Gi", affinity=[term(HOST, "n1")]),
           pv("mid", "local", "20Gi", affinity=[term(HOST, "n1")]),
           pv("other-class", "fast", "10Gi", affinity=[term(HOST, "n2")]),
           pv("released", "local", "10Gi", phase="Released", affinity=[term(HOST, "n2")]),
           pv("block", "local", "10Gi", affinity=[term(HOST, "n2")]),
           pv("rox-only", "local", "10Gi", modes=("ReadOnlyMany",), affinity=[term(HOST, "n2")])]
    pvs[5]["spec"]["volumeMode"] = "Block"
    claims = [pvc("want-10", sc="local", size="10Gi")]
    pl = binding_plugin(wffc_cluster(pvs, claims))
    state = CycleState()
    p = pod(claim_vol("want-10"))
    assert pl.pre_filter(state, p) == (None, None)
    assert pl.filter(state, p, pl.handle.snapshot.get("n1")) is None
    chosen = state.read("VolumeBinding").pod_volumes_by_node["n1"].static_bindings[0].pv
    assert chosen["metadata"]["name"] == "mid"                # the smallest PV that fits
    assert pl.filter(state, p, pl.handle.snapshot.get("n2")).reasons == [ERR_REASON_BIND_CONFLICT]


def test_prebound_pv_wins_and_selector_filters():
    prebound = pv("pre", "local", "10Gi", claim="c1", affinity=[term(HOST, "n2")])
    labeled = pv("labeled", "local", "10Gi", labels={"tier": "gold"}, affinity=[term(HOST, "n1")])
    plain = pv("plain", "local", "10Gi", affinity=[term(HOST, "n1")])
    claims = [pvc("c1", sc="local"), pvc("c2", sc="local", spec={"selector": {"matchLabels": {"tier": "gold"}}})]
    pl = binding_plugin(wffc_cluster([prebound, labeled, plain], claims))
    per_node = run(pl, pod(claim_vol("c1")))[3]
    # the PV pre-bound to the claim is the only match, and only where its affinity holds
    assert per_node == {"n1": (UU, [ERR_REASON_BIND_CONFLICT]), "n2": OK}
    state = CycleState()
    p = pod(claim_vol("c2"))
    pl.pre_filter(state, p)
    assert pl.filter(state, p, pl.handle.snapshot.get("n1")) is None
    assert state.read("VolumeBinding").pod_volumes_by_node["n1"].static_bindings[0].pv["metadata"]["name"] == "labeled"


def test_dynamic_provisioning_and_allowed_topologies():
    scs = [sc("dyn", provisioner="ebs.csi.aws.com",
              allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["z1"]}]}]),
           sc("cap", provisioner="cap.csi.io")]
    claims = [pvc("c", sc="dyn"), pvc("capped", sc="cap"),
              pvc("picked", sc="dyn", ann={ANN_SELECTED_NODE: "n2"})]
    drivers = [{"metadata": {"name": "cap.csi.io"}, "spec": {"storageCapacity": True}}]
    h = cluster([node("n1", {ZONE: "z1"}), node("n2", {ZONE: "z2"})], pvcs=claims, scs=scs, csidrivers=drivers)
    pl = binding_plugin(h)
    assert run(pl, pod(claim_vol("c")))[3] == {"n1": OK, "n2": (UU, [ERR_REASON_BIND_CONFLICT])}
    # a driver tracking capacity without any CSIStorageCapacity object has no room anywhere
    assert run(pl, pod(claim_vol("capped")))[3]["n1"] == (UU, [ERR_REASON_NOT_ENOUGH_SPACE])
    # a claim already marked for provisioning only fits its selected node
    assert run(pl, pod(claim_vol("picked")))[3] == {"n1": (UU, [ERR_REASON_BIND_CONFLICT]), "n2": (UU, [
        ERR_REASON_BIND_CONFLICT])}  # n2 is outside the class's allowed topology


def test_reserve_assumes_pv_for_later_pods_and_unreserve_reverts():
    pvs = [pv("w1", "local", "100Gi", affinity=[term(HOST, "n1")])]
    claims = [pvc("a", sc="local", size="50Gi"), pvc("b", sc="local", size="50Gi")]
    pl = binding_plugin(wffc_cluster(pvs, claims))
    n1 = pl.handle.snapshot.get("n1")
    first, second = pod(claim_vol("a")), pod(claim_vol("b"))
    state = CycleState()
    pl.pre_filter(state, first)
    assert pl.filter(state, first, n1) is None
    assert pl.reserve(state, first, "n1") is None
    assumed = pl.binder.pv_cache.get("w1")
    assert assumed["spec"]["claimRef"]["name"] == "a"
    assert assumed["metadata"]["annotations"][ANN_BOUND_BY_CONTROLLER] == "yes"
    assert pl.handle.objects.persistent_volumes["w1"]["spec"].get("claimRef") is None   # cluster untouched
    # the next pod in the run cannot take the PV the first one reserved
    assert run(pl, second)[3]["n1"] == (UU, [ERR_REASON_BIND_CONFLICT])
    pl.unreserve(state, first, "n1")
    assert run(pl, second)[3]["n1"] == OK


def test_reserve_marks_claims_for_provisioning():
    scs = [sc("dyn", provisioner="ebs.csi.aws.com")]
    pl = binding_plugin(cluster([node("n1"), node("n2")], pvcs=[pvc("c", sc="dyn")], scs=scs))
    state = CycleState()
    p = pod(claim_vol("c"))
    pl.pre_filter(state, p)
    for ni in pl.handle.snapshot.node_infos:
        assert pl.filter(state, p, ni) is None
    assert pl.reserve(state, p, "n2") is None
    assert pl.binder.pvc_cache.get("default/c")["metadata"]["annotations"][ANN_SELECTED_NODE] == "n2"
    # another pod sharing the claim now only fits n2
    assert run(pl, pod(claim_vol("c")))[3] == {"n1": (UU, [ERR_REASON_BIND_CONFLICT]), "n2": OK}


def test_reserve_with_all_claims_bound_assumes_nothing():
    claims = [pvc("bound", volume="pv-a")]
    pl = binding_plugin(cluster([node("n1")], pvs=[pv("pv-a", claim="bound", phase="Bound")], pvcs=claims))
    state = CycleState()
    p = pod(claim_vol("bound"))
    pl.pre_filter(state, p)
    pl.filter(state, p, pl.handle.snapshot.get("n1"))
    assert pl.reserve(state, p, "n1") is None
    assert state.read("VolumeBinding").all_bound
    assert pl.pre_bind(state, p, "n1") is None


class FakeClient:
    """The API server plus a PV controller that completes every binding it sees."""

    def __init__(self, objects, fail=None):
        self.objects = objects
        self.fail = fail
        self.calls = []

    def update_pv(self, pv_obj):
        self.calls.append(("pv", pv_obj["metadata"]["name"]))
        if self.fail:
            raise RuntimeError(self.fail)
        stored = dict(pv_obj, metadata=dict(pv_obj["metadata"], resourceVersion="2"))
        ref = dict(stored["spec"]["claimRef"], uid="uid-" + stored["spec"]["claimRef"]["name"])
        stored["spec"] = dict(stored["spec"], claimRef=ref)
        self.objects.persistent_volumes[stored["metadata"]["name"]] = stored
        key = f'{ref["namespace"]}/{ref["name"]}'
        claim = self.objects.persistent_volume_claims[key]
        self.objects.persistent_volume_claims[key] = dict(
            claim, spec=dict(claim["spec"], volumeName=stored["metadata"]["name"]),
            metadata=dict(claim["metadata"], resourceVersion="2",
                          annotations={ANN_BIND_COMPLETED: "yes"}))
        return stored

    def update_pvc(self, pvc_obj):
        self.calls.append(("pvc", pvc_obj["metadata"]["name"]))
        stored = dict(pvc_obj, metadata=dict(pvc_obj["metadata"], resourceVersion="2"))
        self.objects.persistent_volume_claims[f'{NS}/{pvc_obj["metadata"]["name"]}'] = stored
        return stored


def test_prebind_writes_bindings_and_waits_for_the_controller():
    pvs = [pv("w1", "local", "100Gi", affinity=[term(HOST, "n1")])]
    h = wffc_cluster(pvs, [pvc("a", sc="local")])
    pl = binding_plugin(h)
    state = CycleState()
    p = pod(claim_vol("a"))
    pl.pre_filter(state, p)
    pl.filter(state, p, h.snapshot.get("n1"))
    assert pl.reserve(state, p, "n1") is None
    assert pl.pre_bind(state, p, "n1") is None                # no client (one-pass simulation): nothing to write
    h.client = FakeClient(h.objects)
    assert pl.pre_bind(state, p, "n1") is None
    assert h.client.calls == [("pv", "w1")]
    # the newer API object replaced the assumed one
    assert pl.binder.pv_cache.get("w1")["metadata"]["resourceVersion"] == "2"


def test_prebind_api_error_reverts_the_assumption():
    pvs = [pv("w1", "local", "100Gi", affinity=[term(HOST, "n1")])]
    h = wffc_cluster(pvs, [pvc("a", sc="local")])
    pl = binding_plugin(h)
    state = CycleState()
    p = pod(claim_vol("a"))
    pl.pre_filter(state, p)
    pl.filter(state, p, h.snapshot.get("n1"))
    pl.reserve(state, p, "n1")
    h.client = FakeClient(h.objects, fail='persistentvolumes "w1" is forbidden')
    st = pl.pre_bind(state, p, "n1")
    assert st.code == Code.ERROR and st.reasons == ['persistentvolumes "w1" is forbidden']
    assert pl.binder.pv_cache.get("w1")["spec"].get("claimRef") is None


def test_prebind_times_out_without_a_pv_controller():
    scs = [sc("dyn", provisioner="ebs.csi.aws.com")]
    h = cluster([node("n1")], pvcs=[pvc("c", sc="dyn")], scs=scs)
    pl = binding_plugin(h, {"bindTimeoutSeconds": 0})
    state = CycleState()
    p = pod(claim_vol("c"))
    pl.pre_filter(state, p)
    pl.filter(state, p, h.snapshot.get("n1"))
    pl.reserve(state, p, "n1")
    h.client = FakeClient(h.objects)     # stores the claim; nothing provisions it
    st = pl.pre_bind(state, p, "n1")
    assert h.client.calls == [("pvc", "c")]
    assert st.reasons == ["binding volumes: context deadline exceeded"]


def test_prebind_fails_when_provisioning_is_abandoned():
    scs = [sc("dyn", provisioner="ebs.csi.aws.com")]
    h = cluster([node("n1")], pvcs=[pvc("c", sc="dyn")], scs=scs)
    pl = binding_plugin(h, {"bindTimeoutSeconds": 0})
    state = CycleState()
    p = pod(claim_vol("c"))
    pl.pre_filter(state, p)
    pl.filter(state, p, h.snapshot.get("n1"))
    pl.reserve(state, p, "n1")

    class DroppingClient(FakeClient):
        def update_pvc(self, pvc_obj):   # the provisioner gives up and clears the selected node
            stored = super().update_pvc(pvc_obj)
            stored["metadata"]["annotations"] = {}
            return stored

    h.client = DroppingClient(h.objects)
    st = pl.pre_bind(state, p, "n1")
    assert st.reasons == ['binding volumes: provisioning failed for PVC "c"']


def test_assume_cache_drops_assumption_on_newer_cluster_object():
    pvs = [pv("w1", "local", "100Gi", affinity=[term(HOST, "n1")])]
    h = wffc_cluster(pvs, [pvc("a", sc="local")])
    cache = binding_plugin(h).binder.pv_cache
    base = h.objects.persistent_volumes["w1"]
    assumed, dirty = bind_volume_to_claim(base, h.objects.persistent_volume_claims["default/a"])
    assert dirty and cache.assume("w1", assumed) is None
    assert cache.get("w1") is assumed and cache.get_api("w1") is base
    older = dict(assumed, metadata=dict(assumed["metadata"], resourceVersion="0"))
    assert cache.assume("w1", older) == 'v1.PersistentVolume "w1" is out of sync (stored: 1, assume: 0)'
    h.objects.persistent_volumes["w1"] = dict(base, metadata=dict(base["metadata"], resourceVersion="1"))
    assert cache.get("w1") is assumed                          # not newer: the assumption stays
    newer = dict(base, metadata=dict(base["metadata"], resourceVersion="5"))
    h.objects.persistent_volumes["w1"] = newer
    assert cache.get("w1") is newer
    del h.objects.persistent_volumes["w1"]
    assert cache.get("w1") is None and cache.list_pvs("local") == []


# -- helpers -------------------------------------------------------------------------------------------

def test_local_pv_node_names_and_topology_terms():
    local = pv("l", affinity=[{"matchExpressions": [{"key": HOST, "operator": "In", "values": ["a", "b"]},
                                                    {"key": HOST, "operator": "In", "values": ["b", "c"]}]},
                              term(HOST, "d"), term(ZONE, "z")])
    assert local_pv_node_names(local) == ["b", "d"]
    assert local_pv_node_names(pv("x")) == []
    terms = [{"matchLabelExpressions": [{"key": ZONE, "values": ["z1", "z2"]}, {"key": "rack", "values": ["r1"]}]}]
    assert match_topology_selector_terms(terms, {ZONE: "z2", "rack": "r1"})
    assert not match_topology_selector_terms(terms, {ZONE: "z2"})
    assert match_topology_selector_terms([], {})


def test_csi_translation():
    assert csitrans.ebs_volume_id("aws://us-east-1a/vol-123") == "vol-123"
    assert csitrans.ebs_volume_id("aws:///vol-123") == "vol-123"
    assert csitrans.ebs_volume_id("vol-123") == "vol-123"
    with pytest.raises(csitrans.TranslationError):
        csitrans.ebs_volume_id("aws://us-east-1a/bad/id")
    gce = pv("g", labels={ZONE: "us-central1-a__us-central1-b"}, source={"gcePersistentDisk": {"pdName": "disk"}},
             affinity=[term(ZONE, "us-central1-a", "us-central1-b"), term(BETA_REGION, "us-central1")])
    out = csitrans.translate_pv(gce, csitrans.GCE_PD)
    assert out["spec"]["csi"] == {"driver": "pd.csi.storage.gke.io",
                                  "volumeHandle": "projects/UNSPECIFIED/regions/us-central1/disks/disk"}
    keys = [e["key"] for t in out["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
            for e in t["matchExpressions"]]
    assert keys == ["topology.gke.io/zone", BETA_REGION]       # GA zone label: the beta region stays
    ebs = pv("e", labels={BETA_ZONE: "us-east-1a", BETA_REGION: "us-east-1"},
             source={"awsElasticBlockStore": {"volumeID": "vol-1"}},
             affinity=[term(BETA_REGION, "us-east-1")])
    out = csitrans.translate_pv(ebs, csitrans.AWS_EBS)
    assert out["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [{"matchExpressions": [
        {"key": REGION, "operator": "In", "values": ["us-east-1"]},
        {"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": ["us-east-1a"]}]}]
    assert "awsElasticBlockStore" not in out["spec"] and "awsElasticBlockStore" in ebs["spec"]


def test_bound_in_tree_pv_is_checked_in_its_csi_form_once_migrated():
    ebs = pv("e", claim="c", phase="Bound", labels={ZONE: "z1"}, source={"awsElasticBlockStore": {"volumeID": "vol-1"}})
    nodes = [node("n1", {ZONE: "z1"}), node("n2", {ZONE: "z1", "topology.ebs.csi.aws.com/zone": "z1"})]
    cns = [csinode("n1", migrated="kubernetes.io/aws-ebs"), csinode("n2", migrated="kubernetes.io/aws-ebs")]
    pl = binding_plugin(cluster(nodes, pvs=[ebs], pvcs=[pvc("c", volume="e")], csinodes=cns))
    # translated, the PV requires the EBS CSI driver's zone label, which only n2 has
    assert run(pl, pod(claim_vol("c")))[3] == {"n1": (UU, [ERR_REASON_NODE_CONFLICT]), "n2": OK}


def test_bind_volume_to_claim_is_clean_when_already_bound():
    claim = pvc("a", volume="w1")
    bound = pv("w1", claim="a")
    bound["spec"]["claimRef"]["uid"] = "uid-a"
    bound["metadata"]["annotations"] = {ANN_BOUND_BY_CONTROLLER: "yes"}
    assert bind_volume_to_claim(bound, claim)[1] is False
    new, dirty = bind_volume_to_claim(pv("w2"), claim)
    assert dirty and new["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "namespace": NS, "name": "a",
                                                 "uid": "uid-a", "apiVersion": "v1", "resourceVersion": "1"}
