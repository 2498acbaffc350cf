"""The real Kubernetes control plane (kube-apiserver, etcd, optionally kube-scheduler) for tests, as
controller-runtime's envtest provides it: the binaries come from ``$KUBEBUILDER_ASSETS``, or are unpacked from the
project's sibling ``../shared/envtest`` (its ``unpack`` script; ``SCHEDSCOPE_ENVTEST_SRC`` names another folder).
Tests that need it call ``require_assets()``, which skips them with one line when neither exists.

``ControlPlane`` starts one on free loopback ports through that folder's ``control-plane`` script (fresh etcd
data, a static admin token, RBAC, a metadata audit log), can stop and restart the apiserver alone (same etcd, same
flags) to test what survives an outage, adds token users before start, and reads the audit log. ``FakeKubelet``
does what the missing kubelet would: nodes made Ready, bound pods reported Running.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINARIES = ("etcd", "kube-apiserver", "kube-scheduler")


def envtest_source() -> Path | None:
    """The folder with ``unpack`` and ``control-plane`` (``SCHEDSCOPE_ENVTEST_SRC``, else ../shared/envtest)."""
    for candidate in (os.environ.get("SCHEDSCOPE_ENVTEST_SRC"), ROOT.parent / "shared" / "envtest"):
        if candidate and (Path(candidate) / "control-plane").is_file():
            return Path(candidate)
    return None


def assets() -> Path | None:
    """The directory holding the three binaries, unpacking them once if needed; None when there are none."""
    env = os.environ.get("KUBEBUILDER_ASSETS")
    if env and all((Path(env) / b).is_file() for b in BINARIES):
        return Path(env)
    src = envtest_source()
    if src is None:
        return None
    out = subprocess.run([str(src / "unpack")], capture_output=True, text=True, check=True)
    path = Path(out.stdout.strip().splitlines()[-1])
    os.environ["KUBEBUILDER_ASSETS"] = str(path)
    return path


def require_assets() -> Path:
    """The binaries' directory, or skip the test (one line) when neither $KUBEBUILDER_ASSETS nor
    ../shared/envtest exists, or when the script that starts them (../shared/envtest/control-plane) is missing."""
    found = assets()
    if found is None:
        pytest.skip("no Kubernetes control plane: set KUBEBUILDER_ASSETS or provide ../shared/envtest")
    if envtest_source() is None:
        pytest.skip("no control-plane script: provide ../shared/envtest or set SCHEDSCOPE_ENVTEST_SRC")
    return found


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports() -> tuple[int, int]:
    """An apiserver port P (with P+4000 free for the scheduler's health endpoint) and an etcd port E (E+1 free)."""
    rng = random.Random()
    while True:
        port, eport = rng.randrange(20000, 28000), rng.randrange(30000, 39000)
        if all(_port_free(p) for p in (port, port + 4000, eport, eport + 1)):
            return port, eport


class ControlPlane:
    """One control plane in ``directory`` (see the module doc). ``scheduler``: also run the real kube-scheduler
    (``scheduler_v``: its log level; 10 logs every plugin's score). ``users``: {name: groups} given static tokens
    (``kubeconfig_for(name)``). ``ports``: (apiserver, etcd) ports to use instead of free ones. ``runtime_config``:
    the apiserver's ``--runtime-config`` (alpha APIs)."""

    def __init__(self, directory: Path, scheduler: bool = False, scheduler_v: int = 4, leader_elect: bool = False,
                 feature_gates: str = "", scheduler_config: Path | None = None, users: dict | None = None,
                 ports: tuple | None = None, runtime_config: str = ""):
        self.dir = Path(directory)
        self.ports = ports   # (apiserver, etcd) to listen on; None: free ones (``free_ports``)
        self.scheduler = scheduler
        self.scheduler_v = scheduler_v
        self.leader_elect = leader_elect
        self.feature_gates = feature_gates
        self.runtime_config = runtime_config
        self.scheduler_config = scheduler_config
        self.users = dict(users or {})
        self.port = self.etcd_port = 0
        self.src = envtest_source()
        self.assets = require_assets()
        self._apiserver_cmd = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.dir / "admin.kubeconfig"

    @property
    def audit_log(self) -> Path:
        return self.dir / "logs" / "audit.log"

    @property
    def scheduler_log(self) -> Path:
        return self.dir / "logs" / "kube-scheduler.log"

    def start(self) -> "ControlPlane":
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.users:
            self._write_tokens()
        self.port, self.etcd_port = self.ports or free_ports()
        cmd = [str(self.src / "control-plane"), "start", str(self.dir), "--port", str(self.port),
               "--etcd-port", str(self.etcd_port)]
        if self.scheduler:
            cmd += ["--scheduler", "--scheduler-v", str(self.scheduler_v)]
            if self.leader_elect:
                cmd.append("--leader-elect")
            if self.scheduler_config:
                cmd += ["--scheduler-config", str(self.scheduler_config)]
        if self.feature_gates and not self.runtime_config:
            cmd += ["--feature-gates", self.feature_gates]
        env = dict(os.environ, KUBEBUILDER_ASSETS=str(self.assets))
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
        if out.returncode != 0:
            raise RuntimeError(f"control plane did not start: {out.stderr.strip()[-2000:]}")
        if self.runtime_config:
            # the control-plane script has no --runtime-config: its apiserver (started without the gates, which
            # would wait for the informers of an alpha API it does not serve) is started again with both
            self.stop_apiserver()
            argv, env = self._apiserver_cmd
            extra = [f"--runtime-config={self.runtime_config}"]
            if self.feature_gates:
                extra.append(f"--feature-gates={self.feature_gates}")
            self._apiserver_cmd = ([*argv, *(a.encode() for a in extra)], env)
            self.start_apiserver()
        return self

    def stop(self) -> None:
        """Kill every component at once (the data is thrown away; a graceful apiserver shutdown takes 15 s)."""
        for component in ("kube-scheduler", "kube-apiserver", "etcd"):
            pidfile = self.dir / f"{component}.pid"
            if not pidfile.exists():
                continue
            pid = int(pidfile.read_text())
            if _alive(pid) and _exe_name(pid) == component:
                os.kill(pid, signal.SIGKILL)
                end = time.monotonic() + 10
                while _alive(pid) and time.monotonic() < end:
                    time.sleep(0.02)
            pidfile.unlink()

    def start_scheduler(self, log: Path, config: Path | None = None, verbosity: int = 10,
                        timeout: float = 60.0) -> subprocess.Popen:
        """Run the real kube-scheduler alone against this (running) control plane, with the flags the
        ``control-plane`` script gives it (``config``: its ``--config``, whose ``clientConnection.kubeconfig`` must
        name a kubeconfig); its output goes to ``log``. Returns once its /healthz answers ok; raises RuntimeError
        with the end of its log when it exits first (a configuration it refuses)."""
        cmd = [str(self.assets / "kube-scheduler"), f"--kubeconfig={self.kubeconfig}",
               f"--authentication-kubeconfig={self.kubeconfig}", f"--authorization-kubeconfig={self.kubeconfig}",
               "--bind-address=127.0.0.1", f"--secure-port={self.port + 4000}", "--leader-elect=false",
               f"-v={verbosity}"]
        if config:
            cmd.append(f"--config={config}")
        if self.feature_gates:
            cmd.append(f"--feature-gates={self.feature_gates}")
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        (self.dir / "kube-scheduler.pid").write_text(str(proc.pid))
        import ssl
        import urllib.request
        ctx = ssl._create_unverified_context()   # the scheduler's serving certificate is self-signed
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if proc.poll() is not None:
                raise RuntimeError(f"kube-scheduler exited ({proc.returncode}): "
                                   f"{Path(log).read_text(errors='replace').strip()[-2000:]}")
            try:
                with urllib.request.urlopen(f"https://127.0.0.1:{self.port + 4000}/healthz", timeout=2,
                                            context=ctx) as resp:
                    if resp.read() == b"ok":
                        return proc
            except OSError:
                pass
            time.sleep(0.05)
        self.stop_scheduler()
        raise RuntimeError("kube-scheduler not healthy in time")

    def stop_scheduler(self) -> None:
        """Kill the kube-scheduler of this control plane (``start_scheduler``'s or the script's), if it runs."""
        pidfile = self.dir / "kube-scheduler.pid"
        if not pidfile.exists():
            return
        pid = int(pidfile.read_text())
        if _alive(pid) and _exe_name(pid) == "kube-scheduler":
            os.kill(pid, signal.SIGKILL)
            try:
                os.waitpid(pid, 0)   # our child: reap it
            except ChildProcessError:
                end = time.monotonic() + 10
                while _alive(pid) and time.monotonic() < end:
                    time.sleep(0.02)
        pidfile.unlink()

    def _write_tokens(self) -> None:
        path = self.dir / "tokens.csv"
        lines = path.read_text().splitlines() if path.exists() else []
        known = {line.split(",")[1] for line in lines if line.count(",") >= 2}
        for name, groups in self.users.items():
            if name in known:
                continue
            token = os.urandom(24).hex()
            group_field = f',"{",".join(groups)}"' if groups else ""
            lines.append(f"{token},{name},{name}-uid{group_field}")
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o600)

    def token_of(self, user: str) -> str:
        for line in (self.dir / "tokens.csv").read_text().splitlines():
            parts = line.split(",")
            if len(parts) >= 2 and parts[1] == user:
                return parts[0]
        raise KeyError(user)

    def kubeconfig_for(self, user: str) -> Path:
        """A kubeconfig file for a static-token user (admin: the control plane's own)."""
        if user == "admin":
            return self.kubeconfig
        doc = self.kubeconfig_dict()
        doc["users"] = [{"name": user, "user": {"token": self.token_of(user)}}]
        doc["contexts"][0]["context"]["user"] = user
        path = self.dir / f"{user.replace(':', '-')}.kubeconfig"
        path.write_text(json.dumps(doc))
        path.chmod(0o600)
        return path

    def kubeconfig_dict(self) -> dict:
        import yaml
        return yaml.safe_load(self.kubeconfig.read_text())

    # -- the apiserver alone down and up -------------------------------------------------------------
    def _pid(self, component: str) -> int:
        return int((self.dir / f"{component}.pid").read_text())

    def stop_apiserver(self) -> None:
        """Kill the apiserver at once, as a crash or a lost machine would (etcd and the scheduler stay; a graceful
        shutdown drains for up to a minute); ``start_apiserver`` brings it back as it was."""
        pid = self._pid("kube-apiserver")
        self._apiserver_cmd = (Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0"),
                               dict(os.environ))
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.02)

    def start_apiserver(self, wait: bool = True) -> None:
        argv, env = self._apiserver_cmd
        log = open(self.dir / "logs" / "kube-apiserver.log", "ab")
        proc = subprocess.Popen([a.decode() for a in argv], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        (self.dir / "kube-apiserver.pid").write_text(str(proc.pid))
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float = 120.0) -> None:
        import ssl
        import urllib.request
        ctx = ssl.create_default_context(cafile=str(self.dir / "pki" / "ca.crt"))
        req = urllib.request.Request(self.url + "/readyz", headers={"Authorization": f"Bearer {self.token_of('admin')}"})
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                with urllib.request.urlopen(req, timeout=3, context=ctx) as resp:
                    if resp.read() == b"ok":
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("kube-apiserver not ready")

    def restart_apiserver(self, down_seconds: float) -> None:
        self.stop_apiserver()
        time.sleep(down_seconds)
        self.start_apiserver()

    def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision (what the apiserver does every 5 minutes): a watch
        from an older resourceVersion is then answered 410 Gone. Returns the revision."""
        import base64
        import ssl
        import urllib.request
        pki = self.dir / "pki"
        tls = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        tls.load_cert_chain(str(pki / "etcd-client.crt"), str(pki / "etcd-client.key"))

        def post(path: str, body: dict) -> dict:
            req = urllib.request.Request(f"https://127.0.0.1:{self.etcd_port}{path}", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, context=tls, timeout=30) as resp:
                return json.loads(resp.read())
        revision = int(post("/v3/kv/range", {"key": base64.b64encode(b"/").decode(), "limit": 1})
                       ["header"]["revision"])
        post("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    # -- reading what happened ------------------------------------------------------------------------
    def audit_events(self) -> list:
        """Every audit event so far (metadata level: user, verb, resource, subresource, response code)."""
        out = []
        if self.audit_log.exists():
            for line in self.audit_log.read_text().splitlines():
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass   # a line being written
        return out

    def copy_logs(self, dest: Path) -> None:
        shutil.copytree(self.dir / "logs", dest, dirs_exist_ok=True)


def _exe_name(pid: int) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")).removesuffix(" (deleted)")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie child of ours counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def ready_node(name: str, cpu: str = "4", memory: str = "16Gi", pods: str = "110", labels=None, taints=None,
               kubelet_version: str = "v1.36.2", extra=None) -> tuple[dict, dict]:
    """A Node to create and the status to write to it (the apiserver ignores status on create); ``extra``: more
    allocatable resources (e.g. {"nvidia.com/gpu": "4"})."""
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    body = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                                  **(labels or {})}},
            "spec": {"taints": taints or []}}
    status = {"capacity": alloc, "allocatable": alloc,
              "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                              "message": "kubelet is posting ready status",
                              "lastHeartbeatTime": _now(), "lastTransitionTime": _now()}],
              "nodeInfo": {"kubeletVersion": kubelet_version, "architecture": "amd64", "operatingSystem": "linux",
                           "containerRuntimeVersion": "containerd://2.0.0", "kernelVersion": "6.1.0",
                           "osImage": "Debian", "kubeProxyVersion": "", "bootID": "", "machineID": "",
                           "systemUUID": ""}}
    return body, status


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def add_ready_node(api_client, name: str, **kwargs) -> None:
    """Create a Node, write its Ready status and take off the not-ready taint admission adds (what a kubelet and
    the node lifecycle controller would do)."""
    from kubernetes import client as kclient
    core = kclient.CoreV1Api(api_client)
    body, status = ready_node(name, **kwargs)
    core.create_node(body)
    core.patch_node_status(name, {"status": status})
    node = core.read_node(name)
    taints = [t for t in (node.spec.taints or []) if t.key != "node.kubernetes.io/not-ready"]
    if len(taints) != len(node.spec.taints or []):
        core.patch_node(name, {"spec": {"taints": [api_client.sanitize_for_serialization(t) for t in taints]}})


def ensure_namespace(api_client, name: str) -> None:
    """A namespace with its ``default`` ServiceAccount (no controller-manager makes it)."""
    from kubernetes import client as kclient
    from kubernetes.client.rest import ApiException
    core = kclient.CoreV1Api(api_client)
    for create in (lambda: core.create_namespace({"metadata": {"name": name}}),
                   lambda: core.create_namespaced_service_account(
                       name, {"metadata": {"name": "default"}, "automountServiceAccountToken": False})):
        try:
            create()
        except ApiException as err:
            if err.status != 409:
                raise


class FakeKubelet:
    """Marks bound pods Running (phase, Ready condition, a pod IP) and finishes the graceful deletion of bound pods
    as their kubelet would, from a watch of pods, in a thread; reconnects when the apiserver goes away."""

    def __init__(self, api_client):
        from kubernetes import client as kclient
        self.core = kclient.CoreV1Api(api_client)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="fake-kubelet", daemon=True)
        self.marked = set()

    def __enter__(self) -> "FakeKubelet":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self.thread.join(10)

    def _run(self) -> None:
        from kubernetes import watch
        while not self.stop_event.is_set():
            try:
                pods = self.core.list_pod_for_all_namespaces()
                for p in pods.items:
                    self._maybe_run(p)
                w = watch.Watch()
                for ev in w.stream(self.core.list_pod_for_all_namespaces, resource_version=pods.metadata.resource_version,
                                   timeout_seconds=5):
                    if self.stop_event.is_set():
                        w.stop()
                        break
                    if ev["type"] in ("ADDED", "MODIFIED"):
                        self._maybe_run(ev["object"])
            except Exception:   # the apiserver is away: try again
                self.stop_event.wait(0.5)

    def _maybe_run(self, p) -> None:
        if p.spec.node_name and p.metadata.deletion_timestamp:   # its containers stopped: the deletion finishes
            try:
                self.core.delete_namespaced_pod(p.metadata.name, p.metadata.namespace, grace_period_seconds=0)
            except Exception:
                pass
            return
        if not p.spec.node_name or (p.status and p.status.phase == "Running"):
            return
        key = (p.metadata.namespace, p.metadata.name, p.metadata.uid)
        now = _now()
        n = len(self.marked) + 2
        status = {"phase": "Running", "podIP": f"10.244.{n // 250}.{n % 250 + 1}", "hostIP": "10.0.0.1",
                  "startTime": now,
                  "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                                 for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]}
        try:
            self.core.patch_namespaced_pod_status(p.metadata.name, p.metadata.namespace, {"status": status})
            self.marked.add(key)
        except Exception:
            pass
