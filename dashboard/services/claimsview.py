"""The pod page's claims panel: for a pod with ``spec.resourceClaims``, dra.explain over the cluster's stored
DeviceClasses, ResourceSlices and ResourceClaims (read-only), claim by claim and request by request, node by node.

The work is capped: a bound pod is explained on its node only; a pending one on at most ``SHOWN`` nodes, those a
ResourceSlice names (``spec.nodeName``) first, then the others, by name."""
from __future__ import annotations

from scheduler_core.dra.explain import explain_claims, reason_text
from scheduler_core.framework.snapshot import ClusterObjects
from scheduler_core.objects import Node as CoreNode

from ..models import Node
from . import objectstore

SHOWN = 8
KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim")


def _nodes(cluster, pod_row, slices: list) -> tuple[list, int]:
    """(the nodes explained, as scheduler_core Nodes; how many nodes the cluster has)."""
    rows = Node.objects.filter(cluster=cluster)
    if pod_row.node_name:
        nodes = [CoreNode(raw) for raw in rows.filter(name=pod_row.node_name).values_list("raw", flat=True)]
        return nodes, len(nodes)
    names = list(rows.order_by("name").values_list("name", flat=True))
    with_devices = {(s.get("spec") or {}).get("nodeName") for s in slices}
    names.sort(key=lambda n: n not in with_devices)
    shown = names[:SHOWN]
    raws = dict(rows.filter(name__in=shown).values_list("name", "raw"))
    return [CoreNode(raws[n]) for n in shown], len(names)


def _request_rows(req: dict, node_names: list) -> list:
    return [{"node": n, "fits": req["nodes"][n]["fits"],
             "rejected": [{"device": r.get("device") or r.get("pool"), "reason": r["reason"],
                           "text": reason_text(r)} for r in req["nodes"][n]["rejected"]]}
            for n in node_names if n in req["nodes"]]


def pod_claims(cluster, pod_row) -> dict | None:
    """None when the pod asks for no claims; else {"error": why the claims cannot be looked up ('' if they can),
    "claims": [{"claim", "pod_claim", "allocated", "devices" (allocated ones), "requests": [{"request", "class",
    "class_exists", "count", "mode", "nodes": [{"node", "fits", "rejected": [{"device", "reason", "text"}]}]}]}],
    "outcomes": [{"nodes", "fits", "chosen", "why", "claim"}] (all the pod's claims together on each node: the
    devices the allocator would choose, or kube's reason and the claim it names; consecutive nodes failing alike
    share one entry), "shown",
    "total" and "more" (nodes not shown)}."""
    if not (pod_row.raw.get("spec") or {}).get("resourceClaims"):
        return None
    by_kind = {k: [] for k in KINDS}
    for kind, raw in objectstore.other_objects(cluster.pk, KINDS):
        by_kind[kind].append(raw)
    objects = ClusterObjects(device_classes=by_kind["DeviceClass"], resource_slices=by_kind["ResourceSlice"],
                             resource_claims=by_kind["ResourceClaim"])
    nodes, total = _nodes(cluster, pod_row, by_kind["ResourceSlice"])
    doc = explain_claims(objects, pod_row.raw, nodes)
    names = [n.name for n in nodes]
    claims = []
    for c in doc["claims"]:
        entry = {k: c.get(k) for k in ("claim", "pod_claim", "allocated", "devices")}
        entry["requests"] = [dict({k: req[k] for k in ("request", "class", "class_exists", "count", "mode")},
                                  nodes=_request_rows(req, names)) for req in c.get("requests") or ()]
        claims.append(entry)
    outcomes = []
    for n, o in doc["nodes"].items():
        entry = {"nodes": [n], "fits": o["fits"], "chosen": o.get("chosen") or [], "claim": o.get("claim", ""),
                 "why": o.get("reason") or o.get("error", "")}
        last = outcomes[-1] if outcomes else None
        if last and not entry["fits"] and not last["fits"] and (last["why"], last["claim"]) == (entry["why"],
                                                                                              entry["claim"]):
            last["nodes"].append(n)   # consecutive nodes failing alike: one line
        else:
            outcomes.append(entry)
    return {"error": doc.get("error", ""), "claims": claims, "outcomes": outcomes, "shown": len(names),
            "total": total, "more": total - len(names)}
