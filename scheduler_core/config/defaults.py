"""Defaults of KubeSchedulerConfiguration v1 (apis/config/v1/default_plugins.go, defaults.go)."""
from __future__ import annotations

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# The v1.30 default MultiPoint list, in order, with score weights.
DEFAULT_MULTIPOINT = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("EBSLimits", 0), ("GCEPDLimits", 0), ("NodeVolumeLimits", 0),
    ("AzureDiskLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0), ("PodTopologySpread", 2),
    ("InterPodAffinity", 2), ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1), ("DefaultBinder", 0),
)
