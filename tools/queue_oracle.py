#!/usr/bin/env python3
"""Differential check of the scheduling queue at 1.36: the real kube-scheduler v1.36.2 and Schedscope's loop go
through the same cluster changes, and after each one the harness compares how often each pod was attempted and
which pods are bound.

A pod's attempts count the "Attempting to schedule pod" lines of kube-scheduler's log (-v=10) and Schedscope's
cycle traces; which attempts happen is what the queueing hints, the in-flight events and the backoffQ decide
(a rejected pod that no hint requeues is not attempted again). The cluster starts with a small node, a tainted
large one and pods that each fail for one reason (resources, taint, scheduling gate, pod anti-affinity, host
port); then nodes are added, relabelled and untainted, a gate is removed and bound pods are deleted. Nodes are made
as the harness's apiserver makes them (created with the not-ready taint, then Ready, then untainted: three
events), and Schedscope is given the same events. Kube's pod moves between its queues ("Pod moved to an internal
scheduling queue") are printed too.

    python tools/queue_oracle.py [--settle SECONDS] [--steps queue|preemption]

``--steps preemption`` goes through a preemption instead: two low-priority pods fill a node, then a high-priority
pod preempts both (victims deleted at once: terminationGracePeriodSeconds 0, as no kubelet runs), then another
low-priority pod comes; at 1.36 the victims are deleted asynchronously while DefaultPreemption's PreEnqueue holds
the preemptor.

The binaries come from ``$KUBEBUILDER_ASSETS`` or ../shared/envtest (tests/envtest.py). Exit status 1 when a step
differs.
"""
from __future__ import annotations

import argparse
import copy
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubernetes import client as kclient, config as kconfig  # noqa: E402

from scheduler_core.clock import FakeClock  # noqa: E402
from scheduler_core.cluster.simulated import SimulatedCluster  # noqa: E402
from scheduler_core.objects import Node, Pod  # noqa: E402
from scheduler_core.scheduler import Scheduler  # noqa: E402
from scheduler_core.trace import CallbackSink  # noqa: E402
from tests import envtest  # noqa: E402

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
DEDICATED = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
ANTI_AFFINITY = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
ATTEMPT = re.compile(r'"Attempting to schedule pod" pod="default/([^"]+)"')
MOVE = re.compile(r'"Pod moved to an internal scheduling queue" pod="default/([^"]+)" event="([^"]+)" '
                  r'queue="([^"]+)"')


def pod(name, cpu, gates=None, ports=None, labels=None, affinity=None, priority=None) -> dict:
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}
    if ports:
        container["ports"] = [{"containerPort": p, "hostPort": p} for p in ports]
    spec = {"containers": [container]}
    if priority is not None:   # the class admission resolves, and the value it writes
        spec.update(priorityClassName=f"p{priority}", priority=priority, terminationGracePeriodSeconds=0)
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}}, "spec": spec}


# (what happens, [actions]): ("node", name, cpu, taints), ("pod", body), ("label", node, labels), ("untaint", node),
# ("ungate", pod), ("delete", pod)
STEPS = [
    ("n1 (2 cpu) and nt (8 cpu, tainted); pods big (3 cpu), needs6 (6 cpu), gated, db1 and db2 (anti-affinity), "
     "web1 and web2 (host port 80)",
     [("node", "n1", "2", None), ("node", "nt", "8", DEDICATED),
      ("pod", pod("big", "3")), ("pod", pod("needs6", "6")), ("pod", pod("gated", "100m", gates=["wait"])),
      ("pod", pod("db1", "100m", labels={"app": "db"}, affinity=ANTI_AFFINITY)),
      ("pod", pod("db2", "100m", labels={"app": "db"}, affinity=ANTI_AFFINITY)),
      ("pod", pod("web1", "100m", ports=[80])), ("pod", pod("web2", "100m", ports=[80]))]),
    ("node n2 (2 cpu) added", [("node", "n2", "2", None)]),
    ("n1 relabelled", [("label", "n1", {"zone": "a"})]),
    ("nt untainted", [("untaint", "nt")]),
    ("gated's scheduling gate removed", [("ungate", "gated")]),
    ("db1 deleted", [("delete", "db1")]),
    ("web1 deleted", [("delete", "web1")]),
]
PREEMPTION_STEPS = [
    ("n1 (2 cpu); low1 and low2 (700m each, priority 100)",
     [("priorityclass", 100), ("priorityclass", 1000), ("node", "n1", "2", None),
      ("pod", pod("low1", "700m", priority=100)), ("pod", pod("low2", "700m", priority=100))]),
    ("high (1500m, priority 1000) preempts low1 and low2", [("pod", pod("high", "1500m", priority=1000))]),
    ("low3 (700m, priority 100) finds no room", [("pod", pod("low3", "700m", priority=100))]),
]
STEP_SETS = {"queue": STEPS, "preemption": PREEMPTION_STEPS}


def run_kube(workdir: Path, settle: float, steps) -> tuple[list, list]:
    """[(attempts per pod, {pod: node or None})] after each step, and kube's queue moves."""
    cp = envtest.ControlPlane(workdir, scheduler=True, scheduler_v=10).start()
    try:
        api = kconfig.new_client_from_config(str(cp.kubeconfig))
        core = kclient.CoreV1Api(api)
        envtest.ensure_namespace(api, "default")
        out = []
        for _what, actions in steps:
            for action in actions:
                kind, *args = action
                if kind == "priorityclass":
                    kclient.SchedulingV1Api(api).create_priority_class(
                        {"metadata": {"name": f"p{args[0]}"}, "value": args[0]})
                elif kind == "node":
                    name, cpu, taints = args
                    envtest.add_ready_node(api, name, cpu=cpu, taints=taints)
                elif kind == "pod":
                    core.create_namespaced_pod("default", args[0])
                elif kind == "label":
                    core.patch_node(args[0], {"metadata": {"labels": args[1]}})
                elif kind == "untaint":
                    core.patch_node(args[0], {"spec": {"taints": []}})
                elif kind == "ungate":
                    core.patch_namespaced_pod(args[0], "default", {"spec": {"schedulingGates": None}})
                else:
                    core.delete_namespaced_pod(args[0], "default", grace_period_seconds=0)
            time.sleep(settle)
            attempts = {}
            for name in ATTEMPT.findall(cp.scheduler_log.read_text(errors="replace")):
                attempts[name] = attempts.get(name, 0) + 1
            bound = {p.metadata.name: p.spec.node_name for p in core.list_namespaced_pod("default").items}
            preempted = sorted(e.involved_object.name for e in core.list_namespaced_event("default").items
                               if e.reason == "Preempted")
            out.append((attempts, bound, preempted))
        return out, MOVE.findall(cp.scheduler_log.read_text(errors="replace"))
    finally:
        cp.stop()


def run_schedscope(settle: float, steps) -> list:
    """The same steps through Schedscope's loop at 1.36 on a simulated cluster, ``settle`` seconds of its clock
    after each."""
    clock = FakeClock(1000.0)
    cluster = SimulatedCluster([], [], clock=clock)
    attempts = {}
    sched = Scheduler(cluster, clock=clock, tie_break="name", kube_version="1.36", trace_sink=CallbackSink(
        lambda tr: attempts.__setitem__(tr.pod.name, attempts.get(tr.pod.name, 0) + 1)))
    nodes = {}

    def node_event(raw, add=False):
        nodes[raw["metadata"]["name"]] = raw
        (cluster.add_node if add else cluster.update_node)(Node(raw))
        sched.run_until_idle()

    out = []
    for _what, actions in steps:
        for action in actions:
            kind, *args = action
            if kind == "priorityclass":
                continue   # the pods carry their priority
            if kind == "node":
                name, cpu, taints = args
                body, status = envtest.ready_node(name, cpu=cpu, taints=taints)
                created = copy.deepcopy(body)
                created["spec"]["taints"] = list(taints or []) + [NOT_READY]   # admission's not-ready taint
                node_event(created, add=True)
                node_event(dict(created, status=status))
                node_event(dict(created, spec=dict(created["spec"], taints=list(taints or [])), status=status))
            elif kind == "pod":
                cluster.add_pod(Pod(args[0]))
            elif kind == "label":
                raw = copy.deepcopy(nodes[args[0]])
                raw["metadata"]["labels"].update(args[1])
                node_event(raw)
            elif kind == "untaint":
                raw = copy.deepcopy(nodes[args[0]])
                raw["spec"]["taints"] = []
                node_event(raw)
            elif kind == "ungate":
                raw = copy.deepcopy(cluster.pods[f"default/{args[0]}"].raw)
                raw["spec"].pop("schedulingGates", None)
                cluster.update_pod(Pod(raw))
            else:
                cluster.delete_pod(cluster.pods[f"default/{args[0]}"])
            sched.run_until_idle()
        end = clock.now() + settle
        while True:
            sched.queue.tick()
            sched.run_until_idle()
            t = sched.next_wakeup()
            if t is None or t > end:
                break
            clock.set(max(t, clock.now()))
        clock.set(end)
        sched.queue.tick()
        sched.run_until_idle()
        out.append((dict(attempts), {p.name: p.node_name or None for p in cluster.pods.values()},
                    sorted(e["object"].split("/", 1)[1] for e in cluster.events if e["reason"] == "Preempted")))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--settle", type=float, default=5.0, help="seconds each step is given (default 5: the 1 s "
                                                                  "initial backoff and its flush, with room)")
    ap.add_argument("--steps", choices=sorted(STEP_SETS), default="queue", help="which cluster changes (default "
                                                                                 "queue)")
    args = ap.parse_args(argv)
    steps = STEP_SETS[args.steps]
    with tempfile.TemporaryDirectory(prefix="queue-oracle-") as tmp:
        kube, moves = run_kube(Path(tmp) / "cp", args.settle, steps)
    ours = run_schedscope(args.settle, steps)
    equal = 0
    for (what, _actions), (k_attempts, k_bound, k_pre), (o_attempts, o_bound, o_pre) in zip(steps, kube, ours):
        same = k_attempts == o_attempts and k_pre == o_pre and {p: bool(n) for p, n in k_bound.items()} == \
            {p: bool(n) for p, n in o_bound.items()}
        equal += same
        print(f"{'equal' if same else 'DIFFERENT'}: {what}")
        print(f"  kube-scheduler: attempts {dict(sorted(k_attempts.items()))}, bound {dict(sorted(k_bound.items()))}, "
              f"preempted {k_pre}")
        print(f"  Schedscope:     attempts {dict(sorted(o_attempts.items()))}, bound {dict(sorted(o_bound.items()))}, "
              f"preempted {o_pre}")
    print("kube-scheduler's queue moves (pod, event, queue):", moves)
    print(f"queue oracle: {equal}/{len(steps)} steps with the same attempts per pod, bound pods and preempted pods")
    return 0 if equal == len(steps) else 1


if __name__ == "__main__":
    sys.exit(main())
