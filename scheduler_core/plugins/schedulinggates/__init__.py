"""SchedulingGates: PreEnqueue keeps pods with spec.schedulingGates out of activeQ."""
from ...framework.handle import queueing_hints_of
from ...framework.interface import QUEUE, QUEUE_SKIP, PreEnqueuePlugin
from ...framework.status import Code, Status
from .. import names


class SchedulingGates(PreEnqueuePlugin):
    name = names.SCHEDULING_GATES

    def __init__(self, queueing_hints: bool = False):
        self.queueing_hints = queueing_hints

    @classmethod
    def new(cls, args, handle):
        return cls(queueing_hints_of(handle))

    def pre_enqueue(self, pod):
        if not pod.scheduling_gates:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")

    def events_to_register(self):
        if not self.queueing_hints:
            return (("Pod", ("Update",)),)
        return (("Pod", ("UpdatePodSchedulingGatesEliminated",), self.is_schedulable_after_gates_eliminated),)

    @staticmethod
    def is_schedulable_after_gates_eliminated(pod, old, new):
        """The pod's own scheduling gates are gone."""
        return QUEUE if new.uid == pod.uid else QUEUE_SKIP
