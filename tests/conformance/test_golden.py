"""Every golden decision of kube-scheduler v1.30 must be reproduced exactly (in-process, no subprocess)."""
import os

import pytest

from scheduler_core.cli import main as cli_main
from scheduler_core.scenario import load_scenario
from scheduler_core.simulate import Simulation, golden_document

from .golden_compare import diff_decision, expected_for, scenario_paths

CASES = [p for sub in ("core", "config") for p in scenario_paths(sub)]


@pytest.mark.parametrize("path", CASES, ids=[os.path.basename(p).replace(".scenario.json", "") for p in CASES])
def test_golden_scenario(path, capsys):
    expected = expected_for(path)
    if "config_error" in expected:
        assert cli_main(["simulate", path, "--tie-break", "name", "--format", "golden"]) == 2
        err = capsys.readouterr().err
        stage_text = expected["config_error"].replace("(0xADDR)", "")
        # kube's own text, minus the heap address it prints for a duplicate field path
        head = stage_text.split("field.Path{")[0]
        assert head.strip() and head in err, err
        return
    sim = Simulation(load_scenario(path), tie_break="name")
    doc = golden_document(sim, list(sim.run()))
    assert doc["plugins"] == expected["plugins"]
    if "profiles" in expected:
        assert doc.get("profiles") == expected["profiles"]
    assert len(doc["decisions"]) == len(expected["decisions"])
    for i, (e, g) in enumerate(zip(expected["decisions"], doc["decisions"])):
        d = diff_decision(e, g)
        assert d is None, f"decision {i} ({e['pod']}): {d}"
