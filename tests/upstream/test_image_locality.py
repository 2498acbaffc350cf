"""kube's imagelocality/image_locality_test.go, TestImageLocalityPriority and TestNormalizedImageName, case by case."""
import hashlib

import pytest

from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import MAX_NODE_SCORE
from scheduler_core.objects import Node
from scheduler_core.plugins.imagelocality import ImageLocality, normalized_image_name

from .plugin_cases import make_pod, new_state, snapshot

UPSTREAM = "pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go"
UPSTREAM_VERSION = ("v1.28-v1.31 era (stored id 299972038: New(ctx, nil, fh), Score by node name, the "
                    "1000Mi-per-container threshold and the init-container case)")
UPSTREAM_CASES = 11

MB = 1024 * 1024


def image_node(name, images):
    """makeImageNode: images = [(names, size in MB)]."""
    return Node({"metadata": {"name": name},
                 "status": {"images": [{"names": list(n), "sizeBytes": s * MB} for n, s in images]}})


def pod_spec(*images, init=()):
    p = make_pod()
    for img in images:
        p.container(img)
    for img in init:
        p.init_container(img)
    return p


TEST_40_250 = pod_spec("gcr.io/40", "gcr.io/250")
TEST_40_300 = pod_spec("gcr.io/40", "gcr.io/300")
TEST_MIN_MAX = pod_spec("gcr.io/10", "gcr.io/4000")
TEST_300_600_900 = pod_spec("gcr.io/300", "gcr.io/600", "gcr.io/900")
TEST_30_40 = pod_spec("gcr.io/30", "gcr.io/40")
TEST_30_INIT_300 = pod_spec("gcr.io/30", init=("gcr.io/300",))

NODE_40_300_2000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
                    (["gcr.io/300:latest", "gcr.io/300:v1"], 300), (["gcr.io/2000:latest"], 2000)]
NODE_250_10 = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
NODE_600_40_900 = [(["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900)]
NODE_300_600_900 = [(["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900)]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
NODE_20_30_40 = [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)]
NO_IMAGES = []

PRIORITY_CASES = [
    ("two images spread on two nodes, prefer the larger image one", TEST_40_250,
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [0, 5]),
    ("two images on one node, prefer this node", TEST_40_300,
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [7, 0]),
    ("if exceed limit, use limit", TEST_MIN_MAX, [("node1", NODE_4000_30), ("node2", NODE_250_10)],
     [MAX_NODE_SCORE, 0]),
    ("if exceed limit, use limit (with node which has no images present)", TEST_MIN_MAX,
     [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NO_IMAGES)], [66, 0, 0]),
    ("pod with multiple large images, node2 is preferred", TEST_300_600_900,
     [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NO_IMAGES)], [32, 36, 0]),
    ("pod with multiple small images", TEST_30_40, [("node1", NODE_20_30_40), ("node2", NODE_4000_30)], [1, 0]),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one", TEST_30_INIT_300,
     [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)], [6, 0]),
]


@pytest.mark.parametrize("pod, nodes, want", [c[1:] for c in PRIORITY_CASES], ids=[c[0] for c in PRIORITY_CASES])
def test_image_locality_priority(pod, nodes, want):
    snap = snapshot([image_node(name, images) for name, images in nodes])
    pl = ImageLocality.new(None, Handle(snap))
    state, p = new_state(), pod.obj()
    got = []
    for ni in snap.node_infos:
        score, status = pl.score(state, p, ni)
        assert status is None
        got.append(score)
    assert got == want


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


NAME_CASES = [
    ("add :latest postfix 1", "root", "root:latest"),
    ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
    ("keep it as is 1", "root:tag", "root:tag"),
    ("keep it as is 2", "root@" + fake_digest("root"), "root@" + fake_digest("root")),
]


@pytest.mark.parametrize("image, want", [c[1:] for c in NAME_CASES], ids=[c[0] for c in NAME_CASES])
def test_normalized_image_name(image, want):
    assert normalized_image_name(image) == want
