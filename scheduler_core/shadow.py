"""Shadow mode: a read-only second opinion on another scheduler's decisions.

ShadowScheduler subscribes to a cluster source (KubeCluster with ``read_only=True`` beside a real cluster's
default scheduler, or any other source) and keeps a scheduler cache of it. When a pod that one of the watched
schedulers is responsible for goes from unbound to bound, it runs a scheduling cycle for the pod with the active
profile over the cluster as it was just before the binding (every earlier binding applied), and records which
node it would have chosen next to the node the other scheduler chose. It writes nothing to the cluster.

Agreement is exact (same node), within ties (the other scheduler's node had our best score: kube picks among
ties at random), or none; a disagreement keeps the scores of both nodes, or why our profile finds the other
node infeasible. In clusters of 100 nodes or more kube scores only a sample of feasible nodes, starting where
its previous cycle stopped; the shadow's sample starts elsewhere, so exact agreement is rarer there.
"""
from __future__ import annotations

import logging
from collections import deque

from .cache import Cache, CacheError
from .config import build_frameworks, config_matching
from .framework.cycle_state import CycleState
from .framework.handle import Handle
from .framework.snapshot import Snapshot
from .plugins.registry import in_tree_registry
from .schedule_one import SchedulerContext, schedule_pod
from .trace import TraceSink

log = logging.getLogger(__name__)


class ShadowRecord:
    """One compared decision."""

    __slots__ = ("pod", "scheduler", "actual", "shadow", "agree", "within_ties", "actual_feasible",
                 "actual_score", "shadow_score", "actual_reasons", "message", "feasible", "cycle")

    def __init__(self, pod, trace, actual: str):
        self.pod = pod.key
        self.scheduler = pod.scheduler_name
        self.actual = actual
        self.shadow = trace.chosen
        self.agree = trace.chosen == actual
        self.within_ties = self.agree or actual in (trace.top_nodes or ())
        self.actual_feasible = actual in trace.feasible
        self.actual_score = trace.totals.get(actual)
        self.shadow_score = trace.totals.get(trace.chosen) if trace.chosen else None
        st = trace.node_statuses.get(actual)
        self.actual_reasons = list(st.reasons) if st is not None else []
        self.message = trace.message or trace.error or ""
        self.feasible = len(trace.feasible)
        self.cycle = trace.cycle

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


class ShadowScheduler:
    """The read-only second opinion (see the module doc).

    ``config``: the SchedulerConfig whose profile is compared (``profile`` names it; default: the first).
    ``scheduler_names``: whose bindings are compared (default: the default scheduler). ``records`` keeps the
    last ``max_records`` comparisons; ``disagreements`` every one that disagreed, up to the same bound.
    ``on_record(record, trace)``, if given, is called with every comparison and the shadow's CycleTrace (e.g.
    to store them), before the trace goes to ``trace_sink``. ``trace_all_filters``: record every Filter plugin's
    verdict on every node (trace mode) instead of kube's short-circuited ones only.
    """

    def __init__(self, cluster, config=None, registry=None, profile: str | None = None,
                 scheduler_names=("default-scheduler",), tie_break: str = "name", seed=None,
                 trace_sink: TraceSink | None = None, max_records: int = 10000, on_record=None,
                 trace_all_filters: bool = False, *, kube_version=None, feature_gates=None):
        self.cluster = cluster
        self.on_record = on_record
        self.registry = registry or in_tree_registry()
        self.config = config_matching(config, self.registry, kube_version, feature_gates)
        self.scheduler_names = frozenset(scheduler_names)
        self.trace_sink = trace_sink or TraceSink()
        self.cache = Cache()
        self.snapshot = Snapshot((), cluster.objects)
        self.ctx = SchedulerContext(tie_break=tie_break, seed=seed,
                                    percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                                    trace_all_filters=trace_all_filters)

        def handle_factory():
            h = Handle(snapshot=self.snapshot, parallelism=self.config.parallelism)
            h.rng = self.ctx.rng
            h.tie_break = tie_break
            return h
        frameworks = build_frameworks(self.config, self.registry, handle_factory)
        self.framework = frameworks[profile] if profile else next(iter(frameworks.values()))
        self.records = deque(maxlen=max_records)
        self.disagreements = deque(maxlen=max_records)
        self.decisions = self.agreed = self.agreed_within_ties = self.actual_infeasible = 0
        cluster.subscribe(self)

    # -- cluster events -----------------------------------------------------------------------------
    def on_node_add(self, node) -> None:
        self.cache.add_node(node)

    def on_node_update(self, old, new) -> None:
        self.cache.update_node(old, new)

    def on_node_delete(self, node) -> None:
        self._try(self.cache.remove_node, node)

    def on_pod_add(self, pod) -> None:
        if pod.node_name:
            self._try(self.cache.add_pod, pod)

    def on_pod_update(self, old, new) -> None:
        if new.node_name and not old.node_name:
            if new.scheduler_name in self.scheduler_names:
                self._compare(old, new.node_name)
            self._try(self.cache.add_pod, new)
        elif new.node_name:
            self._try(self.cache.update_pod, old, new)

    def on_pod_delete(self, pod) -> None:
        if pod.node_name:
            self._try(self.cache.remove_pod, pod)

    def on_object_event(self, kind: str, action: str, old, new) -> None:
        """Objects are read live from the source's ``objects``; nothing to keep."""

    @staticmethod
    def _try(fn, *args) -> None:
        try:
            fn(*args)
        except CacheError as err:
            log.error("shadow cache: %s", err)

    # -- comparing --------------------------------------------------------------------------------------
    def _compare(self, pod, actual: str) -> ShadowRecord:
        self.cache.update_snapshot(self.snapshot)
        trace, _state = schedule_pod(self.framework, self.ctx, pod, self.snapshot, CycleState(),
                                     score_single_node=True)
        rec = ShadowRecord(pod, trace, actual)
        self.decisions += 1
        self.agreed += rec.agree
        self.agreed_within_ties += rec.within_ties
        self.actual_infeasible += not rec.actual_feasible
        self.records.append(rec)
        if not rec.agree:
            self.disagreements.append(rec)
            log.info("shadow: %s bound to %s by %s; %s would have chosen %s", rec.pod, actual, rec.scheduler,
                     self.framework.profile_name, rec.shadow or "no node")
        if self.on_record is not None:
            self.on_record(rec, trace)
        self.trace_sink.emit(trace)
        return rec

    def stats(self) -> dict:
        """Agreement counts and rates so far."""
        n = self.decisions
        return {"profile": self.framework.profile_name, "decisions": n, "agreed": self.agreed,
                "agreed_within_ties": self.agreed_within_ties, "actual_infeasible": self.actual_infeasible,
                "agreement_rate": self.agreed / n if n else None,
                "agreement_within_ties_rate": self.agreed_within_ties / n if n else None}
