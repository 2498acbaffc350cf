"""The profile editor over kube's effective configuration: what it shows of a document (every plugin kube runs, in
order, with weights and defaults), the minimal documents it writes back (checked by reading them again as kube
does), Score weights as kube treats them, out-of-tree plugins, the built-in default, addresses by name."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from dashboard.models import Cluster, SchedulerProfile
from dashboard.profiles import effective, services, validate
from dashboard.profiles.forms import ProfileEditorForm
from scheduler_core.config.defaults import DEFAULT_MULTIPOINT
from scheduler_core.plugins.registry import build_registry

pytestmark = pytest.mark.django_db
DOC = services.BUILTIN_DOCUMENT


def post(form, **changes):
    data = form.data_of_initial()
    data["source"] = "form"
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def saved(doc, **changes):
    """The document the form writes after ``changes`` (None: a switch turned off)."""
    form = ProfileEditorForm(doc)
    bound = ProfileEditorForm(doc, post(form, **changes))
    assert bound.is_valid(), bound.errors
    return bound.document


def running(doc, set_name):
    return effective.describe(doc)[0].point(set_name).running


def plugins_of(doc):
    return doc["profiles"][0].get("plugins")


def test_the_default_shows_every_plugin_kube_runs_in_order_with_weights():
    view = effective.describe(DOC)[0]
    score = view.point("score")
    weights = {n: w for n, w in DEFAULT_MULTIPOINT}
    assert score.running == ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                             "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation",
                             "ImageLocality"]
    for row in score.rows:
        assert (row.weight, row.default_weight, row.changed) == (weights[row.name], weights[row.name], False)
    assert {r.name: r.runs_weight for r in score.rows}["VolumeBinding"] == 1   # kube runs 0 as 1
    assert view.point("filter").running[:3] == ["NodeUnschedulable", "NodeName", "TaintToleration"]
    assert view.point("queueSort").running == ["PrioritySort"]
    assert "CinderLimits" in view.point("filter").addable   # registered, not in the v1.30 defaults
    assert view.args["NodeResourcesFit"][0]["scoringStrategy"]["type"] == "LeastAllocated"
    form = ProfileEditorForm(DOC)
    assert form.initial["p0.args.NodeResourcesFit.scoringStrategy.resources"] == \
        "[{name: cpu, weight: 1}, {name: memory, weight: 1}]"
    assert form.initial["p0.score.TaintToleration.weight"] == 3
    assert saved(DOC) == DOC


def test_a_weight_is_saved_as_kube_users_write_it_and_read_back():
    doc = saved(DOC, **{"p0.score.NodeResourcesFit.weight": "5"})
    assert plugins_of(doc) == {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}
    score = effective.describe(doc)[0].point("score")
    row = next(r for r in score.rows if r.name == "NodeResourcesFit")
    assert (row.weight, row.runs_weight, row.default_weight, row.changed) == (5, 5, 1, True)
    assert score.running[0] == "NodeResourcesFit"   # kube runs a re-weighted plugin first; Score order changes nothing
    assert saved(doc, **{"p0.score.NodeResourcesFit.weight": "1"}) == DOC


def test_switches_disable_and_enable_again():
    doc = saved(DOC, **{"p0.filter.NodePorts.on": None, "p0.preFilter.NodePorts.on": None,
                        "p0.score.ImageLocality.on": None})
    assert plugins_of(doc) == {"preFilter": {"disabled": [{"name": "NodePorts"}]},
                               "filter": {"disabled": [{"name": "NodePorts"}]},
                               "score": {"disabled": [{"name": "ImageLocality"}]}}
    assert "NodePorts" not in running(doc, "filter") and "ImageLocality" not in running(doc, "score")
    row = next(r for r in effective.describe(doc)[0].point("filter").rows if r.name == "NodePorts")
    assert (row.on, row.changed) == (False, True)
    again = saved(doc, **{"p0.filter.NodePorts.on": "on", "p0.preFilter.NodePorts.on": "on",
                          "p0.score.ImageLocality.on": "on"})
    assert again == DOC


def _moved(doc, set_name, order):
    form = ProfileEditorForm(doc)
    changes = {f"p0.{set_name}.{name}.pos": str(k + 1) for k, name in enumerate(order)}
    changes[f"p0.{set_name}.moved"] = "True"
    bound = ProfileEditorForm(doc, post(form, **changes))
    assert bound.is_valid(), bound.errors
    return bound.document


def test_moves_keep_the_order_with_the_fewest_entries():
    filters = running(DOC, "filter")
    first = ["TaintToleration"] + [n for n in filters if n != "TaintToleration"]
    doc = _moved(DOC, "filter", first)
    assert plugins_of(doc) == {"filter": {"enabled": [{"name": "TaintToleration"}]}}   # an override runs first
    assert running(doc, "filter") == first
    last = [n for n in filters if n != "NodeUnschedulable"] + ["NodeUnschedulable"]
    doc = _moved(DOC, "filter", last)
    assert plugins_of(doc)["filter"] == {"enabled": [{"name": n} for n in last[:-1]]}   # all but one run first
    assert running(doc, "filter") == last
    view = effective.describe(doc)[0].point("filter")
    assert view.order_changed and [r.name for r in view.rows] == last
    scores = running(DOC, "score")
    doc = _moved(DOC, "score", scores[::-1])
    assert running(doc, "score") == scores[::-1]
    weights = {n: w for n, w in DEFAULT_MULTIPOINT}
    assert all(e["weight"] == weights[e["name"]] for e in plugins_of(doc)["score"]["enabled"])   # weights kept
    assert all(r.weight == weights[r.name] for r in effective.describe(doc)[0].point("score").rows)


def test_args_hold_only_what_defaulting_does_not_fill_in():
    doc = saved(DOC, **{"p0.args.NodeResourcesFit.scoringStrategy.type": "MostAllocated",
                        "p0.args.InterPodAffinity.ignorePreferredTermsOfExistingPods": "on"})
    assert {pc["name"]: pc["args"] for pc in doc["profiles"][0]["pluginConfig"]} == {
        "NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}},
        "InterPodAffinity": {"ignorePreferredTermsOfExistingPods": True}}
    form = ProfileEditorForm(doc)
    fit = next(a for a in form.layout()["profiles"][0]["args"] if a["plugin"] == "NodeResourcesFit")
    assert fit["changed"] and [f["changed"] for f in fit["fields"]][:2] == [True, False]
    back = saved(doc, **{"p0.args.NodeResourcesFit.scoringStrategy.type": "LeastAllocated",
                         "p0.args.InterPodAffinity.ignorePreferredTermsOfExistingPods": None})
    assert back == DOC


def test_weights_as_kube_treats_them():
    """ValidateKubeSchedulerConfiguration (v1.30) checks no plugin weight. NewFramework runs 0 as 1 (not as the
    default), and its overflow check, whose int64 sum wraps after a negative weight, refuses -5."""
    zero = saved(DOC, **{"p0.score.TaintToleration.weight": "0"})
    assert plugins_of(zero) == {"score": {"enabled": [{"name": "TaintToleration", "weight": 0}]}}
    assert validate.check(zero) == []
    row = next(r for r in effective.describe(zero)[0].point("score").rows if r.name == "TaintToleration")
    assert (row.weight, row.runs_weight) == (0, 1)
    score = ProfileEditorForm(zero).layout()["profiles"][0]["score"]
    note = next(r["note"] for r in score["rows"] if r["row"].name == "TaintToleration")
    assert note == "kube runs a weight of 0 as 1"
    form = ProfileEditorForm(DOC)
    negative = ProfileEditorForm(DOC, post(form, **{"p0.score.ImageLocality.weight": "-5"}))
    assert not negative.is_valid()
    assert negative.errors["p0.score.ImageLocality.weight"] == [
        "creating profile for scheduler name default-scheduler: total score of Score plugins could overflow"]


def test_out_of_tree_plugins_are_picked_from_the_registered_ones(monkeypatch):
    monkeypatch.setattr(validate, "_REGISTRY", build_registry(extra=["examples.gpu_plugin:GPUAware"]))
    effective._points_of.cache_clear()
    try:
        view = effective.describe(DOC)[0]
        assert "GPUAware" in view.point("score").addable and "GPUAware" in view.point("filter").addable
        assert "GPUAware" not in view.point("bind").addable
        doc = saved(DOC, **{"p0.filter.add": "GPUAware", "p0.preFilter.add": "GPUAware"})
        assert plugins_of(doc) == {"preFilter": {"enabled": [{"name": "GPUAware"}]},
                                   "filter": {"enabled": [{"name": "GPUAware"}]}}
        row = effective.describe(doc)[0].point("filter").rows[-1]
        assert (row.name, row.on, row.in_tree, row.changed) == ("GPUAware", True, False, True)
        form = ProfileEditorForm(doc)
        assert "GPUAware" not in dict(form.fields["p0.filter.add"].choices)
        first = ["GPUAware"] + running(DOC, "filter")   # a plugin multiPoint does not run, first: only "*" does it
        front = _moved(doc, "filter", first)
        assert plugins_of(front)["filter"] == {"enabled": [{"name": n} for n in first], "disabled": [{"name": "*"}]}
        assert running(front, "filter") == first
        assert saved(doc, **{"p0.filter.GPUAware.on": None, "p0.preFilter.GPUAware.on": None}) == DOC
    finally:
        monkeypatch.undo()
        effective._points_of.cache_clear()


def test_untouched_units_keep_what_the_yaml_wrote():
    """A set written with "*" by hand keeps its order when another point is edited."""
    doc = {**DOC, "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {
        "enabled": [{"name": "NodeName"}, {"name": "NodeUnschedulable"}, {"name": "NodeResourcesFit"}],
        "disabled": [{"name": "*"}]}}}]}
    out = saved(doc, **{"p0.score.ImageLocality.on": None})
    assert out["profiles"][0]["plugins"]["filter"] == doc["profiles"][0]["plugins"]["filter"]
    assert running(out, "filter") == ["NodeName", "NodeUnschedulable", "NodeResourcesFit"]


# -- pages ------------------------------------------------------------------------------------------------
def _editor():
    user = User.objects.create_user("ed", password="pw")
    user.groups.add(Group.objects.get_or_create(name="editor")[0])
    c = Client(HTTP_HOST="localhost")
    c.force_login(user)
    return c


def test_list_shows_the_builtin_defaults_and_what_runs_them():
    c = _editor()
    Cluster.objects.create(name="plain")
    Cluster.objects.create(name="older", kube_version="1.30")
    page = c.get("/profiles/").content.decode()
    assert "v1.36 default" in page and "v1.30 default" in page and "no profiles yet" not in page
    rows = {r["name"]: [cl.name for cl in r["clusters"]] for r in c.get("/profiles/").context["rows"]}
    assert rows == {"v1.36 default": ["plain"], "v1.30 default": ["older"]}
    builtin = c.get("/profiles/v1.30-default/")
    assert builtin.status_code == 200 and builtin.context["form"].fields["p0.score.TaintToleration.weight"].disabled
    assert b"Copy to edit" in builtin.content and b'id="save-form"' not in builtin.content
    assert b"What kube-scheduler v1.30.0 runs" in builtin.content
    latest = c.get("/profiles/v1.36-default/")
    assert b"What kube-scheduler v1.36.2 runs" in latest.content
    filters = [r.name for r in latest.context["form"].views[0].point("filter").rows if r.on]
    assert "NodeDeclaredFeatures" in filters and "EBSLimits" not in filters
    assert "EBSLimits" in [r.name for r in builtin.context["form"].views[0].point("filter").rows if r.on]
    resp = c.post("/profiles/", {"name": "mine"})
    assert resp["Location"] == "/profiles/mine/"
    mine = SchedulerProfile.objects.get(name="mine")
    assert (mine.document, mine.kube_version) == (DOC, "1.36")
    assert c.post("/profiles/", {"name": "old", "kube_version": "1.30"}).status_code == 302
    assert SchedulerProfile.objects.get(name="old").kube_version == "1.30"
    assert c.post("/profiles/old/copy/", {"name": "old-copy"}).status_code == 302
    assert SchedulerProfile.objects.get(name="old-copy").kube_version == "1.30"
    for reserved in ("v1.30-default", "v1.36-default"):
        assert c.post("/profiles/", {"name": reserved}).status_code == 302
        assert not SchedulerProfile.objects.filter(name=reserved).exists()
    copy = c.post("/profiles/mine/copy/", {"name": "mine 2/b"})
    assert copy["Location"] == "/profiles/mine%25202%252Fb/"
    assert c.get(copy["Location"]).context["profile"].name == "mine 2/b"


def test_profiles_are_addressed_by_name_and_old_numbers_redirect():
    c = _editor()
    profile = services.create("named", DOC, None)
    assert c.get("/profiles/named/").status_code == 200
    old = c.get(f"/profiles/{profile.pk}/v/1/?against=1")
    assert (old.status_code, old["Location"]) == (301, "/profiles/named/v/1/?against=1")
    kept = c.post(f"/profiles/{profile.pk}/v/1/rollback/")
    assert (kept.status_code, kept["Location"]) == (308, "/profiles/named/v/1/rollback/")
    assert c.get("/profiles/no-such/").status_code == 404
    assert c.get("/profiles/99999999999999999999/").status_code == 404


def test_convert_keeps_form_and_yaml_in_sync():
    c = _editor()
    services.create("sync", DOC, None)
    form = c.get("/profiles/sync/").context["form"]
    out = c.post("/profiles/sync/convert/", post(form, **{"p0.score.NodeAffinity.weight": "7"})).json()
    assert out["yaml"].startswith("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    assert "    score:\n      enabled:\n      - name: NodeAffinity\n        weight: 7\n" in out["yaml"] and out["valid"]
    assert 'name="p0.score.NodeAffinity.weight" value="7"' in out["html"]
    back = c.post("/profiles/sync/convert/", {"source": "yaml", "yaml": out["yaml"]}).json()
    assert 'name="p0.score.NodeAffinity.weight" value="7"' in back["html"]
    assert re.search(r'<tr class="[^"]*changed[^"]*" data-plugin="NodeAffinity"', back["html"])


YAML_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_convert_answers_kubes_objections_as_one_types_and_never_a_400():
    c = _editor()
    services.create("typed", DOC, None)
    broken = c.post("/profiles/typed/convert/", {"source": "yaml", "yaml": YAML_HEAD + "profiles: [1"})
    assert broken.status_code == 200 and not broken.json()["valid"]
    assert broken.json()["problems"][0].startswith("not valid YAML: ")
    twice = c.post("/profiles/typed/convert/", {"source": "yaml", "yaml": YAML_HEAD + "profiles:\n"
                                                "- schedulerName: x\n- schedulerName: x\n"}).json()
    assert not twice["valid"] and twice["problems"] == [
        'profiles[1].schedulerName: Duplicate value: {} — "x" is the schedulerName of profiles[0] too']
    bogus = c.post("/profiles/typed/convert/", {"source": "yaml", "yaml": YAML_HEAD + "profiles:\n- pluginConfig:\n"
                                                "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                                                "        type: Bogus\n"}).json()
    assert bogus["problems"] == ['initializing plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: '
                                 '"Bogus": supported values: "LeastAllocated", "MostAllocated", '
                                 '"RequestedToCapacityRatio"']
    assert '<option value="Bogus" selected>Bogus</option>' in bogus["html"]
    fine = c.post("/profiles/typed/convert/", {"source": "yaml", "yaml": YAML_HEAD}).json()
    assert fine["valid"] and fine["problems"] == []


def test_an_invalid_save_stays_on_its_tab_with_every_error_listed_at_the_top():
    c = _editor()
    services.create("tabs", DOC, None)
    page = c.post("/profiles/tabs/", {"source": "yaml", "yaml": YAML_HEAD + "profiles:\n- pluginConfig:\n"
                                      "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                                      "        type: Bogus\n"})
    assert page.status_code == 400
    form, html = page.context["form"], page.content.decode()
    assert form["source"].value() == "yaml"
    assert "Select a valid choice" not in html
    banner = html[html.index('id="form-errors"'):html.index("</div>", html.index('id="form-errors"'))]
    assert "(1 error)" in banner and 'href="#id_p0.args.NodeResourcesFit.scoringStrategy.type"' in banner
    assert "Unsupported value: &quot;Bogus&quot;" in banner
    form_page = c.post("/profiles/tabs/", post(c.get("/profiles/tabs/").context["form"],
                                               **{"p0.percentageOfNodesToScore": "300"}))
    assert form_page.context["form"]["source"].value() == "form"
    assert "profiles[0].percentageOfNodesToScore: Invalid value: 300" in form_page.content.decode()


def test_a_profile_is_added_in_the_form_with_its_own_scheduler_name():
    c = _editor()
    profile = services.create("two", DOC, None)
    form = c.get("/profiles/two/").context["form"]
    same = c.post("/profiles/two/", post(form, new_profile="default-scheduler"))
    assert same.status_code == 400
    assert same.context["form"].errors["p1.schedulerName"] == [
        'profiles[1].schedulerName: Duplicate value: {} — "default-scheduler" is the schedulerName of profiles[0] '
        "too"]
    assert c.post("/profiles/two/", post(form, new_profile="batch-scheduler")).status_code == 302
    doc = profile.versions.order_by("-number").first().document
    assert [p["schedulerName"] for p in doc["profiles"]] == ["default-scheduler", "batch-scheduler"]
    assert validate.check(doc, profile.kube_version) == []


def test_read_only_editors_look_read_only():
    services.create("seen", DOC, None)
    viewer = Client(HTTP_HOST="localhost")
    viewer.force_login(User.objects.create_user("vi", password="pw"))
    for url in ("/profiles/seen/", "/profiles/v1.36-default/"):
        html = viewer.get(url).content.decode()
        assert 'id="read-only-note"' in html and 'id="save-form"' not in html and "data-convert" not in html
        assert re.search(r'<input [^>]*name="p0.score.TaintToleration.weight"[^>]* disabled', html)
        assert re.search(r'<button type="button" class="move"[^>]*disabled>', html)
        assert 'id="add-profile"' not in html
    assert "only editors can change profiles" in viewer.get("/profiles/seen/").content.decode()
    assert "copy it (above)" in _editor().get("/profiles/v1.36-default/").content.decode()
