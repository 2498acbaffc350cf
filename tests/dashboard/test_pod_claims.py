"""The pod page's claims panel: every claim and request of a pod, node by node, with the devices that fit, why the
others do not (a false selector with the attribute's value, the claim holding a device, an untolerated taint),
what the allocator would choose, and a capped list of nodes."""
from __future__ import annotations

import pytest

from dashboard.services import claimsview

from .conftest import load_cluster

pytestmark = pytest.mark.django_db(transaction=True)
DRIVER = "gpu.example.com"


def node(name: str) -> dict:
    alloc = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": alloc, "allocatable": alloc}}


def device(name: str, model: str, **extra) -> dict:
    return {"name": name, "attributes": {"model": {"string": model}}, **extra}


def template(name: str, model: str) -> dict:
    selector = {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "selectors": [selector]}}]}}}}


def pod(name: str, claim: dict, node_name: str = "") -> dict:
    spec = {"containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": "100m"}}}],
            "resourceClaims": [dict(claim, name="gpu")]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}


def scenario() -> dict:
    devices = [device("held", "a100"), device("t4", "t4"),
               device("sick", "a100", taints=[{"key": "broken", "effect": "NoSchedule"}]), device("free", "a100")]
    slices = [{"metadata": {"name": "gpu-0-gpus"},
               "spec": {"driver": DRIVER, "nodeName": "gpu-0", "pool": {"name": "gpu-0", "resourceSliceCount": 1},
                        "devices": devices}}]
    held = {"metadata": {"name": "owned", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": "gpu-0", "device": "held"}]}},
                "reservedFor": [{"resource": "pods", "name": "owner", "uid": "uid-owner"}]}}
    return {"name": "dra", "kubeVersion": "1.36",
            "nodes": [node("gpu-0")] + [node(f"cpu-{i:02d}") for i in range(10)],
            "pods": [pod("owner", {"resourceClaimName": "owned"}, node_name="gpu-0")],
            "pending": [pod("trainer", {"resourceClaimTemplateName": "a100"}),
                        pod("dreamer", {"resourceClaimTemplateName": "h100"}),
                        dict(pod("plain", {}), spec={"containers": [{"name": "c", "image": "app"}]})],
            "deviceclasses": [{"metadata": {"name": DRIVER},
                               "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}],
            "resourceslices": slices, "resourceclaims": [held],
            "resourceclaimtemplates": [template("a100", "a100"), template("h100", "h100")]}


@pytest.fixture
def dra(api):
    return load_cluster(api, scenario())


def test_a_pending_pods_claim_explained_device_by_device(dra, client):
    page = client.get("/clusters/dra/pods/default/trainer/").content.decode()
    panel = page[page.index('id="claims"'):page.index("</section>", page.index('id="claims"'))]
    assert "Claim <span class=\"mono\">default/trainer-gpu</span>" in panel
    assert f"{DRIVER}/gpu-0/free</span>" in panel
    assert f"{DRIVER}/gpu-0/held</span>: allocated to default/owned (owner)" in panel
    assert f'{DRIVER}/gpu-0/t4</span>: claim selector #0 false ({DRIVER}/model=t4)' in panel
    assert f"{DRIVER}/gpu-0/sick</span>: taint broken:NoSchedule not tolerated" in panel
    assert f"the allocator would choose <span class=\"chip pass mono\">default/trainer-gpu/gpu → {DRIVER}/gpu-0/free" \
        in panel
    # the node with devices first, 8 of 11 nodes shown
    assert panel.index("gpu-0") < panel.index("cpu-00")
    assert f"{claimsview.SHOWN} of 11 nodes" in panel and "3 more nodes not shown." in panel
    assert "cpu-07" not in panel
    # the nodes without devices: one line, and no device in their rows
    assert ("<b class=\"mono\">cpu-00, cpu-01, cpu-02, cpu-03, cpu-04, cpu-05, cpu-06</b>: "
            "<span class=\"fiterror\">cannot allocate all claims</span>") in panel
    assert panel.count("no devices available to this node") == claimsview.SHOWN - 1


def test_a_selector_no_device_meets_and_an_allocated_claim(dra, client):
    page = client.get("/clusters/dra/pods/default/dreamer/").content.decode()
    assert f'{DRIVER}/gpu-0/free</span>: claim selector #0 false ({DRIVER}/model=a100)' in page
    nodes = ", ".join(["gpu-0"] + [f"cpu-{i:02d}" for i in range(claimsview.SHOWN - 1)])
    assert f'<b class="mono">{nodes}</b>: <span class="fiterror">cannot allocate all claims</span>' in page
    page = client.get("/clusters/dra/pods/default/owner/").content.decode()
    assert f'Allocated: <span class="chip pass mono">gpu → {DRIVER}/gpu-0/held</span>' in page
    assert "on its node" in page and "more node" not in page
    assert 'id="claims"' not in client.get("/clusters/dra/pods/default/plain/").content.decode()


def test_the_demos_dra_pods_and_the_page_of_one_no_device_can_serve(api, client):
    from dashboard.services.demo import demo_scenario
    from scheduler_core.scenario import scenario_from_data
    from scheduler_core.simulate import Simulation
    sim = Simulation(scenario_from_data(demo_scenario()), tie_break="name")
    placed = {tr.pod.name: tr.chosen for tr in sim.run() if tr.pod.name.startswith("dra-")}
    assert placed == {"dra-infer-0": "dra-gpu-1", "dra-infer-1": "dra-gpu-2", "dra-h100": "dra-gpu-3",
                      "dra-b200": None, "dra-eight-gpus": None}
    load_cluster(api, demo_scenario())
    page = client.get("/clusters/demo/pods/ml/dra-b200/").content.decode()
    assert f'{DRIVER}/dra-gpu-3/gpu-1</span>: claim selector #0 false ({DRIVER}/model=h100)' in page
    assert f"{claimsview.SHOWN} of 53 nodes" in page and "45 more nodes not shown." in page


def test_the_pending_list_names_dynamicresources_reasons_as_kube_does(api, client):
    """Chips with v1.36's texts: Filter's "cannot allocate all claims", PreFilter's missing DeviceClass and, for a
    pod PreEnqueue gates (its claim does not exist), the plugin's status in place of an attempt's."""
    data = scenario()
    classless = template("classless", "a100")
    classless["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "nosuch"
    data["resourceclaimtemplates"].append(classless)
    data["pending"] += [pod("lost", {"resourceClaimName": "nope"}),
                        pod("classless", {"resourceClaimTemplateName": "classless"})]
    load_cluster(api, data, steps=10)
    body = client.get("/clusters/dra/pending/").content.decode()
    rows = {m.split('"', 1)[0]: m for m in body.split('<tr data-pod="default/')[1:]}
    assert "<b>DynamicResources</b> · cannot allocate all claims · 1" in rows["dreamer"]
    assert "<b>DynamicResources</b> · request gpu: device class nosuch does not exist · 11" in rows["classless"]
    assert '<span class="q q-gated">gated</span>' in rows["lost"]
    assert "<b>DynamicResources</b> · could not find ResourceClaim &quot;default/nope&quot;</span>" in rows["lost"]
    assert "not tried yet" not in rows["lost"]
