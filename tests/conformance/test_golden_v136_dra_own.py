"""The real kube-scheduler v1.36.2's decisions on this project's own DRA scenarios (tests/golden/v136-dra-own,
made by tools/live_oracle.py) must be reproduced: the same chosen node within ties, every plugin's weighted score
and the exact message (golden_v136.compare)."""
import os

import pytest

from .golden_v136 import check_scenario, scenario_files

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN = os.path.join(HERE, "golden", "v136-dra-own")
CASES = scenario_files([os.path.join(OWN, "derived")])


def test_vectors_present_for_every_scenario():
    inputs = {f.split(".scenario.json")[0] for f in os.listdir(OWN) if f.endswith(".scenario.json")}
    runs = {f[:-5] for f in os.listdir(os.path.join(OWN, "derived", "_runs"))}
    assert len(inputs) >= 40 and inputs == runs
    assert len(CASES) >= 100


@pytest.mark.parametrize("path", CASES, ids=[os.path.basename(p).split(".scenario.json")[0] for p in CASES])
def test_dra_own_decision(path):
    diffs = [f"{pod}: {diff}" for pod, diff in check_scenario(path) if diff is not None]
    assert not diffs, "\n".join(diffs)
