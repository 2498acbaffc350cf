"""meta.k8s.io/v1 Table responses (server-side printing for ``kubectl get``), with kube's printer columns."""
from __future__ import annotations

import datetime

NONE = "<none>"


def parse_time(text):
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _age(ts, now: float) -> str:
    t = parse_time(ts)
    return "<unknown>" if t is None else human_duration(now - t)


def _col(name, type_="string", priority=0, fmt="", description=""):
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


def _meta(o):
    return o.get("metadata") or {}


def _pod_row(o, now):
    spec, status = o.get("spec") or {}, o.get("status") or {}
    containers = spec.get("containers") or []
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    reason = status.get("reason") or status.get("phase") or ""
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    for c in statuses:
        state = c.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
    if _meta(o).get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [_meta(o).get("name", ""), f"{ready}/{len(containers)}", reason, str(restarts),
            _age(_meta(o).get("creationTimestamp"), now), status.get("podIP") or NONE, spec.get("nodeName") or NONE,
            status.get("nominatedNodeName") or NONE, f"0/{len(gates)}" if gates else NONE]


def _node_row(o, now):
    spec, status = o.get("spec") or {}, o.get("status") or {}
    conds = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    ready = conds.get("Ready")
    text = "Ready" if ready == "True" else "NotReady" if ready == "False" else "Unknown"
    if spec.get("unschedulable"):
        text += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (_meta(o).get("labels") or {})
                   if k.startswith("node-role.kubernetes.io/") and k.split("/", 1)[1])
    info = status.get("nodeInfo") or {}
    addrs = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    return [_meta(o).get("name", ""), text, ",".join(roles) or NONE, _age(_meta(o).get("creationTimestamp"), now),
            info.get("kubeletVersion", ""), addrs.get("InternalIP") or NONE, addrs.get("ExternalIP") or NONE,
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


def _event_row(o, now):
    """Core v1 shape (events.k8s.io events are converted before printing)."""
    inv = o.get("involvedObject") or {}
    series = o.get("series") or {}
    last = series.get("lastObservedTime") or o.get("lastTimestamp") or o.get("eventTime")
    first = o.get("firstTimestamp") or o.get("eventTime")
    count = series.get("count") or o.get("count") or 1
    src = o.get("source") or {}
    source = src.get("component") or o.get("reportingComponent") or ""
    if src.get("host"):
        source += f", {src['host']}"
    return [_age(last, now), o.get("type", ""), o.get("reason", ""),
            f"{(inv.get('kind') or '').lower()}/{inv.get('name', '')}", inv.get("fieldPath", ""), source,
            (o.get("message") or "").strip(), _age(first, now), str(count), _meta(o).get("name", "")]


def _ns_row(o, now):
    return [_meta(o).get("name", ""), (o.get("status") or {}).get("phase", "Active"),
            _age(_meta(o).get("creationTimestamp"), now)]


def _lease_row(o, now):
    return [_meta(o).get("name", ""), (o.get("spec") or {}).get("holderIdentity") or NONE,
            _age(_meta(o).get("creationTimestamp"), now)]


def _modes(spec):
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
    return ",".join(short.get(m, m) for m in spec.get("accessModes") or [])


def _pv_row(o, now):
    spec, status = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("claimRef") or {}
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    return [_meta(o).get("name", ""), (spec.get("capacity") or {}).get("storage", ""), _modes(spec),
            spec.get("persistentVolumeReclaimPolicy", ""), status.get("phase", ""), claim,
            spec.get("storageClassName", ""), spec.get("volumeAttributesClassName") or NONE, status.get("reason", ""),
            _age(_meta(o).get("creationTimestamp"), now), spec.get("volumeMode", "Filesystem")]


def _pvc_row(o, now):
    spec, status = o.get("spec") or {}, o.get("status") or {}
    bound = status.get("phase") == "Bound"
    return [_meta(o).get("name", ""), status.get("phase", ""), spec.get("volumeName", ""),
            (status.get("capacity") or {}).get("storage", "") if bound else "", _modes(status) if bound else "",
            spec.get("storageClassName") or "", spec.get("volumeAttributesClassName") or NONE,
            _age(_meta(o).get("creationTimestamp"), now), spec.get("volumeMode", "Filesystem")]


def _sc_row(o, now):
    ann = _meta(o).get("annotations") or {}
    name = _meta(o).get("name", "")
    if ann.get("storageclass.kubernetes.io/is-default-class") == "true":
        name += " (default)"
    return [name, o.get("provisioner", ""), o.get("reclaimPolicy", "Delete"),
            o.get("volumeBindingMode", "Immediate"), str(bool(o.get("allowVolumeExpansion"))).lower(),
            _age(_meta(o).get("creationTimestamp"), now)]


def _pdb_row(o, now):
    spec, status = o.get("spec") or {}, o.get("status") or {}
    return [_meta(o).get("name", ""), str(spec["minAvailable"]) if "minAvailable" in spec else "N/A",
            str(spec["maxUnavailable"]) if "maxUnavailable" in spec else "N/A",
            str(status.get("disruptionsAllowed", 0)), _age(_meta(o).get("creationTimestamp"), now)]


def format_label_selector(sel) -> str:
    """metav1.FormatLabelSelector: the selector's requirements by key ("<none>" when it has none)."""
    if not isinstance(sel, dict):
        return NONE
    reqs = [(k, f"{k}={v}") for k, v in (sel.get("matchLabels") or {}).items()]
    for e in sel.get("matchExpressions") or ():
        key, op, values = e.get("key", ""), e.get("operator", ""), sorted(e.get("values") or ())
        text = {"In": f"{key} in ({','.join(values)})", "NotIn": f"{key} notin ({','.join(values)})",
                "Exists": key, "DoesNotExist": f"!{key}"}.get(op, "")
        reqs.append((key, text))
    return ",".join(t for _k, t in sorted(reqs, key=lambda r: r[0])) or NONE


def _rs_row(o, now):
    """printReplicaSet: desired (spec.replicas, 1 when unset), current and ready replicas; wide: the template's
    containers and images, the selector."""
    spec, status = o.get("spec") or {}, o.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [_meta(o).get("name", ""), int(spec.get("replicas", 1)), int(status.get("replicas") or 0),
            int(status.get("readyReplicas") or 0), _age(_meta(o).get("creationTimestamp"), now),
            ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers),
            format_label_selector(spec.get("selector"))]


def _pc_row(o, now):
    return [_meta(o).get("name", ""), str(o.get("value", 0)), str(bool(o.get("globalDefault"))).lower(),
            _age(_meta(o).get("creationTimestamp"), now), o.get("preemptionPolicy", "PreemptLowerPriority")]


def _claim_state(o) -> str:
    """printers.go resourceClaimState: deleted, pending, allocated, reserved."""
    states, status = [], o.get("status") or {}
    deleted = bool(_meta(o).get("deletionTimestamp"))
    if deleted:
        states.append("deleted")
    if not status.get("allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _claim_row(o, now):
    return [_meta(o).get("name", ""), _claim_state(o), _age(_meta(o).get("creationTimestamp"), now)]


def _slice_row(o, now):
    spec = o.get("spec") or {}
    return [_meta(o).get("name", ""), spec.get("nodeName") or "", spec.get("driver", ""),
            (spec.get("pool") or {}).get("name", ""), _age(_meta(o).get("creationTimestamp"), now)]


def _default_row(o, now):
    return [_meta(o).get("name", ""), _age(_meta(o).get("creationTimestamp"), now)]


NAME = _col("Name", fmt="name", description="Name must be unique within a namespace.")
AGE = _col("Age", description="CreationTimestamp is a timestamp representing the server time when this object "
                              "was created.")
PRINTERS = {
    "Pod": ([NAME, _col("Ready"), _col("Status"), _col("Restarts"), AGE, _col("IP", priority=1),
             _col("Node", priority=1), _col("Nominated Node", priority=1), _col("Readiness Gates", priority=1)],
            _pod_row),
    "Node": ([NAME, _col("Status"), _col("Roles"), AGE, _col("Version"), _col("Internal-IP", priority=1),
              _col("External-IP", priority=1), _col("OS-Image", priority=1), _col("Kernel-Version", priority=1),
              _col("Container-Runtime", priority=1)], _node_row),
    "Event": ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Subobject", priority=1),
               _col("Source", priority=1), _col("Message"), _col("First Seen", priority=1),
               _col("Count", priority=1), _col("Name", priority=1)], _event_row),
    "Namespace": ([NAME, _col("Status"), AGE], _ns_row),
    "Lease": ([NAME, _col("Holder"), AGE], _lease_row),
    "PersistentVolume": ([NAME, _col("Capacity"), _col("Access Modes"), _col("Reclaim Policy"), _col("Status"),
                          _col("Claim"), _col("StorageClass"), _col("VolumeAttributesClass"), _col("Reason"), AGE,
                          _col("VolumeMode", priority=1)], _pv_row),
    "PersistentVolumeClaim": ([NAME, _col("Status"), _col("Volume"), _col("Capacity"), _col("Access Modes"),
                               _col("StorageClass"), _col("VolumeAttributesClass"), AGE,
                               _col("VolumeMode", priority=1)], _pvc_row),
    "StorageClass": ([NAME, _col("Provisioner"), _col("ReclaimPolicy"), _col("VolumeBindingMode"),
                      _col("AllowVolumeExpansion"), AGE], _sc_row),
    "PodDisruptionBudget": ([NAME, _col("Min Available"), _col("Max Unavailable"), _col("Allowed Disruptions"), AGE],
                            _pdb_row),
    "ReplicaSet": ([NAME, _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"), AGE,
                    _col("Containers", priority=1), _col("Images", priority=1), _col("Selector", priority=1)],
                   _rs_row),
    "PriorityClass": ([NAME, _col("Value", "integer"), _col("Global-Default", "boolean"), AGE,
                       _col("PreemptionPolicy")], _pc_row),
    "ResourceClaim": ([NAME, _col("State", description="A summary of the current state (allocated, pending, "
                                                       "reserved, etc.)."), AGE], _claim_row),
    "ResourceSlice": ([NAME, _col("Node"), _col("Driver"), _col("Pool"), AGE], _slice_row),
}
DEFAULT_PRINTER = ([NAME, AGE], _default_row)


def partial_metadata(obj: dict) -> dict:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": _meta(obj)}


def table(kind: str, objects, now: float, include_object: str = "Metadata", resource_version: str = "",
          continue_token: str = "", headers: bool = True) -> dict:
    """A Table of ``objects`` (already in the served version's shape; events in core v1 shape for the cells)."""
    columns, row_fn = PRINTERS.get(kind, DEFAULT_PRINTER)
    rows = []
    for served, printed in objects:
        row = {"cells": row_fn(printed, now)}
        if include_object == "Object":
            row["object"] = served
        elif include_object != "None":
            row["object"] = partial_metadata(served)
        rows.append(row)
    meta = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    out = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    if headers:
        out["columnDefinitions"] = columns
    out["rows"] = rows
    return out
