"""Pod signature fragments (kube-scheduler/framework/signers.go, v1.36.2): the keys plugins sign a pod under and
the canonical forms of its parts (sorted, so that pods that differ only in order sign alike).

A plugin signs with ``sign_pod(pod) -> ([(key, value)], status)``; a status that is not success (the plugin's
reason, e.g. "pods with InterPodAffinity are not signable") means the pod has no signature.
"""
from __future__ import annotations

import json

from .status import Code, Status

IMAGE_NAMES = "v1.Pod.Spec.CanonicalImageNames()"
LABELS = "v1.Pod.Labels"
NODE_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS = "v1.Pod.Spec.HostPorts()"
RESOURCES = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
TOLERATIONS = "v1.Pod.Spec.Tolerations"
VOLUMES = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES = "v1.Pod.Spec.RequiredFeatures()"


def unsignable(reason: str):
    """A SignPod result that leaves the pod without a signature."""
    return [], Status(Code.UNSCHEDULABLE, reason)


def _spec(pod) -> dict:
    return pod.raw.get("spec") or {}


def _containers(pod) -> list:
    spec = _spec(pod)
    return list(spec.get("containers") or ()) + list(spec.get("initContainers") or ())


def _dump(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def host_ports(pod) -> list:
    """HostPortsSigner: the containers' and init containers' host ports, sorted, each once."""
    return sorted({p.get("hostPort") for c in _containers(pod) for p in c.get("ports") or () if p.get("hostPort")})


def _requirements(reqs) -> list:
    out = []
    for r in reqs or ():
        r = dict(r)
        if r.get("values"):
            r["values"] = sorted(r["values"])
        else:
            r.pop("values", None)
        out.append(_dump(r))
    return sorted(out)


def _term(term: dict) -> dict:
    return {"MatchExpressions": _requirements(term.get("matchExpressions")),
            "MatchFields": _requirements(term.get("matchFields"))}


def node_affinity(pod):
    """NodeAffinitySigner: the required terms and the preferred ones, each canonical and sorted; None without a
    nodeAffinity."""
    na = (_spec(pod).get("affinity") or {}).get("nodeAffinity")
    if na is None:
        return None
    required = (na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or ()
    preferred = na.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    return {"Required": sorted(_dump(_term(t or {})) for t in required),
            "Preferred": sorted(_dump({"Weight": p.get("weight", 0), "Preference": _term(p.get("preference") or {})})
                                for p in preferred)}


def node_selector(pod):
    return _spec(pod).get("nodeSelector")


def tolerations(pod) -> list:
    """TolerationsSigner: the tolerations ordered by key, then value."""
    return sorted(_spec(pod).get("tolerations") or (), key=lambda t: (t.get("key") or "", t.get("value") or ""))


def volumes(pod) -> list:
    """VolumesSigner: the volume sources other than configMap and secret, canonical and sorted."""
    out = []
    for vol in _spec(pod).get("volumes") or ():
        if "configMap" in vol or "secret" in vol:
            continue
        out.append(_dump({k: v for k, v in vol.items() if k != "name"}))
    return sorted(out)
