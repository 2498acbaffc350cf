"""KubeSchedulerConfiguration v1: strict decoding, defaulting, plugin merging, multiPoint expansion,
validation and framework errors (the cases of kube's defaults_test, default_plugins_test,
validation_test, validation_pluginargs_test, framework_test and scheme_test)."""
import copy
import glob
import json
import os

import pytest

from scheduler_core.cli import main as cli_main
from scheduler_core.config import ConfigError, build_frameworks, default_config, load_config
from scheduler_core.config.defaults import merge_plugin_set
from scheduler_core.config.duration import DurationError, format_duration, parse_duration
from scheduler_core.objects.field import aggregate, invalid
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import (BindPlugin, FilterPlugin, PreFilterPlugin, PreScorePlugin,
                                                QueueSortPlugin, ScorePlugin)
from scheduler_core.framework.profile import FrameworkError, new_framework
from scheduler_core.plugins.registry import in_tree_registry

REGISTRY = in_tree_registry()
GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "config")
HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

DEFAULT_PLUGINS = {
    "prefilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits", "GCEPDLimits",
                  "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                  "InterPodAffinity"],
    "filter": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
               "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits",
               "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"],
    "prescore": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                 "InterPodAffinity", "NodeResourcesBalancedAllocation"],
    "score": [{"name": "TaintToleration", "weight": 3}, {"name": "NodeAffinity", "weight": 2},
              {"name": "NodeResourcesFit", "weight": 1}, {"name": "VolumeBinding", "weight": 1},
              {"name": "PodTopologySpread", "weight": 2}, {"name": "InterPodAffinity", "weight": 2},
              {"name": "NodeResourcesBalancedAllocation", "weight": 1}, {"name": "ImageLocality", "weight": 1}],
    "postfilter": ["DefaultPreemption"],
}


def doc(**fields):
    return {**HEAD, **fields}


def frameworks(config):
    return build_frameworks(config, REGISTRY, Handle)


def plugins_of(d, name="default-scheduler"):
    return frameworks(load_config(d, REGISTRY))[name].list_plugins()


def error_of(d):
    with pytest.raises(ConfigError) as exc:
        load_config(d, REGISTRY)
    return exc.value.stage, str(exc.value)


def framework_error_of(d):
    cfg = load_config(d, REGISTRY)
    with pytest.raises(FrameworkError) as exc:
        frameworks(cfg)
    return str(exc.value)


def profile_doc(**profile):
    return doc(profiles=[{"schedulerName": "default-scheduler", **profile}])


# -- defaults ------------------------------------------------------------------------------------------
def test_default_config_plugins_and_args():
    cfg = default_config(REGISTRY)
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"]
    assert frameworks(cfg)["default-scheduler"].list_plugins() == DEFAULT_PLUGINS
    args = cfg.profiles[0].plugin_args
    assert args["DefaultPreemption"] == {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}
    assert args["InterPodAffinity"]["hardPodAffinityWeight"] == 1
    assert args["NodeAffinity"] == {}
    assert args["NodeResourcesBalancedAllocation"] == {"resources": [{"name": "cpu", "weight": 1},
                                                                     {"name": "memory", "weight": 1}]}
    assert args["NodeResourcesFit"]["scoringStrategy"] == {
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    assert args["PodTopologySpread"] == {"defaultingType": "System"}
    assert args["VolumeBinding"] == {"bindTimeoutSeconds": 600}
    assert list(args) == sorted(args)  # appended in sets.List order
    assert "TaintToleration" not in args  # no args kind


def test_top_level_defaults():
    cfg = load_config(doc(), REGISTRY)
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (16, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    assert cfg.extenders == []
    assert cfg.leader_election == {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s",
                                   "retryPeriod": "2s", "resourceLock": "leases", "resourceName": "kube-scheduler",
                                   "resourceNamespace": "kube-system"}
    raw = cfg.raw
    assert raw["clientConnection"] == {"contentType": "application/vnd.kubernetes.protobuf", "qps": 50.0,
                                       "burst": 100, "kubeconfig": "", "acceptContentTypes": ""}
    assert (raw["enableProfiling"], raw["enableContentionProfiling"]) == (True, True)
    assert load_config(doc(enableProfiling=False), REGISTRY).raw["enableContentionProfiling"] is False
    assert cfg.profiles[0].percentage_of_nodes_to_score is None
    assert frameworks(cfg)["default-scheduler"].list_plugins() == DEFAULT_PLUGINS


def test_explicit_values_kept():
    cfg = load_config(doc(parallelism=8, percentageOfNodesToScore=30, podInitialBackoffSeconds=2,
                          podMaxBackoffSeconds=20, leaderElection={"leaderElect": False, "leaseDuration": "1m"},
                          profiles=[{"schedulerName": "a", "percentageOfNodesToScore": 50}]), REGISTRY)
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (8, 30)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (2, 20)
    assert cfg.leader_election["leaderElect"] is False and cfg.leader_election["leaseDuration"] == "1m0s"
    assert cfg.profiles[0].percentage_of_nodes_to_score == 50
    assert frameworks(cfg)["a"].percentage_of_nodes_to_score == 50


def test_scheduler_name_defaulted_only_for_a_single_profile():
    assert load_config(doc(profiles=[{}]), REGISTRY).profiles[0].scheduler_name == "default-scheduler"
    assert load_config(doc(profiles=[]), REGISTRY).profiles[0].scheduler_name == "default-scheduler"
    assert error_of(doc(profiles=[{"schedulerName": "a"}, {}])) == (
        "validation", "profiles[1].schedulerName: Required value")
    assert error_of(doc(profiles=[{"schedulerName": ""}])) == (
        "validation", "profiles[0].schedulerName: Required value")


def test_plugin_args_defaulted_for_explicit_config():
    cfg = load_config(profile_doc(pluginConfig=[
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated",
                                                                 "resources": [{"name": "cpu"}]}}},
        {"name": "InterPodAffinity"},
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 0}]}},
        {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 0}},
        {"name": "OutOfTree", "args": {"anything": [1, 2]}}]), REGISTRY)
    args = cfg.profiles[0].plugin_args
    assert args["NodeResourcesFit"]["scoringStrategy"] == {"type": "MostAllocated",
                                                           "resources": [{"name": "cpu", "weight": 1}]}
    assert args["InterPodAffinity"]["hardPodAffinityWeight"] == 1
    assert args["NodeResourcesBalancedAllocation"] == {"resources": [{"name": "cpu", "weight": 1}]}
    assert args["DefaultPreemption"] == {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 100}
    assert args["OutOfTree"] == {"anything": [1, 2]}
    assert args["VolumeBinding"] == {"bindTimeoutSeconds": 600}


def test_typed_args_drop_type_meta():
    cfg = load_config(profile_doc(pluginConfig=[{"name": "InterPodAffinity", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs", "hardPodAffinityWeight": 5}}]),
        REGISTRY)
    assert cfg.profiles[0].plugin_args["InterPodAffinity"] == {"hardPodAffinityWeight": 5,
                                                               "ignorePreferredTermsOfExistingPods": False}


def test_args_only_for_enabled_plugins():
    cfg = load_config(profile_doc(plugins={"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "NodeResourcesFit"}]}}), REGISTRY)
    assert list(cfg.profiles[0].plugin_args) == ["NodeResourcesFit"]


def test_extenders_get_zero_values():
    cfg = load_config(doc(extenders=[{"urlPrefix": "http://x", "filterVerb": "f", "httpTimeout": "1m30s",
                                      "managedResources": [{"name": "example.com/a"}]}]), REGISTRY)
    assert cfg.extenders == [{"urlPrefix": "http://x", "filterVerb": "f", "preemptVerb": "", "prioritizeVerb": "",
                              "weight": 0, "bindVerb": "", "enableHTTPS": False, "tlsConfig": None,
                              "httpTimeout": "1m30s", "nodeCacheCapable": False,
                              "managedResources": [{"name": "example.com/a", "ignoredByScheduler": False}],
                              "ignorable": False}]


# -- plugin set merging (default_plugins_test.go TestMergePlugins) -------------------------------------
def ps(enabled=(), disabled=()):
    return {"enabled": [{"name": n, "weight": w} for n, w in enabled], "disabled": [{"name": n} for n in disabled]}


DEFAULT_SET = ps([("DefaultPlugin1", 0), ("DefaultPlugin2", 0), ("DefaultPlugin3", 3)])


@pytest.mark.parametrize("custom,want_enabled", [
    ({}, [("DefaultPlugin1", 0), ("DefaultPlugin2", 0), ("DefaultPlugin3", 3)]),
    ({"enabled": [{"name": "CustomPlugin"}], "disabled": [{"name": "DefaultPlugin2"}]},
     [("DefaultPlugin1", 0), ("DefaultPlugin3", 3), ("CustomPlugin", 0)]),
    ({"enabled": [{"name": "CustomPlugin"}, {"name": "DefaultPlugin1"}], "disabled": [{"name": "*"}]},
     [("CustomPlugin", 0), ("DefaultPlugin1", 0)]),
    # a default enabled again keeps its place and takes the user's weight
    ({"enabled": [{"name": "CustomPlugin", "weight": 2}, {"name": "DefaultPlugin3", "weight": 5}]},
     [("DefaultPlugin1", 0), ("DefaultPlugin2", 0), ("DefaultPlugin3", 5), ("CustomPlugin", 2)]),
    # a default disabled and enabled again moves to the end
    ({"enabled": [{"name": "DefaultPlugin1"}], "disabled": [{"name": "DefaultPlugin1"}]},
     [("DefaultPlugin2", 0), ("DefaultPlugin3", 3), ("DefaultPlugin1", 0)]),
    # duplicates survive the merge (the framework rejects them)
    ({"enabled": [{"name": "DefaultPlugin1", "weight": 1}, {"name": "DefaultPlugin1", "weight": 2}]},
     [("DefaultPlugin1", 2), ("DefaultPlugin2", 0), ("DefaultPlugin3", 3), ("DefaultPlugin1", 1)]),
])
def test_merge_plugin_set(custom, want_enabled):
    got = merge_plugin_set(copy.deepcopy(DEFAULT_SET), custom)
    assert [(p["name"], p["weight"]) for p in got["enabled"]] == want_enabled
    assert [p["name"] for p in got["disabled"]] == [p["name"] for p in custom.get("disabled", ())]


def test_disabled_set_keeps_default_disabled():
    got = merge_plugin_set(ps([("A", 0)], ["B"]), {"disabled": [{"name": "C"}]})
    assert [p["name"] for p in got["disabled"]] == ["C", "B"]


# -- effective plugin lists of real configs (the c* golden configs) ------------------------------------
def test_disable_score_plugins():
    got = plugins_of(profile_doc(plugins={"score": {"disabled": [{"name": "ImageLocality"},
                                                              {"name": "NodeResourcesBalancedAllocation"}]}}))
    assert got["score"] == DEFAULT_PLUGINS["score"][:6]
    assert got["prescore"] == DEFAULT_PLUGINS["prescore"]  # PreScore keeps BalancedAllocation


def test_disable_filter_keeps_prefilter_and_score():
    got = plugins_of(profile_doc(plugins={"filter": {"disabled": [{"name": "TaintToleration"}]}}))
    assert "TaintToleration" not in got["filter"]
    assert got["prescore"] == DEFAULT_PLUGINS["prescore"] and got["score"] == DEFAULT_PLUGINS["score"]


def test_explicit_score_plugins_come_first():
    got = plugins_of(profile_doc(plugins={"score": {"enabled": [{"name": "PodTopologySpread", "weight": 5},
                                                             {"name": "InterPodAffinity", "weight": 10}]}}))
    assert [(s["name"], s["weight"]) for s in got["score"]] == [
        ("PodTopologySpread", 5), ("InterPodAffinity", 10), ("TaintToleration", 3), ("NodeAffinity", 2),
        ("NodeResourcesFit", 1), ("VolumeBinding", 1), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]


def test_multipoint_disable_all_enable_few():
    got = plugins_of(profile_doc(plugins={"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "NodeUnschedulable"},
        {"name": "NodeResourcesFit", "weight": 2}, {"name": "TaintToleration"}, {"name": "DefaultPreemption"}]}}))
    assert got == {"prefilter": ["NodeResourcesFit"], "filter": ["NodeUnschedulable", "NodeResourcesFit",
                                                                 "TaintToleration"],
                   "prescore": ["NodeResourcesFit", "TaintToleration"],
                   "score": [{"name": "NodeResourcesFit", "weight": 2}, {"name": "TaintToleration", "weight": 1}],
                   "postfilter": ["DefaultPreemption"]}


def test_multipoint_weight_override_in_place():
    got = plugins_of(profile_doc(plugins={"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 7}]}}))
    assert got["score"][0] == {"name": "TaintToleration", "weight": 7}
    assert got["filter"] == DEFAULT_PLUGINS["filter"]


def test_score_weight_zero_is_one_and_large_weights_accepted():
    got = plugins_of(profile_doc(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 0},
                                                             {"name": "NodeAffinity", "weight": 2000000}]}}))
    assert got["score"][:2] == [{"name": "ImageLocality", "weight": 1}, {"name": "NodeAffinity", "weight": 2000000}]


def test_single_negative_weight_is_accepted():
    got = plugins_of(profile_doc(plugins={"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "ImageLocality", "weight": -1}]}}))
    assert got["score"] == [{"name": "ImageLocality", "weight": -1}]


def test_two_profiles():
    d = doc(profiles=[{"schedulerName": "default-scheduler"},
                      {"schedulerName": "bin-packer", "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}},
                       "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                           "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 2}]}}}]}])
    cfg = load_config(d, REGISTRY)
    fws = frameworks(cfg)
    assert list(fws) == ["default-scheduler", "bin-packer"]
    assert fws["default-scheduler"].list_plugins() == DEFAULT_PLUGINS
    assert fws["bin-packer"].list_plugins()["score"] == DEFAULT_PLUGINS["score"][:7]
    assert fws["bin-packer"].get_plugin("NodeResourcesFit").strategy == "MostAllocated"
    assert fws["default-scheduler"].get_plugin("NodeResourcesFit").strategy == "LeastAllocated"


def test_golden_config_plugin_lists():
    for path in sorted(glob.glob(os.path.join(GOLDEN, "*.scenario.json"))):
        expected = json.load(open(path.replace(".scenario.json", ".expected.json")))
        config = json.load(open(path)).get("config")
        if "config_error" in expected or config is None:
            continue
        fws = frameworks(load_config(config, REGISTRY))
        assert fws[expected["profile"]].list_plugins() == expected["plugins"], path
        if "profiles" in expected:
            assert {n: f.list_plugins() for n, f in fws.items()} == expected["profiles"], path


# -- multiPoint expansion and NewFramework errors, on test plugins (framework_test.go) -----------------
class _Base:
    name = ""

    @classmethod
    def new(cls, args, handle):
        return cls()


def _plugin(name, *ifaces):
    return type(name, (_Base, *ifaces), {"name": name})


TEST_REGISTRY = {
    "Sort": _plugin("Sort", QueueSortPlugin), "Binder": _plugin("Binder", BindPlugin),
    "A": _plugin("A", PreFilterPlugin, FilterPlugin, ScorePlugin),
    "B": _plugin("B", FilterPlugin, PreScorePlugin, ScorePlugin),
    "C": _plugin("C", FilterPlugin),
}
BASE_MP = [("Sort", 0), ("Binder", 0)]


def build(point_plugins=None, multi_point=(), disabled=None, registry=TEST_REGISTRY):
    fwk = new_framework("prof", point_plugins or {}, {}, registry, None, None, list(multi_point), disabled or {})
    return {p: [pl.name for pl in fwk.plugins[p]] for p in ("PreFilter", "Filter", "PreScore", "Score")}, \
        fwk.score_weights


def test_expansion_follows_interfaces():
    got, weights = build(multi_point=BASE_MP + [("A", 2), ("B", 0), ("C", 0)])
    assert got == {"PreFilter": ["A"], "Filter": ["A", "B", "C"], "PreScore": ["B"], "Score": ["A", "B"]}
    assert weights == {"A": 2, "B": 1}


def test_expansion_disabled_at_one_point():
    got, _ = build(multi_point=BASE_MP + [("A", 0), ("B", 0), ("C", 0)], disabled={"Filter": ["B"]})
    assert got["Filter"] == ["A", "C"] and got["Score"] == ["A", "B"]
    got, _ = build(multi_point=BASE_MP + [("A", 0), ("B", 0)], disabled={"Score": ["*"]})
    assert got["Score"] == [] and got["Filter"] == ["A", "B"]


def test_expansion_order_overrides_multipoint_then_others():
    got, weights = build(point_plugins={"Filter": [("C", 0), ("B", 0)], "Score": [("B", 5)]},
                         multi_point=BASE_MP + [("A", 1), ("B", 2)])
    # B is an override (listed in Filter and in MultiPoint): first; then MultiPoint's A; then C
    assert got["Filter"] == ["B", "A", "C"]
    assert got["Score"] == ["B", "A"]
    assert weights == {"B": 5, "A": 1}


def test_expansion_errors():
    with pytest.raises(FrameworkError, match='^PreFilterPlugin "Nope" does not exist$'):
        build(multi_point=BASE_MP + [("Nope", 0)])
    with pytest.raises(FrameworkError, match='^plugin "A" already registered as "PreFilterPlugin"$'):
        build(multi_point=BASE_MP + [("A", 0), ("A", 0)])
    # a duplicate that every point it implements disables is harmless
    build(multi_point=BASE_MP + [("C", 0), ("C", 0)], disabled={"Filter": ["C"]})


def test_point_errors():
    with pytest.raises(FrameworkError, match='^FilterPlugin "Nope" does not exist$'):
        build(point_plugins={"Filter": [("Nope", 0)]}, multi_point=BASE_MP)
    with pytest.raises(FrameworkError, match='^plugin "C" does not extend ScorePlugin plugin$'):
        build(point_plugins={"Score": [("C", 0)]}, multi_point=BASE_MP)
    with pytest.raises(FrameworkError, match='^plugin "C" already registered as "FilterPlugin"$'):
        build(point_plugins={"Filter": [("C", 0), ("C", 0)]}, multi_point=BASE_MP)
    with pytest.raises(FrameworkError, match="^only one queue sort plugin required for profile with scheduler "
                                             'name "prof", but got 0$'):
        build(multi_point=[("Binder", 0)])
    with pytest.raises(FrameworkError, match='^at least one bind plugin is needed for profile with scheduler '
                                             'name "prof"$'):
        build(multi_point=[("Sort", 0)])


def test_score_overflow():
    with pytest.raises(FrameworkError, match="^total score of Score plugins could overflow$"):
        build(point_plugins={"Score": [("A", -1), ("B", 0)]}, multi_point=BASE_MP)
    with pytest.raises(FrameworkError, match="^total score of Score plugins could overflow$"):
        build(point_plugins={"Score": [("A", 2**62), ("B", 2**62)]}, multi_point=BASE_MP)


def test_plugin_factory_error_is_wrapped():
    class Bad(_Base, FilterPlugin):
        name = "Bad"

        @classmethod
        def new(cls, args, handle):
            raise FrameworkError("boom")
    with pytest.raises(FrameworkError, match='^initializing plugin "Bad": boom$'):
        build(multi_point=BASE_MP + [("Bad", 0)], registry={**TEST_REGISTRY, "Bad": Bad})


# -- framework-stage errors through build_frameworks -------------------------------------------------
def test_framework_errors_from_config():
    assert framework_error_of(profile_doc(plugins={"filter": {"enabled": [{"name": "NodeGPUHealth"}]}})) == (
        'creating profile for scheduler name default-scheduler: FilterPlugin "NodeGPUHealth" does not exist')
    assert framework_error_of(profile_doc(plugins={"multiPoint": {"enabled": [{"name": "Nope"}]}})) == (
        'creating profile for scheduler name default-scheduler: PreFilterPlugin "Nope" does not exist')
    assert framework_error_of(profile_doc(plugins={"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "DefaultBinder"}]}})) == (
        "creating profile for scheduler name default-scheduler: only one queue sort plugin required for profile "
        'with scheduler name "default-scheduler", but got 0')
    assert framework_error_of(profile_doc(plugins={"score": {"enabled": [
        {"name": "NodeResourcesFit", "weight": -1}, {"name": "ImageLocality", "weight": 0}]}})) == (
        "creating profile for scheduler name default-scheduler: total score of Score plugins could overflow")
    assert framework_error_of(profile_doc(pluginConfig=[{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}],
                            "requestedToCapacityRatio": {"shape": [{"utilization": 50, "score": 5},
                                                                   {"utilization": 20, "score": 10}]}}}}])) == (
        'creating profile for scheduler name default-scheduler: initializing plugin "NodeResourcesFit": '
        "scoringStrategy.shape[1].utilization: Invalid value: 20: utilization values must be sorted in "
        "increasing order")


def test_extender_ignored_resources_reach_fit():
    cfg = load_config(doc(extenders=[{"urlPrefix": "http://e", "filterVerb": "f", "managedResources": [
        {"name": "example.com/foo", "ignoredByScheduler": True}, {"name": "example.com/bar"}]}]), REGISTRY)
    fit = frameworks(cfg)["default-scheduler"].get_plugin("NodeResourcesFit")
    assert fit.ignored_resources == frozenset({"example.com/foo"})
    cfg = load_config(doc(extenders=[{"urlPrefix": "http://e", "managedResources": [
        {"name": "example.com/foo", "ignoredByScheduler": True}]}], profiles=[{"plugins": {"multiPoint": {
            "disabled": [{"name": "NodeResourcesFit"}]}}}]), REGISTRY)
    with pytest.raises(ConfigError, match="^can't find NodeResourcesFitArgs in plugin config$"):
        frameworks(cfg)


# -- validation ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fields,want", [
    ({"parallelism": 0}, "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    ({"percentageOfNodesToScore": 150}, "percentageOfNodesToScore: Invalid value: 150: not in valid range [0-100]"),
    ({"percentageOfNodesToScore": -1}, "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    ({"profiles": [{"percentageOfNodesToScore": 101}]},
     "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ({"podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    ({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 3},
     "podMaxBackoffSeconds: Invalid value: 3: must be greater than or equal to PodInitialBackoffSeconds"),
    ({"clientConnection": {"burst": -1}}, "clientConnection.burst: Invalid value: -1: must be non-negative"),
    ({"leaderElection": {"resourceLock": "configmaps"}},
     'leaderElection.resourceLock: Invalid value: "configmaps": resourceLock value must be "leases"'),
    ({"leaderElection": {"leaseDuration": "-1s"}},
     "[leaderElection.leaseDuration: Invalid value: -1s: must be greater than zero, leaderElection.leaseDuration: "
     "Invalid value: 10s: LeaseDuration must be greater than RenewDeadline]"),
    ({"leaderElection": {"retryPeriod": "-2s"}},
     "leaderElection.retryPeriod: Invalid value: -2s: must be greater than zero"),
    ({"leaderElection": {"leaseDuration": "5s"}},
     "leaderElection.leaseDuration: Invalid value: 10s: LeaseDuration must be greater than RenewDeadline"),
    ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
     'profiles[1].schedulerName: Duplicate value: field.Path{name:"schedulerName", index:"", '
     "parent:(*field.Path)(0xADDR)}"),
    ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {
        "enabled": [{"name": "PrioritySort"}]}}}]},
     'profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin{'
     'Name:"PrioritySort", Weight:0}}, Disabled:[]config.Plugin(nil)}: queueSort must be the same for all profiles'),
    ({"profiles": [{"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "Other"}]}}}]},
     "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"),
    ({"profiles": [{"pluginConfig": [{"name": "InterPodAffinity"}, {"name": "InterPodAffinity"}]}]},
     'profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"'),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFitArgs"}]}]},
     "profiles[0].pluginConfig[0].args: Invalid value: null: has to match plugin args"),
    ({"extenders": [{"urlPrefix": "http://e", "prioritizeVerb": "p"}]},
     "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"),
    ({"extenders": [{"bindVerb": "b"}, {"bindVerb": "b"}]},
     'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'),
    ({"extenders": [{"managedResources": [{"name": "cpu"}]}]},
     'extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name'),
    ({"extenders": [{"managedResources": [{"name": "example.com/a"}, {"name": "example.com/a"}]}]},
     'extenders[0].managedResources[1].name: Invalid value: "example.com/a": duplicate extender managed '
     "resource name"),
])
def test_validation_messages(fields, want):
    assert error_of(doc(**fields)) == ("validation", want)


def test_queue_sort_args_must_match():
    stage, text = error_of(doc(profiles=[
        {"schedulerName": "a", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}},
        {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
         "pluginConfig": [{"name": "PrioritySort", "args": {}}]}]))
    assert text == ("profiles[1].pluginConfig.args: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{"
                    'APIVersion:"", Kind:""}, Raw:[]uint8{0x7b, 0x7d}, ContentEncoding:"", ContentType:'
                    '"application/json"}: queueSort must be the same for all profiles')


@pytest.mark.parametrize("profiles,want", [
    ([{"schedulerName": "x"}, {"schedulerName": "x"}], "profiles[1].schedulerName: Duplicate value: {}"),
    ([{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}}],
     'profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":"PrioritySort","Weight":0}],"Disabled":null}: '
     "must be the same for all profiles"),
    ([{"schedulerName": "a", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}},
      {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
       "pluginConfig": [{"name": "PrioritySort", "args": {}}]}],
     "profiles[1].pluginConfig.args: Invalid value: {}: queueSort must be the same for all profiles"),
])
def test_values_are_printed_as_json_at_1_36(profiles, want):
    """v1.36.2's kube-scheduler --config with these profiles says exactly this (run 2026-12-07)."""
    with pytest.raises(ConfigError) as exc:
        load_config(doc(profiles=profiles), REGISTRY, kube_version="1.36")
    assert (exc.value.stage, str(exc.value)) == ("validation", want)


def test_leader_election_checks_skipped_when_not_elected():
    load_config(doc(leaderElection={"leaderElect": False, "resourceLock": "configmaps", "leaseDuration": "1s"}),
                REGISTRY)


def test_several_errors_aggregate_in_order():
    _, text = error_of(doc(parallelism=0, percentageOfNodesToScore=200, podInitialBackoffSeconds=-1))
    assert text == ("[parallelism: Invalid value: 0: should be an integer value greater than zero, "
                    "percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100], "
                    "podInitialBackoffSeconds: Invalid value: -1: must be greater than 0]")


def test_aggregate_drops_repeated_messages():
    e = invalid("a", 1, "x")
    assert aggregate([e, e]) == "a: Invalid value: 1: x"
    assert aggregate([e, invalid("b", "v", "y"), e]) == '[a: Invalid value: 1: x, b: Invalid value: "v": y]'


def args_error(name, args):
    return error_of(profile_doc(pluginConfig=[{"name": name, "args": args}]))[1]


P = "profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize("name,args,want", [
    ("DefaultPreemption", {"minCandidateNodesPercentage": 101},
     f"{P}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"),
    ("DefaultPreemption", {"minCandidateNodesAbsolute": -1},
     f"{P}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"),
    ("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     f"[{P}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
     f"minCandidateNodesAbsolute, {P}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same "
     "time as minCandidateNodesPercentage]"),
    ("InterPodAffinity", {"hardPodAffinityWeight": 101},
     f"{P}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
    ("InterPodAffinity", {"hardPodAffinityWeight": -1},
     f"{P}.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]},
     f"{P}.resources[0].weight: Invalid value: 2: must be 1"),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
     f'{P}.resources[1].name: Duplicate value: "cpu"'),
    ("VolumeBinding", {"bindTimeoutSeconds": -10},
     f"{P}.bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value"),
    ("VolumeBinding", {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
     f"{P}.shape: Invalid value: []config.UtilizationShapePoint{{config.UtilizationShapePoint{{Utilization:0, "
     "Score:0}, config.UtilizationShapePoint{Utilization:100, Score:10}}: unexpected field `shape`, remove it or "
     "turn on the feature gate VolumeCapacityPriority"),
    ("PodTopologySpread", {"defaultingType": "Foo"},
     f'{P}.defaultingType: Unsupported value: "Foo": supported values: "System", "List"'),
    ("PodTopologySpread", {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                   "whenUnsatisfiable": "DoNotSchedule"}]},
     f'{P}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'),
    ("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}]},
     f"{P}.defaultConstraints[0].topologyKey: Required value: can not be empty"),
    ("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
     f'{P}.defaultConstraints[1]: Duplicate value: "{{zone, DoNotSchedule}}"'),
    ("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 0, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "Sometimes",
         "labelSelector": {"matchLabels": {"app": "web"}}}]},
     f"[{P}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
     f'{P}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: '
     f'"DoNotSchedule", "ScheduleAnyway", {P}.defaultConstraints[0].labelSelector: Forbidden: constraint must '
     "not define a selector, as they deduced for each pod]"),
])
def test_args_validation(name, args, want):
    assert args_error(name, args) == want


NA = f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"


def node_affinity_error(term):
    return args_error("NodeAffinity", {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}})


@pytest.mark.parametrize("term,want", [
    ({"matchExpressions": [{"key": "a", "operator": "Foo"}]},
     f'{NA}.matchExpressions[0].operator: Unsupported value: "Foo": supported values: "In", "NotIn", "Exists", '
     '"DoesNotExist", "Gt", "Lt"'),
    ({"matchExpressions": [{"key": "a", "operator": "In"}]},
     f"{NA}.matchExpressions[0].values: Invalid value: []string(nil): for 'in', 'notin' operators, values set "
     "can't be empty"),
    ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
     f'{NA}.matchExpressions[0].values: Invalid value: []string{{"x"}}: values set must be empty for exists and '
     "does not exist"),
    ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]},
     f"{NA}.matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an "
     "integer"),
    ({"matchExpressions": [{"key": "a", "operator": "Lt", "values": ["1", "2"]}]},
     f"{NA}.matchExpressions[0].values: Invalid value: []string{{\"1\", \"2\"}}: for 'Gt', 'Lt' operators, "
     "exactly one value is required"),
    ({"matchExpressions": [{"key": "-a", "operator": "Exists"}]},
     f"{NA}.matchExpressions[0].key: Invalid value: \"-a\": name part must consist of alphanumeric characters, "
     "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
     "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["b c"]}]},
     f"{NA}.matchExpressions[0].values[0][a]: Invalid value: \"b c\": a valid label must be an empty string or "
     "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
     "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    ({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]},
     f'{NA}.matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"'),
    ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]},
     f'{NA}.matchFields[0].values: Invalid value: []string{{"a", "b"}}: must have one element'),
])
def test_node_affinity_args_validation(term, want):
    assert node_affinity_error(term) == want


def test_node_affinity_preferred_terms_validation():
    base = {"matchExpressions": [{"key": "a", "operator": "Foo"}]}
    text = args_error("NodeAffinity", {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": base}, {"weight": 1, "preference": base}]}})
    assert text == (f"{P}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].matchExpressions[0]."
                    'operator: Unsupported value: "Foo": supported values: "In", "NotIn", "Exists", '
                    '"DoesNotExist", "Gt", "Lt"')


def test_valid_args_pass():
    load_config(profile_doc(pluginConfig=[
        {"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]},
                                  {}]}}}},
        {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}]}},
        {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}},
        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 0}},
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "BestFit"}}},  # checked at framework
        {"name": "NodeGPUHealth", "args": {"x": 1}}]), REGISTRY)


# -- decoding ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d,want", [
    ({"kind": "KubeSchedulerConfiguration"},
     """Object 'apiVersion' is missing in '{"kind":"KubeSchedulerConfiguration"}'"""),
    ({"apiVersion": "kubescheduler.config.k8s.io/v1"},
     """Object 'Kind' is missing in '{"apiVersion":"kubescheduler.config.k8s.io/v1"}'"""),
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
     'no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3" in '
     'scheme "pkg/scheduler/apis/config/scheme/scheme.go:30"'),
    ({"apiVersion": "a/b/c", "kind": "KubeSchedulerConfiguration"}, "unexpected GroupVersion string: a/b/c"),
    ({"apiVersion": 1, "kind": "KubeSchedulerConfiguration"},
     "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion "
     "of type string"),
    ({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeAffinityArgs"},
     "couldn't decode as KubeSchedulerConfiguration, got kubescheduler.config.k8s.io/v1, Kind=NodeAffinityArgs: "),
    (doc(foo=1, profiles=[{"bar": 2, "plugins": {"score": {"enabled": [{"nmae": "x"}]}}}], Parallelism=3),
     'strict decoding error: unknown field "foo", unknown field "profiles[0].bar", '
     'unknown field "profiles[0].plugins.score.enabled[0].nmae", unknown field "Parallelism"'),
    (doc(parallelism="16"),
     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism of type int32"),
    (doc(parallelism=1.5),
     "json: cannot unmarshal number 1.5 into Go struct field KubeSchedulerConfiguration.parallelism of type int32"),
    (doc(parallelism=2**31),
     "json: cannot unmarshal number 2147483648 into Go struct field KubeSchedulerConfiguration.parallelism of "
     "type int32"),
    (doc(enableProfiling="yes"),
     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.enableProfiling of type bool"),
    (doc(profiles={}),
     "json: cannot unmarshal object into Go struct field KubeSchedulerConfiguration.profiles of type "
     "[]v1.KubeSchedulerProfile"),
    (doc(profiles=["x"]),
     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.profiles of type "
     "v1.KubeSchedulerProfile"),
    (doc(profiles=[{"plugins": {"score": {"enabled": [{"name": "A", "weight": "2"}]}}}]),
     "json: cannot unmarshal string into Go struct field Plugin.profiles.plugins.score.enabled.weight of type int32"),
    # the first type error wins and hides the strict errors
    (doc(foo=1, parallelism="x", podMaxBackoffSeconds="y"),
     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism of type int32"),
    (doc(leaderElection={"leaseDuration": "15"}), 'time: missing unit in duration "15"'),
    (doc(leaderElection={"leaseDuration": "abc"}), 'time: invalid duration "abc"'),
    (doc(leaderElection={"leaseDuration": 15}), "json: cannot unmarshal number into Go value of type string"),
    (doc(extenders=[{"tlsConfig": {"caData": "@@@@"}}]), "illegal base64 data at input byte 0"),
    (doc(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1,
                                                                           "foo": True}}]}]),
     "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for "
     'plugin InterPodAffinity: strict decoding error: unknown field "foo"'),
    (doc(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"typ": "x"}}}]}],
         foo=1),
     'strict decoding error: unknown field "foo", decoding .profiles[0].pluginConfig[0]: strict decoding error: '
     'decoding args for plugin NodeResourcesFit: strict decoding error: unknown field "scoringStrategy.typ"'),
    (doc(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": "gpu"}}]}]),
     "decoding .profiles[0].pluginConfig[0]: decoding args for plugin NodeResourcesFit: json: cannot unmarshal "
     "string into Go struct field NodeResourcesFitArgs.ignoredResources of type []string"),
    (doc(profiles=[{"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultConstraints": [
        {"maxSkew": "1"}]}}]}]),
     "decoding .profiles[0].pluginConfig[0]: decoding args for plugin PodTopologySpread: json: cannot unmarshal "
     "string into Go struct field TopologySpreadConstraint.defaultConstraints.maxSkew of type int32"),
    (doc(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": {"kind": "NodeAffinityArgs"}}]}]),
     "decoding .profiles[0].pluginConfig[0]: args for plugin InterPodAffinity were not of type "
     "InterPodAffinityArgs.kubescheduler.config.k8s.io, got NodeAffinityArgs.kubescheduler.config.k8s.io"),
    (doc(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": {"kind": "Foo"}}]}]),
     "decoding .profiles[0].pluginConfig[0]: decoding args for plugin InterPodAffinity: no kind \"Foo\" is "
     'registered for version "kubescheduler.config.k8s.io/v1" in scheme '
     '"pkg/scheduler/apis/config/scheme/scheme.go:30"'),
    (doc(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": [1]}]}]),
     "decoding .profiles[0].pluginConfig[0]: decoding args for plugin InterPodAffinity: couldn't get "
     "version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion "
     'string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'),
])
def test_decode_errors(d, want):
    assert error_of(d) == ("decode", want)


def test_unknown_plugin_args_are_not_decoded():
    cfg = load_config(profile_doc(pluginConfig=[{"name": "Custom", "args": {"anything": {"goes": True}}}]),
                      REGISTRY)
    assert cfg.profiles[0].plugin_args["Custom"] == {"anything": {"goes": True}}


def test_null_values_mean_unset():
    cfg = load_config(doc(parallelism=None, profiles=[{"plugins": None, "pluginConfig": [
        {"name": "InterPodAffinity", "args": None}]}]), REGISTRY)
    assert cfg.parallelism == 16
    assert cfg.profiles[0].plugin_args["InterPodAffinity"]["hardPodAffinityWeight"] == 1


def test_input_document_is_not_modified():
    d = profile_doc(pluginConfig=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 3}}])
    before = copy.deepcopy(d)
    load_config(d, REGISTRY)
    assert d == before


# -- Go durations --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,ns,back", [
    ("15s", 15 * 10**9, "15s"), ("1h30m", 5400 * 10**9, "1h30m0s"), ("1.5s", 1500 * 10**6, "1.5s"),
    ("-300ms", -300 * 10**6, "-300ms"), ("0", 0, "0s"), ("+2m", 120 * 10**9, "2m0s"), ("1500ns", 1500, "1.5µs"),
])
def test_duration_round_trip(text, ns, back):
    assert parse_duration(text) == ns
    assert format_duration(ns) == back


@pytest.mark.parametrize("text,want", [
    ("", 'time: invalid duration ""'), ("1", 'time: missing unit in duration "1"'),
    ("1x", 'time: unknown unit "x" in duration "1x"'), (".s", 'time: invalid duration ".s"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
])
def test_duration_errors(text, want):
    with pytest.raises(DurationError, match=f"^{want}$"):
        parse_duration(text)


# -- the golden rejected configs, end to end ----------------------------------------------------------
@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(GOLDEN, "x*.scenario.json"))),
                         ids=lambda p: os.path.basename(p).split("-")[0])
def test_golden_config_errors(path, capsys):
    expected = json.load(open(path.replace(".scenario.json", ".expected.json")))
    assert cli_main(["simulate", path, "--tie-break", "name", "--format", "golden"]) == 2
    assert capsys.readouterr().err == f"error: {expected['config_error']}\n"


def test_cli_config_file_overrides_scenario(tmp_path, capsys):
    scenario = os.path.join(GOLDEN, "x03-cfg-invalid-percentage-of-nodes-150.scenario.json")
    cfg = tmp_path / "sched.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      disabled:\n"
                   "      - name: ImageLocality\n")
    assert cli_main(["simulate", scenario, "--config", str(cfg), "--tie-break", "name", "--format", "golden"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "ImageLocality" not in [s["name"] for s in out["plugins"]["score"]]
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nbogus: 1\n")
    assert cli_main(["simulate", scenario, "--config", str(cfg)]) == 2
    assert capsys.readouterr().err == 'error: strict decoding error: unknown field "bogus"\n'
