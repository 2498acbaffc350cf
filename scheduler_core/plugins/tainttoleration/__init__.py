"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""
import numpy as np

from ...framework.interface import (
    QUEUE,
    QUEUE_SKIP,
    FilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from ...framework.handle import features_of, queueing_hints_of
from ...framework.status import Code, Status
from ...framework import signers
from .. import names
from ..helper import (
    default_normalize_score,
    default_normalize_score_array,
    find_untolerated_taint,
)

PRE_SCORE_KEY = "PreScore" + names.TAINT_TOLERATION


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions):
    name = names.TAINT_TOLERATION
    filter_depends_on = "node"

    def __init__(self, generic_message: bool = False, queueing_hints: bool = False):
        self.generic_message = generic_message
        self.queueing_hints = queueing_hints

    @classmethod
    def new(cls, args, handle):
        return cls(features_of(handle).has("untolerated-taints-message"), queueing_hints_of(handle))

    def filter(self, state, pod, node_info):
        taint = find_untolerated_taint(node_info.node.taints, pod.tolerations)
        if taint is None:
            return None
        reason = "node(s) had untolerated taint(s)" if self.generic_message else \
            f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)

    def filter_batch(self, state, pod, table, rows):
        """Filter over NodeTable rows: only rows with NoSchedule/NoExecute taints are looked at."""
        fail = np.zeros(len(rows), bool)
        infos = table.infos
        for j in np.flatnonzero(table.hard_taints[rows]):
            fail[j] = self.filter(state, pod, infos[rows[j]]) is not None
        return fail

    def pre_score(self, state, pod, node_infos):
        if not node_infos:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_KEY, tuple(t for t in pod.tolerations
                                         if not t.effect or t.effect == "PreferNoSchedule"))
        return None

    def score(self, state, pod, node_info):
        tolerations = state.get(PRE_SCORE_KEY)
        if tolerations is None:
            return 0, Status.error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        count = 0
        for taint in node_info.node.taints:
            if taint.effect != "PreferNoSchedule":
                continue
            for t in tolerations:
                if t.tolerates(taint):
                    break
            else:
                count += 1
        return count, None

    def score_batch(self, state, pod, table, rows):
        """Score over NodeTable rows: only rows with PreferNoSchedule taints are looked at (None without
        PreScore state: every node's Score is then an Error)."""
        if state.get(PRE_SCORE_KEY) is None:
            return None
        out = np.zeros(len(rows), np.int64)
        infos = table.infos
        for j in np.flatnonzero(table.prefer_taints[rows]):
            out[j], st = self.score(state, pod, infos[rows[j]])
            if st is not None:
                return None
        return out

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        return default_normalize_score(100, True, scores)

    def normalize_score_batch(self, state, pod, scores):
        """NormalizeScore over an int64 array (returns the normalized array)."""
        return default_normalize_score_array(100, True, scores)

    def events_to_register(self):
        if not self.queueing_hints:
            return (("Node", ("Add", "Update")),)
        return (("Node", ("Add", "UpdateNodeTaint"), self.is_schedulable_after_node_change),
                ("Pod", ("UpdatePodToleration",), self.is_schedulable_after_pod_toleration_change))

    @staticmethod
    def is_schedulable_after_node_change(pod, old, new):
        """The node had a NoSchedule/NoExecute taint the pod does not tolerate (or is new) and now has none."""
        was_untolerated = old is None or find_untolerated_taint(old.taints, pod.tolerations) is not None
        if was_untolerated and find_untolerated_taint(new.taints, pod.tolerations) is None:
            return QUEUE
        return QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod, old, new):
        """The pod's own tolerations changed."""
        return QUEUE if pod.uid == new.uid else QUEUE_SKIP

    def sign_pod(self, pod):
        """Feasibility and scoring depend on the pod's tolerations."""
        return [(signers.TOLERATIONS, signers.tolerations(pod))], None
