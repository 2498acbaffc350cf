"""Builders for the translated kube test tables: kube's st.MakePod()/st.MakeNode() wrappers over raw API dicts,
and a snapshot/handle from nodes, pods and cluster objects.

A builder fills the same fields as its kube namesake; ``obj()`` parses the dict into scheduler_core's object.
"""
from __future__ import annotations

import copy

from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.snapshot import ClusterObjects, Snapshot
from scheduler_core.framework.status import Code
from scheduler_core.objects import Node, Pod

SUCCESS = (Code.SUCCESS, [])
_unnamed = [0]


def status_tuple(status) -> tuple:
    """(code, reasons) of a status; None is Success."""
    return SUCCESS if status is None else (status.code, list(status.reasons))


def _selector(sel):
    """A label selector given as a dict (raw), or as {key: value} shorthand via ``labels_selector``."""
    return copy.deepcopy(sel)


def labels_selector(**labels) -> dict:
    return {"matchLabels": dict(labels)}


def exists_selector(*keys) -> dict:
    """metav1.LabelSelector with one Exists requirement per key (st.MakeLabelSelector().Exists(k))."""
    return {"matchExpressions": [{"key": k, "operator": "Exists"} for k in keys]}


def expr_selector(*exprs) -> dict:
    """exprs: (key, operator, values)."""
    return {"matchExpressions": [{"key": k, "operator": op, **({"values": list(v)} if v is not None else {})}
                                 for k, op, v in exprs]}


class PodWrapper:
    """st.MakePod(): a v1.Pod under construction."""

    def __init__(self):
        self.raw = {"metadata": {}, "spec": {"containers": []}, "status": {}}

    @property
    def _meta(self):
        return self.raw["metadata"]

    @property
    def _spec(self):
        return self.raw["spec"]

    def name(self, n):
        self._meta["name"] = n
        return self

    def namespace(self, ns):
        self._meta["namespace"] = ns
        return self

    def uid(self, u):
        self._meta["uid"] = u
        return self

    def node(self, n):
        self._spec["nodeName"] = n
        return self

    def label(self, k, v):
        self._meta.setdefault("labels", {})[k] = v
        return self

    def labels(self, d):
        for k, v in d.items():
            self.label(k, v)
        return self

    def priority(self, p):
        self._spec["priority"] = p
        return self

    def preemption_policy(self, p):
        self._spec["preemptionPolicy"] = p
        return self

    def terminating(self):
        self._meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        return self

    def start_time(self, t):
        self.raw["status"]["startTime"] = t
        return self

    def nominated_node_name(self, n):
        self.raw["status"]["nominatedNodeName"] = n
        return self

    def condition(self, ctype, status, reason=""):
        self.raw["status"].setdefault("conditions", []).append({"type": ctype, "status": status, "reason": reason})
        return self

    def owner_reference(self, name, kind, api_version="apps/v1"):
        """A controlling owner (st.OwnerReference sets controller: true)."""
        self._meta.setdefault("ownerReferences", []).append(
            {"apiVersion": api_version, "kind": kind, "name": name, "uid": name, "controller": True})
        return self

    def container(self, image):
        self._spec["containers"].append({"name": f"c{len(self._spec['containers'])}", "image": image})
        return self

    def init_container(self, image):
        inits = self._spec.setdefault("initContainers", [])
        inits.append({"name": f"i{len(inits)}", "image": image})
        return self

    def req(self, requests: dict):
        """A container with these requests (st.Req)."""
        self._spec["containers"].append({"name": f"c{len(self._spec['containers'])}",
                                         "resources": {"requests": dict(requests)}})
        return self

    def node_selector(self, d):
        self._spec["nodeSelector"] = dict(d)
        return self

    def toleration(self, key, effect="", operator="Exists", value=""):
        t = {"key": key, "operator": operator}
        if effect:
            t["effect"] = effect
        if value:
            t["value"] = value
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def _node_affinity_required(self):
        na = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        return na.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})

    def node_affinity_in(self, key, values):
        terms = self._node_affinity_required()["nodeSelectorTerms"]
        if not terms:
            terms.append({"matchExpressions": []})
        terms[0]["matchExpressions"].append({"key": key, "operator": "In", "values": list(values)})
        return self

    def node_affinity_not_in(self, key, values):
        terms = self._node_affinity_required()["nodeSelectorTerms"]
        if not terms:
            terms.append({"matchExpressions": []})
        terms[0]["matchExpressions"].append({"key": key, "operator": "NotIn", "values": list(values)})
        return self

    def spread_constraint(self, max_skew, topology_key, when, selector, min_domains=None,
                          node_affinity_policy=None, node_taints_policy=None, match_label_keys=None):
        c = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = _selector(selector)
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = list(match_label_keys)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def _required_terms(self, kind: str):
        section = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        return section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", [])

    def pod_affinity(self, topology_key, selector, namespaces=None, kind="podAffinity", namespace_selector=None):
        """A required (anti-)affinity term (kind: podAffinity / podAntiAffinity)."""
        term = {"topologyKey": topology_key, "labelSelector": _selector(selector)}
        if namespaces is not None:
            term["namespaces"] = list(namespaces)
        if namespace_selector is not None:
            term["namespaceSelector"] = _selector(namespace_selector)
        self._required_terms(kind).append(term)
        return self

    def pod_anti_affinity(self, topology_key, selector, namespaces=None, namespace_selector=None):
        return self.pod_affinity(topology_key, selector, namespaces, "podAntiAffinity", namespace_selector)

    def pod_affinity_exists(self, label_key, topology_key, kind="podAffinity"):
        return self.pod_affinity(topology_key, exists_selector(label_key), kind=kind)

    def pod_anti_affinity_exists(self, label_key, topology_key):
        return self.pod_affinity_exists(label_key, topology_key, "podAntiAffinity")

    def pod_affinity_in(self, label_key, topology_key, values, kind="podAffinity"):
        return self.pod_affinity(topology_key, expr_selector((label_key, "In", values)), kind=kind)

    def pod_anti_affinity_in(self, label_key, topology_key, values):
        return self.pod_affinity_in(label_key, topology_key, values, "podAntiAffinity")

    def affinity(self, raw: dict):
        """A whole v1.Affinity."""
        self._spec["affinity"] = copy.deepcopy(raw)
        return self

    def volume(self, v: dict):
        self._spec.setdefault("volumes", []).append(copy.deepcopy(v))
        return self

    def pvc(self, claim, name=None):
        return self.volume({"name": name or claim, "persistentVolumeClaim": {"claimName": claim}})

    def obj(self) -> Pod:
        """The Pod; an unnamed one (kube tests leave names empty) is named "unnamed-<n>" (names are required here)."""
        raw = copy.deepcopy(self.raw)
        if not raw["metadata"].get("name"):
            _unnamed[0] += 1
            raw["metadata"]["name"] = f"unnamed-{_unnamed[0]}"
        return Pod(raw)


class NodeWrapper:
    """st.MakeNode(): a v1.Node under construction."""

    def __init__(self):
        self.raw = {"metadata": {"name": ""}, "spec": {}, "status": {}}

    def name(self, n):
        self.raw["metadata"]["name"] = n
        return self

    def label(self, k, v):
        self.raw["metadata"].setdefault("labels", {})[k] = v
        return self

    def labels(self, d):
        for k, v in d.items():
            self.label(k, v)
        return self

    def capacity(self, resources: dict):
        """Capacity and allocatable (st.Capacity sets both, with 32 pods unless given)."""
        res = {"pods": "32", **resources}
        self.raw["status"]["capacity"] = dict(res)
        self.raw["status"]["allocatable"] = dict(res)
        return self

    def taints(self, taints):
        self.raw["spec"]["taints"] = [dict(t) for t in taints]
        return self

    def unschedulable(self, u=True):
        self.raw["spec"]["unschedulable"] = u
        return self

    def obj(self) -> Node:
        """The Node; an unnamed one is named "unnamed-node" (names are required here)."""
        raw = copy.deepcopy(self.raw)
        raw["metadata"]["name"] = raw["metadata"]["name"] or "unnamed-node"
        return Node(raw)


def make_pod() -> PodWrapper:
    return PodWrapper()


def make_node() -> NodeWrapper:
    return NodeWrapper()


def snapshot(nodes=(), pods=(), **objects) -> Snapshot:
    """A snapshot of these nodes with the pods bound to them (pods on unknown nodes are left out, as in kube's
    cache.NewSnapshot), and ClusterObjects(**objects)."""
    infos = [NodeInfo(n) for n in nodes]
    by_name = {ni.name: ni for ni in infos}
    for p in pods:
        ni = by_name.get(p.node_name)
        if ni is not None:
            ni.add_pod(p)
    return Snapshot(infos, ClusterObjects(**objects))


def handle(nodes=(), pods=(), **objects) -> Handle:
    return Handle(snapshot=snapshot(nodes, pods, **objects))


def node_info(node=None, pods=()) -> NodeInfo:
    """framework.NewNodeInfo(pods...) with SetNode(node)."""
    ni = NodeInfo(node)
    for p in pods:
        ni.add_pod(p)
    return ni


def new_state() -> CycleState:
    return CycleState()
