"""The ReplicaSet controller's status of a simulated cluster's ReplicaSets (kube-controller-manager's
pkg/controller/replicaset, ``calculateStatus``), kept by the cluster's scheduler loop (``runner``).

A ReplicaSet's pods are those whose controller ownerReference names its uid and whose labels its selector matches
(``FilterPodsByOwner`` and ``claimPods``); the active ones (not terminal, not being deleted) are its
``replicas``, those its template's labels match too its ``fullyLabeledReplicas``, the Ready ones its
``readyReplicas`` and ``availableReplicas`` (minReadySeconds counted from the Ready condition's
lastTransitionTime), and with DeploymentReplicaSetTerminatingReplicas (1.36) the ones being deleted its
``terminatingReplicas``. A bound pod is Ready when its status says so or when the cluster's simulated kubelet runs
it (it reports Ready at once, ``objectstore.running_status``).

No pod is created or deleted to reach ``spec.replicas``: the simulated clusters run no controller that makes
pods (``kubectl get rs`` then shows DESIRED apart from CURRENT). The workload generator scales the ReplicaSets it
made itself, to the pods it keeps (``workload``).
"""
from __future__ import annotations

import datetime

from scheduler_core.objects import ParseError
from scheduler_core.objects.selectors import LabelSelector

from .objectstore import key_of


def controller_uid(pod) -> str:
    """The uid of the pod's controller (its ownerReference with controller: true), or ""."""
    for ref in pod.owner_references:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref.get("uid") or ""
    return ""


def _ready_since(pod, kubelet: bool):
    """When the pod became Ready (a timestamp; 0.0 when unknown), or None when it is not Ready."""
    for c in pod.conditions:
        if isinstance(c, dict) and c.get("type") == "Ready":
            if c.get("status") != "True":
                return None
            try:
                return datetime.datetime.fromisoformat(
                    (c.get("lastTransitionTime") or "").replace("Z", "+00:00")).timestamp()
            except ValueError:
                return 0.0
    return 0.0 if kubelet and pod.node_name else None


def status(rs: dict, pods, kubelet: bool, terminating_replicas: bool, now: float) -> dict | None:
    """calculateStatus: the ReplicaSet's status from ``pods`` (those whose controller is ``rs``, any order); None
    for a ReplicaSet whose selector does not convert (syncReplicaSet leaves it as it is)."""
    spec = rs.get("spec") if isinstance(rs.get("spec"), dict) else {}
    try:
        selector = LabelSelector(spec.get("selector"))
    except ParseError:
        return None
    if selector.parse_error:
        return None
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    template_labels = (template.get("metadata") or {}).get("labels") or {}
    try:
        min_ready = int(spec.get("minReadySeconds") or 0)
    except (TypeError, ValueError):
        min_ready = 0
    active = labeled = ready = available = terminating = 0
    for pod in pods:
        if not selector.matches(pod.labels):
            continue   # claimPods releases an owned pod its selector no longer matches
        if pod.deletion_timestamp:
            terminating += 1
            continue
        if pod.phase in ("Succeeded", "Failed"):
            continue
        active += 1
        labeled += all(pod.labels.get(k) == v for k, v in template_labels.items())
        since = _ready_since(pod, kubelet)
        if since is not None:
            ready += 1
            available += min_ready == 0 or since + min_ready <= now
    out = {k: v for k, v in (rs.get("status") or {}).items()
           if k not in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                        "terminatingReplicas", "observedGeneration")}
    out.update(replicas=active, fullyLabeledReplicas=labeled, readyReplicas=ready, availableReplicas=available)
    if terminating_replicas:
        out["terminatingReplicas"] = terminating
    generation = (rs.get("metadata") or {}).get("generation")
    if generation:
        out["observedGeneration"] = generation
    return out


def synced(replica_sets, pods, kubelet: bool, terminating_replicas: bool, now: float, scaled=()) -> list:
    """The ReplicaSets whose status (and, for those of ``scaled``, namespace/name keys, spec.replicas: their
    active pods) is not what their pods make it, each as it is to be written."""
    owned = {}
    for pod in pods:
        uid = controller_uid(pod)
        if uid:
            owned.setdefault(uid, []).append(pod)
    changed = []
    for rs in replica_sets:
        meta = rs.get("metadata") or {}
        counted = status(rs, owned.get(meta.get("uid"), ()), kubelet, terminating_replicas, now)
        if counted is None:
            continue
        new = dict(rs, status=counted)
        if key_of("ReplicaSet", rs) in scaled and (rs.get("spec") or {}).get("replicas") != counted["replicas"]:
            new["spec"] = dict(rs.get("spec") or {}, replicas=counted["replicas"])
        if new != rs:
            changed.append(new)
    return changed
