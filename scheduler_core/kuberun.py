"""``python -m scheduler_core.kuberun``: the scheduler on a cluster reached through the Kubernetes API.

The cluster is real (a kubeconfig, or the pod's service account with ``--in-cluster``) or a simulated one served
by the dashboard (its Connect page gives the kubeconfig): the same KubeCluster code path drives both. As
kube-scheduler, it takes leader election and the client's QPS/burst from the KubeSchedulerConfiguration
(defaults: leader election on, lease kube-system/kube-scheduler, 15s/10s/2s, 50 QPS, burst 100); the watches run
while it waits for the lease, and it exits when it loses the lease. Binding cycles are asynchronous, as kube's
are: the binding requests run on a pool of ``--binding-workers`` threads while scheduling goes on. ``--shadow``
(observe mode) runs read-only beside another scheduler: it explains the pods that scheduler reports unschedulable
and reports how often the profile agrees with its bindings.

At connect it checks every permission its mode needs (``cluster.permissions``) and exits 1 with one line naming
all the missing ones; an API server that cannot be reached is waited for.
"""
from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time

from .cli_options import add_version_options, read_config, warn_features
from .clock import Clock
from .cluster import permissions
from .cluster.kube import KubeCluster
from .cluster.leaderelection import STOPPED, LeaderElector, LeaseLock, config_seconds
from . import gcpolicy
from .config import ConfigError, config_for
from .scenario import ScenarioError
from .scheduler import Scheduler
from .shadow import ShadowScheduler
from .trace import JsonLinesSink

log = logging.getLogger("scheduler_core.kuberun")
IDLE_WAIT = 0.05
LOST_LEASE_EXIT = 1
BINDING_WORKERS = 16        # threads making binding requests at once (kube: a goroutine per binding cycle)
BINDINGS_DRAIN_SECONDS = 10.0   # how long a loop that ends waits for the binding requests in flight


class KubeSchedulerRunner:
    """The scheduling loop over a KubeCluster: deliver watch events, then run one attempt, while leading."""

    def __init__(self, cluster: KubeCluster, scheduler: Scheduler, elector: LeaderElector | None = None):
        self.cluster = cluster
        self.sched = scheduler
        self.elector = elector
        self.cycles = 0

    def run(self, stop: threading.Event, duration: float | None = None) -> str:
        """Loop until ``stop`` is set ("stopped"), ``duration`` seconds pass ("duration") or the lease is lost
        ("lost lease")."""
        end = time.monotonic() + duration if duration is not None else None
        elector_thread = None
        if self.elector is not None:
            elector_thread = threading.Thread(target=self.elector.run, args=(stop,), name="leader-election",
                                              daemon=True)
            elector_thread.start()
        try:
            return self._loop(stop, end)
        finally:
            self.sched.wait_for_bindings(BINDINGS_DRAIN_SECONDS)
            self.sched.close()
            if elector_thread is not None:
                stop.set()
                elector_thread.join(10)

    def _loop(self, stop: threading.Event, end: float | None) -> str:
        while not stop.is_set():
            if end is not None and time.monotonic() >= end:
                return "duration"
            if self.elector is not None and self.elector.state == STOPPED:
                return "lost lease"
            leading = (self.elector is None or self.elector.leading) and self.cluster.in_sync()
            busy = leading and self.sched.queue.num_poppable() > 0
            self.cluster.pump(0.0 if busy else IDLE_WAIT)
            if not leading:
                self.sched.process_bound()   # the requests in flight when the lease lapsed were fenced
                continue
            self.sched.process_timers()
            self.sched.queue.tick()
            if self.sched.queue.num_poppable() and self.sched.schedule_one() is not None:
                self.cycles += 1
        return "stopped"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m scheduler_core.kuberun", description=__doc__.split("\n\n")[0])
    p.add_argument("--kubeconfig", help="kubeconfig file (default: the configuration's clientConnection.kubeconfig, "
                                        "then $KUBECONFIG or ~/.kube/config)")
    p.add_argument("--context", help="kubeconfig context (default: its current context)")
    p.add_argument("--in-cluster", action="store_true", help="use the pod's service account")
    p.add_argument("--config", help="KubeSchedulerConfiguration v1 file (YAML or JSON)")
    p.add_argument("--leader-elect", choices=("true", "false"),
                   help="override leaderElection.leaderElect of the configuration")
    p.add_argument("--lease-name", help="override leaderElection.resourceName")
    p.add_argument("--lease-namespace", help="override leaderElection.resourceNamespace")
    p.add_argument("--identity", help="leader election identity (default: hostname_uuid)")
    p.add_argument("--lease-duration", type=float, metavar="SECONDS")
    p.add_argument("--renew-deadline", type=float, metavar="SECONDS")
    p.add_argument("--retry-period", type=float, metavar="SECONDS")
    p.add_argument("--qps", type=float, help="override clientConnection.qps")
    p.add_argument("--burst", type=int, help="override clientConnection.burst")
    p.add_argument("--binding-workers", type=int, default=BINDING_WORKERS, metavar="N",
                   help=f"binding requests made at once, while scheduling goes on (default {BINDING_WORKERS}; "
                        "0: each binding cycle right after its scheduling cycle)")
    p.add_argument("--tie-break", choices=("name", "random"), default="random")
    p.add_argument("--seed", type=int)
    p.add_argument("--trace", metavar="FILE", help="write every CycleTrace as JSON lines")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="exit after this long")
    p.add_argument("--shadow", action="store_true",
                   help="read-only: compare the profile's choices with the bindings another scheduler makes")
    p.add_argument("--shadow-of", action="append", metavar="SCHEDULER_NAME",
                   help="whose bindings to compare (repeatable; default: default-scheduler)")
    p.add_argument("--shadow-report", metavar="FILE", help="write the agreement stats and disagreements (JSON)")
    p.add_argument("-v", "--verbose", action="store_true")
    add_version_options(p)
    return p


def _write_report(shadow: ShadowScheduler, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"stats": shadow.stats(), "disagreements": [r.to_dict() for r in shadow.disagreements]}, f,
                  indent=1)


def _refusal(cluster: KubeCluster, needed: list, mode: str, stop: threading.Event) -> str | None:
    """Why the credentials cannot run ``mode`` (None: they can), checked once the API server answers."""
    backoff = cluster.backoff_initial
    while not stop.is_set():
        try:
            lacking = permissions.missing(cluster, needed)
        except permissions.CredentialsRejected as err:
            return f"the API server does not accept the credentials ({err})"
        except Exception as err:   # the API server cannot be reached or fails: wait for it
            cluster.connectivity.failed("permission check", err)
            stop.wait(backoff)
            backoff = min(backoff * 2, cluster.backoff_max)
            continue
        cluster.connectivity.answered("permission check")
        return permissions.lacking_sentence(lacking, mode) if lacking else None
    return None


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    gcpolicy.configure()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from .plugins.registry import in_tree_registry
    registry = in_tree_registry()
    try:
        config = config_for(read_config(args.config) if args.config else None, registry,
                            kube_version=args.kube_version, feature_gates=args.feature_gates)
    except (ConfigError, ScenarioError) as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    warn_features(config.features)
    raw = config.raw or {}
    cc, le = raw.get("clientConnection") or {}, raw.get("leaderElection") or {}
    cluster = KubeCluster(kubeconfig=args.kubeconfig or cc.get("kubeconfig") or None, context=args.context,
                          in_cluster=args.in_cluster, qps=args.qps if args.qps is not None else cc.get("qps", 50.0),
                          burst=args.burst if args.burst is not None else cc.get("burst", 100),
                          read_only=args.shadow, watch_failed_scheduling=args.shadow, kube_version=config.features)
    stop = threading.Event()
    elect = not args.shadow and (args.leader_elect == "true" if args.leader_elect else le.get("leaderElect", True))
    lease = (args.lease_namespace or le.get("resourceNamespace") or "kube-system",
             args.lease_name or le.get("resourceName") or "kube-scheduler")

    def on_signal(*_):
        stop.set()
        cluster.stopping.set()   # also ends the wait for the API server
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    refused = _refusal(cluster, permissions.required(cluster, writes=not args.shadow, lease=lease if elect else None),
                       "observe" if args.shadow else "scheduler", stop)
    if refused:
        sys.stderr.write(f"error: {refused}\n")
        cluster.close()
        return 1
    cluster.start(wait=True)
    if stop.is_set():
        cluster.close()
        return 0
    gcpolicy.settle()
    log.info("watching %s", ", ".join(inf.kind for inf in cluster.informers if inf.available))
    sink = JsonLinesSink(args.trace) if args.trace else None
    try:
        if args.shadow:
            shadow = ShadowScheduler(cluster, config, registry, scheduler_names=args.shadow_of or ["default-scheduler"],
                                     tie_break=args.tie_break, seed=args.seed, trace_sink=sink, order_window=1.0)
            end = time.monotonic() + args.duration if args.duration else None
            while not stop.is_set() and (end is None or time.monotonic() < end):
                if (cluster.pump(0.5) + shadow.judge_due() + len(shadow.observe_pending())) and args.shadow_report:
                    _write_report(shadow, args.shadow_report)
            shadow.judge_bindings()
            if args.shadow_report:
                _write_report(shadow, args.shadow_report)
            log.info("shadow: %s", shadow.stats())
            return 0
        sched = Scheduler(cluster, config, registry=registry, clock=Clock(), tie_break=args.tie_break,
                          seed=args.seed, trace_sink=sink, binding_workers=max(0, args.binding_workers))
        elector = None
        if elect:
            lock = LeaseLock(cluster, *lease, args.identity)
            timing = config_seconds(le)
            elector = LeaderElector(
                lock, args.lease_duration or timing["lease_duration"], args.renew_deadline or timing["renew_deadline"],
                args.retry_period or timing["retry_period"],
                on_started_leading=lambda: log.info("%s: started leading", lock.identity),
                on_new_leader=lambda who: log.info("new leader: %s", who or "<none>"))
            cluster.write_fence = elector.valid_for   # no write once the lease may have passed to another
        outcome = KubeSchedulerRunner(cluster, sched, elector).run(stop, args.duration)
        log.info("scheduler loop ended: %s", outcome)
        return LOST_LEASE_EXIT if outcome == "lost lease" else 0
    finally:
        if sink is not None:
            sink.close()
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
