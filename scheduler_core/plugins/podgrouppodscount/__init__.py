"""PodGroupPodsCount (framework/plugins/podgrouppodscount, 1.36 alpha, TopologyAwareWorkloadScheduling): a
PlacementScore plugin that favours the placements where more pods of the group are scheduled (those already
scheduled and those the placement's cycle proposed), normalized by the largest count."""
from __future__ import annotations

from ...framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, PlacementScoreExtensions, PlacementScorePlugin
from ...framework.podgroup_state import PodGroupStateError
from ...framework.status import Status
from .. import names


class PodGroupPodsCount(PlacementScorePlugin, PlacementScoreExtensions):
    name = names.POD_GROUP_PODS_COUNT

    def __init__(self, handle=None):
        self.handle = handle

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def score_placement(self, state, pod_group, assignments):
        try:
            group_state = self.handle.pod_group_states.get(*pod_group)
        except PodGroupStateError as err:
            return 0, Status.error(str(err))
        return group_state.scheduled_pods_count() + len(assignments.proposed), None

    def placement_score_extensions(self):
        return self

    def normalize_placement_score(self, state, pod_group, scores):
        most = max((s for _p, s in scores), default=0)
        if most == 0:
            return Status.error("no pods from pod group are assigned to any of the candidate placements")
        for pair in scores:
            pair[1] = MIN_NODE_SCORE + pair[1] * (MAX_NODE_SCORE - MIN_NODE_SCORE) // most
        return None
