"""The real kube-scheduler v1.36.2's DRA decisions (tests/golden/v136/dra-*, from ../shared/golden-v136) must be
reproduced: the same chosen node within ties, every plugin's weighted score and the exact message."""
import os

import pytest

from .golden_v136 import check_scenario, is_dra, scenario_files

V136 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden", "v136")
CASES = [p for p in scenario_files([V136]) if is_dra(p)]


def test_vectors_present():
    assert len(CASES) == 85


@pytest.mark.parametrize("path", CASES, ids=[os.path.basename(p).split(".scenario.json")[0] for p in CASES])
def test_dra_decision(path):
    diffs = [f"{pod}: {diff}" for pod, diff in check_scenario(path) if diff is not None]
    assert not diffs, "\n".join(diffs)
