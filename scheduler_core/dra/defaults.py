"""kube-apiserver's defaults for resource.k8s.io/v1 objects (pkg/apis/resource/v1/defaults.go and its generated
defaulters), applied to what is written before it is validated and stored:

- a request (``exactly``) or a ``firstAvailable`` subrequest: ``allocationMode: ExactCount`` and, in that mode,
  ``count: 1``; a toleration's ``operator: Equal`` (in claims, templates and allocation results);
- a ResourceSlice device's taint: ``timeAdded`` (the write's time, to the second); a node-allocatable mapping's
  ``allocationMultiplier: "1"``.

kube-scheduler reads these fields as they are stored: a claim without an allocation mode is an error to it
("unsupported count mode"), so every writer of these kinds goes through here.
"""
from __future__ import annotations

import copy

EXACT_COUNT = "ExactCount"


def _requests(spec) -> list:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    return requests if isinstance(requests, list) else []


def _tolerations(owner: dict) -> None:
    for toleration in owner.get("tolerations") or ():
        if isinstance(toleration, dict) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def _request(request) -> None:
    """SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest, with the tolerations' operator."""
    if not isinstance(request, dict):
        return
    if not request.get("allocationMode"):
        request["allocationMode"] = EXACT_COUNT
    if request["allocationMode"] == EXACT_COUNT and not request.get("count"):
        request["count"] = 1
    _tolerations(request)


def _claim_spec(spec) -> None:
    for request in _requests(spec):
        if not isinstance(request, dict):
            continue
        if isinstance(request.get("exactly"), dict):
            _request(request["exactly"])
        for sub in request.get("firstAvailable") or () if isinstance(request.get("firstAvailable"), list) else ():
            _request(sub)


def _slice(spec, now: str) -> None:
    for device in (spec.get("devices") if isinstance(spec, dict) else None) or ():
        if not isinstance(device, dict):
            continue
        for taint in device.get("taints") or () if isinstance(device.get("taints"), list) else ():
            if isinstance(taint, dict) and not taint.get("timeAdded"):
                taint["timeAdded"] = now
        mappings = device.get("nodeAllocatableResourceMappings")
        for mapping in mappings.values() if isinstance(mappings, dict) else ():
            if isinstance(mapping, dict) and mapping.get("allocationMultiplier") is None:
                mapping["allocationMultiplier"] = "1"


def with_defaults(kind: str, obj: dict, now: str = "") -> dict:
    """A copy of ``obj`` with kube-apiserver's defaults for its kind (``now``: RFC 3339 to the second, the time a
    device taint without one gets); other kinds, and shapes validation will refuse, are returned as they are."""
    if kind not in ("ResourceClaim", "ResourceClaimTemplate", "ResourceSlice") or not isinstance(obj, dict):
        return obj
    out = copy.deepcopy(obj)
    spec = out.get("spec")
    if kind == "ResourceClaim":
        _claim_spec(spec)
        allocation = (out.get("status") or {}).get("allocation") if isinstance(out.get("status"), dict) else None
        results = ((allocation or {}).get("devices") or {}).get("results") if isinstance(allocation, dict) else None
        for result in results if isinstance(results, list) else ():
            if isinstance(result, dict):
                _tolerations(result)
    elif kind == "ResourceClaimTemplate":
        _claim_spec(spec.get("spec") if isinstance(spec, dict) else None)
    else:
        _slice(spec, now)
    return out
