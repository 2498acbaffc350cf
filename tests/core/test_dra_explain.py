"""Explanations of claims node by node (dra.explain): the false selector with the attribute's value, the holder of
an allocated device, the untolerated taint, the counter that ran out, and the devices the allocator would pick."""
from scheduler_core.dra.explain import explain_claims
from scheduler_core.scenario import scenario_from_data
from scheduler_core.simulate import build_snapshot

DRIVER = "gpu.example.com"


def _dev(name, model, **extra):
    return {"name": name, "attributes": {"model": {"string": model}}, **extra}


def _scenario_data():
    node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}}}
    counters = {"metadata": {"name": "n1-counters"},
                "spec": {"driver": DRIVER, "nodeName": "n1", "pool": {"name": "p", "resourceSliceCount": 2},
                         "sharedCounters": [{"name": "mem", "counters": {"memory": {"value": "10Gi"}}}]}}
    use = [{"counterSet": "mem", "counters": {"memory": {"value": "20Gi"}}}]
    devices = {"metadata": {"name": "n1-devices"},
               "spec": {"driver": DRIVER, "nodeName": "n1", "pool": {"name": "p", "resourceSliceCount": 2},
                        "devices": [_dev("held", "a100"), _dev("t4", "t4"),
                                    _dev("sick", "a100", taints=[{"key": "bad", "effect": "NoSchedule"}]),
                                    _dev("big", "a100", consumesCounters=use), _dev("free", "a100")]}}
    held = {"metadata": {"name": "other", "namespace": "ml"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": "p", "device": "held"}]}},
                "reservedFor": [{"resource": "pods", "name": "owner", "uid": "u0"}]}}
    selector = {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "a100"'}}
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [selector]}}
    template = {"metadata": {"name": "a100", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [request]}}}}
    pod = {"metadata": {"name": "p", "namespace": "ml", "uid": "u1"},
           "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "gpu",
                                                                      "resourceClaimTemplateName": "a100"}]}}
    return {"nodes": [node], "pods": [], "pending": [pod], "namespaces": [{"metadata": {"name": "ml"}}],
            "deviceclasses": [{"metadata": {"name": "gpu"}, "spec": {}}],
            "resourceslices": [counters, devices], "resourceclaims": [held], "resourceclaimtemplates": [template]}


def _scenario():
    return scenario_from_data(_scenario_data())


def test_every_device_gets_a_reason_and_the_free_one_is_chosen():
    scen = _scenario()
    doc = explain_claims(build_snapshot(scen).objects, scen.pending_pods[0].raw, scen.nodes)
    (claim,) = doc["claims"]
    assert claim["claim"] == "ml/p-gpu" and not claim["allocated"]
    per_node = claim["requests"][0]["nodes"]["n1"]
    assert per_node["fits"] == [f"{DRIVER}/p/free"]
    reasons = {r["device"].rsplit("/", 1)[1]: r for r in per_node["rejected"]}
    assert reasons["held"]["reason"] == "allocated"
    assert reasons["held"]["holders"][0]["claim"] == "ml/other" and reasons["held"]["holders"][0]["reserved_for"] == ["owner"]
    assert reasons["t4"]["reason"] == "selector" and reasons["t4"]["values"] == {f"{DRIVER}/model": "t4"}
    assert reasons["sick"] == {"reason": "taint", "taint": {"key": "bad", "effect": "NoSchedule"},
                               "device": f"{DRIVER}/p/sick"}
    assert (reasons["big"]["reason"], reasons["big"]["counter"], reasons["big"]["needed"]) == ("counters", "memory",
                                                                                               "20Gi")
    assert doc["nodes"]["n1"] == {"fits": True, "chosen": [
        {"claim": "ml/p-gpu", "devices": [{"request": "gpu", "device": f"{DRIVER}/p/free"}]}]}


def test_cli_explain_names_why_claims_fit_nowhere(tmp_path, capsys):
    import json

    from scheduler_core.cli import main
    data = _scenario_data()
    first = data["pending"][0]
    data["pending"].append(dict(first, metadata={"name": "q", "namespace": "ml", "uid": "u2"}))
    data["kubeVersion"] = "1.36"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    assert main(["simulate", str(path), "--explain"]) == 0
    out = capsys.readouterr().out
    assert f"claims: claim ml/q-gpu request gpu on n1: no device fits; {DRIVER}/p/held: allocated to ml/other " \
           f"(owner); {DRIVER}/p/t4: claim selector #0 false ({DRIVER}/model=t4)" in out
    assert f"{DRIVER}/p/free: allocated to ml/p-gpu (p)" in out      # reserved for p at its PreBind


def _explained(mutate):
    """What would fix it for the scenario's pod with its template changed by ``mutate(request)``."""
    from .test_explain import run
    data = _scenario_data()
    data["kubeVersion"] = "1.36"
    mutate(data["resourceclaimtemplates"][0]["spec"]["spec"]["devices"]["requests"][0]["exactly"])
    return run(data.pop("nodes"), data.pop("pending"), data.pop("pods"), **data)["p"]


def test_what_would_fix_a_selector_no_device_meets():
    def b200(request):
        request["selectors"][0]["cel"]["expression"] = f'device.attributes["{DRIVER}"].model == "b200"'
    suggestions = _explained(b200)
    where = "request gpu of ResourceClaimTemplate ml/a100"
    assert suggestions[0].text == (f'no device meets selector #0 of {where} (device.attributes["{DRIVER}"].model == '
                                   f'"b200"): devices have {DRIVER}/model=a100 (3), {DRIVER}/model=t4 (1)')
    fixes = [s for s in suggestions if s.kind == "device-selector"]
    assert [s.text for s in fixes] == [
        f'changing selector #0 of {where} to device.attributes["{DRIVER}"].model == "a100" would fit 1 node (n1)',
        f'changing selector #0 of {where} to device.attributes["{DRIVER}"].model == "t4" would fit 1 node (n1)',
        f'dropping selector #0 (device.attributes["{DRIVER}"].model == "b200") from {where} would fit 1 node (n1)']
    assert fixes[0].change == {"claim": {"pod_claim": "gpu", "request": "gpu", "selector": 0,
                                         "source": {"kind": "ResourceClaimTemplate", "name": "ml/a100"},
                                         "expression": f'device.attributes["{DRIVER}"].model == "a100"'}}
    assert all(s.rank == 5 for s in fixes)


def test_what_would_fix_too_many_devices_a_device_taint_and_a_full_node():
    def two(request):
        request["count"] = 2   # one free a100; another behind a taint, another behind a counter
    by_kind = {s.kind: s for s in _explained(two)}
    assert by_kind["device-toleration"].text == ("tolerating the device taint bad:NoSchedule in request gpu of "
                                                 "ResourceClaimTemplate ml/a100 would fit 1 node (n1)")
    assert by_kind["device-toleration"].change["claim"]["add_tolerations"] == [
        {"key": "bad", "operator": "Exists", "effect": "NoSchedule"}]
    assert by_kind["device-count"].text == ("asking 1 device instead of 2 in request gpu of ResourceClaimTemplate "
                                            "ml/a100 would fit 1 node (n1)")
    assert (by_kind["device-toleration"].rank, by_kind["device-count"].rank) == (1, 3)
    added = by_kind["claims"]
    assert added.text == "adding a node like n1, with its ResourceSlices (n1-counters and n1-devices), would fit"
    assert added.adds_node and added.rank == 11


def test_a_fix_that_does_not_fit_is_not_offered():
    def many(request):
        request["count"] = 9   # more than the node has, however the claim is changed but the count
        request["selectors"] = []
    suggestions = _explained(many)
    assert [s.kind for s in suggestions if s.rank] == ["device-count"]
    assert suggestions[-1].change["claim"]["count"] == 2 and suggestions[-1].num_fits == 1
