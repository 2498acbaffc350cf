"""Storage helpers shared by the volume plugins, on raw API dicts.

Ports of k8s.io/component-helpers/storage/{volume,ephemeral}, pkg/volume/util and the lister errors the
volume plugins surface. PersistentVolumes, claims, classes and CSINodes stay the dicts the API returns.
"""
from __future__ import annotations

import functools
import hashlib

from ...objects.errors import ParseError
from ...objects.quantity import QuantityError, parse_quantity
from ...objects.selectors import LabelSelector, NodeSelector

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
LABEL_HOSTNAME = "kubernetes.io/hostname"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT = 63


def meta(obj) -> dict:
    return obj.get("metadata") or {}


def spec(obj) -> dict:
    return obj.get("spec") or {}


def annotations(obj) -> dict:
    return meta(obj).get("annotations") or {}


def not_found(resource: str, name: str) -> str:
    """The text of a lister's NotFound error, e.g. ``persistentvolumeclaim "data" not found``."""
    return f'{resource} "{name}" not found'


def pvc_not_found(name: str) -> str:
    return not_found("persistentvolumeclaim", name)


def claim_name_of(pod, vol: dict):
    """(claim name, is generic ephemeral) of a pod volume, or (None, False) when it uses no claim."""
    pvc = vol.get("persistentVolumeClaim")
    if pvc is not None:
        return pvc.get("claimName") or "", False
    if vol.get("ephemeral") is not None:
        return f'{pod.name}-{vol.get("name", "")}', True
    return None, False


def pod_names_claim(pod, pvc: dict) -> bool:
    """Whether one of the pod's volumes (a claim or a generic ephemeral volume) names this claim of its namespace:
    the queueing hint of a claim event in VolumeBinding and NodeVolumeLimits."""
    m = pvc.get("metadata") or {}
    if (m.get("namespace") or "") != pod.namespace:
        return False
    name = m.get("name") or ""
    return any(claim_name_of(pod, vol)[0] == name for vol in pod.volumes)


def volume_is_for_pod(pod, pvc: dict):
    """ephemeral.VolumeIsForPod: None when the claim is owned (controlled) by the pod, else the error text."""
    m = meta(pvc)
    ns = m.get("namespace") or "default"
    owned = ns == pod.namespace and any(
        ref.get("controller") and ref.get("uid") == pod.uid for ref in m.get("ownerReferences") or ())
    if owned:
        return None
    return (f'PVC {ns}/{m.get("name", "")} was not created for pod {pod.namespace}/{pod.name} '
            f'(pod is not owner)')


def pvc_class(pvc: dict) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    ann = annotations(pvc)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    return spec(pvc).get("storageClassName") or ""


def pv_class(pv: dict) -> str:
    """GetPersistentVolumeClass."""
    ann = annotations(pv)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    return spec(pv).get("storageClassName") or ""


@functools.lru_cache(maxsize=4096)
def _parse_storage(q):
    try:
        return parse_quantity(q)
    except QuantityError:
        return 0


def _storage_quantity(resources):
    q = (resources or {}).get("storage")
    if q is None:
        return 0
    return _parse_storage(q) if isinstance(q, (str, int)) else 0


def requested_storage(pvc: dict):
    """spec.resources.requests.storage as an exact number (0 when unset)."""
    return _storage_quantity((spec(pvc).get("resources") or {}).get("requests"))


def pv_capacity(pv: dict):
    """spec.capacity.storage as an exact number (0 when unset)."""
    return _storage_quantity(spec(pv).get("capacity"))


def is_pvc_fully_bound(pvc: dict) -> bool:
    return bool(spec(pvc).get("volumeName")) and ANN_BIND_COMPLETED in annotations(pvc)


def is_volume_bound_to_claim(pv: dict, pvc: dict) -> bool:
    """IsVolumeBoundToClaim: the PV's claimRef names this claim (and its UID, when set)."""
    ref = spec(pv).get("claimRef")
    if ref is None:
        return False
    m = meta(pvc)
    if m.get("name", "") != ref.get("name", "") or (m.get("namespace") or "default") != (
            ref.get("namespace") or ""):
        return False
    uid = ref.get("uid") or ""
    return not uid or uid == (m.get("uid") or "")


def volume_mode_mismatch(pvc: dict, pv: dict) -> bool:
    """CheckVolumeModeMismatches (an unset mode is Filesystem)."""
    return (spec(pvc).get("volumeMode") or "Filesystem") != (spec(pv).get("volumeMode") or "Filesystem")


def access_modes_satisfied(pvc: dict, pv: dict) -> bool:
    """CheckAccessModes: the PV offers every mode the claim asks for."""
    offered = set(spec(pv).get("accessModes") or ())
    return all(m in offered for m in spec(pvc).get("accessModes") or ())


def claim_selector(pvc: dict):
    """The claim's label selector for PVs, or None; raises ParseError when it is invalid."""
    raw = spec(pvc).get("selector")
    if raw is None:
        return None
    return LabelSelector(raw, "spec.selector")


class _NeverMatches:
    """A required node affinity that failed to parse: kube reports an error, i.e. no match."""

    __slots__ = ()

    def matches(self, labels, name):
        return False


_NEVER = _NeverMatches()


def compile_pv_node_affinity(pv: dict):
    """The PV's spec.nodeAffinity.required as a matcher, or None when the PV has no required affinity."""
    na = spec(pv).get("nodeAffinity")
    if not na or na.get("required") is None:
        return None
    try:
        return NodeSelector(na["required"], "spec.nodeAffinity.required")
    except ParseError:
        return _NEVER


class NodeAffinityCache:
    """Compiled PV node affinities, keyed by the identity of the PV dict (PVs are replaced, not mutated)."""

    __slots__ = ("_by_id", "limit")

    def __init__(self, limit: int = 65536):
        self._by_id = {}
        self.limit = limit

    def get(self, pv: dict):
        hit = self._by_id.get(id(pv))
        if hit is not None and hit[0] is pv:
            return hit[1]
        if len(self._by_id) >= self.limit:
            self._by_id.clear()
        compiled = compile_pv_node_affinity(pv)
        self._by_id[id(pv)] = (pv, compiled)
        return compiled

    def check(self, pv: dict, node_labels: dict) -> bool:
        """CheckNodeAffinity: the node (labels only, empty name, as kube builds it) satisfies the PV."""
        sel = self.get(pv)
        return sel is None or sel.matches(node_labels, "")


def local_pv_node_names(pv: dict) -> list:
    """GetLocalPersistentVolumeNodeNames: hostname In-values of the PV's required terms (sorted)."""
    na = spec(pv).get("nodeAffinity") or {}
    required = na.get("required")
    if required is None:
        return []
    result = set()
    for term in required.get("nodeSelectorTerms") or ():
        nodes = None
        for expr in (term or {}).get("matchExpressions") or ():
            if expr.get("key") == LABEL_HOSTNAME and expr.get("operator") == "In":
                vals = set(expr.get("values") or ())
                nodes = vals if nodes is None else nodes & vals
        if nodes:
            result |= nodes
    return sorted(result)


def match_topology_selector_terms(terms, labels: dict) -> bool:
    """MatchTopologySelectorTerms (StorageClass.allowedTopologies): OR of terms, AND of key-In-values."""
    if not terms:
        return True
    for term in terms:
        exprs = (term or {}).get("matchLabelExpressions") or ()
        if not exprs:
            continue
        for e in exprs:
            values = e.get("values") or ()
            key = e.get("key") or ""
            if not values or not key or labels.get(key) not in values:
                break
        else:
            return True
    return False


def is_delay_binding_mode(pvc: dict, storage_classes: dict):
    """IsDelayBindingMode -> (delay binding?, error text or None)."""
    name = pvc_class(pvc)
    if not name:
        return False, None
    sc = storage_classes.get(name)
    if sc is None:
        return False, None
    mode = sc.get("volumeBindingMode")
    if mode is None:
        return False, f'VolumeBindingMode not set for StorageClass "{name}"'
    return mode == WAIT_FOR_FIRST_CONSUMER, None


def claim_reference(pvc: dict) -> dict:
    """reference.GetReference of a claim (empty fields omitted, as the JSON encoding does)."""
    m = meta(pvc)
    ref = {"kind": "PersistentVolumeClaim", "namespace": m.get("namespace") or "default",
           "name": m.get("name", ""), "uid": m.get("uid") or "", "apiVersion": "v1",
           "resourceVersion": m.get("resourceVersion") or ""}
    return {k: v for k, v in ref.items() if v}


def bind_volume_to_claim(pv: dict, pvc: dict):
    """GetBindVolumeToClaim -> (a copy of the PV bound to the claim, whether anything changed)."""
    dirty = False
    set_bound_by_controller = not is_volume_bound_to_claim(pv, pvc)
    new_meta = dict(meta(pv))
    new_spec = dict(spec(pv))
    ref = new_spec.get("claimRef")
    m = meta(pvc)
    if (ref is None or ref.get("name", "") != m.get("name", "")
            or (ref.get("namespace") or "") != (m.get("namespace") or "default")
            or (ref.get("uid") or "") != (m.get("uid") or "")):
        new_spec["claimRef"] = claim_reference(pvc)
        dirty = True
    if set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in (new_meta.get("annotations") or {}):
        new_meta["annotations"] = dict(new_meta.get("annotations") or {}, **{ANN_BOUND_BY_CONTROLLER: "yes"})
        dirty = True
    new_pv = dict(pv)
    new_pv["metadata"] = new_meta
    new_pv["spec"] = new_spec
    return new_pv, dirty


def with_annotation(obj: dict, key: str, value: str) -> dict:
    """A copy of an object with one annotation set (metav1.SetMetaDataAnnotation on a DeepCopy)."""
    new_meta = dict(meta(obj))
    new_meta["annotations"] = dict(new_meta.get("annotations") or {}, **{key: value})
    out = dict(obj)
    out["metadata"] = new_meta
    return out


def resource_version(obj: dict) -> int:
    """metadata.resourceVersion as an integer; objects that never went through an API server count as 0."""
    try:
        return int(meta(obj).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


def migrated_plugins(csi_node) -> set:
    """In-tree plugin names listed in the CSINode's migrated-plugins annotation."""
    if csi_node is None:
        return set()
    mpa = annotations(csi_node).get(MIGRATED_PLUGINS_ANNOTATION) or ""
    return set(mpa.split(",")) if mpa else set()


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: the node resource name of a CSI driver's attach limit."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        hashed = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + hashed
    return CSI_ATTACH_LIMIT_PREFIX + driver


def node_volume_limits(node_info) -> dict:
    """volumeLimits: the node's attachable-volumes-* allocatable resources."""
    return {k: v for k, v in node_info.node.allocatable.items() if k.startswith(ATTACHABLE_VOLUMES_PREFIX)}
