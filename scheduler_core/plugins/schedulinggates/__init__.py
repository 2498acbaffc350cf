"""SchedulingGates: PreEnqueue keeps pods with spec.schedulingGates out of activeQ."""
from ...framework.interface import PreEnqueuePlugin
from ...framework.status import Code, Status
from .. import names


class SchedulingGates(PreEnqueuePlugin):
    name = names.SCHEDULING_GATES

    def pre_enqueue(self, pod):
        if not pod.scheduling_gates:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")

    def events_to_register(self):
        return (("Pod", ("Update",)),)
