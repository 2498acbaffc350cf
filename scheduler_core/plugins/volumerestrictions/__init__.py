"""VolumeRestrictions: exclusive in-line disks (GCE PD, AWS EBS, iSCSI, Ceph RBD) and ReadWriteOncePod claims."""
from __future__ import annotations

from ...framework.handle import features_of, queueing_hints_of
from ...framework.interface import QUEUE, QUEUE_SKIP, FilterPlugin, PreFilterExtensions, PreFilterPlugin
from ...framework.status import Code, Status
from ...framework import signers
from .. import names
from ..helper.volume import READ_WRITE_ONCE_POD, pvc_not_found, spec

PRE_FILTER_KEY = "PreFilter" + names.VOLUME_RESTRICTIONS
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = ("node has pod using PersistentVolumeClaim with the same name and "
                            "ReadWriteOncePod access mode")
# 1.36's text (versions: volume-conflict-messages)
ERR_REASON_RWOP_CONFLICT_136 = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
                                "already in-use by another pod")
_RESTRICTED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


class _PreFilterState:
    """Names of the pod's ReadWriteOncePod claims and how many scheduled pods use them."""

    __slots__ = ("rwop_pvcs", "conflicting_ref_count")

    def __init__(self, rwop_pvcs, conflicting_ref_count: int):
        self.rwop_pvcs = rwop_pvcs
        self.conflicting_ref_count = conflicting_ref_count

    def update_with_pod(self, pod, multiplier: int):
        """Add (1) or remove (-1) the references of ``pod`` to these claims (by claim name only, as kube)."""
        for vol in pod.volumes:
            pvc = vol.get("persistentVolumeClaim")
            if pvc is not None and pvc.get("claimName", "") in self.rwop_pvcs:
                self.conflicting_ref_count += multiplier

    def clone(self):
        return _PreFilterState(self.rwop_pvcs, self.conflicting_ref_count)


def _claim_names(pod) -> set:
    """The claims the pod's volumes name."""
    return {(v.get("persistentVolumeClaim") or {}).get("claimName", "") for v in pod.volumes
            if v.get("persistentVolumeClaim") is not None}


def needs_restrictions_check(vol: dict) -> bool:
    return any(vol.get(k) is not None for k in _RESTRICTED_SOURCES)


def _have_overlap(a, b) -> bool:
    return not set(a).isdisjoint(b)


def is_volume_conflict(vol: dict, pod) -> bool:
    """isVolumeConflict: ``vol`` clashes with one of ``pod``'s volumes."""
    gce, ebs, iscsi, rbd = (vol.get("gcePersistentDisk"), vol.get("awsElasticBlockStore"), vol.get("iscsi"),
                            vol.get("rbd"))
    for ev in pod.volumes:
        egce = ev.get("gcePersistentDisk")
        if gce is not None and egce is not None:
            if gce.get("pdName", "") == egce.get("pdName", "") and not (
                    gce.get("readOnly") and egce.get("readOnly")):
                return True
        eebs = ev.get("awsElasticBlockStore")
        if ebs is not None and eebs is not None and ebs.get("volumeID", "") == eebs.get("volumeID", ""):
            return True
        eiscsi = ev.get("iscsi")
        if iscsi is not None and eiscsi is not None:
            if iscsi.get("iqn", "") == eiscsi.get("iqn", "") and not (
                    iscsi.get("readOnly") and eiscsi.get("readOnly")):
                return True
        erbd = ev.get("rbd")
        if rbd is not None and erbd is not None:
            if (_have_overlap(rbd.get("monitors") or (), erbd.get("monitors") or ())
                    and (rbd.get("pool") or "rbd") == (erbd.get("pool") or "rbd")
                    and rbd.get("image", "") == erbd.get("image", "")
                    and not (rbd.get("readOnly") and erbd.get("readOnly"))):
                return True
    return False


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, PreFilterExtensions):
    name = names.VOLUME_RESTRICTIONS

    def __init__(self, handle):
        self.handle = handle
        self.queueing_hints = queueing_hints_of(handle)
        self.rwop_conflict_reason = ERR_REASON_RWOP_CONFLICT_136 if features_of(handle).has(
            "volume-conflict-messages") else ERR_REASON_RWOP_CONFLICT

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def pre_filter(self, state, pod):
        volumes = pod.volumes
        if not volumes:
            return None, Status(Code.SKIP)
        needs_check = any(needs_restrictions_check(v) for v in volumes)
        claims = self.handle.objects.persistent_volume_claims
        rwop = set()
        for vol in volumes:
            ref = vol.get("persistentVolumeClaim")
            if ref is None:
                continue
            claim = ref.get("claimName", "")
            pvc = claims.get(f"{pod.namespace}/{claim}")
            if pvc is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, pvc_not_found(claim))
            if READ_WRITE_ONCE_POD in (spec(pvc).get("accessModes") or ()):
                rwop.add(pvc["metadata"]["name"])
        conflicting = 0
        if rwop:
            node_infos = self.handle.snapshot.node_infos
            for claim in rwop:
                key = f"{pod.namespace}/{claim}"
                if any(key in ni.pvc_ref_counts for ni in node_infos):
                    conflicting += 1  # at most one pod can use a ReadWriteOncePod claim
        if not needs_check and conflicting == 0:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, _PreFilterState(frozenset(rwop), conflicting))
        return None, None

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'cannot read "{PRE_FILTER_KEY}" from cycleState')
        s.update_with_pod(pod_to_add, 1)
        return None

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'cannot read "{PRE_FILTER_KEY}" from cycleState')
        s.update_with_pod(pod_to_remove, -1)
        return None

    def filter(self, state, pod, node_info):
        for vol in pod.volumes:
            if not needs_restrictions_check(vol):
                continue
            for existing in node_info.pods:
                if existing.volumes and is_volume_conflict(vol, existing):
                    return Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'cannot read "{PRE_FILTER_KEY}" from cycleState')
        if s.conflicting_ref_count > 0:
            return Status(Code.UNSCHEDULABLE, self.rwop_conflict_reason)
        return None

    def events_to_register(self):
        if not self.queueing_hints:
            return (("Pod", ("Delete",)), ("Node", ("Add",)), ("PersistentVolumeClaim", ("Add", "Update")))
        return (("Pod", ("Delete",), self.is_schedulable_after_pod_deleted), ("Node", ("Add",)),
                ("PersistentVolumeClaim", ("Add",), self.is_schedulable_after_pvc_added))

    @staticmethod
    def is_schedulable_after_pvc_added(pod, old, new):
        """A claim of the pod's namespace that one of its volumes names."""
        meta = new.get("metadata") or {}
        if (meta.get("namespace") or "") != pod.namespace:
            return QUEUE_SKIP
        return QUEUE if (meta.get("name") or "") in _claim_names(pod) else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pod_deleted(pod, old, new):
        """A deleted pod of the pod's namespace whose disks conflicted with the pod's, or that used one of its
        claims."""
        if old.namespace != pod.namespace:
            return QUEUE_SKIP
        if any(needs_restrictions_check(v) and is_volume_conflict(v, old) for v in pod.volumes):
            return QUEUE
        return QUEUE if not _claim_names(pod).isdisjoint(_claim_names(old)) else QUEUE_SKIP

    def sign_pod(self, pod):
        """Feasibility and scoring depend on the volume sources other than configMap and secret."""
        return [(signers.VOLUMES, signers.volumes(pod))], None
