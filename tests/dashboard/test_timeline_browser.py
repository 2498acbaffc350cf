"""The event timeline in headless Chromium, on the embedded server with the demo's workload generator: swimlanes
of pods link to their pages; a ctrl + wheel zoom narrows the window (URL, histogram buckets, lanes), a reload restores
it, a drag moves it; the page fits a 1,280 px window."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from urllib.parse import parse_qs, urlparse

from dashboard.services.timewindow import parse_window

from . import test_browser
from .test_browser import ARGS, CHROMIUM, _shot, embedded_server

pytestmark = test_browser.pytestmark   # skipped without Chromium



def _local_input_value(until: str) -> str:
    """How a datetime-local input shows ``until``: HTML's normalized form drops zero seconds (…T01:27:00 is
    …T01:27)."""
    return until[:-3] if until.endswith(":00") and len(until) == 19 else until

def _query(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


# The attempt marks' middle time is older than ``ms`` before now.
MIDDLE_MARK_OLDER_THAN = """(ms) => {
  const t = window.schedscopeTimeline.items.get().filter(it => /\\bmark\\b/.test(it.className || ''))
    .map(it => new Date(it.start).getTime()).sort((a, b) => a - b);
  return t.length > 0 && t[Math.floor(t.length / 2)] < Date.now() - ms;
}"""

# A zoom has settled: the URL's window (not the first 5m) is the form's, the lanes' data's and the view's width.
ZOOM_SETTLED = """() => {
  const win = new URLSearchParams(location.search).get('window') || '';
  const m = /^(\\d+)([smhd])$/.exec(win);
  if (!m || win === '5m') return false;
  const ms = Number(m[1]) * {s: 1, m: 60, h: 3600, d: 86400}[m[2]] * 1000;
  const w = window.schedscopeTimeline.timeline.getWindow();
  return document.getElementById('pod-timeline').dataset.window === win &&
    document.getElementById('window-select').value === win && Math.abs((w.end - w.start) - ms) < 1500;
}"""


def _lanes_drawn(page):
    page.wait_for_function("() => document.querySelectorAll('#pod-timeline .vis-item.seg').length > 0 && "
                           "document.querySelectorAll('#pod-timeline .vis-item.mark').length > 0", timeout=30000)


def test_swimlanes_zoom_narrows_the_window(tmp_path):
    from playwright.sync_api import expect, sync_playwright
    with embedded_server(tmp_path) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser, width=1280).new_page()
        page.goto(server + "/clusters/demo/")
        expect(page.locator('[data-live="queue.unschedulable"]')).not_to_have_text("0", timeout=30000)
        page.goto(server + "/clusters/demo/events/?window=5m")
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        _lanes_drawn(page)
        # some history: the middle attempt at least 3 s old, so that a zoom around it ends before now
        page.wait_for_function(MIDDLE_MARK_OLDER_THAN, arg=3000, timeout=60000)
        box = page.locator("#pod-timeline")
        expect(box).to_have_attribute("data-window", "5m")
        expect(box).to_have_attribute("data-bucket-seconds", "5")
        expect(page.locator("#timeline-status")).to_contain_text("live")
        expect(page.locator("#window-select")).to_have_value("5m")
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        # a lane's label opens the pod's page
        first = page.locator("#pod-timeline a.lane-pod").first
        href = first.get_attribute("href")
        assert href.startswith("/clusters/demo/pods/")

        # zoom in with the wheel over the lanes: the URL, the buckets and the lanes follow the narrower window
        # (the pointer's time stays put: zoom around the latest attempt, so the narrower window still has pods)
        area = page.locator("#pod-timeline .vis-center").bounding_box()
        xs = sorted(page.evaluate("() => Array.from(document.querySelectorAll('#pod-timeline .vis-item.mark'))"
                                  ".map(e => { const r = e.getBoundingClientRect(); return r.x + r.width / 2; })"
                                  ".filter(x => x > 0)"))
        x = xs[len(xs) // 2]
        page.mouse.move(x, area["y"] + 20)
        page.keyboard.down("Control")   # a plain wheel scrolls the page (test_events_browser)
        for _ in range(6):
            page.mouse.wheel(0, -300)
        page.keyboard.up("Control")
        # on a loaded machine the notches may settle as several gestures: the last one's URL, form and data
        page.wait_for_function(ZOOM_SETTLED, timeout=20000)
        q = _query(page.url)
        narrowed = parse_window(q["window"])
        assert narrowed.total_seconds() < 5 * 60 * 0.8, q
        assert "until" in q, q   # zoomed around a point before now: no longer live
        page.wait_for_function("(w) => document.getElementById('pod-timeline').dataset.window === w", arg=q["window"])
        bucket = int(box.get_attribute("data-bucket-seconds"))
        assert bucket < 5, bucket
        assert int(box.get_attribute("data-buckets")) > 30
        expect(page.locator("#window-select")).to_have_value(q["window"])
        expect(page.locator("#until-input")).to_have_value(_local_input_value(q["until"]))
        expect(page.locator("#events-head")).to_contain_text(q["until"].replace("T", " ")[11:])
        _shot(page, tmp_path, "events-timeline-zoomed")

        # the URL restores the view
        page.reload()
        _lanes_drawn(page)
        expect(box).to_have_attribute("data-window", q["window"])
        shown = page.evaluate("() => { const w = window.schedscopeTimeline.timeline.getWindow();"
                              " return [w.start.toISOString(), w.end.toISOString()]; }")
        assert shown[1].startswith(q["until"]), (shown, q)
        assert abs((parse_window(q["window"]).total_seconds() * 1000) -
                   page.evaluate("() => { const w = window.schedscopeTimeline.timeline.getWindow();"
                                 " return w.end - w.start; }")) < 1500

        # drag to the right: the same width of window, ending earlier
        area = page.locator("#pod-timeline .vis-center").bounding_box()
        y = area["y"] + 15
        page.mouse.move(area["x"] + area["width"] * 0.4, y)
        page.mouse.down()
        page.mouse.move(area["x"] + area["width"] * 0.6, y, steps=8)
        page.mouse.up()
        page.wait_for_function("(u) => new URLSearchParams(location.search).get('until') !== u", arg=q["until"],
                               timeout=10000)
        moved = _query(page.url)
        assert moved["window"] == q["window"] and moved["until"] < q["until"], (q, moved)

        # a click on a histogram bar zooms to that bucket (at least the smallest window, 5 s)
        page.wait_for_function("(w) => document.getElementById('pod-timeline').dataset.window === w",
                               arg=moved["window"])
        page.goto(server + "/clusters/demo/events/?window=15m")
        page.wait_for_function("() => document.getElementById('pod-timeline').dataset.window === '15m'")
        page.locator("#event-chart").scroll_into_view_if_needed()
        bar = page.evaluate("""() => { const c = window.schedscopeTimeline.chart, r = c.canvas.getBoundingClientRect();
            for (let d = 0; d < c.data.datasets.length; d++) { const meta = c.getDatasetMeta(d);
              for (let j = 0; j < meta.data.length; j++) if (c.data.datasets[d].data[j] > 0)
                return { x: r.x + meta.data[j].x, y: r.y + meta.data[j].y + 1, start: c.data.labels[j],
                         now: Date.now() }; }
            return null; }""")
        page.mouse.click(bar["x"], bar["y"])
        page.wait_for_function("() => new URLSearchParams(location.search).get('window') === '10s'", timeout=10000)
        clicked = _query(page.url)
        bucket_end = datetime.strptime(bar["start"], "%H:%M:%S") + timedelta(seconds=10)
        if "until" in clicked:   # the window is that bar's 10 seconds
            assert clicked["until"][11:19] == bucket_end.strftime("%H:%M:%S"), (clicked, bar)
        else:                    # a bucket ending within a second of now goes live
            now = datetime.fromtimestamp(bar["now"] / 1000, timezone.utc)
            seconds_before_now = (now - bucket_end.replace(year=now.year, month=now.month, day=now.day,
                                                          tzinfo=timezone.utc)).total_seconds() % 86400
            assert seconds_before_now <= 1.5 or seconds_before_now > 86400 - 11, (clicked, bar)
        page.wait_for_function("() => document.getElementById('pod-timeline').dataset.window === '10s'")
        expect(box).to_have_attribute("data-bucket-seconds", "1")

        # the README's picture: the last 90 seconds, live
        page.goto(server + "/clusters/demo/events/?window=90s")
        _lanes_drawn(page)
        expect(box).to_have_attribute("data-bucket-seconds", "1")
        page.wait_for_timeout(1500)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        _shot(page, tmp_path, "events-timeline")
        browser.close()
