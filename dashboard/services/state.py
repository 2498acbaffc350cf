"""A cluster's stored state (Node and Pod rows, StoredObjects) as a scheduler_core Scenario, for the
computations that run on a copy of it: profile dry runs and what-if questions."""
from __future__ import annotations

from scheduler_core.scenario import ARRAYS, scenario_from_data

from ..models import Node, Pod
from . import objectstore

READ_CHUNK = 2000   # pod rows fetched at a time

def cluster_scenario(cluster, unbind=frozenset(), gated: bool = True, pending_uid: str | None = None,
                     progress=None):
    """Nodes, bound pods and objects as stored; unbound pods (and the bound ones whose uid is in ``unbind``,
    taken off their nodes) as pending, oldest first. ``gated=False`` leaves scheduling-gated pods out;
    ``pending_uid``: the unbound pod with that uid is the only pending one. ``progress(text)``: told how far the
    reading and parsing are, every few thousand pods."""
    progress = progress or (lambda text: None)
    data = {k: v for k, v in objectstore.scenario_objects(cluster.pk).items() if k in ARRAYS[3:]}
    data["nodes"] = list(Node.objects.filter(cluster=cluster).order_by("id").values_list("raw", flat=True))
    bound, pending = [], []
    rows = Pod.objects.filter(cluster=cluster).order_by("created", "id").values_list("raw", "node_name", "uid",
                                                                                      "queue")
    for i, (raw, node_name, uid, queue) in enumerate(rows.iterator(chunk_size=READ_CHUNK)):
        if i % READ_CHUNK == 0:
            progress(f"{i} pods read")
        spec = raw.get("spec") or {}
        if node_name and uid not in unbind:
            bound.append(dict(raw, spec=dict(spec, nodeName=node_name)))
        elif (gated or queue != Pod.GATED) and pending_uid in (None, uid):
            pending.append(dict(raw, spec={k: v for k, v in spec.items() if k != "nodeName"}))
    data["pods"], data["pending"] = bound, pending
    return scenario_from_data(data, label=f"cluster {cluster.name}",
                              progress=lambda done, total: progress(f"{done} of {total} nodes and pods parsed"))
