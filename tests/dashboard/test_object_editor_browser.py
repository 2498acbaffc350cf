"""The object editor in headless Chromium: a scenario uploaded from the overview, a pod written in the editor
(refused first, with its field's line marked and selectable, then saved) that the scheduler then finds pending, and that the REST API
serves (one store)."""
from __future__ import annotations

import json
import re
import urllib.request

from .conftest import small_scenario
from .test_browser import ARGS, CHROMIUM, _shot, pytestmark, server  # noqa: F401 (the skip mark and fixture)

HUGE = """apiVersion: v1
kind: Pod
metadata:
  name: editor-huge
  namespace: default
  labels:
    app: batch
spec:
  containers:
  - name: main
    image: busybox
    resources:
      requests:
        cpu: "{cpu}"
        memory: 1Gi
"""


def test_upload_scenario_and_create_a_pod_in_the_editor(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    scenario = tmp_path / "small.json"
    scenario.write_text(json.dumps(small_scenario(2)))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = server.context(browser).new_page()
        page.goto(server + "/clusters/demo/")
        page.click("#upload-scenario")
        page.set_input_files('input[name="file"]', str(scenario))
        page.click("#scenario-form button")
        expect(page.locator("#flash")).to_contain_text("small.json: 6 nodes, 0 bound and 5 pending pods loaded")

        page.click("text=Pending pods")
        page.click("#new-pod")
        editor = page.locator("textarea[name=manifest]")
        expect(editor).to_have_value(re.compile("kind: Pod"))
        editor.fill(HUGE.format(cpu="-64"))
        page.click("#object-editor button")
        expect(page.locator("#editor-errors")).to_contain_text(
            'line 14: spec.containers[0].resources.requests[cpu]: Invalid value: "-64": must be greater than or '
            'equal to 0')
        expect(page.locator(".gutter .bad")).to_have_text("14")   # the line marked beside the manifest
        page.click("#editor-errors li.at-line")                      # and selected on a click on its error
        assert editor.evaluate("a => a.value.slice(a.selectionStart, a.selectionEnd)") == '        cpu: "-64"'
        _shot(page, tmp_path, "object-editor", full_page=False)
        editor.fill(HUGE.format(cpu="64"))
        page.click("#object-editor button")
        page.wait_for_url(server + "/clusters/demo/pods/default/editor-huge/")
        expect(page.locator("#flash")).to_contain_text("New pod: saved")

        page.click("text=Pending pods")
        expect(page.locator('#pending-table tr[data-pod="default/editor-huge"]')).to_contain_text(
            "Insufficient cpu", timeout=30000)
    req = urllib.request.Request(server + "/api/clusters/demo/pods/default/editor-huge/",
                                 headers={"Authorization": f"Token {server.token}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        pod = json.load(r)
    assert pod["labels"] == {"app": "batch"} and pod["node_name"] == ""
