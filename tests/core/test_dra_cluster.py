"""DRA in a simulated cluster run by the scheduler loop at 1.36: a pod added with a claim template gets its claim
(the resourceclaim controller), PreBind writes the allocation, the finalizer and the reservation to the claim,
and a pod that goes releases its devices (its own claim deleted, a shared claim deallocated when nobody holds it)."""
from scheduler_core.clock import FakeClock
from scheduler_core.cluster.simulated import SimulatedCluster
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


def _cluster():
    nodes = [Node({"metadata": {"name": n}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}})
             for n in ("n1", "n2")]
    clock = FakeClock(0.0)
    cluster = SimulatedCluster(nodes, [], _objects(), clock=clock)
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
