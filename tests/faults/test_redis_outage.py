"""Redis killed for 30 s mid-run (restarted empty): scheduling goes on, Celery reconnects, and a real browser on
the cluster's overview page (live.js over the web process and channels_redis) reconnects and resumes without gaps: every
cycle committed while it watched reached the page, in an update or in the state it refetched on reconnecting."""
from __future__ import annotations

import bisect
import json
import os
import threading
import time

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from dashboard.models import Cluster, Pod, SchedulingCycle
from dashboard.services import clusters as svc

from ..dashboard.conftest import web_process
from ..dashboard.test_browser import ARGS, CHROMIUM
from .conftest import LOG_ROOT, check_invariants, database_url, scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

OUTAGE = float(os.environ.get("FAULT_OUTAGE_SECONDS", "30"))
PODS = int(os.environ.get("FAULT_REDIS_PODS", "3000"))

# Records, with the browser's clock, every open, close and message of the page's websockets (live.js's own).
WEBSOCKET_TAP = """
(() => {
  const tap = window.__websocketTap = [];
  const Native = window.WebSocket;
  const now = () => Date.now() / 1000;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => tap.push({t: now(), kind: "open"}));
      this.addEventListener("close", (e) => tap.push({t: now(), kind: "close", code: e.code}));
      this.addEventListener("message", (e) => tap.push({t: now(), kind: "message", msg: JSON.parse(e.data)}));
    }
  };
})();
"""
# What the page got since the last call, its live values and its resync count, in one round trip.
PAGE_STATE = """() => ({
  tap: window.__websocketTap.splice(0),
  texts: Object.fromEntries([...document.querySelectorAll("[data-live]")].map(e => [e.dataset.live, e.textContent])),
  resyncs: window.schedscopeLive.resyncs()
})"""


@pytest.fixture
def web(request, workers):
    """The web process (HTTP and websockets) against the test database and the private Redis; its base URL."""
    env = dict(os.environ, DATABASE_URL=database_url(), REDIS_URL=settings.REDIS_URL,
               DJANGO_SETTINGS_MODULE="dashboard.settings")
    with web_process(env, LOG_ROOT / request.node.name / "web.log") as base:  # the workers fixture made the directory
        yield base


class LivePage:
    """Headless Chromium on one page, signed in with a session cookie, in a thread of its own (Playwright's
    sync API keeps an event loop in its thread, where the test's ORM calls must not run). ``tap`` fills with
    what the page's websockets got (browser timestamps); ``texts`` has the page's live values, ``resyncs`` how
    often live.js refetched the page."""

    def __init__(self, base: str, path: str, session_key: str):
        self.base, self.url, self.session_key = base, base + path, session_key
        self.tap: list = []
        self.texts: dict = {}
        self.resyncs = 0
        self.error = None
        self._stop = threading.Event()
        self._loaded = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._loaded.wait(60) or self.error:
            raise AssertionError(f"the browser did not load {self.url}: {self.error}")

    def _run(self):
        from playwright.sync_api import sync_playwright
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                ctx = browser.new_context()
                ctx.add_cookies([{"name": "sessionid", "value": self.session_key, "url": self.base}])
                page = ctx.new_page()
                page.add_init_script(WEBSOCKET_TAP)
                page.goto(self.url)
                self._loaded.set()
                while not self._stop.is_set():
                    page.wait_for_timeout(250)
                    state = page.evaluate(PAGE_STATE)
                    self.tap.extend(state["tap"])
                    self.texts, self.resyncs = state["texts"], state["resyncs"]
                browser.close()
        except Exception as err:  # reported by __init__ or close()
            self.error = err
            self._loaded.set()

    def messages(self, kind: str) -> list:
        """The websocket messages of one kind (hello, update) as tap entries."""
        return [e for e in self.tap if e["kind"] == "message" and e["msg"]["kind"] == kind]

    def close(self):
        self._stop.set()
        self._thread.join(60)
        if self.error:
            raise self.error


def coverage(tap: list, seqs: list) -> dict:
    """Which committed cycles (``seqs``, ascending) reached the page. On each (re)connect the server says hello
    with the last committed cycle, after joining the cluster's group, and the page refetches its live regions:
    every cycle up to it is in the page. Each update brings the ``new_cycles`` committed since the previous one,
    the last of them listed. A cycle after the last hello that no received update brought is missing; updates
    lost are the seq numbers skipped within one connection."""
    hellos = [e["msg"]["last_cycle"] or 0 for e in tap if e["kind"] == "message" and e["msg"]["kind"] == "hello"]
    streamed, lost, prev = set(), 0, None
    for e in tap:
        if e["kind"] == "open":
            prev = None
        elif e["kind"] == "message" and e["msg"]["kind"] == "update":
            msg = e["msg"]
            if prev and prev["epoch"] == msg["epoch"]:
                lost += msg["seq"] - prev["seq"] - 1
            prev = msg
            if msg["new_cycles"]:
                last = bisect.bisect_right(seqs, msg["cycles"][-1]["seq"])
                streamed.update(seqs[last - msg["new_cycles"]:last])
    snapshot = max(hellos)
    missing = [s for s in seqs if s > snapshot and s not in streamed]
    return {"snapshot": snapshot, "streamed": streamed, "updates_lost": lost, "missing": missing}


def test_redis_outage(request, workers, web, services):
    cluster = Cluster.objects.create(name="redisdown", tie_break="random")
    svc.load_scenario(cluster, scenario(100, PODS), "faults")
    worker = workers(lock_ttl=5.0)
    signed_in = Client()
    signed_in.force_login(User.objects.create_superuser("fault-admin", "", None))
    page = LivePage(web, f"/clusters/{cluster.name}/", signed_in.cookies[settings.SESSION_COOKIE_NAME].value)
    bound = lambda: Pod.objects.filter(cluster=cluster, queue=Pod.BOUND).count()  # noqa: E731
    cycles = SchedulingCycle.objects.filter(cluster=cluster)
    last_cycle = lambda: cycles.order_by("-seq").values_list("seq", flat=True).first() or 0  # noqa: E731
    try:
        wait_for(lambda: page.messages("hello"), 30, 0.1, "the page's websocket")
        svc.set_state(cluster, Cluster.RUNNING)
        wait_for(lambda: bound() >= 200, 120, 0.1, "the first bindings")
        down_at = time.time()  # before stopping: the page's websocket may close while the server shuts down
        services.redis_stop()
        before = bound()
        time.sleep(OUTAGE)
        during = bound() - before
        services.redis_start()
        up_at, cycle_at_recovery = time.time(), last_cycle()
        first_update = wait_for(lambda: next((e["t"] for e in page.messages("update") if e["t"] > up_at), None),
                                60, 0.1, "a live update in the browser after Redis came back") - up_at
        reopened_at = next((e["t"] for e in page.tap if e["kind"] == "open" and e["t"] > down_at), None)
        # the loop takes its lock again (Redis came back empty) before the commands below: each sends a Celery
        # task, which stands by while the lock is held but would take a lock that nobody holds yet
        wait_for(lambda: "Redis is back" in worker.text(), 30, 0.2, "the loop taking its lock again")
        wait_for(lambda: bound() == PODS, 300, 0.3, "every pod bound")
        # Celery reconnected: a command sent through the broker after the outage is executed
        svc.set_state(cluster, Cluster.PAUSED)
        svc.add_pod(cluster, {"metadata": {"name": "after"}, "spec": {"containers": [{"name": "c", "image": "c:1"}]}})
        svc.step(cluster, 1)
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name="after", queue=Pod.BOUND).exists(), 60, 0.2,
                 "a step after the outage")
        final = last_cycle()
        wait_for(lambda: any(c["seq"] == final for e in page.messages("update") for c in e["msg"]["cycles"]), 30,
                 0.2, "the last cycle in the browser")
        wait_for(lambda: page.texts.get("queue.bound") == str(bound()), 30, 0.2, "the final bound count on the page")
    finally:
        page.close()
        # what the page received, for a look after the run (beside the worker and web process logs)
        (LOG_ROOT / request.node.name / "page-websocket.json").write_text(json.dumps(page.tap))
    db = {c["seq"]: (f"{c['pod_namespace']}/{c['pod_name']}", c["result"], c["node"])
          for c in cycles.values("seq", "pod_namespace", "pod_name", "result", "node")}
    seqs = sorted(db)
    cov = coverage(page.tap, seqs)
    updates = page.messages("update")
    wrong = [c for e in updates for c in e["msg"]["cycles"] if (c["pod"], c["result"], c["node"]) != db[c["seq"]]]
    bindings_missing = [s for s in cov["missing"] if db[s][1] == "scheduled"]
    drops = [e["t"] for e in page.tap if e["kind"] == "close" and not down_at <= e["t"] <= (reopened_at or 0)]
    opens = sum(e["kind"] == "open" for e in page.tap)
    inv = check_invariants(cluster)
    reconnect = "never" if reopened_at is None else f"{reopened_at - up_at:.1f}s"
    print(f"\nFAULT redis-outage: down={up_at - down_at:.1f}s pods={PODS} bound_during_outage={during} "
          f"browser_reconnected_after={reconnect} first_update_after_recovery={first_update:.1f}s "
          f"websocket_opens={opens} page_resyncs={page.resyncs} updates={len(updates)} "
          f"updates_lost_in_a_connection={cov['updates_lost']} cycles={len(seqs)} "
          f"cycles_after_recovery={sum(s > cycle_at_recovery for s in seqs)} "
          f"cycles_streamed={len(cov['streamed'])} cycles_in_reconnect_snapshot={cov['snapshot']} "
          f"cycles_missing={len(cov['missing'])} bindings_missing={len(bindings_missing)} "
          f"listed_cycles_wrong={len(wrong)} drops_outside_outage={len(drops)} "
          f"bound_twice={inv['bound_twice']} over_allocatable={inv['over_allocatable']} "
          f"bindings_without_cycle={inv['bindings_without_cycle']}")
    assert during > 0, "scheduling stopped while Redis was down"
    assert inv["bound_twice"] == inv["over_allocatable"] == inv["bindings_without_cycle"] == 0
    assert "Redis is back" in worker.text()
    assert reopened_at is not None and page.resyncs >= opens - 1, "the browser did not reconnect and refetch"
    assert cov["missing"] == [], f"cycles that never reached the browser: {cov['missing'][:20]}"
    assert wrong == [], f"cycles listed in updates that disagree with the database: {wrong[:5]}"
    assert drops == [], "the page's websocket dropped outside the outage"
    svc.set_state(cluster, Cluster.STOPPED)
