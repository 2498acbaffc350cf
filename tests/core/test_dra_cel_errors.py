"""A device selector that does not compile is refused in cel-go's words, as the real kube-apiserver v1.36.2 refuses
a DeviceClass with it (its answers recorded by tools/apiserver_texts.py in tests/golden/apiserver): the same
cause, field and message, for syntax errors, undeclared references, undefined fields, overloads that do not match,
literal patterns Go's regexp refuses, calls of functions the environment does not declare and results that are
not bool; and the selectors it accepts compile."""
from __future__ import annotations

import json
from pathlib import Path

from scheduler_core.dra.validation import VALIDATORS

RECORDED = Path(__file__).resolve().parents[1] / "golden" / "apiserver"


def _causes(device_class: dict) -> list:
    errs = []
    VALIDATORS["DeviceClass"](device_class, errs)
    return [{"reason": e.reason, "message": e.body(), "field": e.path} for e in errs]


def test_selectors_are_refused_in_the_real_apiservers_words():
    cases = json.loads((RECORDED / "cel-selectors.cases.json").read_text())["cases"]
    answers = json.loads((RECORDED / "cel-selectors.expected.json").read_text())["answers"]
    differences = {}
    for case in cases:
        kube = answers[case["name"]]
        ours = _causes(json.loads(case["body"]))
        if kube["status"] == 201:
            if ours:
                differences[case["name"]] = {"kube": "accepted", "ours": ours}
        elif ours != kube.get("causes"):
            differences[case["name"]] = {"kube": kube.get("causes"), "ours": ours}
    assert not differences, json.dumps(differences, indent=1)
