"""The cluster pages' object editors: nodes and pods created, edited and deleted as YAML or JSON through the same
writers and validator as the APIs (errors at the lines of the manifest), a scenario uploaded; editors only, on
simulated clusters, and restricted clusters do not exist for non-members."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from dashboard.models import Cluster, ClusterMembership, Node, Pod, StoreChange
from dashboard.profiles.models import AuditLog
from dashboard.services.credentials import create_token
from dashboard.services.objectstore import current_rv
from scheduler_core.documents import field_line

from .conftest import load_cluster, make_user, page_client, small_scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

BAD_POD = """apiVersion: v1
kind: Pod
metadata:
  name: bad
  labels:
    app: web
spec:
  containers:
  - name: c
    resources:
      requests:
        cpu: "-1"
        memory: 1Gi
"""


@pytest.fixture
def cluster(api):
    return load_cluster(api, small_scenario(2))


@pytest.fixture
def editor(db):
    return page_client(make_user("editor", "editor"))


def errors(resp) -> list:
    return resp.context["form"].errors.get("manifest", []) + resp.context["form"].non_field_errors()


def test_new_pod_is_stored_for_every_reader(cluster, editor, api):
    page = editor.get("/clusters/small/new/pod/")
    assert page.status_code == 200 and b"nginx" in page.content   # prefilled with an example
    rv = current_rv(cluster.pk)
    manifest = page.context["form"].initial["manifest"].replace("web-1", "edited-web")
    resp = editor.post("/clusters/small/new/pod/", {"manifest": manifest})
    assert resp.status_code == 302 and resp["Location"] == "/clusters/small/pods/default/edited-web/"
    row = Pod.objects.get(cluster=cluster, name="edited-web")
    assert (row.cpu_m, row.queue, row.labels) == (500, Pod.ACTIVE, {"app": "web"})
    assert api.get("/api/clusters/small/pods/default/edited-web/").status_code == 200
    _, token = create_token(cluster, "kubectl")
    served = editor.get("/clusters/small/k8s/api/v1/namespaces/default/pods/edited-web",
                        HTTP_AUTHORIZATION=f"Bearer {token}")
    assert served.status_code == 200 and served.json()["metadata"]["labels"] == {"app": "web"}   # kubectl's view
    assert any(c["type"] == "ADDED" and c["kind"] == "pods" for c in _changes(cluster, rv))


def _changes(cluster, rv):
    return [{"type": t, "kind": k} for t, k in StoreChange.objects.filter(cluster=cluster, rv__gt=rv)
            .values_list("type", "kind")]


def test_errors_name_their_field_and_line(cluster, editor):
    resp = editor.post("/clusters/small/new/pod/", {"manifest": BAD_POD})
    assert resp.status_code == 200
    assert errors(resp) == ['line 12: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
                            'must be greater than or equal to 0']
    assert not Pod.objects.filter(cluster=cluster, name="bad").exists()
    # the same pod as JSON: the field's line in the JSON text
    as_json = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
                          "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]}},
                         indent=1)
    resp = editor.post("/clusters/small/new/pod/", {"manifest": as_json})
    cpu_line = next(i for i, line in enumerate(as_json.splitlines(), 1) if '"cpu"' in line)
    assert errors(resp)[0].startswith(f"line {cpu_line}: spec.containers[0].resources.requests[cpu]")
    # YAML that does not parse: its line and column
    resp = editor.post("/clusters/small/new/node/", {"manifest": "metadata:\n  name: x\n  labels: [a\n"})
    assert errors(resp)[0].startswith("invalid YAML: line 4, column 1:")
    resp = editor.post("/clusters/small/new/node/", {"manifest": "- a list"})
    assert "expected one object" in errors(resp)[0]


def test_field_line_follows_the_deepest_part_the_document_has():
    assert field_line(BAD_POD, "metadata.labels") == 5
    assert field_line(BAD_POD, "spec.containers[0].resources.limits[cpu]") == 10   # no limits: resources
    assert field_line(BAD_POD, "spec.nodeName") == 7
    assert field_line("a: [", "a") is None


def test_node_created_edited_and_deleted(cluster, editor):
    resp = editor.post("/clusters/small/new/node/", {"manifest": editor.get("/clusters/small/new/node/")
                                                     .context["form"].initial["manifest"]})
    assert resp.status_code == 302
    assert Node.objects.get(cluster=cluster, name="node-new-1").allocatable["cpu"] == 8000
    created = AuditLog.objects.get(action="node.create")
    assert (created.user.username, created.detail) == ("editor", {"node": "node-new-1"})
    # edit: prefilled with the stored object; a new label and allocatable are written as a MODIFIED change
    page = editor.get("/clusters/small/nodes/n-0/edit/")
    text = page.context["form"].initial["manifest"]
    assert "name: n-0" in text and "resourceVersion:" in text
    rv = Node.objects.get(cluster=cluster, name="n-0").rv
    _, token = create_token(cluster, "kubectl")

    def kubectl_zone():
        node = editor.get("/clusters/small/k8s/api/v1/nodes/n-0", HTTP_AUTHORIZATION=f"Bearer {token}").json()
        return node["metadata"]["labels"]["topology.kubernetes.io/zone"]
    assert kubectl_zone() == "b"
    text = text.replace("topology.kubernetes.io/zone: b", "topology.kubernetes.io/zone: c").replace("cpu: '4'",
                                                                                                     "cpu: '6'")
    assert editor.post("/clusters/small/nodes/n-0/edit/", {"manifest": text}).status_code == 302
    node = Node.objects.get(cluster=cluster, name="n-0")
    assert (node.zone, node.allocatable["cpu"], node.raw["metadata"]["resourceVersion"]) == ("c", 6000, str(node.rv))
    assert {"type": "MODIFIED", "kind": "nodes"} in _changes(cluster, rv)
    wait_for(lambda: kubectl_zone() == "c", timeout=5, what="the k8s API to serve the edited node")
    # the same text again carries the old resourceVersion: a conflict, as kube answers it
    resp = editor.post("/clusters/small/nodes/n-0/edit/", {"manifest": text})
    assert "has been modified" in errors(resp)[0]
    renamed = text.replace("  name: n-0", "  name: n-9")
    name_line = renamed.splitlines().index("  name: n-9") + 1
    resp = editor.post("/clusters/small/nodes/n-0/edit/", {"manifest": renamed})
    assert errors(resp) == [f"line {name_line}: metadata.name: the name of the object (n-9) does not match the name "
                            "on the URL (n-0)"]
    # delete: a confirmation first, then the node goes
    assert b"Delete node n-0" in editor.get("/clusters/small/nodes/n-0/delete/").content
    assert Node.objects.filter(cluster=cluster, name="n-0").exists()
    assert editor.post("/clusters/small/nodes/n-0/delete/").status_code == 302
    assert not Node.objects.filter(cluster=cluster, name="n-0").exists()
    assert AuditLog.objects.filter(action="node.update").count() == 1


def test_pod_edit_allows_what_kube_allows(cluster, editor):
    page = editor.get("/clusters/small/pods/default/web-0/edit/")
    text = page.context["form"].initial["manifest"]
    assert "status:" not in text and "spec:" in text
    labelled = text.replace("uid: default-web-0", "uid: default-web-0\n  labels:\n    tier: front", 1)
    assert editor.post("/clusters/small/pods/default/web-0/edit/", {"manifest": labelled}).status_code == 302
    pod = Pod.objects.get(cluster=cluster, name="web-0")
    assert pod.labels == {"tier": "front"} and pod.uid == "default-web-0"
    fresh = editor.get("/clusters/small/pods/default/web-0/edit/").context["form"].initial["manifest"]
    resp = editor.post("/clusters/small/pods/default/web-0/edit/",
                       {"manifest": fresh.replace("cpu: 500m", "cpu: '2'")})
    assert errors(resp)[0].startswith("line ") and "spec: Forbidden: pod updates may not change fields" in \
        errors(resp)[0]
    assert Pod.objects.get(cluster=cluster, name="web-0").cpu_m == 500
    resp = editor.post("/clusters/small/pods/default/web-0/edit/",
                       {"manifest": fresh.replace("kind: Pod", "kind: Node")})
    assert errors(resp) == ['line 2: kind: Node in version "v1" cannot be handled as a Pod']
    assert editor.post("/clusters/small/pods/default/web-0/delete/").status_code == 302
    assert not Pod.objects.filter(cluster=cluster, name="web-0").exists()


def test_removing_the_last_gate_makes_a_pod_schedulable(cluster, editor):
    gated = ("apiVersion: v1\nkind: Pod\nmetadata: {name: held}\nspec:\n  schedulingGates: [{name: wait}]\n"
             "  containers: [{name: c, image: 'c:1'}]\n")
    assert editor.post("/clusters/small/new/pod/", {"manifest": gated}).status_code == 302
    assert Pod.objects.get(cluster=cluster, name="held").queue == Pod.GATED
    text = editor.get("/clusters/small/pods/default/held/edit/").context["form"].initial["manifest"]
    resp = editor.post("/clusters/small/pods/default/held/edit/",
                       {"manifest": text.replace("- name: wait", "- name: wait\n  - name: another")})
    assert "spec.schedulingGates: Forbidden: only deletion is allowed" in errors(resp)[0]
    text = text.replace("  schedulingGates:\n  - name: wait\n", "")
    assert editor.post("/clusters/small/pods/default/held/edit/", {"manifest": text}).status_code == 302
    assert Pod.objects.get(cluster=cluster, name="held").queue == Pod.ACTIVE


def test_scenario_upload(cluster, editor):
    listing = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "solo"},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
         "spec": {"containers": [{"name": "c"}]}}]}
    version = Cluster.objects.get(pk=cluster.pk).version
    resp = editor.post("/clusters/small/scenario/",
                       {"file": SimpleUploadedFile("dump.json", json.dumps(listing).encode())})
    assert resp.status_code == 302
    assert list(Node.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["solo"]
    assert Cluster.objects.get(pk=cluster.pk).version == version + 1
    assert b"dump.json: 1 nodes, 0 bound and 1 pending pods loaded" in editor.get(resp["Location"]).content
    resp = editor.post("/clusters/small/scenario/", {"file": SimpleUploadedFile("bad.yaml", b"nodes: [\n")})
    assert resp.status_code == 200 and "bad.yaml: invalid YAML" in resp.context["form"].errors["file"][0]
    bad_node = dict(listing, items=[{"kind": "Node", "metadata": {"name": "Bad_Name"}}])
    resp = editor.post("/clusters/small/scenario/",
                       {"file": SimpleUploadedFile("n.json", json.dumps(bad_node).encode())})
    assert resp.status_code == 200 and "Bad_Name" in resp.context["form"].errors["file"][0]
    assert list(Node.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["solo"]


def test_roles(cluster, api):
    viewer = page_client(make_user("viewer", "viewer"))
    urls = ["/clusters/small/new/pod/", "/clusters/small/new/node/", "/clusters/small/nodes/n-0/edit/",
            "/clusters/small/nodes/n-0/delete/", "/clusters/small/pods/default/web-0/edit/",
            "/clusters/small/pods/default/web-0/delete/", "/clusters/small/scenario/"]
    assert {u: viewer.post(u).status_code for u in urls} == {u: 403 for u in urls}
    assert {u: viewer.get(u).status_code for u in urls} == {u: 403 for u in urls}
    assert b'id="new-pod"' not in viewer.get("/clusters/small/pending/").content
    assert Node.objects.filter(cluster=cluster, name="n-0").exists()
    # a restricted cluster does not exist for an editor who is not its member; its member editor edits it
    Cluster.objects.filter(pk=cluster.pk).update(restricted=True)
    outsider = page_client(make_user("outsider", "editor"))
    assert {u: outsider.get(u).status_code for u in urls} == {u: 404 for u in urls}
    member = make_user("member")
    ClusterMembership.objects.create(cluster=cluster, user=member, role="editor")
    member_client = page_client(member)
    assert b'id="new-pod"' in member_client.get("/clusters/small/pending/").content
    assert member_client.post("/clusters/small/pods/default/web-0/delete/").status_code == 302
    # a real cluster's objects are its API server's: no editor pages
    Cluster.objects.filter(pk=cluster.pk).update(kind=Cluster.REAL, restricted=False)
    assert page_client(make_user("ed2", "editor")).get("/clusters/small/new/pod/").status_code == 404


def test_two_errors_are_two_field_errors_not_a_server_error(cluster, editor):
    """A bad name and a bad cpu at once: both reported at their lines (the second used to be a KeyError, 500)."""
    two = BAD_POD.replace("name: bad", "name: Bad_Name")
    resp = editor.post("/clusters/small/new/pod/", {"manifest": two})
    assert resp.status_code == 200
    found = errors(resp)
    assert len(found) == 2, found
    assert found[0].startswith("line 4: metadata.name: Invalid value: \"Bad_Name\"")
    assert found[1].startswith("line 12: spec.containers[0].resources.requests[cpu]")
    node = ("apiVersion: v1\nkind: Node\nmetadata:\n  name: Bad_Node\nstatus:\n  allocatable: {cpu: abc}\n")
    resp = editor.post("/clusters/small/new/node/", {"manifest": node})
    assert resp.status_code == 200 and len(errors(resp)) == 2, errors(resp)
    assert not Node.objects.filter(cluster=cluster, name="Bad_Node").exists()
