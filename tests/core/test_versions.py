"""Kubernetes versions as data: the version table, --feature-gates as kube-scheduler takes them, and the version
reaching configuration, frameworks, Simulation, Scheduler and the command lines."""
import json

import pytest

from scheduler_core import versions
from scheduler_core.cli import main as cli_main
from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import ConfigError, build_frameworks, default_config, load_config
from scheduler_core.framework.handle import Handle
from scheduler_core.plugins.registry import build_registry
from scheduler_core.scenario import scenario_from_data
from scheduler_core.scheduler import Scheduler
from scheduler_core.simulate import Simulation

REGISTRY = build_registry()
V130_DEFAULT = ["SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits",
                "AzureDiskLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity",
                "DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder"]
V136_DEFAULT = ["SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
                "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder", "NodeDeclaredFeatures"]


def _multi_point(config):
    return [(p["name"], p["weight"]) for p in config.raw["profiles"][0]["plugins"]["multiPoint"]["enabled"]]


# -- the table ---------------------------------------------------------------------------------------
def test_supported_versions_and_parsing():
    assert versions.SUPPORTED_VERSIONS == ("1.30", "1.36")
    assert versions.kube_version("v1.36.2").name == "1.36"
    assert versions.kube_version().name == "1.30"
    assert versions.kube_version("1.36").release == "v1.36.2"
    with pytest.raises(versions.VersionError, match="supported versions are 1.30, 1.36"):
        versions.kube_version("1.33")
    with pytest.raises(versions.VersionError, match="invalid Kubernetes version"):
        versions.kube_version("latest")


@pytest.mark.parametrize("git_version, nearest", [
    ("v1.35.4-eks-1", "1.36"), ("v1.36.2", "1.36"), ("v1.37.0", "1.36"), ("v1.31.0+k3s1", "1.30"),
    ("v1.28.15", "1.30"), ("v1.33.1", "1.36"), ("1.32", "1.30")])
def test_nearest_supported(git_version, nearest):
    assert versions.nearest_supported(git_version) == nearest


def test_default_profiles_differ_as_the_table_says():
    assert [n for n, _w in versions.features("1.30").default_multi_point()] == V130_DEFAULT
    at_136 = versions.features("1.36").default_multi_point()
    assert [n for n, _w in at_136] == V136_DEFAULT
    assert dict(at_136)["DynamicResources"] == 2
    assert [n for n, _w in _multi_point(default_config(REGISTRY, kube_version="1.36"))] == V136_DEFAULT
    assert [n for n, _w in _multi_point(default_config(REGISTRY))] == V130_DEFAULT


def test_gate_defaults_by_version():
    f30, f36 = versions.features("1.30"), versions.features("1.36")
    assert not f30.enabled("DynamicResourceAllocation") and f36.enabled("DynamicResourceAllocation")
    assert f36.enabled("PodLevelResources") and f36.enabled("NodeDeclaredFeatures")
    assert not f36.enabled("GangScheduling") and not f36.enabled("TopologyAwareWorkloadScheduling")
    assert "PodLevelResources" not in f30.gates and "VolumeCapacityPriority" not in f36.gates
    assert f36.version.gates["SchedulerQueueingHints"] == versions.Gate(True, "", locked=True)


# -- --feature-gates, as the v1.36.2 kube-scheduler binary answers ---------------------------------------
@pytest.mark.parametrize("flag, error", [
    ("DynamicResourceAllocation=false", "cannot set feature gate DynamicResourceAllocation to false, feature is "
                                        "locked to true"),
    ("kube:DRAAdminAccess=false", "cannot set feature gate DRAAdminAccess to false, feature is locked to true"),
    ("DRAAdminAccess", "missing bool value for DRAAdminAccess"),
    ("DRAAdminAccess=maybe", 'invalid value of DRAAdminAccess=maybe, err: strconv.ParseBool: parsing "maybe": '
                             'invalid syntax'),
    ("foo:A=true", "component not registered: foo"),
    ("GangScheduling=true,GenericWorkload=false",
     "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ("PodLevelResources=false",
     "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: "
     "[PodLevelResources]"),
    ("SchedulerQueueingHints=false,DynamicResourceAllocation=false",
     "[cannot set feature gate SchedulerQueueingHints to false, feature is locked to true, cannot set feature gate "
     "DynamicResourceAllocation to false, feature is locked to true]"),
])
def test_feature_gate_errors_at_136(flag, error):
    with pytest.raises(versions.FeatureGateError) as err:
        versions.features("1.36", flag)
    assert str(err.value) == error


def test_unknown_gate_is_a_warning_at_136_and_an_error_at_130():
    f = versions.features("1.36", "NoSuchGate=true")
    assert f.warnings == ["unrecognized feature gate: NoSuchGate"]
    with pytest.raises(versions.FeatureGateError, match="^unrecognized feature gate: NoSuchGate$"):
        versions.features("1.30", "NoSuchGate=true")
    with pytest.raises(versions.FeatureGateError, match="^cannot set feature gate PodSchedulingReadiness to false, "
                                                         "feature is locked to true$"):
        versions.features("1.30", "PodSchedulingReadiness=false")


def test_settings_from_a_mapping_and_values_not_implemented():
    f = versions.features("1.36", {"NodeDeclaredFeatures": True, "DRAAdminAccess": "true"})
    assert f.enabled("NodeDeclaredFeatures")
    with pytest.raises(versions.FeatureGateError, match="has only InPlacePodVerticalScaling=false"):
        versions.features("1.30", "InPlacePodVerticalScaling=true")
    with pytest.raises(versions.FeatureGateError, match="invalid value of X=3"):
        versions.features("1.36", {"X": 3})


# -- configuration at a version ------------------------------------------------------------------------
def _doc(**profile):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", **profile}]}


def test_removed_volume_limit_plugins_are_invalid_at_136():
    doc = _doc(plugins={"filter": {"enabled": [{"name": "EBSLimits"}]}},
               pluginConfig=[{"name": "GCEPDLimits", "args": {}}])
    load_config(doc, REGISTRY)      # 1.30 has them
    with pytest.raises(ConfigError) as err:
        load_config(doc, REGISTRY, kube_version="1.36")
    detail = 'was invalid in version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version ' \
             '"kubescheduler.config.k8s.io/v1")'
    assert str(err.value) == (f'[profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": {detail}, '
                              f'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": {detail}]')


def test_dynamic_resources_args_at_136():
    config = default_config(REGISTRY, kube_version="1.36")
    args = {pc["name"]: pc["args"] for pc in config.raw["profiles"][0]["pluginConfig"]}
    assert args["DynamicResources"] == {"filterTimeout": 10 * 10**9, "bindingTimeout": 600 * 10**9}
    doc = _doc(pluginConfig=[{"name": "DynamicResources",
                              "args": {"filterTimeout": "-1s", "bindingTimeout": "500ms"}}])
    with pytest.raises(ConfigError) as err:
        load_config(doc, REGISTRY, kube_version="1.36")
    assert str(err.value) == ("[profiles[0].pluginConfig[0].args.filterTimeout: Invalid value: -1s: must be zero or "
                              "positive, profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: 500ms: must "
                              "be at least 1 second]")
    with pytest.raises(ConfigError, match="bindingTimeout: Forbidden: DRADeviceBindingConditions or "
                                          "DRAResourceClaimDeviceStatus feature gate is disabled"):
        load_config(_doc(pluginConfig=[{"name": "DynamicResources", "args": {"bindingTimeout": "1m"}}]), REGISTRY,
                     kube_version="1.36", feature_gates="DRADeviceBindingConditions=false")
    with pytest.raises(ConfigError, match=r'unknown field "profiles\[0\]\.plugins\.placementScore"'):
        load_config(_doc(plugins={"placementScore": {}}), REGISTRY)
    load_config(_doc(plugins={"placementScore": {}}), REGISTRY, kube_version="1.36")


def test_frameworks_get_the_version():
    config = default_config(REGISTRY, kube_version="1.36")
    fwks = build_frameworks(config, REGISTRY, lambda: Handle(snapshot=None))
    fwk = fwks["default-scheduler"]
    assert fwk.handle.features is config.features
    assert fwk.list_plugins()["postfilter"] == ["DynamicResources", "DefaultPreemption"]
    assert {"name": "DynamicResources", "weight": 2} in fwk.list_plugins()["score"]
    assert "EBSLimits" not in fwk.list_plugins()["filter"]
    assert fwk.list_plugins()["filter"][-1] == "NodeDeclaredFeatures"


# -- Simulation, Scheduler, command lines ------------------------------------------------------------------
def _scenario(**extra):
    node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}}
    pod = {"metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}
    return {"nodes": [node], "pods": [], "pending": [pod], **extra}


def test_simulation_version_from_scenario_and_override():
    assert Simulation(scenario_from_data(_scenario())).features.name == "1.30"
    assert Simulation(scenario_from_data(_scenario(kubeVersion="1.36"))).features.name == "1.36"
    sim = Simulation(scenario_from_data(_scenario(kubeVersion="1.36")), kube_version="1.30")
    assert sim.features.name == "1.30"
    trace = next(iter(Simulation(scenario_from_data(_scenario(kubeVersion="1.36"))).run()))
    assert trace.message.startswith("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
                                    "preemption: 0/1 nodes are available: 1 ")


def test_scheduler_version():
    clock = FakeClock()
    cluster = SimulatedCluster.from_scenario(scenario_from_data(_scenario()), clock=clock)
    off = ("NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,InPlacePodLevelResourcesVerticalScaling=false,"
           "InPlacePodVerticalScalingInitContainers=false,RestartAllContainersOnContainerExits=false")
    sched = Scheduler(cluster, clock=clock, kube_version="1.36", feature_gates=off)
    assert sched.features.name == "1.36" and not sched.features.enabled("NodeDeclaredFeatures")
    assert "NodeDeclaredFeatures" not in sched.profiles["default-scheduler"].list_plugins()["filter"]
    config = default_config(REGISTRY, kube_version="1.36")
    with pytest.raises(ConfigError, match="the configuration is for Features"):
        Scheduler(SimulatedCluster.from_scenario(scenario_from_data(_scenario()), clock=clock), config,
                  clock=clock, kube_version="1.30")


def test_cli_kube_version_and_feature_gates(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_scenario(kubeVersion="1.36")))
    assert cli_main(["simulate", str(path), "--format", "golden", "--tie-break", "name"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kubernetes_version"] == "v1.36.2" and "DynamicResources" in doc["plugins"]["postfilter"]
    assert cli_main(["simulate", str(path), "--format", "golden", "--kube-version", "1.30"]) == 0
    assert json.loads(capsys.readouterr().out)["kubernetes_version"] == "v1.30.0"
    assert cli_main(["simulate", str(path), "--feature-gates", "DynamicResourceAllocation=false"]) == 2
    assert capsys.readouterr().err == ("error: cannot set feature gate DynamicResourceAllocation to false, feature "
                                       "is locked to true\n")
    assert cli_main(["simulate", str(path), "--feature-gates", "Nope=true"]) == 0
    assert capsys.readouterr().err == "warning: unrecognized feature gate: Nope\n"
    assert cli_main(["run", str(path), "--kube-version", "1.29", "--until-idle"]) == 2
    assert "Kubernetes version 1.29 is not supported" in capsys.readouterr().err


# The feature gates v1.36.2's pkg/scheduler and its DRA allocator read (`features.X` in pkg/scheduler, the
# allocator's Features), from its source.
V136_SCHEDULER_GATES = (
    "DRAAdminAccess", "DRAConsumableCapacity", "DRADeviceBindingConditions", "DRADeviceTaintRules", "DRADeviceTaints",
    "DRAExtendedResource", "DRAListTypeAttributes", "DRANodeAllocatableResources", "DRAPartitionableDevices",
    "DRAPrioritizedList", "DRAResourceClaimDeviceStatus", "DRASchedulerFilterTimeout", "DRAWorkloadResourceClaims",
    "DynamicResourceAllocation", "GangScheduling", "GenericWorkload", "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScaling", "MatchLabelKeysInPodTopologySpread", "NodeDeclaredFeatures",
    "NodeInclusionPolicyInPodTopologySpread", "NominatedNodeNameForExpectation", "OpportunisticBatching",
    "PodLevelResources", "SchedulerAsyncAPICalls", "SchedulerAsyncPreemption", "SchedulerPopFromBackoffQ",
    "SchedulerQueueingHints", "SidecarContainers", "StorageCapacityScoring", "TaintTolerationComparisonOperators",
    "TopologyAwareWorkloadScheduling", "VolumeAttributesClass", "VolumeLimitScaling", "WorkloadAwarePreemption")


@pytest.mark.parametrize("gate", V136_SCHEDULER_GATES)
def test_every_scheduler_gate_of_136_is_honoured_or_refused(gate):
    """A gate the scheduler reads is either followed at both values, or its other value is refused: never
    accepted and ignored."""
    kv = versions.kube_version("1.36")
    default = kv.gates[gate].default
    other = "false" if default else "true"
    followed = gate in _GATES_READ_BY_CODE or len(kv.implemented_gates.get(gate, ())) == 2
    try:
        versions.features("1.36", f"{gate}={other}")
    except versions.FeatureGateError as err:
        assert "has only" in str(err) or "locked" in str(err) or "depends" in str(err) or "requires" in str(err), err
        return
    assert followed, f"{gate}={other} is accepted but nothing follows it"


def _gates_read_by_code():
    import pathlib
    import re
    root = pathlib.Path(versions.__file__).resolve().parent.parent
    read = set()
    for path in root.rglob("*.py"):
        if "versions" in path.parts:
            continue
        read.update(re.findall(r'enabled\("([A-Za-z]+)"\)', path.read_text()))
    return read


_GATES_READ_BY_CODE = _gates_read_by_code()
