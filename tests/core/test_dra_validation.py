"""resource.k8s.io/v1 objects through the one validation path (objects.validation), with kube's field paths and
messages, and the scenario loader refusing what the apiserver refuses."""
import pytest

from scheduler_core.dra.cel import compile_selector
from scheduler_core.objects.validation import object_errors
from scheduler_core.scenario import ScenarioError, scenario_from_data


def _texts(kind, raw):
    return [str(e) for e in object_errors(kind, raw)]


def test_resource_slice_node_selection_and_pool():
    base = {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com",
                                                "pool": {"name": "p", "resourceSliceCount": 1}}}
    assert _texts("ResourceSlice", base) == [
        "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
        "required"]
    both = {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com", "nodeName": "n", "allNodes": True,
                                                "pool": {"name": "p", "resourceSliceCount": 0}}}
    assert _texts("ResourceSlice", both) == [
        "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
        'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
        '`perDeviceNodeSelection` is required, but multiple fields are set']
    ns = {"metadata": {"name": "s", "namespace": "x"}, "spec": dict(both["spec"], allNodes=None,
                                                                   pool={"name": "p", "resourceSliceCount": 1})}
    assert _texts("ResourceSlice", ns) == ["metadata.namespace: Forbidden: not allowed on this type"]


def test_claim_requests_counts_modes_and_selectors():
    claim = {"metadata": {"name": "c", "namespace": "ml"}, "spec": {"devices": {"requests": [
        {"name": "a"},
        {"name": "b", "exactly": {"deviceClassName": "gpu", "count": 0}},
        {"name": "c", "exactly": {"deviceClassName": "gpu", "allocationMode": "Some"}},
        {"name": "d", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": "device.driver =="}}]}},
    ], "constraints": [{"requests": ["zz"], "matchAttribute": "gpu.example.com/numa"}]}}}
    texts = _texts("ResourceClaim", claim)
    assert texts[:3] == [
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
        "spec.devices.requests[1].exactly.count: Invalid value: 0: must be greater than zero",
        'spec.devices.requests[2].exactly.allocationMode: Unsupported value: "Some": supported values: "All", '
        '"ExactCount"']
    assert texts[3].startswith('spec.devices.requests[3].exactly.selectors[0].cel.expression: Invalid value: '
                               '"device.driver ==": compilation failed')
    assert texts[4] == ('spec.devices.constraints[0].requests[0]: Invalid value: "zz": must be the name of a request '
                        "in the claim or the name of a request and a subrequest separated by '/'")
    template = {"metadata": {"name": "t", "namespace": "ml"}, "spec": {"spec": claim["spec"]}}
    assert _texts("ResourceClaimTemplate", template)[0].startswith("spec.spec.devices.requests[0]: Required value")


def test_scenario_refuses_an_invalid_device_class():
    bad = {"nodes": [], "pods": [], "pending": [],
           "deviceclasses": [{"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {}}]}}]}
    with pytest.raises(ScenarioError, match=r"deviceclasses\[0\] \(gpu\): spec.selectors\[0\].cel.expression"):
        scenario_from_data(bad)


def test_selector_compile_errors_in_kube_apiserver_words():
    """The texts kube-apiserver v1.36.2 answered for these objects (tests/golden/v136-dra-own, dra-o43): a syntax
    error where an operand is missing, and an identifier the DRA environment does not declare."""
    cls = {"metadata": {"name": "bad.example.com"}, "spec": {"selectors": [
        {"cel": {"expression": 'device.driver == "gpu.example.com"'}}, {"cel": {"expression": 'device.attributes["x"].y =='}}]}}
    assert _texts("DeviceClass", cls) == [
        'spec.selectors[1].cel.expression: Invalid value: "device.attributes[\\"x\\"].y ==": compilation failed: '
        "ERROR: <input>:1:28: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
        "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
        ' | device.attributes["x"].y ==\n | ...........................^']
    template = {"metadata": {"name": "bad-template", "namespace": "ml"}, "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                    "selectors": [{"cel": {"expression": 'gpu.model == "a100"'}}]}}]}}}}
    assert _texts("ResourceClaimTemplate", template) == [
        'spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "gpu.model == \\"a100\\"": '
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'gpu' (in container '')\n"
        ' | gpu.model == "a100"\n | ^']
    bound = ['cel.bind(m, device.attributes["a"].model, m == "h100")', '["t4"].exists(x, x == device.driver)']
    assert all(compile_selector(e).error is None for e in bound)
    assert compile_selector("[1].all(x, x > y)").error.endswith(
        "undeclared reference to 'y' (in container '')\n | [1].all(x, x > y)\n | ...............^")


def test_device_tolerations_and_claim_consumers():
    """validateDeviceToleration and the reservedFor limit of a claim's status (the apiserver's words, from
    tests/golden/v136-dra-more dra-m16 and dra-m27)."""
    def template(*tolerations):
        return {"metadata": {"name": "t", "namespace": "ml"}, "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "tolerations": list(tolerations)}}]}}}}
    assert _texts("ResourceClaimTemplate", template({"key": "a", "operator": "Exists", "value": "x"})) == [
        'spec.spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: "x": must be empty for operator '
        '`Exists`']
    assert _texts("ResourceClaimTemplate", template({"operator": "Equal", "value": "x"}, {"operator": "Exists"})) == []
    assert _texts("ResourceClaimTemplate", template({"key": "a", "value": "x y"}))[0].startswith(
        'spec.spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: "x y": a valid label must be')
    consumers = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(257)]
    claim = {"metadata": {"name": "c", "namespace": "ml"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
             "status": {"reservedFor": consumers}}
    assert _texts("ResourceClaim", claim) == ["status.reservedFor: Too many: 257: must have at most 256 items"]
    claim["status"]["reservedFor"] = consumers[:2] + consumers[:1]
    assert _texts("ResourceClaim", claim) == ['status.reservedFor[2]: Duplicate value: "u0"']


def test_node_declared_features_sorted_and_named():
    node = {"metadata": {"name": "n"}, "status": {"declaredFeatures": ["RestartAllContainers",
                                                                       "ExtendWebSocketsToKubelet", "X", "X"]}}
    assert _texts("Node", node) == [
        'status.declaredFeatures[1]: Invalid value: "ExtendWebSocketsToKubelet": list must be sorted alphabetically',
        'status.declaredFeatures[3]: Duplicate value: "X"']
    node["status"]["declaredFeatures"] = ["bad-name"]
    assert _texts("Node", node)[0].startswith('status.declaredFeatures[0]: Invalid value: "bad-name": invalid feature '
                                              'name "bad-name": must start with an UpperCamelCase segment')
