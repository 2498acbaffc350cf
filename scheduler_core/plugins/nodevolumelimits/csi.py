"""NodeVolumeLimits (CSILimits): per-CSI-driver attach limits from CSINode (at 1.30 also the node's allocatable),
counted against the CSI volumes of the node's pods (from 1.36 also its VolumeAttachments) and the pod's."""
from __future__ import annotations

import secrets

from ...framework.handle import features_of, queueing_hints_of
from ...framework.interface import QUEUE, QUEUE_SKIP, FilterPlugin, PreFilterPlugin
from ...framework.status import Code, Status
from ...framework import signers
from .. import names
from ..helper import csi_translation as csitrans
from ..helper.volume import (
    claim_name_of,
    csi_attach_limit_key,
    node_volume_limits,
    pod_names_claim,
    pvc_class,
    pvc_not_found,
    spec,
    volume_is_for_pod,
)

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
PRE_FILTER_KEY = "PreFilter" + names.NODE_VOLUME_LIMITS


def is_csi_migration_on(csi_node, plugin) -> bool:
    """isCSIMigrationOn (nodevolumelimits): any CSINode enables the v1.30 always-migrated plugins."""
    return csi_node is not None and plugin in csitrans.MIGRATION_ON


class _NotFound(Exception):
    """A claim of the pod being scheduled is missing: the pod cannot run until it is created."""


class _VolumeError(Exception):
    """Any other failure while listing a pod's attachable volumes (becomes an Error status)."""


class CSILimits(PreFilterPlugin, FilterPlugin):
    """Counts unique CSI volumes (and migrated in-tree ones) per driver against the node's limits."""

    name = names.NODE_VOLUME_LIMITS

    def __init__(self, handle, csi_node_limits: bool = False, volume_limit_scaling: bool = False):
        self.handle = handle
        # Prefix of the placeholder handles of unbound claims, so they never collide with real ones.
        self.random_volume_id_prefix = secrets.token_hex(16)
        self.queueing_hints = queueing_hints_of(handle)
        # From 1.36 (getVolumeLimits(csiNode)): limits only from CSINode, keyed by driver name, and the node's
        # VolumeAttachments count; 1.30 also reads the node's attachable-volumes-* allocatable, keyed by it.
        self.csi_node_limits = csi_node_limits
        self.limit_key = (lambda driver: driver) if csi_node_limits else csi_attach_limit_key
        self.volume_limit_scaling = volume_limit_scaling   # VolumeLimitScaling: the driver must be on the node

    @classmethod
    def new(cls, args, handle):
        features = features_of(handle)
        since_136 = features.has("csi-limits-volume-attachments")
        return cls(handle, since_136, since_136 and features.enabled("VolumeLimitScaling"))

    def pre_filter(self, state, pod):
        for vol in pod.volumes:
            if (vol.get("persistentVolumeClaim") is not None or vol.get("ephemeral") is not None
                    or csitrans.plugin_of_source(vol) is not None):
                state.write(PRE_FILTER_KEY, {})
                return None, None
        return None, Status(Code.SKIP)

    def _new_volumes(self, state, pod, csi_node):
        """The pod's attachable volumes, or the exception listing them raised.

        They depend on the node only through whether it has a CSINode (which turns migration on), so
        they are computed at most twice per cycle.
        """
        cache = state.get(PRE_FILTER_KEY)
        if cache is None:
            cache = {}
        has_csi_node = csi_node is not None
        out = cache.get(has_csi_node)
        if out is None:
            out = {}
            try:
                self._attachable_volumes(pod, csi_node, True, out)
            except (_NotFound, _VolumeError) as err:
                out = err
            cache[has_csi_node] = out
        return out

    def filter(self, state, pod, node_info):
        if not pod.volumes:
            return None
        csi_node = self.handle.objects.csi_nodes.get(node_info.name)
        new_volumes = self._new_volumes(state, pod, csi_node)
        if isinstance(new_volumes, _NotFound):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(new_volumes))
        if isinstance(new_volumes, _VolumeError):
            return Status.error(str(new_volumes))
        if not new_volumes:
            return None
        if self.volume_limit_scaling:
            for driver in new_volumes.values():
                if not self._driver_on_node(driver, csi_node):
                    return Status(Code.UNSCHEDULABLE, f"{driver} CSI driver is not installed on the node")
        new_volumes = dict(new_volumes)
        limits = {} if self.csi_node_limits else node_volume_limits(node_info)
        if csi_node is not None:
            for d in spec(csi_node).get("drivers") or ():
                count = (d.get("allocatable") or {}).get("count")
                if count is not None:
                    limits[self.limit_key(d.get("name", ""))] = count
        if not limits:
            return None
        attached = {}
        try:
            for existing in node_info.pods:
                if existing.volumes:
                    self._attachable_volumes(existing, csi_node, False, attached)
        except (_NotFound, _VolumeError) as err:
            return Status.error(str(err))
        attached_count = {}
        for unique_name, key in attached.items():
            new_volumes.pop(unique_name, None)  # a volume shared with a running pod is attached once
            attached_count[key] = attached_count.get(key, 0) + 1
        if self.csi_node_limits:
            for unique_name, driver in self._node_attachments(state, node_info.name).items():
                if unique_name not in attached:   # a pod's volume is attached once
                    attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count = {}
        for key in new_volumes.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            max_limit = limits.get(key)
            if max_limit is not None and attached_count.get(key, 0) + count > max_limit:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _node_attachments(self, state, node_name: str) -> dict:
        """getNodeVolumeAttachmentInfo: {attacher/volumeHandle: attacher} of the node's VolumeAttachments whose
        PersistentVolume is a CSI volume (the cluster's attachments indexed by node once per cycle)."""
        cache = state.get(PRE_FILTER_KEY)
        by_node = cache.get("attachments") if cache is not None else None
        if by_node is None:
            by_node = {}
            pvs = self.handle.objects.persistent_volumes
            for va in self.handle.objects.volume_attachments.values():
                va_spec = spec(va)
                attacher = va_spec.get("attacher") or ""
                pv_name = (va_spec.get("source") or {}).get("persistentVolumeName")
                if not attacher or pv_name is None:
                    continue
                csi = spec(pvs.get(pv_name) or {}).get("csi")
                if csi is None:
                    continue
                node = by_node.setdefault(va_spec.get("nodeName") or "", {})
                node[f'{attacher}/{csi.get("volumeHandle") or ""}'] = attacher
            if cache is not None:
                cache["attachments"] = by_node
        return by_node.get(node_name, {})

    def _driver_on_node(self, driver: str, csi_node) -> bool:
        """checkCSIDriverOnNode: a CSIDriver that sets preventPodSchedulingIfMissing must be on the node's CSINode;
        a driver without such a CSIDriver may not be a CSI driver, and is let through."""
        csi_driver = self.handle.objects.csi_drivers.get(driver)
        if csi_driver is None or not spec(csi_driver).get("preventPodSchedulingIfMissing"):
            return True
        return csi_node is not None and any(d.get("name") == driver for d in spec(csi_node).get("drivers") or ())

    def _attachable_volumes(self, pod, csi_node, new_pod: bool, result: dict):
        """filterAttachableVolumes: add {driver/handle: limit key} for the pod's attachable volumes."""
        claims = self.handle.objects.persistent_volume_claims
        for vol in pod.volumes:
            claim, ephemeral = claim_name_of(pod, vol)
            if claim is None:
                self._inline_volume(vol, csi_node, result)
                continue
            if not claim:
                raise _VolumeError("PersistentVolumeClaim had no name")
            pvc = claims.get(f"{pod.namespace}/{claim}")
            if pvc is None:
                if new_pod:
                    raise _NotFound(f"looking up PVC {pod.namespace}/{claim}: {pvc_not_found(claim)}")
                continue  # an existing pod's missing claim is not counted
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise _VolumeError(err)
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = self.limit_key(driver)

    def _inline_volume(self, vol, csi_node, result: dict):
        """checkAttachableInlineVolume: count a migratable in-line volume once its migration is on."""
        plugin = csitrans.plugin_of_source(vol)
        if plugin is None or not is_csi_migration_on(csi_node, plugin):
            return
        try:
            driver, handle = csitrans.translate_inline_volume(vol, plugin)
        except csitrans.TranslationError as err:
            raise _VolumeError(f'converting volume({vol.get("name", "")}) from inline to csi: {err}') from None
        result[f"{driver}/{handle}"] = self.limit_key(driver)

    def _csi_driver_info(self, csi_node, pvc: dict):
        """getCSIDriverInfo: (driver, volume handle) of a claim, from its PV or else its StorageClass."""
        pv_name = spec(pvc).get("volumeName") or ""
        if not pv_name:
            return self._csi_driver_info_from_sc(csi_node, pvc)
        pv = self.handle.objects.persistent_volumes.get(pv_name)
        if pv is None:
            return self._csi_driver_info_from_sc(csi_node, pvc)
        csi = spec(pv).get("csi")
        if csi is None:
            plugin = csitrans.plugin_of_pv(pv)
            if plugin is None or not is_csi_migration_on(csi_node, plugin):
                return "", ""
            try:
                csi = csitrans.translate_pv(pv, plugin)["spec"]["csi"]
            except csitrans.TranslationError:
                return "", ""
        return csi.get("driver") or "", csi.get("volumeHandle") or ""

    def _csi_driver_info_from_sc(self, csi_node, pvc: dict):
        """getCSIDriverInfoFromSC: the class's driver and a placeholder handle unique to the claim."""
        sc_name = pvc_class(pvc)
        if not sc_name:
            return "", ""
        sc = self.handle.objects.storage_classes.get(sc_name)
        if sc is None:
            return "", ""
        m = pvc.get("metadata") or {}
        handle = f'{self.random_volume_id_prefix}-{m.get("namespace") or "default"}/{m.get("name", "")}'
        provisioner = sc.get("provisioner") or ""
        if csitrans.is_in_tree_plugin_name(provisioner):
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return csitrans.csi_driver_of(provisioner), handle
        return provisioner, handle

    def events_to_register(self):
        if not self.queueing_hints:
            return (("CSINode", ("Add",)), ("Pod", ("Delete",)), ("PersistentVolumeClaim", ("Add",)))
        return (("CSINode", ("Add",)), ("CSINode", ("Update",), self.is_schedulable_after_csi_node_updated),
                ("Pod", ("Delete",), self.is_schedulable_after_pod_deleted),
                ("PersistentVolumeClaim", ("Add",), self.is_schedulable_after_pvc_added),
                ("VolumeAttachment", ("Delete",), self.is_schedulable_after_volume_attachment_deleted))

    @staticmethod
    def is_schedulable_after_pod_deleted(pod, old, new):
        """A bound or nominated pod with a claim, a generic ephemeral or a migratable in-tree volume."""
        if not old.volumes or (not old.node_name and not old.nominated_node_name):
            return QUEUE_SKIP
        for vol in old.volumes:
            if (vol.get("persistentVolumeClaim") is not None or vol.get("ephemeral") is not None
                    or csitrans.plugin_of_source(vol) is not None):
                return QUEUE
        return QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pvc_added(pod, old, new):
        """A claim of the pod's namespace that one of its volumes (or generic ephemeral volumes) names."""
        return QUEUE if pod_names_claim(pod, new) else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_volume_attachment_deleted(pod, old, new):
        """A detached volume of a driver the pod uses: any, for a pod with a claim."""
        attacher = (old.get("spec") or {}).get("attacher")
        for vol in pod.volumes:
            if vol.get("persistentVolumeClaim") is not None:
                return QUEUE
            plugin = csitrans.plugin_of_source(vol)
            if plugin is None:
                continue
            driver, _handle = csitrans.translate_inline_volume(vol, plugin)
            if driver == attacher:
                return QUEUE
        return QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_csi_node_updated(pod, old, new):
        """A driver whose allocatable count grew."""
        def limits(csi_node):
            return {d.get("name"): (d.get("allocatable") or {}).get("count") or 0
                    for d in (csi_node.get("spec") or {}).get("drivers") or ()}
        before = limits(old)
        return QUEUE if any(count > before.get(name, 0) for name, count in limits(new).items()) else QUEUE_SKIP

    def sign_pod(self, pod):
        """Feasibility and scoring depend on the volume sources other than configMap and secret."""
        return [(signers.VOLUMES, signers.volumes(pod))], None
