"""A KubeSchedulerConfiguration as the profile editor shows it, and the document written back from it.

``describe`` reads a document the way kube-scheduler does (scheduler_core.config: strict decoding, kube's
defaulting, the multiPoint expansion of NewFramework) and gives, per profile and extension point, the plugins in
the order they run with their weights, next to kube's defaults, at a Kubernetes version and its feature gates
(versions.Features: a profile's version). ``write_point`` and ``write_args`` turn the
editor's choices back into the few lines kube users write: per-point ``disabled``/``enabled`` lists (``"*"`` only
when an order cannot be had otherwise) and ``pluginConfig`` args holding only what defaulting would not fill in.
Every order written is checked by building the framework again.
"""
from __future__ import annotations

import copy
from functools import lru_cache

from scheduler_core import versions
from scheduler_core.config import PLACEMENT_SET_POINTS, SET_POINTS, ProfileConfig, defaulted_config
from scheduler_core.config.args import default_args
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import extension_points_of
from scheduler_core.framework.profile import FrameworkError, new_framework
from scheduler_core.plugins.registry import in_tree_registry, registry_at

from .validate import registry

SETS = tuple(SET_POINTS)          # the per-point plugin sets of a v1 profile, in kube's field order
WEIGHTED = "score"
API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
ZERO_WEIGHT_NOTE = "kube runs a weight of 0 as 1"
NEGATIVE_WEIGHT_NOTE = "negative: kube's overflow check refuses it unless no Score plugin is weighed after it"


def defaulted_raw(doc: dict, features) -> dict:
    """The document after kube's defaulting at ``features`` (every field set)."""
    return defaulted_config(doc, registry(), kube_version=features).raw


def weight_note(weight) -> str:
    """What kube does with a Score weight that looks odd. ValidateKubeSchedulerConfiguration checks no plugin
    weight; NewFramework runs 0 as 1, and its overflow check refuses a negative weight unless no Score plugin is
    weighed after it (the int64 sum wraps), which the framework build reports as an error."""
    if weight == 0:
        return ZERO_WEIGHT_NOTE
    if weight is not None and weight < 0:
        return NEGATIVE_WEIGHT_NOTE
    return ""


class Row:
    """One plugin at one extension point: whether it runs there, its configured and running Score weight, and
    kube's default for both."""

    def __init__(self, name, on, weight, runs_weight, default_on, default_weight, in_tree):
        self.name, self.on, self.weight, self.runs_weight = name, on, weight, runs_weight
        self.default_on, self.default_weight, self.in_tree = default_on, default_weight, in_tree

    @property
    def changed(self) -> bool:
        return self.on != self.default_on or (self.on and self.default_weight is not None
                                               and self.weight != self.default_weight)


class Point:
    """An extension point of a profile: its rows (running ones in their order, the others where they would
    run) and the registered plugins that could be added."""

    def __init__(self, set_name, rows, addable, order_changed):
        self.set_name, self.rows, self.addable, self.order_changed = set_name, rows, addable, order_changed
        self.weighted = set_name == WEIGHTED

    @property
    def running(self) -> list:
        return [r.name for r in self.rows if r.on]


class ProfileView:
    """One profile of the document: its points, and the args of its plugins that have an args kind (defaulted)
    with kube's defaults."""

    def __init__(self, index, scheduler_name, percentage, points, args, expansion, e_weights, features):
        self.index, self.scheduler_name, self.percentage = index, scheduler_name, percentage
        self.points, self.args, self.expansion, self.e_weights = points, args, expansion, e_weights
        self.features = features

    def point(self, set_name) -> Point:
        return next(p for p in self.points if p.set_name == set_name)


def _structure(prof: ProfileConfig, features, point_plugins=None, disabled=None):
    """The framework of ``prof``'s plugin sets only (args left to their defaults) at ``features``: its per-point
    names and Score weights. FrameworkError when kube would not build it."""
    handle = Handle(snapshot=None)
    handle.features = features
    fwk = new_framework(prof.scheduler_name, prof.point_plugins if point_plugins is None else point_plugins, {},
                        registry_at(registry(), features), handle, None, prof.multi_point,
                        prof.disabled if disabled is None else disabled)
    return {s: [p.name for p in fwk.plugins[point]] for s, point in SET_POINTS.items()}, fwk.score_weights


def _raw_weights(prof: ProfileConfig) -> dict:
    """The configured Score weight per plugin, as NewFramework picks it: the score set's entry, else multiPoint's."""
    out = {}
    for name, weight in list(prof.point_plugins.get("Score", ())) + list(prof.multi_point):
        out.setdefault(name, weight)
    return out


@lru_cache(maxsize=8)
def kube_defaults(features):
    """kube's default profile at ``features``: ({set: [names]}, {name: weight}, {plugin: defaulted args})."""
    prof = defaulted_config(API, registry(), kube_version=features).profiles[0]
    lists, _ = _structure(prof, features)
    return lists, _raw_weights(prof), {n: a for n, a in prof.plugin_args.items() if a is not None}


@lru_cache(maxsize=8)
def _points_of(features) -> dict:
    """{plugin name: the v1 set names it implements} for every plugin registered at ``features``' version (the
    workload-scheduling sets placementGenerate and placementScore included, which the form leaves to the YAML)."""
    inverse = {point: s for s, point in {**SET_POINTS, **PLACEMENT_SET_POINTS}.items()}
    return {name: {inverse[p] for p in extension_points_of(cls)}
            for name, cls in registry_at(registry(), features).items()}


def _interleave(on: list, candidates: list) -> list:
    """``on`` in its order, each other candidate placed before the next candidate (in candidate order) that is on."""
    out = list(on)
    for k, name in enumerate(candidates):
        if name in out:
            continue
        after = next((c for c in candidates[k + 1:] if c in out), None)
        out.insert(out.index(after) if after is not None else len(out), name)
    return out


def _expansion(prof: ProfileConfig, features) -> tuple:
    """Per set, the plugins multiPoint puts there when the set itself is left empty, and multiPoint's weights."""
    lists, _ = _structure(prof, features, point_plugins={}, disabled={})
    return lists, dict(prof.multi_point)


def describe(doc: dict, features=None) -> list:
    """[ProfileView] of ``doc`` at ``features`` (versions.Features; None: the default version). Raises ConfigError
    (decode) or FrameworkError (plugin sets kube cannot build)."""
    features = versions.features(features)
    config = defaulted_config(doc, registry(), kube_version=features)
    k_lists, k_weights, k_args = kube_defaults(features)
    in_tree, points_of = set(in_tree_registry()), _points_of(features)
    out = []
    for i, prof in enumerate(config.profiles):
        try:
            lists, runs = _structure(prof, features)
            e_lists, e_weights = _expansion(prof, features)
        except FrameworkError as err:
            raise FrameworkError(f"creating profile for scheduler name {prof.scheduler_name}: {err}") from None
        raw = _raw_weights(prof)
        points = []
        for s in SETS:
            candidates = e_lists[s] + [n for n in k_lists[s] if n not in e_lists[s]]
            rows = []
            for name in _interleave(lists[s], candidates):
                on = name in lists[s]
                weight = None
                if s == WEIGHTED:
                    weight = raw.get(name) if on else e_weights.get(name, k_weights.get(name))
                rows.append(Row(name, on, weight, runs.get(name) if on and s == WEIGHTED else None,
                                name in k_lists[s], k_weights.get(name) if s == WEIGHTED and name in k_lists[s]
                                else None, name in in_tree))
            shown = {r.name for r in rows}
            addable = sorted(n for n, sets in points_of.items() if s in sets and n not in shown)
            kept = [n for n in lists[s] if n in k_lists[s]]
            order_changed = s != WEIGHTED and kept != [n for n in k_lists[s] if n in kept]   # Score: a sum
            points.append(Point(s, rows, addable, order_changed))
        running = {n for s in SETS for n in lists[s]}
        args = {name: (prof.plugin_args.get(name) or {}, default) for name, default in sorted(k_args.items())
                if name in running}
        out.append(ProfileView(i, prof.scheduler_name, prof.percentage_of_nodes_to_score, points, args,
                               e_lists, e_weights, features))
    return out


# -- writing ----------------------------------------------------------------------------------------------
def profile_of(doc: dict, i: int) -> dict:
    """Profile ``i`` of ``doc`` (created, with the ones before it, when missing)."""
    profiles = doc.setdefault("profiles", [])
    while len(profiles) <= i:
        profiles.append({})
    return profiles[i]


def _entry(name, weight, weighted) -> dict:
    return {"name": name, "weight": weight} if weighted and weight is not None else {"name": name}


def _minimal_set(chosen, weights, expansion, e_weights, weighted, keep_order):
    """The per-point set with the fewest entries whose expansion runs ``chosen`` (in that order when
    ``keep_order``): the multiPoint plugins not chosen disabled, the others enabled; a plugin whose weight
    differs from multiPoint's is enabled (kube then runs it first, NewFramework's "override" part). None when
    no such set keeps the order."""
    extra = [n for n in chosen if n not in expansion]
    disabled = [{"name": n} for n in expansion if n not in chosen]
    reweighted = [n for n in chosen if weighted and n in expansion and weights[n] != e_weights.get(n)]
    firsts = [reweighted] if not keep_order else [chosen[:k] for k in range(len(chosen) + 1)]
    for first in firsts:
        if any(n in extra for n in first) or not set(reweighted) <= set(first):
            continue
        runs = first + [n for n in expansion if n in chosen and n not in first] + extra
        if keep_order and runs != chosen:
            continue
        enabled = [_entry(n, weights[n], weighted) for n in first + extra]
        return {k: v for k, v in (("enabled", enabled), ("disabled", disabled)) if v}
    return None


def write_point(doc: dict, view: ProfileView, set_name: str, chosen: list, weights: dict, keep_order: bool) -> None:
    """Write profile ``view.index``'s ``set_name`` so that kube runs ``chosen`` there (in that order when
    ``keep_order``; Score order never changes a result) with ``weights`` ({name: configured weight or None: as
    multiPoint, else kube's default})."""
    weighted = set_name == WEIGHTED
    expansion = view.expansion[set_name]
    defaults = {r.name: r.default_weight for r in view.point(set_name).rows}
    weights = {n: weights[n] if weights.get(n) is not None else view.e_weights.get(n, defaults.get(n))
               for n in chosen}
    new = _minimal_set(chosen, weights, expansion, view.e_weights, weighted, keep_order)
    if new is not None and keep_order and not _runs_as(doc, view.index, set_name, new, chosen, view.features):
        new = None
    if new is None:
        new = {"enabled": [_entry(n, weights[n], weighted) for n in chosen], "disabled": [{"name": "*"}]}
    prof = profile_of(doc, view.index)
    plugins = prof.setdefault("plugins", {})
    if new:
        plugins[set_name] = new
    else:
        plugins.pop(set_name, None)
    if not plugins:
        prof.pop("plugins")


def _runs_as(doc, i, set_name, new_set, chosen, features) -> bool:
    """Whether kube, given ``new_set`` for the set, runs ``chosen`` there in that order (the framework built)."""
    trial = copy.deepcopy(doc)
    prof = profile_of(trial, i)
    prof.pop("pluginConfig", None)
    prof.setdefault("plugins", {})[set_name] = new_set
    try:
        lists, _ = _structure(defaulted_config(trial, registry(), kube_version=features).profiles[i], features)
    except (FrameworkError, ValueError):
        return False
    return lists[set_name] == chosen


def _get(d, path):
    for key in path.split("."):
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _put(d, path, value):
    """Set ``path`` in ``d`` (None or "" removes it, and the dicts it leaves empty)."""
    head, _, rest = path.partition(".")
    if rest:
        inner = copy.deepcopy(d.get(head)) if isinstance(d.get(head), dict) else {}
        _put(inner, rest, value)
        if inner:
            d[head] = inner
        else:
            d.pop(head, None)
    elif value is None or value == "":
        d.pop(head, None)
    else:
        d[head] = value


def arg_value(args: dict, path: str):
    """The value at a dotted path of args (None when absent)."""
    return _get(args, path)


def minimal_args(plugin: str, args: dict, features) -> dict:
    """The smallest args kube's defaulting at ``features`` turns into the same args as ``args``: what a kube user
    writes."""
    target = default_args(plugin, copy.deepcopy(args), features)
    out = copy.deepcopy(args)

    def shrink(d):
        for key in list(d):
            value = d.pop(key)
            if default_args(plugin, copy.deepcopy(out), features) == target:
                continue
            d[key] = value
            if isinstance(value, dict):
                shrink(value)
                if not value:
                    d.pop(key)
    shrink(out)
    return out


def write_args(doc: dict, i: int, plugin: str, values: dict, features) -> None:
    """Profile ``i``'s pluginConfig entry of ``plugin`` with ``values`` ({dotted path: value}) set in its args,
    reduced to what differs from kube's defaulting at ``features`` (the entry removed when nothing does)."""
    prof = profile_of(doc, i)
    configs = prof.get("pluginConfig") if isinstance(prof.get("pluginConfig"), list) else []
    k = next((j for j, pc in enumerate(configs) if isinstance(pc, dict) and pc.get("name") == plugin), None)
    args = copy.deepcopy(configs[k].get("args") or {}) if k is not None else {}
    for path, value in values.items():
        _put(args, path, value)
    args = minimal_args(plugin, args, features)
    if args and k is not None:
        configs[k] = {**configs[k], "args": args}
    elif args:
        prof["pluginConfig"] = configs + [{"name": plugin, "args": args}]
    elif k is not None:
        del configs[k]
        if not configs:
            prof.pop("pluginConfig")
