"""The scheduling framework: extension points, statuses, cycle state, NodeInfo and the runtime."""
from .cycle_state import CycleState
from .handle import Handle
from .interface import (BindPlugin, FilterPlugin, Plugin, PostBindPlugin, PostFilterPlugin, PostFilterResult,
                        PreBindPlugin, PreEnqueuePlugin, PreFilterExtensions, PreFilterPlugin, PreScorePlugin,
                        PermitPlugin, QueueSortPlugin, ReservePlugin, ScoreExtensions, ScorePlugin)
from .node_info import NodeInfo
from .profile import FrameworkError, new_framework
from .runtime import Framework
from .snapshot import ClusterObjects, Snapshot
from .status import Code, Status

__all__ = ["CycleState", "Handle", "Plugin", "PreEnqueuePlugin", "QueueSortPlugin", "PreFilterPlugin",
           "PreFilterExtensions", "FilterPlugin", "PostFilterPlugin", "PostFilterResult", "PreScorePlugin",
           "ScorePlugin", "ScoreExtensions", "ReservePlugin", "PermitPlugin", "PreBindPlugin", "BindPlugin",
           "PostBindPlugin", "NodeInfo", "Framework", "FrameworkError", "new_framework", "ClusterObjects",
           "Snapshot", "Code", "Status"]
