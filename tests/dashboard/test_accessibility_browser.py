"""axe-core (vendored, static/vendor/axe-core) on every page of the app in headless Chromium, on the embedded demo:
no serious or critical violation anywhere, signed in and signed out, on the error pages and on the states a user
reaches by clicking (the profile editor's form and YAML tabs, a what-if answer and its trace, a dry run); on each
page a skip link to the content first, no form control without a label, and the charts named with their numbers
beside them."""
from __future__ import annotations

import re

import pytest
import yaml
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
    ("/clusters/demo/events/?window=5m&reason=NoSuchReason", "#events-panel"),
    ("/clusters/demo/pending/?attempts=-1", "main h1"),
    ("/admin/", "#content-main"),
    ("/admin/dashboard/cluster/", "#result_list"),
]

# Every form control (but hidden inputs) without a label: neither a <label>, nor aria-label or aria-labelledby (a
# placeholder or a title is not one).
UNLABELLED = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
  .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
  .map(e => e.outerHTML.slice(0, 120))"""

# The first link of the page skips to the main content (the app's pages: to <main>; Django's admin has its own).
FIRST_TAB = """() => { const a = document.querySelector('a[href]'), to = a && document.querySelector(a.getAttribute('href'));
  return a && to && (a.textContent === 'Skip to content' && to.tagName === 'MAIN' ||
                     a.classList.contains('skip-to-content-link')) ? a.outerHTML : null; }"""


def _violations(page) -> list[str]:
    """axe's serious and critical violations on ``page`` as it is now, one line per rule and element, and the
    page's unlabelled controls and missing skip link."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(url=AXE)
    found = page.evaluate("""async () => {
        const r = await window.axe.run(document, {resultTypes: ['violations']});
        return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
          .flatMap(v => v.nodes.map(n => `${v.id} (${v.impact}): ${n.target.join(' ')}: ` +
            [...n.any, ...n.all, ...n.none].map(c => c.message).join(' / ')));
    }""")
    found += [f"unlabelled control: {e}" for e in page.evaluate(UNLABELLED)]
    if not page.evaluate(FIRST_TAB):
        found.append("no skip link to <main> first in the page")
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

    # a what-if answer and one of its decision traces
    page.goto(server + "/clusters/demo/whatif/")
    page.fill("textarea[name=manifest]", yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "namespace": "shop"},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]}}))
    page.click("#whatif-ask")
    expect(page.locator("#whatif-answer")).to_contain_text("copies fit", timeout=60000)
    found += _violations(page)
    page.locator("#capacity-1 a", has_text="decision trace").click()
    expect(page.locator("#filter-matrix")).to_be_visible()
    found += _violations(page)

    # the profile editor of a copy of kube's default (form, then YAML), a saved version, a dry run
    page.goto(server + "/profiles/v1.36-default/")
    page.fill('.copy-form input[name="name"]', "a11y")
    page.click("text=Copy to edit")
    expect(page).to_have_url(server + "/profiles/a11y/")
    found += _violations(page)
    page.click('button[data-tab="yaml"]')
    expect(page.locator("#yaml-view textarea")).to_be_visible()
    found += _violations(page)
    page.goto(server + "/profiles/a11y/v/1/")
    expect(page.locator("main h1")).to_be_visible()
    found += _violations(page)
    page.goto(server + "/profiles/a11y/")
    page.locator("button.dry-run").first.click()
    expect(page.locator("#dry-summary")).to_be_visible(timeout=60000)
    found += _violations(page)

    # Django's 500 page as its handler renders it (no request), served at an address of the site
    page.route(server + "/clusters/demo/broken/", lambda route: route.fulfill(
        status=500, content_type="text/html", body=render_to_string("500.html")))
    page.goto(server + "/clusters/demo/broken/")
    expect(page.locator("#error")).to_contain_text("The server failed")
    found += _violations(page)

    # signed out: the sign-in page (and a cluster page sends there)
    anonymous = server.watch(browser.new_context()).new_page()
    anonymous.goto(server + "/clusters/demo/")
    expect(anonymous.locator("#login")).to_be_visible()
    found += _violations(anonymous)
    assert not found, "\n".join(found)


def test_charts_have_a_text_alternative(server, browser, tmp_path):  # noqa: F811
    """Each chart is an image named by a summary of its numbers, with a table of the numbers under it."""
    from playwright.sync_api import expect
    page = server.context(browser).new_page()
    page.goto(server + "/clusters/demo/")
    expect(page.locator('[data-live="queue.unschedulable"]')).not_to_have_text("0", timeout=30000)
    queue = page.locator("#queue-chart")
    expect(queue).to_have_attribute("role", "img")
    expect(queue).to_have_attribute("aria-label", re.compile(
        r"^Queue and scheduling rate: latest activeQ \d+, backoffQ \d+, unschedulable \d+, cycles/s [\d.]+$"))
    page.click("text=The numbers >> nth=0")
    table = page.locator("#queue-chart-numbers")
    expect(table.locator("thead th")).to_have_text(["", "latest", "lowest", "highest"])
    expect(table.locator("tbody th")).to_have_text(["activeQ", "backoffQ", "unschedulable", "cycles/s"])
    # the table follows the live numbers: its unschedulable row's latest is the card's count
    unschedulable = page.locator('[data-live="queue.unschedulable"]').inner_text()
    expect(table.locator("tbody tr").nth(2).locator("td").first).to_have_text(unschedulable, timeout=15000)
    expect(page.locator("#latency-chart")).to_have_attribute("aria-label", re.compile(r"^Scheduling latency"))

    page.goto(server + "/clusters/demo/events/?window=1h")
    chart = page.locator("#event-chart")
    expect(chart).to_have_attribute("aria-label", re.compile(
        r"^Events per bucket by reason: \d+ buckets, in all: .*FailedScheduling [1-9]"))
    page.click("#event-chart-numbers >> xpath=.. >> summary")
    rows = page.locator("#event-chart-numbers tbody tr")
    expect(rows.first).to_be_visible()
    # each row a bucket with events; its cells add up to the histogram's data for that bucket
    bucket, *cells = rows.first.locator("th, td").all_inner_texts()
    data = page.evaluate("""(label) => { const c = window.schedscopeTimeline.chart, i = c.data.labels.indexOf(label);
        return c.data.datasets.map(d => d.data[i]); }""", bucket)
    assert [int(c) for c in cells] == data, (bucket, cells, data)
    assert sum(data) > 0
