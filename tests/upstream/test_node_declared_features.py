"""kube's nodedeclaredfeatures/nodedeclaredfeatures_test.go (v1.36), TestPreFilter and TestFilter, case by case.
kube's mock features become NodeFeature entries of a FeatureFramework (a name, whether the pod needs it, a max
version)."""
import pytest

from scheduler_core.framework.status import Code
from scheduler_core.plugins.nodedeclaredfeatures import (ERR_REASON_UNSATISFIED_REQUIREMENTS, STATE_KEY,
                                                          FeatureFramework, NodeDeclaredFeatures, NodeFeature)

from .plugin_cases import make_node, make_pod, new_state, node_info, status_tuple

UPSTREAM = "pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures_test.go"
UPSTREAM_VERSION = "v1.36.2"
UPSTREAM_CASES = 12
UPSTREAM_NOT_TRANSLATED = {
    "TestEnqueueExtensionsNodeUpdate": "3 queueing-hint cases (the scheduling queue's hints, not this plugin's "
                                       "Filter)",
    "TestEnqueueExtensionsPodUpdate": "5 queueing-hint cases (as above)",
}
SKIP = (Code.SKIP, [])
SUCCESS = (Code.SUCCESS, [])


def mock(name, infer, max_version=None):
    return NodeFeature(name, lambda spec: infer, max_version)


PRE_FILTER_CASES = [
    ("plugin disabled", False, (1, 35, 0), [mock("TestFeature1", True), mock("TestFeature2", False)], SKIP, None),
    ("Pod with feature requirements", True, (1, 35, 0), [mock("TestFeature1", True), mock("TestFeature2", False)],
     SUCCESS, {"TestFeature1"}),
    ("Pod with multiple feature requirements", True, (1, 35, 0),
     [mock("TestFeature1", True, (1, 38, 0)), mock("TestFeature2", True, (1, 38, 0))], SUCCESS,
     {"TestFeature1", "TestFeature2"}),
    ("Pod with no requirements", True, (1, 35, 0), [mock("TestFeature1", False), mock("TestFeature2", False)],
     SKIP, None),
    ("Feature not required, version > MaxVersion", True, (1, 34, 0),
     [mock("TestFeature1", True, (1, 33, 0)), mock("TestFeature2", False)], SKIP, None),
]


@pytest.mark.parametrize("enabled, version, features, want, want_state", [c[1:] for c in PRE_FILTER_CASES],
                         ids=[c[0] for c in PRE_FILTER_CASES])
def test_pre_filter(enabled, version, features, want, want_state):
    plugin = NodeDeclaredFeatures(enabled, FeatureFramework(features), version)
    state = new_state()
    result, status = plugin.pre_filter(state, make_pod().name("test-pod").obj())
    assert result is None
    assert status_tuple(status) == want
    assert state.get(STATE_KEY) == (frozenset(want_state) if want_state is not None else None)


MOCKS = FeatureFramework([mock("FeatureA", False), mock("FeatureB", False), mock("FeatureC", False)])
ERR = (Code.ERROR, [f'error reading "{STATE_KEY}" from cycle-state: not found'])
U_AND_U = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_UNSATISFIED_REQUIREMENTS])
FILTER_CASES = [
    ("plugin disabled", False, ["FeatureA", "FeatureB"], None, SUCCESS),
    ("Node matches requirements", True, ["FeatureA", "FeatureB"], ["FeatureA"], SUCCESS),
    ("Node does not match requirements", True, ["FeatureB"], ["FeatureA"], U_AND_U),
    ("Node with multiple features, pod requires subset", False, ["FeatureA", "FeatureB", "FeatureC"],
     ["FeatureA", "FeatureC"], SUCCESS),
    ("Node has no declared features", True, None, ["FeatureA"], U_AND_U),
    ("Node with some but not all required features", True, ["FeatureA"], ["FeatureA", "FeatureB"], U_AND_U),
    ("Error getting pre-filter state", True, None, None, ERR),
]


@pytest.mark.parametrize("enabled, declared, reqs, want", [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(enabled, declared, reqs, want):
    node = make_node().name("node-1")
    if declared is not None:
        node.raw["status"]["declaredFeatures"] = declared
    plugin = NodeDeclaredFeatures(enabled, MOCKS, (1, 35, 0))
    state = new_state()
    if reqs is not None:
        state.write(STATE_KEY, frozenset(reqs))
    got = plugin.filter(state, make_pod().name("test-pod").obj(), node_info(node.obj()))
    assert status_tuple(got) == want
