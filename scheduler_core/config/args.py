"""Plugin args of kubescheduler.config.k8s.io/v1: defaulting (SetDefaults_<Kind>) and validation.

Args are dicts in the v1 JSON shape. NodeResourcesFit, InterPodAffinity and PodTopologySpread keep their
defaulting and validation next to their plugin; they are looked up lazily (the plugins import this
package). The other kinds are defined here.
"""
from __future__ import annotations

import importlib
import json

from ..objects.field import GoValue, child, duplicate, go_quote, invalid
from ..objects.selectors import is_empty_term, node_selector_term_errors

DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})


# -- DefaultPreemption --------------------------------------------------------------------------------
def default_preemption_args(args) -> dict:
    """SetDefaults_DefaultPreemptionArgs: 10% and 100 candidate nodes."""
    out = dict(args or {})
    out.setdefault("minCandidateNodesPercentage", 10)
    out.setdefault("minCandidateNodesAbsolute", 100)
    return out


def validate_default_preemption_args(args: dict, path: str = "") -> list:
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
def default_balanced_allocation_args(args) -> dict:
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


def validate_balanced_allocation_args(args: dict, path: str = "") -> list:
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
def default_volume_binding_args(args) -> dict:
    """SetDefaults_VolumeBindingArgs: 600 s bind timeout (no shape: VolumeCapacityPriority is off)."""
    out = dict(args or {})
    out.setdefault("bindTimeoutSeconds", 600)
    return out


def _shape_value(shape) -> GoValue:
    points = ", ".join(f"config.UtilizationShapePoint{{Utilization:{p.get('utilization', 0)}, "
                       f"Score:{p.get('score', 0)}}}" for p in shape)
    return GoValue("[]config.UtilizationShapePoint{" + points + "}")


def validate_volume_binding_args(args: dict, path: str = "") -> list:
    """ValidateVolumeBindingArgs with the VolumeCapacityPriority gate off."""
    errs = []
    timeout = args.get("bindTimeoutSeconds", 0)
    if timeout < 0:
        errs.append(invalid(child(path, "bindTimeoutSeconds"), timeout,
                            "invalid BindTimeoutSeconds, should not be a negative value"))
    if args.get("shape") is not None:
        errs.append(invalid(child(path, "shape"), _shape_value(args["shape"]),
                            "unexpected field `shape`, remove it or turn on the feature gate VolumeCapacityPriority"))
    return errs


# -- NodeAffinity -------------------------------------------------------------------------------------
def validate_node_affinity_args(args: dict, path: str = "") -> list:
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
def _identity(args) -> dict:
    return dict(args or {})


_LOCAL = {
    "DefaultPreemption": (default_preemption_args, validate_default_preemption_args),
    "NodeAffinity": (_identity, validate_node_affinity_args),
    "NodeResourcesBalancedAllocation": (default_balanced_allocation_args, validate_balanced_allocation_args),
    "VolumeBinding": (default_volume_binding_args, validate_volume_binding_args),
}
# Plugins that define SetDefaults/Validate of their own args: (module, defaults, validation or None).
# NodeResourcesFitArgs are not validated with the configuration in v1.30 (validation.go registers the
# validator under the key "NodeResourcesFitArgs"); the plugin checks them when it is built.
_IN_PLUGIN = {
    "InterPodAffinity": ("interpodaffinity", "default_args", "validate_args"),
    "NodeResourcesFit": ("noderesources.fit", "default_fit_args", None),
    "PodTopologySpread": ("podtopologyspread", "default_args", "validate_args"),
}
ARGS_PLUGINS = tuple(sorted((*_LOCAL, *_IN_PLUGIN)))


def _funcs(plugin: str):
    if plugin in _LOCAL:
        return _LOCAL[plugin]
    module, default_name, validate_name = _IN_PLUGIN[plugin]
    mod = importlib.import_module(f"scheduler_core.plugins.{module}")
    return getattr(mod, default_name), (getattr(mod, validate_name) if validate_name else None)


def default_args(plugin: str, args) -> dict:
    """The defaulted args (a new dict) of a plugin with a registered args kind."""
    return _funcs(plugin)[0](args)


def args_validator(plugin: str):
    """validate(args, path) -> [FieldError] used by ValidateKubeSchedulerConfiguration, or None."""
    return _funcs(plugin)[1]


def go_unknown(raw) -> GoValue:
    """``%#v`` of the runtime.Unknown holding args of a kind that is not registered."""
    data = json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode()
    return GoValue('runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, Raw:[]uint8{'
                   + ", ".join(f"0x{b:x}" for b in data) + '}, ContentEncoding:"", ContentType:'
                   + go_quote("application/json") + "}")
