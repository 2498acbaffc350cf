"""ResourceSlices of a node copied for another node: what a node "like" an existing one brings with its DRA driver
(what-if's added nodes, explain's added node). Only the template's node-local slices (``spec.nodeName``) are
copied; slices for all nodes, a node selector or per-device node selection are not the node's own. A copy is named
after the new node and so is its pool (a pool is per driver and name: sharing the template's would make one pool
of two nodes' slices)."""
from __future__ import annotations

import copy


def node_local(slices, node_name: str) -> list:
    """The slices published for this node alone (``spec.nodeName``)."""
    return [s for s in slices if (s.get("spec") or {}).get("nodeName") == node_name]


def _renamed(name: str, old: str, new: str) -> str:
    return name.replace(old, new) if old and old in name else f"{name}-{new}"


def copies_for_node(slices, template_node: str, new_node: str) -> list:
    """The template node's node-local slices as the new node's driver would publish them."""
    out = []
    for raw in node_local(slices, template_node):
        s = copy.deepcopy(raw)
        meta = s.setdefault("metadata", {})
        for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
            meta.pop(key, None)
        meta["name"] = _renamed(meta.get("name", ""), template_node, new_node)
        spec = s["spec"]
        spec["nodeName"] = new_node
        pool = spec.setdefault("pool", {})
        pool["name"] = _renamed(pool.get("name", ""), template_node, new_node)
        out.append(s)
    return out
