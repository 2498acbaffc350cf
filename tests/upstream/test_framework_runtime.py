"""kube's pkg/scheduler/framework/runtime/framework_test.go: plugin ordering (MultiPoint expansion), Skip,
status merging per extension point, score range checks and weights.

The fake plugins are upstream's: TestPlugin implements every extension point and returns the injected code
with "injected status" ("injected filter status" from Filter); the score plugins return ``scoreRes`` and
NormalizeScore sets ``normalizeRes`` (or fail with "injecting failure."). Statuses are compared as upstream's
``statusCmpOpts``: both successful, or for Error the same error text, else the same code, plugin and message.
Not translated: metrics tests, Close, waiting pods, event maps, PreEnqueue/QueueSort internals.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.interface import (BindPlugin, FilterPlugin, Plugin, PostBindPlugin, PostFilterPlugin,
                                                PreBindPlugin, PreEnqueuePlugin, PreFilterExtensions, PreFilterPlugin,
                                                PermitPlugin,
                                                PreScorePlugin, QueueSortPlugin, ReservePlugin, ScoreExtensions,
                                                ScorePlugin)
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.profile import FrameworkError, new_framework
from scheduler_core.framework.status import Code, Status
from scheduler_core.objects import Node, Pod

UPSTREAM = "pkg/scheduler/framework/runtime/framework_test.go"
UPSTREAM_VERSION = "v1.32+ (imports backend/queue; stored copy id 104519684); cases below unchanged since v1.30"
UPSTREAM_CASES = 119

S, E, U, UU, W, SKIP = Code.SUCCESS, Code.ERROR, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.WAIT, Code.SKIP
INJECT = "injected status"
INJECT_FILTER = "injected filter status"
QUEUE_SORT, BIND = "no-op-queue-sort-plugin", "bind-plugin"
SCORE1, SCORE2 = "score-plugin-1", "score-plugin-2"
NORM1, NORM2 = "score-with-normalize-plugin-1", "score-with-normalize-plugin-2"
NOT_SCORE, DUPLICATE, TEST = "plugin-not-implementing-score", "duplicate-plugin", "test-plugin"
DEFAULT_WEIGHTS = {NORM1: 1, NORM2: 2, SCORE1: 1}
POD = SimpleNamespace(name="", namespace="", uid="", priority=0)   # &v1.Pod{}: only read for messages


def st(code, *reasons, plugin=""):
    return Status(code, *reasons, plugin=plugin)


def err(text):
    return Status.error(text)


def same_status(want, got) -> bool:
    """upstream's statusCmpOpts."""
    if want is None or got is None:
        return (want is None or want.code == S) and (got is None or got.code == S)
    if want.code == E:
        return got.code == E and want.as_error() == got.as_error()
    return want.code == got.code and want.plugin == got.plugin and want.message() == got.message()


class TestPlugin(QueueSortPlugin, PreFilterPlugin, PreFilterExtensions, FilterPlugin, PostFilterPlugin,
                 PreScorePlugin, ScorePlugin, ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin, PostBindPlugin):
    """Every extension point; each returns its injected code."""

    __test__ = False

    def __init__(self, name=TEST, **inj):
        self.name, self.inj = name, inj

    def _st(self, key, reason=INJECT):
        return Status(Code(self.inj.get(key, 0)), reason)

    def less(self, a, b):
        return False

    def pre_filter(self, state, pod):
        return self.inj.get("PreFilterResult"), self._st("PreFilterStatus")

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        return self._st("PreFilterAddPodStatus")

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        return self._st("PreFilterRemovePodStatus")

    def filter(self, state, pod, node_info):
        return self._st("FilterStatus", INJECT_FILTER)

    def post_filter(self, state, pod, node_statuses):
        return None, self._st("PostFilterStatus")

    def pre_score(self, state, pod, node_infos):
        return self._st("PreScoreStatus")

    def score(self, state, pod, node_info):
        return 0, self._st("ScoreStatus")

    def reserve(self, state, pod, node_name):
        return self._st("ReserveStatus")

    def unreserve(self, state, pod, node_name):
        pass

    def permit(self, state, pod, node_name):
        return self._st("PermitStatus"), 0

    def pre_bind(self, state, pod, node_name):
        return self._st("PreBindStatus")

    def bind(self, state, pod, node_name):
        return self._st("BindStatus")

    def post_bind(self, state, pod, node_name):
        pass


def _score_res(inj):
    if inj.get("scoreStatus", 0) != 0:
        return 0, Status(Code(inj["scoreStatus"]), "injecting failure.")
    return inj.get("scoreRes", 0), None


class TestScorePlugin(PreScorePlugin, ScorePlugin):
    __test__ = False

    def __init__(self, name, inj):
        self.name, self.inj = name, inj

    def pre_score(self, state, pod, node_infos):
        return Status(Code(self.inj.get("preScoreStatus", 0)), INJECT)

    def score(self, state, pod, node_info):
        return _score_res(self.inj)


class TestScoreWithNormalizePlugin(ScorePlugin, ScoreExtensions):
    __test__ = False

    def __init__(self, name, inj):
        self.name, self.inj = name, inj

    def score(self, state, pod, node_info):
        return _score_res(self.inj)

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        if self.inj.get("normalizeStatus", 0) != 0:
            return Status(Code(self.inj["normalizeStatus"]), "injecting failure.")
        for pair in scores:
            pair[1] = self.inj.get("normalizeRes", 0)
        return None


class QueueSort(QueueSortPlugin):
    name = QUEUE_SORT

    def less(self, a, b):
        return False


class Bind(BindPlugin):
    name = BIND

    def bind(self, state, pod, node_name):
        return None


class NotScore(Plugin):
    name = NOT_SCORE


class Duplicate(PreFilterPlugin):
    name = DUPLICATE

    def pre_filter(self, state, pod):
        return None, None


def factory(make):
    """A registry entry: a class whose ``new`` returns ``make(args)``."""
    return type("Factory", (), {"new": classmethod(lambda cls, args, handle: make(args or {}))})


REGISTRY = {
    NORM1: factory(lambda a: TestScoreWithNormalizePlugin(NORM1, a)),
    NORM2: factory(lambda a: TestScoreWithNormalizePlugin(NORM2, a)),
    SCORE1: factory(lambda a: TestScorePlugin(SCORE1, a)),
    SCORE2: factory(lambda a: TestScorePlugin(SCORE2, a)),
    NOT_SCORE: factory(lambda a: NotScore()),
    DUPLICATE: factory(lambda a: Duplicate()),
    TEST: factory(lambda a: TestPlugin()),
    QUEUE_SORT: factory(lambda a: QueueSort()),
    BIND: factory(lambda a: Bind()),
}


def framework_with(points: dict, plugins=(), args=None, registry=None, multi_point=(), disabled=None,
                   queue_sort_and_bind=True):
    """newFrameworkWithQueueSortAndBind (or NewFramework): points maps an extension point to [(name, weight)]."""
    reg = dict(registry if registry is not None else REGISTRY)
    for p in plugins:
        reg[p.name] = factory(lambda a, p=p: p)
    points = {k: list(v) for k, v in points.items()}
    if queue_sort_and_bind:
        reg.setdefault(QUEUE_SORT, REGISTRY[QUEUE_SORT])
        reg.setdefault(BIND, REGISTRY[BIND])
        points.setdefault("QueueSort", []) or points["QueueSort"].append((QUEUE_SORT, 0))
        points.setdefault("Bind", []) or points["Bind"].append((BIND, 0))
    return new_framework("", points, args or {}, reg, None, multi_point=multi_point, disabled=disabled)


def enabled(plugins):
    return [(p.name, 0) for p in plugins]


def score_config(*names):
    """buildScoreConfigDefaultWeights."""
    return {"Score": [(n, DEFAULT_WEIGHTS.get(n, 0)) for n in names]}


def node_infos():
    return [NodeInfo(Node({"metadata": {"name": n}})) for n in ("node1", "node2")]


# -- TestInitFrameworkWithScorePlugins ------------------------------------------------------------
INIT = {
    "enabled Score plugin doesn't exist in registry": (score_config("notExist"), True),
    "enabled Score plugin doesn't extend the ScorePlugin interface": (score_config(NOT_SCORE), True),
    "Score plugins are nil": ({}, False),
    "enabled Score plugin list is empty": (score_config(), False),
    "enabled plugin only implements ScorePlugin interface": (score_config(SCORE1), False),
    "enabled plugin implements ScoreWithNormalizePlugin interface": (score_config(NORM1), False),
}


@pytest.mark.parametrize("name", list(INIT))
def test_init_framework_with_score_plugins(name):
    points, init_err = INIT[name]
    if init_err:
        with pytest.raises(FrameworkError):
            framework_with(points)
    else:
        framework_with(points)


def test_new_framework_errors_duplicate_plugin_name():
    """TestNewFrameworkErrors "duplicate plugin name" ("repeated config for plugin" needs two pluginConfig
    entries for one name, which this API's args map cannot hold; config validation reports it instead)."""
    with pytest.raises(FrameworkError, match="already registered"):
        framework_with({"PreFilter": [(DUPLICATE, 1), (DUPLICATE, 1)]}, queue_sort_and_bind=False)


# -- TestNewFrameworkMultiPointExpansion ----------------------------------------------------------
ALL_TEST = {"QueueSort": [TEST], "PreFilter": [TEST], "Filter": [TEST], "PostFilter": [TEST], "PreScore": [TEST],
            "Reserve": [TEST], "Permit": [TEST], "PreBind": [TEST], "Bind": [TEST], "PostBind": [TEST]}


def want_points(score, **changes):
    out = {k: list(v) for k, v in ALL_TEST.items()}
    out.update(changes)
    out["Score"] = score
    return {k: v for k, v in out.items() if v}


EXPANSION = {
    "plugin expansion": (dict(multi_point=[(TEST, 5)]), want_points([(TEST, 5)])),
    "disable MultiPoint plugin at some extension points": (
        dict(multi_point=[(TEST, 0)], disabled={"PreScore": [TEST], "Score": [TEST]}),
        want_points([], PreScore=[])),
    "Multiple MultiPoint plugins": (dict(multi_point=[(TEST, 0), (SCORE1, 0)]),
                                    want_points([(TEST, 1), (SCORE1, 1)], PreScore=[TEST, SCORE1])),
    "disable MultiPoint extension": (dict(multi_point=[(TEST, 0), (SCORE1, 0)], disabled={"PreScore": ["*"]}),
                                     want_points([(TEST, 1), (SCORE1, 1)], PreScore=[])),
    "Reorder MultiPoint plugins (specified extension takes precedence)": (
        dict(multi_point=[(NORM1, 0), (TEST, 0), (SCORE1, 0)], points={"Score": [(SCORE1, 0), (TEST, 0)]}),
        want_points([(SCORE1, 1), (TEST, 1), (NORM1, 1)], PreScore=[TEST, SCORE1])),
    "Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)": (
        dict(multi_point=[(TEST, 0), (SCORE1, 0)], points={"Score": [(NORM1, 0), (SCORE1, 0), (TEST, 0)]}),
        want_points([(SCORE1, 1), (TEST, 1), (NORM1, 1)], PreScore=[TEST, SCORE1])),
    "Override MultiPoint plugins weights": (
        dict(multi_point=[(TEST, 0), (SCORE1, 0)], points={"Score": [(SCORE1, 5), (TEST, 3)]}),
        want_points([(SCORE1, 5), (TEST, 3)], PreScore=[TEST, SCORE1])),
    # MultiPoint.Disabled is not read by NewFramework (defaulting merges it): nothing to pass here.
    "disable and enable MultiPoint plugins with '*'": (
        dict(multi_point=[(QUEUE_SORT, 0), (BIND, 0), (SCORE1, 0)]),
        {"QueueSort": [QUEUE_SORT], "PreScore": [SCORE1], "Score": [(SCORE1, 1)], "Bind": [BIND]}),
    "disable and enable MultiPoint plugin by name": (
        dict(multi_point=[(BIND, 0), (QUEUE_SORT, 0), (SCORE1, 0)]),
        {"QueueSort": [QUEUE_SORT], "PreScore": [SCORE1], "Score": [(SCORE1, 1)], "Bind": [BIND]}),
    "Expect 'already registered' error": (dict(multi_point=[(TEST, 0), (TEST, 0)]), "already registered"),
    "Override MultiPoint plugins weights and avoid a plugin being loaded multiple times": (
        dict(multi_point=[(TEST, 0), (SCORE1, 0)], points={"Score": [(SCORE1, 5), (SCORE2, 5), (TEST, 3)]}),
        want_points([(SCORE1, 5), (TEST, 3), (SCORE2, 5)], PreScore=[TEST, SCORE1])),
}


@pytest.mark.parametrize("name", list(EXPANSION))
def test_new_framework_multi_point_expansion(name):
    kw, want = EXPANSION[name]
    build = lambda: framework_with(kw.get("points", {}), multi_point=kw["multi_point"],  # noqa: E731
                                   disabled=kw.get("disabled"), queue_sort_and_bind=False)
    if isinstance(want, str):
        with pytest.raises(FrameworkError, match=want):
            build()
        return
    fwk = build()
    got = {point: [p.name for p in pls] for point, pls in fwk.plugins.items() if pls and point != "Score"}
    if fwk.score:
        got["Score"] = [(p.name, fwk.score_weights[p.name]) for p in fwk.score]
    assert got == want


# -- TestRunPreScorePlugins -------------------------------------------------------------------------
PRE_SCORE = {
    "all PreScorePlugins returned success": ([TestPlugin("success1"), TestPlugin("success2")], set(), S),
    "one PreScore plugin returned success, but another PreScore plugin returned non-success": (
        [TestPlugin("success"), TestPlugin("error", PreScoreStatus=E)], set(), E),
    "one PreScore plugin returned skip, but another PreScore plugin returned non-success": (
        [TestPlugin("skip", PreScoreStatus=SKIP), TestPlugin("error", PreScoreStatus=E)], {"skip"}, E),
    "all PreScore plugins returned skip": (
        [TestPlugin(f"skip{i}", PreScoreStatus=SKIP) for i in (1, 2, 3)], {"skip1", "skip2", "skip3"}, S),
    "some PreScore plugins returned skip": (
        [TestPlugin("skip1", PreScoreStatus=SKIP), TestPlugin("success1"), TestPlugin("skip2", PreScoreStatus=SKIP),
         TestPlugin("success2")], {"skip1", "skip2"}, S),
}


@pytest.mark.parametrize("name", list(PRE_SCORE))
def test_run_pre_score_plugins(name):
    plugins, want_skipped, want_code = PRE_SCORE[name]
    fwk = framework_with({"PreScore": enabled(plugins)}, plugins)
    state = CycleState()
    status = fwk.run_pre_score(state, POD, [])
    assert (S if status is None else status.code) == want_code
    assert state.skip_score_plugins == want_skipped


# -- TestRunScorePlugins -----------------------------------------------------------------------------
def scores(*plugin_scores):
    """The same [(plugin, weighted score)] and total on node1 and node2."""
    row = (list(plugin_scores), sum(s for _, s in plugin_scores))
    return [row, row]


SCORE = {
    "no Score plugins": (score_config(), {}, set(), scores()),
    "single Score plugin": (score_config(SCORE1), {SCORE1: {"scoreRes": 1}}, set(), scores((SCORE1, 1))),
    "single ScoreWithNormalize plugin": (score_config(NORM1), {NORM1: {"scoreRes": 10, "normalizeRes": 5}}, set(),
                                         scores((NORM1, 5))),
    "3 Score plugins, 2 NormalizeScore plugins": (
        score_config(SCORE1, NORM1, NORM2),
        {SCORE1: {"scoreRes": 1}, NORM1: {"scoreRes": 3, "normalizeRes": 4}, NORM2: {"scoreRes": 4, "normalizeRes": 5}},
        set(), scores((SCORE1, 1), (NORM1, 4), (NORM2, 10))),
    "score fails": (score_config(SCORE1, NORM1), {NORM1: {"scoreStatus": 1}}, set(), "error"),
    "normalize fails": (score_config(SCORE1, NORM1), {NORM1: {"normalizeStatus": 1}}, set(), "error"),
    "Score plugin return score greater than MaxNodeScore": (score_config(SCORE1), {SCORE1: {"scoreRes": 101}}, set(),
                                                            "error"),
    "Score plugin return score less than MinNodeScore": (score_config(SCORE1), {SCORE1: {"scoreRes": -1}}, set(),
                                                         "error"),
    "ScoreWithNormalize plugin return score greater than MaxNodeScore": (
        score_config(NORM1), {NORM1: {"normalizeRes": 101}}, set(), "error"),
    "ScoreWithNormalize plugin return score less than MinNodeScore": (
        score_config(NORM1), {NORM1: {"normalizeRes": -1}}, set(), "error"),
    "single Score plugin with MultiPointExpansion": (
        {"multi_point": [(SCORE1, 0)], "Score": [(SCORE1, 3)]}, {SCORE1: {"scoreRes": 1}}, set(), scores((SCORE1, 3))),
    "one success plugin, one skip plugin": (
        score_config(SCORE1, NORM1), {SCORE1: {"scoreRes": 1}, NORM1: {"scoreStatus": 1}}, {NORM1},
        scores((SCORE1, 1))),
    "all plugins are skipped in prescore": (score_config(SCORE1), {SCORE1: {"scoreStatus": 1}}, {SCORE1}, scores()),
    "skipped prescore plugin number greater than the number of score plugins": (
        score_config(SCORE1), {}, {SCORE1, "score-plugin-unknown"}, scores()),
}


@pytest.mark.parametrize("name", list(SCORE))
def test_run_score_plugins(name):
    points, args, skipped, want = SCORE[name]
    points = dict(points)
    multi_point = points.pop("multi_point", ())
    fwk = framework_with(points, args=args, multi_point=multi_point)
    state = CycleState()
    state.skip_score_plugins = set(skipped)
    infos = node_infos()
    per_plugin, totals, status = fwk.run_score(state, POD, infos)
    if want == "error":
        assert status is not None and status.code != S
        return
    assert status is None
    got = [([(name, int(per_plugin[name][1][i]) * fwk.score_weights[name]) for name in per_plugin], int(totals[i]))
           for i in range(len(infos))]
    assert got == want


# -- TestRunPreFilterPlugins -----------------------------------------------------------------------
PRE_FILTER = {
    "all PreFilter returned success": ([TestPlugin("success1"), TestPlugin("success2")], None, set(), S),
    "one PreFilter plugin returned success, but another PreFilter plugin returned non-success": (
        [TestPlugin("success"), TestPlugin("error", PreFilterStatus=E)], None, set(), E),
    "one PreFilter plugin returned skip, but another PreFilter plugin returned non-success": (
        [TestPlugin("skip", PreFilterStatus=SKIP), TestPlugin("error", PreFilterStatus=E)], None, {"skip"}, E),
    "all PreFilter plugins returned skip": (
        [TestPlugin(f"skip{i}", PreFilterStatus=SKIP) for i in (1, 2, 3)], None, {"skip1", "skip2", "skip3"}, S),
    "some PreFilter plugins returned skip": (
        [TestPlugin("skip1", PreFilterStatus=SKIP), TestPlugin("success1"), TestPlugin("skip2", PreFilterStatus=SKIP),
         TestPlugin("success2")], None, {"skip1", "skip2"}, S),
    "one PreFilter plugin returned Unschedulable, but another PreFilter plugin should be executed": (
        [TestPlugin("unschedulable", PreFilterStatus=U), TestPlugin("skip", PreFilterStatus=SKIP)], None, {"skip"}, U),
    "one PreFilter plugin returned UnschedulableAndUnresolvable, and all other plugins aren't executed": (
        [TestPlugin("unresolvable", PreFilterStatus=UU), TestPlugin("skip", PreFilterStatus=SKIP)], None, set(), UU),
    "all nodes are filtered out by prefilter result, but other plugins aren't executed because we consider all "
    "nodes are filtered out by UnschedulableAndUnresolvable": (
        [TestPlugin("reject-all-nodes", PreFilterResult=set()), TestPlugin("skip", PreFilterStatus=SKIP)], set(),
        set(), UU),
}


@pytest.mark.parametrize("name", list(PRE_FILTER))
def test_run_pre_filter_plugins(name):
    plugins, want_result, want_skipped, want_code = PRE_FILTER[name]
    fwk = framework_with({"PreFilter": enabled(plugins)}, plugins)
    state = CycleState()
    result, status = fwk.run_pre_filter(state, POD)
    assert result == want_result
    assert (S if status is None else status.code) == want_code
    assert state.skip_filter_plugins == want_skipped


# -- TestRunPreFilterExtensionRemovePod / AddPod ----------------------------------------------------
def _extension_cases(key, verb):
    return {
        f"no plugins are skipped and all {verb}() returned success": ([TestPlugin("success1"), TestPlugin("success2")],
                                                                      set(), S),
        f"one {verb}() returned error": ([TestPlugin("success1"), TestPlugin("error1", **{key: E})], set(), E),
        f"one {verb}() is skipped": ([TestPlugin("success1"), TestPlugin("skipped", **{key: E})], {"skipped"}, S),
    }


REMOVE_POD = _extension_cases("PreFilterRemovePodStatus", "RemovePod")
ADD_POD = _extension_cases("PreFilterAddPodStatus", "AddPod")


@pytest.mark.parametrize("name", list(REMOVE_POD))
def test_run_pre_filter_extension_remove_pod(name):
    plugins, skipped, want_code = REMOVE_POD[name]
    fwk = framework_with({"PreFilter": enabled(plugins)}, plugins)
    state = CycleState()
    state.skip_filter_plugins = set(skipped)
    status = fwk.run_pre_filter_extension_remove_pod(state, POD, None, None)
    assert (S if status is None else status.code) == want_code


@pytest.mark.parametrize("name", list(ADD_POD))
def test_run_pre_filter_extension_add_pod(name):
    plugins, skipped, want_code = ADD_POD[name]
    fwk = framework_with({"PreFilter": enabled(plugins)}, plugins)
    state = CycleState()
    state.skip_filter_plugins = set(skipped)
    status = fwk.run_pre_filter_extension_add_pod(state, POD, None, None)
    assert (S if status is None else status.code) == want_code


# -- TestFilterPlugins --------------------------------------------------------------------------------
def filter_error(plugin):
    return err(f'running "{plugin}" filter plugin: {INJECT_FILTER}')


FILTER = {
    "SuccessFilter": ([TestPlugin("TestPlugin", FilterStatus=S)], set(), None),
    "ErrorFilter": ([TestPlugin("TestPlugin", FilterStatus=E)], set(), filter_error("TestPlugin")),
    "UnschedulableFilter": ([TestPlugin("TestPlugin", FilterStatus=U)], set(),
                            st(U, INJECT_FILTER, plugin="TestPlugin")),
    "UnschedulableAndUnresolvableFilter": ([TestPlugin("TestPlugin", FilterStatus=UU)], set(),
                                           st(UU, INJECT_FILTER, plugin="TestPlugin")),
    "ErrorAndErrorFilters": ([TestPlugin("TestPlugin1", FilterStatus=E), TestPlugin("TestPlugin2", FilterStatus=E)],
                             set(), filter_error("TestPlugin1")),
    "UnschedulableAndUnschedulableFilters": (
        [TestPlugin("TestPlugin1", FilterStatus=U), TestPlugin("TestPlugin2", FilterStatus=U)], set(),
        st(U, INJECT_FILTER, plugin="TestPlugin1")),
    "UnschedulableAndUnschedulableAndUnresolvableFilters": (
        [TestPlugin("TestPlugin1", FilterStatus=UU), TestPlugin("TestPlugin2", FilterStatus=U)], set(),
        st(UU, INJECT_FILTER, plugin="TestPlugin1")),
    "SuccessAndSuccessFilters": ([TestPlugin("TestPlugin1"), TestPlugin("TestPlugin2")], set(), None),
    "SuccessAndSkipFilters": ([TestPlugin("TestPlugin1"), TestPlugin("TestPlugin2", FilterStatus=E)],
                              {"TestPlugin2"}, None),
    "ErrorAndSuccessFilters": ([TestPlugin("TestPlugin1", FilterStatus=E), TestPlugin("TestPlugin2")], set(),
                               filter_error("TestPlugin1")),
    "SuccessAndErrorFilters": ([TestPlugin("TestPlugin1"), TestPlugin("TestPlugin2", FilterStatus=E)], set(),
                               filter_error("TestPlugin2")),
    "SuccessAndUnschedulableFilters": ([TestPlugin("TestPlugin1"), TestPlugin("TestPlugin2", FilterStatus=U)], set(),
                                       st(U, INJECT_FILTER, plugin="TestPlugin2")),
}


@pytest.mark.parametrize("name", list(FILTER))
def test_filter_plugins(name):
    plugins, skipped, want = FILTER[name]
    fwk = framework_with({"Filter": enabled(plugins)}, plugins)
    state = CycleState()
    state.skip_filter_plugins = set(skipped)
    assert same_status(want, fwk.run_filter(state, POD, None))


# -- TestPostFilterPlugins -----------------------------------------------------------------------------
POST_FILTER = {
    "a single plugin makes a Pod schedulable": ([TestPlugin("TestPlugin", PostFilterStatus=S)], st(S, INJECT)),
    "plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable": (
        [TestPlugin("TestPlugin1", PostFilterStatus=U), TestPlugin("TestPlugin2", PostFilterStatus=S)], st(S, INJECT)),
    "plugin1 makes a Pod schedulable, followed by plugin2 which cannot make the Pod schedulable": (
        [TestPlugin("TestPlugin1", PostFilterStatus=S), TestPlugin("TestPlugin2", PostFilterStatus=U)], st(S, INJECT)),
    # upstream reuses the name of the second case for this one
    "plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable (Error)": (
        [TestPlugin("TestPlugin1", PostFilterStatus=E), TestPlugin("TestPlugin2", PostFilterStatus=S)], err(INJECT)),
    "plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod unresolvable": (
        [TestPlugin("TestPlugin1", PostFilterStatus=U), TestPlugin("TestPlugin2", PostFilterStatus=UU)],
        st(UU, INJECT, plugin="TestPlugin2")),
    "both plugins failed to make a Pod schedulable": (
        [TestPlugin("TestPlugin1", PostFilterStatus=U), TestPlugin("TestPlugin2", PostFilterStatus=U)],
        st(U, INJECT, INJECT, plugin="TestPlugin1")),
}


@pytest.mark.parametrize("name", list(POST_FILTER))
def test_post_filter_plugins(name):
    plugins, want = POST_FILTER[name]
    fwk = framework_with({"PostFilter": enabled(plugins)}, plugins)
    _result, got = fwk.run_post_filter(CycleState(), POD, {})
    assert same_status(want, got)


# -- TestFilterPluginsWithNominatedPods -------------------------------------------------------------
def prio_pod(name, priority):
    return Pod({"metadata": {"name": name, "namespace": "default", "uid": name}, "spec": {"priority": priority}})


NOMINATED = {
    "node has no nominated pod": (None, None, "low", None, None),
    "node has a high-priority nominated pod and all filters succeed": (
        TestPlugin("TestPlugin1", PreFilterAddPodStatus=S), TestPlugin("TestPlugin2", FilterStatus=S), "low", "high",
        None),
    "node has a high-priority nominated pod and pre filters fail": (
        TestPlugin("TestPlugin1", PreFilterAddPodStatus=E), None, "low", "high",
        err(f'running AddPod on PreFilter plugin "TestPlugin1": {INJECT}')),
    "node has a high-priority nominated pod and filters fail": (
        TestPlugin("TestPlugin1", PreFilterAddPodStatus=S), TestPlugin("TestPlugin2", FilterStatus=E), "low", "high",
        filter_error("TestPlugin2")),
    "node has a low-priority nominated pod and pre filters return unschedulable": (
        TestPlugin("TestPlugin1", PreFilterAddPodStatus=U), TestPlugin("TestPlugin2", FilterStatus=S), "high", "low",
        None),
}


@pytest.mark.parametrize("name", list(NOMINATED))
def test_filter_plugins_with_nominated_pods(name):
    pre_filter, filter_pl, pod_name, nominated_name, want = NOMINATED[name]
    pods = {"low": prio_pod("low", 0), "high": prio_pod("high", 1000)}
    points, plugins = {}, []
    if pre_filter is not None:
        points["PreFilter"] = enabled([pre_filter])
        plugins.append(pre_filter)
    if filter_pl is not None:
        points["Filter"] = enabled([filter_pl])
        plugins.append(filter_pl)
    fwk = framework_with(points, plugins)
    node_info = NodeInfo(Node({"metadata": {"name": "testNode"}}))
    node_info.add_pod(prio_pod("p", 0))   # framework.NewNodeInfo(pod)
    nominated = {"testNode": [pods[nominated_name]]} if nominated_name else {}
    got = fwk.run_filter_with_nominated_pods(CycleState(), pods[pod_name], node_info,
                                             lambda node: nominated.get(node, []))
    assert same_status(want, got)


# -- TestPreBindPlugins / TestReservePlugins / TestPermitPlugins ---------------------------------------
def _binding_cases(key, verb):
    e = lambda plugin: err(f'running {verb} plugin "{plugin}": {INJECT}')  # noqa: E731
    return {
        f"No{verb}Plugin": ([], None),
        f"Success{verb}Plugins": ([TestPlugin("TestPlugin", **{key: S})], None),
        f"Unschedulable{verb}Plugin": ([TestPlugin("TestPlugin", **{key: U})], st(U, INJECT, plugin="TestPlugin")),
        f"Error{verb}Plugin": ([TestPlugin("TestPlugin", **{key: E})], e("TestPlugin")),
        # upstream names this case like the Unschedulable one
        f"Unschedulable{verb}Plugin (UnschedulableAndUnresolvable)": (
            [TestPlugin("TestPlugin", **{key: UU})], st(UU, INJECT, plugin="TestPlugin")),
    }


PRE_BIND = {
    **_binding_cases("PreBindStatus", "PreBind"),
    "SuccessErrorPreBindPlugins": ([TestPlugin("TestPlugin"), TestPlugin("TestPlugin 1", PreBindStatus=E)],
                                   err(f'running PreBind plugin "TestPlugin 1": {INJECT}')),
    "ErrorSuccessPreBindPlugin": ([TestPlugin("TestPlugin", PreBindStatus=E), TestPlugin("TestPlugin 1")],
                                  err(f'running PreBind plugin "TestPlugin": {INJECT}')),
    "SuccessSuccessPreBindPlugin": ([TestPlugin("TestPlugin"), TestPlugin("TestPlugin 1")], None),
    "ErrorAndErrorPlugins": ([TestPlugin("TestPlugin", PreBindStatus=E), TestPlugin("TestPlugin 1", PreBindStatus=E)],
                             err(f'running PreBind plugin "TestPlugin": {INJECT}')),
    "UnschedulableAndSuccessPreBindPlugin": ([TestPlugin("TestPlugin", PreBindStatus=U), TestPlugin("TestPlugin 1")],
                                             st(U, INJECT, plugin="TestPlugin")),
}
RESERVE = {
    **_binding_cases("ReserveStatus", "Reserve"),
    "SuccessSuccessReservePlugins": ([TestPlugin("TestPlugin"), TestPlugin("TestPlugin 1")], None),
    "ErrorErrorReservePlugins": ([TestPlugin("TestPlugin", ReserveStatus=E), TestPlugin("TestPlugin 1", ReserveStatus=E)],
                                 err(f'running Reserve plugin "TestPlugin": {INJECT}')),
    "SuccessErrorReservePlugins": ([TestPlugin("TestPlugin"), TestPlugin("TestPlugin 1", ReserveStatus=E)],
                                   err(f'running Reserve plugin "TestPlugin 1": {INJECT}')),
    "ErrorSuccessReservePlugin": ([TestPlugin("TestPlugin", ReserveStatus=E), TestPlugin("TestPlugin 1")],
                                  err(f'running Reserve plugin "TestPlugin": {INJECT}')),
    "UnschedulableAndSuccessReservePlugin": ([TestPlugin("TestPlugin", ReserveStatus=U), TestPlugin("TestPlugin 1")],
                                             st(U, INJECT, plugin="TestPlugin")),
}
PERMIT = {
    "NilPermitPlugin": ([], None),
    "SuccessPermitPlugin": ([TestPlugin("TestPlugin", PermitStatus=S)], None),
    "UnschedulablePermitPlugin": ([TestPlugin("TestPlugin", PermitStatus=U)], st(U, INJECT, plugin="TestPlugin")),
    "ErrorPermitPlugin": ([TestPlugin("TestPlugin", PermitStatus=E)],
                          err(f'running Permit plugin "TestPlugin": {INJECT}')),
    "UnschedulableAndUnresolvablePermitPlugin": ([TestPlugin("TestPlugin", PermitStatus=UU)],
                                                 st(UU, INJECT, plugin="TestPlugin")),
    "WaitPermitPlugin": ([TestPlugin("TestPlugin", PermitStatus=W)],
                         st(W, 'one or more plugins asked to wait and no plugin rejected pod ""')),
    "SuccessSuccessPermitPlugin": ([TestPlugin("TestPlugin"), TestPlugin("TestPlugin 1")], None),
    "ErrorAndErrorPlugins": ([TestPlugin("TestPlugin", PermitStatus=E), TestPlugin("TestPlugin 1", PermitStatus=E)],
                             err(f'running Permit plugin "TestPlugin": {INJECT}')),
}


@pytest.mark.parametrize("name", list(PRE_BIND))
def test_pre_bind_plugins(name):
    plugins, want = PRE_BIND[name]
    fwk = framework_with({"PreBind": enabled(plugins)}, plugins)
    assert same_status(want, fwk.run_pre_bind(CycleState(), POD, ""))


@pytest.mark.parametrize("name", list(RESERVE))
def test_reserve_plugins(name):
    plugins, want = RESERVE[name]
    fwk = framework_with({"Reserve": enabled(plugins)}, plugins)
    assert same_status(want, fwk.run_reserve(CycleState(), POD, ""))


@pytest.mark.parametrize("name", list(PERMIT))
def test_permit_plugins(name):
    plugins, want = PERMIT[name]
    fwk = framework_with({"Permit": enabled(plugins)}, plugins)
    got, _waits = fwk.run_permit(CycleState(), POD, "")
    assert same_status(want, got)


# -- TestRunBindPlugins ---------------------------------------------------------------------------------
BIND_CASES = {
    "simple success": ([S], S),
    "error on second": ([SKIP, E, S], E),
    "all skip": ([SKIP, SKIP, SKIP], SKIP),
    "error on third, but not reached": ([SKIP, S, E], S),
    "no bind plugin, returns default binder": ([], S),
    "invalid status": ([U], U),
    "simple error": ([E], E),
    "success on second, returns success": ([SKIP, S], S),
    "invalid status, returns error": ([SKIP, UU], UU),
    "error after success status, returns success": ([S, E], S),
    "success before invalid status, returns success": ([S, E], S),
    "success after error status, returns error": ([E, S], E),
}


@pytest.mark.parametrize("name", list(BIND_CASES))
def test_run_bind_plugins(name):
    injects, want_code = BIND_CASES[name]
    plugins = [TestPlugin(f"bind-{i}", BindStatus=c) for i, c in enumerate(injects)]
    fwk = framework_with({"Bind": enabled(plugins)}, plugins)
    got = fwk.run_bind(CycleState(), POD, "")
    assert (S if got is None else got.code) == want_code


# -- TestPreEnqueuePlugins / TestListPlugins / TestPreFilterPlugins --------------------------------------
class TestPreEnqueuePlugin(PreEnqueuePlugin):
    __test__ = False
    name = "preEnqueue-plugin"

    def pre_enqueue(self, pod):
        return None


@pytest.mark.parametrize("name", ["no PreEnqueuePlugin registered", "one PreEnqueuePlugin registered"])
def test_pre_enqueue_plugins(name):
    plugins = [TestPreEnqueuePlugin()] if name.startswith("one") else []
    fwk = framework_with({"PreEnqueue": enabled(plugins)}, plugins)
    assert [p.name for p in fwk.pre_enqueue] == [p.name for p in plugins]


LIST_PLUGINS = {
    "Add empty plugin": ({}, {"QueueSort": [QUEUE_SORT], "Bind": [BIND]}),
    "Add multiple plugins": ({"Score": [(SCORE1, 3), (NORM1, 0)]},
                             {"QueueSort": [QUEUE_SORT], "Bind": [BIND], "Score": [(SCORE1, 3), (NORM1, 1)]}),
}


@pytest.mark.parametrize("name", list(LIST_PLUGINS))
def test_list_plugins(name):
    points, want = LIST_PLUGINS[name]
    fwk = framework_with(points)
    got = {point: [p.name for p in pls] for point, pls in fwk.plugins.items() if pls and point != "Score"}
    if fwk.score:
        got["Score"] = [(p.name, fwk.score_weights[p.name]) for p in fwk.score]
    assert got == want


class CountingPreFilter(PreFilterPlugin, PreFilterExtensions):
    """TestPreFilterPlugin (no extensions) / TestPreFilterWithExtensionsPlugin: count their calls."""

    def __init__(self, name, extensions):
        self.name, self.extensions = name, extensions
        self.pre_filter_called = self.add_called = self.remove_called = 0

    def pre_filter(self, state, pod):
        self.pre_filter_called += 1
        return None, None

    def pre_filter_extensions(self):
        return self if self.extensions else None

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        self.add_called += 1

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        self.remove_called += 1


@pytest.mark.parametrize("name", ["TestPreFilterPlugin"])
def test_pre_filter_plugins(name):
    plain = CountingPreFilter("prefilter-plugin", extensions=False)
    with_ext = CountingPreFilter("prefilter-with-extensions-plugin", extensions=True)
    fwk = framework_with({"PreFilter": enabled([with_ext, plain])}, [with_ext, plain])
    state = CycleState()
    fwk.run_pre_filter(state, POD)
    fwk.run_pre_filter_extension_add_pod(state, POD, None, None)
    fwk.run_pre_filter_extension_remove_pod(state, POD, None, None)
    assert (plain.pre_filter_called, with_ext.pre_filter_called, with_ext.add_called, with_ext.remove_called) == (
        1, 1, 1, 1)
