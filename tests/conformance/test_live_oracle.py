"""The live-oracle harness (tools/live_oracle.py): its reading of kube-scheduler's log, the objects it makes in
place of the missing controllers, and one run against the real control plane (skipped without the binaries)."""
import copy
import json

from tools.live_oracle import (SchedulerLog, admission_classes, claim_statuses, for_create, parse_log_line,
                               queue_order, running_status, scored_decision, stored, template_claims)

LOG = r'''I1207 19:55:57.191807   16552 eventhandlers.go:63] "Add event for node" node="n2"
I1207 19:55:57.191853   16552 eventhandlers.go:63] "Add event for node" node="n1"
I1207 19:55:57.191900   16552 eventhandlers.go:63] "Add event for node" node="n2"
I1207 19:55:57.191950   16552 scheduling_queue.go:654] "Status after running PreEnqueue plugin" pod="ml/p1" plugin="SchedulingGates" status="waiting for scheduling gates: [g]"
I1207 19:55:57.191990   16552 scheduling_queue.go:654] "Status after running PreEnqueue plugin" pod="ml/waits" plugin="DynamicResources" status="pod \"ml/waits\": ResourceClaim not created yet"
I1207 19:55:57.203832   16552 schedule_one.go:107] "About to try and schedule pod" pod="ml/p1"
I1207 19:55:57.203875   16552 schedule_one.go:123] "Attempting to schedule pod" pod="ml/p1"
I1207 19:55:57.204214   16552 resource_allocation.go:158] "Listed internal info" pod="ml/p1" node="n2" allocatableResource=[8000,17179869184]
I1207 19:55:57.204296   16552 schedule_one.go:982] "Plugin scored node for pod" pod="ml/p1" plugin="TaintToleration" node="n1" score=300
I1207 19:55:57.204301   16552 schedule_one.go:982] "Plugin scored node for pod" pod="ml/p1" plugin="NodeResourcesFit" node="n1" score=86
I1207 19:55:57.204314   16552 schedule_one.go:982] "Plugin scored node for pod" pod="ml/p1" plugin="TaintToleration" node="n2" score=300
I1207 19:55:57.204317   16552 schedule_one.go:982] "Plugin scored node for pod" pod="ml/p1" plugin="NodeResourcesFit" node="n2" score=92
I1207 19:55:57.204328   16552 schedule_one.go:1050] "Calculated node's final score for pod" pod="ml/p1" node="n1" score=386
I1207 19:55:57.204336   16552 schedule_one.go:1050] "Calculated node's final score for pod" pod="ml/p1" node="n2" score=392
I1207 19:55:57.204516   16552 pod_expansion.go:50] "Request Body" logger="Bind.DefaultBinder" pod="ml/p1" body=<
	00000000  6b 38 73 00 0a 0d 0a 02  76 31 12 07 42 69 6e 64  |k8s.....v1..Bind|
 >
I1207 19:55:57.208282   16552 schedule_one.go:481] "Successfully bound pod to node" pod="ml/p1" node="n2" evaluatedNodes=2 feasibleNodes=2
I1207 19:55:58.000001   16552 schedule_one.go:123] "Attempting to schedule pod" pod="ml/big"
I1207 19:55:58.000002   16552 executor.go:152] "Preemptor Pod preempted victim Pod" preemptor="ml/big" victim="ml/low" node="n1"
I1207 19:55:58.000003   16552 executor.go:204] "Async Preemption finished completely" preemptor="ml/big" node="n1" result="success"
I1207 19:55:59.000001   16552 schedule_one.go:123] "Attempting to schedule pod" pod="ml/big"
I1207 19:55:59.000002   16552 schedule_one.go:481] "Successfully bound pod to node" pod="ml/big" node="n1" evaluatedNodes=2 feasibleNodes=1
'''


def test_parse_log_line_unquotes_go_strings():
    line = r'E1207 20:00:00.1 1 schedule_one.go:1] "Error \"x\"" err="a \"b\"\tc\x41" n=3 pod="ns/p"'
    msg, fields = parse_log_line(line)
    assert msg == 'Error "x"'
    assert fields == {"err": 'a "b"\tcA', "n": "3", "pod": "ns/p"}
    assert parse_log_line("\t00000000  6b 38 73 |k8s|") is None
    assert parse_log_line(line, {"other"}) == ('Error "x"', {})


def test_scheduler_log_attempts_scores_bindings_and_preemption():
    log = SchedulerLog()
    lines = LOG.splitlines(keepends=True)
    log.feed("".join(lines[:11]))   # fed in two parts, as the file grows
    log.feed("".join(lines[11:]))
    assert log.node_order == ["n2", "n1"]
    first = log.attempts["ml/p1"][0]
    assert first["scores"] == {"n1": {"TaintToleration": 300, "NodeResourcesFit": 86},
                               "n2": {"TaintToleration": 300, "NodeResourcesFit": 92}}
    assert first["totals"] == {"n1": 386, "n2": 392}
    assert log.bound["ml/p1"] == {"node": "n2", "evaluated": 2, "feasible": 2, "attempt": 1}
    assert log.victims == {"ml/big": ["ml/low"]}
    assert log.preemption_done == {"ml/big"}
    assert log.pre_enqueue == {"ml/waits": {"plugin": "DynamicResources",
                                            "message": 'pod "ml/waits": ResourceClaim not created yet'}}
    assert len(log.attempts["ml/big"]) == 2 and log.bound["ml/big"]["attempt"] == 2


def test_scored_decision_ties():
    attempt = {"scores": {"a": {"X": 10}, "b": {"X": 20}, "c": {"X": 20}}, "totals": {"a": 10, "b": 20, "c": 20}}
    out = scored_decision(attempt)
    assert out["top_nodes"] == ["b", "c"] and out["top_score"] == 20
    assert out["feasible_nodes"] == ["a", "b", "c"]
    assert out["scores"]["a"] == {"X": {"weighted": 10}, "_total": 10}


def _pod(name, priority=0, **spec):
    return {"metadata": {"name": name, "namespace": "ml"}, "spec": {"priority": priority, **spec}}


def test_queue_order_is_priority_then_file_order():
    pending = [_pod("a"), _pod("b", 5), _pod("c"), _pod("d", 5)]
    assert [(k, p["metadata"]["name"]) for k, p in queue_order(pending)] == [(0, "b"), (1, "d"), (2, "a"), (3, "c")]


def test_admission_classes():
    scen = {"pods": [_pod("low", 100, priorityClassName="batch"), _pod("low2", 101, priorityClassName="batch")],
            "pending": [_pod("plain"), _pod("never", 0, preemptionPolicy="Never"), _pod("high", 1000),
                        _pod("kata", overhead={"cpu": "250m", "memory": "160Mi"}, runtimeClassName="kata"),
                        _pod("ovh", overhead={"cpu": "100m"}),
                        _pod("kata2", overhead={"cpu": "500m"}, runtimeClassName="kata"),
                        _pod("critical", 2000000000, priorityClassName="system-cluster-critical")]}
    priority, runtime = admission_classes(scen)
    assert {(pc["metadata"]["name"], pc["value"], pc["preemptionPolicy"]) for pc in priority} == {
        ("batch", 100, "PreemptLowerPriority"), ("batch-101", 101, "PreemptLowerPriority"),
        ("golden-0-never", 0, "Never"), ("golden-1000", 1000, "PreemptLowerPriority")}
    names = [p["spec"].get("priorityClassName") for p in scen["pods"] + scen["pending"]]
    assert names == ["batch", "batch-101", None, "golden-0-never", "golden-1000", None, None, None,
                     "system-cluster-critical"]
    assert {rc["metadata"]["name"]: rc.get("overhead") for rc in runtime} == {
        "kata": {"podFixed": {"cpu": "250m", "memory": "160Mi"}}, "golden-overhead-100m": {"podFixed": {"cpu": "100m"}},
        "kata-500m": {"podFixed": {"cpu": "500m"}}}
    assert [p["spec"].get("runtimeClassName") for p in scen["pending"][3:6]] == [
        "kata", "golden-overhead-100m", "kata-500m"]


def test_template_claims_as_the_controller_makes_them():
    tmpl = {"metadata": {"name": "one-gpu", "namespace": "ml"},
            "spec": {"metadata": {"labels": {"team": "a"}},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g"}}]}}}}
    pod = _pod("train", resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                                        {"name": "shared", "resourceClaimName": "team"},
                                        {"name": "gone", "resourceClaimTemplateName": "missing"}])
    pod["metadata"]["uid"] = "u-1"
    [claim] = template_claims(pod, {("ml", "one-gpu"): tmpl}, set())
    assert claim["metadata"]["name"] == "train-gpu" and claim["metadata"]["namespace"] == "ml"
    assert claim["metadata"]["labels"] == {"team": "a"}
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    assert claim["spec"] == tmpl["spec"]["spec"]
    assert template_claims(pod, {("ml", "one-gpu"): tmpl}, {("ml", "train-gpu")}) == []
    assert claim_statuses(pod) == [{"name": "gpu", "resourceClaimName": "train-gpu"},
                                   {"name": "gone", "resourceClaimName": "train-gone"}]


def test_objects_for_create_and_as_stored():
    obj = {"metadata": {"name": "n", "uid": "u", "resourceVersion": "7", "creationTimestamp": "t",
                        "managedFields": [{}], "generation": 2}, "spec": {}, "status": {"phase": "Running"}}
    original = copy.deepcopy(obj)
    assert for_create(obj) == {"metadata": {"name": "n"}, "spec": {}}
    assert stored(obj) == {"metadata": {"name": "n", "uid": "u", "creationTimestamp": "t"}, "spec": {},
                           "status": {"phase": "Running"}}
    assert obj == original
    status = running_status({"status": {"startTime": "s", "resourceClaimStatuses": [{}], "qosClass": "X"}}, "now")
    assert status["phase"] == "Running" and status["startTime"] == "s"
    assert "resourceClaimStatuses" not in status and "qosClass" not in status


def test_live_run_against_the_real_scheduler(tmp_path):
    """One DRA scenario through the real kube-apiserver and kube-scheduler v1.36.2: the first pod takes a GPU,
    the second finds none; Schedscope agrees with both decisions."""
    from tests.envtest import require_assets
    from tools.live_oracle import Oracle, compare_derived, write_json
    require_assets()
    gpu = "gpu.example.com"
    scenario = {
        "name": "one-gpu", "nodes": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
             "spec": {}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                    "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
            for n in ("gpu-1", "cpu-1")],
        "deviceclasses": [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": gpu},
                           "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{gpu}"'}}]}}],
        "resourceslices": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                            "spec": {"driver": gpu, "nodeName": "gpu-1",
                                     "pool": {"name": "gpu-1", "generation": 0, "resourceSliceCount": 1},
                                     "devices": [{"name": "gpu-0"}]}}],
        "resourceclaimtemplates": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                    "metadata": {"name": "one", "namespace": "ml"}, "spec": {"spec": {"devices": {
                                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": gpu}}]}}}}],
        "pods": [],
        "pending": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"train-{i}", "namespace": "ml"},
                     "spec": {"priority": 0, "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}],
                              "containers": [{"name": "c", "image": "busybox",
                                              "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}]}}
                    for i in range(2)]}
    with Oracle(tmp_path / "work") as oracle:
        result = oracle.run(scenario)
    assert not result["run"]["refused"]
    [(k0, state0, exp0), (k1, state1, exp1)] = result["derived"]
    first, second = exp0["decisions"][0], exp1["decisions"][0]
    assert first["bound_node"] == "gpu-1" and first["scoring_run_by_scheduler"] is False
    assert first["dra"]["gpu"]["results"][0]["device"] == "gpu-0"
    assert second["unschedulable"] and second["message"].startswith("0/2 nodes are available:")
    assert "cannot allocate all claims" in second["message"] or "resourceclaim" in second["message"]
    assert [c["metadata"]["name"] for c in state1["resourceclaims"]] == ["train-0-gpu"]
    assert state1["pending"][0]["metadata"]["name"] == "train-1"
    files = []
    for k, state, expected in result["derived"]:
        path = tmp_path / f"one-gpu-{k:02d}.scenario.json"
        write_json(path, state)
        (tmp_path / f"one-gpu-{k:02d}.expected.json").write_text(json.dumps(expected))
        files.append(path)
    assert [diff for _p, _pod, diff in compare_derived(files)] == [None, None]


def test_refusal_differences_compare_validation_causes():
    from tools.live_oracle import refusal_differences
    bad = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "bad"},
           "spec": {"selectors": [{"cel": {"expression": 'gpu.model == "a"'}}]}}
    scenario = {"deviceclasses": [bad]}
    kube = ('DeviceClass.resource.k8s.io "bad" is invalid: spec.selectors[0].cel.expression: Invalid value: '
            '"gpu.model == \\"a\\"": compilation failed: ERROR: <input>:1:1: undeclared reference to \'gpu\' '
            "(in container '')\n | gpu.model == \"a\"\n | ^")
    refused = [{"object": "deviceclasses/default/bad", "error": kube},
               {"object": "pods/ml/p", "error": 'pods "p" is forbidden: no PriorityClass'}]
    [(obj, theirs, ours)] = refusal_differences(scenario, refused)
    assert obj == "deviceclasses/default/bad" and theirs == ours
    good = dict(bad, spec={"selectors": [{"cel": {"expression": "device.driver == \"a\""}}]})
    assert refusal_differences({"deviceclasses": [good]}, refused[:1])[0][2] is None


def test_command_error_is_the_exit_error_with_addresses_masked():
    from tools.live_oracle import command_error
    log = ('I1207 20:00:00.000001 1 server.go:1] "Starting"\n'
           'E1207 20:00:00.000002 1 run.go:72] "command failed" err="profiles[1].schedulerName: Duplicate value: '
           'field.Path{name:\\"schedulerName\\", index:\\"\\", parent:(*field.Path)(0xc000a1b2c0)}"\n')
    assert command_error(log) == ('profiles[1].schedulerName: Duplicate value: field.Path{name:"schedulerName", '
                                  'index:"", parent:(*field.Path)(0xADDR)}')
    assert command_error('I1207 20:00:00.000001 1 server.go:1] "Starting"\n') is None
