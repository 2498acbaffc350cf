"""Build a Framework for one profile from its plugin sets, weights and args (NewFramework)."""
from __future__ import annotations

from .handle import features_of
from .interface import (EXTENSION_POINTS, MAX_NODE_SCORE, MAX_TOTAL_SCORE, POINT_INTERFACES, PlacementScorePlugin,
                        ScorePlugin)
from .runtime import Framework

# kube's getExtensionPoints order: the order NewFramework checks the per-point lists in.
CHECK_ORDER = ("PreFilter", "Filter", "PostFilter", "Reserve", "PreScore", "Score", "PreBind", "Bind",
               "PostBind", "Permit", "PreEnqueue", "QueueSort", "PlacementGenerate", "PlacementScore")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class FrameworkError(ValueError):
    """A profile that cannot be built; the text is kube's."""


def _wrap_int64(v: int) -> int:
    return (v - INT64_MIN) % 2**64 + INT64_MIN


def _expand_multi_point(plugins: dict, point_plugins: dict, multi_point, disabled: dict, instances: dict):
    """expandMultiPointPlugins: per point, explicit overrides first, then MultiPoint, then the other
    explicitly enabled plugins; a point that disables "*" takes nothing from MultiPoint."""
    for point in CHECK_ORDER:
        iface = POINT_INTERFACES[point]
        off = set(disabled.get(point, ()))
        if "*" in off:
            continue
        enabled = [name for name, _w in point_plugins.get(point, ())]
        overrides, expanded = [], []
        for name, _w in multi_point:
            pl = instances.get(name)
            if pl is None:
                raise FrameworkError(f'{iface.__name__} "{name}" does not exist')
            if not isinstance(pl, iface) or name in off:
                continue
            if name in enabled:
                if name not in overrides:
                    overrides.append(name)
                continue
            if name in expanded:
                raise FrameworkError(f'plugin "{name}" already registered as "{iface.__name__}"')
            expanded.append(name)
        order = ([n for n in dict.fromkeys(enabled) if n in overrides] + expanded
                 + [n for n in dict.fromkeys(enabled) if n not in overrides])
        plugins[point] = [instances[n] for n in order]


def _score_weights(iface, enabled, multi_point, instances, prefix: str) -> dict:
    """getValidScoreWeights: {name: weight} of the ``iface`` plugins among the explicitly enabled ones, then
    MultiPoint's (the explicit weight wins; 0 is 1), refusing totals that could overflow."""
    weights, total = {}, 0
    for name, w in list(enabled) + list(multi_point):
        if name in weights or not isinstance(instances[name], iface):
            continue
        w = w or 1
        weights[name] = w
        if w * MAX_NODE_SCORE > _wrap_int64(MAX_TOTAL_SCORE - total):
            raise FrameworkError(prefix + "total score of Score plugins could overflow")
        total = _wrap_int64(total + w * MAX_NODE_SCORE)
    return weights


def new_framework(scheduler_name: str, point_plugins: dict, plugin_args: dict, registry, handle,
                  percentage_of_nodes_to_score=None, multi_point=(), disabled=None) -> Framework:
    """NewFramework for one profile.

    point_plugins: {extension point: [(name, weight)]} explicitly enabled per point, in order;
    multi_point: [(name, weight)] enabled through multiPoint; disabled: {extension point: [names]}
    (used by the multiPoint expansion). Without multi_point, point_plugins are the effective lists.
    """
    needed = []
    for point in EXTENSION_POINTS:
        for name, _w in point_plugins.get(point, ()):
            if name not in needed:
                needed.append(name)
    for name, _w in multi_point:
        if name not in needed:
            needed.append(name)
    instances = {}
    for name in needed:
        cls = registry.get(name)
        if cls is None:
            continue
        try:
            instances[name] = cls.new(plugin_args.get(name), handle)
        except FrameworkError as err:
            raise FrameworkError(f'initializing plugin "{name}": {err}') from None
    plugins = {}
    for point in CHECK_ORDER:
        iface = POINT_INTERFACES[point]
        lst, seen = [], set()
        for name, _w in point_plugins.get(point, ()):
            pl = instances.get(name)
            if pl is None:
                raise FrameworkError(f'{iface.__name__} "{name}" does not exist')
            if not isinstance(pl, iface):
                raise FrameworkError(f'plugin "{name}" does not extend {iface.__name__} plugin')
            if name in seen:
                raise FrameworkError(f'plugin "{name}" already registered as "{iface.__name__}"')
            seen.add(name)
            lst.append(pl)
        plugins[point] = lst
    if multi_point:
        _expand_multi_point(plugins, point_plugins, multi_point, disabled or {}, instances)
    if len(plugins["QueueSort"]) != 1:
        raise FrameworkError(f'only one queue sort plugin required for profile with scheduler name '
                             f'"{scheduler_name}", but got {len(plugins["QueueSort"])}')
    if not plugins["Bind"]:
        raise FrameworkError(f'at least one bind plugin is needed for profile with scheduler name "{scheduler_name}"')
    if len(plugins["PlacementGenerate"]) > 1:
        raise FrameworkError(f'at most one placement generate plugin is allowed for profile with scheduler name '
                             f'"{scheduler_name}"')
    prefix = "score plugins: " if features_of(handle).has("score-weights-error-prefix") else ""
    weights = _score_weights(ScorePlugin, point_plugins.get("Score", ()), multi_point, instances, prefix)
    placement_weights = _score_weights(PlacementScorePlugin, point_plugins.get("PlacementScore", ()), multi_point,
                                       instances, "placement score plugins: ")
    fwk = Framework(scheduler_name, plugins, weights, handle, percentage_of_nodes_to_score, plugin_args,
                    placement_weights)
    if handle is not None and handle.framework is None:
        handle.framework = fwk
    return fwk
