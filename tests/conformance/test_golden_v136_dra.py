"""The real kube-scheduler v1.36.2's DRA decisions (tests/golden/v136/dra-*, from ../shared/golden-v136): every pod
must go where kube put it (within ties) or fail as it failed, on the same feasible nodes; and at least as many
decisions as today must be equal in full (scores and messages too; the rest differ only in v1.36's
NodeResourcesBalancedAllocation scores and untolerated-taint text, which are not DRA's)."""
import os

import pytest

from .golden_v136 import check_scenario, is_dra, scenario_files

V136 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden", "v136")
CASES = [p for p in scenario_files([V136]) if is_dra(p)]
FULLY_EQUAL_AT_LEAST = 63
OUTCOME = ("unschedulable:", "top_nodes:", "bound_node:", "feasible nodes:", "simulate failed:", "no decision",
           "preemption:")


def test_vectors_present():
    assert len(CASES) == 85


@pytest.mark.parametrize("path", CASES, ids=[os.path.basename(p).split(".scenario.json")[0] for p in CASES])
def test_dra_outcome(path):
    diffs = [f"{pod}: {diff}" for pod, diff in check_scenario(path) if diff is not None and diff.startswith(OUTCOME)]
    assert not diffs, "\n".join(diffs)


def test_dra_decisions_fully_equal():
    equal = sum(diff is None for path in CASES for _pod, diff in check_scenario(path))
    assert equal >= FULLY_EQUAL_AT_LEAST
