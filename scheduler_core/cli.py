"""Command line: ``python -m scheduler_core simulate|run ...``."""
from __future__ import annotations

import argparse
import json
import sys

from .cli_options import (add_plugin_options, add_version_options, read_config, read_one, registry_from_args,
                          warn_features)
from .config import ConfigError
from .framework.profile import FrameworkError
from .plugins.registry import PluginLoadError
from .run import add_run_parser
from .scenario import ScenarioError, load_scenario


def format_text(traces, out, suggestions=None, claims=None):
    """Per pod: the chosen node or the FitError message, then a compact per-node table; with
    ``suggestions`` ({id(trace): [Suggestion]}), what would fix each unschedulable pod; with ``claims``
    ({id(trace): dra.explain document}), why its claims fit nowhere."""
    from .dra.explain import summary_lines
    for tr in traces:
        head = f"{tr.pod.key} (priority {tr.pod.priority}, profile {tr.profile})"
        if tr.chosen:
            out.write(f"{head}: scheduled on {tr.chosen}\n")
        elif tr.gated is not None:
            out.write(f"{head}: not queued ({tr.gated.plugin}): {tr.gated.message()}\n")
        elif tr.error:
            out.write(f"{head}: error: {tr.error}\n")
        else:
            out.write(f"{head}: unschedulable: {tr.message}\n")
        if tr.preemption and tr.preemption.get("nominated_node"):
            victims = ", ".join(tr.preemption.get("victims") or []) or "none"
            out.write(f"  preemption: nominated {tr.preemption['nominated_node']}, victims: {victims}\n")
        rows = []
        for node in tr.feasible:
            total = tr.totals.get(node)
            mark = "*" if node == tr.chosen else " "
            rows.append((node, f"{mark} feasible" + (f"  score {total}" if total is not None else "")))
        for node, st in tr.node_statuses.items():
            rows.append((node, f"  {st.plugin or '-'}: {st.message()}"))
        width = max((len(n) for n, _ in rows), default=0)
        for node, text in sorted(rows, key=lambda r: (-(tr.totals.get(r[0]) or -1), r[0])):
            out.write(f"    {node.ljust(width)} {text}\n")
        for sug in (suggestions or {}).get(id(tr), ()):
            out.write(f"  fix: {sug.text}\n")
        if id(tr) in (claims or {}):
            for line in summary_lines(claims[id(tr)]):
                out.write(f"  claims: {line}\n")


def cmd_simulate(args) -> int:
    from .simulate import Simulation, golden_document
    scenario = load_scenario(args.scenario)
    config_doc = read_config(args.config) if args.config else None
    sim = Simulation(scenario, config_doc=config_doc, tie_break=args.tie_break, seed=args.seed,
                     registry=registry_from_args(args), kube_version=args.kube_version,
                     feature_gates=args.feature_gates, pre_enqueue=True)
    warn_features(sim.features)
    explaining = args.explain and args.format != "golden"
    traces, suggestions, claims = [], {}, {}
    for tr in sim.run():
        traces.append(tr)
        if explaining and tr.unschedulable:
            # Now, before the next pod is assumed: the snapshot is the one this attempt saw.
            from .explain import explain
            suggestions[id(tr)] = explain(sim.frameworks[tr.pod.scheduler_name], sim.snapshot, tr.pod, tr)
            if (tr.pod.raw.get("spec") or {}).get("resourceClaims"):
                claims[id(tr)] = sim.explain_claims(tr.pod)
    if args.format == "golden":
        json.dump(golden_document(sim, traces), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    elif args.format == "json":
        records = []
        for t in traces:
            rec = t.to_dict()
            if id(t) in suggestions:
                rec["suggestions"] = [sg.to_dict() for sg in suggestions[id(t)]]
            if id(t) in claims:
                rec["claims"] = claims[id(t)]
            records.append(rec)
        json.dump(records, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        format_text(traces, sys.stdout, suggestions, claims)
    return 0


def cmd_whatif(args) -> int:
    from . import whatif
    scenario = load_scenario(args.scenario)
    config_doc = read_config(args.config) if args.config else None
    version = {"kube_version": args.kube_version, "feature_gates": args.feature_gates}
    try:
        if args.question == "capacity":
            template = whatif.template_from_manifest(read_one(args.pod))
            result = whatif.capacity(scenario, template, config_doc, max_copies=args.max_copies,
                                     preemption=args.preemption, **version)
        elif args.question == "drain":
            result = whatif.drain(scenario, args.nodes, config_doc=config_doc, **version)
        else:
            result = whatif.add_nodes(scenario, read_one(args.node), args.count, config_doc, **version)
    except whatif.WhatIfError as err:
        raise ScenarioError(str(err)) from None
    if args.json:
        json.dump(result, sys.stdout, indent=1, sort_keys=True, default=lambda trace: trace.to_dict())
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(whatif.summary(args.question, result)) + "\n")
    return 0


def add_whatif_parser(sub) -> None:
    wi = sub.add_parser("whatif", help="capacity, drain and add-nodes questions on a copy of a scenario's cluster")
    questions = wi.add_subparsers(dest="question", required=True)
    cap = questions.add_parser("capacity", help="how many more copies of a pod fit")
    cap.add_argument("scenario")
    cap.add_argument("pod", help="a Pod, or a Deployment/ReplicaSet/StatefulSet/Job whose template is used")
    cap.add_argument("--max-copies", type=int, default=10000)
    cap.add_argument("--preemption", action="store_true", help="let the copies preempt lower-priority pods")
    drain = questions.add_parser("drain", help="cordon and drain nodes: where their pods go")
    drain.add_argument("scenario")
    drain.add_argument("nodes", nargs="+")
    add = questions.add_parser("add-nodes", help="add copies of a node: which pending pods fit")
    add.add_argument("scenario")
    add.add_argument("node", help="a Node manifest used as the template")
    add.add_argument("--count", type=int, required=True)
    for p in (cap, drain, add):
        p.add_argument("--config", help="KubeSchedulerConfiguration v1 file (YAML or JSON)")
        p.add_argument("--json", action="store_true")
        add_version_options(p)
        p.set_defaults(func=cmd_whatif)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m scheduler_core",
                                 description="Schedscope scheduler core: kube-scheduler (v1.30 and v1.36), in "
                                             "Python.")
    sub = ap.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="one pass: each pending pod tried once, assumed in turn")
    sim.add_argument("scenario")
    sim.add_argument("--config", help="KubeSchedulerConfiguration v1 file (YAML or JSON)")
    sim.add_argument("--tie-break", choices=("name", "random"), default="random")
    sim.add_argument("--seed", type=int)
    sim.add_argument("--format", choices=("text", "json", "golden"), default="text")
    sim.add_argument("--explain", action="store_true",
                     help="text and json formats: for each unschedulable pod, verified changes that would fit it")
    add_plugin_options(sim)
    add_version_options(sim)
    sim.set_defaults(func=cmd_simulate)
    add_whatif_parser(sub)
    add_run_parser(sub)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ScenarioError, ConfigError, FrameworkError, PluginLoadError) as err:
        text = str(err)
        if isinstance(err, FrameworkError):
            text = f"initializing profiles: {text}"
        sys.stderr.write(f"error: {text}\n")
        return 2
    except BrokenPipeError:
        return 0
