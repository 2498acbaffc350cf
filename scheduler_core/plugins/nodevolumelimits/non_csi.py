"""EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits: in-tree attach limits (deprecated in kube).

Each counts the unique volumes of its type (in-line, or behind a claim) on the node plus the new pod's,
against KUBE_MAX_PD_VOLS, the node's ``attachable-volumes-<type>`` allocatable, or the type's default.
Once the plugin is migrated to CSI on the node (a CSINode exists) the count is left to NodeVolumeLimits.
"""
from __future__ import annotations

import os
import re
import secrets

from ...framework.interface import FilterPlugin, PreFilterPlugin
from ...framework.status import Code, Status
from .. import names
from ..helper import csi_translation as csitrans
from ..helper.volume import (
    claim_name_of,
    node_volume_limits,
    pvc_not_found,
    spec,
    volume_is_for_pod,
)
from .csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, is_csi_migration_on

KUBE_MAX_PD_VOLS = "KUBE_MAX_PD_VOLS"
DEFAULT_MAX_GCE_PD_VOLUMES = 16
DEFAULT_MAX_AZURE_DISK_VOLUMES = 16
DEFAULT_MAX_CINDER_VOLUMES = 256
DEFAULT_MAX_EBS_VOLUMES = 39
DEFAULT_MAX_EBS_NITRO_VOLUME_LIMIT = 25
EBS_NITRO_LIMIT_REGEX = re.compile(r"^[cmr]5.*|t3|z1d")
LABEL_INSTANCE_TYPE = "beta.kubernetes.io/instance-type"
LABEL_INSTANCE_TYPE_STABLE = "node.kubernetes.io/instance-type"


def max_volumes_from_env() -> int:
    """KUBE_MAX_PD_VOLS when it is a positive integer, else -1."""
    raw = os.environ.get(KUBE_MAX_PD_VOLS, "")
    if raw:
        try:
            n = int(raw)
        except ValueError:
            return -1
        if n > 0:
            return n
    return -1


def max_ebs_volumes(instance_type: str) -> int:
    return DEFAULT_MAX_EBS_NITRO_VOLUME_LIMIT if EBS_NITRO_LIMIT_REGEX.search(instance_type) \
        else DEFAULT_MAX_EBS_VOLUMES


class _NotFound(Exception):
    """A claim of the pod being scheduled is missing."""


class _VolumeError(Exception):
    """Any other failure while listing a pod's volumes."""


class _NonCSILimits(PreFilterPlugin, FilterPlugin):
    """nonCSILimits: one in-tree volume type, described by the class attributes of a subclass."""

    source_field = ""      # the volume source, in pods and PV specs
    id_field = ""          # the field of that source identifying the disk
    in_tree_plugin = ""    # the provisioner name of its StorageClasses
    volume_limit_key = ""  # the node allocatable resource overriding the default limit

    def __init__(self, handle):
        self.handle = handle
        # Prefix of the placeholder ids of claims whose volume is unknown, so they never collide with real ones.
        self.random_volume_id_prefix = secrets.token_hex(16)

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def default_max_volumes(self, node) -> int:
        raise NotImplementedError

    def _volume_id(self, source: dict):
        src = source.get(self.source_field)
        return None if src is None else src.get(self.id_field, "")

    def pre_filter(self, state, pod):
        for vol in pod.volumes:
            if (self._volume_id(vol) is not None or vol.get("persistentVolumeClaim") is not None
                    or vol.get("ephemeral") is not None):
                return None, None
        return None, Status(Code.SKIP)

    def _new_volumes(self, state, pod):
        """The pod's volumes of this type (node independent: computed once per cycle), or the exception."""
        key = "PreFilter" + self.name
        out = state.get(key)
        if out is None:
            out = set()
            try:
                self._filter_volumes(pod, True, out)
            except (_NotFound, _VolumeError) as err:
                out = err
            state.write(key, out)
        return out

    def filter(self, state, pod, node_info):
        if not pod.volumes:
            return None
        new_volumes = self._new_volumes(state, pod)
        if isinstance(new_volumes, _NotFound):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(new_volumes))
        if isinstance(new_volumes, _VolumeError):
            return Status.error(str(new_volumes))
        if not new_volumes:
            return None
        csi_node = self.handle.objects.csi_nodes.get(node_info.name)
        if is_csi_migration_on(csi_node, self.in_tree_plugin):
            return None  # counted by NodeVolumeLimits
        existing = set()
        try:
            for p in node_info.pods:
                if p.volumes:
                    self._filter_volumes(p, False, existing)
        except (_NotFound, _VolumeError) as err:
            return Status.error(str(err))
        new_volumes = new_volumes - existing
        max_limit = self.max_volumes(node_info.node)
        from_allocatable = node_volume_limits(node_info).get(self.volume_limit_key)
        if from_allocatable is not None:
            max_limit = from_allocatable
        if len(existing) + len(new_volumes) > max_limit:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def max_volumes(self, node) -> int:
        """getMaxVolumeFunc: KUBE_MAX_PD_VOLS, else the type's default."""
        from_env = max_volumes_from_env()
        return from_env if from_env > 0 else self.default_max_volumes(node)

    def _filter_volumes(self, pod, new_pod: bool, out: set):
        """filterVolumes: add the ids of the pod's volumes of this type."""
        objects = self.handle.objects
        for vol in pod.volumes:
            vid = self._volume_id(vol)
            if vid is not None:
                out.add(vid)
                continue
            claim, ephemeral = claim_name_of(pod, vol)
            if claim is None:
                continue
            if not claim:
                raise _VolumeError("PersistentVolumeClaim had no name")
            placeholder = f"{self.random_volume_id_prefix}-{pod.namespace}/{claim}"
            pvc = objects.persistent_volume_claims.get(f"{pod.namespace}/{claim}")
            if pvc is None:
                if new_pod:
                    raise _NotFound(f"looking up PVC {pod.namespace}/{claim}: {pvc_not_found(claim)}")
                continue
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise _VolumeError(err)
            pv_name = spec(pvc).get("volumeName") or ""
            pv = objects.persistent_volumes.get(pv_name) if pv_name else None
            if pv is None:
                # Unbound, or its PV is gone: the pod may still use the old volume, count it if ours.
                if self._match_provisioner(pvc):
                    out.add(placeholder)
                continue
            vid = self._volume_id(spec(pv))
            if vid is not None:
                out.add(vid)

    def _match_provisioner(self, pvc: dict) -> bool:
        sc_name = spec(pvc).get("storageClassName")
        if sc_name is None:
            return False
        sc = self.handle.objects.storage_classes.get(sc_name)
        return sc is not None and sc.get("provisioner") == self.in_tree_plugin

    def events_to_register(self):
        return (("Node", ("Add",)), ("Pod", ("Delete",)), ("PersistentVolumeClaim", ("Add",)))


class EBSLimits(_NonCSILimits):
    name = names.EBS_LIMITS
    source_field, id_field = "awsElasticBlockStore", "volumeID"
    in_tree_plugin = csitrans.AWS_EBS
    volume_limit_key = "attachable-volumes-aws-ebs"

    def default_max_volumes(self, node) -> int:
        labels = node.labels
        for key in (LABEL_INSTANCE_TYPE, LABEL_INSTANCE_TYPE_STABLE):
            if key in labels:
                return max_ebs_volumes(labels[key])
        return max_ebs_volumes("")


class GCEPDLimits(_NonCSILimits):
    name = names.GCE_PD_LIMITS
    source_field, id_field = "gcePersistentDisk", "pdName"
    in_tree_plugin = csitrans.GCE_PD
    volume_limit_key = "attachable-volumes-gce-pd"

    def default_max_volumes(self, node) -> int:
        return DEFAULT_MAX_GCE_PD_VOLUMES


class AzureDiskLimits(_NonCSILimits):
    name = names.AZURE_DISK_LIMITS
    source_field, id_field = "azureDisk", "diskName"
    in_tree_plugin = csitrans.AZURE_DISK
    volume_limit_key = "attachable-volumes-azure-disk"

    def default_max_volumes(self, node) -> int:
        return DEFAULT_MAX_AZURE_DISK_VOLUMES


class CinderLimits(_NonCSILimits):
    name = names.CINDER_LIMITS
    source_field, id_field = "cinder", "volumeID"
    in_tree_plugin = csitrans.CINDER
    volume_limit_key = "attachable-volumes-cinder"

    def default_max_volumes(self, node) -> int:
        return DEFAULT_MAX_CINDER_VOLUMES
