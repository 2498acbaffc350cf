"""Extenders as an attack tool, each attack replayed: other schemes (file reads), link-local and cloud-metadata
addresses (by literal or by DNS name), redirects, URLs outside the allow list, huge texts in messages, an
unbounded httpTimeout, and a hanging extender that must let its caller go when asked."""
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.extender import HTTPExtender
from scheduler_core.extender_http import ExtenderPolicy
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scheduler import Scheduler
from tests.core.loop_fixtures import node, pod
from tests.core.test_extender import ExtenderServer, bound, failed, names


@pytest.fixture
def server():
    s = ExtenderServer()
    yield s
    s.close()


def run(url, ext, policy=None, nodes=("n1", "n2", "n3")):
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": [dict({"urlPrefix": url, "httpTimeout": "500ms"}, **ext)]}
    cluster = SimulatedCluster(nodes=[node(n) for n in nodes], pods=[pod("p")], clock=FakeClock())
    sched = Scheduler(cluster, config=load_config(doc, in_tree_registry()), tie_break="name", clock=cluster.clock,
                      extender_policy=policy)
    sched.run_until_idle()
    return cluster, sched


def only_failure(cluster, sched) -> str:
    """The pod's one FailedScheduling message; it went back to the queue, as after any extender error."""
    assert bound(cluster, "default/p") == ""
    assert sched.queue.describe("default/p")["queue"] == "backoffQ"
    (message,) = failed(cluster)
    return message


def test_only_http_and_https_no_file_reads(tmp_path):
    """file:// + a verb read files: whether it exists and how it parses showed in the message."""
    (tmp_path / "secret").write_text("root:x:0:0\n")
    messages = [only_failure(*run(f"file://{tmp_path}", {"filterVerb": verb})) for verb in ("secret", "missing")]
    assert messages == [f'Post "file://{tmp_path}/secret": unsupported protocol scheme "file"',
                        f'Post "file://{tmp_path}/missing": unsupported protocol scheme "file"']


@pytest.mark.parametrize("host", ["169.254.169.254", "[fd00:ec2::254]", "[fe80::1]", "2852039166",
                                  "[::ffff:169.254.169.254]", "[::169.254.169.254]", "[64:ff9b::169.254.169.254]",
                                  "[2002:a9fe:a9fe::1]", "[2001:0:a9fe:a9fe::1]",
                                  "[2001:0:4136:e378:8000:63bf:5601:5601]"])
def test_link_local_and_metadata_literals_are_refused(host):
    t0 = time.monotonic()
    message = only_failure(*run(f"http://{host}/ext", {"filterVerb": "filter"}))
    assert "is link-local or a cloud metadata address: refused for extenders" in message, message
    assert time.monotonic() - t0 < 0.4   # refused, not tried until the 500 ms time-out


def test_a_dns_name_resolving_to_the_metadata_address_is_refused_at_connect(monkeypatch, server):
    """The check holds on the address connected to, not on the name in the URL."""
    real = socket.getaddrinfo
    port = int(server.url.split(":")[2].split("/")[0])

    def fake(host, *args, **kw):
        if host in ("metadata.test", "ext.test"):
            if (kw.get("flags", 0) if len(args) < 4 else args[3]) & socket.AI_NUMERICHOST:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            ip = "169.254.169.254" if host == "metadata.test" else "127.0.0.1"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, args[0] if args else port))]
        return real(host, *args, **kw)
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    message = only_failure(*run("http://metadata.test/ext", {"filterVerb": "filter"}))
    assert message == ('Post "http://metadata.test/ext/filter": dial tcp 169.254.169.254:80: address 169.254.169.254 '
                       "is link-local or a cloud metadata address: refused for extenders")
    # a name for a loopback extender works (loopback stays allowed: the golden extenders listen there)
    server.replies["filter"] = lambda b: (200, {"NodeNames": names(b)[1:]}, 0)
    cluster, _ = run(f"http://ext.test:{port}/ext", {"filterVerb": "filter", "nodeCacheCapable": True})
    assert bound(cluster, "default/p") == "n2"


class Redirector:
    """Answers every POST with a redirect to /leak, which records any request that follows it."""

    def __init__(self, status):
        self.followed = []
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                if self.path.endswith("/leak"):
                    srv.followed.append(self.command)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(status)
                self.send_header("Location", "/leak")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):
                srv.followed.append(self.command)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/ext"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("status", [302, 303, 307])
def test_redirects_are_not_followed(status):
    srv = Redirector(status)
    try:
        message = only_failure(*run(srv.url, {"filterVerb": "filter"}))
    finally:
        srv.close()
    assert message == f"failed filter with extender at URL {srv.url}/filter, code {status}"
    assert srv.followed == []


def test_urls_outside_the_allow_list_are_refused(server):
    server.replies["filter"] = (200, {"Error": "local service says hello"}, 0)
    base = server.url.rsplit("/", 1)[0]
    policy = ExtenderPolicy(allowed_prefixes=(f"{base}/ex",))
    for url in (server.url, f"{base}/ex/../ext"):   # "/ext" is not under "/ex"; nor is a climb out of it
        message = only_failure(*run(url, {"filterVerb": "filter"}, policy))
        assert message.startswith(f'Post "{url}/filter": ') and "local service" not in message, message
    assert server.requests == []
    allowed = ExtenderPolicy(allowed_prefixes=(f"{base}/ext",))
    assert only_failure(*run(server.url, {"filterVerb": "filter"}, allowed)) == "local service says hello"


def test_extender_text_in_messages_is_cut(server):
    policy = ExtenderPolicy(max_text=100)
    server.replies["filter"] = (200, {"Error": "E" * 100_000}, 0)
    message = only_failure(*run(server.url, {"filterVerb": "filter"}, policy))
    assert message == "E" * 100 + "... (99900 more characters cut)"
    server.replies["filter"] = lambda b: (200, {"NodeNames": [], "FailedNodes": {n: "R" * 5000 for n in names(b)}}, 0)
    cluster, _ = run(server.url, {"filterVerb": "filter", "nodeCacheCapable": True}, policy)
    (message,) = failed(cluster)
    assert message.startswith("0/3 nodes are available: 3 " + "R" * 100 + "... (4900 more characters cut).")


@pytest.mark.parametrize("configured,cap,expected", [
    ("0s", None, 5.0), ("-5s", None, None), ("8760h", None, 8760 * 3600.0),
    ("8760h", 30.0, 30.0), ("-5s", 30.0, 30.0), ("2s", 30.0, 2.0)])
def test_http_timeout_as_kube_takes_it_capped_by_the_policy(configured, cap, expected):
    """kube validates neither bound (validateExtenders; v1 defaults set none): 0 means 5 s, a negative one no
    time-out at all (Go's http.Client); the deployment's cap bounds both."""
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": [{"urlPrefix": "http://127.0.0.1:1/x", "filterVerb": "f", "httpTimeout": configured}]}
    (ext,) = load_config(doc, in_tree_registry()).extenders
    assert HTTPExtender(ext, ExtenderPolicy(max_timeout=cap)).timeout == expected


def test_a_year_long_http_timeout_is_cut_to_the_cap(server):
    server.replies["filter"] = (200, {"NodeNames": []}, 5)
    t0 = time.monotonic()
    message = only_failure(*run(server.url, {"filterVerb": "filter", "httpTimeout": "8760h"},
                                ExtenderPolicy(max_timeout=0.3)))
    assert time.monotonic() - t0 < 2
    assert message == f'Post "{server.url}/filter": context deadline exceeded (Client.Timeout exceeded while ' \
                      "awaiting headers)"


@pytest.mark.parametrize("ignorable", [False, True])
def test_a_hanging_call_is_given_up_when_the_caller_asks(server, ignorable):
    """A loop told to stop (or pause, or reload) leaves a hanging extender within a poll; the attempt fails with
    the extender's error and the pod is requeued, even behind an ignorable extender (nothing is decided)."""
    server.replies["filter"] = (200, {"NodeNames": []}, 30)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    t0 = time.monotonic()
    message = only_failure(*run(server.url, {"filterVerb": "filter", "httpTimeout": "8760h", "ignorable": ignorable},
                                ExtenderPolicy(cancelled=stop.is_set)))
    assert time.monotonic() - t0 < 1.0
    assert message == f'Post "{server.url}/filter": context canceled'


def test_a_canceled_prioritize_call_fails_the_attempt(server):
    """kube ignores prioritize errors, but a canceled call decides nothing: no binding without the scores."""
    server.replies["prioritize"] = (200, [], 30)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    message = only_failure(*run(server.url, {"prioritizeVerb": "prioritize", "weight": 1},
                                ExtenderPolicy(cancelled=stop.is_set)))
    assert message == f'Post "{server.url}/prioritize": context canceled'


@pytest.mark.parametrize("ip, refused", [
    ("::ffff:169.254.169.254", True), ("::169.254.169.254", True), ("64:ff9b::169.254.169.254", True),
    ("2002:a9fe:a9fe::1", True), ("2001:0:a9fe:a9fe::1", True), ("2001:0:4136:e378:8000:63bf:5601:5601", True),
    ("fe80::1%eth0", True), ("10.0.0.1", False), ("::1", False), ("2001:db8::1", False),
    ("64:ff9b::8.8.8.8", False), ("2002:808:808::1", False), ("not an address", False)])
def test_the_outbound_policy_sees_link_local_in_every_ipv6_embedding(ip, refused):
    from scheduler_core.outbound import refused_address
    assert refused_address(ip) is refused


def test_an_extender_answer_over_the_cap_is_not_read_whole(server):
    policy = ExtenderPolicy(max_response_bytes=1000)
    server.replies["filter"] = (200, {"NodeNames": ["n1"], "Error": "x" * 5000}, 0)
    message = only_failure(*run(server.url, {"filterVerb": "filter"}, policy))
    assert message == f"filter response from extender at URL {server.url}/filter is larger than 1000 bytes"
    server.replies["filter"] = (200, {"NodeNames": ["n1", "n2", "n3"]}, 0)
    cluster, _ = run(server.url, {"filterVerb": "filter", "nodeCacheCapable": True}, policy)
    assert bound(cluster, "default/p") == "n1"

