"""Roles per cluster (dashboard.access.cluster_role): a restricted cluster does not exist for non-members (pages,
API, websocket, lists), a member viewer reads it, a member editor edits it and nothing else, unrestricted clusters
keep the global roles, admins see everything; membership changes are audited."""
from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from dashboard.access import cluster_role, visible_clusters
from dashboard.models import Cluster, ClusterMembership, Node, Pod
from dashboard.profiles.models import AuditLog, DryRun

from .conftest import api_client, make_user, page_client, session_cookie, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = ("", "pending/", "nodes/", "nodes/n-0/", "events/", "pods/default/web-0/")
API_READS = ("", "nodes/", "pods/", "pods/default/web-0/", "cycles/", "events/")
NODE = {"metadata": {"name": "extra"}, "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def _load(api, name, **fields):
    assert api.post("/api/clusters/", {"name": name, "tie_break": "name", **fields}, format="json").status_code == 201
    assert api.post(f"/api/clusters/{name}/scenario/", {"scenario": small_scenario(2)},
                    format="json").status_code == 201
    return Cluster.objects.get(name=name)


@pytest.fixture
def world(api):
    """Clusters "open" (unrestricted) and "secret" (restricted); memberships granted through the API."""
    users = {"viewer": make_user("viewer", "viewer"), "editor": make_user("editor", "editor"),
             "member_viewer": make_user("member_viewer", "viewer"), "member_editor": make_user("member_editor"),
             "open_editor": make_user("open_editor", "viewer")}
    _load(api, "open")
    _load(api, "secret", restricted=True)
    for user, cluster, role in (("member_viewer", "secret", "viewer"), ("member_editor", "secret", "editor"),
                                ("open_editor", "open", "editor")):
        resp = api.post(f"/api/clusters/{cluster}/members/", {"user": user, "role": role}, format="json")
        assert resp.status_code == 201, resp.content
    return users


def _writes(user, name):
    """Status codes of every kind of cluster write, by page and API."""
    api, pages = api_client(user), page_client(user)
    return {
        "page step": pages.post(f"/clusters/{name}/control/step/").status_code,
        "page start": pages.post(f"/clusters/{name}/control/start/").status_code,
        "api step": api.post(f"/api/clusters/{name}/step/", {"n": 1}, format="json").status_code,
        "api stop": api.post(f"/api/clusters/{name}/stop/").status_code,
        "scenario": api.post(f"/api/clusters/{name}/scenario/", {"scenario": small_scenario(1)},
                             format="json").status_code,
        "add node": api.post(f"/api/clusters/{name}/nodes/", {"manifest": NODE}, format="json").status_code,
        # to a node that is not there: allowed, the answer is 400 (a real bind needs a running loop)
        "api bind": api.post(f"/api/clusters/{name}/pods/default/web-0/binding/",
                             {"target": {"name": "no-such-node"}}, format="json").status_code,
        "page bind": pages.post(f"/clusters/{name}/pods/default/web-0/bind/", {"node": "no-such-node"}).status_code,
        "delete pod": api.delete(f"/api/clusters/{name}/pods/default/web-0/").status_code,
        "connect": pages.get(f"/clusters/{name}/k8s/connect/").status_code,
    }


def _state(name):
    cluster = Cluster.objects.get(name=name)
    return (cluster.desired_state, cluster.version, Node.objects.filter(cluster=cluster).count(),
            Pod.objects.filter(cluster=cluster).count())


def test_restricted_cluster_does_not_exist_for_non_members(world, api):
    profile = api.post("/api/profiles/", {"name": "p"}, format="json").json()["name"]
    for name in ("open", "secret"):
        assert api.patch(f"/api/clusters/{name}/", {"profile": "p"}, format="json").status_code == 200
    text = page_client(world["member_viewer"]).get(f"/profiles/{profile}/").content.decode()
    assert "secret" in text  # version 1 exists now; members see the cluster there
    secret = Cluster.objects.get(name="secret")
    before = _state("secret")
    for who in ("viewer", "editor", "open_editor"):
        user = world[who]
        api, pages = api_client(user), page_client(user)
        assert cluster_role(user, secret) is None
        assert pages.get("/")["Location"] == "/clusters/open/", who  # the only cluster they see
        assert [c["name"] for c in api.get("/api/clusters/").json()["results"]] == ["open"], who
        for page in PAGES:
            assert pages.get(f"/clusters/secret/{page}").status_code == 404, (who, page)
        for url in API_READS + ("members/",):
            assert api.get(f"/api/clusters/secret/{url}").status_code == 404, (who, url)
        codes = _writes(user, "secret")
        assert codes == _writes(user, "nope") == dict.fromkeys(codes, 404), (who, codes)
        for url in ("/profiles/", f"/profiles/{profile}/"):  # the profile's page lists the clusters on it
            text = pages.get(url).content.decode()
            assert "open" in text and "secret" not in text, (who, url)
    # a global editor cannot dry-run a profile against it, nor apply one to it
    editor_pages = page_client(world["editor"])
    assert editor_pages.post(f"/profiles/{profile}/v/1/dry-run/", {"cluster": "secret"}).status_code == 404
    assert editor_pages.post(f"/profiles/{profile}/v/1/apply/", {"cluster": "secret"}).status_code == 404
    assert not DryRun.objects.exists()
    assert _state("secret") == before
    # nor is it in any cluster list of theirs
    assert list(visible_clusters(world["editor"]).values_list("name", flat=True)) == ["open"]


def test_member_viewer_reads_but_does_not_write(world):
    user = world["member_viewer"]
    api, pages = api_client(user), page_client(user)
    assert sorted(c["name"] for c in api.get("/api/clusters/").json()["results"]) == ["open", "secret"]
    for page in PAGES:
        assert pages.get(f"/clusters/secret/{page}").status_code == 200, page
    for url in API_READS:
        assert api.get(f"/api/clusters/secret/{url}").status_code == 200, url
    assert "Step</button>" not in pages.get("/clusters/secret/").content.decode()
    before = _state("secret")
    codes = _writes(user, "secret")
    assert codes == dict.fromkeys(codes, 403), codes
    assert api.get("/api/clusters/secret/members/").status_code == 403  # memberships are the admins' business
    assert pages.get("/clusters/secret/k8s/kubeconfig").status_code == 403  # the token binds pods
    assert _state("secret") == before


def test_member_editor_edits_that_cluster_only(world):
    user = world["member_editor"]  # in no group: a plain viewer elsewhere
    codes = _writes(user, "secret")
    assert codes == {"page step": 302, "page start": 302, "api step": 202, "api stop": 200, "scenario": 201,
                     "add node": 201, "api bind": 400, "page bind": 302, "delete pod": 204, "connect": 200}, codes
    assert "Step</button>" in page_client(user).get("/clusters/secret/").content.decode()
    before = _state("open")
    codes = _writes(user, "open")
    assert codes == dict.fromkeys(codes, 403), codes
    assert "Step</button>" not in page_client(user).get("/clusters/open/").content.decode()
    assert _state("open") == before
    # an editor membership on an unrestricted cluster raises a global viewer there only
    codes = _writes(world["open_editor"], "open")
    assert codes["api step"] == 202 and codes["api bind"] == 400 and codes["connect"] == 200, codes
    # nobody but admins changes a cluster's settings (restricted included) or its members
    api = api_client(user)
    assert api.patch("/api/clusters/secret/", {"restricted": False}, format="json").status_code == 403
    assert api.post("/api/clusters/secret/members/", {"user": "viewer", "role": "editor"},
                    format="json").status_code == 403
    assert Cluster.objects.get(name="secret").restricted


def test_unrestricted_clusters_keep_the_global_roles(world):
    viewer, editor = world["viewer"], world["editor"]
    for page in PAGES:
        assert page_client(viewer).get(f"/clusters/open/{page}").status_code == 200, page
    codes = _writes(viewer, "open")
    assert codes == dict.fromkeys(codes, 403), codes
    codes = _writes(editor, "open")
    assert codes == {"page step": 302, "page start": 302, "api step": 202, "api stop": 200, "scenario": 201,
                     "add node": 201, "api bind": 400, "page bind": 302, "delete pod": 204, "connect": 200}, codes


def test_admin_sees_and_edits_every_cluster(world, admin_user):
    api, pages = api_client(admin_user), page_client(admin_user)
    index = pages.get("/")
    assert index.status_code == 200 and "/clusters/secret/" in index.content.decode()
    assert sorted(c["name"] for c in api.get("/api/clusters/").json()["results"]) == ["open", "secret"]
    assert cluster_role(admin_user, Cluster.objects.get(name="secret")) == "admin"
    for page in PAGES:
        assert pages.get(f"/clusters/secret/{page}").status_code == 200, page
    assert api.post("/api/clusters/secret/step/", {"n": 1}, format="json").status_code == 202
    assert [m["user"] for m in api.get("/api/clusters/secret/members/").json()["results"]] == \
        ["member_editor", "member_viewer"]


def test_membership_changes_through_the_api_are_audited(world, admin_user):
    api = api_client(admin_user)
    secret = Cluster.objects.get(name="secret")
    # (the fixture's scenario load and the member's writes below are audited too)
    memberships = AuditLog.objects.filter(cluster=secret, action__regex=r"^(membership|cluster)\.")
    assert list(memberships.order_by("id").values_list("action", flat=True)) == \
        ["cluster.restrict", "membership.grant", "membership.grant"]
    dup = api.post("/api/clusters/secret/members/", {"user": "member_viewer", "role": "editor"}, format="json")
    assert dup.status_code == 400 and "already has a role" in dup.json()["user"][0]
    assert api.post("/api/clusters/secret/members/", {"user": "nobody"}, format="json").status_code == 400
    assert api.post("/api/clusters/secret/members/", {"user": "viewer", "role": "owner"},
                    format="json").status_code == 400
    resp = api.patch("/api/clusters/secret/members/member_viewer/", {"role": "editor"}, format="json")
    assert resp.status_code == 200 and resp.json()["role"] == "editor"
    assert _writes(world["member_viewer"], "secret")["api step"] == 202
    assert api.delete("/api/clusters/secret/members/member_viewer/").status_code == 204
    assert page_client(world["member_viewer"]).get("/clusters/secret/").status_code == 404
    assert api.patch("/api/clusters/secret/", {"restricted": False}, format="json").status_code == 200
    assert page_client(world["viewer"]).get("/clusters/secret/").status_code == 200
    entries = list(memberships.order_by("id"))
    assert [(e.action, e.user, e.detail) for e in entries[3:]] == [
        ("membership.change", admin_user,
         {"user": "member_viewer", "role": "editor", "was": {"user": "member_viewer", "role": "viewer"}}),
        ("membership.revoke", admin_user, {"user": "member_viewer", "role": "editor"}),
        ("cluster.unrestrict", admin_user, {"restricted": False})]


def test_memberships_inline_on_the_cluster_admin_are_audited(world, admin_user):
    secret = Cluster.objects.get(name="secret")
    pages = page_client(admin_user)
    url = f"/admin/dashboard/cluster/{secret.pk}/change/"
    form = pages.get(url).context["adminform"].form
    data = {name: ("" if value is None else value) for name, value in form.initial.items()
            if name not in ("workload", "heartbeat", "profile")}
    data.update(workload="null", restricted="on", heartbeat_0="", heartbeat_1="")
    rows = list(ClusterMembership.objects.filter(cluster=secret).order_by("id"))
    data.update({"memberships-TOTAL_FORMS": "3", "memberships-INITIAL_FORMS": "2", "memberships-MIN_NUM_FORMS": "0",
                 "memberships-MAX_NUM_FORMS": "1000"})
    for i, row in enumerate(rows):
        data.update({f"memberships-{i}-id": row.pk, f"memberships-{i}-cluster": secret.pk,
                     f"memberships-{i}-user": row.user_id, f"memberships-{i}-role": row.role})
    data["memberships-0-DELETE"] = "on"  # member_viewer out
    data.update({"memberships-2-cluster": secret.pk, "memberships-2-user": world["viewer"].pk,
                 "memberships-2-role": "viewer"})
    resp = pages.post(url, data)
    assert resp.status_code == 302, resp.context["adminform"].form.errors if resp.context else resp
    assert dict(ClusterMembership.objects.filter(cluster=secret).values_list("user__username", "role")) == \
        {"member_editor": "editor", "viewer": "viewer"}
    assert page_client(world["viewer"]).get("/clusters/secret/").status_code == 200
    assert page_client(world["member_viewer"]).get("/clusters/secret/").status_code == 404
    entries = (AuditLog.objects.filter(cluster=secret, user=admin_user, action__startswith="membership.")
               .order_by("id")[2:])  # after the fixture's
    actions = [(e.action, e.detail["user"]) for e in entries]
    assert sorted(actions) == [("membership.grant", "viewer"), ("membership.revoke", "member_viewer")]


@pytest.mark.asyncio
async def test_websocket_refuses_who_may_not_see_the_cluster():
    from dashboard.asgi import application

    def setup():
        cluster = Cluster.objects.create(name="wssecret", restricted=True)
        member, editor = make_user("wsmember"), make_user("wseditor", "editor")
        viewer = make_user("wsviewer", "viewer")
        ClusterMembership.objects.create(cluster=cluster, user=member, role="viewer")
        return session_cookie(member), session_cookie(editor), session_cookie(viewer)
    member, editor, viewer = await database_sync_to_async(setup)()
    origin, host = (b"origin", b"http://localhost"), (b"host", b"localhost")
    for cookie, path in ((editor, "wssecret"), (viewer, "wssecret"), (editor, "wsnope")):
        comm = WebsocketCommunicator(application, f"/ws/clusters/{path}/", headers=[origin, host, (b"cookie", cookie)])
        connected, code = await comm.connect()
        assert not connected and code == 4404, path  # the same answer as for a cluster that is not there
        await comm.disconnect()
    comm = WebsocketCommunicator(application, "/ws/clusters/wssecret/", headers=[origin, host, (b"cookie", member)])
    connected, _ = await comm.connect()
    assert connected
    assert (await comm.receive_json_from(timeout=5))["kind"] == "hello"
    await comm.disconnect()


async def _closed_with(comm) -> int | None:
    """The close code the server sent next (None: the socket got a message instead)."""
    out = await comm.receive_output(timeout=5)
    return out.get("code") if out["type"] == "websocket.close" else None


@pytest.mark.asyncio
async def test_open_websockets_close_when_access_is_revoked():
    """A revoked membership, a deactivated user and a newly restricted cluster close the sockets that may no longer
    see the cluster (4404, as for a cluster that is not there) and no other socket."""
    from dashboard.asgi import application
    from dashboard.services import memberships

    def setup():
        secret, open_ = Cluster.objects.create(name="wsrevoke", restricted=True), Cluster.objects.create(name="wsopen")
        member, other, outsider = make_user("wsmember"), make_user("wsother"), make_user("wsoutsider")
        ClusterMembership.objects.create(cluster=secret, user=member, role="viewer")
        ClusterMembership.objects.create(cluster=secret, user=other, role="viewer")
        ClusterMembership.objects.create(cluster=open_, user=other, role="viewer")
        return {u.username: session_cookie(u) for u in (member, other, outsider)}
    cookies = await database_sync_to_async(setup)()
    origin, host = (b"origin", b"http://localhost"), (b"host", b"localhost")

    async def open_socket(user, cluster):
        comm = WebsocketCommunicator(application, f"/ws/clusters/{cluster}/",
                                     headers=[origin, host, (b"cookie", cookies[user])])
        connected, _ = await comm.connect()
        assert connected
        assert (await comm.receive_json_from(timeout=5))["kind"] == "hello"
        return comm
    member_secret = await open_socket("wsmember", "wsrevoke")
    member_open = await open_socket("wsmember", "wsopen")
    other_secret = await open_socket("wsother", "wsrevoke")
    outsider_open = await open_socket("wsoutsider", "wsopen")

    def revoke():
        membership = ClusterMembership.objects.get(cluster__name="wsrevoke", user__username="wsmember")
        memberships.delete(membership, None)
    await database_sync_to_async(revoke)()
    assert await _closed_with(member_secret) == 4404
    for comm in (member_open, other_secret, outsider_open):
        assert await comm.receive_nothing(timeout=0.5)

    def deactivate():
        from django.contrib.auth.models import User
        user = User.objects.get(username="wsother")
        user.is_active = False
        user.save()
    await database_sync_to_async(deactivate)()
    assert await _closed_with(other_secret) == 4404
    assert await member_open.receive_nothing(timeout=0.5) and await outsider_open.receive_nothing(timeout=0.1)

    def restrict():
        cluster = Cluster.objects.get(name="wsopen")
        cluster.restricted = True
        cluster.save()
        memberships.record_restricted(cluster, None)
    await database_sync_to_async(restrict)()
    assert await _closed_with(member_open) == 4404
    assert await _closed_with(outsider_open) == 4404
    for comm in (member_secret, member_open, other_secret, outsider_open):
        await comm.disconnect()
