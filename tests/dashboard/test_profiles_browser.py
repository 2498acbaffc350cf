"""The profile editor end to end in headless Chromium (the embedded server of test_browser): the demo cluster runs
kube's built-in default, listed read-only; an editor copies it, changes it only through switches and weight fields
(a weight of -5 gets kube's error at the field), saves, reads the diff, applies it to the demo cluster, and the
next scheduling cycle's Score table carries the new weight. No page is wider than a 1,280 px window."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT
from .test_browser import ARGS, CHROMIUM, _post_json, _shot, server  # noqa: F401  (server is a fixture)

pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed")

CREATE_USERS = """
from django.contrib.auth.models import Group, User
ed = User.objects.create_user("ed", password="editor-pw")
ed.groups.add(Group.objects.get_or_create(name="editor")[0])
User.objects.create_user("vi", password="viewer-pw")
"""
WIDTH = 1280


def _manage(tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'e2e.sqlite3'}", DJANGO_SETTINGS_MODULE="dashboard.settings")
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, check=True)


def _login(page, base, user, password):
    page.goto(base + "/profiles/login/?next=/profiles/")
    page.fill('input[name="username"]', user)
    page.fill('input[name="password"]', password)
    page.click("#login")


def _fits(page):
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"{page.url} is {width} px wide"


def test_edit_with_switches_and_weights_save_diff_apply(server, tmp_path):  # noqa: F811
    from playwright.sync_api import expect, sync_playwright
    _manage(tmp_path, "shell", "-c", CREATE_USERS)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.watch(browser.new_page(viewport={"width": WIDTH, "height": 900}))
        # a viewer sees what the demo runs: kube's default, built in, read-only
        _login(page, server, "vi", "viewer-pw")
        builtin = page.locator("#profile-table tr.builtin", has_text="v1.36 default")
        expect(builtin).to_contain_text("demo")   # the demo runs v1.36's built-in profile
        expect(page.locator('input[name="name"]')).to_have_count(0)
        _fits(page)
        page.click("text=sign out")

        _login(page, server, "ed", "editor-pw")
        page.click("#profile-table tr.builtin >> text=v1.30 default")
        expect(page.locator('input[name="p0.score.TaintToleration.weight"]')).to_be_disabled()
        expect(page.locator('input[name="p0.score.TaintToleration.weight"]')).to_have_value("3")
        expect(page.locator('.point[data-set="score"] tr[data-plugin="TaintToleration"] .default')).to_have_text(
            "default 3")
        _fits(page)
        page.fill('.copy-form input[name="name"]', "tuned")
        page.click("text=Copy to edit")
        expect(page).to_have_url(server + "/profiles/tuned/")
        expect(page.locator("#active-version")).to_contain_text("Active version: v1")

        score = page.locator('.point[data-set="score"]')
        fit = score.locator('tr[data-plugin="NodeResourcesFit"]')
        image = score.locator('tr[data-plugin="ImageLocality"]')
        page.fill('input[name="p0.score.NodeResourcesFit.weight"]', "-5")
        expect(fit).to_have_class(re.compile(r"\bchanged\b"))
        expect(fit.locator(".note")).to_have_text("negative: kube's overflow check refuses it unless no Score plugin is weighed after it")
        image.locator("input.switch").uncheck()
        expect(image).to_have_class(re.compile(r"\boff\b.*\bchanged\b"))
        page.fill('input[name="comment"]', "pack by fit, no image locality")
        page.click("#save-form")
        err = page.locator('.field-error[data-for="p0.score.NodeResourcesFit.weight"]')
        expect(err).to_contain_text("total score of Score plugins could overflow")
        expect(image.locator("input.switch")).not_to_be_checked()
        _fits(page)
        _shot(page, tmp_path, "profile-error")

        page.fill('input[name="p0.score.NodeResourcesFit.weight"]', "0")
        expect(fit.locator(".note")).to_have_text("kube runs a weight of 0 as 1")
        page.fill('input[name="p0.score.NodeResourcesFit.weight"]', "5")
        expect(fit.locator(".note")).to_have_text("")
        # the YAML tab holds only the differences, as kube users write them
        page.click('button[data-tab="yaml"]')
        expect(page.locator('textarea[name="yaml"]')).to_have_value(re.compile(
            r"score:\n      enabled:\n      - name: NodeResourcesFit\n        weight: 5\n"
            r"      disabled:\n      - name: ImageLocality\n"))
        page.click('button[data-tab="form"]')
        page.click("#save-form")
        expect(page.locator("#flash")).to_contain_text("saved as version 2")
        expect(page.locator(".field-error")).to_have_count(0)
        fit = page.locator('.point[data-set="score"] tr[data-plugin="NodeResourcesFit"]')
        expect(fit).to_have_class(re.compile(r"\bchanged\b"))
        expect(page.locator('input[name="p0.score.NodeResourcesFit.weight"]')).to_have_value("5")
        expect(page.locator('input[name="p0.score.ImageLocality.on"]')).not_to_be_checked()
        _fits(page)
        page.screenshot(path=str(tmp_path / "profile-editor.png"))
        if os.environ.get("SCHEDSCOPE_SCREENSHOTS"):
            shutil.copy(tmp_path / "profile-editor.png", os.path.join(os.environ["SCHEDSCOPE_SCREENSHOTS"],
                                                                      "profile-editor.png"))

        # the diff of v2 against v1
        page.click("#versions >> text=v2")
        diff = page.locator("#diff")
        expect(diff).to_contain_text("+      - name: NodeResourcesFit")
        expect(diff).to_contain_text("+        weight: 5")
        expect(diff.locator(".add")).to_have_count(7)
        _fits(page)
        page.go_back()

        # applied to the demo cluster: the next cycle weighs NodeResourcesFit by 5 and runs no ImageLocality
        actions = page.locator("#versions tr.actions").first
        actions.locator("form:has(button.apply) select").select_option("demo")
        # Apply asks first: dismissed, nothing is applied
        asked = []

        def answer(dialog, accept):
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()
        page.once("dialog", lambda d: answer(d, False))
        actions.locator("button.apply").click()
        expect(page.locator("#active-version")).to_contain_text("Active version: v1")
        assert asked and asked[0].startswith("Apply v2 of "), asked
        page.once("dialog", lambda d: answer(d, True))
        actions.locator("button.apply").click()
        expect(page.locator("#active-version")).to_contain_text("Active version: v2")
        expect(page.locator("#flash")).to_contain_text("version 2 applied to demo")
        manifest = {"metadata": {"name": "after-apply", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "100m"}}}]}}
        assert _post_json(server, "/api/clusters/demo/pods/", {"manifest": manifest}) == 201
        page.goto(server + "/clusters/demo/pods/default/after-apply/")
        headers = page.locator("#score-matrix thead th")
        for _ in range(60):
            if headers.count():
                break
            page.wait_for_timeout(500)
            page.reload()
        expect(headers.filter(has_text="NodeResourcesFit")).to_contain_text("×5")
        expect(headers.filter(has_text="TaintToleration")).to_contain_text("×3")
        expect(headers.filter(has_text="ImageLocality")).to_have_count(0)
        page.click("header nav a:text-is(\"Profile\")")
        expect(page).to_have_url(server + "/profiles/tuned/")
        browser.close()


YAML_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_errors_on_the_tab_saved_from_live_yaml_checks_a_second_profile_and_read_only_pages(server, tmp_path):  # noqa: F811,E501
    from playwright.sync_api import expect, sync_playwright
    _manage(tmp_path, "shell", "-c", CREATE_USERS)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.watch(browser.new_page(viewport={"width": WIDTH, "height": 900}))
        refused = []   # the live check's answers that were not 200 (each would be a console error)
        page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if "/convert/" in r.url
                and r.status != 200 else None)
        _login(page, server, "ed", "editor-pw")
        page.goto(server + "/profiles/v1.36-default/")
        page.fill('.copy-form input[name="name"]', "checked")
        page.click("text=Copy to edit")
        expect(page).to_have_url(server + "/profiles/checked/")

        # the YAML checked as one types, in kube's words
        page.click('button[data-tab="yaml"]')
        box, check = page.locator('textarea[name="yaml"]'), page.locator("#yaml-check")
        box.fill(YAML_HEAD + "profiles:\n- schedulerName: x\n- schedulerName: x\n")
        expect(check).to_have_text('profiles[1].schedulerName: Duplicate value: {} — "x" is the schedulerName of '
                                   "profiles[0] too")
        box.fill(YAML_HEAD + "profiles: [")
        expect(check).to_contain_text("not valid YAML")
        box.fill(YAML_HEAD + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                 "      scoringStrategy:\n        type: Bogus\n")
        unsupported = ('scoringStrategy.type: Unsupported value: "Bogus": supported values: "LeastAllocated", '
                       '"MostAllocated", "RequestedToCapacityRatio"')
        expect(check).to_contain_text(unsupported)
        _shot(page, tmp_path, "profile-yaml-live-check", full_page=False)

        # saved from the YAML tab: the page comes back on it, the errors listed at the top and under the YAML
        page.click("#save-yaml")
        banner = page.locator("#form-errors")
        expect(banner).to_contain_text(unsupported)
        expect(page.locator("#yaml-view")).to_be_visible()
        expect(page.locator("#form-view")).to_be_hidden()
        expect(page.locator("#yaml-check")).to_contain_text(unsupported)
        assert "Select a valid choice" not in page.content()
        _shot(page, tmp_path, "profile-yaml-save-error", full_page=False)
        # the banner's link shows the field on the Form tab
        banner.locator("a.to-field").first.click()
        field = page.locator('select[name="p0.args.NodeResourcesFit.scoringStrategy.type"]')
        expect(field).to_be_focused()
        expect(field).to_be_in_viewport()
        expect(field).to_have_value("Bogus")

        # saved from the Form tab: back on the Form tab, the field in view, focused and marked
        page.goto(server + "/profiles/checked/")
        page.fill('input[name="p0.percentageOfNodesToScore"]', "300")
        page.click("#save-form")
        field = page.locator('input[name="p0.percentageOfNodesToScore"]')
        expect(banner).to_contain_text("profiles[0].percentageOfNodesToScore: Invalid value: 300: not in valid "
                                       "range [0-100]")
        expect(page.locator("#form-view")).to_be_visible()
        expect(field).to_be_focused()
        expect(field).to_be_in_viewport()
        expect(page.locator("label.field.has-error", has=field)).to_contain_text("not in valid range")
        _shot(page, tmp_path, "profile-form-save-error", full_page=False)

        # a second profile, with its own schedulerName, added in the form
        page.goto(server + "/profiles/checked/")
        page.fill('input[name="new_profile"]', "batch-scheduler")
        page.click("#add-profile-button")
        expect(page.locator("section.profile")).to_have_count(2)
        expect(page.locator('input[name="p1.schedulerName"]')).to_have_value("batch-scheduler")
        expect(page.locator("section.profile").nth(1)).to_be_in_viewport()
        _shot(page, tmp_path, "profile-added", full_page=False)
        page.click("#save-form")
        expect(page.locator("#flash")).to_contain_text("saved as version 2")
        expect(page.locator("section.profile h2")).to_have_text(["Profile default-scheduler",
                                                                  "Profile batch-scheduler"])
        assert not refused, refused
        page.click("text=sign out")

        # a viewer: every control disabled, no Save, a note why
        _login(page, server, "vi", "viewer-pw")
        page.goto(server + "/profiles/checked/")
        expect(page.locator("#read-only-note")).to_contain_text("only editors can change profiles")
        expect(page.locator("#save-form")).to_have_count(0)
        expect(page.locator('input[name="p0.score.TaintToleration.weight"]')).to_be_disabled()
        expect(page.locator("button.move").first).to_be_disabled()
        expect(page.locator("#add-profile")).to_have_count(0)
        _shot(page, tmp_path, "profile-read-only", full_page=False)
        browser.close()
