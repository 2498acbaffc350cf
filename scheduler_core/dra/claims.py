"""Pods and their ResourceClaims (k8s.io/dynamic-resource-allocation/resourceclaim and the resourceclaim
controller as simulated clusters run it).

``claims_from_templates`` does the controller's job the way ../shared/golden-v136/README.md describes it: for a
pod P with ``{name: C, resourceClaimTemplateName: T}`` the claim ``P-C`` in P's namespace, with T's ``spec.spec``,
labels and annotations, the annotation ``resource.kubernetes.io/pod-claim-name: C`` and P as controlling owner;
P's ``status.resourceClaimStatuses`` gets ``{name: C, resourceClaimName: P-C}``.
"""
from __future__ import annotations

import copy
import uuid

from .defaults import with_defaults

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"


class ClaimLookupError(Exception):
    """The pod's claim cannot be used (kube's PreEnqueue/PreFilter text)."""


def _meta(obj) -> dict:
    return obj.get("metadata") or {}


def pod_uid(pod_raw: dict) -> str:
    """The pod's uid; a pod not stored yet (no uid) is known by namespace/name, as objects.Pod keys it."""
    meta = _meta(pod_raw)
    return meta.get("uid") or f'{meta.get("namespace") or "default"}/{meta.get("name", "")}'


def claim_name(pod_raw: dict, pod_claim: dict):
    """resourceclaim.Name: (name or None, must check owner); ClaimLookupError when not created yet."""
    if pod_claim.get("resourceClaimName"):
        return pod_claim["resourceClaimName"], False
    meta = _meta(pod_raw)
    if pod_claim.get("resourceClaimTemplateName"):
        for st in (pod_raw.get("status") or {}).get("resourceClaimStatuses") or ():
            if st.get("name") == pod_claim.get("name"):
                return st.get("resourceClaimName"), True
        raise ClaimLookupError(f'pod "{meta.get("namespace") or "default"}/{meta.get("name", "")}": '
                               f'ResourceClaim not created yet')
    raise ClaimLookupError(f'pod "{meta.get("namespace") or "default"}/{meta.get("name", "")}", '
                           f'spec.resourceClaim "{pod_claim.get("name", "")}": none of the supported fields are set')


def is_for_pod(pod_raw: dict, claim: dict) -> None:
    """resourceclaim.IsForPod: the claim must be in the pod's namespace and owned (controller) by the pod."""
    pm, cm = _meta(pod_raw), _meta(claim)
    pns, cns = pm.get("namespace") or "default", cm.get("namespace") or "default"
    if pns != cns:
        raise ClaimLookupError(f"ResourceClaim {cns}/{cm.get('name')} is not in the same namespace as Pod "
                               f"{pns}/{pm.get('name')}")
    owner = next((o for o in cm.get("ownerReferences") or () if o.get("controller")), None)
    if owner is None or owner.get("uid") != pod_uid(pod_raw):
        raise ClaimLookupError(f"ResourceClaim {cns}/{cm.get('name')} was not created for Pod {pns}/{pm.get('name')} "
                               f"(Pod is not owner)")


def pod_claims(pod_raw: dict, claims: dict) -> list:
    """foreachPodResourceClaim: the pod's claims (``claims``: {ns/name: claim}) in ``spec.resourceClaims`` order,
    as (pod claim name, claim) pairs; ClaimLookupError with kube's text when one cannot be used."""
    ns = _meta(pod_raw).get("namespace") or "default"
    out = []
    for pc in (pod_raw.get("spec") or {}).get("resourceClaims") or ():
        name, check_owner = claim_name(pod_raw, pc)
        if name is None:
            continue
        claim = claims.get(f"{ns}/{name}")
        if claim is None:
            raise ClaimLookupError(f'could not find ResourceClaim "{ns}/{name}"')   # the assume cache's NotFoundError
        if _meta(claim).get("deletionTimestamp"):
            raise ClaimLookupError(f'resourceclaim "{name}" is being deleted')
        if check_owner:
            is_for_pod(pod_raw, claim)
        out.append((pc.get("name", ""), claim))
    return out


def claim_from_template(pod_raw: dict, pod_claim: dict, template: dict) -> dict:
    """The claim the resourceclaim controller makes for one template entry of a pod (named ``P-C``), as the
    apiserver stores it: defaulted, with a uid of its own (kube-scheduler tells claims apart by uid; derived from
    the pod's uid and the claim's name, so that every copy of the cluster makes the same one)."""
    pm, tm = _meta(pod_raw), _meta(template)
    ns = pm.get("namespace") or "default"
    annotations = dict(tm.get("annotations") or {})
    annotations[POD_CLAIM_NAME_ANNOTATION] = pod_claim.get("name", "")
    name = f'{pm.get("name", "")}-{pod_claim.get("name", "")}'
    meta = {"name": name, "namespace": ns, "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{pod_uid(pod_raw)}/{name}")),
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pm.get("name", ""),
                                 "uid": pod_uid(pod_raw), "controller": True,
                                 "blockOwnerDeletion": True}]}
    if tm.get("labels"):
        meta["labels"] = dict(tm["labels"])
    spec = copy.deepcopy((template.get("spec") or {}).get("spec") or {})
    return with_defaults("ResourceClaim", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                           "metadata": meta, "spec": spec})


def claims_from_templates(pod_raw: dict, templates: dict, claims: dict):
    """The resourceclaim controller for one pod: (the pod with its claim statuses, the new claims). Entries whose
    template does not exist (yet) are left without status, as the controller leaves them."""
    spec = pod_raw.get("spec") or {}
    entries = [pc for pc in spec.get("resourceClaims") or () if pc.get("resourceClaimTemplateName")]
    if not entries:
        return pod_raw, []
    status = dict(pod_raw.get("status") or {})
    statuses = list(status.get("resourceClaimStatuses") or ())
    have = {s.get("name") for s in statuses}
    ns = _meta(pod_raw).get("namespace") or "default"
    made = []
    for pc in entries:
        if pc.get("name") in have:
            continue
        template = templates.get(f'{ns}/{pc["resourceClaimTemplateName"]}')
        if template is None:
            continue
        claim = claim_from_template(pod_raw, pc, template)
        key = f'{ns}/{claim["metadata"]["name"]}'
        if key not in claims:
            made.append(claim)
        statuses.append({"name": pc.get("name", ""), "resourceClaimName": claim["metadata"]["name"]})
    if len(statuses) == len(status.get("resourceClaimStatuses") or ()):
        return pod_raw, made
    status["resourceClaimStatuses"] = statuses
    return dict(pod_raw, status=status), made


def _claims_named_by_pod(pod_raw: dict, claims: dict):
    """The claims the resourceclaim controller looks at when a pod goes (enqueuePod): those its
    ``spec.resourceClaims`` name (directly or through its claim statuses) and its extended-resource claim."""
    ns = _meta(pod_raw).get("namespace") or "default"
    names = []
    for pc in (pod_raw.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, _owned = claim_name(pod_raw, pc)
        except ClaimLookupError:
            continue   # not created: nothing to release
        if name:
            names.append(name)
    extended = (pod_raw.get("status") or {}).get("extendedResourceClaimStatus") or {}
    if extended.get("resourceClaimName"):
        names.append(extended["resourceClaimName"])
    seen = set()
    for name in names:
        claim = claims.get(f"{ns}/{name}")
        if claim is not None and name not in seen:
            seen.add(name)
            yield claim


def released_by_pod(pod_raw: dict, claims: dict):
    """The resourceclaim controller when a pod goes: (claims to update, claims to delete). Of the claims the pod
    names, every one reserved for the pod drops it from ``status.reservedFor`` and, reserved for nobody any more,
    loses its allocation and the scheduler's finalizer, which frees its devices (an update pods waiting for devices
    are retried on); the claims the pod owns (made from its templates, or its extended-resource claim) are then
    deleted."""
    uid = pod_uid(pod_raw)
    updates, deletes = [], []
    for claim in _claims_named_by_pod(pod_raw, claims):
        meta = _meta(claim)
        if any(o.get("controller") and o.get("uid") == uid for o in meta.get("ownerReferences") or ()):
            deletes.append(claim)
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or ()
        if not any(r.get("uid") == uid for r in reserved):
            continue
        new = copy.deepcopy(claim)
        new_status = new.setdefault("status", {})
        new_status["reservedFor"] = [r for r in reserved if r.get("uid") != uid]
        if not new_status["reservedFor"]:
            for key in ("reservedFor", "allocation", "devices"):
                new_status.pop(key, None)
            finalizers = [f for f in meta.get("finalizers") or () if f != DELETE_PROTECTION_FINALIZER]
            if finalizers:
                new["metadata"]["finalizers"] = finalizers
            else:
                new["metadata"].pop("finalizers", None)
        updates.append(new)
    return updates, deletes
