"""Per-plugin conformance against the golden vectors, isolated from the other plugins.

For each decision the pod is scheduled by our framework, then the plugin under test is compared
on its own: its PreFilter status, its Filter verdict on every node, and its raw and normalized
scores over the *expected* feasible nodes. The expected bound node is then assumed, so one plugin's
divergence does not cascade. Usage: python tests/conformance/plugin_conformance.py PLUGIN [DIR...]
"""
from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from scheduler_core.framework.cycle_state import CycleState  # noqa: E402
from scheduler_core.framework.status import Code  # noqa: E402
from scheduler_core.scenario import load_scenario  # noqa: E402
from scheduler_core.simulate import Simulation  # noqa: E402

GOLDEN = os.path.join(ROOT, "tests", "golden")


def _st(st):
    return {"code": "Success", "reasons": []} if st is None else {"code": str(st.code), "reasons": list(st.reasons)}


def check_plugin(plugin: str, scenario_path: str):
    """Yield (decision index, pod, difference text) for each mismatch of ``plugin``."""
    expected = json.load(open(scenario_path.replace(".scenario.json", ".expected.json")))
    if "decisions" not in expected:
        return
    sim = Simulation(load_scenario(scenario_path), tie_break="name")
    pods = {p.key: p for p in sim.scenario.pending_pods}
    for i, dec in enumerate(expected["decisions"]):
        pod = pods[dec["pod"]]
        fwk = sim.frameworks[pod.scheduler_name]
        pl = fwk.get_plugin(plugin)
        if pl is None:
            return
        state = CycleState()
        _res, fst = fwk.run_pre_filter(state, pod)
        exp_pf = dec["prefilter"].get("plugins", {}).get(plugin)
        if fst is not None and fst.code != Code.SUCCESS and fst.plugin == plugin:
            got = dict(_st(fst), plugin=fst.plugin)
            want = dec["prefilter"]["framework"]
            if got != want:
                yield i, dec["pod"], f"prefilter framework: expected {want}, got {got}"
        skip = plugin in state.skip_filter_plugins
        if exp_pf is not None:
            # The oracle runs each PreFilter plugin on its own fresh CycleState (the framework may stop early).
            _own_res, own_st = pl.pre_filter(CycleState(), pod)
            own_skip = own_st is not None and own_st.code == Code.SKIP
            if exp_pf["skip"] != own_skip:
                yield i, dec["pod"], f"prefilter skip: expected {exp_pf['skip']}, got {own_skip}"
        if dec["filter"] and (fst is None or fst.code == Code.SUCCESS) and hasattr(pl, "filter") \
                and plugin in fwk.list_plugins()["filter"]:
            for node, per in dec["filter"].items():
                want = per.get(plugin)
                if want is None:
                    continue
                got = {"code": "Skip", "reasons": []} if skip else _st(pl.filter(state, pod, sim.snapshot.get(node)))
                if got["code"] != want["code"] or got["reasons"] != want.get("reasons", []):
                    yield i, dec["pod"], f"filter[{node}]: expected {want}, got {got}"
                    break
        feasible = [sim.snapshot.get(n) for n in dec["feasible_nodes"]]
        in_score = any(s["name"] == plugin for s in fwk.list_plugins()["score"])
        if feasible and in_score and (fst is None or fst.code == Code.SUCCESS):
            pre_skip = plugin in dec["prescore_skip_plugins"]
            st = pl.pre_score(state, pod, feasible) if hasattr(pl, "pre_score") else None
            got_skip = st is not None and st.code == Code.SKIP
            if got_skip != pre_skip:
                yield i, dec["pod"], f"prescore skip: expected {pre_skip}, got {got_skip}"
            elif not pre_skip:
                raw = [pl.score(state, pod, ni)[0] for ni in feasible]
                pairs = [[ni.name, s] for ni, s in zip(feasible, raw)]
                ext = pl.score_extensions()
                if ext is not None:
                    ext.normalize_score(state, pod, pairs)
                for ni, r, (_n, s) in zip(feasible, raw, pairs):
                    want = dec["scores"][ni.name][plugin]
                    if (r, s) != (want["raw"], want["normalized"]):
                        yield i, dec["pod"], (f"score[{ni.name}]: expected raw {want['raw']} norm "
                                              f"{want['normalized']}, got raw {r} norm {s}")
                        break
        if dec["bound_node"]:
            # Reserve as the oracle does (VolumeBinding assumes the chosen PVs), then assume the pod.
            if fwk.run_reserve(state, pod, dec["bound_node"]) is not None:
                fwk.run_unreserve(state, pod, dec["bound_node"])
            sim.assume(pod, dec["bound_node"])


def scenarios(dirs):
    for d in dirs:
        for f in sorted(os.listdir(d)):
            if f.endswith(".scenario.json"):
                yield os.path.join(d, f)


def main(argv):
    plugin = argv[0]
    dirs = argv[1:] or [os.path.join(GOLDEN, "core"), os.path.join(GOLDEN, "config")]
    bad = total = 0
    for path in scenarios(dirs):
        total += 1
        try:
            diffs = list(check_plugin(plugin, path))
        except Exception as exc:  # report and go on: this is a development tool
            diffs = [(-1, "-", f"crash: {type(exc).__name__}: {exc}")]
        if diffs:
            bad += 1
            i, pod, text = diffs[0]
            print(f"{os.path.basename(path)}: {len(diffs)} mismatches; first: decision {i} ({pod}): {text}")
    print(f"{plugin}: {total - bad}/{total} scenarios match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
