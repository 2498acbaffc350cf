"""kube's nodeports/node_ports_test.go, case by case: TestNodePorts (PreFilter, then Filter on the NodeInfo),
TestPreFilterDisabled (Filter without PreFilter: an Error wrapping "not found") and TestGetContainerPorts (the host
ports collected from pods' containers; here Pod.host_ports, normalized to (hostIP, protocol, hostPort) with kube's
defaults 0.0.0.0 and TCP)."""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.nodeports import ERR_REASON, NodePorts

from .plugin_cases import SUCCESS, make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/nodeports/node_ports_test.go"
UPSTREAM_VERSION = "v1.30-v1.33 era (index id 267480149: framework.Status, feature.Features, st.MakePod)"
UPSTREAM_CASES = 15
UPSTREAM_NOT_TRANSLATED = {
    "Test_isSchedulableAfterPodDeleted": "5 queueing-hint cases; SchedulerQueueingHints is off in v1.30 and "
                                         "scheduler_core has no queueing hints",
}


def ports_container(ports):
    """st.MakePod().ContainerPort(ports): one more container with these ports."""
    return {"name": "container", "image": "pause", "ports": [dict(p) for p in ports]}


def new_pod(host, *infos):
    """newPod(host, "PROTO/ip/port"...)."""
    ports = []
    for info in infos:
        proto, ip, port = info.split("/")
        ports.append({"hostIP": ip, "hostPort": int(port), "protocol": proto})
    w = make_pod().node(host)
    w.raw["spec"]["containers"].append(ports_container(ports))
    return w


U = (Code.UNSCHEDULABLE, [ERR_REASON])

# (name, pod, pods on the node, want PreFilter, want Filter)
CASES = [
    ("skip filter", make_pod(), [], (Code.SKIP, []), None),
    ("other port", new_pod("m1", "UDP/127.0.0.1/8080"), [new_pod("m1", "UDP/127.0.0.1/9090")], SUCCESS, SUCCESS),
    ("same udp port", new_pod("m1", "UDP/127.0.0.1/8080"), [new_pod("m1", "UDP/127.0.0.1/8080")], SUCCESS, U),
    ("same tcp port", new_pod("m1", "TCP/127.0.0.1/8080"), [new_pod("m1", "TCP/127.0.0.1/8080")], SUCCESS, U),
    ("different host ip", new_pod("m1", "TCP/127.0.0.1/8080"), [new_pod("m1", "TCP/127.0.0.2/8080")], SUCCESS,
     SUCCESS),
    ("different protocol", new_pod("m1", "UDP/127.0.0.1/8080"), [new_pod("m1", "TCP/127.0.0.1/8080")], SUCCESS,
     SUCCESS),
    ("second udp port conflict", new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     [new_pod("m1", "UDP/127.0.0.1/8080")], SUCCESS, U),
    ("first tcp port conflict", new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     [new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")], SUCCESS, U),
    ("first tcp port conflict due to 0.0.0.0 hostIP", new_pod("m1", "TCP/0.0.0.0/8001"),
     [new_pod("m1", "TCP/127.0.0.1/8001")], SUCCESS, U),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     [new_pod("m1", "TCP/127.0.0.1/8001")], SUCCESS, U),
    ("second tcp port conflict to 0.0.0.0 hostIP", new_pod("m1", "TCP/127.0.0.1/8001"),
     [new_pod("m1", "TCP/0.0.0.0/8001")], SUCCESS, U),
    ("second different protocol", new_pod("m1", "UDP/127.0.0.1/8001"), [new_pod("m1", "TCP/0.0.0.0/8001")], SUCCESS,
     SUCCESS),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", new_pod("m1", "UDP/127.0.0.1/8001"),
     [new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")], SUCCESS, U),
]


@pytest.mark.parametrize("p, existing, want_pre, want_filter", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_node_ports(p, existing, want_pre, want_filter):
    pl, state, q = NodePorts.new(None, None), new_state(), p.obj()
    _, st = pl.pre_filter(state, q)
    assert status_tuple(st) == want_pre
    if st is not None and st.code == Code.SKIP:
        return
    # framework.NewNodeInfo(pods...): a NodeInfo without a node, holding the pods.
    assert status_tuple(pl.filter(state, q, node_info(None, [e.obj() for e in existing]))) == want_filter


def test_pre_filter_disabled():
    """TestPreFilterDisabled: Filter without PreFilter is an Error (kube: AsStatus wrapping ErrNotFound)."""
    st = NodePorts.new(None, None).filter(new_state(), make_pod().obj(), node_info(make_node().obj()))
    assert st.code == Code.ERROR and st.reasons[0].endswith("not found")


def tcp(container_port, host_port=0):
    p = {"containerPort": container_port, "protocol": "TCP"}
    if host_port:
        p["hostPort"] = host_port
    return p


def pod_with_port_containers(*containers):
    w = make_pod()
    for ports in containers:
        w.raw["spec"]["containers"].append(ports_container(ports))
    return w


def test_get_container_ports():
    """TestGetContainerPorts case_0: host ports of every container of both pods, in order; ports without a host
    port are left out."""
    pod1 = pod_with_port_containers([tcp(8001, 8001), tcp(8002, 8002)], [tcp(8003, 8003), tcp(8004, 8004)],
                                    [tcp(8005)])
    pod2 = pod_with_port_containers([tcp(8011, 8011), tcp(8012, 8012)], [tcp(8013, 8013), tcp(8014, 8014)],
                                    [tcp(8015)])
    got = [p for w in (pod1, pod2) for p in w.obj().host_ports]
    assert got == [("0.0.0.0", "TCP", port) for port in (8001, 8002, 8003, 8004, 8011, 8012, 8013, 8014)]
