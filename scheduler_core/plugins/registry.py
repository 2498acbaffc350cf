"""Plugin registries: name -> plugin class (framework/plugins/registry.go, plus out-of-tree plugins).

Out-of-tree plugins come from the ``scheduler_core.plugins`` entry-point group (name = "module:Class")
and from "module:Class" paths given to ``build_registry`` (the CLI's ``--plugin``). They are registered
wrapped by framework.guard, which turns their exceptions and over-long calls into Error statuses.
"""
from __future__ import annotations

import importlib
import importlib.metadata

from ..framework.guard import DEFAULT_CALL_TIMEOUT, guard_class
from ..framework.interface import Plugin, extension_points_of

ENTRY_POINT_GROUP = "scheduler_core.plugins"

# (plugin name, module under scheduler_core.plugins, class name)
IN_TREE = (
    ("SchedulingGates", "schedulinggates", "SchedulingGates"),
    ("PrioritySort", "queuesort", "PrioritySort"),
    ("NodeUnschedulable", "nodeunschedulable", "NodeUnschedulable"),
    ("NodeName", "nodename", "NodeName"),
    ("TaintToleration", "tainttoleration", "TaintToleration"),
    ("NodeAffinity", "nodeaffinity", "NodeAffinity"),
    ("NodePorts", "nodeports", "NodePorts"),
    ("NodeResourcesFit", "noderesources", "Fit"),
    ("VolumeRestrictions", "volumerestrictions", "VolumeRestrictions"),
    ("EBSLimits", "nodevolumelimits", "EBSLimits"),
    ("GCEPDLimits", "nodevolumelimits", "GCEPDLimits"),
    ("NodeVolumeLimits", "nodevolumelimits", "CSILimits"),
    ("AzureDiskLimits", "nodevolumelimits", "AzureDiskLimits"),
    ("CinderLimits", "nodevolumelimits", "CinderLimits"),
    ("VolumeBinding", "volumebinding", "VolumeBinding"),
    ("VolumeZone", "volumezone", "VolumeZone"),
    ("PodTopologySpread", "podtopologyspread", "PodTopologySpread"),
    ("InterPodAffinity", "interpodaffinity", "InterPodAffinity"),
    ("DynamicResources", "dynamicresources", "DynamicResources"),
    ("DefaultPreemption", "defaultpreemption", "DefaultPreemption"),
    ("NodeResourcesBalancedAllocation", "noderesources", "BalancedAllocation"),
    ("ImageLocality", "imagelocality", "ImageLocality"),
    ("DefaultBinder", "defaultbinder", "DefaultBinder"),
    ("NodeDeclaredFeatures", "nodedeclaredfeatures", "NodeDeclaredFeatures"),
    ("GangScheduling", "gangscheduling", "GangScheduling"),
    ("TopologyPlacementGenerator", "topologyaware", "TopologyPlacementGenerator"),
    ("PodGroupPodsCount", "podgrouppodscount", "PodGroupPodsCount"),
)
# In-tree plugins whose type changes with a version's named difference (CHANGES): (plugin name, change, module,
# class name from that version on).
IN_TREE_CHANGED = (
    ("DefaultPreemption", "preemption-executor", "defaultpreemption", "PreEnqueueDefaultPreemption"),
)


def _in_tree_class(module: str, cls_name: str):
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls_name)


def in_tree_registry() -> dict:
    """{name: plugin class} for every in-tree plugin."""
    out = {}
    for name, module, cls_name in IN_TREE:
        full = f"{__package__}.{module}"
        try:
            mod = importlib.import_module(full)
        except ModuleNotFoundError as err:
            if err.name == full:  # plugin package not written yet (development only)
                continue
            raise
        cls = getattr(mod, cls_name, None)
        if cls is not None:
            out[name] = cls
    return out


class PluginLoadError(ValueError):
    """An out-of-tree plugin that cannot be registered; the text names its path or entry point."""


def load_plugin_class(path: str):
    """Import "module:Class" (or "module.Class") and return the class, checked to be a plugin."""
    if not isinstance(path, str) or not path.strip():
        raise PluginLoadError(f"plugin path {path!r}: expected \"module:Class\"")
    module, sep, attr = path.strip().partition(":")
    if not sep:
        module, _, attr = module.rpartition(".")
    if not module or not attr:
        raise PluginLoadError(f'plugin path "{path}": expected "module:Class"')
    try:
        obj = importlib.import_module(module)
    except Exception as err:
        raise PluginLoadError(f'plugin path "{path}": cannot import module "{module}": '
                              f"{type(err).__name__}: {err}") from err
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginLoadError(f'plugin path "{path}": module "{module}" has no attribute "{attr}"') from None
    _check_plugin_class(obj, f'plugin path "{path}"')
    return obj


def _check_plugin_class(cls, where: str) -> None:
    if not isinstance(cls, type) or not issubclass(cls, Plugin):
        raise PluginLoadError(f"{where}: {cls!r} is not a class deriving from "
                              f"scheduler_core.framework.interface.Plugin")
    if not extension_points_of(cls):
        raise PluginLoadError(f"{where}: {cls.__name__} implements no extension point "
                              f"(derive from e.g. FilterPlugin or ScorePlugin)")


def _origin(cls) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def entry_point_plugins() -> list:
    """[(name, class, origin)] for the ``scheduler_core.plugins`` entry points, loaded."""
    out = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        where = f'entry point "{ep.name}" ({ep.value})'
        try:
            cls = ep.load()
        except Exception as err:
            raise PluginLoadError(f"{where}: cannot load: {type(err).__name__}: {err}") from err
        _check_plugin_class(cls, where)
        if cls.name and cls.name != ep.name:
            raise PluginLoadError(f'{where}: the class is named "{cls.name}"; the entry point must use that name')
        out.append((ep.name, cls, where))
    return out


def build_registry(extra=(), call_timeout=DEFAULT_CALL_TIMEOUT) -> dict:
    """The in-tree plugins, plus entry-point plugins, plus ``extra`` (plugin classes or "module:Class"
    paths). Out-of-tree plugins are wrapped so each call has a ``call_timeout`` budget in seconds (falsy:
    none). A name already registered (in-tree, or by another class) is a PluginLoadError."""
    registry = in_tree_registry()
    in_tree = set(registry)
    seen = {}
    found = entry_point_plugins()
    for item in extra:
        if isinstance(item, str):
            cls = load_plugin_class(item)
            where = f'plugin path "{item}"'
        else:
            where = f'plugin class "{_origin(item) if isinstance(item, type) else item!r}"'
            _check_plugin_class(item, where)
            cls = item
        found.append((cls.name or cls.__name__, cls, where))
    for name, cls, where in found:
        if name in in_tree:
            raise PluginLoadError(f'{where}: a plugin named "{name}" already exists in-tree; '
                                  f"out-of-tree plugins need their own names")
        if name in seen:
            if seen[name][0] is cls:
                continue
            raise PluginLoadError(f'{where}: a plugin named "{name}" already exists ({seen[name][1]})')
        seen[name] = (cls, where)
        registry[name] = guard_class(name, cls, _origin(cls), call_timeout)
    return registry


IN_TREE_NAMES = frozenset(name for name, _module, _cls in IN_TREE)


def registry_at(registry: dict, features) -> dict:
    """``registry`` with the in-tree plugins of ``features``' version only, in their type at that version
    (IN_TREE_CHANGED); out-of-tree plugins kept."""
    present = features.version.in_tree_plugins
    out = {name: cls for name, cls in registry.items() if name not in IN_TREE_NAMES or name in present}
    for name, change, module, cls_name in IN_TREE_CHANGED:
        base = next(c for n, _m, c in IN_TREE if n == name)
        if features.has(change) and out.get(name) is _in_tree_class(module, base):
            out[name] = _in_tree_class(module, cls_name)
    return out
