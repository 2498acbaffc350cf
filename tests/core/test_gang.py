"""Workload-aware scheduling at 1.36 (GenericWorkload, GangScheduling, TopologyAwareWorkloadScheduling): the
scheduling.k8s.io/v1alpha2 objects' validation, the plugins and the pod-group cycle of the scheduling loop."""
from __future__ import annotations

import pytest

from scheduler_core import versions
from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.framework.podgroup_state import PodGroupState, PodGroupStateError, PodGroupStates
from scheduler_core.objects import Pod
from scheduler_core.objects.validation import object_errors
from scheduler_core.plugins.podgrouppodscount import PodGroupPodsCount
from scheduler_core.scheduler import Scheduler
from scheduler_core.versions import FeatureGateError

from .loop_fixtures import node, pod_raw

GANG = "GenericWorkload=true,GangScheduling=true"
TOPOLOGY = GANG + ",TopologyAwareWorkloadScheduling=true"
# a group that fails is tried again at once (its members wait in backoffQ, which 1.36 pops when activeQ is empty,
# as kube-scheduler does): the loop is run for a few cycles, not until idle
CYCLES = 5
WAITING_SCHEDULED = ("pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, one or more "
                     "plugins asked to wait and no plugin rejected pod")


def member(name, group, cpu="2", priority=0) -> Pod:
    raw = pod_raw(name, cpu=cpu, priority=priority)
    raw["spec"]["schedulingGroup"] = {"podGroupName": group}
    return Pod(raw)


def pod_group(name, min_count=None, topology=None) -> dict:
    spec = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "generation": 1}, "spec": spec}


def loop(nodes, groups=(), gates=GANG):
    clock = FakeClock(1000.0)
    cluster = SimulatedCluster(nodes, [], {"podgroups": list(groups)}, clock)
    return cluster, Scheduler(cluster, kube_version="1.36", feature_gates=gates, tie_break="name", clock=clock)


def failure(cluster, key) -> str | None:
    pod = cluster.pods[key]
    return next((c.get("message") for c in pod.conditions if c.get("type") == "PodScheduled"), None)


def condition(cluster, name) -> dict:
    status = cluster.get_object("PodGroup", f"default/{name}").get("status") or {}
    return next(c for c in status["conditions"] if c["type"] == "PodGroupScheduled")


# -- the objects ----------------------------------------------------------------------------------------------------

def test_pod_group_validation_messages():
    def errors(spec):
        return [str(e) for e in object_errors("PodGroup", {"metadata": {"name": "g", "namespace": "default"},
                                                           "spec": spec})]

    assert errors({"schedulingPolicy": {}}) == [
        'spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`']
    assert errors({"schedulingPolicy": {"basic": {}, "gang": {"minCount": 1}}}) == [
        'spec.schedulingPolicy: Invalid value: "{`basic`, `gang`}": must specify exactly one of: `basic`, `gang`']
    assert errors({"schedulingPolicy": {"gang": {}}}) == ["spec.schedulingPolicy.gang.minCount: Required value"]
    assert errors({"schedulingPolicy": {"gang": {"minCount": -2}}}) == [
        "spec.schedulingPolicy.gang.minCount: Invalid value: -2: must be greater than or equal to 1"]
    two = {"schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{"key": "a"}, {"key": "b"}]}}
    assert errors(two) == ["spec.schedulingConstraints.topology: Too many: 2: must have at most 1 items"]
    bad_key = {"schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{"key": "a/b/c"}]}}
    assert errors(bad_key)[0].startswith(
        'spec.schedulingConstraints.topology[0].key: Invalid value: "a/b/c": a valid label key must consist of')
    ref = {"schedulingPolicy": {"basic": {}}, "podGroupTemplateRef": {"workload": {"workloadName": "w",
                                                                                   "podGroupTemplateName": "a.b"}}}
    assert errors(ref) == ['spec.podGroupTemplateRef.workload.podGroupTemplateName: Invalid value: "a.b": '
                           'must not contain dots']
    # what kube-apiserver stored with the gates on is valid (its disruptionMode defaulted, a null template ref)
    assert errors({"podGroupTemplateRef": None, "schedulingPolicy": {"gang": {"minCount": 3}},
                   "disruptionMode": "Pod"}) == []


def test_workload_validation_messages():
    def errors(spec):
        return [str(e) for e in object_errors("Workload", {"metadata": {"name": "w"}, "spec": spec})]

    assert errors({}) == ["spec.podGroupTemplates: Required value"]
    assert errors({"podGroupTemplates": [{"name": f"t{i}", "schedulingPolicy": {"basic": {}}} for i in range(9)]}) \
        == ["spec.podGroupTemplates: Too many: 9: must have at most 8 items"]
    assert errors({"podGroupTemplates": [{"name": "t", "schedulingPolicy": {"gang": {"minCount": 0}}},
                                         {"name": "t", "schedulingPolicy": {"basic": {}}}]}) == [
        'spec.podGroupTemplates[1]: Duplicate value: v1alpha2.PodGroupTemplate{Name:"t", ...}',
        "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value"]


def test_pod_scheduling_group_validation():
    raw = pod_raw("p")
    raw["spec"]["schedulingGroup"] = {}
    assert [str(e) for e in object_errors("Pod", raw)] == [
        'spec.schedulingGroup.podGroupName: Invalid value: "null": must specify one of: `podGroupName`']
    raw["spec"]["schedulingGroup"] = {"podGroupName": "Bad_Name"}
    assert str(object_errors("Pod", raw)[0]).startswith(
        'spec.schedulingGroup.podGroupName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')
    raw["spec"]["schedulingGroup"] = {"podGroupName": "train"}
    assert object_errors("Pod", raw) == [] and Pod(raw).pod_group == "train"


def test_gates_and_default_profile():
    features = versions.features("1.36", TOPOLOGY)
    plugins = [name for name, _w in features.default_multi_point()]
    assert plugins[-3:] == ["GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount"]
    with pytest.raises(FeatureGateError, match="WorkloadAwarePreemption=true"):
        versions.features("1.36", GANG + ",WorkloadAwarePreemption=true")
    _cluster, sched = loop([node("n1")], gates=TOPOLOGY)
    fwk = sched.profiles["default-scheduler"]
    assert [p.name for p in fwk.pre_enqueue][-1] == "GangScheduling"
    assert "GangScheduling" in [p.name for p in fwk.permit]
    assert [p.name for p in fwk.placement_generate] == ["TopologyPlacementGenerator"]
    assert fwk.placement_score_weights == {"PodGroupPodsCount": 1}


# -- the state and the plugins --------------------------------------------------------------------------------------

def test_pod_group_state_counts():
    state = PodGroupState()
    a, b = member("a", "g"), member("b", "g")
    state.add_pod(a)
    state.add_pod(b)
    state.assume_pod(a.bound_to("n1"))
    assert (state.all_pods_count(), state.scheduled_pods_count(), list(state.unscheduled_pods())) == (2, 1, ["b"])
    state.forget_pod(a.uid)
    assert state.scheduled_pods_count() == 0 and set(state.unscheduled_pods()) == {"a", "b"}
    states = PodGroupStates()
    with pytest.raises(PodGroupStateError, match="pod group state not found for pod group default/g"):
        states.get("default", "g")


def test_pod_group_pods_count_normalizes_by_the_largest():
    scores = [["a", 4], ["b", 2], ["c", 1]]
    assert PodGroupPodsCount().normalize_placement_score(None, ("default", "g"), scores) is None
    assert [s for _p, s in scores] == [100, 50, 25]
    st = PodGroupPodsCount().normalize_placement_score(None, ("default", "g"), [["a", 0]])
    assert st.message() == "no pods from pod group are assigned to any of the candidate placements"


# -- the pod-group cycle --------------------------------------------------------------------------------------------

def test_gang_waits_for_min_count_then_binds_together():
    cluster, sched = loop([node(f"n{i}", cpu="2") for i in range(3)], [pod_group("g", 3)])
    cluster.add_pod(member("a", "g"))
    cluster.add_pod(member("b", "g"))
    sched.run_until_idle(CYCLES)
    assert sched.queue.pod_info("default/a").gated_by == (
        "GangScheduling", "waiting for minCount pods from a gang to appear in scheduling queue")
    assert not any(cluster.placements().values())
    cluster.add_pod(member("c", "g"))
    assert sched.run_until_idle(CYCLES) == 1   # one pod-group cycle for the three
    assert sorted(cluster.placements().values()) == ["n0", "n1", "n2"]
    assert {k: v for k, v in condition(cluster, "g").items() if k != "lastTransitionTime"} == {
        "type": "PodGroupScheduled", "status": "True", "observedGeneration": 1, "reason": "Scheduled",
        "message": ""}


def test_gang_that_does_not_fit_binds_nobody():
    cluster, sched = loop([node(f"n{i}", cpu="2") for i in range(2)], [pod_group("g", 3)])
    for name in "abc":
        cluster.add_pod(member(name, "g"))
    sched.run_until_idle(CYCLES)
    assert not any(cluster.placements().values())
    messages = sorted(failure(cluster, f"default/{n}") for n in "abc")
    assert messages[:1] == ["0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: "
                            "0/2 nodes are available: 2 No preemption victims found for incoming pod."]
    assert messages[1:] == [WAITING_SCHEDULED, WAITING_SCHEDULED]
    assert condition(cluster, "g")["message"] == "pod group is unschedulable"
    assert condition(cluster, "g")["reason"] == "Unschedulable"


def test_min_count_members_bind_and_the_rest_fail_alone():
    cluster, sched = loop([node(f"n{i}", cpu="2") for i in range(2)], [pod_group("g", 2)])
    for name, prio in (("low", 0), ("high-0", 10), ("high-1", 10)):
        cluster.add_pod(member(name, "g", priority=prio))
    sched.run_until_idle(CYCLES)
    # the members are tried by priority: the two high ones make the quorum
    assert cluster.placements()["default/low"] is None
    assert {cluster.placements()["default/high-0"], cluster.placements()["default/high-1"]} == {"n0", "n1"}
    assert failure(cluster, "default/low").startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_pod_group_that_appears_lets_its_members_in():
    cluster, sched = loop([node("n1")])
    cluster.add_pod(member("a", "late"))
    sched.run_until_idle(CYCLES)
    assert sched.queue.pod_info("default/a").gated_by == (
        "GangScheduling", 'waiting for pods\'s pod group "late" to appear in scheduling queue')
    cluster.add_object("PodGroup", pod_group("late", 1))
    sched.run_until_idle(CYCLES)
    assert cluster.placements()["default/a"] == "n1"


def test_topology_places_the_gang_in_one_rack():
    nodes = [node("a1", cpu="4", labels={"rack": "a"}), node("b1", cpu="2", labels={"rack": "b"}),
             node("b2", cpu="2", labels={"rack": "b"})]
    cluster, sched = loop(nodes, [pod_group("g", 2, "rack")], gates=TOPOLOGY)
    for name in "xy":
        cluster.add_pod(member(name, "g"))
    sched.run_until_idle(CYCLES)
    # both racks hold the pair; PodGroupPodsCount ties and the name tie-break takes rack a
    assert sorted(cluster.placements().values()) == ["a1", "a1"]


def test_topology_with_no_rack_that_holds_the_gang():
    nodes = [node(n, cpu="2", labels={"rack": n[0]}) for n in ("a1", "a2", "b1", "b2")]
    cluster, sched = loop(nodes, [pod_group("g", 3, "rack")], gates=TOPOLOGY)
    for name in "xyz":
        cluster.add_pod(member(name, "g"))
    sched.run_until_idle(CYCLES)
    assert not any(cluster.placements().values())
    assert condition(cluster, "g")["message"] == ("0/2 placements are available, first placement status: pod group "
                                                  "is unschedulable")
    # the first placement's results: the member that came last (the quorum) was tried first
    assert failure(cluster, "default/z") == WAITING_SCHEDULED
    assert failure(cluster, "default/y") == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to "
                                             "deallocate, preemption: not eligible due to placement-based pod group "
                                             "scheduling limitation")


def test_members_of_a_group_are_scheduled_alone_with_the_gate_off():
    cluster, sched = loop([node("n1")], [pod_group("g", 3)], gates="")
    cluster.add_pod(member("a", "g"))
    sched.run_until_idle(CYCLES)
    assert cluster.placements()["default/a"] == "n1"
