"""The pod page's claims panel in headless Chromium: a cluster with GPUs loaded through the API, a pending pod whose
claim one device can serve, the reasons for the others, and the allocator's choice (docs/screenshots/pod-claims.png
with SCHEDSCOPE_SCREENSHOTS=docs/screenshots)."""
from __future__ import annotations

from . import test_browser
from .test_browser import ARGS, CHROMIUM, _post_json, _shot
from .test_pod_claims import DRIVER, scenario

pytestmark = test_browser.pytestmark   # skipped without Chromium
server = test_browser.server           # the embedded server fixture


def test_the_claims_panel_shows_why_each_device_does_or_does_not_fit(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    assert _post_json(server, "/api/clusters/", {"name": "dra", "tie_break": "name"}) == 201
    assert _post_json(server, "/api/clusters/dra/scenario/", {"scenario": scenario()}) == 201
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser).new_page()
        page.goto(f"{server}/clusters/dra/pods/default/trainer/")
        panel = page.locator("#claims")
        expect(panel).to_contain_text(f"{DRIVER}/gpu-0/held: allocated to default/owned (owner)")
        expect(panel).to_contain_text(f"{DRIVER}/gpu-0/t4: claim selector #0 false ({DRIVER}/model=t4)")
        expect(panel).to_contain_text(f"default/trainer-gpu/gpu → {DRIVER}/gpu-0/free")
        expect(page.locator("#claims-more")).to_have_text("3 more nodes not shown.")
        panel.scroll_into_view_if_needed()
        _shot(page, tmp_path, "pod-claims")
        browser.close()
