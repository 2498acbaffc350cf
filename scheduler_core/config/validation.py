"""ValidateKubeSchedulerConfiguration (pkg/scheduler/apis/config/validation) on a defaulted config, at a version."""
from __future__ import annotations

import json

from .. import versions
from .args import args_validator, go_unknown
from .decode import API_VERSION
from .duration import format_duration
from ..objects.field import GoValue, duplicate, go_quote, invalid, required
from ..objects.identifiers import is_extended_resource_name, is_qualified_name

# validatePluginConfig's map: key -> args kind it expects. NodeResourcesFit is registered under its
# kind's name, so a "NodeResourcesFit" entry is never checked and a "NodeResourcesFitArgs" one never fits.
_ARGS_CHECKED = {"DefaultPreemption": "DefaultPreemptionArgs", "InterPodAffinity": "InterPodAffinityArgs",
                 "NodeAffinity": "NodeAffinityArgs",
                 "NodeResourcesBalancedAllocation": "NodeResourcesBalancedAllocationArgs",
                 "NodeResourcesFitArgs": "NodeResourcesFitArgs", "PodTopologySpread": "PodTopologySpreadArgs",
                 "VolumeBinding": "VolumeBindingArgs"}
_ARGS_CHECKED_DRA = {**_ARGS_CHECKED, "DynamicResources": "DynamicResourcesArgs"}
# invalidPluginsByVersion: plugins kubescheduler.config.k8s.io/v1 no longer accepts (from 1.31 on).
_INVALID_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
# validatePluginConfig's stagesToPluginSet (multiPoint is not checked).
_CHECKED_STAGES = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
                   "permit", "preBind", "bind", "postBind")
_INVALID_DETAIL = f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'


def _path_value(name: str, features) -> GoValue:
    """The *field.Path kube passes as the value of a duplicate scheduler name: its ``%#v`` (1.30); JSON from 1.36,
    which a Path, with no exported field, marshals to ``{}``."""
    if features.has("field-error-json-values"):
        return GoValue("{}")
    return GoValue(f"field.Path{{name:{go_quote(name)}, index:\"\", parent:(*field.Path)(0xADDR)}}")


def _plugin_set_value(ps: dict, features) -> GoValue:
    """An internal config.PluginSet as a field error prints it: ``%#v`` (1.30), JSON from 1.36."""
    if features.has("field-error-json-values"):
        def listed(lst):
            return "null" if not lst else "[" + ",".join(
                f'{{"Name":{json.dumps(p["name"])},"Weight":{p["weight"]}}}' for p in lst) + "]"
        return GoValue(f'{{"Enabled":{listed(ps["enabled"])},"Disabled":{listed(ps["disabled"])}}}')

    def plugins(lst):
        if not lst:
            return "[]config.Plugin(nil)"
        return "[]config.Plugin{" + ", ".join(
            f"config.Plugin{{Name:{go_quote(p['name'])}, Weight:{p['weight']}}}" for p in lst) + "}"
    return GoValue(f"config.PluginSet{{Enabled:{plugins(ps['enabled'])}, Disabled:{plugins(ps['disabled'])}}}")


def _args_value(pc: dict, features):
    """The value kube prints for pluginConfig args that are not of a registered kind: nil, or the runtime.Unknown
    (its ``%#v`` at 1.30; from 1.36 its JSON, which is the raw args)."""
    if pc.get("args") is None:
        return None
    if features.has("field-error-json-values"):
        return GoValue(json.dumps(pc["args"], separators=(",", ":"), ensure_ascii=False))
    return go_unknown(pc["args"])


def _percentage(path: str, value) -> list:
    if value is not None and (value < 0 or value > 100):
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _leader_election(le: dict) -> list:
    """componentbase ValidateLeaderElectionConfiguration (only when leaderElect): the durations."""
    if not le["leaderElect"]:
        return []
    errs, p = [], "leaderElection"
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if le[key] <= 0:
            errs.append(invalid(f"{p}.{key}", GoValue(format_duration(le[key])), "must be greater than zero"))
    if le["leaseDuration"] <= le["renewDeadline"]:
        errs.append(invalid(f"{p}.leaseDuration", GoValue(format_duration(le["renewDeadline"])),
                            "LeaseDuration must be greater than RenewDeadline"))
    for key in ("resourceLock", "resourceNamespace", "resourceName"):  # empty only when not defaulted
        if not le[key]:
            errs.append(invalid(f"{p}.{key}", le[key], f"{key} is required"))
    return errs


def _plugin_config(path: str, prof: dict, features) -> list:
    errs, seen = [], set()
    removed = features.has("removed-volume-limit-plugins")
    if removed:
        for stage in _CHECKED_STAGES:
            for i, p in enumerate(prof["plugins"][stage]["enabled"]):
                if p["name"] in _INVALID_PLUGINS:
                    errs.append(invalid(f"{path}.plugins.{stage}.enabled[{i}]", p["name"], _INVALID_DETAIL))
    checked = _ARGS_CHECKED_DRA if features.has("dynamic-resources-args") else _ARGS_CHECKED
    for j, pc in enumerate(prof["pluginConfig"]):
        pc_path, name = f"{path}.pluginConfig[{j}]", pc["name"]
        if name in seen:
            errs.append(duplicate(pc_path, name))
        seen.add(name)
        if removed and name in _INVALID_PLUGINS:
            errs.append(invalid(pc_path, name, _INVALID_DETAIL))
            continue
        kind = checked.get(name)
        if kind is None:
            continue
        if pc.get("argsKind") != kind:
            errs.append(invalid(f"{pc_path}.args", _args_value(pc, features), "has to match plugin args"))
            continue
        validate = args_validator(name, features)
        if validate is not None:
            errs.extend(validate(pc["args"], f"{pc_path}.args"))
    return errs


def _common_queue_sort(profiles: list, features) -> list:
    """validateCommonQueueSort: every profile has the queueSort set and args of the first one."""
    errs = []
    canon = profiles[0]["plugins"]["queueSort"]
    name = canon["enabled"][0]["name"] if canon["enabled"] else ""
    if len(canon["enabled"]) > 1:
        errs.append(invalid("profiles[0].plugins.queueSort.Enabled", len(canon["enabled"]),
                            "only one queue sort plugin can be enabled"))
    canon_args = None
    for pc in profiles[0]["pluginConfig"]:
        if name and pc["name"] == name:
            canon_args = pc.get("args")
    for i in range(1, len(profiles)):
        curr = profiles[i]["plugins"]["queueSort"]
        if curr != canon:
            detail = "must be the same for all profiles" if features.has("queue-sort-message") else \
                "queueSort must be the same for all profiles"
            errs.append(invalid(f"profiles[{i}].plugins.queueSort", _plugin_set_value(curr, features), detail))
        for pc in profiles[i]["pluginConfig"]:
            if pc["name"] == name and pc.get("args") != canon_args:
                errs.append(invalid(f"profiles[{i}].pluginConfig.args", _args_value(pc, features),
                                    "queueSort must be the same for all profiles"))
    return errs


def _extenders(extenders: list) -> list:
    errs, binders, managed = [], 0, set()
    for i, ext in enumerate(extenders):
        p = f"extenders[{i}]"
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.append(invalid(f"{p}.weight", ext.get("weight", 0), "must have a positive weight applied to it"))
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or ()):
            rpath, name = f"{p}.managedResources[{j}].name", res.get("name", "")
            msgs = is_qualified_name(name)
            errs.extend(invalid(rpath, name, m) for m in msgs)
            if not msgs and not is_extended_resource_name(name):
                errs.append(invalid(rpath, name, "is an invalid extended resource name"))
            if name in managed:
                errs.append(invalid(rpath, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(invalid("extenders", f"found {binders} extenders implementing bind",
                            "only one extender can implement bind"))
    return errs


def validate_configuration(cfg: dict, features=None) -> list:
    """ValidateKubeSchedulerConfiguration at ``features``' version (None: the default version): the field errors,
    in kube's order (aggregate() prints them)."""
    features = versions.features(features)
    errs = []
    if cfg["clientConnection"]["burst"] < 0:
        errs.append(invalid("clientConnection.burst", cfg["clientConnection"]["burst"], "must be non-negative"))
    le = cfg["leaderElection"]
    errs.extend(_leader_election(le))
    if le["leaderElect"] and le["resourceLock"] != "leases":
        errs.append(invalid("leaderElection.resourceLock", le["resourceLock"], 'resourceLock value must be "leases"'))
    if cfg["parallelism"] <= 0:
        errs.append(invalid("parallelism", cfg["parallelism"], "should be an integer value greater than zero"))
    existing = set()  # defaulting leaves at least one profile
    for i, prof in enumerate(cfg["profiles"]):
        path = f"profiles[{i}]"
        if not prof["schedulerName"]:
            errs.append(required(f"{path}.schedulerName"))
        errs.extend(_percentage(f"{path}.percentageOfNodesToScore", prof["percentageOfNodesToScore"]))
        errs.extend(_plugin_config(path, prof, features))
        if prof["schedulerName"] in existing:
            errs.append(duplicate(f"{path}.schedulerName", _path_value("schedulerName", features)))
        existing.add(prof["schedulerName"])
    errs.extend(_common_queue_sort(cfg["profiles"], features))
    errs.extend(_percentage("percentageOfNodesToScore", cfg["percentageOfNodesToScore"]))
    if cfg["podInitialBackoffSeconds"] <= 0:
        errs.append(invalid("podInitialBackoffSeconds", cfg["podInitialBackoffSeconds"], "must be greater than 0"))
    if cfg["podMaxBackoffSeconds"] < cfg["podInitialBackoffSeconds"]:
        errs.append(invalid("podMaxBackoffSeconds", cfg["podMaxBackoffSeconds"],
                            "must be greater than or equal to PodInitialBackoffSeconds"))
    errs.extend(_extenders(cfg["extenders"]))
    return errs
