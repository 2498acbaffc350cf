"""VolumeZone: the zone/region labels of a pod's bound PersistentVolumes must match the node's labels."""
from __future__ import annotations

from ...framework.handle import queueing_hints_of
from ...framework.interface import QUEUE, QUEUE_SKIP, FilterPlugin, PreFilterPlugin
from ...framework.status import Code, Status
from ...framework import signers
from .. import names
from ..helper.volume import (
    WAIT_FOR_FIRST_CONSUMER,
    not_found,
    pvc_class,
    pvc_not_found,
    spec,
)

PRE_FILTER_KEY = "PreFilter" + names.VOLUME_ZONE
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_GA_LABEL = {LABEL_BETA_REGION: LABEL_REGION, LABEL_BETA_ZONE: LABEL_ZONE}


def label_zones_to_set(value: str):
    """LabelZonesToSet: ``a__b`` -> {a, b}; None when an element is empty (kube ignores such a label)."""
    out = set()
    for zone in value.split("__"):
        zone = zone.strip()
        if not zone:
            return None
        out.add(zone)
    return out


def _pv_topologies(pv: dict) -> list:
    """getPVTopologies: (label, zones) of the PV's topology labels that parse."""
    labels = (pv.get("metadata") or {}).get("labels") or {}
    out = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            zones = label_zones_to_set(labels[key])
            if zones is not None:
                out.append((key, zones))
    return out


class _State:
    """(PV name, label key, allowed values) of every topology label on the pod's bound PVs."""

    __slots__ = ("topologies",)

    def __init__(self, topologies):
        self.topologies = topologies


class VolumeZone(PreFilterPlugin, FilterPlugin):
    name = names.VOLUME_ZONE

    def __init__(self, handle):
        self.handle = handle
        self.queueing_hints = queueing_hints_of(handle)

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def _pv_topologies(self, pod):
        """getPVbyPod -> (topologies, status)."""
        objects = self.handle.objects
        out = []
        for vol in pod.volumes:
            ref = vol.get("persistentVolumeClaim")
            if ref is None:
                continue
            claim = ref.get("claimName") or ""
            if not claim:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name")
            pvc = objects.persistent_volume_claims.get(f"{pod.namespace}/{claim}")
            if pvc is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, pvc_not_found(claim))
            pv_name = spec(pvc).get("volumeName") or ""
            if not pv_name:
                sc_name = pvc_class(pvc)
                if not sc_name:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                        "PersistentVolumeClaim had no pv name and storageClass name")
                sc = objects.storage_classes.get(sc_name)
                if sc is None:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                        not_found("storageclass.storage.k8s.io", sc_name))
                mode = sc.get("volumeBindingMode")
                if mode is None:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                        f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if mode == WAIT_FOR_FIRST_CONSUMER:
                    continue  # unbound, bound later by VolumeBinding
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name")
            pv = objects.persistent_volumes.get(pv_name)
            if pv is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found("persistentvolume", pv_name))
            labels = (pv.get("metadata") or {}).get("labels") or {}
            for key in TOPOLOGY_LABELS:
                if key in labels:
                    values = label_zones_to_set(labels[key])
                    if values is not None:
                        out.append((pv_name, key, values))
        return out, None

    def pre_filter(self, state, pod):
        if not pod.volumes:
            return None, Status(Code.SKIP)
        topologies, st = self._pv_topologies(pod)
        if st is not None:
            return None, st
        if not topologies:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, _State(topologies))
        return None, None

    def filter(self, state, pod, node_info):
        if not pod.volumes:
            return None
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            topologies, st = self._pv_topologies(pod)
            if st is not None:
                return st
        else:
            topologies = s.topologies
        labels = node_info.node.labels
        for key in TOPOLOGY_LABELS:
            if key in labels:
                break
        else:
            return None  # a node without zone labels (single-zone cluster) accepts any volume
        for _pv, key, values in topologies:
            v = labels.get(key)
            if v is None:
                v = labels.get(_GA_LABEL.get(key, key))
            if v is None or v not in values:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None

    def events_to_register(self):
        if not self.queueing_hints:
            return (("StorageClass", ("Add",)), ("Node", ("Add", "UpdateNodeLabel", "UpdateNodeTaint")),
                    ("PersistentVolumeClaim", ("Add",)), ("PersistentVolume", ("Add", "Update")))
        return (("StorageClass", ("Add",), self.is_schedulable_after_storage_class_added),
                ("Node", ("Add", "UpdateNodeLabel")),
                ("PersistentVolumeClaim", ("Add", "Update"), self.is_schedulable_after_pvc_change),
                ("PersistentVolume", ("Add", "Update"), self.is_schedulable_after_pv_change))

    @staticmethod
    def is_schedulable_after_pvc_change(pod, old, new):
        """isPVCRequestedFromPod: a claim of the pod's namespace that one of its volumes names."""
        meta = new.get("metadata") or {}
        if (meta.get("namespace") or "") != pod.namespace:
            return QUEUE_SKIP
        names_ = {(v.get("persistentVolumeClaim") or {}).get("claimName", "") for v in pod.volumes
                  if v.get("persistentVolumeClaim") is not None}
        return QUEUE if (meta.get("name") or "") in names_ else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_storage_class_added(pod, old, new):
        """A WaitForFirstConsumer class."""
        return QUEUE if new.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pv_change(pod, old, new):
        """A new PV, or one whose zone/region labels changed."""
        if old is None:
            return QUEUE
        return QUEUE if _pv_topologies(old) != _pv_topologies(new) else QUEUE_SKIP

    def sign_pod(self, pod):
        """Feasibility and scoring depend on the volume sources other than configMap and secret."""
        return [(signers.VOLUMES, signers.volumes(pod))], None
