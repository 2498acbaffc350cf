"""Why a pod's claims fit or do not fit, node by node and request by request (for pages and the CLI).

``explain_claims(objects, pod_raw, nodes)`` looks at every device of every pool on each node the way the
allocator does, in its order of checks, and says for each request which devices could serve it and why the
others cannot:

- ``allocated``: the device is in use, with the claims holding it and the pods those claims are reserved for;
- ``selector``: a selector was false (``source`` "class NAME" or "claim", its index and expression, and the
  device's values of the attributes and capacities the expression reads);
- ``cel-error``: a selector failed at run time on this device (kube stops the whole allocation with it);
- ``not-on-node``: a per-device node selection excludes the node;
- ``capacity``: a consumable capacity the request asks for is not defined, outside the policy or used up;
- ``counters``: a shared counter the device consumes has too little left (set, counter, needed, available);
- ``taint``: a NoSchedule/NoExecute device taint the request does not tolerate.

Per node it also runs the allocator over all the pod's unallocated claims: ``fits`` and the devices it would
choose, or kube's reason (``cannot allocate all claims``, ``resourceclaim not available on the node``, an error).
An allocated claim is explained by its allocation (devices, node selector) instead.
"""
from __future__ import annotations

import copy
import re

from ..objects.quantity import parse_quantity
from ..objects.selectors import NodeSelector
from .allocator import (AllocatedState, AllocationError, Allocator, FailedOnNode, Request, node_matches,
                        capacity_fits, claim_key, format_device_id, gather_pools, untolerated_taint)
from .cel import compile_selector
from .celvalues import CELError
from .claims import ClaimLookupError, pod_claims

_REFERENCE = re.compile(r'device\.(attributes|capacity)\["([^"]+)"\]\.([A-Za-z0-9_.-]+?)(?=[^A-Za-z0-9_-]|$)')


def _referenced(expression: str, driver: str, device: dict) -> dict:
    """The device's values of the attributes and capacities an expression reads (``domain/id``: value or None)."""
    out = {}
    for kind, domain, ident in _REFERENCE.findall(expression):
        ident = ident.split(".")[0]
        values = device.get(kind) or {}
        raw = values.get(f"{domain}/{ident}")
        if raw is None and domain == driver:
            raw = values.get(ident)
        if kind == "capacity":
            out[f"{domain}/{ident}"] = None if raw is None else raw.get("value")
        else:
            out[f"{domain}/{ident}"] = None if raw is None else next(iter(raw.values()), None)
    return out


def _holders(claims: dict) -> dict:
    """device id -> [{claim, reserved_for}] for every allocated claim (admin access included, marked)."""
    out = {}
    for key, claim in claims.items():
        status = claim.get("status") or {}
        for res in ((status.get("allocation") or {}).get("devices") or {}).get("results") or ():
            did = (res.get("driver", ""), res.get("pool", ""), res.get("device", ""))
            out.setdefault(did, []).append({
                "claim": key, "request": res.get("request"), "admin_access": bool(res.get("adminAccess")),
                "reserved_for": [r.get("name") for r in status.get("reservedFor") or ()]})
    return out


def _requests(claim: dict) -> list:
    out = []
    for raw in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        if raw.get("firstAvailable"):
            out.extend(Request(sub, parent=raw.get("name", "")) for sub in raw["firstAvailable"])
        else:
            out.append(Request(dict(raw.get("exactly") or {}, name=raw.get("name", ""))))
    return out


def _selector_verdict(dev, cls, request: Request, claim: dict):
    sources = [(f"class {cls['metadata']['name']}", [((s.get("cel") or {}).get("expression", ""))
                                                       for s in (cls.get("spec") or {}).get("selectors") or ()])]
    sources.append(("claim", request.selectors))
    for source, expressions in sources:
        for i, expr in enumerate(expressions):
            prog = compile_selector(expr)
            if prog.error:
                return {"reason": "cel-error", "source": source, "index": i, "expression": expr,
                        "detail": f"CEL compile error: {prog.error}"}
            try:
                ok = prog.matches(dev.activation())
            except CELError as err:
                return {"reason": "cel-error", "source": source, "index": i, "expression": expr,
                        "detail": f"claim {claim_key(claim)}: selector #{i}: CEL runtime error: {err}"
                        if source == "claim" else f"{source}: selector #{i}: CEL runtime error: {err}"}
            if not ok:
                return {"reason": "selector", "source": source, "index": i, "expression": expr,
                        "values": _referenced(expr, dev.id[0], dev.raw)}
    return None


def _device_verdict(allocator: Allocator, node, dev, request: Request, cls, claim, holders: dict):
    """The first reason the allocator would skip this device for this request alone, or None (it can serve)."""
    if not request.admin_access and dev.id in allocator.allocated.devices:
        return {"reason": "allocated", "holders": holders.get(dev.id, [])}
    verdict = _selector_verdict(dev, cls, request, claim)
    if verdict is not None:
        return verdict
    if (dev.slice.get("spec") or {}).get("perDeviceNodeSelection") and not node_matches(
            node, dev.raw.get("nodeName") or "", bool(dev.raw.get("allNodes")), dev.raw.get("nodeSelector")):
        return {"reason": "not-on-node"}
    try:
        if not capacity_fits(allocator.allocated.capacity.get(dev.id, {}), request.capacity, dev.raw, {}):
            return {"reason": "capacity", "requested": {k: str(v) for k, v in request.capacity.items()},
                    "holders": holders.get(dev.id, [])}
    except ValueError as err:
        return {"reason": "capacity", "detail": str(err)}
    available = allocator.available_counters(dev.pool)
    for use in dev.raw.get("consumesCounters") or ():
        left = available.get(use.get("counterSet"), {})
        for name, c in (use.get("counters") or {}).items():
            need = parse_quantity(c.get("value", "0"))
            if name in left and left[name] < need:
                return {"reason": "counters", "counter_set": use.get("counterSet"), "counter": name,
                        "needed": c.get("value"), "available": str(left[name])}
    taint = untolerated_taint(dev.raw, request)
    if taint is not None:
        return {"reason": "taint", "taint": {k: taint.get(k) for k in ("key", "value", "effect") if taint.get(k)}}
    return None


def explain_claims(objects, pod_raw: dict, nodes, claims: dict | None = None) -> dict:
    """The explanation document for one pod over ``nodes`` (objects.Node); ``claims`` overrides the claims the
    scheduler sees (e.g. with in-flight allocations), defaulting to ``objects.resource_claims``."""
    claims = dict(objects.resource_claims) if claims is None else claims
    try:
        pairs = pod_claims(pod_raw, claims)
    except ClaimLookupError as err:
        return {"error": str(err), "claims": [], "nodes": {}}
    allocated = AllocatedState()
    for c in claims.values():
        if (c.get("status") or {}).get("allocation"):
            allocated.add_allocation(c["status"]["allocation"])
    allocator = Allocator(allocated, objects.device_classes, objects.resource_slices.values())
    holders = _holders(claims)
    doc_claims, to_allocate = [], []
    for pod_claim, claim in pairs:
        allocation = (claim.get("status") or {}).get("allocation")
        entry = {"claim": claim_key(claim), "pod_claim": pod_claim, "allocated": bool(allocation)}
        if allocation:
            entry["devices"] = [{"request": r.get("request"), "device": format_device_id(
                (r.get("driver", ""), r.get("pool", ""), r.get("device", "")))}
                for r in (allocation.get("devices") or {}).get("results") or ()]
            entry["node_selector"] = allocation.get("nodeSelector")
        else:
            to_allocate.append(claim)
            entry["requests"] = []
            for request in _requests(claim):
                cls = objects.device_classes.get(request.class_name)
                entry["requests"].append({"request": request.full_name, "class": request.class_name,
                                          "class_exists": cls is not None, "mode": request.mode,
                                          "count": request.count, "nodes": {}})
        doc_claims.append(entry)
    doc_nodes = {}
    for node in nodes:
        for entry, (pod_claim, claim) in zip(doc_claims, pairs):
            if entry["allocated"]:
                continue
            pools = gather_pools(allocator.on_node.get(node.name, []) + allocator.shared, node,
                                 allocator.all_slices)
            for req_doc, request in zip(entry["requests"], _requests(claim)):
                cls = objects.device_classes.get(request.class_name)
                fits, rejected = [], []
                for pool in pools:
                    if pool.incomplete or pool.invalid:
                        rejected.append({"pool": pool.pool_id, "reason": "pool-incomplete" if pool.incomplete
                                         else "pool-invalid", "detail": pool.invalid_reason})
                        continue
                    for _slice, devices in pool.devices:
                        for dev in devices:
                            verdict = None if cls is None else _device_verdict(
                                allocator, node, dev, request, cls, claim, holders)
                            if cls is not None and verdict is None:
                                fits.append(format_device_id(dev.id))
                            elif verdict is not None:
                                rejected.append(dict(verdict, device=format_device_id(dev.id)))
                req_doc["nodes"][node.name] = {"fits": fits, "rejected": rejected}
        doc_nodes[node.name] = _node_outcome(allocator, node, doc_claims, pairs, to_allocate)
    return {"claims": doc_claims, "nodes": doc_nodes}


def _node_outcome(allocator, node, doc_claims, pairs, to_allocate) -> dict:
    for entry, (_pc, claim) in zip(doc_claims, pairs):
        selector = (entry.get("node_selector") if entry["allocated"] else None)
        if selector is not None and not NodeSelector(selector, "nodeSelector").matches(node.labels, node.name):
            return {"fits": False, "reason": "resourceclaim not available on the node", "claim": entry["claim"]}
    if not to_allocate:
        return {"fits": True, "chosen": []}
    try:
        results = allocator.allocate(node, to_allocate)
    except FailedOnNode as err:
        return {"fits": False, "reason": str(err)}
    except AllocationError as err:
        return {"fits": False, "error": str(err)}
    if results is None:
        return {"fits": False, "reason": "cannot allocate all claims"}
    return {"fits": True, "chosen": [
        {"claim": claim_key(c), "devices": [{"request": r["request"], "device": f'{r["driver"]}/{r["pool"]}/{r["device"]}'}
                                            for r in res["devices"]["results"]]}
        for c, res in zip(to_allocate, results)]}


def reason_text(r: dict) -> str:
    """One rejected device's (or pool's) reason in words."""
    reason = r["reason"]
    if reason == "allocated":
        held = ", ".join(f'{h["claim"]} ({", ".join(h["reserved_for"]) or "no pod"})' for h in r.get("holders") or ())
        return f"allocated to {held or 'another claim'}"
    if reason == "selector":
        values = ", ".join(f"{k}={v}" for k, v in (r.get("values") or {}).items())
        return f"{r['source']} selector #{r['index']} false" + (f" ({values})" if values else "")
    if reason == "taint":
        t = r["taint"]
        return f"taint {t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')} not tolerated"
    if reason == "counters":
        return f"counter {r['counter_set']}/{r['counter']} has {r['available']} left, needs {r['needed']}"
    return r.get("detail") or reason


def summary_lines(doc: dict) -> list:
    """A few text lines per claim, request and node (the CLI's ``--explain``)."""
    if doc.get("error"):
        return [doc["error"]]
    lines = []
    for claim in doc["claims"]:
        if claim["allocated"]:
            lines.append(f"claim {claim['claim']}: allocated ({', '.join(d['device'] for d in claim['devices'])})")
            continue
        for req in claim["requests"]:
            if not req["class_exists"]:
                lines.append(f"claim {claim['claim']} request {req['request']}: device class {req['class']} does "
                             f"not exist")
                continue
            for node, per in req["nodes"].items():
                rejected = "; ".join(f"{r.get('device', r.get('pool'))}: {reason_text(r)}" for r in per["rejected"])
                fits = ", ".join(per["fits"]) or "no device fits"
                lines.append(f"claim {claim['claim']} request {req['request']} on {node}: {fits}"
                             + (f"; {rejected}" if rejected else ""))
    return lines


# -- what would fix it: changes to the pod's claims ------------------------------------------------------------
_EQUALS = re.compile(r'^\s*device\.attributes\["([^"]+)"\]\.([A-Za-z0-9_-]+)\s*==\s*"([^"]*)"\s*$')
MAX_VALUES = 2   # other values offered for one equality selector


class ClaimFix:
    """A change to one of the pod's unallocated claims that may let it fit: ``kind`` ("device-selector",
    "device-count", "device-toleration"), ``phrase`` (what to change, where: the pod's ResourceClaimTemplate or the
    ResourceClaim itself), ``change`` (machine-readable), ``claims`` (every claim with the change made, for the
    scheduler to verify) and ``size`` (for a count, the share of devices given up)."""

    __slots__ = ("kind", "phrase", "change", "claims", "size")

    def __init__(self, kind: str, phrase: str, change: dict, claims: dict, size: float = 0):
        self.kind, self.phrase, self.change, self.claims, self.size = kind, phrase, change, claims, size


def _claim_source(pod_raw: dict, pod_claim: str, claim: dict) -> tuple:
    """(kind, namespace/name) of the object whose spec to change: the pod's template, else the claim."""
    ns = (claim.get("metadata") or {}).get("namespace") or "default"
    for entry in (pod_raw.get("spec") or {}).get("resourceClaims") or ():
        if entry.get("name") == pod_claim and entry.get("resourceClaimTemplateName"):
            return "ResourceClaimTemplate", f'{ns}/{entry["resourceClaimTemplateName"]}'
    return "ResourceClaim", claim_key(claim)


def _edited(claims: dict, claim: dict, request: str, edit) -> dict:
    """``claims`` with ``claim`` replaced by a copy whose request (``name`` or ``parent/name``) ``edit`` changed."""
    new = copy.deepcopy(claim)
    parent, _, sub = request.partition("/")
    for raw in ((new.get("spec") or {}).get("devices") or {}).get("requests") or ():
        if raw.get("name") != parent:
            continue
        if sub:
            edit(next(s for s in raw.get("firstAvailable") or () if s.get("name") == sub))
        else:
            edit(raw.setdefault("exactly", {}))
    out = dict(claims)
    out[claim_key(claim)] = new
    return out


def _without_selector(index: int):
    def edit(request):
        request["selectors"] = [s for i, s in enumerate(request.get("selectors") or ()) if i != index]
    return edit


def _with_selector(index: int, expression: str):
    def edit(request):
        request["selectors"][index] = {"cel": {"expression": expression}}
    return edit


def _with_count(count: int):
    def edit(request):
        request["count"] = count
    return edit


def _with_tolerations(tolerations: list):
    def edit(request):
        request["tolerations"] = list(request.get("tolerations") or ()) + copy.deepcopy(tolerations)
    return edit


def _device_toleration(taint: dict) -> dict:
    if taint.get("value"):
        return {"key": taint.get("key", ""), "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}
    return {"key": taint.get("key", ""), "operator": "Exists", "effect": taint["effect"]}


def claim_fixes(objects, pod_raw: dict, nodes, claims: dict | None = None, limit: int = 5) -> tuple:
    """What to change in the pod's unallocated claims so that some device could serve them, found over ``nodes``:
    (diagnoses: lines on what no device meets, fixes: ClaimFix candidates, at most ``limit`` of each kind per
    request). Candidates are not verified here: the scheduler's Filter must confirm them (``explain``).

    - a claim selector that some devices fail: the same equality with a value those devices have, or no selector;
    - an ExactCount asking more devices than any node can give this request alone: the most one node can;
    - NoSchedule/NoExecute device taints the request does not tolerate: tolerations for them."""
    claims = dict(objects.resource_claims) if claims is None else claims
    doc = explain_claims(objects, pod_raw, nodes, claims)
    if doc.get("error"):
        return [], []
    pairs = dict(pod_claims(pod_raw, claims))
    diagnoses, fixes = [], []
    for entry in doc["claims"]:
        if entry["allocated"]:
            continue
        claim = pairs[entry["pod_claim"]]
        kind, name = _claim_source(pod_raw, entry["pod_claim"], claim)
        for req in entry["requests"]:
            if not req["class_exists"]:
                continue
            where = f"request {req['request']} of {kind} {name}"
            change = {"pod_claim": entry["pod_claim"], "source": {"kind": kind, "name": name},
                      "request": req["request"]}
            per_node = list(req["nodes"].values())
            rejected = [r for per in per_node for r in per["rejected"]]
            most = max((len(per["fits"]) for per in per_node), default=0)
            fixes.extend(_selector_fixes(claims, claim, req, rejected, where, change, most, diagnoses, limit))
            if req["mode"] == "ExactCount" and 0 < most < req["count"]:
                fixes.append(ClaimFix("device-count", f"asking {most} device{'s' if most > 1 else ''} instead of "
                                                      f"{req['count']} in {where}",
                                      dict(change, count=most),
                                      _edited(claims, claim, req["request"], _with_count(most)),
                                      size=(req["count"] - most) / req["count"]))
            taints = []
            for r in rejected:
                if r["reason"] == "taint" and r["taint"] not in taints:
                    taints.append(r["taint"])
            if taints:
                tolerations = [_device_toleration(t) for t in taints[:limit]]
                text = ", ".join(f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t['effect']}"
                                 for t in taints[:limit])
                fixes.append(ClaimFix("device-toleration", f"tolerating the device taint{'s' if len(taints) > 1 else ''}"
                                                           f" {text} in {where}",
                                      dict(change, add_tolerations=tolerations),
                                      _edited(claims, claim, req["request"], _with_tolerations(tolerations)),
                                      size=len(tolerations)))
    return diagnoses, fixes


def _selector_fixes(claims, claim, req, rejected, where, change, most, diagnoses, limit) -> list:
    """Claim selectors that devices fail: a diagnosis when no device of any node passes them, then the fixes."""
    failing = {}
    for r in rejected:
        if r["reason"] == "selector" and r["source"] == "claim":
            failing.setdefault((r["index"], r["expression"]), []).append(r)
    fixes = []
    for (index, expression), devices in sorted(failing.items())[:limit]:
        values = {}
        for r in devices:
            for attr, value in (r.get("values") or {}).items():
                values.setdefault(attr, {}).setdefault(value, 0)
                values[attr][value] += 1
        if not most:
            seen = "; ".join(", ".join(f"{attr}={v} ({n})" for v, n in sorted(counts.items(), key=lambda kv: -kv[1]))
                             for attr, counts in values.items())
            diagnoses.append(f"no device meets selector #{index} of {where} ({expression})"
                             + (f": devices have {seen}" if seen else ""))
        match = _EQUALS.match(expression)
        if match:
            domain, ident, wanted = match.groups()
            counts = values.get(f"{domain}/{ident}") or {}
            for value, _n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[:MAX_VALUES]:
                if not isinstance(value, str) or value == wanted or '"' in value or "\\" in value:
                    continue
                new = f'device.attributes["{domain}"].{ident} == "{value}"'
                fixes.append(ClaimFix("device-selector", f"changing selector #{index} of {where} to {new}",
                                      dict(change, selector=index, expression=new),
                                      _edited(claims, claim, req["request"], _with_selector(index, new))))
        fixes.append(ClaimFix("device-selector", f"dropping selector #{index} ({expression}) from {where}",
                              dict(change, remove_selector=index),
                              _edited(claims, claim, req["request"], _without_selector(index)), size=1))
    return fixes
