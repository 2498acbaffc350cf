"""HTTP extenders against a real local HTTP server: filter, prioritize, bind, errors, time-outs, ignorable."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scheduler import Scheduler
from tests.core.loop_fixtures import node, pod


class ExtenderServer:
    """Answers POST /<verb> from ``self.replies[verb]``: (status, body or raw bytes, delay seconds)."""

    def __init__(self):
        self.replies, self.requests = {}, []
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                verb = self.path.rsplit("/", 1)[-1]
                srv.requests.append((verb, body))
                status, reply, delay = srv.replies[verb](body) if callable(srv.replies[verb]) else srv.replies[verb]
                if delay:
                    threading.Event().wait(delay)
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/ext"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = ExtenderServer()
    yield s
    s.close()


def names(body):
    return body["NodeNames"] if body["NodeNames"] is not None else [n["metadata"]["name"] for n in body["Nodes"]["items"]]


def run(server, pods, ext, nodes=("n1", "n2", "n3")):
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": [dict({"urlPrefix": server.url, "httpTimeout": "500ms"}, **ext)]}
    cluster = SimulatedCluster(nodes=[node(n) for n in nodes], pods=pods, clock=FakeClock())
    sched = Scheduler(cluster, config=load_config(doc, in_tree_registry()), tie_break="name", clock=cluster.clock)
    sched.run_until_idle()
    return cluster, sched


def failed(cluster):
    return [e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"]


def bound(cluster, key):
    ns, name = key.split("/")
    return cluster.get_pod(ns, name).node_name


def test_filter_and_prioritize_change_the_choice(server):
    server.replies["filter"] = lambda b: (200, {"NodeNames": [n for n in names(b) if n != "n1"],
                                               "FailedNodes": {"n1": "kernel too old"}, "Error": ""}, 0)
    server.replies["prioritize"] = (200, [{"Host": "n2", "Score": 1}, {"Host": "n3", "Score": 9}], 0)
    cluster, _ = run(server, [pod("p")], {"filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 2,
                                          "nodeCacheCapable": True})
    assert bound(cluster, "default/p") == "n3"
    verbs = [v for v, _ in server.requests]
    assert verbs == ["filter", "prioritize"]
    assert server.requests[0][1]["Nodes"] is None and sorted(server.requests[0][1]["NodeNames"]) == ["n1", "n2", "n3"]
    assert sorted(server.requests[1][1]["NodeNames"]) == ["n2", "n3"]


def test_failed_nodes_appear_in_the_fit_error(server):
    server.replies["filter"] = lambda b: (200, {"Nodes": {"items": []}, "FailedNodes": {n: "zone quota exhausted" for n in names(b)},
                                               "Error": ""}, 0)
    cluster, _ = run(server, [pod("p")], {"filterVerb": "filter"})
    assert bound(cluster, "default/p") == ""
    assert failed(cluster)[0].startswith("0/3 nodes are available: 3 zone quota exhausted.")


@pytest.mark.parametrize("reply,message", [
    ((500, b"", 0), "failed filter with extender at URL {url}/filter, code 500"),
    ((200, {"Error": "backend unavailable"}, 0), "backend unavailable"),
    ((200, b"{not json", 0), "decoding filter response from extender at URL {url}/filter"),
    ((200, {"NodeNames": []}, 1.5), 'Post "{url}/filter": context deadline exceeded'),
])
def test_non_ignorable_errors_fail_the_cycle(server, reply, message):
    server.replies["filter"] = reply
    cluster, sched = run(server, [pod("p")], {"filterVerb": "filter"})
    assert bound(cluster, "default/p") == ""
    assert failed(cluster) and failed(cluster)[0].startswith(message.format(url=server.url))
    assert sched.queue.describe("default/p")["queue"] == "backoffQ"


def test_ignorable_extender_errors_are_skipped(server):
    server.replies["filter"] = (500, b"", 0)
    cluster, _ = run(server, [pod("p")], {"filterVerb": "filter", "ignorable": True})
    assert bound(cluster, "default/p") == "n1"
    assert not failed(cluster)


def test_prioritize_errors_are_ignored(server):
    server.replies["prioritize"] = (500, b"", 0)
    cluster, _ = run(server, [pod("p")], {"prioritizeVerb": "prioritize", "weight": 1})
    assert bound(cluster, "default/p") == "n1"


def test_successful_extender_bind_binds_the_pod(server):
    """extender.go Bind: the extender made the binding, so the informer's update assigns the pod; no DefaultBinder."""
    server.replies["bind"] = (200, {"Error": ""}, 0)
    cluster, sched = run(server, [pod("p")], {"bindVerb": "bind"}, nodes=("n1",))
    assert [v for v, _ in server.requests] == ["bind"]
    assert server.requests[0][1] == {"PodName": "p", "PodNamespace": "default", "PodUID": "uid-default-p",
                                     "Node": "n1"}
    assert bound(cluster, "default/p") == "n1"
    assert cluster.placements() == {"default/p": "n1"}
    assert not sched.cache.is_assumed_pod(cluster.get_pod("default", "p"))   # confirmed by the informer's update


@pytest.mark.parametrize("reply,message", [
    ((200, {"Error": "bind refused: quota"}, 0), "bind refused: quota"),
    ((500, b"", 0), "failed bind with extender at URL {url}/bind, code 500"),
])
def test_extender_bind_failure_is_a_binding_cycle_error(server, reply, message):
    """handleBindingCycleError: the pod stays unbound, SchedulerError with the extender's text, backoffQ."""
    server.replies["bind"] = reply
    cluster, sched = run(server, [pod("p")], {"bindVerb": "bind"}, nodes=("n1",))
    assert bound(cluster, "default/p") == ""
    assert failed(cluster) == [message.format(url=server.url)]
    assert sched.queue.describe("default/p")["queue"] == "backoffQ"


def test_managed_resources_limit_interest(server):
    server.replies["filter"] = (200, {"NodeNames": []}, 0)
    cluster, _ = run(server, [pod("p")], {"filterVerb": "filter", "nodeCacheCapable": True,
                                          "managedResources": [{"name": "example.com/foo"}]})
    assert server.requests == [] and bound(cluster, "default/p") == "n1"
