"""Defaults of KubeSchedulerConfiguration v1 (apis/config/v1/default_plugins.go, defaults.go).

Works on the decoded dict (see decode.py) and leaves every field set, in the v1 JSON shape, with the
internal types' zero values (a nil weight is 0, durations in nanoseconds).
"""
from __future__ import annotations

from .. import versions
from .args import args_plugins, default_args
from .decode import plugin_sets
from .duration import SECOND

DEFAULT_SCHEDULER_NAME = "default-scheduler"
# The default MultiPoint list at the default version and gates, in order, with score weights (0: none given).
DEFAULT_MULTIPOINT = tuple(versions.features().default_multi_point())


def _plugin(entry: dict) -> dict:
    return {"name": entry.get("name", ""), "weight": entry.get("weight", 0)}


def default_plugins(registry, features=None) -> dict:
    """getDefaultPlugins at ``features``' version and gates (None: the default version): every set empty but
    multiPoint; plugins missing from the registry are left out."""
    features = versions.features(features)
    sets = {s: {"enabled": [], "disabled": []} for s in plugin_sets(features)}
    sets["multiPoint"]["enabled"] = [{"name": n, "weight": w} for n, w in features.default_multi_point()
                                     if n in registry]
    return sets


def merge_plugin_set(default: dict, custom: dict) -> dict:
    """mergePluginSet: user disabled (+ default disabled) drop defaults ("*" all of them); a default the
    user enables again is replaced in place; the remaining user plugins follow in their order."""
    disabled = [_plugin(p) for p in custom.get("disabled") or ()] + [dict(p) for p in default["disabled"]]
    disabled_names = {p["name"] for p in disabled}
    custom_enabled = [_plugin(p) for p in custom.get("enabled") or ()]
    index = {p["name"]: i for i, p in enumerate(custom_enabled)}
    enabled, replaced = [], set()
    if "*" not in disabled_names:
        for p in default["enabled"]:
            if p["name"] in disabled_names:
                continue
            i = index.get(p["name"])
            if i is not None:
                replaced.add(i)
                p = custom_enabled[i]
            enabled.append(dict(p))
    enabled.extend(p for i, p in enumerate(custom_enabled) if i not in replaced)
    return {"enabled": enabled, "disabled": disabled}


def merge_plugins(defaults: dict, custom) -> dict:
    """mergePlugins: the defaults when the profile sets no plugins, else each set merged."""
    if custom is None:
        return defaults
    return {s: merge_plugin_set(defaults[s], custom.get(s) or {}) for s in defaults}


def _set_profile_defaults(prof: dict, registry, features) -> None:
    """setDefaults_KubeSchedulerProfile: merged plugins, defaulted args, default args for enabled plugins."""
    prof["plugins"] = merge_plugins(default_plugins(registry, features), prof.get("plugins"))
    configs = prof.setdefault("pluginConfig", [])
    existing = set()
    for pc in configs:
        pc.setdefault("name", "")
        existing.add(pc["name"])
        if pc.get("argsKind") is not None:
            pc["args"] = default_args(pc["name"], pc["args"], features)
    names = sorted({p["name"] for s in prof["plugins"].values() for p in s["enabled"]})
    with_args = args_plugins(features)
    for name in names:
        if name not in existing and name in with_args:
            configs.append({"name": name, "args": default_args(name, {}, features), "argsKind": name + "Args"})


def set_defaults(cfg: dict, registry, features=None) -> dict:
    """SetDefaults_KubeSchedulerConfiguration at ``features``' version (None: the default version), with the
    leader election recommendations, in place."""
    features = versions.features(features)
    cfg.setdefault("parallelism", 16)
    profiles = cfg.get("profiles") or [{}]
    cfg["profiles"] = profiles
    if len(profiles) == 1:
        profiles[0].setdefault("schedulerName", DEFAULT_SCHEDULER_NAME)
    for prof in profiles:
        prof.setdefault("schedulerName", "")
        prof.setdefault("percentageOfNodesToScore", None)
        _set_profile_defaults(prof, registry, features)
    cfg.setdefault("percentageOfNodesToScore", 0)
    le = cfg.setdefault("leaderElection", {})
    for key, value in (("resourceLock", "leases"), ("resourceNamespace", "kube-system"),
                       ("resourceName", "kube-scheduler")):
        if not le.get(key):
            le[key] = value
    cc = cfg.setdefault("clientConnection", {})
    if not cc.get("contentType"):
        cc["contentType"] = "application/vnd.kubernetes.protobuf"
    if not cc.get("qps"):
        cc["qps"] = 50.0
    if not cc.get("burst"):
        cc["burst"] = 100
    cc.setdefault("kubeconfig", "")
    cc.setdefault("acceptContentTypes", "")
    for key, value in (("leaseDuration", 15 * SECOND), ("renewDeadline", 10 * SECOND), ("retryPeriod", 2 * SECOND)):
        if not le.get(key):
            le[key] = value
    le.setdefault("leaderElect", True)
    cfg.setdefault("podInitialBackoffSeconds", 1)
    cfg.setdefault("podMaxBackoffSeconds", 10)
    cfg.setdefault("enableProfiling", True)
    cfg.setdefault("enableContentionProfiling", cfg["enableProfiling"])
    cfg.setdefault("extenders", [])
    cfg.setdefault("delayCacheUntilActive", False)
    return cfg
