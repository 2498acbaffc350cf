"""KubeSchedulerConfiguration v1: load (decode, default, validate) and build one framework per profile.

``load_config`` follows kube-scheduler's loadConfig + ValidateKubeSchedulerConfiguration at a Kubernetes version
with its feature gates (``kube_version``, ``feature_gates``: see scheduler_core.versions); a rejected document
raises ConfigError with kube's text and the stage (decode or validation; "feature-gates" for gate settings kube
refuses, "version" for a version this implementation does not have). ``build_frameworks`` follows profile.NewMap;
its errors are FrameworkError (printed after "initializing profiles: ").
"""
from __future__ import annotations

import copy

from .. import versions
from ..framework.profile import FrameworkError, new_framework
from ..plugins.registry import registry_at
from .decode import DecodeError, decode
from .defaults import DEFAULT_SCHEDULER_NAME, set_defaults
from .duration import format_duration
from ..objects.field import aggregate
from .validation import validate_configuration

# v1 plugin set name -> extension point.
SET_POINTS = {"preEnqueue": "PreEnqueue", "queueSort": "QueueSort", "preFilter": "PreFilter", "filter": "Filter",
              "postFilter": "PostFilter", "preScore": "PreScore", "score": "Score", "reserve": "Reserve",
              "permit": "Permit", "preBind": "PreBind", "bind": "Bind", "postBind": "PostBind"}
# the sets a version with workload-aware scheduling adds (config-placement-plugin-sets)
PLACEMENT_SET_POINTS = {"placementGenerate": "PlacementGenerate", "placementScore": "PlacementScore"}
_EXTENDER_ZERO = {"urlPrefix": "", "filterVerb": "", "preemptVerb": "", "prioritizeVerb": "", "weight": 0,
                  "bindVerb": "", "enableHTTPS": False, "tlsConfig": None, "httpTimeout": 0,
                  "nodeCacheCapable": False, "managedResources": [], "ignorable": False}

__all__ = ["ConfigError", "ProfileConfig", "SchedulerConfig", "load_config", "defaulted_config", "default_config",
           "config_for", "resolve_features", "build_frameworks", "DEFAULT_SCHEDULER_NAME"]


class ConfigError(ValueError):
    """A configuration kube-scheduler would reject; ``stage`` is decode, validation or framework."""

    def __init__(self, message: str, stage: str):
        super().__init__(message)
        self.stage = stage


class ProfileConfig:
    """One profile after defaulting.

    point_plugins: {extension point: [(name, weight)]} enabled explicitly per point; multi_point:
    [(name, weight)] enabled through multiPoint (defaults included); disabled: {extension point: [names]};
    plugin_args: {name: args dict} (defaulted for the registered args kinds). The effective per-point
    lists come from the multiPoint expansion in new_framework (Framework.list_plugins()).
    """

    def __init__(self, scheduler_name, point_plugins, plugin_args, percentage_of_nodes_to_score=None,
                 multi_point=(), disabled=None):
        self.scheduler_name = scheduler_name
        self.point_plugins = point_plugins
        self.plugin_args = plugin_args
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.multi_point = list(multi_point)
        self.disabled = disabled or {}


class SchedulerConfig:
    """The whole configuration: profiles, scheduler-wide settings, extenders (v1 dicts, every field set),
    ``raw``, the defaulted document (durations in nanoseconds), and ``features``, the Kubernetes version and
    feature gates it was loaded at (versions.Features)."""

    def __init__(self, profiles, percentage_of_nodes_to_score=0, pod_initial_backoff_seconds=1,
                 pod_max_backoff_seconds=10, extenders=(), parallelism=16, raw=None, leader_election=None,
                 features=None):
        self.profiles = profiles
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.pod_initial_backoff_seconds = pod_initial_backoff_seconds
        self.pod_max_backoff_seconds = pod_max_backoff_seconds
        self.extenders = list(extenders)
        self.parallelism = parallelism
        self.raw = raw
        self.leader_election = leader_election
        self.features = versions.features(features)

    @property
    def kube_version(self) -> str:
        """"1.30", "1.36", ..."""
        return self.features.name


def _profile_config(prof: dict) -> ProfileConfig:
    plugins = prof["plugins"]
    sets = {s: point for s, point in {**SET_POINTS, **PLACEMENT_SET_POINTS}.items() if s in plugins}
    point_plugins = {point: [(p["name"], p["weight"]) for p in plugins[s]["enabled"]] for s, point in sets.items()}
    disabled = {point: [p["name"] for p in plugins[s]["disabled"]] for s, point in sets.items()}
    multi_point = [(p["name"], p["weight"]) for p in plugins["multiPoint"]["enabled"]]
    args = {pc["name"]: pc.get("args") for pc in prof["pluginConfig"]}
    return ProfileConfig(prof["schedulerName"], point_plugins, args, prof["percentageOfNodesToScore"],
                         multi_point, disabled)


def _extender(ext: dict) -> dict:
    out = {**copy.deepcopy(_EXTENDER_ZERO), **copy.deepcopy(ext)}
    out["httpTimeout"] = format_duration(out["httpTimeout"])
    out["managedResources"] = [{"name": "", "ignoredByScheduler": False, **m} for m in out["managedResources"]]
    return out


def _scheduler_config(cfg: dict, features) -> SchedulerConfig:
    le = cfg["leaderElection"]
    leader_election = {**le, **{k: format_duration(le[k]) for k in ("leaseDuration", "renewDeadline", "retryPeriod")}}
    return SchedulerConfig([_profile_config(p) for p in cfg["profiles"]], cfg["percentageOfNodesToScore"],
                           cfg["podInitialBackoffSeconds"], cfg["podMaxBackoffSeconds"],
                           [_extender(e) for e in cfg["extenders"]], cfg["parallelism"], cfg, leader_election,
                           features)


def resolve_features(kube_version=None, feature_gates=None) -> versions.Features:
    """versions.features with its errors as ConfigError (stage "version" or "feature-gates")."""
    try:
        return versions.features(kube_version, feature_gates)
    except versions.VersionError as err:
        raise ConfigError(str(err), "version") from None
    except versions.FeatureGateError as err:
        raise ConfigError(str(err), "feature-gates") from None


def default_config(registry, *, kube_version=None, feature_gates=None) -> SchedulerConfig:
    """The configuration kube-scheduler runs with no config file, at ``kube_version`` (None: the default
    version; a versions.Features is taken as is) with ``feature_gates`` (plugins missing from registry left
    out)."""
    features = resolve_features(kube_version, feature_gates)
    return _scheduler_config(set_defaults({}, registry_at(registry, features), features), features)


def _decoded_defaulted(doc, registry, features) -> dict:
    try:
        cfg = decode(copy.deepcopy(doc), features)
    except DecodeError as err:
        raise ConfigError(str(err), "decode") from None
    return set_defaults(cfg, registry_at(registry, features), features)


def defaulted_config(doc, registry, *, kube_version=None, feature_gates=None) -> SchedulerConfig:
    """A document decoded (strictly) and defaulted but not validated: what an editor shows of a document kube
    may still reject. Raises ConfigError(text, "decode")."""
    features = resolve_features(kube_version, feature_gates)
    return _scheduler_config(_decoded_defaulted(doc, registry, features), features)


def load_config(doc, registry, *, kube_version=None, feature_gates=None) -> SchedulerConfig:
    """Decode (strictly), default and validate a KubeSchedulerConfiguration v1 document (a dict) as kube-scheduler
    ``kube_version`` does with ``--feature-gates`` ``feature_gates`` (see default_config).

    Raises ConfigError(text, "decode" | "validation" | "version" | "feature-gates") with kube-scheduler's text.
    """
    features = resolve_features(kube_version, feature_gates)
    cfg = _decoded_defaulted(doc, registry, features)
    errs = validate_configuration(cfg, features)
    if errs:
        raise ConfigError(aggregate(errs), "validation")
    return _scheduler_config(cfg, features)


def config_for(doc, registry, *, kube_version=None, feature_gates=None) -> SchedulerConfig:
    """load_config of ``doc``, or default_config when it is None."""
    if doc is None:
        return default_config(registry, kube_version=kube_version, feature_gates=feature_gates)
    return load_config(doc, registry, kube_version=kube_version, feature_gates=feature_gates)


def config_matching(config, registry, kube_version=None, feature_gates=None) -> SchedulerConfig:
    """``config``, checked to be at ``kube_version`` with ``feature_gates`` when they are given; without a config,
    default_config at them (what a Scheduler is built with)."""
    if config is None:
        return default_config(registry, kube_version=kube_version, feature_gates=feature_gates)
    if kube_version is not None or feature_gates is not None:
        wanted = resolve_features(kube_version if kube_version is not None else config.features.version.name,
                                  feature_gates)
        if wanted != config.features:
            raise ConfigError(f"the configuration is for {config.features!r}, not {wanted!r}", "version")
    return config


def _extender_ignored_resources(config: SchedulerConfig, profiles: list) -> list:
    """buildExtenders: resources extenders manage with ignoredByScheduler replace NodeResourcesFit's
    ignoredResources in every profile (which must then configure NodeResourcesFit)."""
    ignored = [m["name"] for e in config.extenders for m in e["managedResources"] if m["ignoredByScheduler"]]
    if not ignored:
        return profiles
    out = []
    for prof in profiles:
        if "NodeResourcesFit" not in prof.plugin_args:
            raise ConfigError("can't find NodeResourcesFitArgs in plugin config", "framework")
        args = {**prof.plugin_args, "NodeResourcesFit": {**(prof.plugin_args["NodeResourcesFit"] or {}),
                                                         "ignoredResources": ignored}}
        out.append(ProfileConfig(prof.scheduler_name, prof.point_plugins, args, prof.percentage_of_nodes_to_score,
                                 prof.multi_point, prof.disabled))
    return out


def build_frameworks(config: SchedulerConfig, registry, handle_factory) -> dict:
    """One Framework per profile, keyed by schedulerName (profile.NewMap), at the configuration's version: its
    handles get ``features`` and the in-tree plugins of that version; FrameworkError when one fails."""
    out, queue_sort, queue_sort_args = {}, None, None
    features = config.features
    registry = registry_at(registry, features)

    def versioned_handle():
        handle = handle_factory()
        if handle is not None:
            handle.features = features
        return handle
    for prof in _extender_ignored_resources(config, config.profiles):
        try:
            fwk = new_framework(prof.scheduler_name, prof.point_plugins, prof.plugin_args, registry,
                                versioned_handle(), prof.percentage_of_nodes_to_score, prof.multi_point,
                                prof.disabled)
        except FrameworkError as err:
            raise FrameworkError(f"creating profile for scheduler name {prof.scheduler_name}: {err}") from None
        if not prof.scheduler_name:
            raise FrameworkError("scheduler name is needed")
        if prof.scheduler_name in out:
            raise FrameworkError(f'duplicate profile with scheduler name "{prof.scheduler_name}"')
        name = fwk.queue_sort[0].name
        args = prof.plugin_args.get(name)
        if queue_sort is None:
            queue_sort, queue_sort_args = name, args
        elif name != queue_sort:
            raise FrameworkError(f'different queue sort plugins for profile "{prof.scheduler_name}": '
                                 f'"{name}", first: "{queue_sort}"')
        elif args != queue_sort_args:
            raise FrameworkError(f'different queue sort plugin args for profile "{prof.scheduler_name}"')
        out[prof.scheduler_name] = fwk
    return out
