#!/usr/bin/env python3
"""Differential harness for pod groups: the real kube-scheduler v1.36.2 with GenericWorkload, GangScheduling and
TopologyAwareWorkloadScheduling on, against Schedscope's scheduling loop at 1.36 with the same gates.

A pod group is scheduled as a whole (the pod-group cycle), so the one-pending-pod vectors of tools/live_oracle.py do
not describe it. Here each scenario (the golden format with ``podgroups``, ``featureGates`` and pods naming their
PodGroup in ``spec.schedulingGroup``) is loaded into the real apiserver (served scheduling.k8s.io/v1alpha2, with the
scenario's gates), the real kube-scheduler is started with them, and the pending pods are created one after the
other in the golden queue order (``BATCH_GAP`` apart). Once every pod has its outcome (bound; refused with a
PodScheduled condition; or kept out of the queue by a PreEnqueue plugin), the harness writes one derived scenario
(the cluster before the first pending pod, every pending pod in creation order) and its expected file: per pod the
node or the message (or the PreEnqueue plugin and message), and each PodGroup's PodGroupScheduled condition.
tests/conformance/gang_v136.py replays it in Schedscope's loop and compares.

    python tools/gang_oracle.py [--out DIR] [--no-compare] SCENARIO.json|DIR ...

The binaries come from ``$KUBEBUILDER_ASSETS`` or ../shared/envtest (tests/envtest.py).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conformance.gang_v136 import check  # noqa: E402
from tests.envtest import ControlPlane  # noqa: E402
from tools.live_oracle import (BATCH_GAP, KIND, KUBERNETES_VERSION, ApiError, Kind, Oracle,  # noqa: E402
                               SchedulerLog, _LogReader, _key, _now, for_create, queue_order, read_scenario,
                               scenario_paths, stored, write_json)

RUNTIME_CONFIG = "scheduling.k8s.io/v1alpha2=true"
WORKLOAD_KINDS = [Kind("workloads", "/apis/scheduling.k8s.io/v1alpha2", "workloads", True),
                  Kind("podgroups", "/apis/scheduling.k8s.io/v1alpha2", "podgroups", True, status=True)]


class GangOracle(Oracle):
    """live_oracle's Oracle on a control plane serving scheduling.k8s.io/v1alpha2 with ``feature_gates``."""

    def __init__(self, workdir: Path, feature_gates: str):
        super().__init__(workdir)
        self.cp = ControlPlane(self.workdir / "cp", feature_gates=feature_gates, runtime_config=RUNTIME_CONFIG)

    def clean(self) -> None:
        for kind in reversed(WORKLOAD_KINDS):
            objs = self.api.items(kind)
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda o, k=kind: self._delete(k, o), objs))
            self._wait(lambda k=kind: not self.api.items(k), 60, f"{kind.plural} not deleted in 60 s")
        super().clean()

    def load(self, scenario: dict, refused: list) -> dict:
        made = super().load(scenario, refused)
        for kind in WORKLOAD_KINDS:
            for obj in scenario.get(kind.array) or ():
                try:
                    self.api.create(kind, for_create(obj))
                except ApiError as err:
                    refused.append({"object": f"{kind.array}/{_key(obj)}", "error": err.message})
        return made

    def state(self, scenario: dict, node_order: list) -> dict:
        out = super().state(scenario, node_order)
        out["featureGates"] = scenario["featureGates"]
        for kind in WORKLOAD_KINDS:
            objs = [stored(o) for o in self.api.items(kind)]
            if objs:
                out[kind.array] = objs
        return out

    def run_groups(self, scenario: dict) -> dict:
        """Run one scenario; returns {"state": derived scenario, "expected": ..., "run": summary}."""
        t0 = time.monotonic()
        self.cp.stop_scheduler()
        self.clean()
        refused = []
        self.load(scenario, refused)
        log_path = self.workdir / f"kube-scheduler-{scenario['name']}.log"
        self.cp.start_scheduler(log_path)
        sched_log = SchedulerLog()
        reader = _LogReader(log_path, sched_log)
        nodes = len(self.api.items(KIND["nodes"]))
        self._wait(lambda: reader.read() or len(sched_log.node_order) >= nodes, 30,
                   "kube-scheduler's cache did not add every node")
        state = self.state(scenario, sched_log.node_order)
        created, last = [], 0.0
        for _k, pod in queue_order(scenario.get("pending") or []):
            time.sleep(max(0.0, last + BATCH_GAP - time.monotonic()))
            try:
                made = self.api.create(KIND["pods"], for_create(pod))
            except ApiError as err:
                refused.append({"object": f"pods/{_key(pod)}", "error": err.message})
                continue
            last = time.monotonic()
            pending = stored(made)
            for key in ("uid", "creationTimestamp"):
                pending["metadata"].pop(key, None)
            created.append(pending)
        state["pending"] = created
        decisions = []
        for pod in created:
            ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
            decision = {"pod": f"{ns}/{name}"}
            try:
                got, gated = self._outcome(ns, name, sched_log, reader)
            except ApiError as err:
                if err.status != 404:
                    raise
                got, gated = {}, None   # deleted: a preemption victim
            if got == {}:
                decision["deleted"] = True
            elif got is None:
                decision["timeout"] = True
            elif gated:
                decision["gated"] = gated
            elif got["spec"].get("nodeName"):
                decision["bound_node"] = got["spec"]["nodeName"]
            else:
                condition = next(c for c in got["status"]["conditions"] if c["type"] == "PodScheduled")
                decision.update(message=condition.get("message"), condition_reason=condition["reason"])
            decisions.append(decision)
        groups = {}
        for group in self.api.items(WORKLOAD_KINDS[1]):
            condition = next((c for c in (group.get("status") or {}).get("conditions") or ()
                              if c["type"] == "PodGroupScheduled"), None)
            groups[_key(group)] = {k: condition[k] for k in ("status", "reason", "message")} if condition else None
        expected = {"scenario": scenario["name"], "kubernetes_version": KUBERNETES_VERSION, "oracle": "live",
                    "feature_gates": scenario["featureGates"], "decisions": decisions, "pod_groups": groups}
        self.cp.stop_scheduler()
        return {"state": state, "expected": expected,
                "run": {"scenario": scenario["name"], "refused": refused, "created_at": _now(),
                        "seconds": round(time.monotonic() - t0, 2)}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tools/gang_oracle.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="+", help="scenario files or directories of *.scenario.json")
    ap.add_argument("--out", type=Path, help="where the derived vectors go (default: a temporary directory)")
    ap.add_argument("--no-compare", action="store_true", help="only write kube's vectors")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="gang-oracle-"))
    (out / "_runs").mkdir(parents=True, exist_ok=True)
    paths = scenario_paths(args.scenarios)
    scenarios = [dict(read_scenario(p), name=p.name.split(".scenario.json")[0]) for p in paths]
    gates = {s["featureGates"] for s in scenarios}
    if len(gates) != 1:
        ap.error(f"the scenarios must name the same featureGates (one control plane): {sorted(gates)}")
    equal = 0
    with tempfile.TemporaryDirectory(prefix="gang-oracle-cp-") as work, GangOracle(Path(work), gates.pop()) as oracle:
        for scenario in scenarios:
            result = oracle.run_groups(scenario)
            base = out / scenario["name"]
            write_json(Path(f"{base}.scenario.json"), result["state"])
            write_json(Path(f"{base}.expected.json"), result["expected"])
            write_json(out / "_runs" / f"{scenario['name']}.json", result["run"])
            line = f"{scenario['name']}: {len(result['expected']['decisions'])} pods"
            if not args.no_compare:
                diffs = check(f"{base}.scenario.json")
                equal += not diffs
                line += ", equal" if not diffs else "".join(f"\n  DIFF {d}" for d in diffs)
            print(line, flush=True)
    if args.no_compare:
        return 0
    print(f"gang oracle: {equal}/{len(scenarios)} scenarios equal in Schedscope at 1.36 (vectors in {out})")
    return 0 if equal == len(scenarios) else 1


if __name__ == "__main__":
    sys.exit(main())
