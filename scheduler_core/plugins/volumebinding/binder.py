"""The volume binder behind VolumeBinding (volumebinding/binder.go).

PreFilter sorts a pod's claims (bound, unbound with delayed binding, unbound immediate); Filter finds,
per node, PVs for the unbound claims or checks that they can be provisioned there, and checks bound PVs'
node affinity; Reserve assumes the chosen bindings in the assume caches; PreBind writes them to the API
and waits for the PV controller to finish.
"""
from __future__ import annotations

import heapq
import time

from ...framework.handle import features_of
from ...objects.errors import ParseError
from ...objects.quantity import QuantityError, value
from ...objects.selectors import LabelSelector
from ..helper import csi_translation as csitrans
from ..helper.volume import (
    ANN_SELECTED_NODE,
    LABEL_HOSTNAME,
    NOT_SUPPORTED_PROVISIONER,
    NodeAffinityCache,
    access_modes_satisfied,
    annotations,
    bind_volume_to_claim,
    claim_name_of,
    claim_selector,
    is_delay_binding_mode,
    is_pvc_fully_bound,
    is_volume_bound_to_claim,
    local_pv_node_names,
    match_topology_selector_terms,
    meta,
    migrated_plugins,
    pv_capacity,
    pv_class,
    pvc_class,
    requested_storage,
    resource_version,
    spec,
    volume_is_for_pod,
    volume_mode_mismatch,
    with_annotation,
)
from .assume_cache import AssumeCache, PVAssumeCache

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
# 1.36's text (versions: volume-conflict-messages)
ERR_REASON_NODE_CONFLICT_136 = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

BIND_POLL_INTERVAL_SECONDS = 1.0


class BinderError(Exception):
    """An unexpected failure (kube returns a Go error, which becomes an Error status)."""


def pvc_key(pvc: dict) -> str:
    m = meta(pvc)
    return f'{m.get("namespace") or "default"}/{m.get("name", "")}'


class BindingInfo:
    """A PV chosen for (and, after Reserve, pre-bound to) a claim."""

    __slots__ = ("pv", "pvc")

    def __init__(self, pv: dict, pvc: dict):
        self.pv = pv
        self.pvc = pvc


class PodVolumes:
    """What a node needs for a pod: static bindings to existing PVs, and claims to provision."""

    __slots__ = ("static_bindings", "dynamic_provisions")

    def __init__(self, static_bindings=(), dynamic_provisions=()):
        self.static_bindings = list(static_bindings)
        self.dynamic_provisions = list(dynamic_provisions)


class _Candidate:
    """A PV that passes FindMatchingVolume's node-independent checks for one claim."""

    __slots__ = ("pv", "name", "capacity", "order", "pinned")

    def __init__(self, pv: dict, capacity, order: int, pinned: bool):
        self.pv = pv
        self.name = meta(pv).get("name", "")
        self.capacity = capacity
        self.order = order
        self.pinned = pinned   # its node affinity only names hostnames: it fits exactly the nodes indexed


def _hostname_pins(pv: dict):
    """The hostnames a PV is pinned to when every required term is exactly ``hostname In [...]``, else None."""
    na = spec(pv).get("nodeAffinity") or {}
    terms = (na.get("required") or {}).get("nodeSelectorTerms") if na.get("required") is not None else None
    if not terms:
        return None
    hosts = set()
    for t in terms:
        t = t or {}
        exprs = t.get("matchExpressions") or ()
        if t.get("matchFields") or len(exprs) != 1:
            return None
        e = exprs[0]
        if e.get("key") != LABEL_HOSTNAME or e.get("operator") != "In" or not e.get("values"):
            return None
        hosts.update(e["values"])
    return hosts


class ClaimCandidates:
    """FindMatchingVolume for one claim, prepared once per cycle.

    A PV pre-bound to the claim decides alone (the first one not yet taken: kube returns on it).
    Otherwise the smallest fitting PV wins, earliest first among equals: candidates are kept sorted by
    (capacity, order), and hostname-pinned ones (local PVs) are indexed by hostname so that a node only
    looks at its own.
    """

    __slots__ = ("prebound", "by_host", "general", "error")

    def __init__(self, prebound=(), by_host=None, general=(), error=None):
        self.prebound = list(prebound)
        self.by_host = by_host or {}
        self.general = list(general)
        self.error = error

    def find(self, labels: dict, chosen, fits):
        """The PV for a node with ``labels``, skipping PVs in ``chosen``; ``fits(pv, labels)`` checks affinity."""
        for c in self.prebound:
            if c.name not in chosen:
                return c if fits(c.pv, labels) else None
        pinned = self.by_host.get(labels.get(LABEL_HOSTNAME)) if self.by_host else None
        merged = heapq.merge(self.general, pinned, key=_candidate_key) if pinned else self.general
        for c in merged:
            if c.name not in chosen and (c.pinned or fits(c.pv, labels)):
                return c
        return None


def _candidate_key(c: _Candidate):
    return c.capacity, c.order


class PodVolumeClaims:
    """A pod's claims sorted by binding state, with everything Filter needs precomputed.

    ``bound`` pairs each bound claim with its PV from the cache (None when the PV does not exist);
    ``to_match`` holds the delayed-binding claims without a selected node, smallest request first,
    each with its ClaimCandidates; ``selected`` holds the delayed-binding claims already marked for
    provisioning on a node, with that node.
    """

    __slots__ = ("bound", "unbound_delay_binding", "unbound_immediate", "to_match", "selected")

    def __init__(self):
        self.bound = []
        self.unbound_delay_binding = []
        self.unbound_immediate = []
        self.to_match = []
        self.selected = []


class VolumeBinder:
    """volumeBinder over the handle's cluster objects, with PV and PVC assume caches of its own."""

    def __init__(self, handle, bind_timeout_seconds: float):
        self.handle = handle
        self.bind_timeout_seconds = bind_timeout_seconds
        self.node_conflict_reason = ERR_REASON_NODE_CONFLICT_136 if features_of(handle).has(
            "volume-conflict-messages") else ERR_REASON_NODE_CONFLICT
        self.pv_cache = PVAssumeCache(lambda: handle.objects.persistent_volumes)
        self.pvc_cache = AssumeCache("v1.PersistentVolumeClaim", lambda: handle.objects.persistent_volume_claims)
        self.affinity = NodeAffinityCache()
        self._translated = {}   # id(pv) -> (pv, translated PV or TranslationError)

    # -- PreFilter ---------------------------------------------------------------------------
    def _is_volume_bound(self, pod, vol: dict):
        """isVolumeBound -> (bound, claim or None, error or None)."""
        claim, ephemeral = claim_name_of(pod, vol)
        if claim is None:
            return True, None, None
        key = f"{pod.namespace}/{claim}"
        pvc = self.pvc_cache.get(key)
        if pvc is None:
            return False, None, f'error getting PVC "{key}": {self.pvc_cache.not_found(key)}'
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err is not None:
                return False, None, err
        return is_pvc_fully_bound(pvc), pvc, None

    def get_pod_volume_claims(self, pod):
        """GetPodVolumeClaims -> (PodVolumeClaims, error text or None)."""
        claims = PodVolumeClaims()
        classes = self.handle.objects.storage_classes
        for vol in pod.volumes:
            bound, pvc, err = self._is_volume_bound(pod, vol)
            if err is not None:
                return claims, err
            if pvc is None:
                continue
            if bound:
                claims.bound.append(pvc)
                continue
            delay, err = is_delay_binding_mode(pvc, classes)
            if err is not None:
                return claims, err
            if delay and not spec(pvc).get("volumeName"):
                claims.unbound_delay_binding.append(pvc)
            else:
                claims.unbound_immediate.append(pvc)   # immediate, or pre-bound to a PV: should be bound
        self._precompute(claims)
        return claims, None

    def _precompute(self, claims: PodVolumeClaims):
        claims.bound = [(pvc, self.pv_cache.get(spec(pvc).get("volumeName") or "")) for pvc in claims.bound]
        pvs_by_class = {}
        to_match = []
        for pvc in claims.unbound_delay_binding:
            selected = annotations(pvc).get(ANN_SELECTED_NODE)
            if selected is not None:
                claims.selected.append((pvc, selected))
                continue
            cls = pvc_class(pvc)
            if cls not in pvs_by_class:
                pvs_by_class[cls] = self.pv_cache.list_pvs(cls)
            to_match.append(pvc)
        # Smallest request first, so that each claim gets the smallest PV that fits.
        to_match.sort(key=requested_storage)
        claims.to_match = [(pvc, self._candidates(pvc, pvs_by_class[pvc_class(pvc)])) for pvc in to_match]

    @staticmethod
    def _candidates(pvc: dict, pvs) -> ClaimCandidates:
        """FindMatchingVolume's node-independent filters, in its order, for one claim."""
        try:
            selector = claim_selector(pvc)
        except ParseError as err:
            return ClaimCandidates(error=f"error creating internal label selector for claim: {pvc_key(pvc)}: {err}")
        requested = requested_storage(pvc)
        requested_class = pvc_class(pvc)
        prebound, general, by_host = [], [], {}
        for order, pv in enumerate(pvs):
            pv_spec = spec(pv)
            if pv_spec.get("claimRef") is not None and not is_volume_bound_to_claim(pv, pvc):
                continue
            capacity = pv_capacity(pv)
            if capacity < requested or volume_mode_mismatch(pvc, pv) or meta(pv).get("deletionTimestamp"):
                continue
            if is_volume_bound_to_claim(pv, pvc):
                prebound.append(_Candidate(pv, capacity, order, False))
                continue
            if (pv.get("status") or {}).get("phase") != "Available":
                continue
            if selector is not None and not selector.matches(meta(pv).get("labels") or {}):
                continue
            if pv_class(pv) != requested_class or not access_modes_satisfied(pvc, pv):
                continue
            hosts = _hostname_pins(pv)
            if hosts is None:
                general.append(_Candidate(pv, capacity, order, False))
            else:
                c = _Candidate(pv, capacity, order, True)
                for h in hosts:
                    by_host.setdefault(h, []).append(c)
        general.sort(key=_candidate_key)
        for lst in by_host.values():
            lst.sort(key=_candidate_key)
        return ClaimCandidates(prebound, by_host, general)

    def get_eligible_nodes(self, claims: PodVolumeClaims):
        """GetEligibleNodes: the nodes local PVs of bound claims pin the pod to, or None for all."""
        eligible = None
        for _pvc, pv in claims.bound:
            if pv is None:
                return None
            names = local_pv_node_names(pv)
            if names:
                eligible = set(names) if eligible is None else eligible & set(names)
        return eligible

    # -- Filter ------------------------------------------------------------------------------
    def _translated_pv(self, pv: dict, csi_node):
        """tryTranslatePVToCSI: the CSI form of a migrated in-tree PV on this node, else the PV itself."""
        plugin = csitrans.plugin_of_pv(pv)
        if plugin is None or plugin not in csitrans.MIGRATION_ON or plugin not in migrated_plugins(csi_node):
            return pv
        hit = self._translated.get(id(pv))
        if hit is None or hit[0] is not pv:
            if len(self._translated) >= self.affinity.limit:
                self._translated.clear()
            try:
                out = csitrans.translate_pv(pv, plugin)
            except csitrans.TranslationError as err:
                out = err
            hit = (pv, out)
            self._translated[id(pv)] = hit
        if isinstance(hit[1], csitrans.TranslationError):
            raise BinderError(f"could not translate pv: {hit[1]}")
        return hit[1]

    def _check_bound_claims(self, claims: PodVolumeClaims, node, csi_node):
        """checkBoundClaims -> (bound volumes satisfied, bound PVs found)."""
        labels = node.labels
        for _pvc, pv in claims.bound:
            if pv is None:
                return True, False
            pv = self._translated_pv(pv, csi_node)
            if not self.affinity.check(pv, labels):
                return False, True
        return True, True

    def _find_matching_volumes(self, claims: PodVolumeClaims, node):
        """findMatchingVolumes -> (all matched, bindings, claims left to provision)."""
        labels = node.labels
        chosen = set()
        bindings, unmatched = [], []
        matched_all = True
        fits = self.affinity.check
        for pvc, candidates in claims.to_match:
            if candidates.error is not None:
                raise BinderError(candidates.error)
            best = candidates.find(labels, chosen, fits)
            if best is None:
                unmatched.append(pvc)
                matched_all = False
                continue
            chosen.add(best.name)
            bindings.append(BindingInfo(best.pv, pvc))
        return matched_all, bindings, unmatched

    def _check_volume_provisions(self, claims_to_provision, node):
        """checkVolumeProvisions -> (provisioning possible, enough storage, claims to provision)."""
        objects = self.handle.objects
        out = []
        for pvc in claims_to_provision:
            class_name = pvc_class(pvc)
            if not class_name:
                raise BinderError(f'no class for claim "{pvc_key(pvc)}"')
            sc = objects.storage_classes.get(class_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            provisioner = sc.get("provisioner") or ""
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.get("allowedTopologies"), node.labels):
                return False, True, []
            if not self._has_enough_capacity(provisioner, pvc, sc, node):
                return True, False, []
            out.append(pvc)
        return True, True, out

    def _has_enough_capacity(self, provisioner: str, pvc: dict, sc: dict, node) -> bool:
        """hasEnoughCapacity: CSIStorageCapacity check for drivers that opt into it."""
        requests = (spec(pvc).get("resources") or {}).get("requests") or {}
        if "storage" not in requests:
            return True
        objects = self.handle.objects
        driver = objects.csi_drivers.get(provisioner)
        if driver is None or not spec(driver).get("storageCapacity"):
            return True
        size = requested_storage(pvc)
        sc_name = meta(sc).get("name", "")
        for cap in objects.csi_storage_capacities:
            if cap.get("storageClassName") != sc_name:
                continue
            limit = cap.get("maximumVolumeSize")
            if limit is None:
                limit = cap.get("capacity")
            if limit is None or _ceil_quantity(limit) < size:
                continue
            topology = cap.get("nodeTopology")
            if topology is None:
                continue
            try:
                if LabelSelector(topology, "nodeTopology").matches(node.labels):
                    return True
            except ParseError:
                continue
        return False

    def find_pod_volumes(self, claims: PodVolumeClaims, node, csi_node):
        """FindPodVolumes -> (PodVolumes, conflict reasons). Raises BinderError on unexpected failures."""
        bound_ok = unbound_ok = storage_ok = pvs_found = True
        static, dynamic = [], []
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims, node, csi_node)
        if claims.unbound_delay_binding:
            to_provision = []
            for pvc, selected in claims.selected:
                if selected != node.name:
                    unbound_ok = False  # fast path: provisioning is already bound to another node
                    break
                to_provision.append(pvc)
            else:
                if claims.to_match:
                    unbound_ok, static, unmatched = self._find_matching_volumes(claims, node)
                    to_provision.extend(unmatched)
                if to_provision:
                    unbound_ok, storage_ok, dynamic = self._check_volume_provisions(to_provision, node)
        reasons = []
        if not bound_ok:
            reasons.append(self.node_conflict_reason)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not storage_ok:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return PodVolumes(static, dynamic), reasons

    # -- Reserve / Unreserve -----------------------------------------------------------------
    def are_pod_volumes_bound(self, pod) -> bool:
        for vol in pod.volumes:
            if not self._is_volume_bound(pod, vol)[0]:
                return False
        return True

    def assume_pod_volumes(self, pod, node_name: str, pod_volumes: PodVolumes):
        """AssumePodVolumes -> (all volumes already bound, error text or None)."""
        if self.are_pod_volumes_bound(pod):
            return True, None
        new_bindings = []
        for b in pod_volumes.static_bindings:
            new_pv, dirty = bind_volume_to_claim(b.pv, b.pvc)
            if dirty:
                err = self.pv_cache.assume(meta(new_pv).get("name", ""), new_pv)
                if err is not None:
                    self._revert_pvs(new_bindings)
                    return False, err
            new_bindings.append(BindingInfo(new_pv, b.pvc))
        provisioned = []
        for claim in pod_volumes.dynamic_provisions:
            clone = with_annotation(claim, ANN_SELECTED_NODE, node_name)
            err = self.pvc_cache.assume(pvc_key(clone), clone)
            if err is not None:
                self._revert_pvs(new_bindings)
                self._revert_pvcs(provisioned)
                return False, err
            provisioned.append(clone)
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = provisioned
        return False, None

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes):
        self._revert_pvs(pod_volumes.static_bindings)
        self._revert_pvcs(pod_volumes.dynamic_provisions)

    def _revert_pvs(self, bindings):
        for b in bindings:
            self.pv_cache.restore(meta(b.pv).get("name", ""))

    def _revert_pvcs(self, claims):
        for c in claims:
            self.pvc_cache.restore(pvc_key(c))

    # -- PreBind -----------------------------------------------------------------------------
    def bind_pod_volumes(self, node_name: str, pod_volumes: PodVolumes, client):
        """BindPodVolumes: write the assumed bindings through ``client``, then wait until they are complete.

        Returns an error text or None. Waiting polls the cluster objects the handle sees (kube polls its
        informer caches) every second, up to ``bindTimeoutSeconds``; unlike kube, the first check is
        immediate, which only saves a second when the bindings are already complete.
        """
        err = self._bind_api_update(pod_volumes, client)
        if err is not None:
            return err
        deadline = time.monotonic() + self.bind_timeout_seconds
        while True:
            try:
                if self.check_bindings(node_name, pod_volumes):
                    return None
            except BinderError as exc:
                return f"binding volumes: {exc}"
            if time.monotonic() + BIND_POLL_INTERVAL_SECONDS > deadline:
                return "binding volumes: context deadline exceeded"
            time.sleep(BIND_POLL_INTERVAL_SECONDS)

    def _bind_api_update(self, pod_volumes: PodVolumes, client):
        """bindAPIUpdate: update the PVs (claimRef) and the claims (selected node) in the API."""
        bindings, claims = pod_volumes.static_bindings, pod_volumes.dynamic_provisions
        done_bindings = done_claims = 0
        try:
            for b in bindings:
                b.pv = client.update_pv(b.pv) or b.pv
                done_bindings += 1
            for i, claim in enumerate(claims):
                claims[i] = client.update_pvc(claim) or claim
                done_claims += 1
        except Exception as exc:  # an API error text fails the binding cycle
            return str(exc)
        finally:
            self._revert_pvs(bindings[done_bindings:])
            self._revert_pvcs(claims[done_claims:])
        return None

    def check_bindings(self, node_name: str, pod_volumes: PodVolumes) -> bool:
        """checkBindings: whether the PV controller has fully bound every claim; BinderError to give up."""
        node_info = self.handle.snapshot.get(node_name)
        if node_info is None:
            raise BinderError(f'failed to get node "{node_name}": node "{node_name}" not found')
        labels = node_info.node.labels
        csi_node = self.handle.objects.csi_nodes.get(node_name)
        for b in pod_volumes.static_bindings:
            name = meta(b.pv).get("name", "")
            pv = self.pv_cache.get_api(name)
            if pv is None:
                raise BinderError(f"failed to check binding: {self.pv_cache.not_found(name)}")
            key = pvc_key(b.pvc)
            pvc = self.pvc_cache.get_api(key)
            if pvc is None:
                raise BinderError(f"failed to check binding: {self.pvc_cache.not_found(key)}")
            if resource_version(b.pv) > resource_version(pv):
                return False  # the update has not reached us yet
            try:
                translated = self._translated_pv(pv, csi_node)
            except BinderError as err:
                raise BinderError(f"failed to translate pv to csi: {err}") from None
            self._check_affinity(translated, node_name, labels)
            ref = spec(pv).get("claimRef")
            if ref is None or not ref.get("uid"):
                raise BinderError(f'ClaimRef got reset for pv "{name}"')
            if not is_pvc_fully_bound(pvc):
                return False
        for claim in pod_volumes.dynamic_provisions:
            key = pvc_key(claim)
            pvc = self.pvc_cache.get_api(key)
            if pvc is None:
                raise BinderError(f"failed to check provisioning pvc: {self.pvc_cache.not_found(key)}")
            if resource_version(claim) > resource_version(pvc):
                return False
            ann = meta(pvc).get("annotations")
            claim_name = meta(pvc).get("name", "")
            if ann is None:
                raise BinderError(f'selectedNode annotation reset for PVC "{claim_name}"')
            if ann.get(ANN_SELECTED_NODE, "") != node_name:
                raise BinderError(f'provisioning failed for PVC "{claim_name}"')
            volume_name = spec(pvc).get("volumeName") or ""
            if volume_name:
                pv = self.pv_cache.get_api(volume_name)
                if pv is None:
                    return False  # the PV may not have reached us yet
                self._check_affinity(self._translated_pv(pv, csi_node), node_name, labels)
            if not is_pvc_fully_bound(pvc):
                return False
        return True

    def _check_affinity(self, pv: dict, node_name: str, labels: dict):
        if not self.affinity.check(pv, labels):
            raise BinderError(f'pv "{meta(pv).get("name", "")}" node affinity doesn\'t match node '
                              f'"{node_name}": no matching NodeSelectorTerms')


def _ceil_quantity(q) -> int:
    """Quantity.Value() of a capacity (rounded up)."""
    try:
        return value(q)
    except QuantityError:
        return 0
