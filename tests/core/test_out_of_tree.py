"""Out-of-tree plugins: registration (dotted path, entry point), the GPUAware example through `simulate`,
and failure semantics (exceptions, bad results, invalid scores, time budget)."""
from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import time

import pytest
import yaml

from scheduler_core.cli import main
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.guard import DEFAULT_CALL_TIMEOUT, GuardedPlugin
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import (BindPlugin, FilterPlugin, PermitPlugin, Plugin, PostBindPlugin,
                                                PostFilterPlugin, PreBindPlugin, PreFilterExtensions,
                                                PreFilterPlugin, PreScorePlugin, ReservePlugin, ScoreExtensions,
                                                ScorePlugin)
from scheduler_core.framework.profile import FrameworkError, new_framework
from scheduler_core.framework.status import Code, Status
from scheduler_core.plugins.registry import (ENTRY_POINT_GROUP, PluginLoadError, build_registry, in_tree_registry,
                                             load_plugin_class)
from scheduler_core.scenario import load_scenario, scenario_from_data
from scheduler_core.schedule_one import SchedulerContext, schedule_pod
from scheduler_core.simulate import Simulation, build_snapshot

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "gpu_plugin")
GPU_PATH = "examples.gpu_plugin:GPUAware"


# -- helpers -----------------------------------------------------------------------------------------------
def node(name, gpus=None, memory_gb=None):
    alloc = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    if gpus is not None:
        alloc["nvidia.com/gpu"] = str(gpus)
    labels = {"kubernetes.io/hostname": name}
    if memory_gb is not None:
        labels["example.com/gpu-memory-gb"] = str(memory_gb)
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}, "status": {"allocatable": alloc}}


def pod(name, gpus=0, priority=0):
    req = {"cpu": "100m"}
    if gpus:
        req["nvidia.com/gpu"] = str(gpus)
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"priority": priority, "containers": [{"name": "c", "image": "i", "resources": {"requests": req}}]}}


def scenario(nodes, pending):
    return scenario_from_data({"nodes": nodes, "pending": pending}, name="t")


def framework(registry, points, args=None, scen=None):
    """A framework with PrioritySort + DefaultBinder and ``points`` ({point: [names]}), on ``scen``'s nodes."""
    scen = scen or scenario([node("n1"), node("n2")], [pod("p")])
    snapshot = build_snapshot(scen)
    point_plugins = {"QueueSort": [("PrioritySort", 0)], "Bind": [("DefaultBinder", 0)]}
    for point, names in points.items():
        point_plugins[point] = [(n, 0) for n in names]
    fwk = new_framework("default-scheduler", point_plugins, args or {}, registry, Handle(snapshot=snapshot))
    return fwk, snapshot, scen.pending_pods[0]


def cycle(fwk, snapshot, p, trace_all_filters=True):
    ctx = SchedulerContext(tie_break="name", trace_all_filters=trace_all_filters)
    tr, state = schedule_pod(fwk, ctx, p, snapshot, CycleState(), score_single_node=True)
    return tr, state


# -- loading -----------------------------------------------------------------------------------------------
class NoPoints(Plugin):
    name = "NoPoints"


class Clash(FilterPlugin):
    name = "NodeName"

    def filter(self, state, pod, node_info):
        return None


class OtherGPU(FilterPlugin):
    name = "GPUAware"

    def filter(self, state, pod, node_info):
        return None


def test_load_by_dotted_path():
    from examples.gpu_plugin import GPUAware
    assert load_plugin_class(GPU_PATH) is GPUAware
    assert load_plugin_class("examples.gpu_plugin.GPUAware") is GPUAware
    reg = build_registry([GPU_PATH])
    entry = reg["GPUAware"]
    assert issubclass(entry, GuardedPlugin) and entry.plugin_class is GPUAware
    assert entry.origin == "examples.gpu_plugin:GPUAware"
    assert issubclass(entry, PreFilterPlugin) and issubclass(entry, FilterPlugin) and issubclass(entry, ScorePlugin)
    assert not issubclass(entry, ReservePlugin)
    # in-tree plugins are registered as they are (no guard on the hot path)
    assert reg["NodeName"] is in_tree_registry()["NodeName"]
    assert set(reg) == set(in_tree_registry()) | {"GPUAware"}


def test_load_class_object_and_duplicates():
    from examples.gpu_plugin import GPUAware
    reg = build_registry([GPUAware, GPU_PATH])  # the same class twice is one registration
    assert reg["GPUAware"].plugin_class is GPUAware
    with pytest.raises(PluginLoadError, match='a plugin named "GPUAware" already exists'):
        build_registry([GPU_PATH, OtherGPU])


@pytest.mark.parametrize("path,match", [
    ("no_such_module_xyz:Thing", 'plugin path "no_such_module_xyz:Thing": cannot import module "no_such_module_xyz": '
                                 "ModuleNotFoundError"),
    ("examples.gpu_plugin:Nope", 'plugin path "examples.gpu_plugin:Nope": module "examples.gpu_plugin" has no '
                                 'attribute "Nope"'),
    ("examples.gpu_plugin:NAME", "is not a class deriving from"),
    ("Lonely", 'expected "module:Class"'),
    (f"{__name__}:NoPoints", "NoPoints implements no extension point"),
    (f"{__name__}:Clash", 'a plugin named "NodeName" already exists in-tree'),
])
def test_load_errors(path, match):
    with pytest.raises(PluginLoadError, match=match):
        build_registry([path])


def fake_entry_points(monkeypatch, *eps):
    def entry_points(**kw):
        assert kw == {"group": ENTRY_POINT_GROUP}
        return list(eps)
    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_load_by_entry_point(monkeypatch):
    from examples.gpu_plugin import GPUAware
    fake_entry_points(monkeypatch, importlib.metadata.EntryPoint("GPUAware", GPU_PATH, ENTRY_POINT_GROUP))
    reg = build_registry()
    assert reg["GPUAware"].plugin_class is GPUAware
    assert build_registry([GPU_PATH])["GPUAware"].plugin_class is GPUAware  # also given by path: same class
    # Simulation's default registry includes entry-point plugins
    data = yaml.safe_load(open(os.path.join(EXAMPLE, "profile.yaml")))
    sim = Simulation(load_scenario(os.path.join(EXAMPLE, "scenario.yaml")), config_doc=data)
    assert "GPUAware" in sim.frameworks["default-scheduler"].list_plugins()["filter"]


def test_entry_point_errors(monkeypatch):
    fake_entry_points(monkeypatch, importlib.metadata.EntryPoint("Broken", "no_such_module_xyz:X", ENTRY_POINT_GROUP))
    with pytest.raises(PluginLoadError, match=r'entry point "Broken" \(no_such_module_xyz:X\): cannot load: '
                                              "ModuleNotFoundError"):
        build_registry()
    fake_entry_points(monkeypatch, importlib.metadata.EntryPoint("GPU", GPU_PATH, ENTRY_POINT_GROUP))
    with pytest.raises(PluginLoadError, match='the class is named "GPUAware"'):
        build_registry()
    fake_entry_points(monkeypatch, importlib.metadata.EntryPoint("NodeName", f"{__name__}:Clash", ENTRY_POINT_GROUP))
    with pytest.raises(PluginLoadError, match='a plugin named "NodeName" already exists in-tree'):
        build_registry()


# -- the GPUAware example ----------------------------------------------------------------------------------
def gpu_simulation(**kw):
    scen = load_scenario(os.path.join(EXAMPLE, "scenario.yaml"))
    with open(os.path.join(EXAMPLE, "profile.yaml"), encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    return Simulation(scen, config_doc=doc, tie_break="name", registry=build_registry([GPU_PATH], **kw))


def test_gpu_plugin_profile():
    sim = gpu_simulation()
    plugins = sim.frameworks["default-scheduler"].list_plugins()
    assert plugins["filter"][0] == "GPUAware"  # multiPoint + filter: first at Filter
    assert "GPUAware" in plugins["prefilter"] and "GPUAware" in plugins["prescore"]
    assert {"name": "GPUAware", "weight": 10} in plugins["score"]


def test_gpu_plugin_filter_and_score():
    traces = {t.pod.name: t for t in gpu_simulation().run()}
    train = traces["train-0"]
    assert train.chosen == "gpu-a100"
    assert train.node_statuses["cpu-1"].plugin == "GPUAware"
    assert train.node_statuses["cpu-1"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert train.node_statuses["cpu-1"].reasons == ["node(s) have no nvidia.com/gpu"]
    assert train.node_statuses["gpu-l40"].plugin == "NodeResourcesFit"  # its only GPU is used
    weight, per_node = train.scores["GPUAware"]
    assert weight == 10
    assert per_node == {"gpu-t4": (16, 20), "gpu-a100": (80, 100)}
    golden = train.to_golden()
    assert golden["filter"]["cpu-1"]["GPUAware"] == {"code": "UnschedulableAndUnresolvable",
                                                     "reasons": ["node(s) have no nvidia.com/gpu"]}
    assert golden["scores"]["gpu-a100"]["GPUAware"]["weighted"] == 1000
    assert traces["infer-0"].chosen == "gpu-a100"
    big = traces["train-big"]
    assert big.chosen is None
    assert big.message.startswith("0/4 nodes are available: 1 node(s) have no nvidia.com/gpu, "
                                  "3 Insufficient nvidia.com/gpu.")
    web = traces["web-0"]  # no GPU request: PreFilter and PreScore skip the plugin
    assert web.chosen is not None
    assert "GPUAware" in web.skip_filter_plugins and "GPUAware" in web.prescore_skip_plugins
    assert "GPUAware" not in web.scores


def test_gpu_plugin_without_budget_same_result():
    a = [(t.pod.name, t.chosen, t.totals) for t in gpu_simulation().run()]
    b = [(t.pod.name, t.chosen, t.totals) for t in gpu_simulation(call_timeout=0).run()]
    assert a == b


def test_gpu_plugin_args_and_missing_label():
    from examples.gpu_plugin import GPUAware
    reg = build_registry([GPUAware])
    scen = scenario([node("a", gpus=1, memory_gb=24), node("b", gpus=1), node("c", gpus=1, memory_gb="x1")],
                    [pod("p", gpus=1)])
    fwk, snap, p = framework(reg, {"Score": ["GPUAware"], "PreScore": ["GPUAware"]}, scen=scen)
    tr, _ = cycle(fwk, snap, p)
    assert tr.scores["GPUAware"][1] == {"a": (24, 100), "b": (0, 0), "c": (0, 0)}
    with pytest.raises(FrameworkError, match='initializing plugin "GPUAware": ValueError: unknown field'):
        framework(reg, {"Filter": ["GPUAware"]}, args={"GPUAware": {"memoryLabl": "x"}})
    fwk, snap, p = framework(reg, {"Filter": ["GPUAware"]}, args={"GPUAware": {"resourceName": "amd.com/gpu"}},
                             scen=scenario([node("a", gpus=1)], [pod("p", gpus=1)]))
    tr, _ = cycle(fwk, snap, p)  # the pod asks for no amd.com/gpu: filter does not run
    assert tr.chosen == "a"


def test_cli_plugin_option(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    rc = main(["simulate", os.path.join(EXAMPLE, "scenario.yaml"), "--config", os.path.join(EXAMPLE, "profile.yaml"),
               "--plugin", GPU_PATH, "--tie-break", "name", "--format", "golden"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"name": "GPUAware", "weight": 10} in doc["plugins"]["score"]
    first = doc["decisions"][0]
    assert first["bound_node"] == "gpu-a100"
    assert first["filter_framework"]["cpu-1"] == {"code": "UnschedulableAndUnresolvable", "plugin": "GPUAware",
                                                  "reasons": ["node(s) have no nvidia.com/gpu"]}
    rc = main(["simulate", os.path.join(EXAMPLE, "scenario.yaml"), "--plugin", "no_such_module_xyz:X"])
    assert rc == 2
    assert 'error: plugin path "no_such_module_xyz:X": cannot import module' in capsys.readouterr().err
    rc = main(["simulate", os.path.join(EXAMPLE, "scenario.yaml"), "--config", os.path.join(EXAMPLE, "profile.yaml")])
    assert rc == 2  # GPUAware not registered: the profile is rejected
    assert "GPUAware" in capsys.readouterr().err


def test_cli_run_plugin_option(capsys):
    pytest.importorskip("scheduler_core.run")
    rc = main(["run", os.path.join(EXAMPLE, "scenario.yaml"), "--config", os.path.join(EXAMPLE, "profile.yaml"),
               "--plugin", GPU_PATH, "--tie-break", "name", "--until-idle", "--format", "json"])
    assert rc == 0
    placements = json.loads(capsys.readouterr().out)["placements"]
    assert placements["default/train-0"] == "gpu-a100" and placements["default/train-big"] is None


# -- failure semantics ---------------------------------------------------------------------------------------
class Faulty(PreFilterPlugin, FilterPlugin, PostFilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions,
             ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin, PostBindPlugin, PreFilterExtensions):
    """Succeeds everywhere except at ``failAt``, where it misbehaves as ``mode`` says."""

    name = "Faulty"

    def __init__(self, fail_at="", mode="raise", score=50):
        self.fail_at, self.mode, self.score_value = fail_at, mode, score

    @classmethod
    def new(cls, args, handle):
        args = args or {}
        if args.get("broken"):
            raise ValueError("broken args")
        return cls(args.get("failAt", ""), args.get("mode", "raise"), args.get("score", 50))

    def _act(self, point, ok):
        if point != self.fail_at:
            return ok
        if self.mode == "raise":
            raise RuntimeError(f"boom in {point}")
        if self.mode == "sleep":
            time.sleep(0.5)
            return ok
        if self.mode == "error":
            return Status.error(f"failed in {point}")
        return "garbage"

    def pre_filter(self, state, pod):
        return self._act("PreFilter", (None, None))

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        return self._act("AddPod", None)

    def filter(self, state, pod, node_info):
        return self._act("Filter", None)

    def post_filter(self, state, pod, node_statuses):
        return self._act("PostFilter", (None, Status(Code.UNSCHEDULABLE, "faulty says no")))

    def pre_score(self, state, pod, node_infos):
        return self._act("PreScore", None)

    def score(self, state, pod, node_info):
        return self._act("Score", (self.score_value, None))

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        return self._act("NormalizeScore", None)

    def reserve(self, state, pod, node_name):
        return self._act("Reserve", None)

    def unreserve(self, state, pod, node_name):
        return self._act("Unreserve", None)

    def permit(self, state, pod, node_name):
        return self._act("Permit", (None, 0))

    def pre_bind(self, state, pod, node_name):
        return self._act("PreBind", None)

    def bind(self, state, pod, node_name):
        return self._act("Bind", None)

    def post_bind(self, state, pod, node_name):
        return self._act("PostBind", None)


ALL_CYCLE_POINTS = {"PreFilter": ["Faulty"], "Filter": ["Faulty"], "PreScore": ["Faulty"], "Score": ["Faulty"]}


def faulty_framework(fail_at, mode="raise", timeout=DEFAULT_CALL_TIMEOUT, points=None, **args):
    reg = build_registry([Faulty], call_timeout=timeout)
    return framework(reg, points or ALL_CYCLE_POINTS, args={"Faulty": {"failAt": fail_at, "mode": mode, **args}})


@pytest.mark.parametrize("trace_all_filters", [True, False])
@pytest.mark.parametrize("point,expected", [
    ("PreFilter", 'running PreFilter plugin "Faulty": RuntimeError: boom in PreFilter'),
    ("Filter", 'running "Faulty" filter plugin: RuntimeError: boom in Filter'),
    ("PreScore", 'running PreScore plugin "Faulty": RuntimeError: boom in PreScore'),
    ("Score", 'running Score plugins: plugin "Faulty" failed with: RuntimeError: boom in Score'),
    ("NormalizeScore", 'running Normalize on Score plugins: plugin "Faulty" failed with: '
                       "RuntimeError: boom in NormalizeScore"),
])
def test_raising_plugin_fails_the_cycle(point, expected, trace_all_filters):
    fwk, snap, p = faulty_framework(point)
    tr, _ = cycle(fwk, snap, p, trace_all_filters)
    assert tr.error == expected
    assert tr.chosen is None and tr.result == "error"


@pytest.mark.parametrize("point,run,expected", [
    ("Reserve", "run_reserve", 'running Reserve plugin "Faulty": RuntimeError: boom in Reserve'),
    ("PreBind", "run_pre_bind", 'running PreBind plugin "Faulty": RuntimeError: boom in PreBind'),
    ("Bind", "run_bind", 'running Bind plugin "Faulty": RuntimeError: boom in Bind'),
])
def test_raising_plugin_binding_points(point, run, expected):
    fwk, snap, p = faulty_framework(point, points={point: ["Faulty"]})
    st = getattr(fwk, run)(CycleState(), p, "n1")
    assert st.code == Code.ERROR and st.as_error() == expected and st.plugin == "Faulty"


def test_raising_plugin_permit_postfilter_addpod():
    fwk, snap, p = faulty_framework("Permit", points={"Permit": ["Faulty"]})
    st, waits = fwk.run_permit(CycleState(), p, "n1")
    assert st.as_error() == 'running Permit plugin "Faulty": RuntimeError: boom in Permit' and waits == {}
    # kube returns the PostFilter error as it is (no "running ... plugin" prefix)
    fwk, snap, p = faulty_framework("PostFilter", points={"PostFilter": ["Faulty"]})
    res, st = fwk.run_post_filter(CycleState(), p, {})
    assert res is None and st.code == Code.ERROR and st.as_error() == "RuntimeError: boom in PostFilter"
    assert st.plugin == "Faulty"
    fwk, snap, p = faulty_framework("AddPod", points={"PreFilter": ["Faulty"]})
    st = fwk.run_pre_filter_extension_add_pod(CycleState(), p, p, snap.node_infos[0])
    assert st.as_error() == 'running AddPod on PreFilter plugin "Faulty": RuntimeError: boom in AddPod'


def test_ignored_points_log(caplog):
    fwk, snap, p = faulty_framework("Unreserve", points={"Reserve": ["Faulty"]})
    with caplog.at_level(logging.WARNING, logger="scheduler_core.framework.guard"):
        fwk.run_unreserve(CycleState(), p, "n1")
    assert 'Unreserve of out-of-tree plugin "Faulty" failed: RuntimeError: boom in Unreserve' in caplog.text
    fwk, snap, p = faulty_framework("PostBind", points={"PostBind": ["Faulty"]})
    fwk.run_post_bind(CycleState(), p, "n1")


def test_error_status_wrapped_like_in_tree():
    fwk, snap, p = faulty_framework("Filter", mode="error")
    tr, _ = cycle(fwk, snap, p)
    assert tr.error == 'running "Faulty" filter plugin: failed in Filter'


@pytest.mark.parametrize("point,expected", [
    ("Filter", "running \"Faulty\" filter plugin: Filter returned 'garbage', want a Status or None"),
    ("PreFilter", "running PreFilter plugin \"Faulty\": PreFilter returned 'garbage', want a pair"),
    ("Score", "running Score plugins: plugin \"Faulty\" failed with: Score returned 'garbage', want a pair"),
])
def test_bad_results(point, expected):
    fwk, snap, p = faulty_framework(point, mode="garbage")
    tr, _ = cycle(fwk, snap, p)
    assert tr.error == expected


def test_non_integer_score():
    fwk, snap, p = faulty_framework("", score=1.5)
    tr, _ = cycle(fwk, snap, p)
    assert tr.error == 'running Score plugins: plugin "Faulty" failed with: score 1.5 is not an integer'


def test_invalid_score_after_normalizing():
    expected = ('applying score defaultWeights on Score plugins: plugin "Faulty" returns an invalid score 120, '
                'it should in the range of [0, 100] after normalizing')
    fwk, snap, p = faulty_framework("", score=120)
    tr, _ = cycle(fwk, snap, p)
    assert tr.error == expected
    fwk, snap, p = faulty_framework("", score=-1)
    tr, _ = cycle(fwk, snap, p)
    assert "returns an invalid score -1," in tr.error
    # the same check applies to unwrapped (in-tree style) plugins
    reg = dict(in_tree_registry(), Faulty=Faulty)
    fwk, snap, p = framework(reg, ALL_CYCLE_POINTS, args={"Faulty": {"score": 120}})
    tr, _ = cycle(fwk, snap, p)
    assert tr.error == expected


class FailingScore(ScorePlugin):
    name = "FailingScore"

    def score(self, state, pod, node_info):
        return 0, Status.error("cannot score")


def test_score_errors_before_range_errors():
    """kube scores with every plugin before normalizing and weighting: a later plugin's Score error wins."""
    reg = build_registry([Faulty, FailingScore])
    fwk, snap, p = framework(reg, {"Score": ["Faulty", "FailingScore"]}, args={"Faulty": {"score": 120}})
    tr, _ = cycle(fwk, snap, p)
    assert tr.error == 'running Score plugins: plugin "FailingScore" failed with: cannot score'


def test_timeout_fails_the_cycle():
    fwk, snap, p = faulty_framework("Filter", mode="sleep", timeout=0.05)
    t0 = time.perf_counter()
    tr, _ = cycle(fwk, snap, p)
    assert time.perf_counter() - t0 < 0.45  # did not wait for the call to return
    assert tr.error == ('running "Faulty" filter plugin: Filter call exceeded the 0.05s time budget of '
                        'out-of-tree plugins')
    # a fresh worker serves the next calls
    fwk, snap, p = faulty_framework("", timeout=0.05)
    tr, _ = cycle(fwk, snap, p)
    assert tr.error is None and tr.chosen == "n1"


@pytest.mark.parametrize("point,expected", [
    ("PreFilter", 'running PreFilter plugin "Faulty": PreFilter call exceeded the 0.05s time budget'),
    ("Score", 'running Score plugins: plugin "Faulty" failed with: Score call exceeded the 0.05s time budget'),
])
def test_timeout_other_points(point, expected):
    fwk, snap, p = faulty_framework(point, mode="sleep", timeout=0.05)
    tr, _ = cycle(fwk, snap, p)
    assert tr.error.startswith(expected)


def test_no_budget_runs_inline():
    fwk, snap, p = faulty_framework("Filter", mode="sleep", timeout=0)
    tr, _ = cycle(fwk, snap, p)
    assert tr.error is None and tr.chosen == "n1"
    fwk, snap, p = faulty_framework("Filter", timeout=0)
    tr, _ = cycle(fwk, snap, p)
    assert tr.error == 'running "Faulty" filter plugin: RuntimeError: boom in Filter'


def test_init_failure():
    reg = build_registry([Faulty])
    with pytest.raises(FrameworkError, match='initializing plugin "Faulty": ValueError: broken args'):
        framework(reg, {"Filter": ["Faulty"]}, args={"Faulty": {"broken": True}})


def test_success_path_through_guard():
    fwk, snap, p = faulty_framework("")
    tr, state = cycle(fwk, snap, p)
    assert tr.error is None and tr.chosen == "n1"
    assert tr.scores["Faulty"] == (1, {"n1": (50, 50), "n2": (50, 50)})
    assert tr.filter["n1"]["Faulty"] is None
    pl = fwk.get_plugin("Faulty")
    assert isinstance(pl, GuardedPlugin) and isinstance(pl.plugin, Faulty)
    assert fwk.run_reserve(state, p, "n1") is None
    assert fwk.run_permit(state, p, "n1") == (None, {})
    assert fwk.run_bind(state, p, "n1") is None


class BatchScore(ScorePlugin):
    """Scores all nodes in one call (the runtime's optional ``score_nodes``)."""

    name = "BatchScore"
    result = None

    def score_nodes(self, state, pod, node_infos):
        return (self.result if self.result is not None else [7] * len(node_infos)), None


def test_batch_score_is_guarded(monkeypatch):
    reg = build_registry([BatchScore])
    fwk, snap, p = framework(reg, {"Score": ["BatchScore"]})
    assert fwk.get_plugin("BatchScore").score_nodes.__self__ is fwk.get_plugin("BatchScore")
    tr, _ = cycle(fwk, snap, p)
    assert tr.scores["BatchScore"][1] == {"n1": (7, 7), "n2": (7, 7)}
    monkeypatch.setattr(BatchScore, "result", [1])
    tr, _ = cycle(fwk, snap, p)
    assert tr.error == 'running Score plugins: plugin "BatchScore" failed with: Score returned 1 scores for 2 nodes'
    assert getattr(build_registry([Faulty])["Faulty"].new(None, None), "score_nodes", None) is None
