"""GangScheduling (framework/plugins/gangscheduling, 1.35 alpha): all-or-nothing scheduling of the pods of a
PodGroup whose policy is a gang. PreEnqueue keeps them out of activeQ until the group has ``minCount`` members;
Permit holds each assumed member until ``minCount`` of them are scheduled, then allows them all."""
from __future__ import annotations

from ...framework.interface import QUEUE, QUEUE_SKIP, PermitPlugin, PreEnqueuePlugin
from ...framework.podgroup_state import PodGroupStateError
from ...framework.status import Code, Status
from ...objects.workload import gang_min_count
from .. import names

PERMIT_TIMEOUT = 5 * 60.0   # seconds the members wait at Permit for the quorum
WAITING_FOR_MIN_COUNT_IN_QUEUE = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_FOR_MIN_COUNT_SCHEDULED = "waiting for minCount pods from a gang to be scheduled"


class GangScheduling(PreEnqueuePlugin, PermitPlugin):
    name = names.GANG_SCHEDULING

    def __init__(self, handle=None):
        self.handle = handle

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def events_to_register(self):
        # a new member may complete the gang; a PodGroup that appears lets its members in (both are immutable)
        return (("Pod", ("Add",), self.is_schedulable_after_pod_added),
                ("PodGroup", ("Add",), self.is_schedulable_after_pod_group_added))

    @staticmethod
    def is_schedulable_after_pod_added(pod, old, new):
        """A pod of the same scheduling group was added."""
        same = new.namespace == pod.namespace and pod.pod_group is not None and new.pod_group == pod.pod_group
        return QUEUE if same else QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pod_group_added(pod, old, new):
        """The pod's PodGroup was added."""
        meta = new.get("metadata") or {}
        same = (pod.pod_group is not None and (meta.get("namespace") or "default") == pod.namespace
                and meta.get("name") == pod.pod_group)
        return QUEUE if same else QUEUE_SKIP

    def _pod_group(self, pod):
        return self.handle.objects.pod_groups.get(f"{pod.namespace}/{pod.pod_group}")

    def pre_enqueue(self, pod):
        if pod.pod_group is None:
            return None
        group = self._pod_group(pod)
        if group is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f'waiting for pods\'s pod group "{pod.pod_group}" to appear in scheduling queue')
        min_count = gang_min_count(group)
        if min_count is None:
            return None
        try:
            state = self.handle.pod_group_states.get(pod.namespace, pod.pod_group)
        except PodGroupStateError as err:
            return Status.error(str(err))
        if state.all_pods_count() < min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_MIN_COUNT_IN_QUEUE)
        return None

    def permit(self, state, pod, node_name):
        if pod.pod_group is None:
            return None, 0
        group = self._pod_group(pod)
        if group is None:
            return Status.error(f'failed to get podGroup {pod.namespace}/{pod.pod_group}: '
                                f'podgroup.scheduling.k8s.io "{pod.pod_group}" not found'), 0
        min_count = gang_min_count(group)
        if min_count is None:
            return None, 0
        try:
            group_state = self.handle.pod_group_states.get(pod.namespace, pod.pod_group)
        except PodGroupStateError as err:
            return Status.error(str(err)), 0
        if group_state.scheduled_pods_count() < min_count:
            # members waiting for this one may now be tried again
            self.handle.activate(list(group_state.unscheduled_pods().values()))
            return Status(Code.WAIT, WAITING_FOR_MIN_COUNT_SCHEDULED), PERMIT_TIMEOUT
        for uid in group_state.assumed_pods():
            waiting = self.handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(self.name)
        return None, 0
