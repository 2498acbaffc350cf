"""The v1.36 live-oracle comparison (../shared/golden-v136/README.md, "How to compare").

For every derived scenario ``NAME-K.scenario.json[.xz]`` with its ``NAME-K.expected.json`` (what the real
kube-scheduler v1.36.2 did with the scenario's one pending pod), run

    PY -m scheduler_core simulate S --tie-break name --format golden --kube-version 1.36

(in this process when no ``--python`` is given) and compare its one decision with kube's:

1. ``unschedulable`` equal; when unschedulable, ``message`` equal as an exact string; when kube nominated a node,
   the same nominated node and victims (or kube's pair among the implementation's ``possible_nominations``);
2. when kube bound the pod: ``top_nodes`` equal as sets, and the implementation's ``bound_node`` among them;
3. when kube scored: the implementation's feasible nodes are the nodes kube scored and, for each, the same set of
   scored plugins with equal weighted scores and an equal ``_total``; when kube did not score, the implementation's
   feasible nodes are that one node;
4. when a PreEnqueue plugin kept the pod out of kube's queue (``gated``: the plugin and its message; the pod was
   never attempted), the implementation's decision has the same ``gated``.

    python -m tests.conformance.golden_v136 [--python PY] [--jobs N] [--skip-dra] DIR|FILE...

The last line is ``v1.36 live oracle: N/M decisions equal (K scenarios)``; the exit status is 0 only when all
are equal.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

SIMULATE_ARGS = ("simulate", "--tie-break", "name", "--format", "golden", "--kube-version", "1.36")
SCENARIO_SUFFIXES = (".scenario.json", ".scenario.json.xz")


def scenario_files(paths) -> list:
    """The derived scenarios under ``paths`` (directories or files) that have an expected file, sorted."""
    out = []
    for path in paths:
        names = [os.path.join(path, f) for f in os.listdir(path)] if os.path.isdir(path) else [path]
        out.extend(p for p in names if p.endswith(SCENARIO_SUFFIXES) and os.path.exists(expected_path(p)))
    return sorted(out)


def expected_path(scenario: str) -> str:
    base = scenario[:-3] if scenario.endswith(".xz") else scenario
    return base[: -len(".scenario.json")] + ".expected.json"


def is_dra(scenario: str) -> bool:
    """A decision of a DRA scenario (``dra-*``)."""
    return os.path.basename(scenario).startswith("dra-")


def simulate(scenario: str, python: str | None = None) -> dict:
    """The implementation's golden document for one scenario (``{"error": text}`` when it failed)."""
    if python:
        proc = subprocess.run([python, "-m", "scheduler_core", SIMULATE_ARGS[0], scenario, *SIMULATE_ARGS[1:]],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip() or f"exit status {proc.returncode}"}
        return json.loads(proc.stdout)
    from scheduler_core.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([SIMULATE_ARGS[0], scenario, *SIMULATE_ARGS[1:]])
    if code != 0:
        return {"error": err.getvalue().strip() or f"exit status {code}"}
    return json.loads(out.getvalue())


def _weighted(value):
    return value.get("weighted") if isinstance(value, dict) else value


def _node_scores(per_plugin: dict) -> tuple:
    """({plugin: weighted}, _total) of one node's scores."""
    plugins = {p: _weighted(v) for p, v in per_plugin.items() if p != "_total"}
    return plugins, per_plugin.get("_total")


def compare(exp: dict, got: dict) -> str | None:
    """The first way ``got`` (the implementation's decision) differs from ``exp`` (kube's), or None."""
    if got.get("pod") != exp["pod"]:
        return f"pod: expected {exp['pod']}, got {got.get('pod')}"
    if exp.get("gated") or got.get("gated"):   # a PreEnqueue plugin kept the pod out of the queue
        if exp.get("gated") != got.get("gated"):
            return f"gated: expected {exp.get('gated')}, got {got.get('gated')}"
        return None
    if bool(exp["unschedulable"]) != bool(got.get("unschedulable")):
        return f"unschedulable: expected {exp['unschedulable']}, got {got.get('unschedulable')} " \
               f"(bound {got.get('bound_node')}, message {got.get('message')!r})"
    if exp["unschedulable"]:
        if exp["message"] != got.get("message"):
            return f"message:\n  expected {exp['message']!r}\n  got      {got.get('message')!r}"
        nominated = (exp.get("preemption") or {}).get("nominated_node")
        if nominated:
            pre = got.get("preemption") or {}
            want = (nominated, sorted(exp["preemption"].get("victims") or []))
            options = [(o.get("node"), sorted(o.get("victims") or [])) for o in pre.get("possible_nominations") or ()]
            options.append((pre.get("nominated_node"), sorted(pre.get("victims") or [])))
            if want not in options:
                return f"preemption: expected {want}, got {options}"
    elif exp.get("bound_node"):
        top = set(exp.get("top_nodes") or [exp["bound_node"]])
        if set(got.get("top_nodes") or ()) != top:
            return f"top_nodes: expected {sorted(top)}, got {sorted(got.get('top_nodes') or ())}"
        if got.get("bound_node") not in top:
            return f"bound_node: {got.get('bound_node')} is not among {sorted(top)}"
    if exp.get("scoring_run_by_scheduler"):
        scored = set(exp.get("scores") or {})
        if set(got.get("feasible_nodes") or ()) != scored:
            return f"feasible nodes: expected {sorted(scored)}, got {sorted(got.get('feasible_nodes') or ())}"
        got_scores = got.get("scores") or {}
        for node in sorted(scored):
            want_plugins, want_total = _node_scores(exp["scores"][node])
            have_plugins, have_total = _node_scores(got_scores.get(node) or {})
            if want_plugins != have_plugins:
                diff = {p: (want_plugins.get(p), have_plugins.get(p)) for p in set(want_plugins) | set(have_plugins)
                        if want_plugins.get(p) != have_plugins.get(p)}
                return f"scores[{node}] (expected, got): {diff}"
            if want_total != have_total:
                return f"scores[{node}]._total: expected {want_total}, got {have_total}"
    elif exp.get("bound_node"):
        if list(got.get("feasible_nodes") or ()) != [exp["bound_node"]]:
            return f"feasible nodes: expected only {exp['bound_node']}, got {got.get('feasible_nodes')}"
    return None


def check_scenario(scenario: str, python: str | None = None) -> list:
    """[(pod, difference or None)] for the decisions of one derived scenario."""
    with open(expected_path(scenario), encoding="utf-8") as f:
        expected = json.load(f)
    doc = simulate(scenario, python)
    if "error" in doc:
        return [(d["pod"], f"simulate failed: {doc['error']}") for d in expected["decisions"]]
    got = doc.get("decisions") or []
    out = []
    for i, exp in enumerate(expected["decisions"]):
        out.append((exp["pod"], compare(exp, got[i]) if i < len(got) else "no decision"))
    return out


def _check(args):
    scenario, python = args
    try:
        return scenario, check_scenario(scenario, python)
    except Exception as err:  # noqa: BLE001 -- one scenario's crash is that scenario's failure
        return scenario, [("?", f"checker error: {type(err).__name__}: {err}")]


def run(paths, python: str | None = None, jobs: int = 1, skip_dra: bool = False, out=sys.stdout) -> tuple:
    """Check every derived scenario under ``paths``; returns (equal, total, scenarios)."""
    scenarios = [s for s in scenario_files(paths) if not (skip_dra and is_dra(s))]
    work = [(s, python) for s in scenarios]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_check, work, chunksize=4))
    else:
        results = [_check(w) for w in work]
    equal = total = 0
    for scenario, decisions in results:
        for pod, diff in decisions:
            total += 1
            if diff is None:
                equal += 1
            else:
                out.write(f"DIFF {os.path.basename(scenario)} {pod}: {diff}\n")
    out.write(f"v1.36 live oracle: {equal}/{total} decisions equal ({len(scenarios)} scenarios)\n")
    return equal, total, len(scenarios)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.conformance.golden_v136", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="derived folders or scenario files")
    ap.add_argument("--python", help="run the implementation as PY -m scheduler_core (default: in this process)")
    ap.add_argument("--jobs", type=int, default=1, help="scenarios checked in parallel")
    ap.add_argument("--skip-dra", action="store_true", help="leave out the dra-* scenarios")
    args = ap.parse_args(argv)
    equal, total, _n = run(args.paths, args.python, args.jobs, args.skip_dra)
    return 0 if equal == total else 1


if __name__ == "__main__":
    sys.exit(main())
