"""One admission path for every writer (``services.admitted``): the REST API, the pages, the workload generator and
the Kubernetes API refuse what kube-apiserver refuses, in its words, and own the fields it owns. Each test replays a
write that one of them used to let through: objects grown past the bytes quota by PUT, PATCH and status writes; a
20 MB pod; a caller's uid, timestamps, status and priority; tolerations kube refuses."""
from __future__ import annotations

import asyncio
import json

import pytest
from django.conf import settings
from django.test import AsyncClient, override_settings

from dashboard.models import Pod, StoredObject
from dashboard.services.admitted import ValidationFailed

from .conftest import make_user, page_client

pytestmark = pytest.mark.django_db(transaction=True)

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"
TOO_LARGE = "Request entity too large: limit is 3145728"


def k8s(cluster, token, method: str, path: str, body=None, content_type: str = "application/json"):
    """(status, JSON) of a request to the cluster's Kubernetes API."""
    kw = {"headers": {"Authorization": f"Bearer {token}"}}
    if body is not None:
        kw.update(data=json.dumps(body), content_type=content_type)
    resp = asyncio.run(getattr(AsyncClient(), method.lower())(f"/clusters/{cluster.name}/k8s{path}", **kw))
    return resp.status_code, json.loads(resp.content or b"{}")


def pod(name: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}], **spec}}


def test_updates_patches_and_status_writes_cannot_grow_past_the_bytes_quota(small):
    cluster, token = small
    big = "x" * 1_200_000
    with override_settings(SCHEDSCOPE={**settings.SCHEDSCOPE, "MAX_STORE_BYTES": 1024 * 1024}):
        lease = {"metadata": {"name": "grown"}, "spec": {"holderIdentity": "a"}}
        status, made = k8s(cluster, token, "POST", LEASES, lease)
        assert status == 201
        grown = dict(made, spec={"holderIdentity": big})
        for method, body, ctype in (("PUT", grown, "application/json"),
                                    ("PATCH", {"spec": {"holderIdentity": big}}, MERGE)):
            status, answer = k8s(cluster, token, method, f"{LEASES}/grown", body, ctype)
            assert (status, answer["reason"]) == (403, "Forbidden"), (method, answer)
            assert answer["message"].startswith('leases.coordination.k8s.io "grown" is forbidden: exceeded quota: '
                                                'schedscope-cluster-quota, requested: storage=119999')
        assert k8s(cluster, token, "PATCH", f"{LEASES}/grown", {"spec": {"holderIdentity": "b"}}, MERGE)[0] == 200
        status, answer = k8s(cluster, token, "PATCH", f"{PODS}/web-0/status",
                             {"status": {"conditions": [{"type": "Big", "status": "True", "message": big}]}},
                             "application/strategic-merge-patch+json")
        assert status == 403 and "exceeded quota" in answer["message"]
    stored = StoredObject.objects.get(cluster=cluster, kind="Lease", key="default/grown")
    assert stored.raw["spec"] == {"holderIdentity": "b"}
    assert "Big" not in json.dumps(Pod.objects.get(cluster=cluster, name="web-0").raw)


def test_no_writer_stores_an_object_above_3_mib(small, api):
    cluster, token = small
    huge = pod("huge")
    huge["spec"]["containers"][0]["env"] = [{"name": "BLOB", "value": "x" * 20_000_000}]
    r = api.post(f"/api/clusters/{cluster.name}/pods/", huge, format="json")
    assert (r.status_code, r.json()) == (413, {"detail": TOO_LARGE})
    assert not Pod.objects.filter(cluster=cluster, name="huge").exists()
    editor = page_client(make_user("editor", "editor"))
    huge["spec"]["containers"][0]["env"][0]["value"] = "x" * 4_000_000
    resp = editor.post(f"/clusters/{cluster.name}/new/pod/", {"manifest": json.dumps(huge)})
    assert resp.status_code == 200 and resp.context["form"].errors["manifest"] == [TOO_LARGE]
    # a PATCH under the request limit that makes the object larger than it
    lease = {"metadata": {"name": "big"}, "spec": {"holderIdentity": "y" * 2_000_000}}
    assert k8s(cluster, token, "POST", LEASES, lease)[0] == 201
    status, answer = k8s(cluster, token, "PATCH", f"{LEASES}/big", {"spec": {"preferredHolder": "z" * 1_500_000}},
                         MERGE)
    assert (status, answer["reason"], answer["message"]) == (413, "RequestEntityTooLarge", TOO_LARGE)


def test_the_server_owns_uid_timestamps_status_and_priority(small, api):
    cluster, token = small
    other_uid = "5f0c3a2e-8a1b-4c7d-9e6f-0a1b2c3d4e5f"
    sneaky = pod("sneaky")
    sneaky["metadata"].update(uid=other_uid, creationTimestamp="2001-01-01T00:00:00Z",
                              deletionTimestamp="2001-01-02T00:00:00Z", deletionGracePeriodSeconds=0,
                              resourceVersion="7")
    sneaky["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    url = f"/api/clusters/{cluster.name}/pods/"
    r = api.post(url, sneaky, format="json")
    assert r.status_code == 201, r.content
    status, served = k8s(cluster, token, "POST", PODS, dict(sneaky, metadata=dict(sneaky["metadata"], name="sly")))
    assert status == 201
    for name in ("sneaky", "sly"):
        row = Pod.objects.get(cluster=cluster, name=name)
        meta = row.raw["metadata"]
        assert row.uid == meta["uid"] != other_uid and meta["creationTimestamp"] != "2001-01-01T00:00:00Z"
        assert "deletionTimestamp" not in meta and "deletionGracePeriodSeconds" not in meta
        assert row.raw["status"] == {"phase": "Pending", "qosClass": "BestEffort"} and row.queue == Pod.ACTIVE
    # spec.priority comes from the PriorityClass; a caller's value that differs is refused
    r = api.post(url, pod("vip", priority=2000000000), format="json")
    assert r.status_code == 403
    assert r.json() == {"detail": 'pods "vip" is forbidden: the integer value of priority (2000000000) must not be '
                                  'provided in pod spec; priority admission controller computed 0 from the given '
                                  'PriorityClass name'}
    r = api.post(url, pod("vip", priorityClassName="system-cluster-critical"), format="json")
    assert r.status_code == 201 and r.json()["priority"] == 2000000000
    r = api.post(url, pod("lost", priorityClassName="gold"), format="json")
    assert r.status_code == 403 and r.json()["detail"].endswith("no PriorityClass with name gold was found")
    owned = pod("owned")
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}]
    r = api.post(url, owned, format="json")
    assert r.status_code == 400
    assert r.json() == {"metadata.ownerReferences.uid": ['Invalid value: "": must not be empty']}
    # a pod's node changes only through a binding: an edit that moves it is refused
    editor = page_client(make_user("editor", "editor"))
    text = editor.get(f"/clusters/{cluster.name}/pods/default/sneaky/edit/").context["form"].initial["manifest"]
    moved = text.replace("spec:\n", "spec:\n  nodeName: n-1\n", 1)
    resp = editor.post(f"/clusters/{cluster.name}/pods/default/sneaky/edit/", {"manifest": moved})
    assert "spec: Forbidden: pod updates may not change fields" in resp.context["form"].errors["manifest"][0]
    assert Pod.objects.get(cluster=cluster, name="sneaky").node_name == ""


def test_tolerations_kube_refuses_are_refused_by_every_editor(small):
    cluster, token = small
    editor = page_client(make_user("editor", "editor"))
    bad = pod("tolerant", tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedul"}])
    resp = editor.post(f"/clusters/{cluster.name}/new/pod/", {"manifest": json.dumps(bad, indent=1)})
    [error] = resp.context["form"].errors["manifest"]
    assert error.endswith('spec.tolerations[0].effect: Unsupported value: "NoSchedul": supported values: '
                          '"NoSchedule", "PreferNoSchedule", "NoExecute"')
    bad["spec"]["tolerations"][0]["effect"] = "Bogus"
    status, answer = k8s(cluster, token, "POST", PODS, bad)
    assert (status, answer["message"]) == (422, 'Pod "tolerant" is invalid: spec.tolerations[0].effect: Unsupported '
                                                'value: "Bogus": supported values: "NoSchedule", '
                                                '"PreferNoSchedule", "NoExecute"')
    bad["spec"]["tolerations"][0]["effect"] = "NoSchedule"
    assert k8s(cluster, token, "POST", PODS, bad)[0] == 201
    changed = [{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}]
    status, answer = k8s(cluster, token, "PATCH", f"{PODS}/tolerant", {"spec": {"tolerations": changed}}, MERGE)
    assert (status, answer["message"]) == (422, 'Pod "tolerant" is invalid: spec.tolerations: Forbidden: existing '
                                                'toleration can not be modified except its tolerationSeconds')
    _s, current = k8s(cluster, token, "GET", f"{PODS}/tolerant")
    added = current["spec"]["tolerations"] + changed
    assert k8s(cluster, token, "PATCH", f"{PODS}/tolerant", {"spec": {"tolerations": added}}, MERGE)[0] == 200
    text = editor.get(f"/clusters/{cluster.name}/pods/default/tolerant/edit/").context["form"].initial["manifest"]
    resp = editor.post(f"/clusters/{cluster.name}/pods/default/tolerant/edit/",
                       {"manifest": text.replace("effect: NoSchedule", "effect: PreferNoSchedule")})
    assert "spec.tolerations: Forbidden: existing toleration can not be modified" in \
        resp.context["form"].errors["manifest"][0]


def test_a_metadata_that_is_not_an_object_is_a_field_error(api, small):
    cluster, _token = small
    r = api.post(f"/api/clusters/{cluster.name}/pods/", {"metadata": True, "spec": {"containers": [
        {"name": "c", "image": "registry.example/c:1"}]}}, format="json")
    assert r.status_code in (400, 422) and "metadata" in r.content.decode()


def _used_bytes(cluster) -> int:
    """What the cluster's objects weigh, summed from their rows (what StoreCounter.bytes must equal)."""
    from django.db import connection
    size = "octet_length(raw::text)" if connection.vendor == "postgresql" else "length(CAST(raw AS BLOB))"
    with connection.cursor() as cur:
        cur.execute(" UNION ALL ".join(f"SELECT coalesce(sum({size}), 0) FROM {t} WHERE cluster_id = %s"
                                       for t in ("dashboard_pod", "dashboard_node", "dashboard_storedobject")),
                    [cluster.pk] * 3)
        return sum(n for (n,) in cur.fetchall())


def test_the_rest_api_pages_and_generator_keep_the_bytes_quota_as_the_kubernetes_api_does(small, api):
    """The writers on the dashboard's side check the same bytes quota, in the same words, as the Kubernetes API:
    a REST create, a page's new node and pod edit, the workload generator's inserts."""
    from dashboard.models import StoreCounter
    from dashboard.services import objectstore

    cluster, token = small
    big = "x" * 200_000   # annotations hold at most 256 KiB
    used = StoreCounter.objects.get(cluster=cluster).bytes
    assert used == _used_bytes(cluster) > 0
    quota = "exceeded quota: schedscope-cluster-quota, requested: storage="
    editor = page_client(make_user("editor", "editor"))
    with override_settings(SCHEDSCOPE={**settings.SCHEDSCOPE, "MAX_STORE_BYTES": used + 150_000}):
        heavy = pod("heavy")
        heavy["metadata"]["annotations"] = {"blob": big}
        r = api.post(f"/api/clusters/{cluster.name}/pods/", heavy, format="json")
        assert r.status_code == 403, r.content
        assert r.json()["detail"].startswith(f'pods "heavy" is forbidden: {quota}200')
        status, answer = k8s(cluster, token, "POST", PODS, heavy)   # the same refusal, the same words
        assert (status, answer["message"].split(", used")[0]) == (403, r.json()["detail"].split(", used")[0])
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "heavy", "annotations": {"blob": big}}}
        resp = editor.post(f"/clusters/{cluster.name}/new/node/", {"manifest": json.dumps(node)})
        assert resp.context["form"].errors["manifest"][0].startswith(f'nodes "heavy" is forbidden: {quota}')
        url = f"/clusters/{cluster.name}/pods/default/web-0/edit/"
        text = editor.get(url).context["form"].initial["manifest"]
        grown = text.replace("metadata:\n", f"metadata:\n  annotations:\n    blob: {big}\n", 1)
        resp = editor.post(url, {"manifest": grown})
        assert resp.context["form"].errors["manifest"][0].startswith(f'pods "web-0" is forbidden: {quota}')
        small_one = text.replace("metadata:\n", "metadata:\n  annotations:\n    note: fine\n", 1)
        assert editor.post(url, {"manifest": small_one}).status_code == 302   # growing within the quota is fine
        # the workload generator's inserts (a loop's, ``writer``): the ones that fit, then a refusal
        made = [dict(heavy, metadata={"name": f"gen-{i}", "namespace": "default", "annotations": {"b": "y" * 40_000}})
                for i in range(4)]
        stored = 0
        with pytest.raises(ValidationFailed, match="exceeded quota"):
            for raw in made:
                objectstore.insert_pods(cluster, [raw], writer="generator")
                stored += 1
        assert stored == 3
    assert not Pod.objects.filter(cluster=cluster, name="heavy").exists()
    assert not Pod.objects.filter(cluster=cluster, name="gen-3").exists()
    assert "blob" not in json.dumps(Pod.objects.get(cluster=cluster, name="web-0").raw)
    assert Pod.objects.get(cluster=cluster, name="web-0").raw["metadata"]["annotations"] == {"note": "fine"}
    assert StoreCounter.objects.get(cluster=cluster).bytes == _used_bytes(cluster)
    # deletes and a scenario load keep the counter with the rows
    Pod.objects.filter(cluster=cluster, name__startswith="gen-").delete()
    assert StoreCounter.objects.get(cluster=cluster).bytes == _used_bytes(cluster)


def test_pod_level_resources_are_checked_and_counted_by_every_writer(small, api):
    """spec.resources (PodLevelResources): the pages, the REST API and the Kubernetes API refuse pod-level
    requests below the containers' sum in kube-apiserver's words, and store a valid one, whose cpu the pod's
    columns count."""
    cluster, token = small
    editor = page_client(make_user("editor", "editor"))
    low = pod("low", resources={"requests": {"cpu": "100m"}})
    low["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500m"}}
    message = ('spec.resources.requests[cpu]: Invalid value: "100m": must be greater than or equal to aggregate '
               'container requests of 500m')
    resp = editor.post(f"/clusters/{cluster.name}/new/pod/", {"manifest": json.dumps(low, indent=1)})
    assert resp.context["form"].errors["manifest"][0].endswith(message)
    status, answer = k8s(cluster, token, "POST", PODS, low)
    assert (status, answer["message"]) == (422, f'Pod "low" is invalid: {message}')
    r = api.post(f"/api/clusters/{cluster.name}/pods/", low, format="json")
    assert r.status_code in (400, 422) and "must be greater than or equal to aggregate" in r.content.decode()
    fine = dict(low, spec=dict(low["spec"], resources={"requests": {"cpu": "2"}}))
    assert k8s(cluster, token, "POST", PODS, fine)[0] == 201
    stored = Pod.objects.get(cluster=cluster, name="low")
    assert stored.raw["spec"]["resources"] == {"requests": {"cpu": "2"}} and stored.cpu_m == 2000
