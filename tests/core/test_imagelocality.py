"""ImageLocality plugin: the cases of kube's image_locality_test.go."""
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.snapshot import Snapshot
from scheduler_core.objects.node import Node
from scheduler_core.objects.pod import Pod
from scheduler_core.plugins.imagelocality import ImageLocality, calculate_priority, normalized_image_name

MB = 1024 * 1024


def make_node(name, images):
    """images: [(names, size in bytes)]."""
    return Node({"metadata": {"name": name},
                 "status": {"images": [{"names": list(n), "sizeBytes": s} for n, s in images]}})


def make_pod(*images, init=()):
    spec = {"containers": [{"name": f"c{i}", "image": img} for i, img in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": img} for i, img in enumerate(init)]
    return Pod({"metadata": {"name": "p"}, "spec": spec})


def scores(pod, nodes):
    snapshot = Snapshot([NodeInfo(n) for n in nodes])
    pl = ImageLocality.new(None, Handle(snapshot))
    state = CycleState()
    out = []
    for ni in snapshot.node_infos:
        s, st = pl.score(state, pod, ni)
        assert st is None
        out.append(s)
    return out


NODE_40_300_2000 = make_node("node1", [(["gcr.io/40:latest", "gcr.io/40:v1"], 40 * MB),
                                       (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
                                       (["gcr.io/2000:latest"], 2000 * MB)])
NODE_250_10 = make_node("node2", [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)])
NODE_600_40_900 = make_node("node3", [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB),
                                      (["gcr.io/900:latest"], 900 * MB)])


def test_two_images_spread_on_two_nodes():
    # node1: 40Mi * 1/2 = 20Mi -> below threshold -> 0; node2: 250Mi * 1/2 = 125Mi
    pod = make_pod("gcr.io/40", "gcr.io/250")
    assert scores(pod, [NODE_40_300_2000, NODE_250_10]) == [0, 100 * (125 * MB - 23 * MB) // (2000 * MB - 23 * MB)]
    assert scores(pod, [NODE_40_300_2000, NODE_250_10]) == [0, 5]


def test_image_larger_than_max_threshold():
    # node1: 2000Mi * 1/2 = 1000Mi, capped at 1000Mi for one container -> 100
    assert scores(make_pod("gcr.io/2000"), [NODE_40_300_2000, NODE_250_10]) == [100, 0]


def test_spread_factor_with_three_nodes():
    # gcr.io/40 is on node1 and node3: 40Mi * 2/3; gcr.io/300 only on node1: 300Mi * 1/3
    nodes = [NODE_40_300_2000, NODE_250_10, NODE_600_40_900]
    s40 = int(40 * MB * (2 / 3))
    s300 = int(300 * MB * (1 / 3))
    want1 = 100 * (s40 + s300 - 23 * MB) // (2000 * MB - 23 * MB)
    want3 = 100 * (max(s40, 23 * MB) - 23 * MB) // (2000 * MB - 23 * MB)
    assert scores(make_pod("gcr.io/40", "gcr.io/300"), nodes) == [want1, 0, want3]


def test_tags_and_normalization():
    # "gcr.io/40:v1" matches the exact tag; "gcr.io/10" (no tag) is looked up as "gcr.io/10:latest".
    assert normalized_image_name("gcr.io/10") == "gcr.io/10:latest"
    assert normalized_image_name("gcr.io/10:v1") == "gcr.io/10:v1"
    assert normalized_image_name("localhost:5000/img") == "localhost:5000/img:latest"
    assert normalized_image_name("localhost:5000/img:1") == "localhost:5000/img:1"
    node = make_node("n", [(["gcr.io/big:v1"], 1000 * MB)])
    assert scores(make_pod("gcr.io/big:v1"), [node]) == [100]
    assert scores(make_pod("gcr.io/big"), [node]) == [0]


def test_init_containers_count():
    node = make_node("n", [(["gcr.io/big:latest"], 1000 * MB)])
    # The init container's image counts, and so does its 1000Mi of threshold.
    assert scores(make_pod("gcr.io/none", init=("gcr.io/big",)), [node]) == [
        100 * (1000 * MB - 23 * MB) // (2000 * MB - 23 * MB)]
    # Two containers with the same image count it twice.
    assert scores(make_pod("gcr.io/big", "gcr.io/big"), [node]) == [100]


def test_no_image_on_any_node():
    assert scores(make_pod("gcr.io/none"), [NODE_40_300_2000, NODE_250_10]) == [0, 0]


def test_calculate_priority_bounds():
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 2) == 100
    assert calculate_priority(0, 0) == 0


def test_no_normalize_and_no_events():
    pl = ImageLocality.new(None, Handle(Snapshot([])))
    assert pl.score_extensions() is None
    assert pl.events_to_register() == ()
