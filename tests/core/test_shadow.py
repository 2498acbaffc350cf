"""ShadowScheduler's sink for the dashboard (on_record with the shadow's full trace) and explain.node_rejections,
which names the Filter plugins a manual binding ignores."""
from scheduler_core.cluster.simulated import SimulatedCluster, store_object
from scheduler_core.explain import node_rejections
from scheduler_core.framework.snapshot import Snapshot
from scheduler_core.scenario import scenario_from_data
from scheduler_core.scheduler import Scheduler
from scheduler_core.shadow import ShadowScheduler

from .test_explain import node, pod

TAINT = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]


def cluster_of(pending):
    return SimulatedCluster.from_scenario(scenario_from_data(
        {"nodes": [node("a", cpu="2"), node("b", cpu="2"), node("gpu", cpu="8", taints=TAINT)], "pods": [],
         "pending": pending}))


def test_on_record_gets_every_comparison_with_a_full_trace():
    cluster = cluster_of([pod("p1", cpu="1"), pod("p2", cpu="1")])
    seen = []
    shadow = ShadowScheduler(cluster, tie_break="name", trace_all_filters=True,
                             on_record=lambda rec, tr: seen.append((rec, tr)))
    cluster.bind(cluster.pods["default/p1"], "gpu")     # another scheduler ignores the taint
    cluster.bind(cluster.pods["default/p2"], "b")      # a and b are empty: a tie, which "name" breaks to a
    assert [(r.pod, r.actual, r.shadow, r.agree, r.within_ties, r.actual_feasible) for r, _tr in seen] == [
        ("default/p1", "gpu", "a", False, False, False), ("default/p2", "b", "a", False, True, True)]
    rec, tr = seen[0]
    assert rec.actual_reasons == ["node(s) had untolerated taint {gpu: true}"]
    assert tr.pod.key == "default/p1" and tr.chosen == "a"
    assert set(tr.filter["a"]) >= {"NodeResourcesFit", "TaintToleration"}   # trace mode: every plugin, every node
    assert shadow.stats()["decisions"] == 2 and shadow.stats()["actual_infeasible"] == 1


def test_node_rejections_names_every_rejecting_filter_plugin():
    cluster = cluster_of([pod("big", cpu="4"), pod("small", cpu="1"), pod("picky", cpu="1", nodeSelector={"x": "y"})])
    sched = Scheduler(cluster, tie_break="name")
    fwk = next(iter(sched.profiles.values()))
    snap = Snapshot((), cluster.objects)
    sched.cache.update_snapshot(snap)
    big, small, picky = (cluster.pods[f"default/{n}"] for n in ("big", "small", "picky"))
    assert node_rejections(fwk, snap, big, "a") == {"NodeResourcesFit": "Insufficient cpu"}
    assert node_rejections(fwk, snap, small, "a") == {}
    assert node_rejections(fwk, snap, small, "gpu") == {"TaintToleration": "node(s) had untolerated taint {gpu: true}"}
    assert node_rejections(fwk, snap, picky, "gpu") == {
        "NodeAffinity": "node(s) didn't match Pod's node affinity/selector",
        "TaintToleration": "node(s) had untolerated taint {gpu: true}"}


def test_a_binding_is_judged_on_the_objects_of_the_events_before_it_not_the_live_stores():
    """A KubeCluster's watch threads update its stores before its events are delivered: a claim deleted after kube
    bound its pod is already gone from the source's objects when the binding is judged. The shadow reads the
    objects of the events it was given, so the pod is judged with its claim, as kube decided it."""
    claimant = pod("p1", cpu="1")
    claimant["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    cluster = SimulatedCluster.from_scenario(scenario_from_data(
        {"nodes": [node("a", cpu="2"), node("b", cpu="2")], "pods": [], "pending": [claimant],
         "persistentvolumes": [{"metadata": {"name": "pv"}, "spec": {
             "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "claimRef": {
                 "namespace": "default", "name": "data"}, "storageClassName": "",
             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "kubernetes.io/hostname", "operator": "In", "values": ["b"]}]}]}}}}],
         "persistentvolumeclaims": [{"metadata": {"name": "data", "namespace": "default", "annotations": {
             "pv.kubernetes.io/bind-completed": "yes"}}, "spec": {
             "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
             "volumeName": "pv", "storageClassName": ""}, "status": {"phase": "Bound"}}]}))
    shadow = ShadowScheduler(cluster, tie_break="name")
    claim = cluster.objects.persistent_volume_claims["default/data"]
    store_object(cluster.objects, "PersistentVolumeClaim", claim, deleted=True)   # the watch, ahead of its event
    cluster.bind(cluster.pods["default/p1"], "b")
    rec = shadow.records[-1]
    assert (rec.actual, rec.shadow, rec.agree) == ("b", "b", True)
    shadow.on_object_event("PersistentVolumeClaim", "Delete", claim, None)   # the event, delivered after
    assert "default/data" not in shadow.objects.persistent_volume_claims
