"""The answers recorded in tests/golden/apiserver (which the simulated API's tests compare with) are the real
kube-apiserver v1.36.2's: every case sent again to a fresh control plane gets the recorded status, message,
causes and warnings."""
from __future__ import annotations

import json
from pathlib import Path

from tools.apiserver_texts import answer

RECORDED = Path(__file__).resolve().parents[1] / "golden" / "apiserver"


def test_the_recorded_answers_are_the_real_apiservers(control_plane, admin_client):
    """``admin_client`` gives the default namespace its ServiceAccount, as the recording did."""
    token = control_plane.kubeconfig_dict()["users"][0]["user"]["token"]
    differences = {}
    for path in sorted(RECORDED.glob("*.cases.json")):
        expected = json.loads(path.with_name(path.name.replace(".cases.", ".expected.")).read_text())["answers"]
        for case in json.loads(path.read_text())["cases"]:
            got = answer(control_plane, token, case)
            if got != expected[case["name"]]:
                differences[f"{path.name}:{case['name']}"] = {"recorded": expected[case["name"]], "now": got}
    assert not differences, json.dumps(differences, indent=1)
