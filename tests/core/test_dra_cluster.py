"""DRA in a simulated cluster run by the scheduler loop at 1.36: a pod added with a claim template gets its claim
(the resourceclaim controller), PreBind writes the allocation, the finalizer and the reservation to the claim,
and a pod that goes releases its devices (its own claim deleted, a shared claim deallocated when nobody holds it)."""
from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import ClusterError, SimulatedCluster
from scheduler_core.config import load_config
from scheduler_core.dra.claims import DELETE_PROTECTION_FINALIZER
from scheduler_core.objects import Node, Pod
from scheduler_core.plugins.registry import build_registry
from scheduler_core.scheduler import Scheduler

DRIVER = "gpu.example.com"


def _objects():
    slice_ = {"metadata": {"name": "n1-gpus"},
              "spec": {"driver": DRIVER, "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
                       "devices": [{"name": "gpu-0"}]}}
    cls = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}
    template = {"metadata": {"name": "one-gpu", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [request]}}}}
    shared = {"metadata": {"name": "shared", "namespace": "ml"}, "spec": {"devices": {"requests": [request]}}}
    return {"namespaces": [{"metadata": {"name": "ml"}}], "deviceclasses": [cls], "resourceslices": [slice_],
            "resourceclaimtemplates": [template], "resourceclaims": [shared]}


def _pod(name, **claim):
    return Pod({"metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
                "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
                         "resourceClaims": [{"name": "gpu", **claim}]}})


def _cluster(objects=None, cluster_class=SimulatedCluster):
    nodes = [Node({"metadata": {"name": n}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}})
             for n in ("n1", "n2")]
    clock = FakeClock(0.0)
    cluster = cluster_class(nodes, [], objects or _objects(), clock=clock)
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    registry = build_registry()
    sched = Scheduler(cluster, load_config(doc, registry, kube_version="1.36"), registry=registry, tie_break="name",
                      clock=clock)
    sched.fake_clock = clock
    return cluster, sched


def test_template_claim_allocated_at_prebind_and_deleted_with_its_pod():
    cluster, sched = _cluster()
    cluster.add_pod(_pod("a", resourceClaimTemplateName="one-gpu"))
    assert cluster.pods["ml/a"].raw["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": "a-gpu"}]
    cluster.add_pod(_pod("b", resourceClaimTemplateName="one-gpu"))
    sched.run_until_idle()
    assert cluster.placements() == {"ml/a": "n1", "ml/b": None}
    claim = cluster.objects.resource_claims["ml/a-gpu"]
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "a", "uid": "uid-a"}]
    assert claim["metadata"]["finalizers"] == [DELETE_PROTECTION_FINALIZER]
    failed = [e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"]
    assert failed[0].startswith("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable")

    cluster.delete_pod("ml/a")
    assert "ml/a-gpu" not in cluster.objects.resource_claims
    # the claim's release (an update) retries the waiting pod, which gets the freed device after its backoff
    sched.fake_clock.advance(2.0)
    sched.step()
    assert cluster.placements() == {"ml/b": "n1"}
    assert cluster.objects.resource_claims["ml/b-gpu"]["status"]["reservedFor"][0]["name"] == "b"


def test_shared_claim_is_deallocated_when_its_last_pod_goes():
    cluster, sched = _cluster()
    cluster.add_pod(_pod("a", resourceClaimName="shared"))
    cluster.add_pod(_pod("b", resourceClaimName="shared"))
    sched.run_until_idle()
    assert cluster.placements() == {"ml/a": "n1", "ml/b": "n1"}
    claim = cluster.objects.resource_claims["ml/shared"]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["a", "b"]
    cluster.delete_pod("ml/a")
    assert [r["name"] for r in cluster.objects.resource_claims["ml/shared"]["status"]["reservedFor"]] == ["b"]
    cluster.delete_pod("ml/b")
    claim = cluster.objects.resource_claims["ml/shared"]
    assert "allocation" not in claim["status"] and "finalizers" not in claim["metadata"]


def test_a_new_resource_slice_retries_a_waiting_pod():
    cluster, sched = _cluster()
    cluster.add_pod(_pod("a", resourceClaimTemplateName="one-gpu"))
    cluster.add_pod(_pod("b", resourceClaimTemplateName="one-gpu"))
    sched.run_until_idle()
    more = {"metadata": {"name": "n2-gpus"},
            "spec": {"driver": DRIVER, "nodeName": "n2", "pool": {"name": "n2", "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}]}}
    cluster.add_object("ResourceSlice", more)
    sched.fake_clock.advance(2.0)
    sched.step()
    assert cluster.placements() == {"ml/a": "n1", "ml/b": "n2"}


# -- extended resources backed by DRA (DRAExtendedResource) --------------------------------------------------
def _extended_cluster(cluster_class=SimulatedCluster):
    """The cluster above, its DeviceClass answering for the extended resource example.com/gpu."""
    objects = _objects()
    objects["deviceclasses"][0]["spec"]["extendedResourceName"] = "example.com/gpu"
    return _cluster(objects, cluster_class)


def _gpu_pod(name):
    return Pod({"metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
                "spec": {"containers": [{"name": "main", "resources": {"requests": {"example.com/gpu": "1"},
                                                                         "limits": {"example.com/gpu": "1"}}}]}})


def _extended_claims(cluster, pod_name):
    return [c for c in cluster.objects.resource_claims.values()
            if c["metadata"]["name"].startswith(f"{pod_name}-extended-resources-")]


def test_extended_resource_claim_created_at_prebind_and_named_in_the_pod_status():
    cluster, sched = _extended_cluster()
    cluster.add_pod(_gpu_pod("e"))
    cluster.add_pod(_gpu_pod("f"))
    sched.run_until_idle()
    assert cluster.placements() == {"ml/e": "n1", "ml/f": None}
    [claim] = _extended_claims(cluster, "e")
    meta = claim["metadata"]
    assert len(meta["name"]) == len("e-extended-resources-") + 5 and meta["uid"]
    assert meta["generateName"] == "e-extended-resources-"
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "e", "uid": "uid-e",
                                        "controller": True}]
    assert meta["finalizers"] == [DELETE_PROTECTION_FINALIZER]
    assert claim["spec"] == {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}
    allocation = claim["status"]["allocation"]
    assert allocation["devices"]["results"] == [
        {"request": "container-0-request-0", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]
    assert allocation["allocationTimestamp"].endswith("Z")
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "e", "uid": "uid-e"}]
    assert cluster.pods["ml/e"].raw["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-0"}],
        "resourceClaimName": meta["name"]}
    failed = [e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"]
    assert failed[0].startswith("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable")
    assert _extended_claims(cluster, "f") == []   # made in memory only: nothing created for a pod not placed

    cluster.delete_pod("ml/e")   # its claim goes with it (the pod owns it), which frees the device for f
    assert _extended_claims(cluster, "e") == []
    sched.fake_clock.advance(2.0)
    sched.step()
    assert cluster.placements() == {"ml/f": "n1"}
    [claim] = _extended_claims(cluster, "f")
    assert cluster.pods["ml/f"].raw["status"]["extendedResourceClaimStatus"]["resourceClaimName"] == \
        claim["metadata"]["name"]


def test_a_stale_extended_resource_claim_is_deleted_by_post_filter():
    cluster, sched = _extended_cluster()
    stale = {"metadata": {"name": "e-extended-resources-old", "namespace": "ml", "uid": "stale",
                          "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                          "finalizers": [DELETE_PROTECTION_FINALIZER],
                          "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "e", "uid": "uid-e",
                                               "controller": True}]},
             "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
                 "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}}
    cluster.add_object("ResourceClaim", stale)
    cluster.add_pod(_gpu_pod("e"))
    sched.run_until_idle()
    failed = [e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"]
    assert failed == ["0/2 nodes are available: 2 cannot schedule extended resource claim. deletion of "
                      "ResourceClaim completed, preemption: 0/2 nodes are available: 2 Preemption is not helpful "
                      "for scheduling."]
    assert "ml/e-extended-resources-old" not in cluster.objects.resource_claims
    # the claim's changes are not among the pod's own claims (DynamicResources' queueing hint skips them): the pod
    # is retried when the unschedulable pods are flushed, after five minutes
    sched.fake_clock.advance(2.0)
    sched.step()
    assert cluster.placements() == {"ml/e": None}
    sched.fake_clock.advance(300.0)
    sched.step()
    assert cluster.placements() == {"ml/e": "n1"}
    assert len(_extended_claims(cluster, "e")) == 1


class _ConflictingCluster(SimulatedCluster):
    """An API server on which another writer changes a claim between the scheduler's read and its first
    ``conflicts`` status updates (409, kube's text)."""

    conflicts = 1

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.status_updates, self.reads = 0, 0

    def update_status(self, kind, raw):
        self.status_updates += 1
        if self.status_updates <= self.conflicts:
            name = raw["metadata"]["name"]
            raise ClusterError(f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "{name}": the '
                               f'object has been modified; please apply your changes to the latest version and try '
                               f'again', 409)
        return super().update_status(kind, raw)

    def read_object(self, kind, key):
        self.reads += 1
        return super().read_object(kind, key)


def test_a_conflicting_claim_update_at_prebind_is_retried_after_reading_the_claim_again():
    cluster, sched = _extended_cluster(_ConflictingCluster)
    cluster.add_pod(_gpu_pod("e"))
    sched.run_until_idle()
    assert cluster.placements() == {"ml/e": "n1"}
    assert (cluster.status_updates, cluster.reads) == (2, 1)
    [claim] = _extended_claims(cluster, "e")
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "e", "uid": "uid-e"}]
    assert [e for e in cluster.events if e["reason"] == "FailedScheduling"] == []


def test_a_claim_update_that_keeps_conflicting_fails_prebind_and_the_created_claim_is_deleted():
    class AlwaysConflicting(_ConflictingCluster):
        conflicts = 5
    cluster, sched = _extended_cluster(AlwaysConflicting)
    cluster.add_pod(_gpu_pod("e"))
    sched.run_until_idle()
    assert cluster.placements() == {"ml/e": None}
    assert (cluster.status_updates, cluster.reads) == (5, 4)   # retry.DefaultRetry: five tries
    [failed] = [e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"]
    assert failed.startswith('running PreBind plugin "DynamicResources": add allocation and reservation to claim '
                             'ml/e-extended-resources-')
    assert failed.endswith(': the object has been modified; please apply your changes to the latest version and '
                           'try again')
    assert _extended_claims(cluster, "e") == []   # Unreserve deleted what PreBind created
    assert "extendedResourceClaimStatus" not in cluster.pods["ml/e"].raw["status"]


def test_a_claim_another_pods_binding_cycle_is_allocating_makes_the_pod_wait():
    """Pod a reserved the shared claim's allocation; its binding cycle has not written it yet (PreBind held here):
    pod b, sharing the claim, is UnschedulableAndUnresolvable at PreFilter with kube's text, as the assume cache
    has only a pending allocation."""
    cluster, sched = _cluster()
    plugin = sched.profiles["default-scheduler"].get_plugin("DynamicResources")
    plugin.pre_bind = lambda state, pod, node_name: None   # the claim's write still in flight
    cluster.add_pod(_pod("a", resourceClaimName="shared"))
    sched.run_until_idle()
    assert cluster.placements() == {"ml/a": "n1"}
    assert "allocation" not in (cluster.objects.resource_claims["ml/shared"].get("status") or {})
    cluster.add_pod(_pod("b", resourceClaimName="shared"))
    sched.run_until_idle()
    failed = [e["message"] for e in cluster.events if e["reason"] == "FailedScheduling"]
    assert failed == ["0/2 nodes are available: resource claim ml/shared is in the process of being allocated. "
                      "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful "
                      "for scheduling."], failed
