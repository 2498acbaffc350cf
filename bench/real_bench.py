"""Binding speed through the real control plane: the real kube-scheduler and Schedscope (``kuberun``) on one
real v1.36 kube-apiserver (tests/envtest.py: ``$KUBEBUILDER_ASSETS`` or ../shared/envtest), in the same run.

    python bench/real_bench.py [--pods 1000] [--nodes 50] [--qps 1000] [--burst 1000] [--rounds 1]
                               [--binding-workers N] [--json]

Both schedulers run from the start with clientConnection qps/burst ``--qps``/``--burst`` and no leader election:
kube-scheduler serves schedulerName default-scheduler, ``kuberun`` serves ``schedscope``. For each round and each
scheduler (kube first, then Schedscope, alternating), ``--pods`` pods of that scheduler are created in a namespace
of their own by 16 threads sharing one client limited to ``--qps`` requests a second (as a Deployment's burst
would arrive), and a watch notes when each is seen bound. Reported per scheduler: the time from the first create
to the last binding, the pods bound per second over it, the time the creates took, and the median and p99 of
create-to-bound (from the pod's create call returning to its binding seen on the watch). Without a kubelet, bound
pods stay Pending; the nodes are big enough for every pod. ``--binding-workers`` is passed to ``kuberun`` (0:
each binding cycle right after its scheduling cycle, for comparison).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubernetes import client as kclient  # noqa: E402
from kubernetes import config as kconfig  # noqa: E402
from kubernetes import watch as kwatch  # noqa: E402

from scheduler_core.cluster.kube import RateLimiter  # noqa: E402
from tests.envtest import ControlPlane, add_ready_node, ensure_namespace, require_assets  # noqa: E402

CREATORS = 16
SCHEDSCOPE = "schedscope"


def _pod(name: str, scheduler: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler, "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def _config(path: Path, scheduler: str, kubeconfig: Path, qps: float, burst: int) -> Path:
    path.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": qps, "burst": burst},
        "leaderElection": {"leaderElect": False}, "profiles": [{"schedulerName": scheduler}]}))
    return path


class BoundWatch:
    """A watch of one namespace's pods in a thread: when each pod was first seen with a node."""

    def __init__(self, api_client, namespace: str):
        self.core = kclient.CoreV1Api(api_client)
        self.namespace = namespace
        self.bound = {}
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(30)

    def _run(self) -> None:
        rv = self.core.list_namespaced_pod(self.namespace).metadata.resource_version
        while not self.stop.is_set():
            w = kwatch.Watch()
            self.ready.set()
            for ev in w.stream(self.core.list_namespaced_pod, self.namespace, resource_version=rv,
                               timeout_seconds=5):
                pod = ev["object"]
                rv = pod.metadata.resource_version
                if pod.spec.node_name and pod.metadata.name not in self.bound:
                    self.bound[pod.metadata.name] = time.monotonic()
                if self.stop.is_set():
                    w.stop()
                    break

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)


def one_run(admin, namespace: str, scheduler: str, pods: int, qps: float, timeout: float) -> dict:
    """Create ``pods`` pods of ``scheduler`` at ``qps``; times until every one is bound."""
    ensure_namespace(admin, namespace)
    core = kclient.CoreV1Api(admin)
    watch = BoundWatch(admin, namespace)
    limiter = RateLimiter(qps, 1)
    created = {}

    def create(i: int) -> None:
        limiter.acquire()
        name = f"p-{i:05d}"
        core.create_namespaced_pod(namespace, _pod(name, scheduler))
        created[name] = time.monotonic()
    start = time.monotonic()
    with ThreadPoolExecutor(CREATORS) as pool:
        list(pool.map(create, range(pods)))
    creates_done = time.monotonic()
    end = start + timeout
    while len(watch.bound) < pods and time.monotonic() < end:
        time.sleep(0.02)
    watch.close()
    bound = dict(watch.bound)
    if len(bound) < pods:
        return {"scheduler": scheduler, "bound": len(bound), "pods": pods, "error": f"timed out after {timeout}s"}
    latencies = sorted(bound[n] - created[n] for n in created)
    total = max(bound.values()) - start
    return {"scheduler": scheduler, "pods": pods, "bound": len(bound), "seconds": round(total, 2),
            "pods_per_s": round(pods / total, 1), "creates_s": round(creates_done - start, 2),
            "p50_s": round(statistics.median(latencies), 3),
            "p99_s": round(latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 3)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pods", type=int, default=1000)
    p.add_argument("--nodes", type=int, default=50)
    p.add_argument("--qps", type=float, default=1000.0)
    p.add_argument("--burst", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--binding-workers", type=int, help="kuberun's --binding-workers (default: its own)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    require_assets()
    work = Path(tempfile.mkdtemp(prefix="schedscope-real-bench-"))
    kubeconfig = work / "cp" / "admin.kubeconfig"
    cp = ControlPlane(work / "cp", scheduler=True, scheduler_config=_config(
        work / "kube-scheduler.json", "default-scheduler", kubeconfig, args.qps, args.burst)).start()
    kuberun = None
    try:
        cfg = kclient.Configuration()
        kconfig.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
        cfg.connection_pool_maxsize = CREATORS + 4
        admin = kclient.ApiClient(cfg)
        ensure_namespace(admin, "default")
        for i in range(args.nodes):
            add_ready_node(admin, f"node-{i:03d}", cpu="64", memory="256Gi", pods="1000")
        log = open(work / "kuberun.log", "w")
        cmd = [sys.executable, "-m", "scheduler_core.kuberun", "--tie-break", "random", "--config",
               str(_config(work / "schedscope.json", SCHEDSCOPE, kubeconfig, args.qps, args.burst))]
        if args.binding_workers is not None:
            cmd += ["--binding-workers", str(args.binding_workers)]
        kuberun = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        end = time.monotonic() + 60
        while "watching" not in (work / "kuberun.log").read_text() and time.monotonic() < end:
            if kuberun.poll() is not None:
                raise RuntimeError((work / "kuberun.log").read_text()[-2000:])
            time.sleep(0.1)
        results = []
        for r in range(args.rounds):
            for scheduler in ("default-scheduler", SCHEDSCOPE):
                run = one_run(admin, f"{scheduler}-{r}", scheduler, args.pods, args.qps, args.timeout)
                results.append(dict(run, round=r))
                if not args.json:
                    print(json.dumps(results[-1]), flush=True)
        summary = {"pods": args.pods, "nodes": args.nodes, "qps": args.qps, "burst": args.burst,
                   "binding_workers": args.binding_workers, "runs": results}
        kube = [x["seconds"] for x in results if x["scheduler"] == "default-scheduler" and "seconds" in x]
        ours = [x["seconds"] for x in results if x["scheduler"] == SCHEDSCOPE and "seconds" in x]
        if kube and ours:
            summary["ratio"] = round(statistics.median(ours) / statistics.median(kube), 2)
        print(json.dumps(summary, indent=None if args.json else 1))
        return 0
    finally:
        if kuberun is not None:
            os.killpg(kuberun.pid, 15)
            kuberun.wait(30)
        cp.stop()


if __name__ == "__main__":
    sys.exit(main())
