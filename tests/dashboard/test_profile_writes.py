"""Every write of a scheduler profile (create, save a version, roll back, apply, delete), by page and API, as each
identity: it needs the editor role on every cluster that uses the profile, creates a version where the document
changes and an audit entry, and nothing a user is told names a cluster they cannot see."""
from __future__ import annotations

import pytest

from dashboard.models import Cluster, ClusterMembership, SchedulerProfile
from dashboard.profiles import services
from dashboard.profiles.models import ActiveVersion, AuditLog, ProfileVersion

from .conftest import api_client, make_user, page_client

pytestmark = pytest.mark.django_db
API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
EXTENDER = dict(API, extenders=[{"urlPrefix": "http://127.0.0.1:9/ext", "filterVerb": "filter"}])
HIDDEN = "secretcluster"


def doc(strategy="LeastAllocated"):
    return dict(API, profiles=[{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}]}])


@pytest.fixture
def shared():
    """Profile "shared" (v1 active) used by cluster "open" and by the restricted cluster ``HIDDEN``; users: a
    global editor without membership, one who is also an editor member of ``HIDDEN``, a viewer, an admin."""
    profile = SchedulerProfile.objects.create(name="shared", document=doc())
    services.ensure_versions(profile)
    for name, restricted in (("open", False), (HIDDEN, True)):
        Cluster.objects.create(name=name, restricted=restricted, profile=profile)
    member = make_user("member", "editor")
    ClusterMembership.objects.create(cluster=Cluster.objects.get(name=HIDDEN), user=member, role="editor")
    admin = make_user("root")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    return {"profile": profile, "editor": make_user("editor", "editor"), "member": member,
            "viewer": make_user("viewer", "viewer"), "admin": admin}


def _state(profile):
    """What the clusters run and what was recorded: document, active version, versions, audit entries, clusters."""
    profile = SchedulerProfile.objects.filter(pk=profile.pk).first()
    if profile is None:
        return None
    return (profile.document, services.active_version(profile).number, profile.versions.count(),
            AuditLog.objects.count(), sorted(Cluster.objects.filter(profile=profile).values_list("name", flat=True)))


def _attempts(user, profile):
    """Status code and body of every kind of profile write, by page and API (each with a new document)."""
    api, pages, name = api_client(user), page_client(user), profile.name
    answers = {
        "page save": pages.post(f"/profiles/{name}/", {"source": "yaml", "yaml": str(doc("MostAllocated"))}),
        "page apply": pages.post(f"/profiles/{name}/v/1/apply/"),
        "page apply to open": pages.post(f"/profiles/{name}/v/1/apply/", {"cluster": "open"}),
        "page rollback": pages.post(f"/profiles/{name}/v/1/rollback/"),
        "api version": api.post(f"/api/profiles/{name}/versions/", {"document": EXTENDER}, format="json"),
        "api apply": api.post(f"/api/profiles/{name}/versions/1/apply/", {}, format="json"),
        "api rollback": api.post(f"/api/profiles/{name}/versions/1/rollback/"),
        "api delete": api.delete(f"/api/profiles/{name}/"),
    }
    return {k: (r.status_code, r.content.decode()) for k, r in answers.items()}


def test_an_editor_without_membership_changes_no_profile_a_restricted_cluster_uses(shared):
    profile, before = shared["profile"], _state(shared["profile"])
    answers = _attempts(shared["editor"], profile)
    assert {k: code for k, (code, _body) in answers.items()} == dict.fromkeys(answers, 403), answers
    for what, (_code, body) in answers.items():
        assert HIDDEN not in body, what
    assert "needs the editor role on every cluster that uses it" in answers["api version"][1]
    assert _state(profile) == before
    # the editor page offers them no save, apply or rollback, and names only the cluster they see
    page = page_client(shared["editor"]).get(f"/profiles/{profile.name}/").content.decode()
    assert "open" in page and HIDDEN not in page
    assert 'id="save-yaml"' not in page and 'class="apply"' not in page and 'class="rollback"' not in page
    assert 'class="dry-run"' in page
    # an admin sees and may do it all
    assert 'id="save-yaml"' in page_client(shared["admin"]).get(f"/profiles/{profile.name}/").content.decode()


def test_viewers_and_anonymous_users_change_no_profile(shared):
    profile, before = shared["profile"], _state(shared["profile"])
    answers = _attempts(shared["viewer"], profile)
    assert {k: code for k, (code, _body) in answers.items()} == dict.fromkeys(answers, 403), answers
    anon = api_client()
    assert anon.post("/api/profiles/shared/versions/", {"document": EXTENDER}, format="json").status_code == 401
    assert anon.delete("/api/profiles/shared/").status_code == 401
    assert _state(profile) == before


def test_an_editor_of_every_cluster_using_it_saves_applies_and_is_audited(shared):
    profile, member = shared["profile"], shared["member"]
    api = api_client(member)
    made = api.post("/api/profiles/shared/versions/", {"document": doc("MostAllocated"), "comment": "most"},
                    format="json")
    assert made.status_code == 201, made.content
    assert (made.json()["number"], made.json()["author"], made.json()["active"]) == (2, "member", False)
    assert SchedulerProfile.objects.get(pk=profile.pk).document == doc()   # saved, not applied
    applied = api.post("/api/profiles/shared/versions/2/apply/", {}, format="json")
    assert applied.status_code == 200 and applied.json() == {"version": 2, "clusters": ["open", HIDDEN]}
    assert SchedulerProfile.objects.get(pk=profile.pk).document == doc("MostAllocated")
    assert api.get("/api/profiles/shared/").json()["active_version"] == 2
    assert [v["active"] for v in api.get("/api/profiles/shared/versions/").json()["results"]] == [True, False]
    rolled = api.post("/api/profiles/shared/versions/1/rollback/")
    assert rolled.status_code == 201 and rolled.json()["number"] == 3
    page = page_client(member).post(f"/profiles/{profile.name}/v/3/apply/", follow=True).content.decode()
    assert f"version 3 applied to open, {HIDDEN}" in page
    entries = list(AuditLog.objects.filter(profile=profile).order_by("id")
                   .values_list("action", "user__username", "version__number"))
    assert entries == [("save", "member", 2), ("apply", "member", 2),
                       ("save", "member", 3), ("rollback", "member", 3), ("apply", "member", 3)]


def test_the_api_document_is_read_only_and_every_api_write_is_versioned_and_audited(shared):
    admin = api_client(shared["admin"])
    for method in ("put", "patch"):
        resp = getattr(admin, method)("/api/profiles/shared/", {"document": EXTENDER}, format="json")
        assert resp.status_code == 405, (method, resp.content)
    assert SchedulerProfile.objects.get(name="shared").document == doc()
    made = admin.post("/api/profiles/", {"name": "fresh", "document": doc("MostAllocated")}, format="json")
    assert made.status_code == 201 and made.json()["active_version"] == 1
    fresh = SchedulerProfile.objects.get(name="fresh")
    assert ActiveVersion.objects.get(profile=fresh).version.document == fresh.document == doc("MostAllocated")
    assert AuditLog.objects.filter(profile=fresh, action="create", user=shared["admin"]).exists()
    bad = admin.post("/api/profiles/shared/versions/", {"document": dict(API, percentageOfNodesToScore=200)},
                     format="json")
    assert bad.status_code == 400 and "percentageOfNodesToScore" in bad.json()["document"][0]
    assert admin.post("/api/profiles/shared/versions/", {"document": "x"}, format="json").status_code == 400
    assert ProfileVersion.objects.filter(profile=shared["profile"]).count() == 1
    # a hidden apply target is a 404, as anywhere else
    editor = api_client(shared["editor"])
    lone = editor.post("/api/profiles/", {"name": "lone"}, format="json")
    assert lone.status_code == 201
    for name in (HIDDEN, "nope"):
        missing = editor.post("/api/profiles/lone/versions/1/apply/", {"cluster": name}, format="json")
        assert (missing.status_code, missing.json()) == (404, {"detail": f"no cluster named {name!r}"})


def test_deleting_a_profile_needs_every_cluster_and_is_audited(shared):
    assert api_client(shared["editor"]).delete("/api/profiles/shared/").status_code == 403
    assert Cluster.objects.filter(profile=shared["profile"]).count() == 2
    assert api_client(shared["member"]).delete("/api/profiles/shared/").status_code == 204
    assert not SchedulerProfile.objects.filter(name="shared").exists()
    assert not Cluster.objects.exclude(profile=None).exists()   # both run kube's defaults now
    entry = AuditLog.objects.get(action="delete")
    assert entry.user == shared["member"] and entry.detail == {"profile": "shared", "clusters": ["open", HIDDEN]}


def test_the_admin_shows_profiles_and_versions_but_writes_neither(shared):
    admin, profile = page_client(shared["admin"]), shared["profile"]
    before = _state(profile)
    url = f"/admin/dashboard/schedulerprofile/{profile.pk}/change/"
    assert admin.get(url).status_code == 200
    assert admin.post(url, {"name": "shared", "document": '{"extenders": []}'}).status_code == 403
    version = ProfileVersion.objects.get(profile=profile, number=1)
    assert admin.post(f"/admin/profiles/profileversion/{version.pk}/change/",
                      {"profile": profile.pk, "number": 1, "document": "{}"}).status_code == 403
    assert admin.post(f"/admin/dashboard/schedulerprofile/{profile.pk}/delete/", {"post": "yes"}).status_code == 403
    assert _state(profile) == before


def test_a_scenario_load_changes_no_profile_a_hidden_cluster_uses(shared, settings):
    """A scenario's configuration becomes a profile named for the cluster and the scenario (services.
    scenario_profile_name): when that profile exists and a cluster the loader cannot edit uses it, the load is
    refused; otherwise it is a version, applied and audited. (The extender it names is under the deployment's allow
    list, so editors may name it.)"""
    settings.SCHEDSCOPE = dict(settings.SCHEDSCOPE, EXTENDER_ALLOW=("http://127.0.0.1:9",))
    open_cluster = Cluster.objects.get(name="open")
    taken = SchedulerProfile.objects.create(name=services.scenario_profile_name(open_cluster, "x"), document=doc())
    services.ensure_versions(taken)
    Cluster.objects.filter(name=HIDDEN).update(profile=taken)
    scenario = {"name": "x", "config": EXTENDER, "nodes": [], "pods": [], "pending": []}
    editor = api_client(shared["editor"])
    before = _state(taken)
    refused = editor.post("/api/clusters/open/scenario/", {"scenario": scenario}, format="json")
    assert refused.status_code == 403 and HIDDEN not in refused.content.decode()
    assert _state(taken) == before
    # a profile of its own: created as version 1, applied to the cluster, audited
    loaded = editor.post("/api/clusters/open/scenario/", {"scenario": dict(scenario, name="y")}, format="json")
    assert loaded.status_code == 201, loaded.content
    own = SchedulerProfile.objects.get(name=services.scenario_profile_name(open_cluster, "y"))
    assert own.document == EXTENDER and services.active_version(own).number == 1
    assert Cluster.objects.get(name="open").profile == own
    assert list(AuditLog.objects.filter(profile=own).order_by("id").values_list("action", "user__username")) == [
        ("create", "editor"), ("apply", "editor")]
