"""Shadow (observe) mode: a read-only second opinion on another scheduler's decisions and failures.

ShadowScheduler subscribes to a cluster source (KubeCluster with ``read_only=True`` beside a real cluster's
default scheduler, or any other source) and keeps a scheduler cache of it. When a pod that one of the watched
schedulers is responsible for goes from unbound to bound, it runs a scheduling cycle for the pod with the active
profile over the cluster as it was just before the binding (every earlier binding applied), and records which
node it would have chosen next to the node the other scheduler chose. It writes nothing to the cluster.

It also explains the pods the other scheduler cannot place. When that scheduler reports a pod unschedulable (a
``FailedScheduling`` Event it wrote, or the pod's ``PodScheduled=False`` condition), ``observe_pending`` runs a
cycle for the pod over the current state and gives an ``Observation``: the other scheduler's message beside the
profile's and whether they agree. While the pod waits, every change of the cluster makes it due again (at most
once per ``reobserve_seconds``), as kube retries it; the observation ends when the pod is bound or deleted.

Agreement is exact (same node), within ties (the other scheduler's node had our best score: kube picks among
ties at random), or none; a disagreement keeps the scores of both nodes, or why our profile finds the other
node infeasible. In clusters of 100 nodes or more kube scores only a sample of feasible nodes, starting where
its previous cycle stopped; the shadow's sample starts elsewhere, so exact agreement is rarer there.
"""
from __future__ import annotations

import logging
import time
from collections import deque

from .cache import Cache, CacheError
from .config import build_frameworks, config_matching
from .framework.cycle_state import CycleState
from .framework.handle import Handle
from .cluster.simulated import OBJECT_KINDS, store_object
from .framework.snapshot import ClusterObjects, Snapshot
from .plugins.registry import in_tree_registry
from .schedule_one import SchedulerContext, schedule_pod
from .scheduler import truncate_message
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


def messages_agree(ours: str, kube: str) -> bool:
    """Whether the profile's FailedScheduling message is the other scheduler's (an Event's note is cut at 1024
    bytes; the pod's condition carries the whole message)."""
    return truncate_message(ours) == truncate_message(kube)


class Observation:
    """One explained failure: the profile's cycle for a pod the other scheduler reported unschedulable.
    ``answers_report``: the cycle answers a report (not a look again after the cluster changed)."""

    __slots__ = ("pod", "uid", "scheduler", "kube_message", "message", "agree", "feasible", "cycle",
                 "answers_report")

    def __init__(self, pod, trace, kube_message: str, answers_report: bool = True):
        self.answers_report = answers_report
        self.pod = pod.key
        self.uid = pod.uid
        self.scheduler = pod.scheduler_name
        self.kube_message = kube_message
        self.message = trace.message or trace.error or ""
        self.agree = messages_agree(self.message, kube_message)
        self.feasible = len(trace.feasible)
        self.cycle = trace.cycle

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


class _Waiting:
    """A pod the other scheduler reported unschedulable: its message and when it was last observed."""

    __slots__ = ("pod", "kube_message", "reported", "observed_change", "observed_at")

    def __init__(self, pod, kube_message: str):
        self.pod = pod
        self.kube_message = kube_message
        self.reported = True          # a new report not yet observed
        self.observed_change = -1     # the cluster change count at the last observation
        self.observed_at = float("-inf")


def unschedulable_condition(pod) -> str | None:
    """The message of a pod's ``PodScheduled=False, reason=Unschedulable`` condition (None: it has none)."""
    for c in pod.conditions:
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable":
            return c.get("message") or ""
    return None


def failed_scheduling_report(raw: dict):
    """(namespace, name, uid, message, reporting scheduler) of a FailedScheduling Event about a Pod
    (core/v1 or events.k8s.io/v1), or None."""
    if raw.get("reason") != "FailedScheduling":
        return None
    ref = raw.get("regarding") or raw.get("involvedObject") or {}
    if ref.get("kind") != "Pod":
        return None
    reporter = (raw.get("reportingController") or raw.get("reportingComponent")
                or (raw.get("source") or raw.get("deprecatedSource") or {}).get("component") or "")
    message = raw.get("note") if "note" in raw else raw.get("message")
    return ref.get("namespace") or "default", ref.get("name", ""), ref.get("uid", ""), message or "", reporter


class ShadowScheduler:
    """The read-only second opinion (see the module doc).

    ``config``: the SchedulerConfig whose profile is compared (``profile`` names it; default: the first).
    ``scheduler_names``: whose bindings are compared (default: the default scheduler). ``records`` keeps the
    last ``max_records`` comparisons; ``disagreements`` every one that disagreed, up to the same bound.
    ``on_record(record, trace)``, if given, is called with every comparison and the shadow's CycleTrace (e.g.
    to store them), before the trace goes to ``trace_sink``. ``trace_all_filters``: record every Filter plugin's
    verdict on every node (trace mode) instead of kube's short-circuited ones only. ``on_observe(observation,
    trace)``, if given, is called with every Observation of a pending pod (``observe_pending``);
    ``reobserve_seconds``: the least time between two observations of a waiting pod that kube did not report
    again; ``clock``: the monotonic clock that time is read from.

    ``order_window``: kube binds asynchronously, so bindings may land in another order than kube decided them
    (p17's before p15's, though kube placed p15 first and counted it when it placed p17). With a window > 0
    bindings wait until none has arrived for that long (``judge_due``), or until another change of the cluster
    comes, and are then judged in kube's queue order (priority, then the order the pods arrived), each on the
    state with the bindings before it and nothing after; kube's reports of pods it could not place wait the same
    way and are answered at their place in that order (kube reports a failure after its cycle, often after the
    bindings of pods it placed later). 0: each is judged as it lands, each report answered by ``observe_pending``.
    The objects (PVCs, PVs, claims, ...) are those of the events delivered so far, not the source's live stores.
    """

    def __init__(self, cluster, config=None, registry=None, profile: str | None = None,
                 scheduler_names=("default-scheduler",), tie_break: str = "name", seed=None,
                 trace_sink: TraceSink | None = None, max_records: int = 10000, on_record=None,
                 trace_all_filters: bool = False, *, kube_version=None, feature_gates=None, on_observe=None,
                 reobserve_seconds: float = 5.0, clock=time.monotonic, order_window: float = 0.0):
        self.cluster = cluster
        self.order_window = order_window
        self._arrival = {}        # uid -> the order a pending pod was first seen in (kube's queue order)
        self._bindings = []       # (old, new) bindings not judged yet (order_window)
        self._reports = []        # pods whose report waits to be answered in kube's order (order_window)
        self._answered = []       # Observations made in kube's order, not returned by observe_pending yet
        self._last_binding = 0.0
        self.on_record = on_record
        self.on_observe = on_observe
        self.reobserve_seconds = reobserve_seconds
        self.clock = clock
        self.waiting = {}         # pod key -> _Waiting
        self.changes = 0          # cluster changes seen (a waiting pod observed before the last one is due)
        self.observations = self.observed_agreed = 0
        self.registry = registry or in_tree_registry()
        self.config = config_matching(config, self.registry, kube_version, feature_gates)
        self.scheduler_names = frozenset(scheduler_names)
        self.trace_sink = trace_sink or TraceSink()
        self.cache = Cache()
        self.objects = ClusterObjects()   # the source's objects as of the events delivered (set at subscribe)
        self.snapshot = Snapshot((), self.objects)
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
        # the objects from here on follow the events delivered to this handler, not the source's live stores
        # (which a KubeCluster's watches update before their events are delivered): a binding is judged on the
        # objects as they were when kube decided it, nothing after
        self.objects.__dict__.update(vars(cluster.objects))

    # -- cluster events -----------------------------------------------------------------------------
    def on_node_add(self, node) -> None:
        self._changed()
        self.cache.add_node(node)

    def on_node_update(self, old, new) -> None:
        self._changed()
        self.cache.update_node(old, new)

    def on_node_delete(self, node) -> None:
        self._changed()
        self._try(self.cache.remove_node, node)

    def on_pod_add(self, pod) -> None:
        if pod.node_name:
            self._changed()
            self._try(self.cache.add_pod, pod)
        else:
            self._arrival.setdefault(pod.uid, len(self._arrival))
            self._note_condition(pod)

    def on_pod_update(self, old, new) -> None:
        if new.node_name and not old.node_name:
            self.changes += 1
            self.waiting.pop(new.key, None)
            if self.order_window > 0:
                self._bindings.append((old, new))
                self._last_binding = self.clock()
            else:
                self._bind(old, new)
        elif new.node_name:
            pending = next((i for i, (_, b) in enumerate(self._bindings) if b.uid == new.uid), None)
            if pending is not None:   # a pod not judged yet changes (its status): judged as it is now
                self._bindings[pending] = (self._bindings[pending][0], new)
                return
            self._changed()
            self._try(self.cache.update_pod, old, new)
        else:
            self._note_condition(new, old)

    def on_pod_delete(self, pod) -> None:
        self.waiting.pop(pod.key, None)
        if pod.node_name:
            self._changed()
            self._try(self.cache.remove_pod, pod)
        self._arrival.pop(pod.uid, None)

    def _changed(self) -> None:
        """Another change than a binding: the bindings (and reports) before it are judged first, on the state
        before it."""
        self.changes += 1
        if self._bindings or self._reports:
            self.judge_bindings()

    def _bind(self, old, new) -> None:
        self._arrival.pop(new.uid, None)
        if new.scheduler_name in self.scheduler_names:
            self._compare(old, new.node_name)
        self._try(self.cache.add_pod, new)

    def judge_due(self) -> int:
        """Judge the waiting bindings and answer the waiting reports once none has arrived for ``order_window``
        seconds; how many."""
        if (self._bindings or self._reports) and self.clock() - self._last_binding >= self.order_window:
            return self.judge_bindings()
        return 0

    def judge_bindings(self) -> int:
        """Judge every waiting binding and answer every waiting report now, in kube's queue order (a report is
        kube's decision that the pod does not fit, answered on the state with the bindings kube decided before
        it: kube's report lands after the cycle, often after later bindings); how many."""
        batch, self._bindings = self._bindings, []
        batch += [(pod, None) for pod in self._reports]
        self._reports = []
        batch.sort(key=lambda b: (-b[0].priority, self._arrival.get(b[0].uid, len(self._arrival))))
        for old, new in batch:
            if new is not None:
                self._bind(old, new)
                continue
            entry = self.waiting.get(old.key)
            if entry is not None and entry.reported:
                self.cache.update_snapshot(self.snapshot)
                self._answered.append(self._observe(entry))
        return len(batch)

    def on_object_event(self, kind: str, action: str, old, new) -> None:
        """A change of an object: the waiting bindings are judged before it, then it is applied to the shadow's
        objects, and the waiting pods are due. A FailedScheduling Event of a watched scheduler is a report (see
        the module doc)."""
        if kind != "Event":
            self._changed()
            if kind == "Namespace" or kind in OBJECT_KINDS:
                store_object(self.objects, kind, new if new is not None else old, deleted=action == "Delete")
        elif new is not None:
            report = failed_scheduling_report(new)
            if report is not None and report[4] in self.scheduler_names:
                namespace, name, uid, message, _ = report
                pod = self.cluster.get_pod(namespace, name)
                if pod is not None and not pod.node_name and (not uid or uid == pod.uid):
                    self._report(pod, message)

    def _note_condition(self, pod, old=None) -> None:
        """A pending pod's PodScheduled=False condition (set, or its message changed) is a report."""
        if pod.scheduler_name not in self.scheduler_names:
            return
        message = unschedulable_condition(pod)
        entry = self.waiting.get(pod.key)
        if entry is not None:
            entry.pod = pod
        if message is not None and (old is None or unschedulable_condition(old) != message or entry is None):
            self._report(pod, message)

    def _report(self, pod, message: str) -> None:
        entry = self.waiting.get(pod.key)
        if entry is None or entry.pod.uid != pod.uid:
            self.waiting[pod.key] = _Waiting(pod, message)
        else:
            entry.pod, entry.kube_message, entry.reported = pod, message, True
        if self.order_window > 0 and all(p.key != pod.key for p in self._reports):
            self._reports.append(pod)
            self._last_binding = self.clock()

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

    # -- explaining pending pods ------------------------------------------------------------------------
    def due(self) -> list:
        """The waiting pods to observe now: reported since their last observation, or observed before the
        cluster's last change and at least ``reobserve_seconds`` ago."""
        now = self.clock()
        queued = {p.key for p in self._reports}
        return [w for w in self.waiting.values() if w.pod.key not in queued and (
            w.reported or (w.observed_change != self.changes and now - w.observed_at >= self.reobserve_seconds))]

    def observe_pending(self, limit: int | None = None) -> list:
        """The Observations of the reports answered in kube's order since the last call, then a cycle for each
        due waiting pod (up to ``limit``) over the current state."""
        out, self._answered = self._answered, []
        due = self.due()[:limit]
        if due:
            self.cache.update_snapshot(self.snapshot)
            out += [self._observe(w) for w in due]
        return out

    def _observe(self, w) -> Observation:
        """One cycle for a waiting pod over the snapshot as it is."""
        answers = w.reported
        w.reported, w.observed_change, w.observed_at = False, self.changes, self.clock()
        trace, _state = schedule_pod(self.framework, self.ctx, w.pod, self.snapshot, CycleState())
        if trace.error or trace.unschedulable:   # the attempt failed, as the loop would have failed it
            trace.status_code = "Error" if trace.error else "Unschedulable"
        obs = Observation(w.pod, trace, w.kube_message, answers)
        self.observations += 1
        self.observed_agreed += obs.agree
        if not obs.agree:
            log.info("observe: %s: %s says %r; %s says %r", obs.pod, obs.scheduler, obs.kube_message,
                     self.framework.profile_name, obs.message)
        if self.on_observe is not None:
            self.on_observe(obs, trace)
        self.trace_sink.emit(trace)
        return obs

    def stats(self) -> dict:
        """Agreement counts and rates so far."""
        n = self.decisions
        return {"profile": self.framework.profile_name, "decisions": n, "agreed": self.agreed,
                "agreed_within_ties": self.agreed_within_ties, "actual_infeasible": self.actual_infeasible,
                "agreement_rate": self.agreed / n if n else None,
                "agreement_within_ties_rate": self.agreed_within_ties / n if n else None,
                "observations": self.observations, "observed_agreed": self.observed_agreed,
                "waiting": len(self.waiting)}
