"""The default plugins' QueueingHintFns at 1.36, a table per plugin from v1.36.2's plugin tests
(framework/plugins/*/*_test.go: isSchedulableAfter...). Upstream's "wrong object" cases check Go's type assertions
and have no counterpart; a hint that raises is taken as Queue by the queue (tests/upstream/
test_scheduling_queue_v136.py). Also: each plugin's registrations with hints on and off."""
from __future__ import annotations

import pytest

from scheduler_core import versions
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import QUEUE, QUEUE_SKIP
from scheduler_core.framework.snapshot import Snapshot
from scheduler_core.objects import Node, Pod
from scheduler_core.plugins.interpodaffinity import InterPodAffinity
from scheduler_core.plugins.nodeaffinity import NodeAffinity
from scheduler_core.plugins.noderesources.fit import Fit
from scheduler_core.plugins.nodeports import NodePorts
from scheduler_core.plugins.nodeunschedulable import NodeUnschedulable
from scheduler_core.plugins.podtopologyspread import PodTopologySpread
from scheduler_core.plugins.schedulinggates import SchedulingGates
from scheduler_core.plugins.tainttoleration import TaintToleration
from scheduler_core.plugins.volumerestrictions import VolumeRestrictions
from scheduler_core.plugins.volumezone import VolumeZone
from scheduler_core.queue import parse_registration


def handle_at(version):
    h = Handle(snapshot=Snapshot((), None))
    h.features = versions.features(version)
    return h


V136 = handle_at("1.36")


def make_pod(name="", uid="", namespace="", node="", labels=None, tolerations=None, gates=None, host_ports=(),
             affinity=None, requests=None, nominated="", spread=None, pod_requests=None, volumes=None):
    container = {"name": "c", "image": "pause"}
    if host_ports:
        container["ports"] = [{"containerPort": p, "hostPort": p} for p in host_ports]
    if requests:
        container["resources"] = {"requests": requests}
    spec = {"containers": [container]}
    if node:
        spec["nodeName"] = node
    if tolerations:
        spec["tolerations"] = tolerations
    if gates is not None:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if affinity:
        spec["affinity"] = affinity
    if spread:
        spec["topologySpreadConstraints"] = spread
    if pod_requests:
        spec["resources"] = {"requests": pod_requests}
    if volumes:
        spec["volumes"] = volumes
    raw = {"metadata": {"name": name or "p", "namespace": namespace, "uid": uid, "labels": labels or {}},
           "spec": spec, "status": {"nominatedNodeName": nominated} if nominated else {}}
    return Pod(raw)


def make_node(name="node", labels=None, taints=None, unschedulable=False, allocatable=None):
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status = {"allocatable": allocatable, "capacity": allocatable} if allocatable is not None else {}
    return Node({"metadata": {"name": name, "labels": labels or {}}, "spec": spec, "status": status})


def exists_toleration(key):
    """st.MakePod().Toleration(key)."""
    return {"key": key, "operator": "Exists", "effect": "NoSchedule"}


# -- NodeUnschedulable (node_unschedulable_test.go) --------------------------------------------------------------
UNSCHEDULABLE_NODE_CASES = {
    "skip-queue-on-unschedulable-node-added": (None, make_node(unschedulable=True), QUEUE_SKIP),
    "queue-on-schedulable-node-added": (None, make_node(), QUEUE),
    "skip-unrelated-change-unschedulable-true": (
        make_node(unschedulable=True),
        make_node(unschedulable=True, taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
        QUEUE_SKIP),
    "skip-unrelated-change-unschedulable-false": (
        make_node(), make_node(taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]), QUEUE_SKIP),
    "queue-on-unschedulable-field-change": (make_node(unschedulable=True), make_node(), QUEUE),
}


@pytest.mark.parametrize("name", list(UNSCHEDULABLE_NODE_CASES))
def test_node_unschedulable_after_node_change(name):
    old, new, want = UNSCHEDULABLE_NODE_CASES[name]
    assert NodeUnschedulable.new(None, V136).is_schedulable_after_node_change(make_pod(), old, new) == want


UNSCHEDULABLE_TOLERATION_CASES = {
    "skip-different-pod-update": (make_pod(uid="different-uid"),
                                  make_pod(uid="different-uid",
                                           tolerations=[exists_toleration("node.kubernetes.io/unschedulable")]),
                                  QUEUE_SKIP),
    "queue-when-the-unsched-pod-gets-toleration": (
        make_pod(uid="uid"), make_pod(uid="uid", tolerations=[exists_toleration("node.kubernetes.io/unschedulable")]),
        QUEUE),
    "skip-when-the-unsched-pod-gets-unrelated-toleration": (
        make_pod(uid="uid"), make_pod(uid="uid", tolerations=[exists_toleration("unrelated-key")]), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(UNSCHEDULABLE_TOLERATION_CASES))
def test_node_unschedulable_after_pod_toleration_change(name):
    old, new, want = UNSCHEDULABLE_TOLERATION_CASES[name]
    pl = NodeUnschedulable.new(None, V136)
    assert pl.is_schedulable_after_pod_toleration_change(make_pod(uid="uid"), old, new) == want


# -- TaintToleration (taint_toleration_test.go) ------------------------------------------------------------------
def _taints(*values):
    return [{"key": "dedicated", "value": v, "effect": "NoSchedule"} for v in values]


USER2 = make_pod("pod1", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "user2",
                                       "effect": "NoSchedule"}])
TAINT_NODE_CASES = {
    "skip-queue-on-untoleratedtaint-node-added": (None, make_node("nodeA", taints=_taints("user1")), QUEUE_SKIP),
    "queue-on-toleratedtaint-node-added": (None, make_node("nodeA", taints=_taints("user2")), QUEUE),
    "skip-unrelated-change": (make_node("nodeA", taints=_taints("user1")),
                              make_node("nodeA", taints=_taints("user1", "user3")), QUEUE_SKIP),
    "queue-on-taint-change": (make_node("nodeA", taints=_taints("user1")), make_node("nodeA", taints=_taints("user2")),
                              QUEUE),
}


@pytest.mark.parametrize("name", list(TAINT_NODE_CASES))
def test_taint_toleration_after_node_change(name):
    old, new, want = TAINT_NODE_CASES[name]
    assert TaintToleration.new(None, V136).is_schedulable_after_node_change(USER2, old, new) == want


TAINT_POD_CASES = {
    "skip-updates-other-pod": (make_pod("pod-1", "uid0", "ns-1"), make_pod("pod-2", "uid1", "ns-1"),
                               make_pod("pod-2", "uid1", "ns-1", tolerations=[{"key": "foo", "effect": "NoSchedule"}]),
                               QUEUE_SKIP),
    "queue-on-toleration-added": (make_pod("pod-1", "", "ns-1"), make_pod("pod-1", "", "ns-1"),
                                  make_pod("pod-1", "", "ns-1", tolerations=[{"key": "foo", "effect": "NoSchedule"}]),
                                  QUEUE),
}


@pytest.mark.parametrize("name", list(TAINT_POD_CASES))
def test_taint_toleration_after_pod_toleration_change(name):
    pod, old, new, want = TAINT_POD_CASES[name]
    assert TaintToleration.new(None, V136).is_schedulable_after_pod_toleration_change(pod, old, new) == want


# -- SchedulingGates (scheduling_gates_test.go) -------------------------------------------------------------------
GATES_CASES = {
    "skip-queue-on-other-pod-updated": (make_pod("p", "uid0", gates=["foo", "bar"]),
                                        make_pod("p1", "uid1", gates=["foo", "bar"]),
                                        make_pod("p1", "uid1", gates=["foo"]), QUEUE_SKIP),
    "queue-on-the-unsched-pod-updated": (make_pod("p", gates=["foo"]), make_pod("p", gates=["foo"]),
                                         make_pod("p", gates=[]), QUEUE),
}


@pytest.mark.parametrize("name", list(GATES_CASES))
def test_scheduling_gates_after_gates_eliminated(name):
    pod, old, new, want = GATES_CASES[name]
    assert SchedulingGates.new(None, V136).is_schedulable_after_gates_eliminated(pod, old, new) == want


# -- NodePorts (node_ports_test.go) -------------------------------------------------------------------------------
PORTS_CASES = {
    "skip-queue-on-unscheduled": (make_pod(), QUEUE_SKIP),
    "skip-queue-on-non-hostport": (make_pod(node="fake-node"), QUEUE_SKIP),
    "skip-queue-on-unrelated-hostport": (make_pod(node="fake-node", host_ports=[8081]), QUEUE_SKIP),
    "queue-on-released-hostport": (make_pod(node="fake-node", host_ports=[8080]), QUEUE),
}


@pytest.mark.parametrize("name", list(PORTS_CASES))
def test_node_ports_after_pod_deleted(name):
    old, want = PORTS_CASES[name]
    pl = NodePorts.new(None, V136)
    assert pl.is_schedulable_after_pod_deleted(make_pod(host_ports=[8080]), old, None) == want


# -- NodeAffinity (node_affinity_test.go) ------------------------------------------------------------------------
FOO_BAR = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]}
WITH_AFFINITY = make_pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": FOO_BAR}})
AFFINITY_CASES = {
    "skip-queue-on-add": (None, None, make_node(), QUEUE_SKIP),
    "queue-on-add": (None, None, make_node(labels={"foo": "bar"}), QUEUE),
    "skip-unrelated-changes": (None, make_node(), make_node(allocatable={}), QUEUE_SKIP),
    "skip-unrelated-changes-on-labels": (None, make_node(), make_node(labels={"k": "v"}), QUEUE_SKIP),
    "skip-labels-changes-on-node-from-suitable-to-unsuitable": (None, make_node(labels={"foo": "bar"}),
                                                                make_node(labels={"k": "v"}), QUEUE_SKIP),
    "queue-on-labels-change-makes-pod-schedulable": (None, make_node(), make_node(labels={"foo": "bar"}), QUEUE),
    "skip-unrelated-change-that-keeps-pod-schedulable": (None, make_node(labels={"foo": "bar"}),
                                                         make_node(labels={"foo": "bar"}, allocatable={}), QUEUE_SKIP),
    "skip-queue-on-add-scheduler-enforced-node-affinity": ({"requiredDuringSchedulingIgnoredDuringExecution": FOO_BAR},
                                                           None, make_node(), QUEUE_SKIP),
    "queue-on-add-scheduler-enforced-node-affinity": ({"requiredDuringSchedulingIgnoredDuringExecution": FOO_BAR},
                                                      None, make_node(labels={"foo": "bar"}), QUEUE),
}


@pytest.mark.parametrize("name", list(AFFINITY_CASES))
def test_node_affinity_after_node_change(name):
    added, old, new, want = AFFINITY_CASES[name]
    pl = NodeAffinity.new({"addedAffinity": added} if added else {}, V136)
    assert pl.is_schedulable_after_node_change(WITH_AFFINITY, old, new) == want


# -- registrations -------------------------------------------------------------------------------------------------
def _registered(pl) -> list:
    out = []
    for reg in pl.events_to_register():
        ev, hint = parse_registration(reg)
        out.append((ev.resource, ev.action, hint is not None))
    return out


@pytest.mark.parametrize("cls", [NodeUnschedulable, TaintToleration, SchedulingGates, NodePorts, NodeAffinity])
def test_registrations_differ_by_version(cls):
    """At 1.36 (hints on) each plugin registers v1.36.2's narrower events with its hints; at 1.30 none has one."""
    at130, at136 = _registered(cls.new(None, handle_at("1.30"))), _registered(cls.new(None, V136))
    assert not any(h for _r, _a, h in at130)
    assert any(h for _r, _a, h in at136)
    assert at130 != at136


# -- InterPodAffinity (interpodaffinity/plugin_test.go) ---------------------------------------------------------
def _pod_affinity(*terms, anti=False):
    """st's PodAffinityIn / PodAffinityExists / PodAntiAffinity...: required terms (label requirement, topology key)."""
    kind = "podAntiAffinity" if anti else "podAffinity"
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": [req]} if "operator" in req else {"matchLabels": req},
         "topologyKey": topo} for req, topo in terms]}}


def _in(key, *values):
    return {"key": key, "operator": "In", "values": list(values)}


def _exists(key):
    return {"key": key, "operator": "Exists"}


SCAN = _in("service", "securityscan", "value2")
AFFINE = make_pod("p", "p", affinity=_pod_affinity((SCAN, "region")))
ANTI = make_pod("p", "p", affinity=_pod_affinity((SCAN, "region"), anti=True))
TWO_TERMS = make_pod("p", "p", affinity=_pod_affinity((_exists("aaa"), "hostname"), (_exists("bbb"), "hostname")))
ANTI_OTHER = _pod_affinity((SCAN, "region"), anti=True)


def _other(labels=None, node="fake-node", **kw):
    return make_pod("other", "other", node=node, labels=labels, **kw)


POD_AFFINITY_POD_CASES = {
    "add a pod which matches the pod affinity": (AFFINE, None, _other({"service": "securityscan"}), QUEUE),
    "add an un-scheduled pod": (AFFINE, None, _other({"service": "securityscan"}, node=""), QUEUE_SKIP),
    "add a pod which doesn't match the pod affinity": (AFFINE, None, _other({"aaa": "a"}), QUEUE_SKIP),
    "update a pod from non-match to match pod affinity": (AFFINE, _other({"aaa": "a"}),
                                                          _other({"service": "securityscan"}), QUEUE),
    "the updating pod matches target pod's affinity both before and after label changes": (
        AFFINE, _other({"service": "value2"}), _other({"service": "securityscan"}), QUEUE_SKIP),
    "update an un-scheduled pod": (AFFINE, _other({"aaa": "a"}, node=""), _other({"service": "securityscan"}, node=""),
                                   QUEUE_SKIP),
    "update a pod from match to non-match the pod affinity": (AFFINE, _other({"service": "securityscan"}),
                                                              _other({"aaa": "a"}), QUEUE_SKIP),
    "update a pod from match to non-match pod's affinity - multiple terms case": (
        TWO_TERMS, _other({"aaa": "a"}), _other({"service": "securityscan"}), QUEUE_SKIP),
    "update a pod from non-match to match pod's affinity - multiple terms case": (
        TWO_TERMS, _other({"aaa": "a"}), _other({"aaa": "", "bbb": ""}), QUEUE),
    "updated pod is the target pod": (make_pod("p", "p", labels={"foo": "baz"}),
                                      make_pod("p", "p", labels={"foo": "bar"}),
                                      make_pod("p", "p", labels={"foo": "baz"}), QUEUE),
    "modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity": (
        ANTI, _other({"service": "securityscan"}), _other({"service": "aaaa"}), QUEUE),
    "modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity": (
        ANTI, _other({"service": "bbb"}), _other({"service": "securityscan"}), QUEUE_SKIP),
    "delete a pod which doesn't match pod's anti-affinity": (ANTI, _other({"aaa": "a"}), None, QUEUE_SKIP),
    "delete a pod which matches pod's anti-affinity": (ANTI, _other({"service": "securityscan"}), None, QUEUE),
    "delete a pod with anti-affinity that matches pending pod": (
        make_pod("p", labels={"service": "securityscan"}), make_pod(node="fake-node", affinity=ANTI_OTHER), None,
        QUEUE),
    "delete a pod with anti-affinity that doesn't match pending pod": (
        make_pod("p", labels={"service": "foo"}), make_pod(node="fake-node", affinity=ANTI_OTHER), None, QUEUE_SKIP),
    "delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match pending "
    "pod": (make_pod("p", labels={"service": "foo"}, affinity=ANTI_OTHER),
            make_pod(node="fake-node", labels={"service": "foo"}, affinity=ANTI_OTHER), None, QUEUE_SKIP),
    "delete a nominated pod which doesn't match pod's anti-affinity": (
        make_pod("p", affinity=ANTI_OTHER), make_pod(nominated="fake-node", labels={"aaa": "a"}), None, QUEUE_SKIP),
    "delete a nominated pod which matches pod's anti-affinity": (
        make_pod("p", affinity=ANTI_OTHER), make_pod(nominated="fake-node", labels={"service": "securityscan"}), None,
        QUEUE),
}


@pytest.mark.parametrize("name", list(POD_AFFINITY_POD_CASES))
def test_inter_pod_affinity_after_pod_change(name):
    pod, old, new, want = POD_AFFINITY_POD_CASES[name]
    assert InterPodAffinity.new({}, V136).is_schedulable_after_pod_change(pod, old, new) == want


ZONE_AFFINE = make_pod("p", affinity=_pod_affinity((SCAN, "zone")))
REGION_AFFINE = make_pod("p", affinity=_pod_affinity((SCAN, "region")))
ZONE_ANTI = make_pod("p", affinity=_pod_affinity(({"another": "label"}, "zone"), anti=True))
POD_AFFINITY_NODE_CASES = {
    "add a new node with matched pod affinity topologyKey": (ZONE_AFFINE, None, {"zone": "zone1"}, QUEUE),
    "add a new node without matched topologyKey": (REGION_AFFINE, None, {"zone": "zone1"}, QUEUE_SKIP),
    "update node label but not topologyKey": (ZONE_AFFINE, {"aaa": "a"}, {"aaa": "b"}, QUEUE_SKIP),
    "update node label that isn't related to the pod affinity": (
        ZONE_AFFINE, {"zone": "zone1"}, {"zone": "zone1", "unrelated-label": "unrelated"}, QUEUE_SKIP),
    "update node with different affinity topologyKey value": (ZONE_AFFINE, {"zone": "zone1"}, {"zone": "zone2"},
                                                              QUEUE),
    "update node to have the affinity topology label": (ZONE_AFFINE, {"aaa": "a"}, {"zone": "zone1"}, QUEUE),
    "add a new node with matched pod anti-affinity topologyKey": (ZONE_ANTI, None, {"zone": "zone1"}, QUEUE),
    "add a new node without matched pod anti-affinity topologyKey": (ZONE_ANTI, None, {}, QUEUE),
    "update node label that isn't related to the pod anti-affinity": (
        ZONE_ANTI, {"zone": "zone1"}, {"zone": "zone1", "unrelated-label": "unrelated"}, QUEUE_SKIP),
    "update node with different anti-affinity topologyKey value": (ZONE_ANTI, {"zone": "zone1"}, {"zone": "zone2"},
                                                                   QUEUE),
    "update node to have the anti-affinity topology label": (ZONE_ANTI, {"aaa": "a"}, {"zone": "zone1"}, QUEUE_SKIP),
    "update node label not to have anti-affinity topology label": (ZONE_ANTI, {"zone": "zone1"}, {"aaa": "a"}, QUEUE),
}


@pytest.mark.parametrize("name", list(POD_AFFINITY_NODE_CASES))
def test_inter_pod_affinity_after_node_change(name):
    pod, old, new, want = POD_AFFINITY_NODE_CASES[name]
    old_node = make_node("node-a", labels=old) if old is not None else None
    pl = InterPodAffinity.new({}, V136)
    assert pl.is_schedulable_after_node_change(pod, old_node, make_node("node-a", labels=new)) == want


# -- PodTopologySpread (podtopologyspread/plugin_test.go) --------------------------------------------------------
def _spread(*constraints):
    """st's SpreadConstraint(1, key, DoNotSchedule, Exists(label), nodeTaintsPolicy)."""
    out = []
    for key, label, taints_policy in constraints:
        c = {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchExpressions": [_exists(label)]}}
        if taints_policy:
            c["nodeTaintsPolicy"] = taints_policy
        out.append(c)
    return out


ZONE_FOO = make_pod("p", spread=_spread(("zone", "foo", None)))
ZONE_NODE_FOO = make_pod("p", spread=_spread(("zone", "foo", None), ("node", "foo", None)))


def _taint(key):
    return [{"key": key, "value": "bbb", "effect": "NoSchedule"}]


SPREAD_NODE_CASES = {
    "node updates label which matches topologyKey": (ZONE_FOO, ({"zone": "zone1"},), ({"zone": "zone2"},), QUEUE),
    "node that doesn't match topologySpreadConstraints updates non-related label": (
        ZONE_FOO, ({"foo": "bar1"},), ({"foo": "bar2"},), QUEUE_SKIP),
    "node that match topologySpreadConstraints adds non-related label": (
        ZONE_NODE_FOO, ({"zone": "zone1", "node": "node1", "foo": "bar"},), ({"zone": "zone1", "node": "node1"},),
        QUEUE_SKIP),
    "create node with non-related labels": (ZONE_FOO, None, ({"foo": "bar"},), QUEUE_SKIP),
    "create node with related labels": (ZONE_FOO, None, ({"zone": "zone1"},), QUEUE),
    "delete node with non-related labels": (ZONE_FOO, ({"foo": "bar"},), None, QUEUE_SKIP),
    "delete node with related labels": (ZONE_FOO, ({"zone": "zone1"},), None, QUEUE),
    "add node with related labels that only match one of topologySpreadConstraints": (
        ZONE_NODE_FOO, None, ({"zone": "zone1"},), QUEUE_SKIP),
    "add node with related labels that match all topologySpreadConstraints": (
        ZONE_NODE_FOO, None, ({"zone": "zone1", "node": "node1"},), QUEUE),
    "update node with related labels that only match one of topologySpreadConstraints": (
        ZONE_NODE_FOO, ({"zone": "zone1"},), ({"zone": "zone1"},), QUEUE_SKIP),
    "update node with related labels that match all topologySpreadConstraints": (
        ZONE_NODE_FOO, ({"zone": "zone1", "node": "node1"},), ({"zone": "zone1", "node": "node2"},), QUEUE),
    "update node with different taints that match all topologySpreadConstraints": (
        ZONE_NODE_FOO, ({"zone": "zone1", "node": "node1"}, _taint("aaa")),
        ({"zone": "zone1", "node": "node1"}, _taint("ccc")), QUEUE),
    "update node with different taints that only match one of topologySpreadConstraints": (
        ZONE_NODE_FOO, ({"node": "node1"}, _taint("aaa")), ({"node": "node1"}, _taint("ccc")), QUEUE_SKIP),
}


def _spread_plugin():
    return PodTopologySpread.new({"defaultingType": "List"}, V136)


@pytest.mark.parametrize("name", list(SPREAD_NODE_CASES))
def test_pod_topology_spread_after_node_change(name):
    pod, old, new, want = SPREAD_NODE_CASES[name]
    old_node = make_node("node-a", *old) if old else None
    new_node = make_node("node-a", *new) if new else None
    assert _spread_plugin().is_schedulable_after_node_change(pod, old_node, new_node) == want


SPREAD_P = make_pod("p", "p", labels={"foo": ""}, spread=_spread(("zone", "foo", None)))
SPREAD_P2 = make_pod("p", "p", labels={"foo": ""}, spread=_spread(("zone", "foo", None), ("node", "bar", None)))
HONOR = _spread(("zone", "foo", "Honor"), ("node", "bar", None))
IGNORE = _spread(("zone", "foo", "Ignore"), ("node", "bar", None))


def _p2(labels=None, node="fake-node", **kw):
    return make_pod("p2", "p2", node=node, labels=labels, **kw)


SPREAD_POD_CASES = {
    "add pod with labels match topologySpreadConstraints selector": (SPREAD_P, None, _p2({"foo": ""}), QUEUE),
    "add un-scheduled pod": (SPREAD_P, None, _p2({"foo": ""}, node=""), QUEUE_SKIP),
    "update un-scheduled pod": (SPREAD_P, _p2({"bar": ""}, node=""), _p2({"foo": ""}, node=""), QUEUE_SKIP),
    "delete un-scheduled pod": (SPREAD_P, _p2({"foo": ""}, node=""), None, QUEUE_SKIP),
    "add pod with different namespace": (SPREAD_P, None, _p2({"foo": ""}, namespace="fake-namespace"), QUEUE_SKIP),
    "add pod with labels don't match topologySpreadConstraints selector": (SPREAD_P, None, _p2({"bar": ""}),
                                                                           QUEUE_SKIP),
    "delete pod with labels that match topologySpreadConstraints selector": (SPREAD_P, _p2({"foo": ""}), None, QUEUE),
    "delete nominated pod with labels that don't match topologySpreadConstraints selector": (
        SPREAD_P, _p2({"bar": ""}, node="", nominated="fake-node"), None, QUEUE_SKIP),
    "delete nominated pod with labels that match topologySpreadConstraints selector": (
        SPREAD_P, _p2({"foo": ""}, node="", nominated="fake-node"), None, QUEUE),
    "delete pod with labels that don't match topologySpreadConstraints selector": (SPREAD_P, _p2({"bar": ""}), None,
                                                                                   QUEUE_SKIP),
    "update pod's non-related label": (SPREAD_P, _p2({"foo": "", "bar": "bar1"}), _p2({"foo": "", "bar": "bar2"}),
                                       QUEUE_SKIP),
    "add pod's label that matches topologySpreadConstraints selector": (SPREAD_P, _p2(), _p2({"foo": ""}), QUEUE),
    "delete pod label that matches topologySpreadConstraints selector": (SPREAD_P, _p2({"foo": ""}), _p2(), QUEUE),
    "change pod's label that matches topologySpreadConstraints selector": (SPREAD_P, _p2({"foo": "foo1"}),
                                                                           _p2({"foo": "foo2"}), QUEUE_SKIP),
    "change pod's label that doesn't match topologySpreadConstraints selector": (
        SPREAD_P, _p2({"foo": "", "bar": "bar1"}), _p2({"foo": "", "bar": "bar2"}), QUEUE_SKIP),
    "add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints": (
        SPREAD_P2, _p2({"foo": ""}), _p2({"foo": "", "bar": "bar2"}), QUEUE),
    "change pod's label that doesn't match topologySpreadConstraints selector with multi "
    "topologySpreadConstraints": (SPREAD_P2, _p2({"foo": ""}), _p2({"foo": "", "baz": ""}), QUEUE_SKIP),
    "change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints": (
        SPREAD_P2, _p2({"foo": "", "bar": ""}), _p2({"foo": "", "bar": "bar2"}), QUEUE_SKIP),
    "the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration": (
        make_pod("p", "p", labels={"foo": ""}, spread=HONOR), make_pod("p", "p", labels={"foo": ""}),
        make_pod("p", "p", labels={"foo": ""}, tolerations=[exists_toleration("node.kubernetes.io/unschedulable")]),
        QUEUE),
    "the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new "
    "toleration": (
        make_pod("p", "p", labels={"foo": ""}, spread=IGNORE), make_pod("p", "p", labels={"foo": ""}),
        make_pod("p", "p", labels={"foo": ""}, tolerations=[exists_toleration("node.kubernetes.io/unschedulable")]),
        QUEUE_SKIP),
    "the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the "
    "constraint": (make_pod("p", "p", labels={"foo": ""}, spread=IGNORE), make_pod("p", "p"),
                   make_pod("p", "p", labels={"foo": ""}), QUEUE),
    "the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label": (
        make_pod("p", "p", labels={"foo": ""}, spread=IGNORE), make_pod("p", "p"),
        make_pod("p", "p", labels={"unrelated": ""}), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(SPREAD_POD_CASES))
def test_pod_topology_spread_after_pod_change(name):
    pod, old, new, want = SPREAD_POD_CASES[name]
    assert _spread_plugin().is_schedulable_after_pod_change(pod, old, new) == want


# -- NodeResourcesFit (noderesources/fit_test.go) ------------------------------------------------------------------
def _fit(version="1.36"):
    return Fit.new({}, handle_at(version) if version != "1.36" else V136)


def _req(name, uid="", node="", nominated="", level=False, **requests):
    kw = {"pod_requests": requests} if level else {"requests": requests}
    return make_pod(name, uid, node=node, nominated=nominated, **kw)


FIT_POD_CASES = {
    "queue-on-other-pod-deleted": (_req("pod1", cpu="1"), _req("pod2", cpu="1", node="fake"), None, QUEUE),
    "skip-queue-on-unscheduled-pod-deleted": (make_pod(), make_pod(), None, QUEUE_SKIP),
    "queue-on-nominated-pod-deleted": (_req("pod1", "uid0", cpu="1"), _req("pod2", "uid1", nominated="fake", cpu="2"),
                                       None, QUEUE),
    "skip-queue-on-other-unscheduled-pod": (_req("pod1", "uid0", cpu="1"), _req("pod2", "uid1", cpu="2"),
                                            _req("pod2", "uid1", cpu="1"), QUEUE_SKIP),
    "skip-queue-on-other-pod-unrelated-resource-scaled-down": (
        _req("pod1", "pod1", cpu="1"), _req("pod2", "pod2", node="fake", memory="2"),
        _req("pod2", "pod2", node="fake", memory="1"), QUEUE_SKIP),
    "skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down": (
        _req("pod1", "pod1", level=True, cpu="1"), _req("pod2", "pod2", node="fake", level=True, memory="2"),
        _req("pod2", "pod2", node="fake", level=True, memory="1"), QUEUE_SKIP),
    "queue-on-other-pod-some-resource-scale-down": (
        _req("pod1", "pod1", cpu="1"), _req("pod2", "pod2", node="fake", cpu="2"),
        _req("pod2", "pod2", node="fake", cpu="1"), QUEUE),
    "queue-on-other-pod-some-pod-level-resource-scale-down": (
        _req("pod1", "pod1", level=True, cpu="1"), _req("pod2", "pod2", node="fake", level=True, cpu="2"),
        _req("pod2", "pod2", node="fake", level=True, cpu="1"), QUEUE),
    "queue-on-target-pod-some-resource-scale-down": (
        _req("pod1", "pod1", cpu="1"), _req("pod1", "pod1", cpu="2"), _req("pod1", "pod1", cpu="1"), QUEUE),
    "queue-on-target-pod-some-pod-level-resource-scale-down": (
        _req("pod1", "pod1", level=True, cpu="1"), _req("pod1", "pod1", level=True, cpu="2"),
        _req("pod1", "pod1", level=True, cpu="1"), QUEUE),
}


@pytest.mark.parametrize("name", list(FIT_POD_CASES))
def test_fit_after_pod_event(name):
    pod, old, new, want = FIT_POD_CASES[name]
    assert _fit().is_schedulable_after_pod_event(pod, old, new) == want


def test_fit_after_pod_event_without_in_place_scaling():
    """skip-queue-on-disable-inplace-pod-vertical-scaling: a scale-down is no event without the gate."""
    pl = Fit.new({}, V136)
    pl.in_place_scaling = False
    assert pl.is_schedulable_after_pod_event(_req("pod1", cpu="1"), _req("pod2", cpu="2", node="fake"),
                                             _req("pod2", cpu="1", node="fake")) == QUEUE_SKIP


def _capacity(**resources):
    """st.MakeNode().Capacity(...): allocatable too, with 32 pods."""
    return make_node(allocatable={"pods": "32", **{k.replace("_", "/"): v for k, v in resources.items()}})


AAA, BBB = "example.com/aaa", "example.com/bbb"
MEM2_AAA = make_pod(requests={"memory": "2", AAA: "1"})
FIT_NODE_CASES = {
    "skip-queue-on-node-add-without-sufficient-resources": (make_pod(requests={"memory": "2"}), None,
                                                            _capacity(memory="1"), QUEUE_SKIP),
    "skip-queue-on-node-add-without-required-resource-type": (make_pod(requests={AAA: "1"}), None,
                                                              make_node(allocatable={"pods": "32", BBB: "1"}),
                                                              QUEUE_SKIP),
    "queue-on-node-add-with-sufficient-resources": (MEM2_AAA, None, make_node(allocatable={"pods": "32", "memory": "4",
                                                                                           AAA: "2"}), QUEUE),
    "skip-queue-on-node-unrelated-changes": (MEM2_AAA, make_node(allocatable={"pods": "32", "memory": "2", AAA: "2"}),
                                             make_node(allocatable={"pods": "32", "memory": "2", AAA: "1", BBB: "2"}),
                                             QUEUE_SKIP),
    "queue-on-pod-requested-resources-increase": (MEM2_AAA, make_node(allocatable={"pods": "32", "memory": "2",
                                                                                   AAA: "1"}),
                                                  make_node(allocatable={"pods": "32", "memory": "2", AAA: "2"}),
                                                  QUEUE),
    "skip-queue-on-node-changes-from-suitable-to-unsuitable": (
        MEM2_AAA, make_node(allocatable={"pods": "32", "memory": "4", AAA: "2"}),
        make_node(allocatable={"pods": "32", "memory": "1", AAA: "2"}), QUEUE_SKIP),
    "queue-on-node-changes-from-unsuitable-to-suitable": (
        MEM2_AAA, make_node(allocatable={"pods": "32", "memory": "1", AAA: "2"}),
        make_node(allocatable={"pods": "32", "memory": "4", AAA: "2"}), QUEUE),
}


@pytest.mark.parametrize("name", list(FIT_NODE_CASES))
def test_fit_after_node_change(name):
    pod, old, new, want = FIT_NODE_CASES[name]
    assert _fit().is_schedulable_after_node_change(pod, old, new) == want


def _class(name="", extended=None):
    spec = {"extendedResourceName": extended} if extended is not None else {}
    return {"metadata": {"name": name}, "spec": spec}


GPU = "example.com/gpu"
IMPLICIT = "deviceclass.resource.kubernetes.io/gpuclass"
FIT_CLASS_CASES = {
    "skip-queue-on-class-nil-extended-resource-name-pointer": (make_pod(requests={"memory": "2"}), _class(), _class(),
                                                               QUEUE_SKIP),
    "skip-queue-on-class-same-extended-resource-name-pointer": (make_pod(requests={"memory": "2"}),
                                                                _class(extended=GPU), _class(extended=GPU), QUEUE_SKIP),
    "skip-queue-on-class-same-extended-resource-name": (make_pod(requests={"memory": "2"}), _class(extended=GPU),
                                                        _class(extended=GPU), QUEUE_SKIP),
    "queue-on-class-add-with-implicit-extended-resource-name": (make_pod(requests={IMPLICIT: "1"}), None,
                                                                _class("gpuclass", GPU), QUEUE),
    "skip-on-class-add-with-implicit-extended-resource-name-not-matching": (make_pod(requests={IMPLICIT: "1"}), None,
                                                                            _class("myclass", GPU), QUEUE_SKIP),
    "skip-on-class-add-with-explicit-extended-resource-name-not-matching": (
        make_pod(requests={"example.com/othergpu": "1"}), None, _class("myclass", GPU), QUEUE_SKIP),
    "skip-on-class-update-with-implicit-extended-resource-name": (make_pod(requests={IMPLICIT: "1"}),
                                                                  _class("gpuclass"), _class("gpuclass", GPU),
                                                                  QUEUE_SKIP),
    "queue-on-class-add-with-extended-resource-name": (make_pod(requests={GPU: "1"}), None, _class(extended=GPU),
                                                       QUEUE),
    "queue-on-class-update-with-extended-resource-name": (make_pod(requests={GPU: "1"}), _class(extended=GPU + "1"),
                                                          _class(extended=GPU), QUEUE),
}


@pytest.mark.parametrize("name", list(FIT_CLASS_CASES))
def test_fit_after_device_class_event(name):
    pod, old, new, want = FIT_CLASS_CASES[name]
    assert Fit.is_schedulable_after_device_class_event(pod, old, new) == want


def test_fit_events_to_register():
    """TestEventsToRegister at each version's gates: 1.36 narrows the node events and adds scale-downs and
    DeviceClasses (InPlacePodVerticalScaling, DRAExtendedResource); 1.30 keeps its own."""
    from scheduler_core.queue import ADD, DELETE, UPDATE, UPDATE_NODE_ALLOCATABLE, UPDATE_POD_SCALE_DOWN
    got = [(e.resource, e.action) for e, _h in map(parse_registration, _fit().events_to_register())]
    assert got == [("Pod", DELETE | UPDATE_POD_SCALE_DOWN), ("Node", ADD | UPDATE_NODE_ALLOCATABLE),
                   ("DeviceClass", ADD | UPDATE)]
    got = [(e.resource, e.action) for e, _h in map(parse_registration, _fit("1.30").events_to_register())]
    assert got == [("Pod", DELETE), ("Node", ADD | UPDATE)]


# -- VolumeRestrictions (volumerestrictions/volume_restrictions_test.go) -----------------------------------------
GCE, GCE2 = {"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}}
AWS, AWS2 = {"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "fsType": "ext4",
                   "lun": 0}}
ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "fsType": "ext4",
                    "lun": 0}}


def _vol(source, name="v"):
    return make_pod(volumes=[dict(source, name=name)])


def _pvcs(name, *claims, namespace="", node=""):
    return make_pod(name, namespace=namespace, node=node,
                    volumes=[{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims])


RESTRICTIONS_POD_CASES = {
    "queue-new-object-gcedisk-conflict": (_vol(GCE), _vol(GCE), QUEUE),
    "skip-new-object-gcedisk-no-conflict": (_vol(GCE), _vol(GCE2), QUEUE_SKIP),
    "queue-new-object-awsdisk-conflict": (_vol(AWS), _vol(AWS), QUEUE),
    "skip-new-object-awsdisk-no-conflict": (_vol(AWS), _vol(AWS2), QUEUE_SKIP),
    "queue-new-object-rbddisk-conflict": (_vol(RBD), _vol(RBD), QUEUE),
    "skip-new-object-rbddisk-no-conflict": (_vol(RBD), _vol(RBD2), QUEUE_SKIP),
    "queue-new-object-iscsidisk-conflict": (_vol(ISCSI), _vol(ISCSI), QUEUE),
    "skip-new-object-iscsidisk-no-conflict": (_vol(ISCSI), _vol(ISCSI2), QUEUE_SKIP),
    "queue-has-same-claim": (_pvcs("pod1", "claim-rwop"), _pvcs("pod2", "claim-rwop"), QUEUE),
    "skip-no-same-claim": (_pvcs("pod1", "claim-1-rwop"), _pvcs("pod2", "claim-2-rwop"), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(RESTRICTIONS_POD_CASES))
def test_volume_restrictions_after_pod_deleted(name):
    pod, old, want = RESTRICTIONS_POD_CASES[name]
    assert VolumeRestrictions.new(None, V136).is_schedulable_after_pod_deleted(pod, old, None) == want


def _pvc(name, namespace="default"):
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"accessModes": ["ReadWriteMany"]}}


ONE_PVC = _pvcs("pod-with-one-pvc", "claim-with-rwx-1", namespace="default", node="node-1")
TWO_PVCS = _pvcs("pod-with-two-pvcs", "claim-with-rwx-1", "claim-with-rwx-2", namespace="default", node="node-1")
RESTRICTIONS_PVC_CASES = {
    "queue-new-object-pvc-belong-pod": (TWO_PVCS, _pvc("claim-with-rwx-1"), QUEUE),
    "skip-new-object-unused": (ONE_PVC, _pvc("claim-with-rwx-2"), QUEUE_SKIP),
    "skip-nil-old-object": (ONE_PVC, _pvc("claim-with-rwx-2"), QUEUE_SKIP),
    "skip-new-object-not-belong-pod": (ONE_PVC, _pvc("claim-with-rwx-2"), QUEUE_SKIP),
    "skip-new-object-namespace-not-equal-pod": (_pvcs("pod-with-one-pvc", "claim-with-rwx-1", namespace="kube-system"),
                                                _pvc("claim-with-rwx-1"), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(RESTRICTIONS_PVC_CASES))
def test_volume_restrictions_after_pvc_added(name):
    pod, new, want = RESTRICTIONS_PVC_CASES[name]
    assert VolumeRestrictions.new(None, V136).is_schedulable_after_pvc_added(pod, None, new) == want


# -- VolumeZone (volumezone/volume_zone_test.go) ----------------------------------------------------------------
def _zone_pvc(name="PVC_1", namespace="default", volume="Vol_1"):
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"volumeName": volume}}


def _pv(**labels):
    keys = {"beta_zone": "failure-domain.beta.kubernetes.io/zone", "zone": "topology.kubernetes.io/zone"}
    return {"metadata": {"name": "Vol_1", "labels": {keys[k]: v for k, v in labels.items()}}}


WITH_PVC_1 = _pvcs("pod_1", "PVC_1", namespace="default")
ZONE_PVC_CASES = {
    "pvc-was-added-but-pod-refers-no-pvc": (make_pod("pod_1", namespace="default"), None, _zone_pvc(), QUEUE_SKIP),
    "pvc-was-added-and-pod-was-bound-to-different-pvc": (_pvcs("pod_1", "PVC_2", namespace="default"), None,
                                                         _zone_pvc(), QUEUE_SKIP),
    "pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns": (WITH_PVC_1, None, _zone_pvc(namespace="ns1"),
                                                                QUEUE_SKIP),
    "pvc-was-added-and-pod-was-bound-to-the-pvc": (WITH_PVC_1, None, _zone_pvc(), QUEUE),
    "pvc-was-updated-and-pod-was-bound-to-the-pvc": (WITH_PVC_1, _zone_pvc(volume=""), _zone_pvc(), QUEUE),
    "pvc-was-updated-but-pod-refers-no-pvc": (make_pod("pod_1", namespace="default"), _zone_pvc(volume=""),
                                              _zone_pvc(), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(ZONE_PVC_CASES))
def test_volume_zone_after_pvc_change(name):
    pod, old, new, want = ZONE_PVC_CASES[name]
    assert VolumeZone.new(None, V136).is_schedulable_after_pvc_change(pod, old, new) == want


ZONE_CLASS_CASES = {
    "sc-doesn't-have-volume-binding-mode": ({"metadata": {"name": "SC_1"}}, QUEUE_SKIP),
    "new-sc-is-wait-for-first-consumer-mode": (
        {"metadata": {"name": "SC_1"}, "volumeBindingMode": "WaitForFirstConsumer"}, QUEUE),
}


@pytest.mark.parametrize("name", list(ZONE_CLASS_CASES))
def test_volume_zone_after_storage_class_added(name):
    new, want = ZONE_CLASS_CASES[name]
    assert VolumeZone.new(None, V136).is_schedulable_after_storage_class_added(WITH_PVC_1, None, new) == want


ZONE_PV_CASES = {
    "new-pv-was-added": (None, _pv(beta_zone="us-west1-b"), QUEUE),
    "pv-was-updated-and-changed-topology": (_pv(beta_zone="us-west1-a"), _pv(beta_zone="us-west1-b"), QUEUE),
    "pv-was-updated-and-added-topology-label": (_pv(beta_zone="us-west1-a"), _pv(beta_zone="us-west1-a", zone="zone"),
                                                QUEUE),
    "pv-was-updated-but-no-topology-is-changed": (_pv(beta_zone="us-west1-a", zone="zone"),
                                                  _pv(beta_zone="us-west1-a", zone="zone"), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(ZONE_PV_CASES))
def test_volume_zone_after_pv_change(name):
    old, new, want = ZONE_PV_CASES[name]
    assert VolumeZone.new(None, V136).is_schedulable_after_pv_change(WITH_PVC_1, old, new) == want


# -- VolumeBinding (volumebinding/volume_binding_test.go) -----------------------------------------------------------
def _binding():
    from scheduler_core.plugins.volumebinding import VolumeBinding
    return VolumeBinding.new({}, V136)


MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"


def _csinode(annotation=None):
    meta = {"name": "csinode-a"}
    if annotation is not None:
        meta["annotations"] = {MIGRATED: annotation}
    return {"metadata": meta}


CSI_NODE_CASES = {
    "CSINode is newly created": (None, _csinode(), QUEUE),
    "CSINode's migrated-plugins annotations is added": (_csinode("test1"), _csinode("test1, test2"), QUEUE),
    "CSINode's migrated-plugins annotation is updated": (_csinode("test1"), _csinode("test2"), QUEUE),
    "CSINode is updated but migrated-plugins annotation gets unchanged": (_csinode("test1"), _csinode("test1"),
                                                                          QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(CSI_NODE_CASES))
def test_volume_binding_after_csi_node_change(name):
    old, new, want = CSI_NODE_CASES[name]
    assert _binding().is_schedulable_after_csi_node_change(make_pod("pod-a"), old, new) == want


def _binding_pod(*volumes, namespace=""):
    out = []
    for kind, name in volumes:
        if kind == "pvc":
            out.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
        elif kind == "ephemeral":
            out.append({"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
        else:
            out.append({"name": name, "emptyDir": {}})
    return make_pod("pod-a", namespace=namespace, volumes=out)


def _claim(name):
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"storageClassName": ""}}


BINDING_PVC_CASES = {
    "pod has no pvc or ephemeral volumes": (_binding_pod(("emptyDir", "v")), _claim("pvc-b"), QUEUE_SKIP),
    "pvc with the same name as the one used by the pod in a different namespace is modified": (
        _binding_pod(("pvc", "pvc-a"), ("pvc", "pvc-b"), namespace="ns-a"), _claim("pvc-b"), QUEUE_SKIP),
    "pod has no pvc that is being modified": (_binding_pod(("pvc", "pvc-a"), ("pvc", "pvc-c")), _claim("pvc-b"),
                                              QUEUE_SKIP),
    "pod has no generic ephemeral volume that is being modified": (
        _binding_pod(("ephemeral", "ephemeral-a"), ("ephemeral", "ephemeral-c")), _claim("pod-a-ephemeral-b"),
        QUEUE_SKIP),
    "pod has the pvc that is being modified": (_binding_pod(("pvc", "pvc-a"), ("pvc", "pvc-b")), _claim("pvc-b"),
                                               QUEUE),
    "pod has the generic ephemeral volume that is being modified": (
        _binding_pod(("ephemeral", "ephemeral-a"), ("ephemeral", "ephemeral-b")), _claim("pod-a-ephemeral-b"), QUEUE),
}


@pytest.mark.parametrize("name", list(BINDING_PVC_CASES))
def test_volume_binding_after_pvc_change(name):
    pod, claim, want = BINDING_PVC_CASES[name]
    assert _binding().is_schedulable_after_pvc_change(pod, claim, claim) == want


HOSTNAME_TOPOLOGY = [{"matchLabelExpressions": [{"key": "kubernetes.io/hostname", "values": ["node-a"]}]}]
BINDING_CLASS_CASES = {
    "When a new StorageClass is created, it returns Queue": (None, {"metadata": {"name": "sc-a"}}, QUEUE),
    "When the AllowedTopologies are changed, it returns Queue": (
        {"metadata": {"name": "sc-a"}}, {"metadata": {"name": "sc-a"}, "allowedTopologies": HOSTNAME_TOPOLOGY}, QUEUE),
    "When there are no changes to the StorageClass, it returns QueueSkip": (
        {"metadata": {"name": "sc-a"}}, {"metadata": {"name": "sc-a"}}, QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(BINDING_CLASS_CASES))
def test_volume_binding_after_storage_class_change(name):
    old, new, want = BINDING_CLASS_CASES[name]
    assert _binding().is_schedulable_after_storage_class_change(make_pod("pod-a"), old, new) == want


def _cap(capacity=None, maximum=None):
    out = {"metadata": {"name": "cap-a"}}
    if capacity is not None:
        out["capacity"] = str(capacity)
    if maximum is not None:
        out["maximumVolumeSize"] = str(maximum)
    return out


CAPACITY_CASES = {
    "When a new CSIStorageCapacity is created, it returns Queue": (None, _cap(), QUEUE),
    "When the volume limit is increase(Capacity set), it returns Queue": (_cap(), _cap(100), QUEUE),
    "When the volume limit is increase(MaximumVolumeSize set), it returns Queue": (_cap(), _cap(maximum=100), QUEUE),
    "When the volume limit is increase(Capacity increase), it returns Queue": (_cap(50), _cap(100), QUEUE),
    "When the volume limit is increase(MaximumVolumeSize unset), it returns Queue": (_cap(100, 50), _cap(100), QUEUE),
    "When the volume limit is increase(MaximumVolumeSize increase), it returns Queue": (_cap(100, 50), _cap(100, 60),
                                                                                        QUEUE),
    "When there are no changes to the CSIStorageCapacity, it returns QueueSkip": (_cap(100, 50), _cap(100, 50),
                                                                                  QUEUE_SKIP),
    "When the volume limit is equal(Capacity), it returns QueueSkip": (_cap(100), _cap(100), QUEUE_SKIP),
    "When the volume limit is equal(MaximumVolumeSize unset), it returns QueueSkip": (_cap(100, 50), _cap(50),
                                                                                      QUEUE_SKIP),
    "When the volume limit is decrease(Capacity), it returns QueueSkip": (_cap(100), _cap(90), QUEUE_SKIP),
    "When the volume limit is decrease(MaximumVolumeSize), it returns QueueSkip": (_cap(maximum=100), _cap(maximum=90),
                                                                                   QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(CAPACITY_CASES))
def test_volume_binding_after_csi_storage_capacity_change(name):
    old, new, want = CAPACITY_CASES[name]
    assert _binding().is_schedulable_after_csi_storage_capacity_change(make_pod("pod-a"), old, new) == want


def _driver(name, capacity=None):
    return {"metadata": {"name": name}, "spec": {} if capacity is None else {"storageCapacity": capacity}}


WITH_CSI = make_pod("pod-a", volumes=[{"name": "v", "csi": {"driver": "test1"}}])
CSI_DRIVER_CASES = {
    "pod has no CSIDriver": (make_pod("pod-a"), _driver("test1"), _driver("test1", True), QUEUE_SKIP),
    "driver name in pod and csidriver name are different": (WITH_CSI, _driver("test2", True), _driver("test2", False),
                                                            QUEUE_SKIP),
    "original StorageCapacity is nil": (WITH_CSI, _driver("test1"), _driver("test1"), QUEUE_SKIP),
    "original StorageCapacity is false": (WITH_CSI, _driver("test1", False), _driver("test1", False), QUEUE_SKIP),
    "modified StorageCapacity is nil": (WITH_CSI, _driver("test1", True), _driver("test1"), QUEUE),
    "modified StorageCapacity is true": (WITH_CSI, _driver("test1", True), _driver("test1", True), QUEUE_SKIP),
    "modified StorageCapacity is false": (WITH_CSI, _driver("test1", True), _driver("test1", False), QUEUE),
}


@pytest.mark.parametrize("name", list(CSI_DRIVER_CASES))
def test_volume_binding_after_csi_driver_change(name):
    pod, old, new, want = CSI_DRIVER_CASES[name]
    assert _binding().is_schedulable_after_csi_driver_change(pod, old, new) == want


# -- DynamicResources (dynamicresources/dynamicresources_test.go) -------------------------------------------------
def _dra(claims):
    """The plugin at 1.36 over a store holding these claims."""
    from types import SimpleNamespace

    from scheduler_core.plugins.dynamicresources import DynamicResources
    h = handle_at("1.36")
    h.snapshot = SimpleNamespace(objects=SimpleNamespace(resource_claims={
        f'{c["metadata"]["namespace"]}/{c["metadata"]["name"]}': c for c in claims}))
    return DynamicResources.new({}, h)


def _dra_pod(claim_ref, status_claim=None):
    raw = {"metadata": {"name": "my-pod", "namespace": "default", "uid": "1234"},
           "spec": {"containers": [{"name": "c"}], "resourceClaims": [dict(claim_ref, name="my-pod-claim")]}}
    if status_claim:
        raw["status"] = {"resourceClaimStatuses": [{"name": "my-pod-claim", "resourceClaimName": status_claim}]}
    return Pod(raw)


def _dra_claim(name, uid, allocated=False, owner_uid="1234", finalizers=()):
    claim = {"metadata": {"name": name, "namespace": "default", "uid": uid, "finalizers": list(finalizers),
                          "ownerReferences": [{"kind": "Pod", "name": "my-pod", "uid": owner_uid, "controller": True}]},
             "spec": {"devices": {"requests": [{"name": "req-1",
                                                "exactly": {"deviceClassName": "my-resource-class"}}]}},
             "status": {}}
    if allocated:
        claim["status"] = {"allocation": {"devices": {"results": []}}}
    return claim


WITH_TEMPLATE = _dra_pod({"resourceClaimTemplateName": "my-pod-claim-template"})
WITH_NAME = _dra_pod({"resourceClaimName": "my-pod-claim"})
PENDING = _dra_claim("my-pod-claim", "claim-uid")
OTHER_ALLOCATED = _dra_claim("other-claim", "other-uid", allocated=True)
DRA_CLAIM_CASES = {
    "skip-wrong-claim": (WITH_TEMPLATE, [], None, _dra_claim("my-pod-claim", "x", True, owner_uid="1234123"),
                         QUEUE_SKIP),
    "skip-unrelated-claim": (WITH_TEMPLATE, [_dra_claim("my-pod-claim", "claim-uid", True)], None,
                             _dra_claim("my-pod-claim-foo", "claim-uid123", True), QUEUE_SKIP),
    "queue-on-add": (WITH_NAME, [PENDING], None, PENDING, QUEUE),
    "skip-adding-finalizer": (WITH_NAME, [PENDING], PENDING,
                              _dra_claim("my-pod-claim", "claim-uid", finalizers=["foo"]), QUEUE_SKIP),
    "queue-on-status-change": (WITH_NAME, [PENDING], PENDING, _dra_claim("my-pod-claim", "claim-uid", allocated=True),
                               QUEUE),
    "claim-deallocate": (WITH_NAME, [PENDING, OTHER_ALLOCATED], OTHER_ALLOCATED, _dra_claim("other-claim", "other-uid"),
                         QUEUE),
}


@pytest.mark.parametrize("name", list(DRA_CLAIM_CASES))
def test_dynamic_resources_after_claim_change(name):
    pod, claims, old, new, want = DRA_CLAIM_CASES[name]
    assert _dra(claims).is_schedulable_after_claim_change(pod, old, new) == want


DRA_POD_CASES = {
    "complete": ([PENDING], WITH_TEMPLATE, _dra_pod({"resourceClaimTemplateName": "my-pod-claim-template"},
                                                    "my-pod-claim"), QUEUE),
    "wrong-pod": ([PENDING], WITH_TEMPLATE, Pod({"metadata": {"name": "other", "namespace": "default", "uid": "other"},
                                                 "spec": {"containers": [{"name": "c"}]}}), QUEUE_SKIP),
    "missing-claim": ([], WITH_TEMPLATE, _dra_pod({"resourceClaimTemplateName": "my-pod-claim-template"},
                                                  "my-pod-claim"), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(DRA_POD_CASES))
def test_dynamic_resources_after_pod_change(name):
    claims, pod, new, want = DRA_POD_CASES[name]
    assert _dra(claims).is_schedulable_after_pod_change(pod, None, new) == want


# -- NodeVolumeLimits (nodevolumelimits/csi_test.go) -----------------------------------------------------------------
def _csi_limits():
    from scheduler_core.plugins.nodevolumelimits.csi import CSILimits
    return CSILimits.new({}, V136)


def _vols(*volumes, name="p", namespace="", node=""):
    return make_pod(name, namespace=namespace, node=node, volumes=[dict(v, name=v.get("name", f"v{i}"))
                                                                   for i, v in enumerate(volumes)])


def _pvc_vol(claim):
    return {"persistentVolumeClaim": {"claimName": claim}}


EBS_POD = _vols(_pvc_vol("csi-ebs.csi.aws.com-2"))
CSI_POD_CASES = {
    "return a Queue when a deleted pod has a PVC": (_vols(_pvc_vol("placeholder"), node="csiNode"), QUEUE),
    "return a Queue when a deleted pod has a inline migratable volume": (
        _vols({"awsElasticBlockStore": {}}, node="csiNode"), QUEUE),
    "return a QueueSkip when a deleted pod doesn't have any volume": (make_pod(node="csiNode"), QUEUE_SKIP),
    "return a QueueSkip when a deleted pod is not scheduled.": (_vols(_pvc_vol("csi-ebs.csi.aws.com-0")), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(CSI_POD_CASES))
def test_csi_limits_after_pod_deleted(name):
    old, want = CSI_POD_CASES[name]
    assert _csi_limits().is_schedulable_after_pod_deleted(EBS_POD, old, None) == want


def _claim_in(name="", namespace=""):
    return {"metadata": {"name": name, "namespace": namespace}}


CSI_PVC_CASES = {
    "a pod isn't in the same namespace as an added PVC": (make_pod(namespace="ns1"), _claim_in(namespace="ns2"),
                                                          QUEUE_SKIP),
    "a pod is in the same namespace as an added PVC": (_vols(_pvc_vol("pvc1"), namespace="ns1"),
                                                       _claim_in("pvc1", "ns1"), QUEUE),
    "a pod has an ephemeral volume related to an added PVC": (
        _vols({"name": "ephemeral", "ephemeral": {}}, name="pod1", namespace="ns1"), _claim_in("pod1-ephemeral", "ns1"),
        QUEUE),
    "a pod doesn't have the same PVC as an added PVC": (_vols(_pvc_vol("pvc1"), namespace="ns1"),
                                                        _claim_in("pvc2", "ns1"), QUEUE_SKIP),
    "a pod doesn't have any PVC attached": (make_pod(namespace="ns1"), _claim_in("pvc2", "ns1"), QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(CSI_PVC_CASES))
def test_csi_limits_after_pvc_added(name):
    pod, new, want = CSI_PVC_CASES[name]
    assert _csi_limits().is_schedulable_after_pvc_added(pod, None, new) == want


def _attachment(attacher):
    return {"metadata": {"name": "volumeattachment1"}, "spec": {"nodeName": "fake-node", "attacher": attacher}}


CSI_ATTACHMENT_CASES = {
    "a pod has PVC when VolumeAttachment is deleting": (_vols(_pvc_vol("pvc1"), namespace="ns1"),
                                                        _attachment("test.storage.gke.io"), QUEUE),
    "a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting (match)": (
        _vols({"awsElasticBlockStore": {"volumeID": "test"}}, namespace="ns1"), _attachment("ebs.csi.aws.com"), QUEUE),
    "a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting (no "
    "match)": (_vols({"gcePersistentDisk": {"pdName": "test"}}, namespace="ns1"), _attachment("ebs.csi.aws.com"),
               QUEUE_SKIP),
}


@pytest.mark.parametrize("name", list(CSI_ATTACHMENT_CASES))
def test_csi_limits_after_volume_attachment_deleted(name):
    pod, old, want = CSI_ATTACHMENT_CASES[name]
    assert _csi_limits().is_schedulable_after_volume_attachment_deleted(pod, old, None) == want
