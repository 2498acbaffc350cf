"""404 and 403 pages in the layout with a way back; a restricted cluster's 404 is a missing cluster's; the API
keeps answering JSON."""
from __future__ import annotations

import re

import pytest

from dashboard.models import Cluster

from .conftest import api_client, make_user, page_client, small_scenario

pytestmark = pytest.mark.django_db(transaction=True)

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


@pytest.fixture
def clusters(api):
    """"small" (open to every signed-in user) and "secret" (restricted, no members)."""
    for name, fields in (("small", {}), ("secret", {"restricted": True})):
        assert api.post("/api/clusters/", {"name": name, "tie_break": "name", **fields},
                        format="json").status_code == 201
        assert api.post(f"/api/clusters/{name}/scenario/", {"scenario": small_scenario(2)},
                        format="json").status_code == 201
    return Cluster.objects.order_by("name")


def _page(resp, status):
    assert resp.status_code == status
    assert resp["Content-Type"].startswith("text/html")
    html = resp.content.decode()
    assert 'class="brand"' in html and 'id="error"' in html   # base.html's layout around the message
    return html


def test_missing_pod_page_is_a_404_in_the_cluster_layout(clusters, viewer_user):
    html = _page(page_client(viewer_user).get("/clusters/small/pods/default/no-such-pod/"), 404)
    assert "<h1>Not found</h1>" in html
    assert 'href="/clusters/small/">Back to cluster small</a>' in html and 'href="/">All clusters</a>' in html
    assert 'href="/clusters/small/pending/"' in html   # the cluster's navigation
    assert "no-such-pod" not in html


def test_restricted_cluster_answers_exactly_as_a_missing_one(clusters, viewer_user):
    pages = page_client(viewer_user)
    hidden = _page(pages.get("/clusters/secret/pods/default/web-0/"), 404)
    missing = _page(pages.get("/clusters/nothere/pods/default/web-0/"), 404)
    assert CSRF.sub("", hidden).replace("secret", "X") == CSRF.sub("", missing).replace("nothere", "X")
    assert "secret" not in hidden and "Back to cluster" not in hidden
    assert 'href="/">All clusters</a>' in hidden
    assert "secret" not in _page(pages.get("/clusters/secret/"), 404)
    assert "secret" not in _page(pages.get("/clusters/secret/no/such/page/"), 404)   # no route at all


def test_unrouted_address_under_a_visible_cluster_links_back_to_it(clusters, viewer_user):
    html = _page(page_client(viewer_user).get("/clusters/small/no/such/page/"), 404)
    assert 'href="/clusters/small/">Back to cluster small</a>' in html


def test_viewer_doing_an_editor_post_gets_the_403_page(clusters, viewer_user):
    html = _page(page_client(viewer_user).post("/clusters/small/control/step/"), 403)
    assert "<h1>Not allowed</h1>" in html and "this needs the editor role on cluster small" in html
    assert 'href="/clusters/small/">Back to cluster small</a>' in html
    member = make_user("member", "viewer")   # a member viewer of the restricted cluster: 403, not 404
    Cluster.objects.get(name="secret").memberships.create(user=member, role="viewer")
    html = _page(page_client(member).post("/clusters/secret/control/step/"), 403)
    assert 'href="/clusters/secret/">Back to cluster secret</a>' in html
    # a non-member's POST to it is a 404 that names no cluster
    assert "secret" not in _page(page_client(viewer_user).post("/clusters/secret/control/step/"), 404)


def test_api_paths_still_answer_json(clusters, viewer_user):
    api = api_client(viewer_user)
    bodies = []
    for path in ("/api/no-such-endpoint/", "/api/clusters/secret/", "/api/clusters/nothere/"):
        resp = api.get(path)
        assert resp.status_code == 404 and resp["Content-Type"] == "application/json", path
        bodies.append(resp.json())
    assert bodies[0] == {"detail": "Not found."} and bodies[1] == bodies[2]
    resp = api.post("/api/clusters/small/step/", {"n": 1}, format="json")
    assert resp.status_code == 403 and resp["Content-Type"] == "application/json"


def test_a_server_error_is_the_500_page_in_the_layout(clusters, viewer_user, monkeypatch):
    """An exception in a view: Django's server_error renders templates/500.html with no request context (nothing
    that needs the user or the database); styled, with a skip link and the way back."""
    from dashboard import views

    def fail(*args, **kwargs):
        raise RuntimeError("a bug in a view")
    monkeypatch.setattr(views.queries, "live_state", fail)
    pages = page_client(viewer_user)
    pages.raise_request_exception = False
    html = _page(pages.get("/clusters/small/"), 500)
    assert "<h1>Server error</h1>" in html and "a bug in a view" not in html
    assert '<link rel="stylesheet" href="/static/dashboard/app.css">' in html
    assert '<a class="skip-link" href="#content">Skip to content</a>' in html and '<main id="content"' in html
    assert 'href="/">All clusters</a>' in html and 'href="/profiles/">Profiles</a>' in html
    assert "viewer" not in html and "sign out" not in html   # rendered without the request's user
