"""kube's pkg/scheduler/schedule_one_test.go: TestSchedulerSchedulePod and TestNumFeasibleNodesToFind.

The fake plugins are upstream's (pkg/scheduler/testing/framework/fake_plugins.go and the test file's own):
FalseFilter / TrueFilter / MatchFilter (pod name == node name) reject with "Nodes failed the fake plugin";
FakeFilter rejects the listed nodes with "injecting failure for pod <name>"; FakePreFilter returns a fixed
result and status; EqualPrioritizer scores 1; NumericMap scores int(node name); ReverseNumericMap normalizes
to max+min-score; FalseMap fails Score; the fake extender rejects every node with
`FakeExtender: node "<n>" failed`. selectHost's random tie-break is kept: ``wantNodes`` is the set of allowed
choices. Not translated: the random selectHost tables, the scheduleOne/binding/event tests built on informers.
"""
from __future__ import annotations

import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config.args import default_args
from scheduler_core.extender import ExtenderError, HTTPExtender
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import (BindPlugin, FilterPlugin, PreFilterPlugin, PreScorePlugin,
                                                QueueSortPlugin, ScoreExtensions, ScorePlugin)
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.profile import new_framework
from scheduler_core.framework.snapshot import ClusterObjects, Snapshot
from scheduler_core.framework.status import Code, Status
from scheduler_core.objects import Node, Pod
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.schedule_one import SchedulerContext, num_feasible_nodes_to_find, schedule_pod
from scheduler_core.scheduler import Scheduler
from scheduler_core.trace import CycleTrace

UPSTREAM = "pkg/scheduler/schedule_one_test.go"
UPSTREAM_VERSION = "v1.32+ (imports backend/cache, NodeToStatus; stored copy id 11259570)"
UPSTREAM_CASES = 51

U, UU, E, SKIP = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR, Code.SKIP
FAKE = "Nodes failed the fake plugin"
DRIFT_ABSENT = ("drift (v1.32): nodes a PreFilterResult excludes are no longer stored one by one (AbsentNodesStatus "
                "'node(s) didn't satisfy plugin(s) [..]', not counted as evaluated); v1.30 stores each with 'node is "
                "filtered out by the prefilter result' and counts it")
DRIFT_PLUGINS = ("drift (v1.31, kubernetes#122251): PreFilter plugins whose PreFilterResult filtered out nodes join "
                 "UnschedulablePlugins; in v1.30 the empty-intersection status names no plugin")


# -- fake plugins ---------------------------------------------------------------------------------
class QueueSort(QueueSortPlugin):
    name = "PrioritySort"

    def less(self, a, b):
        return False


class Binder(BindPlugin):
    name = "DefaultBinder"

    def bind(self, state, pod, node_name):
        return None


class FixedFilter(FilterPlugin):
    """FalseFilter / TrueFilter / MatchFilter / NoPodsFilter."""

    def __init__(self, name, rule):
        self.name, self.rule = name, rule

    def filter(self, state, pod, node_info):
        return None if self.rule(pod, node_info) else Status(U, FAKE)


class FakeFilter(FilterPlugin):
    def __init__(self, codes, name="FakeFilter"):
        self.name, self.codes = name, codes

    def filter(self, state, pod, node_info):
        code = self.codes.get(node_info.name)
        return None if code is None else Status(code, f"injecting failure for pod {pod.name}")


class CountingFilter(FilterPlugin):
    """tf.FakeFilterPlugin with no failures: counts its calls (NumFilterCalled)."""

    name = "FakeFilter"

    def __init__(self):
        self.calls = 0

    def filter(self, state, pod, node_info):
        self.calls += 1
        return None


class FakePreFilter(PreFilterPlugin):
    def __init__(self, name, result=None, status=None):
        self.name, self.result, self.status = name, result, status

    def pre_filter(self, state, pod):
        return self.result, self.status


class FakePreFilterAndFilter(FakePreFilter, FakeFilter):
    def __init__(self, name, result, status, codes):
        FakePreFilter.__init__(self, name, result, status)
        self.codes = codes


class MapScore(ScorePlugin):
    def __init__(self, name, score):
        self.name, self._score = name, score

    def score(self, state, pod, node_info):
        return self._score(node_info.name)


class ReverseNumericMap(ScorePlugin, ScoreExtensions):
    name = "ReverseNumericMap"

    def score(self, state, pod, node_info):
        return int(node_info.name), None

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        hi, lo = max(s for _, s in scores), min(s for _, s in scores)
        for pair in scores:
            pair[1] = int(float(hi) + float(lo) - float(pair[1]))
        return None


class TrueMap(ScorePlugin, ScoreExtensions):
    name = "TrueMap"

    def score(self, state, pod, node_info):
        return 1, None

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        return None


class FakePreScoreAndScore(PreScorePlugin, ScorePlugin):
    name = "FakePreScoreAndScorePlugin"

    def pre_score(self, state, pod, node_infos):
        return Status(SKIP, "fake skip")

    def score(self, state, pod, node_info):
        return 0, Status.error("this score function shouldn't be executed because this plugin returned Skip in the PreScore")


class FalseExtender(HTTPExtender):
    """tf.FakeExtender with FalsePredicateExtender."""

    def __init__(self):
        super().__init__({"urlPrefix": "FakeExtender1", "filterVerb": "filter"})

    def filter(self, pod, node_infos):
        return [], {ni.name: f'FakeExtender: node "{ni.name}" failed' for ni in node_infos}, {}


def true_filter():
    return FixedFilter("TrueFilter", lambda pod, ni: True)


def false_filter():
    return FixedFilter("FalseFilter", lambda pod, ni: False)


def match_filter():
    return FixedFilter("MatchFilter", lambda pod, ni: pod.name == ni.name)


def no_pods_filter():
    return FixedFilter("NoPodsFilter", lambda pod, ni: not ni.pods)


def equal():
    return MapScore("EqualPrioritizerPlugin", lambda name: (1, None))


def numeric():
    return MapScore("NumericMap", lambda name: (int(name), None))


def false_map():
    return MapScore("FalseMap", lambda name: (0, Status.error("priority map encounters an error")))


# -- objects -----------------------------------------------------------------------------------------
def node(name, hostname=None):
    return Node({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": hostname or name}}})


def pod(name, node_name="", labels=None, pvc=None, spread=None):
    spec = {"containers": [{"name": "c"}]}
    if node_name:
        spec["nodeName"] = node_name
    if pvc:
        spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": pvc}}]
    if spread:
        max_skew, key = spread
        spec["topologySpreadConstraints"] = [{"maxSkew": max_skew, "topologyKey": key,
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchExpressions": [{"key": "foo",
                                                                                      "operator": "Exists"}]}}]
    return Pod({"metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels or {}},
                "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}})


def pvc(name, volume_name="", deleting=False):
    meta = {"name": name, "namespace": "default", "uid": name,
            "annotations": {"pv.kubernetes.io/bind-completed": "true"}}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": {"volumeName": volume_name}}


def pv(name, hostname=None):
    spec = {}
    if hostname:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [hostname]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "uid": name}, "spec": spec}


def fit_error(statuses, plugins, pre_filter_msg="", absent=None):
    """framework.FitError's diagnosis: {node: (code, reasons, plugin)}, the unschedulable plugins, the
    PreFilter message; ``absent`` is the status of every node not listed."""
    return {"statuses": statuses, "plugins": set(plugins), "pre_filter_msg": pre_filter_msg, "absent": absent}


def real(name, *points):
    return ("real", name, points)


CASES = {
    "test 1": dict(plugins=[false_filter()], nodes=["node1", "node2"], pod=pod("2"),
                   err=fit_error({"node1": (U, [FAKE], "FalseFilter"), "node2": (U, [FAKE], "FalseFilter")},
                                 ["FalseFilter"])),
    "test 2": dict(plugins=[true_filter(), equal()], nodes=["node1", "node2"], pod=pod("ignore"),
                   want={"node1", "node2"}),
    "test 3": dict(plugins=[match_filter()], nodes=["node1", "node2"], pod=pod("node2"), want={"node2"}),
    "test 4": dict(plugins=[true_filter(), numeric()], nodes=["3", "2", "1"], pod=pod("ignore"), want={"3"}),
    "test 5": dict(plugins=[match_filter(), numeric()], nodes=["3", "2", "1"], pod=pod("2"), want={"2"}),
    "test 6": dict(plugins=[true_filter(), numeric(), (ReverseNumericMap(), 2)], nodes=["3", "2", "1"],
                   pod=pod("2"), want={"1"}),
    "test 7": dict(plugins=[true_filter(), false_filter(), numeric()], nodes=["3", "2", "1"], pod=pod("2"),
                   err=fit_error({n: (U, [FAKE], "FalseFilter") for n in ("3", "2", "1")}, ["FalseFilter"])),
    "test 8": dict(plugins=[no_pods_filter(), match_filter(), numeric()], pods=[pod("2", node_name="2")],
                   pod=pod("2"), nodes=["1", "2"],
                   err=fit_error({"1": (U, [FAKE], "MatchFilter"), "2": (U, [FAKE], "NoPodsFilter")},
                                 ["MatchFilter", "NoPodsFilter"])),
    "existing PVC": dict(plugins=[real("VolumeBinding", "PreFilter"), true_filter(), equal()],
                         nodes=["node1", "node2"], pvcs=[pvc("existingPVC", "existingPV")], pvs=[pv("existingPV")],
                         pod=pod("ignore", pvc="existingPVC"), want={"node1", "node2"}),
    "unknown PVC": dict(plugins=[real("VolumeBinding", "PreFilter"), true_filter()], nodes=["node1", "node2"],
                        pod=pod("ignore", pvc="unknownPVC"),
                        err=fit_error({}, ["VolumeBinding"], 'persistentvolumeclaim "unknownPVC" not found',
                                      absent=(UU, ['persistentvolumeclaim "unknownPVC" not found'], "VolumeBinding"))),
    "deleted PVC": dict(plugins=[real("VolumeBinding", "PreFilter"), true_filter()], nodes=["node1", "node2"],
                        pvcs=[pvc("existingPVC", deleting=True)], pod=pod("ignore", pvc="existingPVC"),
                        err=fit_error({}, ["VolumeBinding"], 'persistentvolumeclaim "existingPVC" is being deleted',
                                      absent=(UU, ['persistentvolumeclaim "existingPVC" is being deleted'],
                                              "VolumeBinding"))),
    "test error with priority map": dict(plugins=[true_filter(), false_map(), (TrueMap(), 2)], nodes=["2", "1"],
                                         pod=pod("2"),
                                         error='running Score plugins: plugin "FalseMap" failed with: '
                                               'priority map encounters an error'),
    "test podtopologyspread plugin - 2 nodes with maxskew=1": dict(
        plugins=[real("PodTopologySpread", "PreFilter", "Filter")], nodes=["node1", "node2"],
        pod=pod("p", labels={"foo": ""}, spread=(1, "kubernetes.io/hostname")),
        pods=[pod("pod1", node_name="node1", labels={"foo": ""})], want={"node2"}),
    "test podtopologyspread plugin - 3 nodes with maxskew=2": dict(
        plugins=[real("PodTopologySpread", "PreFilter", "Filter"), equal()], nodes=["node1", "node2", "node3"],
        pod=pod("p", labels={"foo": ""}, spread=(2, "kubernetes.io/hostname")),
        pods=[pod("pod1a", node_name="node1", labels={"foo": ""}), pod("pod1b", node_name="node1", labels={"foo": ""}),
              pod("pod2", node_name="node2", labels={"foo": ""})], want={"node2", "node3"}),
    "test with filter plugin returning Unschedulable status": dict(
        plugins=[FakeFilter({"3": U}), numeric()], nodes=["3"], pod=pod("test-filter"),
        err=fit_error({"3": (U, ["injecting failure for pod test-filter"], "FakeFilter")}, ["FakeFilter"])),
    "test with extender which filters out some Nodes": dict(
        plugins=[FakeFilter({"3": U}), numeric()], extenders=[FalseExtender()], nodes=["1", "2", "3"],
        pod=pod("test-filter"),
        err=fit_error({"1": (U, ['FakeExtender: node "1" failed'], ""), "2": (U, ['FakeExtender: node "2" failed'], ""),
                       "3": (U, ["injecting failure for pod test-filter"], "FakeFilter")}, ["FakeFilter", "Extender"])),
    "test with filter plugin returning UnschedulableAndUnresolvable status": dict(
        plugins=[FakeFilter({"3": UU}), numeric()], nodes=["3"], pod=pod("test-filter"),
        err=fit_error({"3": (UU, ["injecting failure for pod test-filter"], "FakeFilter")}, ["FakeFilter"])),
    "test with partial failed filter plugin": dict(plugins=[FakeFilter({"1": U}), numeric()], nodes=["1", "2"],
                                                   pod=pod("test-filter"), want=None),
    "test prefilter plugin returning Unschedulable status": dict(
        plugins=[FakePreFilter("FakePreFilter", None, Status(UU, "injected unschedulable status"))],
        nodes=["1", "2"], pod=pod("test-prefilter"),
        err=fit_error({}, ["FakePreFilter"], "injected unschedulable status",
                      absent=(UU, ["injected unschedulable status"], "FakePreFilter"))),
    "test prefilter plugin returning error status": dict(
        plugins=[FakePreFilter("FakePreFilter", None, Status(E, "injected error status"))], nodes=["1", "2"],
        pod=pod("test-prefilter"), error='running PreFilter plugin "FakePreFilter": injected error status'),
    "test prefilter plugin returning node": dict(
        plugins=[FakePreFilter("FakePreFilter1"), FakePreFilter("FakePreFilter2", {"node2"}),
                 FakePreFilter("FakePreFilter3", {"node1", "node2"})],
        nodes=["node1", "node2", "node3"], pod=pod("test-prefilter"), want={"node2"}, evaluated=1,
        drift=DRIFT_ABSENT),
    "test prefilter plugin returning non-intersecting nodes": dict(
        plugins=[FakePreFilter("FakePreFilter1"), FakePreFilter("FakePreFilter2", {"node2"}),
                 FakePreFilter("FakePreFilter3", {"node1"})],
        nodes=["node1", "node2", "node3"], pod=pod("test-prefilter"),
        err=fit_error({}, ["FakePreFilter2", "FakePreFilter3"],
                      "node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",
                      absent=(UU, ["node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously"],
                              "")),
        drift=DRIFT_PLUGINS),
    "test prefilter plugin returning empty node set": dict(
        plugins=[FakePreFilter("FakePreFilter1"), FakePreFilter("FakePreFilter2", set())], nodes=["node1"],
        pod=pod("test-prefilter"),
        err=fit_error({}, ["FakePreFilter2"], "node(s) didn't satisfy plugin FakePreFilter2",
                      absent=(UU, ["node(s) didn't satisfy plugin FakePreFilter2"], "")),
        drift=DRIFT_PLUGINS),
    "test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin": dict(
        plugins=[FakePreFilter("FakePreFilter", {"node2"}), FakeFilter({"node2": U})], nodes=["node1", "node2"],
        pod=pod("test-prefilter"),
        err=fit_error({"node2": (U, ["injecting failure for pod test-prefilter"], "FakeFilter")},
                      ["FakePreFilter", "FakeFilter"],
                      absent=(UU, ["node(s) didn't satisfy plugin(s) [FakePreFilter]"], "")),
        drift=DRIFT_ABSENT + "; " + DRIFT_PLUGINS),
    "test prefilter plugin returning skip": dict(
        plugins=[FakePreFilter("FakePreFilter1"), FakeFilter({"node1": U}, name="FakeFilter1"),
                 ("both", FakePreFilterAndFilter("FakeFilter2", None, Status(SKIP),
                                                 {"node1": E, "node2": E, "node3": E})), equal()],
        nodes=["node1", "node2", "node3"], pod=pod("test-prefilter"), want={"node2", "node3"}, evaluated=3),
    "test all prescore plugins return skip": dict(plugins=[true_filter(), FakePreScoreAndScore()],
                                                  nodes=["node1", "node2"], pod=pod("ignore"),
                                                  want={"node1", "node2"}),
    "test without score plugin no extra nodes are evaluated": dict(plugins=[true_filter()],
                                                                   nodes=["node1", "node2", "node3"], pod=pod("pod1"),
                                                                   want={"node1", "node2", "node3"}, evaluated=1),
    "test no score plugin, prefilter plugin returning 2 nodes": dict(
        plugins=[FakePreFilter("FakePreFilter", {"node1", "node2"})], nodes=["node1", "node2", "node3"],
        pod=pod("test-prefilter"), want={"node1", "node2"}, evaluated=1, drift=DRIFT_ABSENT),
    "test prefilter plugin returned an invalid node": dict(
        plugins=[FakePreFilter("FakePreFilter", {"invalid-node"}), true_filter()], nodes=["1", "2"],
        pod=pod("test-prefilter"),
        err=fit_error({}, ["FakePreFilter"], absent=(UU, ["node(s) didn't satisfy plugin(s) [FakePreFilter]"], "")),
        drift=DRIFT_ABSENT + "; " + DRIFT_PLUGINS),
    "hostname and nodename of the node do not match": dict(
        plugins=[real("VolumeBinding", "PreFilter"), true_filter(), equal()], nodes=[("node1", "host1")],
        pvcs=[pvc("PVC1", "PV1")], pvs=[pv("PV1", hostname="host1")], pod=pod("pod1", pvc="PVC1"), want={"node1"},
        drift="drift (fixed after v1.30.0): VolumeBinding's PreFilter no longer narrows the nodes by a local PV's "
              "kubernetes.io/hostname values; v1.30.0's GetEligibleNodes returns those values as node names, so no "
              "node fits when a node's name differs from its hostname label"),
}
POINTS = {FilterPlugin: "Filter", PreFilterPlugin: "PreFilter", ScorePlugin: "Score", PreScorePlugin: "PreScore"}


def build(case):
    infos = [NodeInfo(node(*n) if isinstance(n, tuple) else node(n)) for n in case["nodes"]]
    by_name = {ni.name: ni for ni in infos}
    for p in case.get("pods", ()):
        by_name[p.node_name].add_pod(p)
    snapshot = Snapshot(infos, ClusterObjects(persistent_volume_claims=case.get("pvcs", ()),
                                              persistent_volumes=case.get("pvs", ())))
    handle = Handle(snapshot=snapshot)
    in_tree = in_tree_registry()
    registry, points, args = {}, {"QueueSort": [("PrioritySort", 0)], "Bind": [("DefaultBinder", 0)]}, {}
    registry["PrioritySort"] = type("R", (), {"new": classmethod(lambda c, a, h: QueueSort())})
    registry["DefaultBinder"] = type("R", (), {"new": classmethod(lambda c, a, h: Binder())})
    for entry in case["plugins"]:
        weight = 1
        if isinstance(entry, tuple) and entry[0] == "real":
            _tag, name, pts = entry
            registry[name] = in_tree[name]
            try:
                args[name] = default_args(name, {})
            except KeyError:
                pass
            for p in pts:
                points.setdefault(p, []).append((name, 0))
            continue
        if isinstance(entry, tuple) and entry[0] == "both":   # RegisterPluginAsExtensions(PreFilter, Filter)
            pl = entry[1]
            pts = ["PreFilter", "Filter"]
        else:
            if isinstance(entry, tuple):
                pl, weight = entry
            else:
                pl = entry
            pts = [pt for iface, pt in POINTS.items() if isinstance(pl, iface)]
            if isinstance(pl, FakePreScoreAndScore):
                pts = ["PreScore", "Score"]
            elif isinstance(pl, PreFilterPlugin):
                pts = ["PreFilter"]
            elif isinstance(pl, ScorePlugin):
                pts = ["Score"]
        registry[pl.name] = type("R", (), {"new": classmethod(lambda c, a, h, pl=pl: pl)})
        for p in pts:
            points.setdefault(p, []).append((pl.name, weight if p == "Score" else 0))
    fwk = new_framework("", points, args, registry, handle)
    return fwk, snapshot


@pytest.mark.parametrize("name", list(CASES))
def test_scheduler_schedule_pod(name):
    case = CASES[name]
    if case.get("drift"):
        pytest.skip(case["drift"])
    fwk, snapshot = build(case)
    ctx = SchedulerContext(tie_break="random", seed=1, extenders=case.get("extenders", ()), trace_all_filters=False)
    tr, _state = schedule_pod(fwk, ctx, case["pod"], snapshot)
    if "error" in case:
        assert tr.error == case["error"]
        return
    assert tr.error is None
    want_err = case.get("err")
    if want_err is not None:
        assert tr.chosen is None and tr.unschedulable
        got = {n: (s.code, list(s.reasons), s.plugin) for n, s in tr.node_statuses.items()}
        want = {}
        for ni in snapshot.node_infos:
            st = want_err["statuses"].get(ni.name) or want_err["absent"]
            if st is not None:
                want[ni.name] = (st[0], list(st[1]), st[2])
        assert got == want
        assert set(tr.unschedulable_plugins) == want_err["plugins"]
        assert tr.pre_filter_msg == want_err["pre_filter_msg"]
        return
    if case.get("want") is not None:
        assert tr.chosen in case["want"]
    evaluated = len(tr.feasible) + len(tr.node_statuses)
    assert evaluated == case.get("evaluated", len(case["nodes"]))


NUM_FEASIBLE = {
    "not set percentageOfNodesToScore and nodes number not more than 50": (0, 10, 10),
    "set percentageOfNodesToScore and nodes number not more than 50": (40, 10, 10),
    "not set percentageOfNodesToScore and nodes number more than 50": (0, 1000, 420),
    "set percentageOfNodesToScore and nodes number more than 50": (40, 1000, 400),
    "not set percentageOfNodesToScore and nodes number more than 50*125": (0, 6000, 300),
    "set percentageOfNodesToScore and nodes number more than 50*125": (40, 6000, 2400),
}


@pytest.mark.parametrize("name", list(NUM_FEASIBLE))
def test_num_feasible_nodes_to_find(name):
    """From the v1.2x copy (id 10260167) of this file; the table is the same in v1.30."""
    pct, num_all, want = NUM_FEASIBLE[name]
    assert num_feasible_nodes_to_find(None, pct, num_all) == want


# -- TestFindFitAllError / TestFindFitSomeError / TestFindFitPredicateCallCounts -------------------------
def _find_fit(pod, plugins, nodes=("3", "2", "1"), nominated=None):
    fwk, snapshot = build({"plugins": plugins, "nodes": list(nodes)})
    ctx = SchedulerContext(tie_break="name", trace_all_filters=False,
                           nominated_pods_for_node=(lambda n: nominated.get(n, [])) if nominated else None)
    tr, _ = schedule_pod(fwk, ctx, pod, snapshot)
    return tr


def test_find_fit_all_error():
    """upstream schedules &v1.Pod{} (no name): MatchFilter rejects every node; a name no node has does the same."""
    tr = _find_fit(pod("no-such-node"), [true_filter(), match_filter()])
    assert {n: (s.code, s.reasons, s.plugin) for n, s in tr.node_statuses.items()} == {
        n: (U, [FAKE], "MatchFilter") for n in ("1", "2", "3")}
    assert tr.unschedulable_plugins == ["MatchFilter"]


@pytest.mark.parametrize("node_name", ["3", "2"])
def test_find_fit_some_error(node_name):
    tr = _find_fit(pod("1"), [true_filter(), match_filter()])
    assert len(tr.node_statuses) == 2
    assert tr.unschedulable_plugins == ["MatchFilter"]
    assert tr.node_statuses[node_name].reasons == [FAKE]


PREDICATE_CALLS = {
    "nominated pods have lower priority, predicate is called once": (1000, 1),
    "nominated pods have higher priority, predicate is called twice": (0, 2),
}


@pytest.mark.parametrize("name", list(PREDICATE_CALLS))
def test_find_fit_predicate_call_counts(name):
    priority, want_calls = PREDICATE_CALLS[name]
    counting = CountingFilter()
    nominated = Pod({"metadata": {"name": "nominated", "namespace": "default", "uid": "nominated"},
                     "spec": {"priority": 100}})
    incoming = Pod({"metadata": {"name": "1", "namespace": "default", "uid": "1"}, "spec": {"priority": priority}})
    _find_fit(incoming, [counting], nodes=("1",), nominated={"1": [nominated]})
    assert counting.calls == want_calls


# -- TestSchedulerBinding ----------------------------------------------------------------------------------
class FakeBinderExtender(HTTPExtender):
    """upstream's fakeExtender: binds only pods named ``interested``; ``err_bind`` makes Bind fail."""

    def __init__(self, is_binder, interested, err_bind=False, ignorable=False):
        super().__init__({"urlPrefix": "fakeExtender", "bindVerb": "bind" if is_binder else "",
                          "ignorable": ignorable})
        self.interested, self.err_bind, self.got_bind = interested, err_bind, False

    def is_interested(self, pod):
        return pod.name == self.interested

    def bind(self, pod, node_name):
        if not self.is_binder():
            raise ExtenderError("not a binder")
        if self.err_bind:
            raise ExtenderError("bind error")
        self.got_bind = True


BINDING = {
    "the extender is not a binder": ("pod0", [(False, "pod0", False, False)], -1),
    "one of the extenders is a binder and interested in pod": (
        "pod0", [(False, "pod0", False, False), (True, "pod0", False, False)], 1),
    "one of the extenders is a binder, but not interested in pod": (
        "pod1", [(False, "pod1", False, False), (True, "pod0", False, False)], -1),
    "ignore when extender bind failed": ("pod1", [(True, "pod1", True, True)], -1),
}


@pytest.mark.parametrize("name", list(BINDING))
def test_scheduler_binding(name):
    """The DefaultBinder's pods/binding call is the scheduler's own; an extender's binding is reported to the
    cluster source as ``extender_bound`` (the extender made the API call)."""
    pod_name, extenders, want_binder = BINDING[name]

    class Cluster(SimulatedCluster):
        default_bound = extender_bound_to = None

        def bind(self, pod, node_name):
            self.default_bound = node_name

        def extender_bound(self, pod, node_name):
            self.extender_bound_to = node_name

    the_pod = pod(pod_name)
    cluster = Cluster(nodes=[node("node")], pods=[the_pod], clock=FakeClock())
    exts = [FakeBinderExtender(*e) for e in extenders]
    sched = Scheduler(cluster, tie_break="name", clock=cluster.clock, extenders=exts)
    fwk = sched.profiles["default-scheduler"]
    status = sched._bind(fwk, CycleState(), the_pod, "node")
    assert status is None
    assert (cluster.default_bound == "node") == (want_binder == -1)
    assert [e.got_bind for e in exts] == [i == want_binder for i in range(len(exts))]


# -- TestFindNodesThatPassExtenders --------------------------------------------------------------------------
class PredicateExtender(HTTPExtender):
    """tf.FakeExtender: ``predicate(node name)`` gives a Code (or "error"); failures become FailedNodes /
    FailedAndUnresolvableNodes with the fake's texts."""

    def __init__(self, predicate):
        super().__init__({"urlPrefix": "FakeExtender1", "filterVerb": "filter"})
        self.predicate = predicate

    def filter(self, pod, node_infos):
        kept, failed, unresolvable = [], {}, {}
        for ni in node_infos:
            code = self.predicate(ni.name)
            if code == "error":
                raise ExtenderError("some error")
            if code is None:
                kept.append(ni)
            elif code == U:
                failed[ni.name] = f'FakeExtender: node "{ni.name}" failed'
            else:
                unresolvable[ni.name] = f'FakeExtender: node "{ni.name}" failed and unresolvable'
        return kept, failed, unresolvable


def _a_ok_b_unschedulable_rest_unresolvable(name):
    return None if name == "a" else (U if name == "b" else UU)


PASS_EXTENDERS = {
    "error": ([lambda n: "error"], ["a"], {}, "error", None),
    "success": ([lambda n: None], ["a"], {}, ["a"], {}),
    "unschedulable": ([lambda n: None if n == "a" else U], ["a", "b"], {}, ["a"],
                      {"b": (U, ['FakeExtender: node "b" failed'])}),
    "unschedulable and unresolvable": ([_a_ok_b_unschedulable_rest_unresolvable], ["a", "b", "c"], {}, ["a"],
                                       {"b": (U, ['FakeExtender: node "b" failed']),
                                        "c": (UU, ['FakeExtender: node "c" failed and unresolvable'])}),
    "extender does not overwrite the previous statuses": (
        [_a_ok_b_unschedulable_rest_unresolvable], ["a", "b"], {"c": (U, ['FakeFilterPlugin: node "c" failed'])},
        ["a"], {"b": (U, ['FakeExtender: node "b" failed']), "c": (U, ['FakeFilterPlugin: node "c" failed'])}),
    "multiple extenders": ([_a_ok_b_unschedulable_rest_unresolvable, lambda n: None if n == "a" else U],
                           ["a", "b", "c"], {}, ["a"],
                           {"b": (U, ['FakeExtender: node "b" failed']),
                            "c": (UU, ['FakeExtender: node "c" failed and unresolvable'])}),
}


@pytest.mark.parametrize("name", list(PASS_EXTENDERS))
def test_find_nodes_that_pass_extenders(name):
    predicates, nodes, previous, want_nodes, want_statuses = PASS_EXTENDERS[name]
    the_pod = pod("1")
    tr = CycleTrace(the_pod, "")
    for n, (code, reasons) in previous.items():
        tr.node_statuses[n] = Status(code, *reasons)
    feasible = [NodeInfo(node(n)) for n in nodes]
    for ext in (PredicateExtender(p) for p in predicates):
        if not feasible:
            break
        feasible = ext.filter_into_trace(the_pod, feasible, tr)
        if tr.error:
            break
    if want_nodes == "error":
        assert tr.error
        return
    assert tr.error is None
    assert [ni.name for ni in feasible] == want_nodes
    assert {n: (s.code, s.reasons) for n, s in tr.node_statuses.items()} == want_statuses
    assert all(not s.plugin for s in tr.node_statuses.values())
