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
    assert f"{DRIVER}/p/free: allocated to ml/p-gpu (no pod)" in out
