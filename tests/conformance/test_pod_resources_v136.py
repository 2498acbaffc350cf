"""What the real kube-scheduler v1.36.2 decided on pods with pod-level resources and pods resized in place
(tests/golden/v136-pod-resources, made by ``tests.conformance.pod_resources_oracle``) must be reproduced: the
same chosen node within ties, every plugin's weighted score and the exact message (golden_v136.compare)."""
import os

import pytest

from .golden_v136 import check_scenario, scenario_files
from .pod_resources_oracle import SCENARIOS

VECTORS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden", "v136-pod-resources")
CASES = scenario_files([VECTORS])


def test_every_scenario_has_its_vector():
    assert sorted(os.path.basename(p).split(".scenario.json")[0] for p in CASES) == sorted(SCENARIOS)


@pytest.mark.parametrize("path", CASES, ids=[os.path.basename(p).split(".scenario.json")[0] for p in CASES])
def test_pod_resources_decision(path):
    diffs = [f"{pod}: {diff}" for pod, diff in check_scenario(path) if diff is not None]
    assert not diffs, "\n".join(diffs)
