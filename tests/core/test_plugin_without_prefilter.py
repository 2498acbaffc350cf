"""A profile that disables a plugin's PreFilter or PreScore but keeps its Filter or Score: kube's plugins either
fail with the error of reading their missing cycle state, or compute it themselves (v1.30, plugin by plugin)."""
import pytest

from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scheduler import Scheduler
from scheduler_core.objects import Pod
from tests.core.loop_fixtures import node, pod, pod_raw


def run_with_disabled(point: str, plugin: str, pods):
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {point: {"disabled": [{"name": plugin}]}}}]}
    cluster = SimulatedCluster(nodes=[node("n1"), node("n2")], pods=pods, clock=FakeClock())
    sched = Scheduler(cluster, config=load_config(doc, in_tree_registry()), tie_break="name", clock=cluster.clock)
    sched.run_until_idle()
    failures = [e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"]
    return cluster.placements(), failures, sched


SPREAD = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                         "whenUnsatisfiable": "DoNotSchedule",
                                         "labelSelector": {"matchLabels": {"app": "a"}}}]}
ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "a"}}}]}}


def spread_pod():
    raw = pod_raw("p", labels={"app": "a"})
    raw["spec"].update(SPREAD)
    return Pod(raw)


@pytest.mark.parametrize("plugin,make_pod,message", [
    ("NodeResourcesFit", lambda: pod("p"), 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'),
    ("NodePorts", lambda: pod("p", ports=[8080]), 'error reading "PreFilterNodePorts" from cycleState: not found'),
    ("InterPodAffinity", lambda: pod("p", labels={"app": "a"}, affinity=ANTI),
     'error reading "PreFilterInterPodAffinity" from cycleState: not found'),
    ("PodTopologySpread", spread_pod, 'reading "PreFilterPodTopologySpread" from cycleState: not found'),
    ("VolumeRestrictions", lambda: pod("p"), 'cannot read "PreFilterVolumeRestrictions" from cycleState'),
    ("VolumeBinding", lambda: pod("p"), "not found"),
])
def test_filter_without_its_prefilter_state_is_an_error(plugin, make_pod, message):
    """kube's getPreFilterState has no fallback in these plugins: every attempt fails with Error (backoffQ)."""
    placements, failures, sched = run_with_disabled("preFilter", plugin, [make_pod()])
    assert placements == {"default/p": None}
    assert failures == [f'running "{plugin}" filter plugin: {message}']
    assert sched.queue.describe("default/p")["queue"] == "backoffQ"


@pytest.mark.parametrize("plugin,make_pod", [
    ("NodeAffinity", lambda: pod("p", node_selector={"kubernetes.io/hostname": "n2"})),
    ("VolumeZone", lambda: pod("p")),
])
def test_filter_without_its_prefilter_state_computes_it(plugin, make_pod):
    """NodeAffinity and VolumeZone fall back to parsing the pod in Filter."""
    placements, failures, _ = run_with_disabled("preFilter", plugin, [make_pod()])
    assert failures == []
    assert placements["default/p"] == ("n2" if plugin == "NodeAffinity" else "n1")


@pytest.mark.parametrize("plugin,make_pod,message", [
    ("TaintToleration", lambda: pod("p"),
     'running Score plugins: plugin "TaintToleration" failed with: '
     'failed to read "PreScoreTaintToleration" from cycleState: not found'),
    ("InterPodAffinity", lambda: pod("p"),
     'running Score plugins: plugin "InterPodAffinity" failed with: '
     'failed to read "PreScoreInterPodAffinity" from cycleState: not found'),
    ("PodTopologySpread", spread_pod,
     'running Score plugins: plugin "PodTopologySpread" failed with: '
     'error reading "PreScorePodTopologySpread" from cycleState: not found'),
])
def test_score_without_its_prescore_state_is_an_error(plugin, make_pod, message):
    placements, failures, _ = run_with_disabled("preScore", plugin, [make_pod()])
    assert placements == {"default/p": None}
    assert failures == [message]


@pytest.mark.parametrize("plugin", ["NodeResourcesFit", "NodeResourcesBalancedAllocation", "NodeAffinity"])
def test_score_without_its_prescore_state_computes_it(plugin):
    placements, failures, _ = run_with_disabled("preScore", plugin, [pod("p")])
    assert failures == [] and placements == {"default/p": "n1"}
