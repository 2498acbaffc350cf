"""The dashboard's loop driving a REAL cluster (Cluster.kind = real) through KubeCluster: the "real" cluster is a
simulated one served by the Django app's Kubernetes-compatible API (the web process in a subprocess, on the test
database), reached with a stored, encrypted kubeconfig document and the official ``kubernetes`` client."""
from __future__ import annotations

import json
import logging
import threading
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from kubernetes import client as kclient
from kubernetes import config as kconfig

from dashboard.models import Cluster, Node, Pod, SchedulingCycle, SchedulingEvent, ShadowDecision
from dashboard.profiles.models import VersionSpan
from dashboard.services import clusters as svc
from dashboard.services.runner import Runner
from tests.k8s_api_server import ApiServer, node, pod

from .conftest import database_url, small_scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory, django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        url = database_url()
    srv = ApiServer(tmp_path_factory.mktemp("k8sapi-real"), url, bookmark_seconds=1)
    yield srv
    srv.stop()


def upstream(server, name: str):
    """A served cluster with nodes n1 (4 cpu) and n2 (2 cpu): (its kubeconfig text, a CoreV1Api on it)."""
    kc = server.create_cluster(name, {"nodes": [node("n1"), node("n2", cpu="2")], "pods": [], "pending": []})
    return kc.read_text(), kclient.CoreV1Api(kconfig.new_client_from_config(config_file=str(kc)))


def real_cluster(api, name: str, kubeconfig: str, mode: str = "scheduler") -> Cluster:
    resp = api.post("/api/clusters/", {"name": name, "kind": "real", "kubeconfig_document": kubeconfig,
                                       "mode": mode, "tie_break": "name"}, format="json")
    assert resp.status_code == 201, resp.content
    cluster = Cluster.objects.get(name=name)
    assert cluster.kubeconfig_secret and kubeconfig not in cluster.kubeconfig_secret
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.RUNNING)
    return cluster


class LoopThread:
    """The dashboard's Runner of a cluster in a thread of this process, stopped (and joined) by ``stop``."""

    def __init__(self, cluster: Cluster):
        self.runner = Runner(cluster.pk)
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.runner.run()
        except Exception as err:  # noqa: BLE001 - reported by stop()
            self.error = err

    def stop(self):
        self.runner.shutdown = True
        self.thread.join(30)
        assert not self.thread.is_alive(), "the loop did not stop"
        assert self.error is None, self.error


def node_of(core, name: str) -> str:
    return core.read_namespaced_pod(name, "default").spec.node_name or ""


def test_real_cluster_is_scheduled_recorded_and_shown(server, api, client):
    kubeconfig, core = upstream(server, "upstream-a")
    core.create_namespaced_pod("default", pod("web-1", cpu="1"))
    core.create_namespaced_pod("default", pod("huge", cpu="64"))
    core.create_namespaced_pod("default", pod("other", scheduler="someone-else"))
    cluster = real_cluster(api, "prod", kubeconfig)
    loop = LoopThread(cluster)
    try:
        wait_for(lambda: node_of(core, "web-1"), 30, what="web-1 bound through the API server")
        core.create_namespaced_pod("default", pod("web-2", cpu="1"))   # arrives through the watch
        wait_for(lambda: node_of(core, "web-2"), 30, what="web-2 bound through the API server")
        wait_for(lambda: SchedulingCycle.objects.filter(cluster=cluster, pod_name="huge").exists(), 30,
                 what="the failed cycle of huge")
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="web-2", queue=Pod.BOUND).exists(), 30,
                 what="web-2's row bound")
        lease = kclient.CoordinationV1Api(core.api_client).read_namespaced_lease("kube-scheduler", "kube-system")
        assert lease.spec.holder_identity.startswith("schedscope-")
    finally:
        loop.stop()
    assert loop.runner.cycles >= 3
    # MostAllocated is not set: LeastAllocated puts web-1 on the emptier n1 (4 cpu)
    assert node_of(core, "web-1") == "n1"
    assert node_of(core, "other") == ""
    cycles = {c.pod_name: c for c in SchedulingCycle.objects.filter(cluster=cluster).order_by("seq")}
    assert cycles["web-1"].result == "scheduled" and cycles["web-1"].node == "n1"
    assert cycles["web-1"].num_nodes == 2 and cycles["web-1"].num_feasible == 2
    assert cycles["web-2"].result == "scheduled" and cycles["web-2"].node == node_of(core, "web-2")
    assert cycles["huge"].result == "unschedulable" and cycles["huge"].node == ""
    assert "Insufficient cpu" in cycles["huge"].message
    assert "other" not in cycles
    events = {(e.reason, e.pod_name): e for e in SchedulingEvent.objects.filter(cluster=cluster)}
    assert events[("Scheduled", "web-1")].message == "Successfully assigned default/web-1 to n1"
    assert events[("Scheduled", "web-1")].cycle_seq == cycles["web-1"].seq
    assert events[("FailedScheduling", "huge")].type == "Warning"
    # the mirror: both nodes; our pods (bound with their cycle, or pending), not the other scheduler's
    assert sorted(Node.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["n1", "n2"]
    rows = {p.name: p for p in Pod.objects.filter(cluster=cluster)}
    assert set(rows) == {"web-1", "web-2", "huge"}
    assert rows["web-1"].node_name == "n1" and rows["web-1"].last_cycle == cycles["web-1"].seq
    assert rows["huge"].node_name == "" and rows["huge"].attempts >= 1 and "cpu" in rows["huge"].reason
    # the API server got the events too (KubeCluster's own writes)
    api_events = kclient.EventsV1Api(core.api_client).list_namespaced_event("default").items
    assert any(e.reason == "Scheduled" and e.regarding.name == "web-1" for e in api_events)
    # the lease was given up when the loop stopped
    lease = kclient.CoordinationV1Api(core.api_client).read_namespaced_lease("kube-scheduler", "kube-system")
    assert not lease.spec.holder_identity
    # pages
    overview = client.get("/clusters/prod/")
    assert overview.status_code == 200 and "huge" in overview.content.decode()
    page = client.get("/clusters/prod/pods/default/web-1/").content.decode()
    assert "n1" in page and "Successfully assigned default/web-1 to n1" in page
    page = client.get("/clusters/prod/pods/default/huge/").content.decode()
    assert "Insufficient cpu" in page
    pending = client.get("/clusters/prod/pending/").content.decode()
    assert "huge" in pending and "web-1" not in pending
    nodes = client.get("/clusters/prod/nodes/n1/").content.decode()
    assert "web-1" in nodes
    # what only a simulated cluster takes from the dashboard is refused with a clear error
    resp = api.post("/api/clusters/prod/nodes/", {"manifest": node("n3")}, format="json")
    assert resp.status_code == 400 and "is a real cluster" in resp.json()["kind"][0]
    resp = api.delete("/api/clusters/prod/pods/default/huge/")
    assert resp.status_code == 400 and "through its API server" in resp.json()["kind"][0]
    assert Pod.objects.filter(cluster=cluster, name="huge").exists()


def test_another_leader_keeps_the_loop_from_scheduling(server, api):
    kubeconfig, core = upstream(server, "upstream-b")
    leases = kclient.CoordinationV1Api(core.api_client)
    leases.create_namespaced_lease("kube-system", kclient.V1Lease(
        metadata=kclient.V1ObjectMeta(name="kube-scheduler"),
        spec=kclient.V1LeaseSpec(holder_identity="another-replica", lease_duration_seconds=3600)))
    core.create_namespaced_pod("default", pod("web-1"))
    cluster = real_cluster(api, "prod-b", kubeconfig)
    loop = LoopThread(cluster)
    try:
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="web-1").exists(), 30, what="the mirrored pod")
        loop.thread.join(3)   # time enough for several cycles, were it leading
        assert loop.runner.engine.leading is False
    finally:
        loop.stop()
    assert node_of(core, "web-1") == ""
    assert not SchedulingCycle.objects.filter(cluster=cluster).exists()
    assert leases.read_namespaced_lease("kube-scheduler", "kube-system").spec.holder_identity == "another-replica"


def test_shadow_mode_on_a_real_cluster_records_decisions(server, api):
    kubeconfig, core = upstream(server, "upstream-c")
    core.create_namespaced_pod("default", pod("p1", cpu="1"))
    core.create_namespaced_pod("default", pod("p2", cpu="1"))
    cluster = real_cluster(api, "prod-shadow", kubeconfig, mode="shadow")
    loop = LoopThread(cluster)
    try:
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="p1").exists(), 30, what="the mirrored pod")
        # someone else binds p1 to n2; the profile would choose n1 (more free cpu)
        core.create_namespaced_pod_binding("p1", "default", kclient.V1Binding(
            metadata=kclient.V1ObjectMeta(name="p1"), target=kclient.V1ObjectReference(kind="Node", name="n2")),
            _preload_content=False)
        decision = wait_for(lambda: ShadowDecision.objects.filter(cluster=cluster, pod_name="p1").first(), 30,
                            what="the shadow decision")
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="p1", node_name="n2").exists(), 30,
                 what="p1's row bound")
        loop.thread.join(1)
    finally:
        loop.stop()
    assert decision.actual_node == "n2" and decision.shadow_node == "n1" and not decision.agree
    assert decision.actual_feasible and decision.profile == "default-scheduler"
    cycle = SchedulingCycle.objects.get(cluster=cluster, seq=decision.cycle_seq)
    assert cycle.pod_name == "p1" and cycle.node == "n1" and cycle.num_nodes == 2
    # read-only: nothing else bound, no lease taken, no cycle of its own
    assert node_of(core, "p2") == ""
    assert SchedulingCycle.objects.filter(cluster=cluster).count() == 1
    with pytest.raises(kclient.ApiException) as err:
        kclient.CoordinationV1Api(core.api_client).read_namespaced_lease("kube-scheduler", "kube-system")
    assert err.value.status == 404


def _with_token(kubeconfig: str, token: str) -> str:
    doc = yaml.safe_load(kubeconfig)
    old = doc["users"][0]["user"]["token"]
    doc["users"][0]["user"]["token"] = token
    server = doc["clusters"][0]["cluster"]["server"]
    doc["clusters"][0]["cluster"]["server"] = server.replace(old, token)
    return yaml.safe_dump(doc)


def test_refused_cluster_stops_and_unreachable_one_waits_with_a_clear_error(server, api, caplog):
    kubeconfig, _core = upstream(server, "upstream-d")
    wrong = "f" * 48
    cluster = real_cluster(api, "prod-wrong", _with_token(kubeconfig, wrong))
    caplog.set_level(logging.WARNING, logger="dashboard.runner")
    assert Runner(cluster.pk).run() is True   # returns: no exception reaches the worker
    ev = SchedulingEvent.objects.get(cluster=cluster, reason="ClusterUnavailable")
    assert ev.type == "Warning"
    assert ev.message == ("cluster prod-wrong: the API server does not accept the credentials (editors of the "
                          "cluster see why)")
    assert ev.detail.startswith("cluster prod-wrong: the API server does not accept the credentials "
                                "(401 Unauthorized")
    assert f"kubeconfig set: server http://127.0.0.1:{server.port}" in ev.detail
    assert wrong not in ev.detail and wrong not in caplog.text
    assert "the scheduler loop stops" in caplog.text
    assert Cluster.objects.get(pk=cluster.pk).desired_state == Cluster.STOPPED

    doc = yaml.safe_load(kubeconfig)
    doc["clusters"][0]["cluster"]["server"] = "http://127.0.0.1:1/clusters/x/k8s/t/" + "e" * 48
    gone = real_cluster(api, "prod-gone", yaml.safe_dump(doc))
    assert Runner(gone.pk).run() is True
    ev = SchedulingEvent.objects.get(cluster=gone, reason="ClusterUnavailable")
    assert ev.message == "cluster prod-gone: the API server cannot be reached (editors of the cluster see why)"
    assert ev.detail.startswith("cluster prod-gone: the API server cannot be reached (Failed to establish a new "
                                "connection: [Errno 111] Connection refused)")
    assert "e" * 48 not in ev.detail and "e" * 48 not in caplog.text
    # the server may come back: the cluster stays running, and the watchdog starts its loop again later
    assert Cluster.objects.get(pk=gone.pk).desired_state == Cluster.RUNNING


def _stops_unavailable(cluster: Cluster) -> str:
    """Run the cluster's loop: it returns (no traceback reaches the worker), the cluster is stopped with one
    ClusterUnavailable warning, whose message for every viewer says the kubeconfig cannot be used; its detail."""
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.RUNNING)
    assert Runner(cluster.pk).run() is True
    assert Cluster.objects.get(pk=cluster.pk).desired_state == Cluster.STOPPED
    ev = SchedulingEvent.objects.get(cluster=cluster, reason="ClusterUnavailable")
    assert ev.type == "Warning"
    assert ev.message == f"cluster {cluster.name}: unusable kubeconfig (editors of the cluster see why)"
    return ev.detail


def test_a_kubeconfig_file_that_is_no_kubeconfig_stops_the_cluster_cleanly(tmp_path, caplog):
    broken = tmp_path / "broken.yaml"
    broken.write_text("clusters: [a\nusers: {")
    caplog.set_level(logging.ERROR, logger="dashboard.runner")
    for name, path, why in (
            ("passwd", "/etc/passwd", "file /etc/passwd: expected a kubeconfig (a YAML object with clusters, users "
                                      "and contexts)"),
            ("broken", str(broken), f"file {broken}: not valid YAML at line 2, column 6: expected ',' or ']', but "
                                    "got ':'"),
            ("missing", str(tmp_path / "nothing"), f"file {tmp_path / 'nothing'} cannot be read: No such file or "
                                                   "directory")):
        cluster = Cluster.objects.create(name=name, kind=Cluster.REAL, kubeconfig=path)
        assert _stops_unavailable(cluster) == f"cluster {name}: unusable kubeconfig: {why}"
    assert "root:" not in caplog.text and "Traceback" not in caplog.text


def test_a_stored_token_file_sends_nothing(tmp_path):
    """A document stored before file fields were refused, naming a file of the worker (here a stand-in for the
    SECRET_KEY file) and a server on loopback: the loop stops before any request."""
    from dashboard import crypto
    secret = tmp_path / "secret_key"
    secret.write_text("the-servers-secret-key")
    got = []

    class Catcher(ThreadingHTTPServer):
        pass

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            got.append(self.headers.get("Authorization"))
            self.send_response(401)
            self.end_headers()

        def log_message(self, *args):
            pass
    catcher = Catcher(("127.0.0.1", 0), Handler)
    threading.Thread(target=catcher.serve_forever, daemon=True).start()
    try:
        text = yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{catcher.server_port}"}}],
            "users": [{"name": "u", "user": {"tokenFile": str(secret)}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]})
        cluster = Cluster.objects.create(name="leaky", kind=Cluster.REAL, kubeconfig_secret=crypto.encrypt(text),
                                         kubeconfig_summary="server on loopback")
        assert _stops_unavailable(cluster) == (
            "cluster leaky: unusable kubeconfig: users[0].user.tokenFile: not accepted: the workers would read a "
            "file of theirs; use token")
    finally:
        catcher.shutdown()
        catcher.server_close()
    assert got == []


def test_switching_a_running_real_cluster_to_shadow_hands_the_lease_back(server, api):
    kubeconfig, core = upstream(server, "upstream-e")
    core.create_namespaced_pod("default", pod("p1", cpu="1"))
    cluster = real_cluster(api, "prod-switch", kubeconfig)
    leases = kclient.CoordinationV1Api(core.api_client)
    loop = LoopThread(cluster)
    try:
        wait_for(lambda: node_of(core, "p1"), 30, what="p1 bound in scheduler mode")
        first = loop.runner.engine
        assert api.patch("/api/clusters/prod-switch/", {"mode": "shadow"}, format="json").status_code == 200
        wait_for(lambda: loop.runner.engine is not first and loop.runner.engine.shadow is not None, 30,
                 what="the loop to reload in shadow mode")
        assert not leases.read_namespaced_lease("kube-scheduler", "kube-system").spec.holder_identity
        core.create_namespaced_pod("default", pod("p2", cpu="1"))
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="p2").exists(), 30, what="the mirrored p2")
        core.create_namespaced_pod_binding("p2", "default", kclient.V1Binding(
            metadata=kclient.V1ObjectMeta(name="p2"), target=kclient.V1ObjectReference(kind="Node", name="n1")),
            _preload_content=False)
        decision = wait_for(lambda: ShadowDecision.objects.filter(cluster=cluster, pod_name="p2").first(), 30,
                            what="the shadow decision")
    finally:
        loop.stop()
    assert decision.actual_node == "n1"
    assert first.cluster.stopping.is_set()   # the scheduler-mode engine stopped watching
    assert SchedulingCycle.objects.filter(cluster=cluster, pod_name="p1", result="scheduled").count() == 1


def test_worker_survives_an_unreachable_cluster(server, api, worker_factory):
    worker = worker_factory()
    kubeconfig, _core = upstream(server, "upstream-f")
    doc = yaml.safe_load(kubeconfig)
    doc["clusters"][0]["cluster"]["server"] = "http://127.0.0.1:1/"
    gone = real_cluster(api, "prod-down", yaml.safe_dump(doc))
    Cluster.objects.filter(pk=gone.pk).update(desired_state=Cluster.STOPPED)
    svc.set_state(gone, Cluster.RUNNING)
    # the server may come back: the cluster stays running and the watchdog starts its loop again; the outage is
    # a Warning event (written after the log line: waiting for the line alone is too early)
    events = wait_for(lambda: list(SchedulingEvent.objects.filter(cluster=gone, reason="ClusterUnavailable")), 90,
                      what="the ClusterUnavailable event")
    assert [(ev.type, ev.message.split(" (")[0]) for ev in events] == [
        ("Warning", "cluster prod-down: the API server cannot be reached")]
    assert "cluster prod-down: the API server cannot be reached" in worker.text()
    assert Cluster.objects.get(pk=gone.pk).desired_state == Cluster.RUNNING
    # the same worker goes on driving another cluster
    sim = Cluster.objects.create(name="after-outage", tie_break="name")
    svc.load_scenario(sim, small_scenario(4), "test")
    svc.set_state(sim, Cluster.RUNNING)
    wait_for(lambda: Pod.objects.filter(cluster=sim, name__startswith="web-").exclude(node_name="").count() == 4,
             60, what="the simulated cluster scheduled by the same worker")
    assert worker.proc.poll() is None
    svc.set_state(sim, Cluster.STOPPED)
    svc.set_state(gone, Cluster.STOPPED)


def test_a_real_cluster_with_no_version_set_follows_its_api_servers(server, api, client):
    kubeconfig, core = upstream(server, "upstream-v")
    Cluster.objects.filter(name="upstream-v").update(kube_version="1.30")   # its API reports v1.30.0
    core.create_namespaced_pod("default", pod("web-1", cpu="1"))
    cluster = real_cluster(api, "follower", kubeconfig)
    assert cluster.kube_version == ""
    loop = LoopThread(cluster)
    try:
        wait_for(lambda: node_of(core, "web-1"), 30, what="web-1 bound through the API server")
    finally:
        loop.stop()
    cluster.refresh_from_db()
    assert cluster.server_version == "v1.30.0+schedscope"
    assert list(VersionSpan.objects.filter(cluster=cluster).values_list("kube_version", flat=True)) == ["1.30"]
    page = client.get("/clusters/follower/").content.decode()
    assert "Kubernetes 1.30 (kube-scheduler v1.30.0&#x27;s rules)" in page
    assert "API server v1.30.0+schedscope (the scheduler follows it" in page


def test_why_a_cluster_is_unavailable_is_told_to_its_editors_only(tmp_path, monkeypatch):
    """A kubeconfig path that names no file (whether a file exists is the workers' business) and a remote API
    server's own words: every surface that shows events gives a viewer the neutral message, the cluster's editors
    and admins the detail: the cluster's page, the events page, the REST API, the live stream (neutral for all)."""
    from dashboard.models import ClusterMembership
    from dashboard.services import broadcast

    from .conftest import api_client, make_user, page_client

    sent = []
    monkeypatch.setattr(broadcast, "publish", lambda group, message: sent.append(message))
    missing = tmp_path / "nothing"
    cluster = Cluster.objects.create(name="hidden-file", kind=Cluster.REAL, kubeconfig=str(missing))
    detail = _stops_unavailable(cluster)
    assert detail == f"cluster hidden-file: unusable kubeconfig: file {missing} cannot be read: No such file or " \
                     "directory"
    neutral = "cluster hidden-file: unusable kubeconfig (editors of the cluster see why)"
    viewer, editor, other = make_user("viewer"), make_user("member"), make_user("other-editor")
    ClusterMembership.objects.create(user=editor, cluster=cluster, role=ClusterMembership.EDITOR)
    other_cluster = Cluster.objects.create(name="elsewhere")
    ClusterMembership.objects.create(user=other, cluster=other_cluster, role=ClusterMembership.EDITOR)
    admin = make_user("boss")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    for user, sees in ((viewer, neutral), (other, neutral), (editor, detail), (admin, detail)):
        hidden = detail if sees == neutral else neutral
        client = page_client(user)
        for url in (f"/clusters/{cluster.name}/", f"/clusters/{cluster.name}/events/"):
            page = client.get(url).content.decode()
            assert escape(sees) in page and escape(hidden) not in page, (user.username, url)
        [ev] = api_client(user).get(f"/api/clusters/{cluster.name}/events/").json()["results"]
        assert ev["message"] == sees, user.username
    assert "No such file" not in json.dumps(sent)
    assert [e["message"] for m in sent for e in m.get("events", ())] == [neutral]
