"""The profile editor end to end in headless Chromium (the embedded server of test_browser): an editor
switches NodeResourcesFit to MostAllocated, sees kube's error for a bad weight at its field, fixes it,
dry-runs on the demo cluster and sees moved pods, applies, and sees new cycles under the new version."""
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


def _manage(tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'e2e.sqlite3'}", DJANGO_SETTINGS_MODULE="dashboard.settings")
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, check=True)


def _login(page, base, user, password):
    page.goto(base + "/profiles/login/?next=/profiles/")
    page.fill('input[name="username"]', user)
    page.fill('input[name="password"]', password)
    page.click("#login")


def test_edit_validate_dry_run_apply(server, tmp_path):  # noqa: F811
    from playwright.sync_api import expect, sync_playwright
    _manage(tmp_path, "shell", "-c", CREATE_USERS)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.watch(browser.new_page(viewport={"width": 1440, "height": 1000}))
        # a viewer sees profiles but cannot create or save
        _login(page, server, "vi", "viewer-pw")
        expect(page.locator("#profile-table")).to_be_visible()
        expect(page.locator('input[name="name"]')).to_have_count(0)
        page.click("text=sign out")

        _login(page, server, "ed", "editor-pw")
        page.fill('input[name="name"]', "tuned")
        page.click("text=Create")
        expect(page.locator("#active-version")).to_contain_text("Active version: v1")
        page.select_option('select[name="p0.fit.type"]', "MostAllocated")
        page.fill('input[name="p0.fit.res.0.name"]', "cpu")
        page.fill('input[name="p0.fit.res.0.weight"]', "200")
        page.fill('input[name="comment"]', "pack nodes")
        page.click("#save-form")
        err = page.locator('.field-error[data-for="p0.fit.res.0.weight"]')
        expect(err).to_contain_text("resource weight of cpu not in valid range (0, 100]")
        _shot(page, tmp_path, "profile-error")

        # the YAML view shows the same (unsaved) document
        page.click('button[data-tab="yaml"]')
        expect(page.locator('textarea[name="yaml"]')).to_have_value(
            re.compile(r"type: MostAllocated[\s\S]*weight: 200"))
        page.click('button[data-tab="form"]')
        page.fill('input[name="p0.fit.res.0.weight"]', "1")
        page.click("#save-form")
        expect(page.locator("#versions")).to_contain_text("pack nodes")
        expect(page.locator(".field-error")).to_have_count(0)

        # dry run v2 on the demo cluster over its recent cycles
        row = page.locator("#versions tbody tr").first
        row.locator('select[name="cluster"]').first.select_option("demo")
        row.locator('select[name="source"]').select_option("window")
        row.locator("button.dry-run").click()
        expect(page.locator("#dry-summary")).to_be_visible(timeout=60000)
        expect(page.locator("#placement-diff tr.moved").first).to_be_visible()
        _shot(page, tmp_path, "profile-dry-run")

        page.go_back()
        page.reload()
        row = page.locator("#versions tbody tr").first
        row.locator("form:has(button.apply) select").select_option("demo")
        row.locator("button.apply").click()
        expect(page.locator("#active-version")).to_contain_text("Active version: v2")
        expect(page.locator("#audit")).to_contain_text("ed apply v2 → demo")
        manifest = {"metadata": {"name": "after-apply", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}
        assert _post_json(server, "/api/clusters/demo/pods/", {"manifest": manifest}) == 201
        span = page.locator("#active-version .span").first
        for _ in range(60):
            page.reload()
            text = span.inner_text()
            if text.startswith("v2") and not text.endswith("(0 cycles)"):
                break
            page.wait_for_timeout(500)
        expect(span).to_contain_text("v2 from cycle #")
        expect(span).not_to_contain_text("(0 cycles)")
        _shot(page, tmp_path, "profile-applied")
        browser.close()
