"""KubeSchedulerConfiguration v1: load, default, validate, and build one framework per profile."""
from __future__ import annotations

from ..framework.interface import EXTENSION_POINTS, extension_points_of
from ..framework.profile import new_framework
from .defaults import DEFAULT_MULTIPOINT, DEFAULT_SCHEDULER_NAME


class ProfileConfig:
    """One profile after defaulting: effective plugins per extension point, args, percentage."""

    def __init__(self, scheduler_name, point_plugins, plugin_args, percentage_of_nodes_to_score=None):
        self.scheduler_name = scheduler_name
        self.point_plugins = point_plugins        # {point: [(name, weight)]}
        self.plugin_args = plugin_args            # {name: args dict}
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score


class SchedulerConfig:
    def __init__(self, profiles, percentage_of_nodes_to_score=0, pod_initial_backoff_seconds=1,
                 pod_max_backoff_seconds=10, extenders=(), parallelism=16, raw=None):
        self.profiles = profiles
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.pod_initial_backoff_seconds = pod_initial_backoff_seconds
        self.pod_max_backoff_seconds = pod_max_backoff_seconds
        self.extenders = list(extenders)
        self.parallelism = parallelism
        self.raw = raw


def default_config(registry) -> SchedulerConfig:
    """The configuration kube-scheduler runs with no config file."""
    points = {p: [] for p in EXTENSION_POINTS}
    for name, weight in DEFAULT_MULTIPOINT:
        cls = registry.get(name)
        if cls is None:
            continue
        for point in extension_points_of(cls):
            points[point].append((name, weight))
    return SchedulerConfig([ProfileConfig(DEFAULT_SCHEDULER_NAME, points, {})])


def build_frameworks(config: SchedulerConfig, registry, handle_factory) -> dict:
    """One Framework per profile, keyed by schedulerName (profile.NewMap)."""
    out = {}
    for prof in config.profiles:
        handle = handle_factory()
        out[prof.scheduler_name] = new_framework(prof.scheduler_name, prof.point_plugins, prof.plugin_args,
                                                 registry, handle, prof.percentage_of_nodes_to_score)
    return out


class ConfigError(ValueError):
    """A configuration kube-scheduler would reject; ``stage`` is decode, validation or framework."""

    def __init__(self, message: str, stage: str):
        super().__init__(message)
        self.stage = stage


def load_config(doc, registry) -> SchedulerConfig:
    """Decode, default and validate a KubeSchedulerConfiguration document (dict)."""
    if not doc:
        return default_config(registry)
    raise ConfigError("custom KubeSchedulerConfiguration documents are not supported yet", "decode")
