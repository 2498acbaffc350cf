"""The real kube-scheduler v1.36.2's outcomes on this project's pod-group scenarios (tests/golden/v136-gang-own,
made by tools/gang_oracle.py with GenericWorkload, GangScheduling and TopologyAwareWorkloadScheduling on) must be
reproduced by the scheduling loop at 1.36: each pod's outcome and message, the nodes taken, the PodGroup
conditions (gang_v136.compare)."""
import os

import pytest

from .gang_v136 import check, scenario_files

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN = os.path.join(HERE, "golden", "v136-gang-own")
CASES = scenario_files(os.path.join(OWN, "derived"))


def test_vectors_present_for_every_scenario():
    inputs = {f.split(".scenario.json")[0] for f in os.listdir(OWN) if f.endswith(".scenario.json")}
    assert len(inputs) >= 8 and inputs == {os.path.basename(p).split(".scenario.json")[0] for p in CASES}


@pytest.mark.parametrize("path", CASES, ids=[os.path.basename(p).split(".scenario.json")[0] for p in CASES])
def test_gang_outcome(path):
    diffs = check(path)
    assert not diffs, "\n".join(diffs)
