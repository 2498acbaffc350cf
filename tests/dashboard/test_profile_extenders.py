"""Who may save a profile that names a scheduler extender, and which URLs it may name, on every path that saves one:
the profile page (form and YAML), the profiles API, scenario uploads (their config becomes a profile)."""
from __future__ import annotations

import pytest

from dashboard.models import Cluster, SchedulerProfile
from dashboard.profiles import services

from .conftest import api_client, make_user, page_client
from .test_profiles import API, fit_doc

pytestmark = pytest.mark.django_db(transaction=True)
ALLOWED = "http://ext.example:8080/scheduler"


def with_extender(url=ALLOWED, **ext):
    return fit_doc(extra={"extenders": [dict({"urlPrefix": url, "filterVerb": "filter"}, **ext)]})


def yaml_of(doc) -> str:
    from dashboard.profiles.forms import dump_yaml
    return dump_yaml(doc)


@pytest.fixture
def allow(settings):
    """SCHEDSCOPE_EXTENDER_ALLOW set to ``ALLOWED`` (settings is pytest-django's per-test copy)."""
    settings.SCHEDSCOPE = dict(settings.SCHEDSCOPE, EXTENDER_ALLOW=(ALLOWED,))


def page_save(user, doc):
    profile = SchedulerProfile.objects.get_or_create(name="p", defaults={"document": fit_doc()})[0]
    return page_client(user).post(f"/profiles/{profile.name}/", {"source": "yaml", "yaml": yaml_of(doc)}), profile


def api_save(user, doc, name="q"):
    return api_client(user).post("/api/profiles/", {"name": name, "document": doc}, format="json")


def scenario_load(user, doc):
    Cluster.objects.get_or_create(name="sc", defaults={"tie_break": "name"})
    return api_client(user).post("/api/clusters/sc/scenario/", {"scenario": {
        "name": "s", "nodes": [], "pending_pods": [], "config": doc}}, format="json")


def test_without_an_allow_list_only_admins_may_name_an_extender(admin_user):
    editor = make_user("ed", "editor")
    resp, profile = page_save(editor, with_extender())
    assert resp.status_code == 400 and b"only admins may save a profile that names an extender" in resp.content
    assert profile.versions.count() == 1
    resp = api_save(editor, with_extender())
    assert resp.status_code == 400 and "only admins may save" in str(resp.json())
    assert not SchedulerProfile.objects.filter(name="q").exists()
    resp = scenario_load(editor, with_extender())
    assert resp.status_code == 400 and "only admins may save" in str(resp.json())
    with pytest.raises(services.Invalid, match="only admins may save"):   # a roll back is a save too
        services.save_version(profile, with_extender(), editor)
    # an editor's profiles without extenders, and an admin's with them, are saved
    assert page_save(editor, fit_doc("MostAllocated"))[0].status_code == 302
    assert page_save(admin_user, with_extender())[0].status_code == 302
    assert api_save(admin_user, with_extender()).status_code == 201
    assert scenario_load(admin_user, with_extender()).status_code == 201


@pytest.mark.parametrize("url,problem", [
    ("http://ext.example:8080/scheduler-evil", "not under an allowed extender URL prefix"),
    ("http://ext.example:8080.evil.io/scheduler", "invalid URL: Port could not be cast"),
    ("http://ext.example:8080/scheduler/../admin", "has a . or .. segment"),
    ("file:///etc", 'unsupported protocol scheme "file"'),
    ("http://169.254.169.254/latest", "link-local or a cloud metadata address"),
    ("http://[fd00:ec2::254]/", "link-local or a cloud metadata address"),
])
def test_with_an_allow_list_editors_may_name_allowed_urls_and_no_one_others(allow, admin_user, url, problem):
    editor = make_user("ed", "editor")
    assert page_save(editor, with_extender())[0].status_code == 302
    assert api_save(editor, with_extender(), "ok").status_code == 201
    for user in (editor, admin_user):
        resp, _ = page_save(user, with_extender(url))
        assert resp.status_code == 400 and problem.replace('"', "&quot;").encode() in resp.content
        resp = api_save(user, with_extender(url))
        assert resp.status_code == 400 and problem in str(resp.json())
        assert scenario_load(user, with_extender(url)).status_code == 400


def test_a_verb_cannot_leave_the_allowed_prefix(allow, admin_user):
    """The URL called is urlPrefix + "/" + verb: the verb is checked with it."""
    resp = api_save(admin_user, with_extender(filterVerb="../../admin/filter"))
    assert resp.status_code == 400 and "extenders[0].filterVerb" in str(resp.json())


def test_metadata_addresses_are_refused_for_admins_without_an_allow_list(admin_user):
    for url in ("http://169.254.169.254/", "http://2852039166/", "gopher://127.0.0.1:6379/"):
        assert api_save(admin_user, with_extender(url)).status_code == 400, url
    assert api_save(admin_user, dict(API)).status_code == 201


def test_saving_an_unchanged_document_makes_no_version():
    """The editor saves a new version only when the document changed (form or YAML, whatever its layout)."""
    editor = make_user("no-change-editor", "editor")
    profile = SchedulerProfile.objects.create(name="p", document=fit_doc())
    latest = services.ensure_versions(profile)
    c = page_client(editor)
    r = c.post("/profiles/p/", {"source": "yaml", "yaml": yaml_of(fit_doc())}, follow=True)
    assert r.status_code == 200 and profile.versions.count() == 1
    assert f"nothing changed: version {latest.number} stays the latest" in r.content.decode()
    r = c.post("/profiles/p/", {"source": "yaml", "yaml": yaml_of(fit_doc(extra={"percentageOfNodesToScore": 50}))})
    assert r.status_code == 302 and profile.versions.count() == 2
