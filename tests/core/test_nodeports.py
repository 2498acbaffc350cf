"""NodePorts plugin: the cases of kube's node_ports_test.go."""
import pytest

from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.status import Code
from scheduler_core.objects.node import Node
from scheduler_core.objects.pod import Pod
from scheduler_core.plugins.nodeports import ERR_REASON, NodePorts, fits_ports


def pod_with_ports(*specs, name="p", init=()):
    """specs: "proto/ip/port" strings as in kube's newPod helper (ip may be empty)."""
    def ports(items):
        out = []
        for s in items:
            proto, ip, port = s.split("/")
            p = {"containerPort": 80, "hostPort": int(port), "protocol": proto}
            if ip:
                p["hostIP"] = ip
            out.append(p)
        return out
    spec = {"containers": [{"name": "c", "ports": ports(specs)}]}
    if init:
        spec["initContainers"] = [{"name": "i", "ports": ports(init)}]
    return Pod({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def node_with(*pods):
    ni = NodeInfo(Node({"metadata": {"name": "n"}}))
    for i, p in enumerate(pods):
        ni.add_pod(pod_with_ports(*p, name=f"existing-{i}"))
    return ni


FAIL = (Code.UNSCHEDULABLE, [ERR_REASON])
OK = (Code.SUCCESS, [])


@pytest.mark.parametrize("wanted,existing,want", [
    (("UDP/127.0.0.1/8080",), [("UDP/127.0.0.1/9090",)], OK),                       # other port
    (("UDP/127.0.0.1/8080",), [("UDP/127.0.0.1/8080",)], FAIL),                     # same udp port
    (("TCP/127.0.0.1/8080",), [("TCP/127.0.0.1/8080",)], FAIL),                     # same tcp port
    (("TCP/127.0.0.1/8001",), [("TCP/127.0.0.2/8001",)], OK),                       # different host ip
    (("TCP/127.0.0.1/8001",), [("UDP/127.0.0.1/8001",)], OK),                       # different protocol
    (("UDP/127.0.0.1/8001", "TCP/127.0.0.1/8002"), [("TCP/127.0.0.1/8002",)], FAIL),  # second port
    (("UDP/127.0.0.1/8001", "TCP/127.0.0.1/8002"), [("TCP/127.0.0.1/8002", "UDP/127.0.0.1/8001")], FAIL),
    (("TCP/0.0.0.0/8001",), [("TCP/127.0.0.1/8001",)], FAIL),                       # wanted 0.0.0.0
    (("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"), [("TCP/127.0.0.1/8001",)], FAIL),
    (("TCP/127.0.0.1/8001",), [("TCP/0.0.0.0/8001",)], FAIL),                       # existing 0.0.0.0
    (("TCP/127.0.0.1/8001",), [("TCP//8001",)], FAIL),                              # empty hostIP = 0.0.0.0
    (("UDP/127.0.0.1/8001",), [("TCP/0.0.0.0/8001",)], OK),
    (("UDP/127.0.0.1/8001", "TCP/127.0.0.1/8001"), [("TCP/0.0.0.0/8001",)], FAIL),
    (("TCP/0.0.0.0/8001",), [("UDP/10.0.0.1/8001", "SCTP/10.0.0.2/8001")], OK),
    (("SCTP/10.0.0.2/8001",), [("SCTP/0.0.0.0/8001",)], FAIL),
    # the wanted ports are not checked against each other
    (("TCP/0.0.0.0/8001", "TCP/127.0.0.1/8001"), [], OK),
])
def test_filter(wanted, existing, want):
    pl = NodePorts()
    state = CycleState()
    pod = pod_with_ports(*wanted)
    assert pl.pre_filter(state, pod) == (None, None)
    st = pl.filter(state, pod, node_with(*existing))
    assert ((Code.SUCCESS, []) if st is None else (st.code, st.reasons)) == want


def test_protocol_defaults_to_tcp():
    pod = Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "ports": [{"hostPort": 80}]}]}})
    state = CycleState()
    NodePorts().pre_filter(state, pod)
    st = NodePorts().filter(state, pod, node_with(("TCP/1.2.3.4/80",)))
    assert (st.code, st.reasons) == FAIL


def test_prefilter_skips_pods_without_host_ports():
    pl = NodePorts()
    pod = Pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 0}]}]}})
    assert pl.pre_filter(CycleState(), pod)[1].code == Code.SKIP
    # Init containers' host ports are not counted.
    assert pl.pre_filter(CycleState(), pod_with_ports(init=("TCP//80",)))[1].code == Code.SKIP


def test_filter_without_prefilter_is_an_error():
    st = NodePorts().filter(CycleState(), pod_with_ports("TCP//80"), node_with())
    assert st.code == Code.ERROR
    assert st.reasons == ['error reading "PreFilterNodePorts" from cycleState: not found']


def test_removed_pod_frees_port():
    ni = node_with(("TCP//80",))
    assert not fits_ports(pod_with_ports("TCP/1.1.1.1/80").host_ports, ni.used_ports)
    ni.remove_pod(ni.pods[0])
    assert fits_ports(pod_with_ports("TCP/1.1.1.1/80").host_ports, ni.used_ports)


def test_no_prefilter_extensions_and_events():
    pl = NodePorts()
    assert pl.pre_filter_extensions() is None
    assert pl.events_to_register() == (("Pod", ("Delete",)), ("Node", ("Add", "Update")))
