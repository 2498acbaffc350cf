"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""
from ...framework.interface import FilterPlugin, PreScorePlugin, ScoreExtensions, ScorePlugin
from ...framework.status import Code, Status
from .. import names
from ..helper import default_normalize_score

PRE_SCORE_KEY = "PreScore" + names.TAINT_TOLERATION


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions):
    name = names.TAINT_TOLERATION

    def filter(self, state, pod, node_info):
        tolerations = pod.tolerations
        for taint in node_info.node.taints:
            if taint.effect != "NoSchedule" and taint.effect != "NoExecute":
                continue
            for t in tolerations:
                if t.tolerates(taint):
                    break
            else:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                              f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}")
        return None

    def pre_score(self, state, pod, node_infos):
        if not node_infos:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_KEY, tuple(t for t in pod.tolerations
                                         if not t.effect or t.effect == "PreferNoSchedule"))
        return None

    def score(self, state, pod, node_info):
        tolerations = state.get(PRE_SCORE_KEY)
        if tolerations is None:
            return 0, Status.error(f'reading "{PRE_SCORE_KEY}" from cycleState: not found')
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

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        return default_normalize_score(100, True, scores)

    def events_to_register(self):
        return (("Node", ("Add", "Update")),)
