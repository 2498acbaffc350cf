"""``python -m scheduler_core run``: the full scheduling loop over a SimulatedCluster built from a scenario.

The scenario's steps run in order, each until activeQ is empty:
1. ``pending`` (added to the queue in file order);
2. ``waves[]``: each wave's ``pending`` pods are added (backoffQ is not flushed first);
3. ``retry_rounds: N``: up to N times, every backoffQ pod moves to activeQ (a fast-forward of time);
   stops early when nothing moved;
4. ``phase2``: the clock passes the initial backoff, its ``nodes`` are added through the node-add path.
Without ``--until-idle`` simulated time then runs on: the clock jumps to the next backoff expiry, periodic
flush or Permit timeout, until nothing is left to do or ``--duration`` simulated seconds have passed.
The clock is fake throughout; ``--tie-break name`` makes the run deterministic.
"""
from __future__ import annotations

import json
import sys
import time

from .cli_options import add_plugin_options, add_version_options, read_config, registry_from_args, warn_features
from .clock import FakeClock
from .cluster.simulated import SimulatedCluster
from .config import config_for
from .objects import Node, ParseError, Pod
from .objects.validation import validate_object
from .plugins.registry import build_registry
from .scenario import ScenarioError, load_scenario
from .scheduler import Scheduler
from .schedule_one import num_feasible_nodes_to_find
from .trace import JsonLinesSink, TraceSink

TIE_BREAK_TEXT = {"name": "lexicographically smallest node name among max total score (patched selectHost)",
                  "random": "uniform random among max total score (kube's reservoir sampling)"}


class _Collector(TraceSink):
    """Keeps a placement record per attempt and forwards every trace to another sink."""

    def __init__(self, forward: TraceSink):
        self.forward = forward
        self.scheduler = None
        self.records = []
        self.preemptions = []

    def emit(self, tr) -> None:
        self.records.append(placement_record(tr, self.scheduler))
        if tr.nominated_node:
            self.preemptions.append({"pod": tr.pod.key, "attempt": tr.attempt, "nominated_node": tr.nominated_node,
                                     "victims": list(tr.victims)})
        self.forward.emit(tr)

    def take(self) -> list:
        out, self.records = self.records, []
        return out


def placement_record(tr, sched) -> dict:
    """One attempt in the golden-loop schema."""
    rec = {"pod": tr.pod.key, "node": tr.chosen if not tr.status_code else None, "attempt": tr.attempt}
    if tr.status_code:
        rec["message"] = tr.message or (tr.error or "") or (tr.bind_error or "")
    fast_path = tr.num_nodes < 0
    rec["num_nodes"] = -1 if fast_path else tr.num_nodes
    rec["num_feasible_nodes_to_find"] = 0 if fast_path else tr.num_to_find
    rec["start_index"] = -1 if fast_path else tr.start_index
    rec["processed_nodes"] = -1 if fast_path else tr.processed_nodes
    rec["feasible_nodes"] = -1 if fast_path else len(tr.feasible)
    rec["next_start_index"] = sched.ctx.next_start_node_index if sched is not None else 0
    if tr.totals and len(tr.feasible) > 1:
        best = max(tr.totals.values())
        rec["max_score"] = best
        rec["max_score_ties"] = sum(1 for v in tr.totals.values() if v == best)
    if tr.status_code:
        rec["status_code"] = tr.status_code
        rec["event"] = f"Warning FailedScheduling {rec['message']}"
    if tr.nominated_node:
        rec["nominated_node"] = tr.nominated_node
    if tr.victims:
        rec["victims"] = list(tr.victims)
    if tr.nominated_node_before:
        rec["nominated_node_before"] = tr.nominated_node_before
    if tr.permit_wait:
        rec["permit_wait"] = dict(tr.permit_wait)
    return rec


def _parse_steps(scenario) -> tuple:
    """The pods of ``waves`` and the nodes of ``phase2``, parsed up front (ScenarioError on bad input)."""
    label = scenario.name
    waves = scenario.extra.get("waves") or []
    if not isinstance(waves, list):
        raise ScenarioError(f"{label}: waves: expected a list")
    parsed_waves = []
    for i, wave in enumerate(waves):
        if not isinstance(wave, dict):
            raise ScenarioError(f"{label}: waves[{i}]: expected an object")
        pods = []
        for j, raw in enumerate(wave.get("pending") or []):
            try:
                validate_object("Pod", raw)
                pods.append(Pod(raw))
            except ParseError as err:
                raise ScenarioError(f"{label}: waves[{i}].pending[{j}]: {err}") from None
        parsed_waves.append((wave.get("description") or f"wave {i + 1}", pods))
    phase2 = scenario.extra.get("phase2")
    nodes = []
    if phase2 is not None:
        if not isinstance(phase2, dict):
            raise ScenarioError(f"{label}: phase2: expected an object")
        for j, raw in enumerate(phase2.get("nodes") or []):
            try:
                validate_object("Node", raw)
                nodes.append(Node(raw))
            except ParseError as err:
                raise ScenarioError(f"{label}: phase2.nodes[{j}]: {err}") from None
    rounds = scenario.extra.get("retry_rounds") or 0
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 0:
        raise ScenarioError(f"{label}: retry_rounds: expected a non-negative integer")
    return parsed_waves, phase2, nodes, rounds


class LoopRun:
    """A scenario run through the scheduling loop, step by step, with its record (see the module doc)."""

    def __init__(self, scenario, config_doc=None, registry=None, tie_break: str = "random", seed=None,
                 trace_sink: TraceSink | None = None, trace_all_filters: bool = False, *, kube_version=None,
                 feature_gates=None):
        doc = config_doc if config_doc is not None else scenario.config
        self.registry = registry or build_registry()
        self.config = config_for(doc or None, self.registry, kube_version=scenario.kube_version(kube_version),
                                 feature_gates=scenario.feature_gates(feature_gates))
        self.scenario = scenario = scenario.read_by(self.config.features)
        self.waves, self.phase2, self.phase2_nodes, self.retry_rounds = _parse_steps(scenario)
        self.waves = [(text, [self.config.features.pod_as_read(p) for p in pods]) for text, pods in self.waves]
        self.clock = FakeClock(0.0)
        self.cluster = SimulatedCluster.from_scenario(scenario, clock=self.clock)
        self.collector = _Collector(trace_sink or TraceSink())
        self.tie_break = tie_break
        self.sched = Scheduler(self.cluster, self.config, registry=self.registry, clock=self.clock,
                               tie_break=tie_break, seed=seed, trace_sink=self.collector,
                               trace_all_filters=trace_all_filters)
        self.collector.scheduler = self.sched
        self.doc = {}

    def _node_order(self) -> list:
        return self.sched.cache.node_names()

    def _drain(self, step: dict) -> dict:
        """Schedule until activeQ is empty; record the step's placements and the queue after it."""
        self.sched.run_until_idle()
        step["placements"] = self.collector.take()
        step["queue_after"] = self.sched.queue.summary()
        return step

    def run(self, until_idle: bool = True, duration: float = 900.0) -> dict:
        """Run every step; returns the record (the golden-loop document)."""
        sched, scen = self.sched, self.scenario
        first_profile = self.config.profiles[0]
        n = len(self.cluster.nodes)
        doc = self.doc
        doc.update({"scenario": scen.name, "kubernetes_version": self.config.features.version.release,
                    "parallelism": self.config.parallelism,
                    "percentage_of_nodes_to_score": self.config.percentage_of_nodes_to_score,
                    "tie_break": TIE_BREAK_TEXT[self.tie_break], "node_order": self._node_order(),
                    "num_feasible_nodes_to_find": num_feasible_nodes_to_find(
                        first_profile.percentage_of_nodes_to_score, self.config.percentage_of_nodes_to_score, n)})
        self._drain(doc)
        for description, pods in self.waves:
            for pod in pods:
                self.cluster.add_pod(pod)
            step = {"description": description, "queue_before": sched.queue.summary()}
            doc.setdefault("waves", []).append(self._drain(step))
        for i in range(self.retry_rounds):
            moved = sched.queue.flush_backoff_q_all()
            if not moved:
                break
            step = {"description": f"retry round {i + 1}: {moved} pod(s) moved backoffQ->activeQ",
                    "queue_before": sched.queue.summary()}
            doc.setdefault("retry_rounds", []).append(self._drain(step))
        if self.phase2 is not None:
            self.clock.advance(self.config.pod_initial_backoff_seconds + 0.001)
            for node in self.phase2_nodes:
                self.cluster.add_node(node)
            doc["phase2"] = self._drain({"description": self.phase2.get("description", ""),
                                         "added_nodes": [n.name for n in self.phase2_nodes],
                                         "queue_before": sched.queue.summary(), "node_order": self._node_order()})
        if not until_idle:
            self._run_on(duration)
            later = self.collector.take()
            if later:
                doc["later"] = {"placements": later, "queue_after": sched.queue.summary(),
                                "clock": self.clock.now()}
        if scen.extra.get("pdbs") or scen.objects.get("poddisruptionbudgets") or self.retry_rounds:
            doc["preemptions"] = list(self.collector.preemptions)
            doc["final_placements"] = self.cluster.placements()
        return doc

    def _run_on(self, duration: float) -> None:
        """Let simulated time pass: jump to each next timer, run what it released, until idle or the end."""
        sched = self.sched
        end = self.clock.now() + duration
        while True:
            sched.queue.tick()
            sched.process_timers()
            sched.run_until_idle()
            t = sched.next_wakeup()
            if t is None or t > end:
                return
            if t > self.clock.now():
                self.clock.set(t)


def add_run_parser(subparsers) -> None:
    """Register the ``run`` command."""
    p = subparsers.add_parser("run", help="the full scheduling loop (queue, cache, binding, preemption) over "
                                          "a simulated cluster")
    p.add_argument("scenario")
    p.add_argument("--config", help="KubeSchedulerConfiguration v1 file (YAML or JSON)")
    p.add_argument("--until-idle", action="store_true",
                   help="stop when activeQ is empty after the scenario's steps (no simulated time passes)")
    p.add_argument("--duration", type=float, default=900.0, metavar="SECONDS",
                   help="simulated time to run on after the steps, without --until-idle (default 900)")
    p.add_argument("--tie-break", choices=("name", "random"), default="random")
    p.add_argument("--seed", type=int)
    p.add_argument("--format", choices=("text", "json", "golden-loop"), default="text")
    p.add_argument("--trace", metavar="FILE", help="write every CycleTrace as JSON lines")
    p.add_argument("--trace-all-filters", action="store_true",
                   help="run every Filter plugin on every node for the trace (slower; same decisions)")
    add_plugin_options(p)
    add_version_options(p)
    p.set_defaults(func=cmd_run)


def cmd_run(args) -> int:
    scenario = load_scenario(args.scenario)
    config_doc = read_config(args.config) if args.config else None
    sink = JsonLinesSink(args.trace) if args.trace else None
    t0 = time.perf_counter()
    try:
        run = LoopRun(scenario, config_doc=config_doc, registry=registry_from_args(args), tie_break=args.tie_break,
                      seed=args.seed, trace_sink=sink, trace_all_filters=args.trace_all_filters,
                      kube_version=args.kube_version, feature_gates=args.feature_gates)
        warn_features(run.config.features)
        doc = run.run(until_idle=args.until_idle, duration=args.duration)
    finally:
        if sink is not None:
            sink.close()
    wall = time.perf_counter() - t0
    if args.format == "golden-loop":
        json.dump(doc, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    elif args.format == "json":
        json.dump({"scenario": scenario.name, "events": run.cluster.events, "placements": run.cluster.placements(),
                   "queue": run.sched.queue.summary(), "clock": run.clock.now(), "wall_seconds": round(wall, 3)},
                  sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        format_text(run, wall, sys.stdout)
    return 0


def format_text(run, wall: float, out) -> None:
    """The event stream, then the final placement of every pod and the queue state."""
    for ev in run.cluster.events:
        out.write(f"{ev['time']:9.3f}s  {ev['type']:<7} {ev['reason']:<16} {ev['object']}: {ev['message']}\n")
    out.write("\nFinal placement:\n")
    placements = run.cluster.placements()
    width = max((len(k) for k in placements), default=0)
    for key, node in placements.items():
        out.write(f"  {key.ljust(width)}  {node or '<pending>'}\n")
    bound = sum(1 for v in placements.values() if v)
    out.write(f"\n{bound}/{len(placements)} pods bound; queue {run.sched.queue.summary()}; "
              f"{len(run.collector.preemptions)} preemption(s); simulated time {run.clock.now():.3f}s; "
              f"wall time {wall:.2f}s\n")
