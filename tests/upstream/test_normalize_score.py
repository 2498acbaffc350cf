"""kube's helper/normalize_score_test.go, TestDefaultNormalizeScore, case by case (MaxNodeScore 100)."""
import pytest

from scheduler_core.plugins.helper import default_normalize_score

UPSTREAM = "pkg/scheduler/framework/plugins/helper/normalize_score_test.go"
UPSTREAM_VERSION = ("v1.19-v1.33 era (commit 0c3d8b97: framework.NodeScoreList); DefaultNormalizeScore is unchanged "
                    "in v1.30")
UPSTREAM_CASES = 7

CASES = [
    (False, [1, 2, 3, 4], [25, 50, 75, 100]),
    (True, [1, 2, 3, 4], [75, 50, 25, 0]),
    (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
    (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
    (False, [1, 1, 1, 1], [100, 100, 100, 100]),
    (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
    (True, [0, 1, 1, 1], [100, 0, 0, 0]),
]


@pytest.mark.parametrize("reverse, scores, want", CASES, ids=[f"case_{i}" for i in range(len(CASES))])
def test_default_normalize_score(reverse, scores, want):
    pairs = [["", s] for s in scores]
    default_normalize_score(100, reverse, pairs)
    assert [s for _n, s in pairs] == want
