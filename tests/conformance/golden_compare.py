"""Decision-by-decision comparison with kube-scheduler golden vectors (rules of tests/golden/core/README.md)."""
from __future__ import annotations

import json
import os

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")


def _status(d):
    return {k: d.get(k) for k in ("code", "plugin", "reasons") if k in d}


def _cut_preemption(msg):
    if msg is None:
        return None
    i = msg.find(" preemption:")
    return msg if i < 0 else msg[:i]


def diff_decision(exp: dict, got: dict, preemption: bool = True):
    """The first difference between an expected and an actual decision, or None."""
    if got.get("pod") != exp["pod"]:
        return f"pod order: expected {exp['pod']}, got {got.get('pod')}"
    if exp["prefilter"]["framework"] != got["prefilter"]["framework"]:
        return f"prefilter.framework: expected {exp['prefilter']['framework']}, got {got['prefilter']['framework']}"
    if sorted(exp["feasible_nodes"]) != sorted(got["feasible_nodes"]):
        return f"feasible_nodes: expected {exp['feasible_nodes']}, got {got['feasible_nodes']}"
    for node, st in exp["filter_framework"].items():
        want = _status(st)
        have = {k: got["filter_framework"].get(node, {}).get(k) for k in want}
        if want != have:
            return f"filter_framework[{node}]: expected {want}, got {have}"
    for node, plugins in exp["filter"].items():
        for plugin, st in plugins.items():
            have = got["filter"].get(node, {}).get(plugin)
            want = {"code": st["code"], "reasons": st.get("reasons", [])}
            if have is None or {"code": have["code"], "reasons": have.get("reasons", [])} != want:
                return f"filter[{node}][{plugin}]: expected {want}, got {have}"
    if exp["feasible_nodes"]:
        for node, plugins in exp["scores"].items():
            for plugin, sc in plugins.items():
                have = got["scores"].get(node, {}).get(plugin)
                if plugin == "_total":
                    if have != sc:
                        return f"scores[{node}]._total: expected {sc}, got {have}"
                    continue
                want = {k: sc[k] for k in ("raw", "normalized", "weighted")}
                if have is None or {k: have.get(k) for k in want} != want:
                    return f"scores[{node}][{plugin}]: expected {want}, got {have}"
        if sorted(exp["top_nodes"]) != sorted(got["top_nodes"]):
            return f"top_nodes: expected {exp['top_nodes']}, got {got['top_nodes']}"
    if exp["bound_node"] != got["bound_node"]:
        return f"bound_node: expected {exp['bound_node']}, got {got['bound_node']}"
    if bool(exp["unschedulable"]) != bool(got["unschedulable"]):
        return f"unschedulable: expected {exp['unschedulable']}, got {got['unschedulable']}"
    if exp["unschedulable"]:
        pre = exp.get("preemption") or {}
        if not preemption:
            if pre.get("nominated_node"):
                return None
            if _cut_preemption(exp["message"]) != _cut_preemption(got["message"]):
                return f"message: expected {exp['message']!r}, got {got['message']!r}"
            return None
        if exp["message"] != got["message"]:
            return f"message: expected {exp['message']!r}, got {got['message']!r}"
        if pre.get("nominated_node"):
            have = got.get("preemption") or {}
            options = [(o["node"], sorted(o["victims"])) for o in pre.get("possible_nominations") or
                       [{"node": pre["nominated_node"], "victims": pre.get("victims") or []}]]
            if (have.get("nominated_node"), sorted(have.get("victims") or [])) not in options:
                return f"preemption: got {have.get('nominated_node')} {have.get('victims')}, expected one of {options}"
    return None


def scenario_paths(subdir: str):
    d = os.path.join(GOLDEN, subdir)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".scenario.json"))


def expected_for(path: str) -> dict:
    with open(path.replace(".scenario.json", ".expected.json"), encoding="utf-8") as f:
        return json.load(f)
