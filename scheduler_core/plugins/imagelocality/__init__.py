"""ImageLocality: favour nodes that already have the pod's container images."""
from __future__ import annotations

import numpy as np

from ...framework.handle import features_of
from ...framework.interface import MAX_NODE_SCORE, ScorePlugin
from ...framework import signers
from .. import names

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
STATE_KEY = "Score" + names.IMAGE_LOCALITY


def normalized_image_name(name: str) -> str:
    """Append the default tag ``:latest`` when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Scale the summed image scores between 23Mi and 1000Mi per container to [0, 100]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    # The numerator is 0 whenever the denominator is negative (no container), so // matches Go's division.
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(ScorePlugin):
    """Score = image sizes present on the node, each scaled by the share of nodes having it (no normalize)."""

    name = names.IMAGE_LOCALITY

    def __init__(self, handle, image_volumes: bool = False):
        self.handle = handle
        # 1.36 (versions: image-locality-image-volumes): image volumes' references count too
        self.image_volumes = image_volumes

    @classmethod
    def new(cls, args, handle):
        return cls(handle, features_of(handle).has("image-locality-image-volumes"))

    def _images(self, state, pod):
        images = state.get(STATE_KEY)
        if images is None:  # once per cycle: normalized names of init containers, containers, image volumes
            images = [normalized_image_name(c.image) for c in pod.init_containers + pod.containers]
            if self.image_volumes:
                images += [normalized_image_name((v.get("image") or {}).get("reference") or "")
                           for v in pod.volumes if isinstance(v, dict) and v.get("image") is not None]
            images = tuple(images)
            state.write(STATE_KEY, images)
        return images

    @staticmethod
    def _num_containers(pod) -> int:
        return len(pod.init_containers) + len(pod.containers)

    def score_batch(self, state, pod, table, rows):
        """Score over NodeTable rows: nodes without images all get the score of no image present."""
        self._images(state, pod)
        out = np.full(len(rows), calculate_priority(0, self._num_containers(pod)), np.int64)
        infos = table.infos
        for j in np.flatnonzero(table.has_images[rows]):
            out[j] = self.score(state, pod, infos[rows[j]])[0]
        return out

    def score(self, state, pod, node_info):
        images = self._images(state, pod)
        total_nodes = len(self.handle.snapshot.node_infos)
        image_states = node_info.image_states
        total = 0
        for image in images:
            st = image_states.get(image)
            if st is not None:
                size, num_nodes = st
                total += int(size * (num_nodes / total_nodes))
        return calculate_priority(total, self._num_containers(pod)), None

    def score_extensions(self):
        return None

    def sign_pod(self, pod):
        """Scoring depends on the containers' and init containers' images."""
        spec = pod.raw.get("spec") or {}
        images = {normalized_image_name(c.get("image") or "")
                  for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ())}
        return [(signers.IMAGE_NAMES, sorted(images))], None
