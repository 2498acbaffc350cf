"""The pod page of a pod pending for long stays short, in headless Chromium: 138 identical attempts are one group
("attempts 1–138: same result, last at ...") from which any attempt can be shown, and its 134 FailedScheduling
events (recorded by another recorder than the loop's) are one Event whose series counts them, as kube's event
series does."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from . import test_browser
from .conftest import ROOT
from .test_browser import ARGS, CHROMIUM, _post_json, _shot

pytestmark = test_browser.pytestmark   # skipped without Chromium
server = test_browser.server           # the embedded server fixture

# In the embedded server's database: the first unschedulable pod with one recorded attempt gets 137 more of the
# same outcome (its cycle recorded again, each 10 s later, seqs far above the running loop's), and the recorder of
# this process records its FailedScheduling 134 times.
LONG_PENDING = """
import time
from datetime import timedelta
from dashboard.models import Pod, SchedulingCycle
from dashboard.services.recorder import Recorder
from scheduler_core.objects import Pod as CorePod
end = time.monotonic() + 120
while True:
    first = (SchedulingCycle.objects.filter(cluster__name="demo", result="unschedulable", attempt=1)
             .order_by("seq").first())
    if first is not None or time.monotonic() > end:
        break
    time.sleep(0.2)
cycles = []
for i in range(1, 138):
    c = SchedulingCycle.objects.get(pk=first.pk)
    c.pk, c.seq, c.attempt, c.started = None, 10**9 + i, 1 + i, first.started + timedelta(seconds=10 * i)
    cycles.append(c)
SchedulingCycle.objects.bulk_create(cycles)
pod = CorePod(Pod.objects.get(cluster=first.cluster, namespace=first.pod_namespace, name=first.pod_name).raw)
rec = Recorder(first.cluster, flush_interval=0.05)
for _ in range(134):
    rec.record_event("FailedScheduling", first.message, pod=pod, type_="Warning")
assert rec.close(60) and rec.failures == 0
print(first.pod_namespace, first.pod_name)
"""


def _long_pending_pod(tmp_path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'e2e.sqlite3'}", DJANGO_SETTINGS_MODULE="dashboard.settings")
    out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "shell", "-c", LONG_PENDING], cwd=ROOT, env=env,
                         check=True, capture_output=True, text=True, timeout=300).stdout
    return "/".join(out.split()[-2:])


def test_a_long_pending_pod_page_groups_identical_attempts_and_events(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    key = _long_pending_pod(tmp_path)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser).new_page()
        page.goto(f"{server}/clusters/demo/pods/{key}/")
        group = page.locator("#attempts li.group").first
        expect(group).to_contain_text("attempts 1–138: same result, last at")
        assert page.locator("#attempts li").count() <= 3
        events = page.locator("#pod-events li")
        # the running loop's Event of the first attempt, and the one whose series counts this recorder's 134
        expect(events.filter(has_text="FailedScheduling")).to_have_count(2)
        expect(events.first).to_contain_text(re.compile(r"\(x134 over \d+[smhd]"))   # kubectl's durations
        _shot(page, tmp_path, "pod-long-pending")
        assert page.evaluate("document.documentElement.scrollHeight") < 6000

        group.locator("input[name=attempt]").fill("57")
        group.get_by_role("button", name="Show").click()
        expect(page.locator("#decision h2").first).to_contain_text("attempt 57")
        expect(page.locator("#attempts li.group.sel")).to_contain_text("showing #57")
        _shot(page, tmp_path, "pod-attempt-57")
        browser.close()


def test_a_pod_no_profile_serves_says_so_wherever_it_appears(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    manifest = {"metadata": {"name": "nobodys", "namespace": "ops"},
                "spec": {"schedulerName": "nobody-scheduler",
                         "containers": [{"name": "c", "image": "c:1", "resources": {"requests": {"cpu": "100m"}}}]}}
    assert _post_json(server, "/api/clusters/demo/pods/", {"manifest": manifest}) == 201
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser).new_page()
        page.goto(f"{server}/clusters/demo/pending/?namespace=ops")
        row = page.locator('#pending-table tr[data-pod="ops/nobodys"]')
        expect(row.locator("td.queue")).to_have_text("no profile")
        expect(row.locator("td.rejections")).to_have_text("no profile serves schedulerName nobody-scheduler: "
                                                          "never tried")
        _shot(page, tmp_path, "pending-unserved")
        expect(page.locator("#reason-groups li")).to_have_text(["none"])   # ops has no unschedulable pod
        # the namespace filter holds for the groups panel, and a click on a group keeps it
        page.goto(f"{server}/clusters/demo/pending/?namespace=ml")
        badges = page.locator("#reason-groups li .badge").all_inner_texts()
        assert badges and sum(int(b) for b in badges) <= int(page.locator("#pending-count").inner_text())
        page.locator("#reason-groups li a").first.click()
        page.wait_for_url("**group=**")
        assert "namespace=ml" in page.url
        pods = page.locator("#pending-table tr[data-pod]").evaluate_all("rows => rows.map(r => r.dataset.pod)")
        assert pods and all(p.startswith("ml/") for p in pods), pods
        page.goto(f"{server}/clusters/demo/pending/?namespace=ops")
        row = page.locator('#pending-table tr[data-pod="ops/nobodys"]')
        row.locator("a").first.click()
        expect(page.locator("#unserved")).to_contain_text("No profile of this cluster serves schedulerName "
                                                          "nobody-scheduler")
        expect(page.locator("#pod-queue")).to_have_text("in no queue")
        _shot(page, tmp_path, "pod-unserved")
        page.goto(f"{server}/clusters/demo/")
        expect(page.locator("#unserved-card")).to_contain_text("no profile serves")
        expect(page.locator('#unserved-card [data-live="queue.unserved"]')).to_have_text("1")
        _shot(page, tmp_path, "overview-unserved", full_page=False)
        browser.close()


def test_the_pod_page_follows_its_pod_live(server, tmp_path):
    """Without a reload: a binding made elsewhere turns the page to bound (its event listed, "Bind manually"
    gone); a node added for an unschedulable pod brings its new attempt, the decision trace of it, its queue."""
    from playwright.sync_api import expect, sync_playwright
    binding = {"apiVersion": "v1", "kind": "Binding", "target": {"apiVersion": "v1", "kind": "Node", "name": "gpu-1"}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser, width=1280).new_page()
        page.goto(f"{server}/clusters/demo/pods/ml/inference-no-toleration/")
        expect(page.locator("#verdict")).to_contain_text("untolerated taint", timeout=30000)
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        expect(page.locator("#bind-open")).to_be_visible()
        assert _post_json(server, "/api/clusters/demo/pods/ml/inference-no-toleration/binding/", binding) == 201
        expect(page.locator("#pod-bound")).to_contain_text("bound to gpu-1", timeout=30000)
        expect(page.locator("#bind-open")).to_have_count(0)
        expect(page.locator("#pod-events li").first).to_contain_text("ManualBinding")
        _shot(page, tmp_path, "pod-live-bound")

        page.goto(f"{server}/clusters/demo/pods/data/postgres-nvme/")
        expect(page.locator("#verdict")).to_contain_text("didn't match Pod's node affinity/selector", timeout=30000)
        expect(page.locator("#live-dot")).to_have_text("live", timeout=15000)
        tried = page.locator("#attempts li").count()
        node = {"metadata": {"name": "nvme-1", "labels": {"disk": "nvme", "topology.kubernetes.io/zone": "zone-a"}},
                "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}
        assert _post_json(server, "/api/clusters/demo/nodes/", {"manifest": node}) == 201
        expect(page.locator("#attempts li").first).to_contain_text("scheduled → nvme-1", timeout=30000)
        expect(page.locator("#attempts li")).to_have_count(tried + 1)
        expect(page.locator("#verdict")).to_contain_text("Scheduled on nvme-1")
        expect(page.locator("#decision h2").first).to_contain_text(f"attempt {tried + 1}")
        expect(page.locator("#pod-bound")).to_contain_text("bound to nvme-1")
        expect(page.locator("#pod-events")).to_contain_text("Scheduled")
        expect(page.locator("#bind-open")).to_have_count(0)
        _shot(page, tmp_path, "pod-live-scheduled")
        browser.close()


def test_a_running_pod_shows_its_ip_and_replica_set_and_its_node_the_pod_cidr(server, tmp_path):
    """As kubectl describe says it: a pod of the demo that runs from the start has an IP of its node's pod CIDR and
    is controlled by the ReplicaSet it names; the node's page lists the pod with that IP."""
    import ipaddress
    import re

    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser).new_page()
        page.goto(f"{server}/clusters/demo/pods/prod/base-000/")
        expect(page.locator("#pod-controller")).to_have_text(re.compile(r"^ReplicaSet/base-[b-z2-9]+$"))
        ip = page.locator("#pod-ip").inner_text()
        _shot(page, tmp_path, "pod-ip-controller")
        page.locator("#pod-bound a").click()
        expect(page.locator("main h1")).to_contain_text("general-01")
        cidr = page.locator("#node-pod-cidr").inner_text()
        assert ipaddress.ip_address(ip) in ipaddress.ip_network(cidr) and cidr.endswith("/24")
        expect(page.locator("tr", has_text="prod/base-000")).to_contain_text(ip)
        _shot(page, tmp_path, "node-pod-cidr")
        browser.close()
