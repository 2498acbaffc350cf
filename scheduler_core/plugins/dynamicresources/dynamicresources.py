"""The DynamicResources plugin (dynamicresources.go): PreFilter reads the pod's claims into the cycle state; a pod
without claims is skipped by Filter, scores 0 on every node and, when it does not fit, gets the PostFilter text
"no new claims to deallocate". Weight 2 in the default profile from 1.34 (DynamicResourceAllocation GA)."""
from __future__ import annotations

import numpy as np

from ...framework.handle import features_of
from ...framework.interface import (MAX_NODE_SCORE, FilterPlugin, PostFilterPlugin, PreBindPlugin,
                                    PreEnqueuePlugin, PreFilterPlugin, ReservePlugin, ScoreExtensions, ScorePlugin)
from ...framework.status import Code, Status
from ..helper import default_normalize_score, default_normalize_score_array
from .. import names
from .claims import ClaimStore

STATE_KEY = names.DYNAMIC_RESOURCES
NOT_FOUND = "not found"   # fwk.ErrNotFound: CycleState.Read of a key no PreFilter wrote


class StateData:
    """stateData: the pod's claims (empty for a pod without claims), shared by clones of the cycle state."""

    __slots__ = ("claims",)

    def __init__(self, claims: ClaimStore):
        self.claims = claims

    def clone(self):
        return self


def _state(state):
    """getStateData: the PreFilter state, or None when PreFilter did not run (an earlier PreFilter rejected)."""
    return state.get(STATE_KEY)


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, ScorePlugin,
                       ScoreExtensions, ReservePlugin, PreBindPlugin):
    name = names.DYNAMIC_RESOURCES

    def __init__(self, enabled: bool, features=None):
        self.enabled = enabled
        self.features = features

    @classmethod
    def new(cls, args, handle):
        """New: a disabled plugin (every extension point a no-op) without the DynamicResourceAllocation gate."""
        features = features_of(handle)
        if not features.enabled("DynamicResourceAllocation"):
            return cls(False)
        return cls(True, features)

    def events_to_register(self):
        if not self.enabled:
            return ()
        return (("Node", ("Add", "UpdateNodeLabel", "UpdateNodeAllocatable")),
                ("ResourceClaim", ("Add", "Update")), ("DeviceClass", ("Add", "Update")),
                ("ResourceSlice", ("Add", "Update")))

    # -- PreEnqueue, PreFilter, Filter, PostFilter -------------------------------------------
    def pre_enqueue(self, pod):
        return None

    def pre_filter(self, state, pod):
        if not self.enabled:
            return None, Status(Code.SKIP)
        if (pod.raw.get("spec") or {}).get("resourceClaims"):
            state.write(STATE_KEY, StateData(ClaimStore()))
            return None, Status.error(f"pod {pod.key} has ResourceClaims: allocating ResourceClaims is not "
                                      f"implemented")
        state.write(STATE_KEY, StateData(ClaimStore()))
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self):
        return None

    def filter(self, state, pod, node_info):
        if not self.enabled:
            return None
        s = _state(state)
        if s is None:
            return Status.error(NOT_FOUND)
        return None

    def post_filter(self, state, pod, node_statuses):
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE, "plugin disabled")
        s = _state(state)
        if s is None:
            return None, Status.error(NOT_FOUND)
        if s.claims.empty():
            return None, Status(Code.UNSCHEDULABLE, "no new claims to deallocate")
        return None, Status(Code.UNSCHEDULABLE, "still not schedulable")

    # -- Score --------------------------------------------------------------------------------
    def score(self, state, pod, node_info):
        if not self.enabled or not self.features.enabled("DRAPrioritizedList"):
            return 0, None
        s = _state(state)
        if s is None:
            return 0, Status.error(NOT_FOUND)
        return 0, None

    def score_batch(self, state, pod, table, rows):
        """A pod without claims scores 0 on every node."""
        s = _state(state) if self.enabled else None
        if self.enabled and (s is None or not s.claims.empty()):
            return None
        return np.zeros(len(rows), np.int64)

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        if not self.enabled:
            return None
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_score_batch(self, state, pod, scores):
        if not self.enabled:
            return scores
        return default_normalize_score_array(MAX_NODE_SCORE, False, scores)

    # -- Reserve, Unreserve, PreBind ----------------------------------------------------------
    def reserve(self, state, pod, node_name):
        if not self.enabled:
            return None
        if _state(state) is None:
            return Status.error(NOT_FOUND)
        return None

    def unreserve(self, state, pod, node_name):
        return None

    def pre_bind(self, state, pod, node_name):
        if not self.enabled:
            return None
        if _state(state) is None:
            return Status.error(NOT_FOUND)
        return None
