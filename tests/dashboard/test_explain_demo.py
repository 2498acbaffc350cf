"""What would fix it for the demo's stuck pods: the diagnosis first, then the smallest change first."""
import pytest
from django.utils.html import escape

from dashboard.models import SchedulingCycle
from dashboard.services.demo import demo_scenario
from scheduler_core.explain import explain
from scheduler_core.scenario import scenario_from_data
from scheduler_core.simulate import Simulation

from .conftest import load_cluster, small_scenario


def _demo_suggestions(*pod_names):
    sim = Simulation(scenario_from_data(demo_scenario()), tie_break="name")
    out = {}
    for tr in sim.run():
        if tr.unschedulable and tr.pod.name in pod_names:
            out[tr.pod.name] = explain(sim.frameworks[tr.pod.scheduler_name], sim.snapshot, tr.pod, tr)
    return out


def test_demo_pods_diagnosis_first_then_smallest_change():
    got = _demo_suggestions("analytics-huge", "postgres-nvme", "inference-no-toleration")
    huge = [s.text for s in got["analytics-huge"]]
    assert huge[0] == "no node has 32 cpu allocatable (the most is 16 on gpu-1)"
    changes = [s.text for s in got["analytics-huge"] if s.change]
    assert changes == [   # a quarter of the cpu before an eighth, the added node last
        "lowering the pod's cpu request from 32 to 8 would fit 5 nodes (highmem-1, highmem-2, highmem-3, highmem-4 "
        "and highmem-5)",
        "lowering the pod's cpu request from 32 to 4 and memory request from 64Gi to 24Gi would fit 41 nodes "
        "(general-01, general-02, general-03, general-04, general-05 and 36 more)",
        "adding a node like general-01 with 32 cpu and 64Gi memory would fit",
    ]
    nvme = got["postgres-nvme"]
    assert nvme[0].text == "no node has label disk=nvme (nodes have disk=ssd (9))" and nvme[0].change == {}
    assert [s.change for s in nvme if s.num_fits][0] == {"pod": {"remove_node_selector": "disk"}}
    tol = next(s for s in got["inference-no-toleration"] if s.change)
    assert tol.kind == "taints" and tol.num_fits == 6


@pytest.mark.django_db(transaction=True)
def test_pod_page_shows_the_diagnosis_before_the_changes(api, client):
    load_cluster(api, small_scenario(), steps=20)
    big = SchedulingCycle.objects.filter(cluster__name="small", pod_name="too-big").order_by("-seq").first()
    stored = [s["text"] for s in big.matrix["suggestions"]]
    assert stored[0] == "no node has 64 cpu allocatable (the most is 4 on n-0)"
    html = client.get("/clusters/small/pods/default/too-big/").content.decode()
    lowering = escape(next(t for t in stored if t.startswith("lowering")))
    assert html.index(stored[0]) < html.index(lowering) < html.index("adding a node like")
