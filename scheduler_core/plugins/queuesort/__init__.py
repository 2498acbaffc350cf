"""PrioritySort: higher priority first, then earlier queue timestamp."""
from ...framework.interface import QueueSortPlugin
from .. import names


class PrioritySort(QueueSortPlugin):
    name = names.PRIORITY_SORT

    def less(self, a, b) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)
