"""Plugin args of kubescheduler.config.k8s.io/v1: defaulting (SetDefaults_<Kind>) and validation.

Args are dicts in the v1 JSON shape. NodeResourcesFit, InterPodAffinity and PodTopologySpread keep their
defaulting and validation next to their plugin; they are looked up lazily (the plugins import this
package). The other kinds are defined here.
"""
from __future__ import annotations

import importlib
import json

from .. import versions
from ..objects.field import GoValue, child, duplicate, forbidden, go_quote, invalid
from ..objects.selectors import is_empty_term, node_selector_term_errors
from .duration import SECOND, format_duration

DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})


# -- DefaultPreemption --------------------------------------------------------------------------------
def default_preemption_args(args, features=None) -> dict:
    """SetDefaults_DefaultPreemptionArgs: 10% and 100 candidate nodes."""
    out = dict(args or {})
    out.setdefault("minCandidateNodesPercentage", 10)
    out.setdefault("minCandidateNodesAbsolute", 100)
    return out


def validate_default_preemption_args(args: dict, path: str = "", features=None) -> list:
    """ValidateDefaultPreemptionArgs."""
    errs = []
    pct_path, abs_path = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    pct, absolute = args.get("minCandidateNodesPercentage", 0), args.get("minCandidateNodesAbsolute", 0)
    if pct < 0 or pct > 100:
        errs.append(invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


# -- NodeResourcesBalancedAllocation ------------------------------------------------------------------
def default_balanced_allocation_args(args, features=None) -> dict:
    """SetDefaults_NodeResourcesBalancedAllocationArgs: cpu and memory; a weight of 0 becomes 1."""
    out = dict(args or {})
    resources = [dict(r) for r in out.get("resources") or ()]
    if not resources:
        resources = [dict(r) for r in DEFAULT_RESOURCES]
    for r in resources:
        if not r.get("weight"):
            r["weight"] = 1
    out["resources"] = resources
    return out


def validate_balanced_allocation_args(args: dict, path: str = "", features=None) -> list:
    """ValidateNodeResourcesBalancedAllocationArgs: unique resource names, every weight 1."""
    errs, seen = [], set()
    for i, r in enumerate(args.get("resources") or ()):
        name, rpath = r.get("name", ""), f"{child(path, 'resources')}[{i}]"
        if name in seen:
            errs.append(duplicate(f"{rpath}.name", name))
        seen.add(name)
        if r.get("weight", 0) != 1:
            errs.append(invalid(f"{rpath}.weight", r.get("weight", 0), "must be 1"))
    return errs


# -- VolumeBinding ------------------------------------------------------------------------------------
def default_volume_binding_args(args, features) -> dict:
    """SetDefaults_VolumeBindingArgs: 600 s bind timeout (no shape: the storage capacity scoring gate is off)."""
    out = dict(args or {})
    out.setdefault("bindTimeoutSeconds", 600)
    return out


def _shape_value(shape) -> GoValue:
    points = ", ".join(f"config.UtilizationShapePoint{{Utilization:{p.get('utilization', 0)}, "
                       f"Score:{p.get('score', 0)}}}" for p in shape)
    return GoValue("[]config.UtilizationShapePoint{" + points + "}")


def validate_volume_binding_args(args: dict, path: str, features) -> list:
    """ValidateVolumeBindingArgs with the storage capacity scoring gate off (VolumeCapacityPriority, renamed
    StorageCapacityScoring in 1.33)."""
    errs = []
    timeout = args.get("bindTimeoutSeconds", 0)
    if timeout < 0:
        errs.append(invalid(child(path, "bindTimeoutSeconds"), timeout,
                            "invalid BindTimeoutSeconds, should not be a negative value"))
    if args.get("shape") is not None:
        gate = "StorageCapacityScoring" if features.has("storage-capacity-scoring") else "VolumeCapacityPriority"
        errs.append(invalid(child(path, "shape"), _shape_value(args["shape"]),
                            f"unexpected field `shape`, remove it or turn on the feature gate {gate}"))
    return errs


# -- DynamicResources ---------------------------------------------------------------------------------
DRA_FILTER_TIMEOUT_DEFAULT = 10 * SECOND
DRA_BINDING_TIMEOUT_DEFAULT = 600 * SECOND


def _binding_conditions(features) -> bool:
    return features.enabled("DRADeviceBindingConditions") and features.enabled("DRAResourceClaimDeviceStatus")


def default_dynamic_resources_args(args, features) -> dict:
    """SetDefaults_DynamicResourcesArgs: a 10 s filter timeout and a 10 min binding timeout, each when its gates
    are on (durations in nanoseconds)."""
    out = dict(args or {})
    if out.get("filterTimeout") is None and features.enabled("DRASchedulerFilterTimeout"):
        out["filterTimeout"] = DRA_FILTER_TIMEOUT_DEFAULT
    if out.get("bindingTimeout") is None and _binding_conditions(features):
        out["bindingTimeout"] = DRA_BINDING_TIMEOUT_DEFAULT
    return out


def validate_dynamic_resources_args(args: dict, path: str, features) -> list:
    """ValidateDynamicResourcesArgs: a field whose gate is off is an error, unlike in the REST API."""
    errs = []
    filter_timeout, binding_timeout = args.get("filterTimeout"), args.get("bindingTimeout")
    if features.enabled("DRASchedulerFilterTimeout"):
        if filter_timeout is not None and filter_timeout < 0:
            errs.append(invalid(child(path, "filterTimeout"), GoValue(format_duration(filter_timeout)),
                                "must be zero or positive"))
    elif filter_timeout is not None:
        errs.append(forbidden(child(path, "filterTimeout"), "DRASchedulingFilterTimeout feature gate is disabled"))
    if _binding_conditions(features):
        if binding_timeout is not None and binding_timeout < SECOND:
            errs.append(invalid(child(path, "bindingTimeout"), GoValue(format_duration(binding_timeout)),
                                "must be at least 1 second"))
    elif binding_timeout is not None:
        errs.append(forbidden(child(path, "bindingTimeout"),
                              "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"))
    return errs


# -- NodeAffinity -------------------------------------------------------------------------------------
def validate_node_affinity_args(args: dict, path: str = "", features=None) -> list:
    """ValidateNodeAffinityArgs: addedAffinity must parse as a node selector and preferred terms."""
    affinity = args.get("addedAffinity")
    if affinity is None:
        return []
    errs = []
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        rpath = child(path, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")
        for i, term in enumerate(required.get("nodeSelectorTerms") or ()):
            if not is_empty_term(term):
                errs.extend(node_selector_term_errors(term, f"{rpath}[{i}]"))
    ppath = child(path, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        term = pref.get("preference") or {}
        if pref.get("weight", 0) == 0 or is_empty_term(term):
            continue
        errs.extend(node_selector_term_errors(term, f"{ppath}[{i}]"))
    return errs


# -- the kinds ----------------------------------------------------------------------------------------
def _identity(args, features=None) -> dict:
    return dict(args or {})


_LOCAL = {
    "DefaultPreemption": (default_preemption_args, validate_default_preemption_args),
    "NodeAffinity": (_identity, validate_node_affinity_args),
    "NodeResourcesBalancedAllocation": (default_balanced_allocation_args, validate_balanced_allocation_args),
    "VolumeBinding": (default_volume_binding_args, validate_volume_binding_args),
    "DynamicResources": (default_dynamic_resources_args, validate_dynamic_resources_args),
}
# Plugins that define SetDefaults/Validate of their own args: (module, defaults, validation or None).
# NodeResourcesFitArgs are not validated with the configuration in v1.30 (validation.go registers the
# validator under the key "NodeResourcesFitArgs"); the plugin checks them when it is built.
_IN_PLUGIN = {
    "InterPodAffinity": ("interpodaffinity", "default_args", "validate_args"),
    "NodeResourcesFit": ("noderesources.fit", "default_fit_args", None),
    "PodTopologySpread": ("podtopologyspread", "default_args", "validate_args"),
}
_ALL_ARGS_PLUGINS = tuple(sorted((*_LOCAL, *_IN_PLUGIN)))


def args_plugins(features) -> tuple:
    """The plugins whose ``<name>Args`` kind a version registers."""
    return tuple(p for p in _ALL_ARGS_PLUGINS if p != "DynamicResources" or features.has("dynamic-resources-args"))


ARGS_PLUGINS = args_plugins(versions.features())    # at the default version


def _funcs(plugin: str):
    if plugin in _LOCAL:
        return _LOCAL[plugin]
    module, default_name, validate_name = _IN_PLUGIN[plugin]
    mod = importlib.import_module(f"scheduler_core.plugins.{module}")
    return getattr(mod, default_name), (getattr(mod, validate_name) if validate_name else None)


def default_args(plugin: str, args, features=None) -> dict:
    """The defaulted args (a new dict) of a plugin with a registered args kind, at ``features``' version (None:
    the default version)."""
    features = versions.features(features)
    default = _funcs(plugin)[0]
    return default(args, features) if plugin in _LOCAL else default(args)


def args_validator(plugin: str, features=None):
    """validate(args, path) -> [FieldError] used by ValidateKubeSchedulerConfiguration, or None."""
    validate = _funcs(plugin)[1]
    if validate is None or plugin not in _LOCAL:
        return validate
    features = versions.features(features)
    return lambda args, path="": validate(args, path, features)


def go_unknown(raw) -> GoValue:
    """``%#v`` of the runtime.Unknown holding args of a kind that is not registered."""
    data = json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode()
    return GoValue('runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, Raw:[]uint8{'
                   + ", ".join(f"0x{b:x}" for b in data) + '}, ContentEncoding:"", ContentType:'
                   + go_quote("application/json") + "}")
