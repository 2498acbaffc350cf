"""The events page in headless Chromium on the embedded demo: the content takes a 1,920 px window's width; a plain
wheel over the swimlanes scrolls the page and leaves the window alone, ctrl + wheel and the − + buttons zoom; Tab
reaches an attempt's mark and Enter opens its decision trace; live rows carry the node chip as the rendered ones do,
and an event the list already shows (a later count of its series) replaces its row instead of adding another."""
from __future__ import annotations

import json
import re

from . import test_browser
from .test_browser import ARGS, CHROMIUM, _post_json, _shot, server  # noqa: F401 (the embedded server fixture)

pytestmark = test_browser.pytestmark   # skipped without Chromium

WIDTH = 1920
KEYS = "() => Array.from(document.querySelectorAll('#event-list li[data-event]')).map(li => li.dataset.event)"
WINDOW_MS = "() => { const w = window.schedscopeTimeline.timeline.getWindow(); return w.end - w.start; }"


def _pod(name, cpu):
    return {"manifest": {"metadata": {"name": name, "namespace": "default", "uid": name},
                         "spec": {"containers": [{"name": "c", "image": "c:1",
                                                  "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}}


def test_events_page_width_wheel_zoom_keyboard_and_live_rows(server, tmp_path):  # noqa: F811
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser, width=WIDTH).new_page()
        again = []   # events to add to the next update the server sends this page

        def relay(ws):
            upstream = ws.connect_to_server()

            def down(message):
                msg = json.loads(message)
                if msg.get("kind") == "update" and again:
                    msg["events"] = (msg.get("events") or []) + again
                    again.clear()
                ws.send(json.dumps(msg))
            upstream.on_message(down)
            ws.on_message(upstream.send)
        page.route_web_socket(re.compile(r"/ws/clusters/"), relay)
        page.goto(server + "/clusters/demo/")
        expect(page.locator('[data-live="queue.unschedulable"]')).not_to_have_text("0", timeout=30000)
        # a pod that never fits: its FailedScheduling is rendered, and counted again on each retry
        assert _post_json(server, "/api/clusters/demo/pods/", _pod("never-fits", "500")) == 201
        page.goto(server + "/clusters/demo/events/?window=15m")
        row = page.locator('#event-list li[data-event]', has_text="default/never-fits")
        expect(row).to_have_count(1, timeout=30000)
        if row.get_attribute("class") and "fresh" in row.get_attribute("class"):
            page.reload()   # it arrived live; the test needs it rendered by the server first
            expect(row).to_have_count(1)
        key = row.get_attribute("data-event")
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        page.wait_for_selector("#pod-timeline .vis-item.mark a.mark-link", state="attached", timeout=30000)

        # the full width of the window (less the page's padding)
        width = page.locator("#events-panel").bounding_box()["width"]
        assert width > WIDTH - 80, width
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH

        # a plain wheel over the swimlanes scrolls the page; the window stays
        before = page.evaluate(WINDOW_MS)
        area = page.locator("#pod-timeline .vis-center").bounding_box()
        page.mouse.move(area["x"] + area["width"] / 2, area["y"] + min(area["height"] / 2, 100))
        for _ in range(4):
            page.mouse.wheel(0, 400)
        page.wait_for_function("() => window.scrollY > 0", timeout=10000)
        page.wait_for_timeout(500)   # what a zoom would have done by now: nothing may happen (the check just below)
        # (four zoom steps would change its length far more than 1%; the live window may only slide with the clock)
        assert abs(page.evaluate(WINDOW_MS) - before) < before / 100
        assert "window=15m" in page.url
        page.evaluate("window.scrollTo(0, 0)")

        # the zoom buttons: half the window, then twice it (live: it keeps ending now)
        page.click("#zoom-in")
        page.wait_for_function("() => document.getElementById('pod-timeline').dataset.window === '450s'")
        assert re.search(r"[?&]window=450s(&|$)", page.url) and "until=" not in page.url
        page.click("#zoom-out")
        page.wait_for_function("() => document.getElementById('pod-timeline').dataset.window === '15m'")
        # ctrl + wheel zooms
        area = page.locator("#pod-timeline .vis-center").bounding_box()
        page.mouse.move(area["x"] + area["width"] * 0.9, area["y"] + 20)
        page.keyboard.down("Control")
        for _ in range(3):
            page.mouse.wheel(0, -300)
        page.keyboard.up("Control")
        page.wait_for_function("() => document.getElementById('pod-timeline').dataset.window !== '15m'",
                               timeout=20000)
        page.goto(server + "/clusters/demo/events/?window=15m")
        page.wait_for_selector("#pod-timeline .vis-item.mark a.mark-link", state="attached", timeout=30000)
        _shot(page, tmp_path, "events-1920", full_page=False)

        # Tab from the zoom buttons reaches the lanes' pod links, then the marks; Enter opens the decision trace
        page.focus("#zoom-in")
        for _ in range(400):
            page.keyboard.press("Tab")
            focused = page.evaluate("() => document.activeElement.className")
            if focused == "mark-link":
                break
        assert focused == "mark-link", focused
        label = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
        assert re.match(r"^[\w-]+/[\w.-]+: (attempt #\d+ · \w+|bound to |deleted)", label), label
        _shot(page, tmp_path, "events-mark-focused", full_page=False)
        href = page.evaluate("() => document.activeElement.getAttribute('href')")
        page.keyboard.press("Enter")
        page.wait_for_url(server + href)
        page.go_back()

        # live rows: a bound pod's Scheduled event with its node chip; an event the page rendered, arriving again
        # in an update (as when it was committed before the page was read and sent after), replaces its row
        row = page.locator('#event-list li[data-event]', has_text="default/never-fits")
        expect(row).to_have_count(1, timeout=30000)
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        rendered = {"key": key, "time": row.locator("time").get_attribute("datetime"), "type": "Warning",
                    "reason": "FailedScheduling", "pod": "default/never-fits", "node": "",
                    "message": row.locator(".msg").inner_text()}
        again.append(rendered)
        assert _post_json(server, "/api/clusters/demo/pods/", _pod("fits-live", "100m")) == 201
        scheduled = page.locator("#event-list li.fresh", has_text="default/fits-live").filter(has_text="Scheduled")
        expect(scheduled).to_have_count(1, timeout=30000)
        node = scheduled.locator(".chip")
        expect(node).to_have_count(1)
        assert re.fullmatch(r"[\w.-]+", node.inner_text())
        assert not again   # the rendered event went out in an update
        expect(page.locator(f'#event-list li.fresh[data-event="{key}"]')).to_have_count(1)
        keys = page.evaluate(KEYS)
        assert keys.count(key) == 1 and len(keys) == len(set(keys)), keys
        browser.close()
