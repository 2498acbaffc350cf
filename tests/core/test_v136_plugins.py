"""The plugin differences between kube-scheduler v1.30 and v1.36 (versions.v1_36.CHANGES), each through a
Simulation at both versions: the same scenario, the two versions' messages and scores."""
import pytest

from scheduler_core.framework.profile import FrameworkError
from scheduler_core.scenario import scenario_from_data
from scheduler_core.simulate import Simulation, golden_document

GI = 1024 ** 3


def _node(name, cpu="4", memory="8Gi", pods="110", labels=None, taints=None, images=None):
    node = {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}
    if images:
        node["status"]["images"] = [{"names": [n], "sizeBytes": size} for n, size in images]
    return node


def _pod(name, requests=None, node=None, namespace="default", labels=None, **spec):
    container = {"name": "c", "image": spec.pop("image", "busybox")}
    if requests:
        container["resources"] = {"requests": requests}
    pod = {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
           "spec": {"containers": [container], **spec}}
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def _decision(version, nodes, pending, pods=(), **extra):
    data = {"nodes": nodes, "pods": list(pods), "pending": [pending], **extra}
    sim = Simulation(scenario_from_data(data), tie_break="name", kube_version=version)
    return golden_document(sim, list(sim.run()))["decisions"][0]


def _score(decision, node, plugin):
    return decision["scores"][node][plugin]["normalized"]


def test_untolerated_taints_message():
    nodes = [_node("a", taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])]
    assert _decision("1.30", nodes, _pod("p"))["message"] == \
        "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: db}. preemption: 0/1 nodes are " \
        "available: 1 Preemption is not helpful for scheduling."
    assert _decision("1.36", nodes, _pod("p"))["message"] == \
        "0/1 nodes are available: 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: " \
        "0/1 nodes are available: 1 Preemption is not helpful for scheduling."


def test_prefilter_result_names_the_plugin():
    pin = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}
    nodes = [_node("a", cpu="1"), _node("b"), _node("c")]
    pending = _pod("p", {"cpu": "2"}, affinity=pin)
    assert _decision("1.30", nodes, pending)["message"].startswith(
        "0/3 nodes are available: 1 Insufficient cpu, 2 node is filtered out by the prefilter result.")
    assert _decision("1.36", nodes, pending)["message"].startswith(
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_fit_above_allocatable_is_unresolvable():
    nodes = [_node("small", cpu="1"), _node("busy", cpu="4")]
    pods = [_pod("x", {"cpu": "3500m"}, node="busy")]
    pending = _pod("p", {"cpu": "2"})
    assert _decision("1.30", nodes, pending, pods)["message"].endswith(
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")
    # "small" can never hold 2 cpus; "busy" could once x is gone (x has the same priority, so no victim)
    assert _decision("1.36", nodes, pending, pods)["message"].endswith(
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.")


def test_balanced_allocation_scores_the_change_in_balance():
    nodes = [_node("a", cpu="4", memory="8Gi")]
    pods = [_pod("x", {"cpu": "1", "memory": "2Gi"}, node="a")]
    pending = _pod("p", {"cpu": "1", "memory": "1Gi"})
    # with the pod: cpu 2/4, memory 3/8: std 0.0625, 93; without: 1/4 and 2/8, 100
    assert _score(_decision("1.30", nodes, pending, pods), "a", "NodeResourcesBalancedAllocation") == 93
    assert _score(_decision("1.36", nodes, pending, pods), "a", "NodeResourcesBalancedAllocation") == \
        50 + (50 + 93 - 100) // 2
    two = [_node("a"), _node("b")]
    assert "NodeResourcesBalancedAllocation" in _decision("1.30", two, _pod("p"))["scores"]["a"]
    assert "NodeResourcesBalancedAllocation" not in _decision("1.36", two, _pod("p"))["scores"]["a"]


def test_non_zero_requests_of_pods_with_sidecars():
    sidecar = {"name": "s", "image": "proxy", "restartPolicy": "Always",
               "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    on_node = _pod("x", {"cpu": "1", "memory": "1Gi"}, node="a", initContainers=[sidecar])
    nodes = [_node("a", cpu="4", memory="8Gi"), _node("b", cpu="4", memory="8Gi")]
    pending = _pod("p", {"cpu": "1", "memory": "1Gi"})
    # 1.30 counts max(containers, init entries) = 1 cpu / 1Gi for x; 1.36 adds the sidecar: 2 cpu / 2Gi
    assert _score(_decision("1.30", nodes, pending, [on_node]), "a", "NodeResourcesFit") == (50 + 75) // 2
    assert _score(_decision("1.36", nodes, pending, [on_node]), "a", "NodeResourcesFit") == (25 + 62) // 2


def test_namespace_selector_that_empty_labels_satisfy():
    namespaces = [{"metadata": {"name": n, "labels": labels}}
                  for n, labels in (("default", {}), ("data", {"team": "data"}))]
    nodes = [_node("a"), _node("b")]
    pods = [_pod("db", {"cpu": "100m"}, node="a", namespace="data", labels={"app": "db"})]
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname",
            "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["data"]}]}}
    pending = _pod("p", {"cpu": "100m"}, affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": term}]}})
    # 1.30: no pod matches (PreScore skips the plugin); 1.36: the pod of "data" matches too
    assert "InterPodAffinity" not in _decision("1.30", nodes, pending, pods, namespaces=namespaces)["scores"]["a"]
    assert _score(_decision("1.36", nodes, pending, pods, namespaces=namespaces), "a", "InterPodAffinity") == 100


def test_image_size_of_the_first_node():
    mb = 1024 * 1024
    nodes = [_node("a", images=[("registry/app:1", 300 * mb)]), _node("b", images=[("registry/app:1", 900 * mb)]),
             _node("c")]
    pending = _pod("p", {"cpu": "100m"}, image="registry/app:1")
    at_130 = _decision("1.30", nodes, pending)
    at_136 = _decision("1.36", nodes, pending)
    assert _score(at_130, "b", "ImageLocality") > _score(at_130, "a", "ImageLocality")
    assert _score(at_136, "b", "ImageLocality") == _score(at_136, "a", "ImageLocality")


def test_fit_args_requested_to_capacity_ratio():
    def init_error(version, strategy):
        data = {"nodes": [_node("a")], "pods": [], "pending": [_pod("p")]}
        config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                      {"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}]}]}
        with pytest.raises(FrameworkError) as err:
            Simulation(scenario_from_data(data), config_doc=config, kube_version=version)
        return str(err.value)

    shape = {"shape": [{"utilization": 50, "score": 5}, {"utilization": 10, "score": 1}]}
    ratio = {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": shape}
    assert "scoringStrategy.shape[1].utilization: Invalid value: 10: utilization values must be sorted" \
        in init_error("1.30", ratio)
    assert "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: values must be " \
           "sorted in increasing order" in init_error("1.36", ratio)
    assert "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is " \
           "RequestedToCapacityRatio" in init_error("1.36", {"type": "RequestedToCapacityRatio"})
    assert "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not " \
           "RequestedToCapacityRatio" in init_error("1.36", {"type": "MostAllocated", "requestedToCapacityRatio": {
               "shape": [{"utilization": 0, "score": 1}]}})


def test_volume_conflict_messages():
    def claim(modes):
        return {"metadata": {"name": "data", "namespace": "default",
                             "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                "spec": {"accessModes": modes, "resources": {"requests": {"storage": "1Gi"}}, "volumeName": "pv-data",
                         "storageClassName": ""},
                "status": {"phase": "Bound"}}

    def volume(modes, **spec):
        return {"metadata": {"name": "pv-data"},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": modes, "storageClassName": "",
                         "claimRef": {"namespace": "default", "name": "data"},
                         "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}, **spec},
                "status": {"phase": "Bound"}}

    uses = [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]
    rwop = ["ReadWriteOncePod"]
    holder = _pod("holder", {"cpu": "100m"}, node="a", volumes=uses)
    extra = {"persistentvolumeclaims": [claim(rwop)], "persistentvolumes": [volume(rwop)]}
    assert _decision("1.30", [_node("a")], _pod("p", volumes=uses), [holder], **extra)["message"].startswith(
        "0/1 nodes are available: 1 node has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode.")
    assert _decision("1.36", [_node("a")], _pod("p", volumes=uses), [holder], **extra)["message"].startswith(
        "0/1 nodes are available: 1 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
        "mode already in-use by another pod.")
    elsewhere = {"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z2"]}]}]}}}
    rwo = ["ReadWriteOnce"]
    extra = {"persistentvolumeclaims": [claim(rwo)], "persistentvolumes": [volume(rwo, **elsewhere)]}
    assert _decision("1.30", [_node("a")], _pod("p", volumes=uses), **extra)["message"].startswith(
        "0/1 nodes are available: 1 node(s) had volume node affinity conflict.")
    assert _decision("1.36", [_node("a")], _pod("p", volumes=uses), **extra)["message"].startswith(
        "0/1 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity.")


def test_volume_binding_all_nodes():
    """A claim bound to a local PV pinned to node a, where cpu is short: 1.30's PreFilter narrows to a, 1.36's
    Filter rejects b (as the real kube-scheduler v1.36.2 did on golden-config's v01)."""
    claim = {"metadata": {"name": "data", "namespace": "default",
                          "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                      "volumeName": "local-a", "storageClassName": "local"}, "status": {"phase": "Bound"}}
    volume = {"metadata": {"name": "local-a"},
              "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                       "claimRef": {"namespace": "default", "name": "data"}, "local": {"path": "/mnt/disk"},
                       "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                           {"key": "kubernetes.io/hostname", "operator": "In", "values": ["a"]}]}]}}},
              "status": {"phase": "Bound"}}
    extra = {"persistentvolumeclaims": [claim], "persistentvolumes": [volume]}
    big = _pod("p", {"cpu": "2"}, volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}])
    nodes = [_node("a", cpu="1"), _node("b")]
    assert _decision("1.30", nodes, big, **extra)["message"].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node is filtered out by the prefilter result.")
    assert _decision("1.36", nodes, big, **extra)["message"].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match PersistentVolume's node affinity.")


def test_image_volumes_count_for_image_locality():
    mb = 1024 * 1024
    nodes = [_node("a", images=[("registry/model:1", 900 * mb)]), _node("b")]
    pending = _pod("p", {"cpu": "100m"}, volumes=[{"name": "m", "image": {"reference": "registry/model:1"}}])
    assert _score(_decision("1.30", nodes, pending), "a", "ImageLocality") == 0
    # 900Mi scaled by 1 of 2 nodes, over one container: 100 * (450Mi - 23Mi) / (1000Mi - 23Mi)
    assert _score(_decision("1.36", nodes, pending), "a", "ImageLocality") == 100 * (450 - 23) // (1000 - 23)


def test_simulate_leaves_out_pods_a_pre_enqueue_plugin_refuses(tmp_path):
    """kube's queue runs PreEnqueue first: a pod whose ResourceClaimTemplate does not exist, or that has a
    scheduling gate, is never attempted (no message); the others are scheduled as usual."""
    import contextlib
    import io
    import json

    from scheduler_core.cli import main
    node = {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}

    def pod(name, **spec):
        return {"metadata": {"name": name, "namespace": "ml"},
                "spec": {"priority": 0, "containers": [{"name": "c", "image": "x"}], **spec}}
    scenario = {"nodes": [node], "pods": [], "pending": [
        pod("no-template", resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "missing"}]),
        pod("gated", schedulingGates=[{"name": "example.com/wait"}]), pod("plain")]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["simulate", str(path), "--format", "golden", "--kube-version", "1.36"]) == 0
    decisions = {d["pod"]: d for d in json.loads(out.getvalue())["decisions"]}
    assert decisions["ml/no-template"]["gated"] == {
        "plugin": "DynamicResources", "message": 'pod "ml/no-template": ResourceClaim not created yet'}
    assert decisions["ml/gated"]["gated"] == {"plugin": "SchedulingGates",
                                              "message": "waiting for scheduling gates: [example.com/wait]"}
    assert decisions["ml/plain"]["bound_node"] == "n1" and "gated" not in decisions["ml/plain"]
    assert not decisions["ml/no-template"]["unschedulable"] and decisions["ml/no-template"]["bound_node"] is None


def test_configuration_error_texts():
    """kube-scheduler v1.36.2's words for golden-config's x01 and x02 (from the live oracle), and v1.30's."""
    from scheduler_core.config import ConfigError

    def error(version, config):
        data = {"nodes": [_node("a")], "pods": [], "pending": [_pod("p")]}
        doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **config}
        with pytest.raises((ConfigError, FrameworkError)) as err:
            Simulation(scenario_from_data(data), config_doc=doc, kube_version=version)
        return str(err.value)

    twice = {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}
    assert error("1.36", twice) == "profiles[1].schedulerName: Duplicate value: {}"
    assert error("1.30", twice).endswith('Duplicate value: field.Path{name:"schedulerName", index:"", '
                                         'parent:(*field.Path)(0xADDR)}')
    heavy = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
        {"name": "ImageLocality", "weight": -1}]}}}]}
    assert error("1.36", heavy).endswith(": score plugins: total score of Score plugins could overflow")
    assert error("1.30", heavy).endswith("default-scheduler: total score of Score plugins could overflow")


def test_pod_level_requests_count_at_1_36_only():
    """spec.resources (PodLevelResources) is what NodeResourcesFit counts at 1.36; v1.30 has no such field."""
    nodes = [_node("a", cpu="2")]
    pending = _pod("p", {"cpu": "500m"}, resources={"requests": {"cpu": "3"}})
    assert _decision("1.30", nodes, pending)["bound_node"] == "a"
    assert _decision("1.36", nodes, pending)["message"] == \
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are " \
        "available: 1 Preemption is not helpful for scheduling."


def test_resized_pod_counts_its_status_at_1_36_only():
    """A running pod resized in place counts max(spec, actuated, allocated) at 1.36 (InPlacePodVerticalScaling
    GA); v1.30 (the gate off) reads only its spec."""
    nodes = [_node("a", cpu="4")]
    resized = _pod("r", {"cpu": "1"}, node="a")
    resized["status"] = {"phase": "Running", "containerStatuses": [
        {"name": "c", "allocatedResources": {"cpu": "1"}, "resources": {"requests": {"cpu": "3"}}}]}
    pending = _pod("p", {"cpu": "2"})
    assert _decision("1.30", nodes, pending, pods=[resized])["bound_node"] == "a"
    assert _decision("1.36", nodes, pending, pods=[resized])["message"].startswith(
        "0/1 nodes are available: 1 Insufficient cpu.")
