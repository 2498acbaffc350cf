"""The pending list in headless Chromium while 200 new pods stream in: at every moment sampled, the header count,
the number of rows and the pager agree; new rows arrive complete (priority, requests, rejection chips) where the
active sort puts them; times read as local 24-hour time with seconds, ISO 8601 on hover."""
from __future__ import annotations

import re
import threading

from . import test_browser
from .test_browser import ARGS, CHROMIUM, _post_json, _shot

pytestmark = test_browser.pytestmark   # skipped without Chromium
server = test_browser.server           # the embedded server fixture

PER_PAGE = 50
STREAMED = 200

# One DOM read (no await between): what the header, the table and the pager say.
READ_PAGE = """() => {
  const rows = document.querySelectorAll('#pending-table tbody tr[data-pod]').length;
  const pager = document.querySelector('#pending-pager span').textContent;
  return {count: Number(document.getElementById('pending-count').textContent), rows: rows, pager: pager};
}"""


def _pod(i: int) -> dict:
    """Unschedulable on every demo node: half ask for more cpu than any node has, half also for a GPU taint."""
    spec = {"containers": [{"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "300" if i % 2 else "200",
                                                                    "memory": "2Gi"}}}]}
    if i % 2:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return {"metadata": {"name": f"stream-{i:03d}", "namespace": "stream", "uid": f"stream-{i}"}, "spec": spec}


def _agree(state: dict) -> bool:
    count, rows = state["count"], state["rows"]
    pages = max(1, -(-count // PER_PAGE))
    return rows == min(PER_PAGE, count) and state["pager"].strip() == f"page 1 of {pages}"


def test_pending_counts_rows_and_pager_agree_while_200_pods_stream_in(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        ctx.add_cookies([{"name": "sessionid", "value": server.session, "url": str(server)}])
        page = server.watch(ctx).new_page()
        page.goto(server + "/clusters/demo/pending/")
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        # the embedded loop works through the demo's pods first
        page.wait_for_function("() => document.querySelectorAll('#pending-table td.rejections .chip').length > 3",
                               timeout=60000)
        before = page.evaluate(READ_PAGE)
        first_row = page.locator("#pending-table tbody tr").first.get_attribute("data-pod")

        errors = []

        def stream():
            try:
                for i in range(STREAMED):
                    assert _post_json(server, "/api/clusters/demo/pods/", {"manifest": _pod(i)}) == 201
            except Exception as err:  # reported by the test below
                errors.append(err)
        writer = threading.Thread(target=stream)
        writer.start()
        samples, disagreements = 0, []
        while writer.is_alive() or samples < 20:
            state = page.evaluate(READ_PAGE)
            samples += 1
            if not _agree(state):
                disagreements.append(state)
            page.wait_for_timeout(50)
            if not writer.is_alive() and state["count"] >= before["count"] + STREAMED:
                break
        writer.join()
        assert not errors, errors
        expect(page.locator("#pending-count")).to_have_text(str(before["count"] + STREAMED), timeout=60000)
        # every streamed pod tried once (the groups count them), then a last look
        expect(page.locator("#reason-groups li").first).to_contain_text("Insufficient cpu", timeout=60000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('#reason-groups .badge')].reduce((n, b) => n + Number(b.textContent), 0)"
            f" >= {STREAMED}", timeout=60000)
        final = page.evaluate(READ_PAGE)
        assert _agree(final), final
        assert not disagreements, f"{len(disagreements)} of {samples} samples disagree: {disagreements[:5]}"
        assert samples >= 20
        # oldest first: the new pods went to the end, not to the top of page 1
        assert page.locator("#pending-table tbody tr").first.get_attribute("data-pod") == first_row
        cell = page.locator("#pending-table tbody tr td.t time").first
        assert re.fullmatch(r"\d\d:\d\d:\d\d", cell.inner_text()), cell.inner_text()
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", cell.get_attribute("title"))
        _shot(page, tmp_path, "pending", full_page=False)

        # newest first: the streamed pods lead, each row complete
        page.select_option('select[name="sort"]', "-age")
        page.click(".filters button")
        top = page.locator("#pending-table tbody tr").first
        expect(top).to_have_attribute("data-pod", re.compile(r"stream/stream-\d{3}"))
        expect(top.locator("td.rejections")).to_contain_text("NodeResourcesFit · Insufficient cpu · ", timeout=30000)
        assert re.search(r"\d+ cpu, 2\.0 GiB", top.locator("td.mono").inner_text())
        assert top.locator("td.num").first.inner_text() == "0"
        top.locator("details.fiterror summary").click()
        expect(top.locator("details.fiterror p")).to_contain_text("nodes are available:")
        # a pod that arrives now appears at the top, live, complete
        assert _post_json(server, "/api/clusters/demo/pods/", {"manifest": _pod(STREAMED)}) == 201
        expect(top).to_have_attribute("data-pod", f"stream/stream-{STREAMED:03d}", timeout=30000)
        expect(top.locator("td.rejections")).to_contain_text("Insufficient cpu", timeout=30000)
        _shot(page, tmp_path, "pending-live", full_page=False)

        # a group is a filter, and its count is the filtered list's
        page.goto(server + "/clusters/demo/pending/")
        group = page.locator("#reason-groups li a").first
        n = int(group.locator(".badge").inner_text())
        group.click()
        expect(page.locator("#pending-count")).to_have_text(str(n))
        assert page.evaluate(READ_PAGE)["rows"] == min(PER_PAGE, n)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        browser.close()
