"""End to end in headless Chromium (Debian's /usr/bin/chromium driven by Playwright): the embedded
server as `make run` starts it, the demo cluster, the why-pending trace of an unschedulable pod, and a
pod that becomes bound live (no reload) once a node it fits on is added."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from .conftest import ROOT, web_process

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed")


SIGN_IN = """
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from knox.models import AuthToken
user = User.objects.create_superuser("e2e-admin", "", None)
store = SessionStore()
store.update({SESSION_KEY: str(user.pk), BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
              HASH_SESSION_KEY: user.get_session_auth_hash()})
store.create()
print(store.session_key, AuthToken.objects.create(user=user)[1])
"""


# Every Content-Security-Policy violation in a watched page is reported on its console (Chromium logs them too).
REPORT_CSP_VIOLATIONS = """document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline"));
});"""


class Server(str):
    """The server's base URL, with an admin's session key (for a browser cookie) and API token. ``violations``:
    the Content-Security-Policy violations seen in the watched browser contexts (the fixture fails on any)."""

    session: str
    token: str
    violations: list

    def watch(self, target):
        """Collect CSP violations of ``target`` (a browser context or page) into ``violations``."""
        target.add_init_script(REPORT_CSP_VIOLATIONS)

        def on_console(msg):
            if msg.type == "error" and ("Content Security Policy" in msg.text or "CSP violation" in msg.text):
                self.violations.append(f"{msg.text} ({msg.location.get('url', '')})")
        target.on("console", on_console)
        return target

    def context(self, browser, width: int = 1440):
        """A browser context signed in as the admin, watched for CSP violations."""
        ctx = browser.new_context(viewport={"width": width, "height": 1000})
        ctx.add_cookies([{"name": "sessionid", "value": self.session, "url": str(self)}])
        return self.watch(ctx)


@contextmanager
def embedded_server(tmp_path, *demo_args):
    """`make run` in miniature: SQLite, in-memory channel layer, the scheduler as a thread of the web process, the demo
    cluster loaded by ``manage.py demo *demo_args``; yields the Server, then fails on any CSP violation seen."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'e2e.sqlite3'}", DJANGO_SETTINGS_MODULE="dashboard.settings",
               SCHEDSCOPE_BROADCAST_INTERVAL="0.2")
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run(manage + ["migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run(manage + ["demo", *demo_args], cwd=ROOT, env=env, check=True, capture_output=True)
    session, token = subprocess.run(manage + ["shell", "-c", SIGN_IN], cwd=ROOT, env=env, check=True,
                                    capture_output=True, text=True).stdout.split()[-2:]
    with web_process(env, tmp_path / "web.log") as url:
        base = Server(url)
        base.session, base.token, base.violations = session, token, []
        yield base
    assert not base.violations, "Content-Security-Policy violations:\n" + "\n".join(base.violations)


@pytest.fixture
def server(tmp_path):
    """The embedded server with the demo's bundled pods only (no workload generator)."""
    with embedded_server(tmp_path, "--no-workload") as base:
        yield base


def _shot(page, tmp_path, name, full_page=True):
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    out = os.environ.get("SCHEDSCOPE_SCREENSHOTS")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(out) / f"{name}.png")


def _post_json(server, path, data):
    req = urllib.request.Request(server + path, data=json.dumps(data).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Token {server.token}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status


def test_demo_why_pending_and_live_binding(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser).new_page()
        page.goto(server + "/")
        expect(page).to_have_url(server + "/clusters/demo/")
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        # the embedded scheduler works through the demo's pending pods; the count arrives live
        expect(page.locator('[data-live="queue.unschedulable"]')).not_to_have_text("0", timeout=30000)
        page.reload()
        expect(page.locator("#blocking-plugins")).to_contain_text("TaintToleration")
        expect(page.locator("#latency-chart")).to_be_visible()
        _shot(page, tmp_path, "overview")

        page.click("text=Pending pods")
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        # a new pod that cannot fit arrives in the (unfiltered, first-page) list live, with its reason
        pod = {"metadata": {"name": "live-huge", "namespace": "default", "uid": "live-huge"},
               "spec": {"containers": [{"name": "c", "image": "c:1",
                                        "resources": {"requests": {"cpu": "500", "memory": "1Gi"}}}]}}
        assert _post_json(server, "/api/clusters/demo/pods/", {"manifest": pod}) == 201
        row = page.locator('#pending-table tr[data-pod="default/live-huge"]')
        expect(row).to_contain_text("Insufficient cpu", timeout=30000)
        expect(page.locator("#reason-groups")).to_contain_text("NodeResourcesFit · Insufficient cpu")
        page.fill('input[name="q"]', "inference")
        page.press('input[name="q"]', "Enter")
        expect(page.locator("#pending-table")).to_contain_text("ml/inference-no-toleration")
        page.click("text=ml/inference-no-toleration")
        expect(page.locator("#verdict")).to_contain_text("0/53 nodes are available:")
        expect(page.locator("#verdict")).to_contain_text("12 node(s) had untolerated taint(s)")
        stopped = page.locator("#filter-matrix td.cell.stopped")
        # v1.36's reason names no taint: the gpu nodes' row and the row of the control-plane and DRA nodes (which
        # fail NodeResourcesFit too) say the same
        expect(stopped.filter(has_text="untolerated taint(s)")).to_have_count(2)
        expect(stopped.filter(has_text="Insufficient nvidia.com/gpu")).to_have_count(1)
        headers = page.locator("#filter-matrix thead th").all_inner_texts()
        assert "TaintToleration" in [h.strip() for h in headers]
        fixes = page.locator("#suggestions")
        expect(fixes).to_contain_text("What would fix it")
        expect(fixes).to_contain_text("toleration")
        _shot(page, tmp_path, "pod-unschedulable")

        page.goto(server + "/clusters/demo/pods/data/postgres-nvme/")
        expect(page.locator("#verdict")).to_contain_text("didn't match Pod's node affinity/selector")
        # the smallest cluster change: one node labelled, the others that would fit named
        expect(page.locator("#suggestions")).to_contain_text(
            "labelling general-01 with disk=nvme would fit it; labelled so, 40 other nodes")
        _shot(page, tmp_path, "pod-fix-one-node")
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        node = {"metadata": {"name": "nvme-1", "labels": {"disk": "nvme", "topology.kubernetes.io/zone": "zone-a"}},
                "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}
        assert _post_json(server, "/api/clusters/demo/nodes/", {"manifest": node}) == 201
        expect(page.locator("#attempts li").first).to_contain_text("scheduled → nvme-1", timeout=30000)
        expect(page.locator("#pod-bound")).to_contain_text("bound to nvme-1")
        page.reload()
        expect(page.locator("#verdict")).to_contain_text("Scheduled on nvme-1")
        _shot(page, tmp_path, "pod-scheduled")
        page.locator("#attempts a.diff-link").first.click()
        expect(page.locator("#diff-box")).to_contain_text("unschedulable")
        expect(page.locator("#diff-box")).to_contain_text("nvme-1")
        _shot(page, tmp_path, "pod-diff")
        page.goto(server + "/clusters/demo/events/?reason=FailedScheduling")
        expect(page.locator("#event-chart")).to_be_visible()
        expect(page.locator("ul.events")).to_contain_text("FailedScheduling")
        _shot(page, tmp_path, "events")
        page.goto(server + "/clusters/demo/pending/")
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        expect(page.locator("#pending-table")).to_contain_text("default/live-huge")
        # the connection drops; what happens meanwhile arrives through the resync after the reconnect
        page.evaluate("window.schedscopeLive.drop()")
        pod = {"metadata": {"name": "while-away", "namespace": "default", "uid": "while-away"},
               "spec": {"containers": [{"name": "c", "image": "c:1",
                                        "resources": {"requests": {"cpu": "400", "memory": "1Gi"}}}]}}
        assert _post_json(server, "/api/clusters/demo/pods/", {"manifest": pod}) == 201
        page.wait_for_function("() => window.schedscopeLive.resyncs() >= 1", timeout=15000)  # no eval under the CSP
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        expect(page.locator("#pending-table")).to_contain_text("default/while-away", timeout=30000)
        page.goto(server + "/clusters/demo/nodes/?q=nvme")   # paged: the new node found by name
        expect(page.locator("#node-table")).to_contain_text("nvme-1")   # its screenshot: test_layout_browser
        # the policy refuses an inline script, and the watch reports it (so the fixture fails on one)
        assert not server.violations, server.violations
        page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1';"
                      " document.body.appendChild(s); }")
        page.wait_for_timeout(300)
        assert page.evaluate("window.ran") is None
        assert any("script-src" in v for v in server.violations), server.violations
        server.violations.clear()
        browser.close()
