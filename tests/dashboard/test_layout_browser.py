"""Pages at a 1,280 px window in headless Chromium (the embedded demo cluster): no page wider than the window
(nodes, a pod with its 53-node Filter matrix, profiles, pending), the Filter matrix's rotated headers whole and
sticky, and the nodes pager keeping the filters."""
from __future__ import annotations

import re

import pytest

from .test_browser import ARGS, CHROMIUM, _shot, server  # noqa: F401 (the embedded server fixture)

WIDTH = 1280
MATRIX_POD = "/clusters/demo/pods/ml/inference-no-toleration/?group=0"


def _fits(page) -> int:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"{page.url} is {width} px wide"
    return width


@pytest.fixture
def page(server):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield server.context(browser, width=WIDTH).new_page()
        browser.close()


def test_no_page_is_wider_than_the_window(server, page, tmp_path):
    from playwright.sync_api import expect
    page.goto(server + MATRIX_POD)
    expect(page.locator("#filter-matrix tbody tr")).to_have_count(53, timeout=30000)
    _fits(page)
    page.goto(server + "/clusters/demo/pods/ml/inference-no-toleration/?binding=1#bind")
    expect(page.locator("#bind-nodes li")).to_have_count(50)   # bindfit.SHOWN of 53
    _fits(page)
    for path, ready in (("/clusters/demo/nodes/", "#node-table"), ("/profiles/", "main"),
                        ("/clusters/demo/pending/", "#pending-table")):
        page.goto(server + path)
        expect(page.locator(ready)).to_be_visible()
        _fits(page)
    page.goto(server + "/clusters/demo/nodes/")
    page.evaluate("document.querySelectorAll('#node-table details').forEach(d => { d.open = true; })")
    _fits(page)   # every node's labels unfolded


def test_filter_matrix_headers_are_whole_and_sticky(server, page, tmp_path):
    from playwright.sync_api import expect
    page.goto(server + MATRIX_POD)
    expect(page.locator("#filter-matrix tbody tr")).to_have_count(53, timeout=30000)
    # each rotated plugin name lies inside its header cell
    clipped = page.evaluate("""() => [...document.querySelectorAll('#filter-matrix th.rot')].filter(th => {
        const s = th.querySelector('span').getBoundingClientRect(), c = th.getBoundingClientRect();
        return s.top < c.top - 0.5 || s.bottom > c.bottom + 0.5 || s.left < c.left - 0.5 || s.right > c.right + 0.5
            || th.scrollHeight > th.clientHeight + 1;
      }).map(th => th.textContent)""")
    assert clipped == []
    box = page.locator("#filter-matrix").locator("xpath=..")
    box.evaluate("b => { b.scrollTop = 400; b.scrollLeft = 300; }")
    top, left = box.evaluate("b => { const r = b.getBoundingClientRect(); return [r.top, r.left]; }")
    head = page.locator("#filter-matrix thead th.rot").first.bounding_box()
    corner = page.locator("#filter-matrix thead th").first.bounding_box()
    node = page.locator("#filter-matrix tbody td.node").nth(12).bounding_box()
    assert abs(head["y"] - top) <= 2 and abs(corner["y"] - top) <= 2      # the headers stay on top
    assert abs(corner["x"] - left) <= 2 and abs(node["x"] - left) <= 2    # the Node column stays on the left
    box.evaluate("b => { b.scrollTop = 0; b.scrollLeft = 0; }")
    page.locator("#decision").scroll_into_view_if_needed()
    _shot(page, tmp_path, "pod-matrix-nodes")


def test_nodes_are_paged_with_the_filters_kept(server, page, tmp_path):
    from playwright.sync_api import expect
    page.goto(server + "/clusters/demo/nodes/")
    rows = page.locator("#node-table tbody tr")
    expect(rows).to_have_count(25)
    expect(page.locator("#nodes-pager")).to_contain_text("nodes 1–25 of 53 · page 1 of 3")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 1400, height
    _shot(page, tmp_path, "nodes")
    page.fill('input[name="q"]', "general")
    page.select_option('select[name="sort"]', "name")
    page.click("form.filters button")
    expect(page.locator("h1")).to_contain_text("36")
    first = rows.locator("td:first-child a").all_inner_texts()
    assert first == [f"general-{i:02d}" for i in range(1, 26)]
    page.click("#nodes-pager a[rel=next]")
    assert re.search(r"[?&]q=general(&|$)", page.url) and "sort=name" in page.url and "page=2" in page.url
    expect(rows).to_have_count(11)
    expect(page.locator("#nodes-pager")).to_contain_text("nodes 26–36 of 36 · page 2 of 2")
    assert rows.locator("td:first-child a").all_inner_texts() == [f"general-{i:02d}" for i in range(26, 37)]
    page.click("#nodes-pager a[rel=prev]")
    expect(page.locator("#nodes-pager")).to_contain_text("page 1 of 2")
    assert "q=general" in page.url and "sort=name" in page.url
    # past the last page: the last page
    page.goto(server + "/clusters/demo/nodes/?q=general&sort=name&page=9")
    expect(page.locator("#nodes-pager")).to_contain_text("page 2 of 2")
