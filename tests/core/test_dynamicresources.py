"""DynamicResources for pods without ResourceClaims (v1.36; pods with claims: test_dra_*.py): PreFilter skips (and records the pod's empty claim
list), Score is 0 on every node, PostFilter says "no new claims to deallocate", or "not found" when an earlier
PreFilter rejected the pod; a disabled plugin (1.30's gate off) does nothing."""
import numpy as np

from scheduler_core import versions
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.status import Code
from scheduler_core.objects import Pod
from scheduler_core.plugins.dynamicresources import DynamicResources
from scheduler_core.scenario import scenario_from_data
from scheduler_core.simulate import Simulation


def _plugin(version="1.36"):
    handle = Handle()
    handle.features = versions.features(version)
    return DynamicResources.new({}, handle)


def _pod(**spec):
    return Pod({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}], **spec}})


def test_pod_without_claims():
    pl, state, pod = _plugin(), CycleState(), _pod()
    result, st = pl.pre_filter(state, pod)
    assert result is None and st.code == Code.SKIP
    res, st = pl.post_filter(state, pod, {})
    assert res is None and (st.code, st.reasons) == (Code.UNSCHEDULABLE, ["no new claims to deallocate"])
    assert pl.score(state, pod, None) == (0, None)
    assert pl.score_batch(state, pod, None, np.arange(3)).tolist() == [0, 0, 0]
    scores = [["a", 0], ["b", 0]]
    pl.normalize_score(state, pod, scores)
    assert scores == [["a", 0], ["b", 0]]
    assert pl.reserve(state, pod, "a") is None and pl.pre_bind(state, pod, "a") is None


def test_post_filter_without_pre_filter_state_is_not_found():
    pl, pod = _plugin(), _pod()
    res, st = pl.post_filter(CycleState(), pod, {})
    assert res is None and st.code == Code.ERROR and st.message() == "not found"
    assert pl.filter(CycleState(), pod, None).code == Code.ERROR


def test_disabled_plugin_at_130():
    pl, state, pod = _plugin("1.30"), CycleState(), _pod()
    assert not pl.enabled
    assert pl.pre_filter(state, pod)[1].code == Code.SKIP
    assert pl.post_filter(state, pod, {})[1].reasons == ["plugin disabled"]
    assert pl.score(state, pod, None) == (0, None) and pl.events_to_register() == ()


def test_pod_whose_claim_does_not_exist_is_unresolvable():
    pl = _plugin()
    st = pl.pre_filter(CycleState(), _pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}]))[1]
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message() == 'could not find ResourceClaim "default/c"'


def _node(name):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def test_in_a_cycle_at_136():
    """Score 0 weighted 0 for every node; the PostFilter text before preemption's; "not found" after a PreFilter
    rejection (kube's h21-daemonset-pods-pinned-by-matchfields-03)."""
    fits = {"metadata": {"name": "fits", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    too_big = {"metadata": {"name": "too-big", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "5"}}}]}}
    pinned = {"metadata": {"name": "pinned", "namespace": "default"},
              "spec": {"containers": [{"name": "c"}], "affinity": {"nodeAffinity": {
                  "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [
                      {"key": "metadata.name", "operator": "In", "values": ["a"]},
                      {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}}}
    scen = scenario_from_data({"kubeVersion": "1.36", "nodes": [_node("a"), _node("b")], "pods": [],
                               "pending": [fits, too_big, pinned]})
    traces = {t.pod.name: t for t in Simulation(scen).run()}
    weight, per_node = traces["fits"].scores["DynamicResources"]
    assert weight == 2 and {n: v for n, v in per_node.items()} == {"a": (0, 0), "b": (0, 0)}
    assert traces["too-big"].message.startswith("0/2 nodes are available: 2 Insufficient cpu. no new claims to "
                                                "deallocate, preemption: 0/2 nodes are available:")
    assert traces["pinned"].message == "0/2 nodes are available: pod affinity terms conflict. not found"
