"""scheduler_core.objects.validation (kube-apiserver's rules for what is stored), quantity bounds and the depth
limit of uploaded documents: each test replays an input that was once accepted and broke pages or the loop."""
import json
import time

import pytest
import yaml

from scheduler_core.cli import main as cli_main
from scheduler_core.documents import DepthError, load_json, safe_yaml_load
from scheduler_core.objects import Node, ParseError, Pod
from scheduler_core.objects.quantity import QuantityError, canonical, milli_value, parse_quantity, value
from scheduler_core.objects.validation import ValidationError, object_errors, pod_update_errors, validate_object
from scheduler_core.scenario import ScenarioError, load_documents, scenario_from_data

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
         "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def node(name="n1", **alloc) -> dict:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110",
                                                                   **alloc}}}


def pod(name="p", namespace="default", labels=None, **requests) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", **requests}}}]}}


def messages(kind, raw) -> list:
    return [str(e) for e in object_errors(kind, raw)]


# -- quantities ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["1e309", "1e999999999", 1e300, "99999999999999999999999"])
def test_quantities_beyond_int64_are_errors_not_giant_numbers(text):
    t0 = time.monotonic()
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert err.value.detail == "must be less than or equal to 9223372036854775807"
    assert time.monotonic() - t0 < 0.5      # 10**999999999 is never computed


def test_binary_quantities_are_capped_as_kube_does_and_cpu_must_fit_millicores():
    assert parse_quantity("99999999999999999999Ei") == 2**63 - 1          # resource.ParseQuantity's cap
    assert value("99999999999999999999Ei") == 2**63 - 1                   # memory: fits
    for cpu in ("99999999999999999999Ei", "1e18", 1e18):                   # cpu in millicores: does not
        with pytest.raises(QuantityError) as err:
            milli_value(cpu)
        assert err.value.detail == "must be less than or equal to 9223372036854775807m"
    assert milli_value("9223372036854775.807") == 2**63 - 1


def test_quantity_rounding_and_canonical_form():
    assert parse_quantity("1e-999999999") * 10**9 == 1                    # non-zero rounds up to 1n
    assert parse_quantity("0." + "0" * 5000 + "1") * 10**9 == 1            # no int conversion of 5000 digits
    assert [canonical(q) for q in ("-1", "-0.5", "2048Ki", "1500m", "1e3", "0.1Ki", "0")] == \
        ["-1", "-500m", "2Mi", "1500m", "1e3", "102400m", "0"]
    for bad in (float("inf"), float("nan"), "1.5.5", "", True):
        with pytest.raises(QuantityError):
            parse_quantity(bad)


# -- objects -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,shown", [("A", '"A"'), ("a\x00b", '"a\\x00b"'), ("../../etc", '"../../etc"'),
                                        ("has space", '"has space"'), ("a/b", '"a/b"')])
def test_names_follow_kube_dns1123_subdomain(name, shown):
    for kind, raw in (("Pod", pod(name)), ("Node", node(name))):
        assert messages(kind, raw) == [f"metadata.name: Invalid value: {shown}: {SUBDOMAIN}"]
    long = "a" * 254
    assert messages("Pod", pod(long)) == [f'metadata.name: Invalid value: "{long}": must be no more than 253 '
                                          "characters"]


def test_namespaces_and_namespace_objects_are_dns1123_labels():
    assert messages("Pod", pod(namespace="Bad NS")) == [f'metadata.namespace: Invalid value: "Bad NS": {LABEL}']
    assert messages("Namespace", {"metadata": {"name": "a.b"}}) == [f'metadata.name: Invalid value: "a.b": {LABEL}']
    assert messages("Service", {"metadata": {"name": "1web"}})[0].startswith(
        'metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric')
    assert messages("Node", dict(node(), metadata={"name": "n1", "namespace": "x"})) == \
        ["metadata.namespace: Forbidden: not allowed on this type"]


def test_label_keys_and_values():
    assert messages("Pod", pod(labels={"app": "v" * 64})) == \
        [f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters']
    errs = messages("Pod", pod(labels={"-bad": "x", "a/b/c": "x", "ok": "bad value", "n": 3}))
    assert errs[0] == 'metadata.labels: Invalid value: 3: the value of \'n\' must be a string'
    assert any(e.startswith('metadata.labels: Invalid value: "-bad": name part must consist of') for e in errs)
    assert any(e.startswith('metadata.labels: Invalid value: "a/b/c": a qualified name must consist') for e in errs)
    assert any(e.startswith('metadata.labels: Invalid value: "bad value": a valid label must be an empty string')
               for e in errs)
    assert messages("Pod", dict(pod(), spec={"nodeSelector": {"k": "v" * 64}})) == \
        [f'spec.nodeSelector: Invalid value: "{"v" * 64}": must be no more than 63 characters']
    assert messages("Node", {"metadata": {"name": "n"}, "spec": {"taints": [
        {"key": "a b", "value": "ok", "effect": "NoSchedule"}]}})[0].startswith(
        'spec.taints[0].key: Invalid value: "a b": name part must consist of')


def test_resources_are_non_negative_bounded_and_named_as_kube_wants():
    assert messages("Pod", pod(cpu="-1")) == \
        ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0']
    assert messages("Pod", pod(cpu="1e18")) == ['spec.containers[0].resources.requests[cpu]: Invalid value: '
                                                '"1e18": must be less than or equal to 9223372036854775807m']
    assert messages("Node", node(cpu="1e309")) == \
        ['status.allocatable.cpu: Invalid value: "1e309": must be less than or equal to 9223372036854775807']
    assert messages("Node", node(**{"nvidia.com/gpu": "0.5", "memory": "-1Gi"})) == [
        'status.allocatable.memory: Invalid value: "-1Gi": must be greater than or equal to 0',
        'status.allocatable.nvidia.com/gpu: Invalid value: "500m": must be an integer']
    raw = pod(foo="1")
    raw["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "50m"}
    assert messages("Pod", raw) == [
        'spec.containers[0].resources.requests[foo]: Invalid value: "foo": must be a standard resource for '
        "containers",
        'spec.containers[0].resources.requests: Invalid value: "100m": must be less than or equal to cpu limit '
        "of 50m"]
    assert messages("Pod", dict(pod(), spec={"overhead": {"cpu": "-5m"}})) == \
        ['spec.overhead[cpu]: Invalid value: "-5m": must be greater than or equal to 0']


def test_tolerations_taints_and_owner_references_in_kube_words():
    effects = '"NoSchedule", "PreferNoSchedule", "NoExecute"'
    raw = pod()
    raw["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedul"},
                                  {"operator": "Equal"}, {"key": "b", "operator": "Lt", "tolerationSeconds": 5},
                                  {"key": "c", "operator": "Sometimes"}]
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/", "kind": "ReplicaSet", "uid": "u"}]
    assert messages("Pod", raw) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        f'spec.tolerations[0].effect: Unsupported value: "NoSchedul": supported values: {effects}',
        'spec.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
        'means "match all values and all keys"',
        "spec.tolerations[2].effect: Invalid value: \"\": effect must be 'NoExecute' when `tolerationSeconds` is set",
        'spec.tolerations[2].operator: Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"',
        'spec.tolerations[3].operator: Unsupported value: "Sometimes": supported values: "Equal", "Exists"']
    tainted = dict(node(), spec={"taints": [{"key": "a", "effect": "Sometimes"}, {"key": "b"}]})
    assert messages("Node", tainted) == [
        f'spec.taints[0].effect: Unsupported value: "Sometimes": supported values: {effects}',
        "spec.taints[1].effect: Required value"]


def test_pod_updates_may_only_add_tolerations():
    old = pod()
    old["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]
    added = json.loads(json.dumps(old))
    added["spec"]["tolerations"][0]["tolerationSeconds"] = 60   # tolerationSeconds may change
    added["spec"]["tolerations"].append({"key": "more", "operator": "Exists"})
    assert pod_update_errors(old, added) == []
    changed = json.loads(json.dumps(old))
    changed["spec"]["tolerations"][0]["effect"] = "NoSchedule"
    assert [str(e) for e in pod_update_errors(old, changed)] == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"]
    assert [str(e) for e in pod_update_errors(old, pod())] == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"]


def test_a_valid_object_passes_and_errors_are_parse_errors_with_every_cause():
    assert object_errors("Pod", pod()) == [] and object_errors("Node", node()) == []
    validate_object("Pod", pod())
    with pytest.raises(ParseError) as err:
        validate_object("Pod", pod(name="A", cpu="-1"))
    assert isinstance(err.value, ValidationError) and len(err.value.causes) == 2
    assert err.value.path == "metadata.name"
    # the parsers refuse what the scheduler cannot count, on every path that reads objects
    with pytest.raises(ParseError):
        Node(node(cpu="1e309"))
    with pytest.raises(ParseError):
        Pod(pod(cpu="1e18"))


# -- scenarios: one bad object refuses the whole scenario --------------------------------------------------
@pytest.mark.parametrize("mutate,expected", [
    (lambda s: s["nodes"][1]["status"]["allocatable"].update(cpu="1e309"),
     'scen: nodes[1] (n2): status.allocatable.cpu: Invalid value: "1e309": must be less than or equal to '),
    (lambda s: s["pending"][0]["metadata"].update(name="../../etc"),
     'scen: pending[0] (default/../../etc): metadata.name: Invalid value: "../../etc": a lowercase RFC 1123'),
    (lambda s: s["pending"][0]["spec"]["containers"][0]["resources"]["requests"].update(cpu="-1"),
     'scen: pending[0] (default/p): spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be '
     'greater than or equal to 0'),
    (lambda s: s.update(services=[{"metadata": {"name": "Web"}}]),
     'scen: services[0] (Web): metadata.name: Invalid value: "Web": a DNS-1035 label'),
])
def test_scenario_with_one_invalid_object_is_refused(mutate, expected):
    scen = {"nodes": [node("n1"), node("n2")], "pending": [pod()]}
    scenario_from_data(scen, "scen")
    mutate(scen)
    with pytest.raises(ScenarioError) as err:
        scenario_from_data(scen, "scen")
    assert str(err.value).startswith(expected), str(err.value)


def test_loop_scenario_waves_and_phase2_are_validated_too():
    from scheduler_core.run import _parse_steps
    scen = scenario_from_data({"nodes": [node()], "pending": [], "waves": [{"pending": [pod(name="Bad Name")]}]},
                              "loop")
    with pytest.raises(ScenarioError, match=r'waves\[0\]\.pending\[0\]: metadata\.name: Invalid value: "Bad Name"'):
        _parse_steps(scen)
    scen = scenario_from_data({"nodes": [node()], "phase2": {"nodes": [node("n2", cpu="-1")]}}, "loop")
    with pytest.raises(ScenarioError, match=r'phase2\.nodes\[0\]: status\.allocatable\.cpu: Invalid value: "-1"'):
        _parse_steps(scen)


# -- documents nested 100,000 deep ---------------------------------------------------------------------
DEEP = 100_000


def test_deep_json_and_yaml_are_refused_cleanly():
    for text in ("[" * DEEP + "]" * DEEP, '{"a":' * DEEP + "1" + "}" * DEEP, "[" * 101 + "]" * 101):
        with pytest.raises(DepthError, match="exceeded max depth of 100"):
            load_json(text)
        with pytest.raises(ScenarioError, match="exceeded max depth of 100"):
            load_documents(text, "deep.json")
    assert load_json("[" * 100 + "]" * 100) is not None
    block = "".join(" " * i + "- \n" for i in range(0, 2 * DEEP // 10, 2))   # block style, 10,000 deep
    for text in ("[" * DEEP + "]" * DEEP, "a: " + "{b: " * DEEP + "1" + "}" * DEEP, block):
        with pytest.raises(yaml.YAMLError, match="exceeded max depth of 100"):
            safe_yaml_load(text)
        with pytest.raises(ScenarioError, match="exceeded max depth of 100"):
            load_documents(text, "deep.yaml")


def test_cli_refuses_a_deep_scenario_in_one_line(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text(json.dumps({"nodes": []})[:-1] + ', "x": ' + "[" * DEEP + "]" * DEEP + "}")
    assert cli_main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: deep.json: invalid JSON: exceeded max depth of 100"]
