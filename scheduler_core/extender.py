"""HTTP scheduler extenders (kube-scheduler's extender.go): filter, prioritize, preempt and bind verbs."""
from __future__ import annotations

from .config.duration import SECOND, parse_duration
from .extender_http import DEFAULT_POLICY, ExtenderCanceled, ExtenderError, ExtenderPolicy, post
from .framework.status import Code, Status

MAX_EXTENDER_PRIORITY = 10
MAX_NODE_SCORE = 100
EXTENDER_NAME = "Extender"
DEFAULT_HTTP_TIMEOUT = 5.0

__all__ = ["HTTPExtender", "ExtenderError", "ExtenderCanceled", "ExtenderPolicy", "build_extenders"]


def _ci(d: dict, key: str):
    """Go's JSON decoder matches field names case-insensitively."""
    if not isinstance(d, dict):
        return None
    if key in d:
        return d[key]
    low = key.lower()
    for k, v in d.items():
        if k.lower() == low:
            return v
    return None


class HTTPExtender:
    """One configured extender. ``config`` is an Extender entry of KubeSchedulerConfiguration v1; ``policy``
    limits its calls (extender_http)."""

    def __init__(self, config: dict, policy: ExtenderPolicy = DEFAULT_POLICY):
        self.policy = policy
        self.url = config.get("urlPrefix", "")
        self.name = self.url
        self.filter_verb = config.get("filterVerb", "") or ""
        self.prioritize_verb = config.get("prioritizeVerb", "") or ""
        self.preempt_verb = config.get("preemptVerb", "") or ""
        self.bind_verb = config.get("bindVerb", "") or ""
        self.weight = int(config.get("weight", 0) or 0)
        self.node_cache_capable = bool(config.get("nodeCacheCapable", False))
        self.ignorable = bool(config.get("ignorable", False))
        timeout = config.get("httpTimeout") or 0
        if isinstance(timeout, str):
            timeout = parse_duration(timeout) / SECOND
        # NewHTTPExtender: 0 means 5 s; Go's http.Client takes a negative Timeout as none (kube validates neither)
        timeout = float(timeout) or DEFAULT_HTTP_TIMEOUT
        self.timeout = policy.timeout(timeout if timeout > 0 else None)
        self.managed_resources = {m.get("name") for m in config.get("managedResources") or []}
        if config.get("enableHTTPS") and self.url.startswith("http://"):
            self.url = "https://" + self.url[len("http://"):]

    def __repr__(self):
        return f"HTTPExtender({self.url})"

    # -- kube's Extender interface ---------------------------------------------------------------
    def is_interested(self, pod) -> bool:
        if not self.managed_resources:
            return True
        for c in pod.containers + pod.init_containers:
            if self.managed_resources & (set(c.requests) | set(c.limits)):
                return True
        return False

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def _args(self, pod, node_infos) -> dict:
        if self.node_cache_capable:
            return {"Pod": pod.raw, "Nodes": None, "NodeNames": [ni.name for ni in node_infos]}
        return {"Pod": pod.raw, "Nodes": {"metadata": {}, "items": [ni.node.raw for ni in node_infos]},
                "NodeNames": None}

    def verb_url(self, verb: str) -> str:
        return self.url.rstrip("/") + "/" + verb

    def call_urls(self) -> list:
        """(config field, URL) of what this extender calls: urlPrefix, then urlPrefix/verb for each verb set."""
        verbs = (("filterVerb", self.filter_verb), ("prioritizeVerb", self.prioritize_verb),
                 ("preemptVerb", self.preempt_verb), ("bindVerb", self.bind_verb))
        return [("urlPrefix", self.url)] + [(field, self.verb_url(v)) for field, v in verbs if v]

    def send(self, verb: str, args):
        return post(self.verb_url(verb), verb, args, self.timeout, self.policy)

    def _failures(self, nodes) -> dict:
        """A FailedNodesMap from the answer, the extender's texts cut to the policy's length."""
        if nodes is None:
            return {}
        if not isinstance(nodes, dict):
            raise ExtenderError(f"decoding filter response from extender at URL {self.url}: a FailedNodesMap is "
                                "not a JSON object")
        text = self.policy.text
        return {text(n): text(msg) for n, msg in nodes.items()}

    def ignores(self, err: ExtenderError) -> bool:
        """Whether the attempt goes on without this extender: ignorable, and not given up on by the caller."""
        return self.ignorable and not isinstance(err, ExtenderCanceled)

    def filter(self, pod, node_infos):
        """Returns (kept NodeInfos, failed {node: reason}, failed-and-unresolvable {node: reason})."""
        if not self.filter_verb:
            return list(node_infos), {}, {}
        result = self.send(self.filter_verb, self._args(pod, node_infos))
        if not isinstance(result, dict):
            raise ExtenderError(f"extender {self.url!r} returned a malformed filter result")
        err = _ci(result, "Error")
        if err:
            raise ExtenderError(self.policy.text(err))
        by_name = {ni.name: ni for ni in node_infos}
        names = _ci(result, "NodeNames")
        nodes = _ci(result, "Nodes")
        kept = []
        if self.node_cache_capable and names is not None:
            for n in names:
                if n not in by_name:
                    raise ExtenderError(f'extender "{self.url}" claims a filtered node "{self.policy.text(n)}" '
                                        "which is not found in the input node list")
                kept.append(by_name[n])
        elif nodes is not None:
            for item in _ci(nodes, "items") or []:
                n = ((item or {}).get("metadata") or {}).get("name")
                if n in by_name:
                    kept.append(by_name[n])
        failed = self._failures(_ci(result, "FailedNodes"))
        return kept, failed, self._failures(_ci(result, "FailedAndUnresolvableNodes"))

    def prioritize(self, pod, node_infos):
        """Returns ([(host, score)], weight)."""
        if not self.prioritize_verb:
            return [(ni.name, 0) for ni in node_infos], 0
        result = self.send(self.prioritize_verb, self._args(pod, node_infos))
        if not isinstance(result, list):
            raise ExtenderError(f"extender {self.url!r} returned a malformed prioritize result")
        return [(_ci(h, "Host"), int(_ci(h, "Score") or 0)) for h in result], self.weight

    def bind(self, pod, node_name: str):
        result = self.send(self.bind_verb, {"PodName": pod.name, "PodNamespace": pod.namespace,
                                            "PodUID": pod.uid, "Node": node_name})
        err = _ci(result, "Error") if isinstance(result, dict) else None
        if err:
            raise ExtenderError(self.policy.text(err))

    def process_preemption(self, pod, node_to_victims: dict):
        """ProcessPreemption: node -> (victim pods, numPDBViolations), filtered by the extender."""
        if not self.preempt_verb:
            return node_to_victims
        if self.node_cache_capable:
            args = {"Pod": pod.raw, "NodeNameToVictims": None, "NodeNameToMetaVictims": {
                n: {"Pods": [{"UID": p.uid} for p in v], "NumPDBViolations": k}
                for n, (v, k) in node_to_victims.items()}}
        else:
            args = {"Pod": pod.raw, "NodeNameToMetaVictims": None, "NodeNameToVictims": {
                n: {"Pods": [p.raw for p in v], "NumPDBViolations": k} for n, (v, k) in node_to_victims.items()}}
        result = self.send(self.preempt_verb, args)
        meta = _ci(result, "NodeNameToMetaVictims") or {}
        out = {}
        for node, mv in meta.items():
            if node not in node_to_victims:
                raise ExtenderError(f"node {node!r} in extender preemption result is not a candidate")
            uids = {(_ci(p, "UID") or "") for p in _ci(mv, "Pods") or []}
            victims = [p for p in node_to_victims[node][0] if p.uid in uids]
            out[node] = (victims, int(_ci(mv, "NumPDBViolations") or 0))
        return out

    # -- the scheduling cycle's use (schedule_one.py) --------------------------------------------
    def filter_into_trace(self, pod, feasible, tr):
        """findNodesThatPassExtenders for this extender: update statuses and the trace; return survivors."""
        if not self.is_interested(pod):
            tr.extender_filter.append({"extender": self.name, "skipped": "not interested"})
            return feasible
        try:
            kept, failed, unresolvable = self.filter(pod, feasible)
        except ExtenderError as err:
            if self.ignores(err):
                tr.extender_filter.append({"extender": self.name, "skipped": f"ignorable error: {err}"})
                return feasible
            tr.extender_filter.append({"extender": self.name, "error": str(err)})
            tr.error = str(err)
            return []
        statuses = tr.node_statuses  # kube's statuses from extenders name no plugin
        for node, msg in unresolvable.items():
            prev = statuses.get(node)
            reasons = (list(prev.reasons) if prev is not None else []) + [msg]
            statuses[node] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        for node, msg in failed.items():
            if node in unresolvable:
                continue
            prev = statuses.get(node)
            if prev is None:
                statuses[node] = Status(Code.UNSCHEDULABLE, msg)
            else:
                prev.reasons.append(msg)
        tr.extender_filter.append({"extender": self.name, "kept": [ni.name for ni in kept],
                                   "failed": failed, "unresolvable": unresolvable})
        if len(kept) != len(feasible) and EXTENDER_NAME not in tr.unschedulable_plugins:
            tr.unschedulable_plugins = sorted(set(tr.unschedulable_plugins) | {EXTENDER_NAME})
        return kept

    def prioritize_into_trace(self, pod, feasible, totals, tr):
        """Add score x weight x 10 per host to the totals; errors are ignored, as kube does (a canceled call
        fails the attempt: ``tr.error``)."""
        if not self.is_interested(pod):
            return
        try:
            hosts, weight = self.prioritize(pod, feasible)
        except ExtenderError as err:
            tr.extender_scores[self.name] = {"error": str(err)}
            if isinstance(err, ExtenderCanceled):
                tr.error = str(err)
            return
        index = {ni.name: i for i, ni in enumerate(feasible)}
        scores = {}
        for host, score in hosts:
            final = score * weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
            if host in index:
                totals[index[host]] += final
                scores[host] = scores.get(host, 0) + final
        tr.extender_scores[self.name] = scores


def build_extenders(configs, policy: ExtenderPolicy = DEFAULT_POLICY) -> list:
    """kube's buildExtenders order: non-ignorable extenders first, then ignorable ones."""
    exts = [HTTPExtender(c, policy) for c in configs or []]
    return [e for e in exts if not e.ignorable] + [e for e in exts if e.ignorable]
