"""VolumeBinding: bound claims' PV node affinity, and PVs / provisioning for unbound WaitForFirstConsumer claims.

The plugin instance lives as long as its profile and owns the PV/PVC assume caches, so a PV that
Reserve pre-bound for one pod is no longer available to the pods scheduled after it.

Score exists only with the VolumeCapacityPriority feature gate, which is off in v1.30: PreScore
always returns Skip and Score is never run (it would score 0).
"""
from __future__ import annotations

from ...framework.interface import (
    QUEUE,
    QUEUE_SKIP,
    FilterPlugin,
    PreBindPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from ...framework.handle import features_of, queueing_hints_of
from ...objects.quantity import value
from ...framework.status import Code, Status
from ...framework import signers
from .. import names
from ..helper.volume import claim_name_of, pod_names_claim, pvc_not_found, spec, volume_is_for_pod
from .binder import BinderError, VolumeBinder

STATE_KEY = names.VOLUME_BINDING
DEFAULT_BIND_TIMEOUT_SECONDS = 600
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


class _State:
    """Per-cycle data, shared (not copied) by preemption dry runs as in kube."""

    __slots__ = ("all_bound", "pod_volumes_by_node", "claims")

    def __init__(self, claims=None):
        self.all_bound = False
        self.pod_volumes_by_node = {} if claims is not None else None
        self.claims = claims


def _volume_limit(capacity: dict):
    """volumeLimit: maximumVolumeSize when set, else capacity."""
    limit = capacity.get("maximumVolumeSize")
    return limit if limit is not None else capacity.get("capacity")


class VolumeBinding(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ReservePlugin, PreBindPlugin):
    """PreFilter/Filter/Reserve/Unreserve/PreBind of kube's VolumeBinding.

    PreBind writes through ``handle.client`` (skipped when it is None, as in a one-pass simulation),
    which must provide ``update_pv(pv: dict) -> dict`` and ``update_pvc(pvc: dict) -> dict`` (API
    updates returning the stored object, raising with the API error text). It then waits until the PV
    controller has bound the claims, as ``handle.objects`` shows them.
    """

    name = names.VOLUME_BINDING

    def __init__(self, handle, bind_timeout_seconds=DEFAULT_BIND_TIMEOUT_SECONDS):
        self.handle = handle
        self.binder = VolumeBinder(handle, bind_timeout_seconds)
        # 1.30's PreFilter narrows to the nodes of bound local PVs (versions: volume-binding-all-nodes)
        self.narrows_to_local_pvs = not features_of(handle).has("volume-binding-all-nodes")
        self.queueing_hints = queueing_hints_of(handle)

    @classmethod
    def new(cls, args, handle):
        timeout = (args or {}).get("bindTimeoutSeconds")
        return cls(handle, DEFAULT_BIND_TIMEOUT_SECONDS if timeout is None else timeout)

    def _pod_has_pvcs(self, pod):
        """podHasPVCs -> (has a claim, error text or None)."""
        claims = self.handle.objects.persistent_volume_claims
        has_pvc = False
        for vol in pod.volumes:
            claim, ephemeral = claim_name_of(pod, vol)
            if claim is None:
                continue
            has_pvc = True
            pvc = claims.get(f"{pod.namespace}/{claim}")
            if pvc is None:
                if ephemeral:
                    return True, ("waiting for ephemeral volume controller to create the "
                                  f'persistentvolumeclaim "{claim}"')
                return True, pvc_not_found(claim)
            if (pvc.get("status") or {}).get("phase") == "Lost":
                return True, (f'persistentvolumeclaim "{claim}" bound to non-existent persistentvolume '
                              f'"{spec(pvc).get("volumeName") or ""}"')
            if (pvc.get("metadata") or {}).get("deletionTimestamp"):
                return True, f'persistentvolumeclaim "{claim}" is being deleted'
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    return True, err
        return has_pvc, None

    def pre_filter(self, state, pod):
        has_pvc, err = self._pod_has_pvcs(pod) if pod.volumes else (False, None)
        if err is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, err)
        if not has_pvc:
            state.write(STATE_KEY, _State())
            return None, Status(Code.SKIP)
        claims, err = self.binder.get_pod_volume_claims(pod)
        if err is not None:
            return None, Status.error(err)
        if claims.unbound_immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _State(claims))
        return (self.binder.get_eligible_nodes(claims) if self.narrows_to_local_pvs else None), None

    def filter(self, state, pod, node_info):
        s = state.get(STATE_KEY)
        if s is None:
            return Status.error("not found")
        node = node_info.node
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(
                s.claims, node, self.handle.objects.csi_nodes.get(node.name))
        except BinderError as err:
            return Status.error(str(err))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        s.pod_volumes_by_node[node.name] = pod_volumes
        return None

    def pre_score(self, state, pod, node_infos):
        return Status(Code.SKIP)  # no scorer without the VolumeCapacityPriority gate

    def score(self, state, pod, node_info):
        return 0, None

    def reserve(self, state, pod, node_name):
        s = state.get(STATE_KEY)
        if s is None:
            return Status.error("not found")
        pod_volumes = s.pod_volumes_by_node.get(node_name) if s.pod_volumes_by_node is not None else None
        if pod_volumes is None:
            s.all_bound = True  # the pod references no claim
            return None
        all_bound, err = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        if err is not None:
            return Status.error(err)
        s.all_bound = all_bound
        return None

    def unreserve(self, state, pod, node_name):
        s = state.get(STATE_KEY)
        if s is None or s.pod_volumes_by_node is None:
            return
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is not None:
            self.binder.revert_assumed_pod_volumes(pod_volumes)

    def pre_bind_pre_flight(self, state, pod, node_name):
        """PreBind acts unless every claim is bound."""
        s = state.get(STATE_KEY)
        if s is None:
            return Status.error("not found")
        if s.all_bound:
            return Status(Code.SKIP)
        if s.pod_volumes_by_node is None or node_name not in s.pod_volumes_by_node:
            return Status.error(f'no pod volume found for node "{node_name}"')
        return None

    def pre_bind(self, state, pod, node_name):
        s = state.get(STATE_KEY)
        if s is None:
            return Status.error("not found")
        if s.all_bound:
            return None
        pod_volumes = s.pod_volumes_by_node.get(node_name) if s.pod_volumes_by_node is not None else None
        if pod_volumes is None:
            return Status.error(f'no pod volumes found for node "{node_name}"')
        client = self.handle.client
        if client is None:
            return None
        err = self.binder.bind_pod_volumes(node_name, pod_volumes, client)
        return Status.error(err) if err is not None else None

    def events_to_register(self):
        if not self.queueing_hints:
            return (("StorageClass", ("Add", "Update")), ("PersistentVolumeClaim", ("Add", "Update")),
                    ("PersistentVolume", ("Add", "Update")),
                    ("Node", ("Add", "UpdateNodeLabel", "UpdateNodeTaint")), ("CSINode", ("Add", "Update")),
                    ("CSIDriver", ("Add", "Update")), ("CSIStorageCapacity", ("Add", "Update")))
        return (("StorageClass", ("Add", "Update"), self.is_schedulable_after_storage_class_change),
                ("PersistentVolumeClaim", ("Add", "Update"), self.is_schedulable_after_pvc_change),
                ("PersistentVolume", ("Add", "Update")),
                ("Node", ("Add", "UpdateNodeLabel")),
                ("CSINode", ("Add", "Update"), self.is_schedulable_after_csi_node_change),
                ("CSIDriver", ("Update",), self.is_schedulable_after_csi_driver_change),
                ("CSIStorageCapacity", ("Add", "Update"), self.is_schedulable_after_csi_storage_capacity_change))

    @staticmethod
    def is_schedulable_after_csi_node_change(pod, old, new):
        """A new CSINode, or one whose migrated-plugins annotation changed."""
        if old is None:
            return QUEUE
        key = "storage.alpha.kubernetes.io/migrated-plugins"
        before = ((old.get("metadata") or {}).get("annotations") or {}).get(key)
        after = ((new.get("metadata") or {}).get("annotations") or {}).get(key)
        return QUEUE if before != after else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pvc_change(pod, old, new):
        """A claim of the pod's namespace that one of its volumes (or generic ephemeral volumes) names."""
        return QUEUE if pod_names_claim(pod, new) else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_storage_class_change(pod, old, new):
        """A new class, or one whose allowedTopologies changed."""
        if old is None:
            return QUEUE
        return QUEUE if (new.get("allowedTopologies") or None) != (old.get("allowedTopologies") or None) \
            else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_csi_storage_capacity_change(pod, old, new):
        """A new capacity, or one whose limit (maximumVolumeSize, else capacity) appeared or grew."""
        if old is None:
            return QUEUE
        old_limit, new_limit = _volume_limit(old), _volume_limit(new)
        if new_limit is not None and (old_limit is None or value(new_limit) > value(old_limit)):
            return QUEUE
        return QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_csi_driver_change(pod, old, new):
        """A driver of one of the pod's CSI volumes that stopped tracking storage capacity."""
        name = (new.get("metadata") or {}).get("name")
        for vol in pod.volumes:
            csi = vol.get("csi")
            if csi is None or csi.get("driver") != name:
                continue
            if (old.get("spec") or {}).get("storageCapacity") and not (new.get("spec") or {}).get("storageCapacity"):
                return QUEUE
        return QUEUE_SKIP

    def sign_pod(self, pod):
        """Feasibility and scoring depend on the volume sources other than configMap and secret."""
        return [(signers.VOLUMES, signers.volumes(pod))], None
