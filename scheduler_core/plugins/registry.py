"""The in-tree registry: plugin name -> plugin class (framework/plugins/registry.go)."""
from __future__ import annotations

import importlib

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
    ("VolumeBinding", "volumebinding", "VolumeBinding"),
    ("VolumeZone", "volumezone", "VolumeZone"),
    ("PodTopologySpread", "podtopologyspread", "PodTopologySpread"),
    ("InterPodAffinity", "interpodaffinity", "InterPodAffinity"),
    ("DefaultPreemption", "defaultpreemption", "DefaultPreemption"),
    ("NodeResourcesBalancedAllocation", "noderesources", "BalancedAllocation"),
    ("ImageLocality", "imagelocality", "ImageLocality"),
    ("DefaultBinder", "defaultbinder", "DefaultBinder"),
)


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
