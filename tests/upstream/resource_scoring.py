"""Shared by the translated noderesources scoring-strategy tables (least/most allocated): kube's fixtures
(defaultResources, extendedRes, st.MakePod().Req, st.MakeNode().Capacity) and the body of their run loop."""
import pytest

from scheduler_core.framework.profile import FrameworkError
from scheduler_core.plugins.noderesources.fit import Fit

from .plugin_cases import handle, make_node, make_pod, new_state

DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED = "abc.com/xyz"
EXTENDED_SET = DEFAULT_RESOURCES + [{"name": EXTENDED, "weight": 1}]
NOT_DEFAULTED = ("not applicable: kube hands NewFit internal args that never went through v1 defaulting; here (as "
                 "for any kube config file) defaulting always runs, giving no resources cpu and memory and a zero "
                 "weight 1")


def node(name, cap=None):
    w = make_node().name(name)
    return w.capacity(cap) if cap is not None else w


def pod(*reqs, on=None):
    w = make_pod()
    if on:
        w.node(on)
    for r in reqs:
        w.req(r)
    return w


def two_containers():
    return pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})


def small(name):
    return node(name, {"cpu": "4000", "memory": "10000"})


def big(name, memory="20000"):
    return node(name, {"cpu": "10000", "memory": memory})


def running(on, cpu, memory):
    return pod({"cpu": cpu, "memory": memory}, on=on)


def weight_error(i):
    return f"scoringStrategy.resources[{i}].weight: Invalid value"


def run_strategy(kind, p, nodes, existing, resources, want, want_err, skip):
    """The shared body of kube's scoring-strategy tables."""
    if skip:
        pytest.skip(skip)
    h = handle([n.obj() for n in nodes], [e.obj() for e in existing])
    args = {"scoringStrategy": {"type": kind, "resources": resources}}
    if want_err is not None:
        with pytest.raises(FrameworkError) as err:
            Fit.new(args, h)
        assert want_err in str(err.value)
        return
    pl, state, q = Fit.new(args, h), new_state(), p.obj()
    assert pl.pre_score(state, q, h.snapshot.node_infos) is None
    got = []
    for ni in h.snapshot.node_infos:
        score, st = pl.score(state, q, ni)
        assert st is None
        got.append(score)
    assert got == want
