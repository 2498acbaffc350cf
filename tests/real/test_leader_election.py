"""Leader election against the real kube-apiserver v1.36 (tests/envtest.py): two ``kuberun`` replicas on one
Lease, the apiserver restarted (down 5 s and 25 s) and a replica restarted in between, as a Deployment's kubelet
would restart it. No pod may ever be bound twice: the audit log must hold no binding that the apiserver refused,
and each pod exactly one accepted binding."""
from __future__ import annotations

import collections
import subprocess
import sys
import threading
import time

import pytest
from kubernetes import client as kclient
from kubernetes.client.rest import ApiException

from scheduler_core.cluster.kube import KubeCluster
from scheduler_core.cluster.leaderelection import LeaderElector, LeaseLock
from tests.envtest import ROOT
from tests.real.conftest import add_ready_node, wait_for



def _pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


class Replica:
    """A ``kuberun`` process restarted whenever it exits, as a Deployment's pod would be."""

    def __init__(self, kubeconfig, identity: str, log_dir):
        self.kubeconfig, self.identity, self.log_dir = kubeconfig, identity, log_dir
        self.proc = None
        self.exits = []
        self.starts = 0
        self.stopped = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._supervise, daemon=True)

    def start(self) -> "Replica":
        self._spawn()
        self.thread.start()
        return self

    def _spawn(self) -> None:
        self.starts += 1
        log = open(self.log_dir / f"{self.identity}-{self.starts}.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scheduler_core.kuberun", "--kubeconfig", str(self.kubeconfig),
             "--identity", self.identity, "--tie-break", "name"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def _supervise(self) -> None:
        while not self.stopped:
            with self.lock:
                code = self.proc.poll()
                if code is not None and not self.stopped:
                    self.exits.append(code)
                    time.sleep(1.0)
                    if not self.stopped:   # a pod restarts; while the apiserver is away it fails and restarts again
                        self._spawn()
            time.sleep(0.2)

    def restart(self) -> None:
        with self.lock:
            self.proc.terminate()
            self.proc.wait(30)
            self._spawn()

    def stop(self) -> None:
        self.stopped = True
        with self.lock:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def logs(self) -> str:
        return "\n".join(p.read_text() for p in sorted(self.log_dir.glob(f"{self.identity}-*.log")))


def test_two_replicas_through_apiserver_restarts_never_bind_a_pod_twice(control_plane, admin_client, kubelet,
                                                                      tmp_path):
    core = kclient.CoreV1Api(admin_client)
    leases = kclient.CoordinationV1Api(admin_client)
    for i in range(4):
        add_ready_node(admin_client, f"node-{i}", cpu="64", memory="256Gi")

    def holder():
        try:
            return leases.read_namespaced_lease("kube-scheduler", "kube-system").spec.holder_identity
        except Exception:
            return None

    a = Replica(control_plane.kubeconfig, "replica-a", tmp_path).start()
    wait_for(lambda: holder() == "replica-a", 60, what="replica-a to lead")
    b = Replica(control_plane.kubeconfig, "replica-b", tmp_path).start()
    created = []
    stop_creating = threading.Event()

    def create_pods():   # 200 pods, one every 0.2 s, whatever the apiserver is doing
        i = 0
        while i < 200 and not stop_creating.is_set():
            try:
                core.create_namespaced_pod("default", _pod(f"web-{i}"))
                created.append(f"web-{i}")
                i += 1
            except ApiException as err:
                if err.status == 409:
                    created.append(f"web-{i}")
                    i += 1
            except Exception:
                pass   # the apiserver is away
            time.sleep(0.2)
    creator = threading.Thread(target=create_pods, daemon=True)
    creator.start()
    try:
        time.sleep(6)
        control_plane.restart_apiserver(5)
        time.sleep(8)
        b.restart()
        time.sleep(4)
        control_plane.restart_apiserver(25)
        creator.join(180)
        assert len(created) == 200

        def all_bound():
            try:
                pods = core.list_namespaced_pod("default").items
            except Exception:
                return False
            return len(pods) == 200 and all(p.spec.node_name for p in pods)
        wait_for(all_bound, 180, 0.5, "every pod bound")
    finally:
        stop_creating.set()
        a.stop()
        b.stop()
        control_plane.copy_logs(tmp_path / "cp-logs")

    bindings = collections.defaultdict(list)
    for ev in control_plane.audit_events():
        ref = ev.get("objectRef") or {}
        if ev.get("stage") == "ResponseComplete" and ref.get("resource") == "pods" and \
                ref.get("subresource") == "binding":
            bindings[ref["name"]].append((ev.get("responseStatus") or {}).get("code"))
    refused = {name: codes for name, codes in bindings.items() if any(c != 201 for c in codes)}
    logs = a.logs() + b.logs()
    assert not refused, f"bindings the apiserver refused (two binders): {refused}"
    assert all(codes == [201] for codes in bindings.values())
    assert sorted(bindings) == sorted(created)
    assert "already assigned" not in logs
    assert "Traceback" not in logs, logs[-3000:]
    # the 25 s outage outlived the renew deadline: the leader stopped leading and exited 1, as kube-scheduler does
    assert 1 in a.exits + b.exits, (a.exits, b.exits)


def test_a_leader_whose_apiserver_vanishes_stops_writing_within_the_renew_deadline(control_plane, admin_client):
    """Every error of a renewal counts (connection refused is a urllib3 MaxRetryError, not an ApiException):
    the elector's thread goes on, ``leading`` lapses at the renew deadline, and a write past it is refused."""
    cluster = KubeCluster(kubeconfig=str(control_plane.kubeconfig))
    elector = LeaderElector(LeaseLock(cluster, identity="lone"), lease_duration=6, renew_deadline=4,
                            retry_period=0.5)
    cluster.write_fence = elector.valid_for
    stop = threading.Event()
    thread = threading.Thread(target=elector.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_for(lambda: elector.leading, 30, what="the lease")
        control_plane.stop_apiserver()
        lost_at = time.monotonic()
        wait_for(lambda: not elector.leading, 10, 0.02, "leadership to lapse")
        assert time.monotonic() - lost_at <= 4.5
        wait_for(lambda: not thread.is_alive(), 10, what="the elector to stop")
        assert elector.state == "stopped"
        control_plane.start_apiserver()
        from scheduler_core.cluster.simulated import ClusterError
        with pytest.raises(ClusterError, match="not the leader"):
            cluster._write("POST", "/api/v1/namespaces/default/pods", _pod("late"))
        assert kclient.CoreV1Api(admin_client).list_namespaced_pod("default").items == []
    finally:
        stop.set()
        cluster.close()
