"""One store per simulated cluster: two web processes (uvicorn, PostgreSQL) serve the same cluster, the
dashboard's scheduler loop runs in the first, kubectl talks to the second. Whatever one writer stores, every reader
sees: kubectl's pods are scheduled by the loop, the REST API's pods reach kubectl, a watch on one process sees the
other's writes, and a restart keeps objects, resourceVersions and history."""
from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time

import pytest
import yaml
from kubernetes import client as kclient
from kubernetes import config as kconfig
from kubernetes import watch as kwatch

from tests.k8s_api_server import ApiServer, _http, node, pod

from .conftest import database_url, wait_for

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (Debian kubernetes-client) missing")]


@pytest.fixture(scope="module")
def servers(tmp_path_factory, django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        url = database_url()
    one = ApiServer(tmp_path_factory.mktemp("web-one"), url)
    two = ApiServer(tmp_path_factory.mktemp("web-two"), url)
    yield one, two
    one.stop()
    two.stop()


def kubectl_runner(kubeconfig, home):
    env = {"KUBECONFIG": str(kubeconfig), "PATH": "/usr/bin:/bin", "HOME": str(home)}

    def kubectl(*args, check=True):
        res = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, timeout=60)
        if check:
            assert res.returncode == 0, res.stderr
        return res
    return kubectl


def rest(srv, method: str, path: str, body=None):
    status, text = _http(method, f"{srv.url}/api/clusters/{path}", body, token=srv._admin_token())
    return status, (json.loads(text) if text else None)


def test_kubectl_pods_are_scheduled_by_the_dashboards_loop_and_every_process_sees_every_write(servers, tmp_path):
    one, two = servers
    one.create_cluster("truth", {"nodes": [node("n1"), node("n2", cpu="2")], "pods": [], "pending": []})
    kubectl = kubectl_runner(two.kubeconfig("truth"), tmp_path)
    rest(one, "POST", "truth/start/")
    ns_before = kubectl("get", "namespace", "default", "-o", "json").stdout

    # a watch on process one, writes through process two
    events, stop = [], threading.Event()
    api_one = kconfig.new_client_from_config(config_file=str(one.kubeconfig("truth", "watcher")))

    def watch():
        w = kwatch.Watch()
        for ev in w.stream(kclient.CoreV1Api(api_one).list_namespaced_pod, "default", timeout_seconds=60):
            events.append((ev["type"], ev["object"].metadata.name, ev["object"].spec.node_name,
                           int(ev["object"].metadata.resource_version)))
            if stop.is_set():
                w.stop()
    threading.Thread(target=watch, daemon=True).start()
    time.sleep(1.0)

    (tmp_path / "web.yaml").write_text(yaml.safe_dump(pod("web", cpu="1")))
    (tmp_path / "big.yaml").write_text(yaml.safe_dump(pod("big", cpu="16")))
    created = time.monotonic()
    assert kubectl("apply", "-f", str(tmp_path / "web.yaml")).stdout.strip() == "pod/web created"
    assert kubectl("apply", "-f", str(tmp_path / "big.yaml")).stdout.strip() == "pod/big created"

    def web_running():
        out = kubectl("get", "pod", "web", "-o", "wide", "--no-headers").stdout.split()
        return out[2] == "Running" and out[6] in ("n1", "n2")
    wait_for(web_running, 15, what="kubectl to show web Running on a node")
    assert time.monotonic() - created < 10
    # the dashboard's REST API (process one) knows both pods, and tried them
    status, pods = rest(one, "GET", "truth/pods/?page_size=100")
    by_name = {p["name"]: p for p in pods["results"]}
    assert status == 200 and by_name["web"]["node_name"] in ("n1", "n2") and by_name["big"]["node_name"] == ""

    # kubectl describe shows the loop's events, with the messages the pod page shows
    def described(name, text):
        return text in kubectl("describe", "pod", name).stdout
    wait_for(lambda: described("web", "Successfully assigned default/web to"), 10, what="Scheduled in describe")
    wait_for(lambda: described("big", "0/2 nodes are available: 2 Insufficient cpu."), 10,
             what="FailedScheduling in describe")
    wait_for(lambda: described("big", "PodScheduled   False"), 10, what="the scheduler's condition in describe")
    _s, evs = rest(one, "GET", "truth/events/?page_size=100")
    assert any(e["reason"] == "FailedScheduling" and e["pod_name"] == "big" and
               e["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.") for e in evs["results"])
    assert "FailedScheduling" in kubectl("get", "events", "-A").stdout
    # the loop's Events carry kube's null first/last timestamps: kubectl sorts by them instead of finding none
    assert "FailedScheduling" in kubectl("get", "events", "-A", "--sort-by=.lastTimestamp").stdout
    # status.phase tells the unscheduled pod apart (the simulated kubelet runs the bound ones)
    pending = kubectl("get", "pods", "--field-selector=status.phase=Pending", "-o", "name").stdout.split()
    assert pending == ["pod/big"]

    # a pod created through the REST API reaches kubectl, and process one's watch saw two's writes
    status, _body = rest(one, "POST", "truth/pods/", {"manifest": pod("rest-made", cpu="100m")})
    assert status == 201
    wait_for(lambda: "rest-made" in kubectl("get", "pods", "-o", "name").stdout, 5, what="REST pod in kubectl")
    wait_for(lambda: ("MODIFIED", "web") in [(t, n) for t, n, node_, _rv in events if node_], 10,
             what="process one's watch to see web bound")
    assert ("ADDED", "big") in [(t, n) for t, n, _n, _rv in events]
    rvs = [rv for *_x, rv in events]
    assert rvs == sorted(rvs)
    stop.set()

    # deleting through kubectl removes it from the dashboard
    kubectl("delete", "pod", "big")
    wait_for(lambda: "big" not in {p["name"] for p in rest(one, "GET", "truth/pods/?page_size=100")[1]["results"]},
             5, what="big gone from the REST API")

    # restart both processes: same objects, same resourceVersions, same namespace age
    rest(one, "POST", "truth/stop/")
    time.sleep(0.5)
    before = json.loads(kubectl("get", "pods", "-o", "json").stdout)
    list_rv = kclient.CoreV1Api(api_one).list_namespaced_pod("default").metadata.resource_version
    one.stop()
    two.stop()
    one.start()
    two.start()
    after = json.loads(kubectl("get", "pods", "-o", "json").stdout)
    assert [(p["metadata"]["name"], p["metadata"]["resourceVersion"], p["spec"].get("nodeName"))
            for p in before["items"]] == [(p["metadata"]["name"], p["metadata"]["resourceVersion"],
                                           p["spec"].get("nodeName")) for p in after["items"]]
    api_two = kconfig.new_client_from_config(config_file=str(two.kubeconfig("truth", "after-restart")))
    assert int(kclient.CoreV1Api(api_two).list_namespaced_pod("default").metadata.resource_version) >= int(list_rv)
    ns_after = kubectl("get", "namespace", "default", "-o", "json").stdout
    assert json.loads(ns_before)["metadata"]["creationTimestamp"] == \
        json.loads(ns_after)["metadata"]["creationTimestamp"]
    assert described("web", "Successfully assigned default/web to")


def test_an_outside_scheduler_and_the_dashboards_loop_share_a_cluster(servers, tmp_path):
    """kuberun's scheduler (profile ``outside``) through process two, the dashboard's loop in process one: each
    binds the pods of its schedulerName, once, and neither binds a pod the other bound."""
    from scheduler_core.cluster.kube import KubeCluster
    from scheduler_core.config import load_config
    from scheduler_core.kuberun import KubeSchedulerRunner
    from scheduler_core.plugins.registry import in_tree_registry
    from scheduler_core.scheduler import Scheduler

    one, two = servers
    one.create_cluster("shared", {"nodes": [node("n1"), node("n2")], "pods": [], "pending": []})
    rest(one, "POST", "shared/start/")
    kc = two.kubeconfig("shared", "kuberun")
    kube = KubeCluster(kubeconfig=str(kc), qps=0)
    kube.start()
    config = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                          "profiles": [{"schedulerName": "outside"}]}, in_tree_registry())
    runner = KubeSchedulerRunner(kube, Scheduler(kube, config=config, tie_break="name"))
    stop = threading.Event()
    loop = threading.Thread(target=runner.run, args=(stop,), daemon=True)
    loop.start()
    core = kclient.CoreV1Api(kconfig.new_client_from_config(config_file=str(kc)))
    try:
        for i in range(4):
            core.create_namespaced_pod("default", pod(f"mine-{i}", cpu="100m"))
            core.create_namespaced_pod("default", pod(f"theirs-{i}", cpu="100m", scheduler="outside"))

        def all_bound():
            return all(p.spec.node_name for p in core.list_namespaced_pod("default").items)
        wait_for(all_bound, 20, what="every pod bound")
        assert kube.events.flush(10)
        time.sleep(1.0)
        events = core.list_namespaced_event("default").items
        scheduled = sorted((e.involved_object.name, e.reporting_component) for e in events
                           if e.reason == "Scheduled")
        assert scheduled == sorted([(f"mine-{i}", "default-scheduler") for i in range(4)] +
                                   [(f"theirs-{i}", "outside") for i in range(4)])
        _s, cycles = rest(one, "GET", "shared/cycles/?page_size=100")
        assert sorted(c["pod"] for c in cycles["results"]) == [f"default/mine-{i}" for i in range(4)]
    finally:
        stop.set()
        loop.join(10)
        kube.close()
        rest(one, "POST", "shared/stop/")
