"""DRA at v1.36: claims made from templates, CEL selectors with kube's semantics, the structured allocator
(ExactCount, All, firstAvailable, constraints, shared counters, device taints, consumable capacity) and the
DynamicResources plugin in a one-pass simulation (allocation, reasons, PostFilter texts, score)."""
import re

import pytest

from scheduler_core.dra.allocator import AllocatedState, AllocationError, Allocator
from scheduler_core.dra.cel import compile_selector, device_activation
from scheduler_core.dra.celvalues import CELError
from scheduler_core.dra.claims import claims_from_templates
from scheduler_core.objects import Node
from scheduler_core.scenario import scenario_from_data
from scheduler_core.simulate import Simulation

DRIVER = "gpu.example.com"


def _gpu(name, model="a100", mem=80, **extra):
    return {"name": name, "attributes": {"model": {"string": model}, "memoryGiB": {"int": mem},
                                         "driverVersion": {"version": "550.1.0"}},
            "capacity": {"memory": {"value": f"{mem}Gi"}}, **extra}


def _slice(node, devices, pool=None, **spec):
    return {"metadata": {"name": f"{node}-slice"},
            "spec": {"driver": DRIVER, "nodeName": node, "devices": devices,
                     "pool": {"name": pool or node, "generation": 1, "resourceSliceCount": 1}, **spec}}


def _class(name="gpu", expr=None):
    spec = {"selectors": [{"cel": {"expression": expr or f'device.driver == "{DRIVER}"'}}]}
    return {"metadata": {"name": name}, "spec": spec}


def _claim(name, requests, constraints=None, ns="ml"):
    devices = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"devices": devices}}


def _exact(name="gpu", count=1, selectors=(), cls="gpu", **extra):
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count,
                                      "selectors": [{"cel": {"expression": e}} for e in selectors], **extra}}


def _node(name, labels=None):
    return Node({"metadata": {"name": name, "labels": labels or {}},
                 "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})


def _devices(result):
    return [r["device"] for r in result["devices"]["results"]]


# -- CEL -------------------------------------------------------------------------------------------------------
def test_cel_attributes_versions_quantities_and_missing_keys():
    act = device_activation(DRIVER, _gpu("g0", model="h100"))
    assert compile_selector(f'device.attributes["{DRIVER}"].model.startsWith("h")').matches(act)
    assert compile_selector(f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("550.0.0"))'
                            ).matches(act)
    assert not compile_selector(f'device.capacity["{DRIVER}"].memory.compareTo(quantity("100Gi")) >= 0'
                                ).matches(act)
    # a domain the device lacks is an empty map; an id it lacks is kube's runtime error
    assert not compile_selector('has(device.attributes["other.example.com"].model)').matches(act)
    with pytest.raises(CELError, match="^no such key: nope$"):
        compile_selector(f'device.attributes["{DRIVER}"].nope == 1').matches(act)
    assert compile_selector("device.driver ==").error.startswith("compilation failed")


def test_cel_bind_heterogeneous_equality_and_overloads():
    act = device_activation(DRIVER, _gpu("g0", model="h100"))
    attrs = f'device.attributes["{DRIVER}"]'
    assert compile_selector(f'cel.bind(a, {attrs}, a.model == "h100" && a.memoryGiB >= 40)').matches(act)
    assert not compile_selector(f"{attrs}.model == 80").matches(act)
    assert compile_selector(f"{attrs}.memoryGiB == 80.0").matches(act)
    assert compile_selector(f'{attrs}.model in ["a100", "h100"] && {attrs}.model.matches("^h[0-9]+$")').matches(act)
    with pytest.raises(CELError, match="^no such overload$"):
        compile_selector(f"{attrs}.model >= 80").matches(act)


def test_cel_arithmetic_and_conversion_errors_in_cel_go_words():
    """cel-go's runtime errors (common/types): the texts kube-scheduler v1.36.2 reported in
    tests/golden/v136-dra-more (dra-m19, dra-m21), and the results of checked arithmetic."""
    act = device_activation(DRIVER, _gpu("g0", model="h100"))
    mem = f'device.attributes["{DRIVER}"].memoryGiB'
    for expression, text in ((f"64 / ({mem} - 80) > 1", "division by zero"),
                             (f"64 % ({mem} - 80) > 1", "modulus by zero"),
                             (f"{mem} * 9223372036854775807 > 0", "integer overflow"),
                             (f"-(-9223372036854775807 - 1) > {mem}", "integer overflow"),
                             ("5u - 6u > 0u", "unsigned integer overflow"),
                             ("uint(-1) > 0u", "unsigned integer overflow"),
                             ("int(1e30) > 0", "integer overflow"),
                             (f'int(device.attributes["{DRIVER}"].model) > 0',
                              "type conversion error from 'string' to 'int'"),
                             ('double("x") > 0.0', "type conversion error from 'string' to 'double'")):
        with pytest.raises(CELError, match=f"^{text}$"):
            compile_selector(expression).matches(act)
    for expression in ("-7 / 2 == -3", "-7 % 2 == -1", "7 % -2 == 1", 'int("-42") == -42', "int(-2.9) == -2",
                       "1.5 + 2.5 == 4.0", "2.0 * 3.0 == 6.0", "[1] + [2] == [1, 2]", f"true || 64 / ({mem} - 80) > 1"):
        assert compile_selector(expression).matches(act), expression


def test_cel_versions_against_other_types():
    """The apiserver library's Equal and cel-go's interpreter on an attribute (of type any, so the checker lets it
    through; dra-m38): a version equal to another type is "no such overload"; ordering it, adding to it or negating
    it is the interpreter's "no such overload: OP"; semver() of a bad literal fails in blang/semver's words."""
    act = device_activation(DRIVER, _gpu("g0", model="h100"))
    version = f'device.attributes["{DRIVER}"].driverVersion'
    assert not compile_selector(f'"550.1.0" == {version}').matches(act)
    assert compile_selector(f'{version} == semver("550.1.0")').matches(act)
    for expression, text in ((f'{version} == "550.1.0"', "no such overload"),
                             (f'{version} != "550.1.0"', "no such overload"),
                             (f'{version} < "600.0.0"', "no such overload: _<_"),
                             (f'{version} + 1 == 1', "no such overload: _+_"),
                             (f'-{version} == 1', "no such overload: -_"),
                             ('semver("1.x").major() == 1', "No Major.Minor.Patch elements found"),
                             ('semver("1.02.0").major() == 1', 'Minor number must not contain leading zeroes "02"'),
                             ('semver("1.2.3-a..b").major() == 1', "Prerelease is empty")):
        program = compile_selector(expression)
        assert program.error is None, program.error
        with pytest.raises(CELError, match=f"^{re.escape(text)}$"):
            program.matches(act)


def test_cel_strings_extension():
    """cel-go's strings extension at version 2, in kube's base CEL environment (dra-m18 uses lowerAscii)."""
    act = device_activation(DRIVER, _gpu("g0", model="h100"))
    for expression in ('"Gamma".lowerAscii() > "beta"', '"aBc".upperAscii() == "ABC"', '"héllo".charAt(1) == "é"',
                       '"abc".charAt(3) == ""', '"hello".indexOf("l") == 2', '"hello".indexOf("l", 3) == 3',
                       '"hello".lastIndexOf("l") == 3', '"hello".lastIndexOf("") == 5',
                       '"a,b,c".split(",", 2) == ["a", "b,c"]', '"abc".split("") == ["a", "b", "c"]',
                       '"hello".substring(1, 3) == "el"', '" x ".trim() == "x"', '["a", "b"].join("-") == "a-b"',
                       '"aaa".replace("a", "b", 2) == "bba"',
                       f'device.attributes["{DRIVER}"].model.upperAscii().startsWith("H1")'):
        assert compile_selector(expression).matches(act), expression
    for expression, text in (('"abc".charAt(4) == ""', "index out of range: 4"),
                             ('"hello".substring(3, 1) == ""', "invalid substring range. start: 3, end: 1"),
                             ('"hello".indexOf("l", -1) == 0', "index out of range: -1")):
        with pytest.raises(CELError, match=f"^{text}$"):
            compile_selector(expression).matches(act)


# -- claims from templates ---------------------------------------------------------------------------------------
def test_claim_from_template_is_named_pod_dash_claim_and_owned_by_the_pod():
    pod = {"metadata": {"name": "p", "namespace": "ml", "uid": "u1"},
           "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}}
    template = {"metadata": {"name": "t", "namespace": "ml", "labels": {"a": "b"}},
                "spec": {"spec": {"devices": {"requests": [_exact()]}}}}
    out, made = claims_from_templates(pod, {"ml/t": template}, {})
    (claim,) = made
    assert claim["metadata"]["name"] == "p-gpu" and claim["metadata"]["labels"] == {"a": "b"}
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert claim["spec"] == template["spec"]["spec"]
    assert out["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": "p-gpu"}]
    # no template yet: the pod keeps no status entry (PreEnqueue: "ResourceClaim not created yet")
    assert claims_from_templates(pod, {}, {}) == (pod, [])


# -- the allocator -------------------------------------------------------------------------------------------
def _allocate(slices, claims, node="n1", allocated=None, classes=None):
    classes = classes or {"gpu": _class()}
    return Allocator(allocated or AllocatedState(), classes, slices).allocate(_node(node), claims)


def test_exact_count_skips_allocated_devices_and_records_node_selector():
    allocated = AllocatedState()
    allocated.add_allocation({"devices": {"results": [{"driver": DRIVER, "pool": "n1", "device": "g0"}]}})
    (res,) = _allocate([_slice("n1", [_gpu("g0"), _gpu("g1"), _gpu("g2")])], [_claim("c", [_exact(count=2)])],
                       allocated=allocated)
    assert _devices(res) == ["g1", "g2"]
    assert res["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n1"]
    assert _allocate([_slice("n1", [_gpu("g0")])], [_claim("c", [_exact(count=2)])]) is None
    assert _allocate([_slice("n2", [_gpu("g0")])], [_claim("c", [_exact()])]) is None


def test_all_mode_needs_every_matching_device_free():
    slices = [_slice("n1", [_gpu("g0"), _gpu("g1"), _gpu("t0", model="t4")])]
    claim = _claim("c", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "All",
                                                      "selectors": [{"cel": {"expression":
                                                          f'device.attributes["{DRIVER}"].model == "a100"'}}]}}])
    assert _devices(_allocate(slices, [claim])[0]) == ["g0", "g1"]
    allocated = AllocatedState()
    allocated.add_allocation({"devices": {"results": [{"driver": DRIVER, "pool": "n1", "device": "g1"}]}})
    assert _allocate(slices, [claim], allocated=allocated) is None


def test_match_attribute_constraint_and_first_available():
    devices = [_gpu("g0", mem=40), _gpu("g1", mem=80), _gpu("g2", mem=80)]
    claim = _claim("c", [_exact(count=2)], constraints=[{"matchAttribute": f"{DRIVER}/memoryGiB"}])
    assert _devices(_allocate([_slice("n1", devices)], [claim])[0]) == ["g1", "g2"]
    flex = _claim("f", [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 4},
        {"name": "small", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}]}])
    (res,) = _allocate([_slice("n1", devices)], [flex])
    assert [r["request"] for r in res["devices"]["results"]] == ["gpu/small"]


def test_cel_runtime_error_aborts_with_kube_text():
    claim = _claim("c", [_exact(selectors=[f'device.attributes["{DRIVER}"].nope'])])
    with pytest.raises(AllocationError, match=r"^claim ml/c: selector #0: CEL runtime error: no such key: nope$"):
        _allocate([_slice("n1", [_gpu("g0")])], [claim])


def test_taints_counters_and_consumable_capacity():
    tainted = _gpu("g0", taints=[{"key": "broken", "value": "yes", "effect": "NoSchedule"}])
    assert _allocate([_slice("n1", [tainted])], [_claim("c", [_exact()])]) is None
    tolerant = _exact(tolerations=[{"key": "broken", "operator": "Exists"}])
    assert _devices(_allocate([_slice("n1", [tainted])], [_claim("c", [tolerant])])[0]) == ["g0"]

    counters = {"metadata": {"name": "n1-counters"},
                "spec": {"driver": DRIVER, "nodeName": "n1", "pool": {"name": "p", "generation": 1,
                                                                      "resourceSliceCount": 2},
                         "sharedCounters": [{"name": "mem", "counters": {"memory": {"value": "80Gi"}}}]}}
    parts = [dict(_gpu(f"half-{i}", mem=40), consumesCounters=[
        {"counterSet": "mem", "counters": {"memory": {"value": "40Gi"}}}]) for i in range(3)]
    devs = {"metadata": {"name": "n1-devices"},
            "spec": {"driver": DRIVER, "nodeName": "n1", "devices": parts,
                     "pool": {"name": "p", "generation": 1, "resourceSliceCount": 2}}}
    assert _devices(_allocate([counters, devs], [_claim("c", [_exact(count=2)])])[0]) == ["half-0", "half-1"]
    assert _allocate([counters, devs], [_claim("c", [_exact(count=3)])]) is None

    nic = {"name": "nic0", "allowMultipleAllocations": True,
           "capacity": {"bandwidth": {"value": "100G", "requestPolicy": {
               "default": "10G", "validRange": {"min": "10G", "step": "10G"}}}}}
    want = _exact(capacity={"requests": {"bandwidth": "35G"}})
    (res,) = _allocate([_slice("n1", [nic])], [_claim("c", [want])])
    assert res["devices"]["results"][0]["consumedCapacity"] == {"bandwidth": "40G"}
    allocated = AllocatedState()
    allocated.add_allocation({"devices": {"results": [{"driver": DRIVER, "pool": "n1", "device": "nic0",
                                                       "shareID": "s", "consumedCapacity": {"bandwidth": "70G"}}]}})
    assert _allocate([_slice("n1", [nic])], [_claim("c", [want])], allocated=allocated) is None


# -- the plugin in a simulation ------------------------------------------------------------------------------
def _pod(name, template=None, claim=None):
    entry = {"name": "gpu", **({"resourceClaimTemplateName": template} if template else
                               {"resourceClaimName": claim})}
    return {"metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [entry]}}


def test_simulation_allocates_until_devices_run_out():
    nodes = [{"metadata": {"name": n}, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
             for n in ("n1", "n2")]
    template = {"metadata": {"name": "one", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [_exact()]}}}}
    scen = scenario_from_data({"kubeVersion": "1.36", "nodes": nodes, "pods": [],
                               "namespaces": [{"metadata": {"name": "ml"}}],
                               "deviceclasses": [_class()], "resourceslices": [_slice("n1", [_gpu("g0"), _gpu("g1")])],
                               "resourceclaimtemplates": [template],
                               "pending": [_pod("a", "one"), _pod("b", "one"), _pod("c", "one"),
                                           _pod("d", claim="missing")]})
    sim = Simulation(scen)
    traces = {t.pod.name: t for t in sim.run()}
    assert traces["a"].chosen == "n1" and traces["b"].chosen == "n1"
    assert traces["c"].message.startswith("0/2 nodes are available: 2 cannot allocate all claims. still not "
                                          "schedulable, preemption: 0/2 nodes are available: 2 Preemption is "
                                          "not helpful for scheduling.")
    assert traces["d"].message.startswith('0/2 nodes are available: could not find ResourceClaim "ml/missing". no '
                                          'new claims to deallocate')


def test_extended_resource_backed_by_a_device_class():
    """A node without the resource gets devices through the scheduler's own claim (container-0-request-1);
    a node with it from a device plugin is NodeResourcesFit's; kube's texts when both run out."""
    def node(name, gpus=None):
        alloc = {"cpu": "8", "memory": "32Gi", "pods": "110", **({"example.com/gpu": gpus} if gpus else {})}
        return {"metadata": {"name": name}, "status": {"allocatable": alloc}}

    def pod(name):
        return {"metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
                "spec": {"containers": [{"name": "main", "resources": {
                    "requests": {"cpu": "1", "example.com/gpu": "2", "memory": "1Gi"},
                    "limits": {"example.com/gpu": "2"}}}]}}
    cls = dict(_class(), spec=dict(_class()["spec"], extendedResourceName="example.com/gpu"))
    scen = scenario_from_data({"kubeVersion": "1.36", "nodes": [node("dp", "2"), node("dra"), node("none")],
                               "pods": [], "namespaces": [{"metadata": {"name": "ml"}}], "deviceclasses": [cls],
                               "resourceslices": [_slice("dra", [_gpu("g0"), _gpu("g1")])],
                               "pending": [pod("a"), pod("b"), pod("c")]})
    sim = Simulation(scen)
    traces = {t.pod.name: t for t in sim.run()}
    assert (traces["a"].chosen, traces["b"].chosen) == ("dp", "dra")
    assert traces["c"].message.startswith("0/3 nodes are available: 1 Insufficient example.com/gpu, 2 cannot "
                                          "allocate all claims. still not schedulable, preemption:")
    (written,) = sim.snapshot.objects.resource_claims.values()    # at PreBind
    assert written["metadata"]["name"].startswith("b-extended-resources-")
    assert written["status"]["reservedFor"] == [{"resource": "pods", "name": "b", "uid": "uid-b"}]
    assert [r["request"] for r in written["status"]["allocation"]["devices"]["results"]] == [
        "container-0-request-1", "container-0-request-1"]


def test_cel_runtime_error_is_a_scheduler_error_in_the_golden_document():
    from scheduler_core.simulate import golden_document
    node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}
    claim = _claim("c", [_exact(selectors=[f'device.attributes["{DRIVER}"].nope > 1'])])
    scen = scenario_from_data({"kubeVersion": "1.36", "nodes": [node], "pods": [], "pending": [_pod("p", claim="c")],
                               "namespaces": [{"metadata": {"name": "ml"}}], "deviceclasses": [_class()],
                               "resourceslices": [_slice("n1", [_gpu("g0")])], "resourceclaims": [claim]})
    sim = Simulation(scen)
    (d,) = golden_document(sim, list(sim.run()))["decisions"]
    assert (d["unschedulable"], d["condition_reason"]) == (True, "SchedulerError")
    assert d["message"] == ('running "DynamicResources" filter plugin: claim ml/c: selector #0: CEL runtime error: '
                            'no such key: nope')


def test_scheduler_core_runs_without_cel_python_when_no_dra_object_is_used():
    """cel-python is imported on the first selector only: with it unimportable, scheduler_core imports and a
    non-DRA cluster schedules at 1.30 and 1.36; a DeviceClass selector then fails for want of it."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = """
import sys
sys.modules["celpy"] = None   # import celpy raises ImportError
import scheduler_core
from scheduler_core.cluster.simulated import SimulatedCluster
from scheduler_core.objects import Node, Pod
from scheduler_core.scheduler import Scheduler
node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}}
for version in ("1.30", "1.36"):
    cluster = SimulatedCluster([Node(node)])
    sched = Scheduler(cluster, kube_version=version)
    cluster.add_pod(Pod({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}]}}))
    sched.run_until_idle()
    assert cluster.get_pod("default", "p").node_name == "n1"
from scheduler_core.dra.cel import compile_selector
try:
    compile_selector("true")
except ImportError:
    print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ok"]
