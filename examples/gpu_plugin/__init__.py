"""GPUAware: an example out-of-tree plugin for scheduler_core.

For pods that request ``nvidia.com/gpu`` it filters out nodes that have no such allocatable resource
(whether enough GPUs are *free* is left to NodeResourcesFit) and prefers nodes whose GPUs have more
memory, read from the ``example.com/gpu-memory-gb`` node label. Pods without a GPU request are left
alone: PreFilter and PreScore return Skip, so its Filter and Score do not run for them.

Args (pluginConfig): ``resourceName`` (default ``nvidia.com/gpu``), ``memoryLabel`` (default
``example.com/gpu-memory-gb``). See README.md for how to register and configure it.
"""
from __future__ import annotations

from scheduler_core.framework.interface import (FilterPlugin, PreFilterPlugin, PreScorePlugin, ScoreExtensions,
                                                ScorePlugin)
from scheduler_core.framework.status import Code, Status
from scheduler_core.plugins.helper import default_normalize_score

NAME = "GPUAware"
DEFAULT_RESOURCE = "nvidia.com/gpu"
DEFAULT_MEMORY_LABEL = "example.com/gpu-memory-gb"


class GPUAware(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions):
    """Filter: drop nodes without the GPU resource. Score: GPU memory label, normalized to 0-100."""

    name = NAME

    def __init__(self, resource_name: str = DEFAULT_RESOURCE, memory_label: str = DEFAULT_MEMORY_LABEL):
        self.resource_name = resource_name
        self.memory_label = memory_label
        self.no_gpu_reason = f"node(s) have no {resource_name}"

    @classmethod
    def new(cls, args, handle):
        args = dict(args or {})
        unknown = sorted(set(args) - {"resourceName", "memoryLabel"})
        if unknown:
            raise ValueError(f"unknown field(s) in GPUAware args: {', '.join(unknown)}")
        resource = args.get("resourceName", DEFAULT_RESOURCE)
        label = args.get("memoryLabel", DEFAULT_MEMORY_LABEL)
        for field, value in (("resourceName", resource), ("memoryLabel", label)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"GPUAware args: {field} must be a non-empty string")
        return cls(resource, label)

    def _wants_gpu(self, pod) -> bool:
        return pod.requests.get(self.resource_name, 0) > 0

    def pre_filter(self, state, pod):
        return None, (None if self._wants_gpu(pod) else Status(Code.SKIP))

    def filter(self, state, pod, node_info):
        # Unresolvable: evicting pods cannot give a node a GPU it does not have. (The request check only
        # matters when the profile enables Filter without PreFilter, which would otherwise skip us.)
        if node_info.allocatable.get(self.resource_name, 0) <= 0 and self._wants_gpu(pod):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, self.no_gpu_reason)
        return None

    def pre_score(self, state, pod, node_infos):
        return None if self._wants_gpu(pod) else Status(Code.SKIP)

    def score(self, state, pod, node_info):
        """The node's GPU memory in GB (0 when the label is missing or not a non-negative integer)."""
        value = node_info.node.labels.get(self.memory_label, "")
        return (int(value) if value.isascii() and value.isdigit() else 0), None

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        """Scale so that the node with the most GPU memory gets 100."""
        return default_normalize_score(100, False, scores)

    def events_to_register(self):
        return (("Node", ("Add", "Update")),)
