"""CycleTrace: everything one scheduling attempt decided, plugin by plugin, and the TraceSink protocol."""
from __future__ import annotations

import json

from .framework.status import Code, Status


def _status_dict(st, with_plugin=False):
    if st is None:
        return {"code": "Success", "reasons": []}
    return st.to_dict(with_plugin=with_plugin)


def _ints(values) -> list:
    """A list of Python ints from a list or a NumPy array."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


class CycleTrace:
    """The record of one scheduling cycle (one pod, one attempt)."""

    def __init__(self, pod, profile: str, cycle: int = 0, attempt: int = 1):
        self.pod = pod
        self.profile = profile
        self.cycle = cycle
        self.attempt = attempt
        self.started_at = 0.0
        self.num_all_nodes = 0
        self.prefilter_plugins = {}      # name -> (node-name set or None, status, seconds)
        self.prefilter_status = None
        self.prefilter_result = None
        self.skip_filter_plugins = []
        self.filter = {}                 # node -> {plugin: status}   (trace mode)
        self.filter_table = None         # FilterTable: the same as columns over NodeTable rows (trace mode)
        self.node_statuses = {}          # node -> framework status of every rejected node
        self.evaluated_nodes = []        # node names in the order the filter visited them
        self.kube_stopped_at = {}        # node -> plugin kube's short-circuit stopped at
        self.feasible = []
        self.prescore_skip_plugins = []
        self._scores = {}                # plugin -> (weight, {node: (raw, normalized)})   (see scores)
        self._totals = {}                # node -> total
        self._score_arrays = None        # (names, {plugin: (weight, raw, normalized)}, totals) until read
        self.extender_scores = {}        # extender -> {node: score}
        self.extender_filter = []        # [(extender name, {node: reason or None}, skipped_reason)]
        self.scoring_run_by_scheduler = False
        self.top_nodes = []
        self.chosen = None
        self.unschedulable = False
        self.error = None
        self.message = ""
        self.unschedulable_plugins = []
        self.pending_plugins = []
        self.preemption = None
        self.reserve_status = None
        self.gated = None                # the PreEnqueue status that kept the pod out of the queue
        self.durations = {}              # extension point or plugin -> seconds
        self.pre_filter_msg = ""
        self.post_filter_msg = ""
        self.post_filter_result = None   # PostFilterResult (its nominated node), when PostFilter ran
        self.num_nodes = -1              # nodes the Filter search ran over (-1: nominated-node fast path)
        self.num_to_find = 0             # numFeasibleNodesToFind for that search
        self.start_index = -1            # nextStartNodeIndex when the search began
        self.processed_nodes = -1        # how far the start index advanced
        self.node_hint = ""              # OpportunisticBatching's hint (the next node of the last cycle's order)
        # Filled by the scheduling loop (scheduler.py):
        self.status_code = ""            # failure code of the attempt (Unschedulable, Error, ...); "" if bound
        self.nominated_node = None       # node the failure handler nominated (from PostFilter)
        self.nominated_node_before = ""  # status.nominatedNodeName when the attempt started
        self.victims = []                # pods deleted (preempted) by the attempt (at 1.36 right after it)
        self.permit_wait = {}            # Permit plugins that made the pod wait: {plugin: timeout seconds}
        self.pod_group = None            # a pod-group cycle's: {name, placement, placement_scores, status}
        self.bind_error = None           # why the binding cycle failed

    # -- scores: kept as the runtime's lists or arrays, turned into per-node dicts when first read ------
    def set_scores(self, names, per_plugin: dict, totals) -> None:
        """Record the Score phase: names of the scored nodes, {plugin: (weight, raw, normalized)} and the
        totals, each a list or an int64 array in the order of ``names``."""
        self._score_arrays = (names, per_plugin, totals)

    def _materialize_scores(self):
        names, per_plugin, totals = self._score_arrays
        self._scores = {plugin: (weight, dict(zip(names, zip(_ints(raw), _ints(normalized)))))
                        for plugin, (weight, raw, normalized) in per_plugin.items()}
        self._totals = dict(zip(names, _ints(totals)))
        # Cleared last: a reader on another thread (the recorder) that finds no arrays finds the dicts.
        self._score_arrays = None

    @property
    def scores(self) -> dict:
        """{plugin: (weight, {node: (raw, normalized)})}."""
        if self._score_arrays is not None:
            self._materialize_scores()
        return self._scores

    @scores.setter
    def scores(self, value):
        self._score_arrays = None
        self._scores = value

    @property
    def totals(self) -> dict:
        """{node: total score}."""
        if self._score_arrays is not None:
            self._materialize_scores()
        return self._totals

    @totals.setter
    def totals(self, value):
        if self._score_arrays is not None:
            self._materialize_scores()
        self._totals = value

    @property
    def result(self) -> str:
        if self.status_code:  # the loop failed the attempt (also after choosing a node: Reserve, Permit, bind)
            return "error" if self.status_code == "Error" else "unschedulable"
        if self.chosen:
            return "scheduled"
        if self.error:
            return "error"
        return "unschedulable"

    def failure_histogram(self) -> dict:
        """{reason: count} over the nodes' framework statuses."""
        hist = {}
        for st in self.node_statuses.values():
            for r in st.reasons:
                hist[r] = hist.get(r, 0) + 1
        return hist

    def failing_plugins(self) -> dict:
        """{plugin: number of nodes it rejected (as kube's short-circuit reports)}."""
        out = {}
        for st in self.node_statuses.values():
            if st.plugin:
                out[st.plugin] = out.get(st.plugin, 0) + 1
        return out

    def prefilter_dict(self) -> dict:
        """The PreFilter phase: per-plugin results, the framework status, the result and skipped plugins."""
        return {
            "plugins": {name: {"code": str(Code.SUCCESS if st is None else st.code),
                               "reasons": [] if st is None else list(st.reasons),
                               "skip": st is not None and st.code == Code.SKIP,
                               "node_names": sorted(res) if res is not None else None}
                        for name, (res, st, _t) in sorted(self.prefilter_plugins.items())},
            "framework": _status_dict(self.prefilter_status, with_plugin=True),
            "result_node_names": sorted(self.prefilter_result) if self.prefilter_result is not None else None,
            "skip_filter_plugins": sorted(self.skip_filter_plugins),
        }

    def to_golden(self) -> dict:
        """The decision in the schema of ../shared/golden expected files."""
        pod = self.pod
        d = {"pod": pod.key, "priority": pod.priority}
        if self.profile != "default-scheduler" or getattr(self, "_multi_profile", False):
            d["profile"] = self.profile
        d["prefilter"] = self.prefilter_dict()
        d["filter"] = {node: {pl: _status_dict(st) for pl, st in plugins.items()}
                       for node, plugins in self.filter.items()}
        nodes = list(self.filter) + [n for n in self.evaluated_nodes if n not in self.filter]
        nodes += [n for n in self.node_statuses if n not in self.filter]
        d["filter_framework"] = {node: _status_dict(self.node_statuses.get(node), with_plugin=True)
                                 for node in dict.fromkeys(nodes)}
        d["feasible_nodes"] = sorted(self.feasible)
        d["prescore_skip_plugins"] = sorted(self.prescore_skip_plugins)
        scores = {}
        for plugin, (weight, per_node) in self.scores.items():
            for node, (raw, norm) in per_node.items():
                scores.setdefault(node, {})[plugin] = {"raw": raw, "normalized": norm, "weight": weight,
                                                       "weighted": norm * weight}
        for node, total in self.totals.items():
            scores.setdefault(node, {})["_total"] = total
        d["scores"] = scores
        d["scoring_run_by_scheduler"] = self.scoring_run_by_scheduler
        d["top_nodes"] = sorted(self.top_nodes)
        d["bound_node"] = self.chosen
        d["unschedulable"] = self.unschedulable
        d["message"] = self.message
        d["unschedulable_plugins"] = sorted(self.unschedulable_plugins)
        if pod.node_name:
            d["preset_node_name"] = True
        if self.preemption is not None:
            d["preemption"] = self.preemption
        if self.reserve_status is not None:
            d["reserve"] = _status_dict(self.reserve_status, with_plugin=True)
        if self.error:
            d["error"] = self.error
        if self.gated is not None:
            d["gated"] = {"plugin": self.gated.plugin, "message": self.gated.message()}
        return d

    def durations_ms(self) -> dict:
        """The durations in milliseconds, rounded to 4 decimals."""
        return {k: round(v * 1000, 4) for k, v in self.durations.items()}

    def to_dict(self) -> dict:
        """A full JSON-able record (golden fields plus timing, cycle and extender data)."""
        d = self.to_golden()
        d.update({"uid": self.pod.uid, "profile": self.profile, "cycle": self.cycle, "attempt": self.attempt,
                  "started_at": self.started_at, "num_all_nodes": self.num_all_nodes, "result": self.result,
                  "durations_ms": self.durations_ms(),
                  "evaluated_nodes": list(self.evaluated_nodes),
                  "extender_filter": self.extender_filter, "extender_scores": self.extender_scores,
                  "search": {"num_nodes": self.num_nodes, "num_to_find": self.num_to_find,
                             "start_index": self.start_index, "processed_nodes": self.processed_nodes,
                             "node_hint": self.node_hint},
                  "status_code": self.status_code, "nominated_node": self.nominated_node,
                  "nominated_node_before": self.nominated_node_before, "victims": list(self.victims),
                  "permit_wait": dict(self.permit_wait), "bind_error": self.bind_error})
        if self.pod_group is not None:
            d["pod_group"] = dict(self.pod_group)
        return d


class TraceSink:
    """Receives every CycleTrace. Implementations must not block the scheduling loop."""

    def emit(self, trace: CycleTrace) -> None:
        pass

    def close(self) -> None:
        pass


class JsonLinesSink(TraceSink):
    """Writes one JSON object per cycle to a file."""

    def __init__(self, path: str):
        self._f = open(path, "w", encoding="utf-8")

    def emit(self, trace):
        self._f.write(json.dumps(trace.to_dict(), sort_keys=True) + "\n")

    def close(self):
        self._f.close()


class CallbackSink(TraceSink):
    def __init__(self, fn):
        self.fn = fn

    def emit(self, trace):
        self.fn(trace)


__all__ = ["CycleTrace", "TraceSink", "JsonLinesSink", "CallbackSink", "Status"]
