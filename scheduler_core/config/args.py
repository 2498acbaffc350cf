"""Plugin args of kubescheduler.config.k8s.io/v1: defaulting (SetDefaults_<Kind>) and validation.

Args are dicts in the v1 JSON shape. NodeResourcesFit, InterPodAffinity and PodTopologySpread keep their
defaulting and validation next to their plugin; they are looked up lazily (the plugins import this
package). The other kinds are defined here.
"""
from __future__ import annotations

import importlib
import json
import re

from ..objects.field import GoValue, child, duplicate, go_quote, go_string_slice, invalid, not_supported
from ..objects.identifiers import is_qualified_name, is_valid_label_value

DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
_NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_SELECTOR_OPERATORS = ("In", "NotIn")
_GO_INT = re.compile(r"[+-]?[0-9]+")


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
def _label_requirement_errors(expr: dict, op: str, p: str) -> list:
    """labels.NewRequirement's checks of one node selector expression."""
    errs = []
    key = expr.get("key", "")
    values = expr.get("values")
    vals = values or []
    msgs = is_qualified_name(key)
    if msgs:
        errs.append(invalid(f"{p}.key", key, "; ".join(msgs)))
    vpath = f"{p}.values"
    if op in ("In", "NotIn"):
        if not vals:
            errs.append(invalid(vpath, go_string_slice(values),
                                "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist"):
        if vals:
            errs.append(invalid(vpath, go_string_slice(values),
                                "values set must be empty for exists and does not exist"))
    else:
        if len(vals) != 1:
            errs.append(invalid(vpath, go_string_slice(values),
                                "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if not _GO_INT.fullmatch(v) or not -(2**63) <= int(v) < 2**63:
                errs.append(invalid(f"{vpath}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(vals):
        msgs = is_valid_label_value(v)
        if msgs:
            errs.append(invalid(f"{vpath}[{i}][{key}]", v, "; ".join(msgs)))
    return errs


def _node_selector_term_errors(term: dict, path: str) -> list:
    """newNodeSelectorTerm's parse errors (matchExpressions as labels, matchFields as fields)."""
    errs = []
    for i, expr in enumerate(term.get("matchExpressions") or ()):
        p = f"{path}.matchExpressions[{i}]"
        op = expr.get("operator", "")
        if op not in _NODE_SELECTOR_OPERATORS:
            errs.append(not_supported(f"{p}.operator", op, _NODE_SELECTOR_OPERATORS))
            continue
        errs.extend(_label_requirement_errors(expr, op, p))
    for i, expr in enumerate(term.get("matchFields") or ()):
        p = f"{path}.matchFields[{i}]"
        op = expr.get("operator", "")
        if op not in _FIELD_SELECTOR_OPERATORS:
            errs.append(not_supported(f"{p}.operator", op, _FIELD_SELECTOR_OPERATORS))
        elif len(expr.get("values") or ()) != 1:
            errs.append(invalid(f"{p}.values", go_string_slice(expr.get("values")), "must have one element"))
    return errs


def _is_empty_term(term: dict) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


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
            if not _is_empty_term(term):
                errs.extend(_node_selector_term_errors(term, f"{rpath}[{i}]"))
    ppath = child(path, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        term = pref.get("preference") or {}
        if pref.get("weight", 0) == 0 or _is_empty_term(term):
            continue
        errs.extend(_node_selector_term_errors(term, f"{ppath}[{i}]"))
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
