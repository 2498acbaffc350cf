"""Handle: what a plugin may reach besides its arguments (framework.Handle)."""
from __future__ import annotations


class Handle:
    """Access to the current snapshot, cluster objects, the nominator, the cluster client and the framework.

    ``snapshot`` is replaced by the scheduler before every cycle. ``client`` is the cluster source used
    for binding and evictions (None in a one-pass simulation). ``framework`` is set once built.
    """

    def __init__(self, snapshot=None, client=None, nominated_pods_for_node=None, parallelism: int = 16):
        self.snapshot = snapshot
        self.client = client
        self.nominated_pods_for_node = nominated_pods_for_node
        self.parallelism = parallelism
        self.framework = None
        self.extenders = []
        self.rng = None
        self.tie_break = "random"

    @property
    def objects(self):
        return self.snapshot.objects
