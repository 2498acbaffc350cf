"""Handle: what a plugin may reach besides its arguments (framework.Handle)."""
from __future__ import annotations

from .. import versions
from .waiting_pods import WaitingPodsMap


class Handle:
    """Access to the current snapshot, cluster objects, the nominator, the cluster client and the framework.

    ``snapshot`` is brought up to date by the scheduler before every cycle. ``client`` is the cluster source used
    for binding and evictions (None in a one-pass simulation). ``framework`` is set once built. ``features`` is
    the Kubernetes version and feature gates the plugins are built for (versions.Features; build_frameworks sets
    the configuration's). ``run_async(job, victim_keys)`` runs a preemption's deletions outside the scheduling
    cycle and ``activate(pods)`` moves pods to activeQ: a scheduler loop sets both (without one, the job runs at
    once and nothing is queued). ``pod_group_states`` is the scheduler cache's PodGroupStates (GenericWorkload
    on), None in a one-pass simulation without it.
    """

    def __init__(self, snapshot=None, client=None, nominated_pods_for_node=None, parallelism: int = 16):
        self.snapshot = snapshot
        self.client = client
        self.nominated_pods_for_node = nominated_pods_for_node
        self.nominated_node_names = None   # () -> the names of the nodes with nominated pods, when known
        self.nominated_sums = None   # the nominator's NominatedSums, when it keeps them
        self.parallelism = parallelism
        self.framework = None
        self.extenders = []
        self.rng = None
        self.tie_break = "random"
        self.waiting_pods = WaitingPodsMap()
        self.features = versions.features()
        self.activate = lambda pods: None
        self.pod_group_states = None

    def run_async(self, job, victim_keys) -> None:
        """Run a preemption's deletions (``job``) now; a scheduler loop replaces this to run them later."""
        job()

    @property
    def objects(self):
        return self.snapshot.objects

    def get_waiting_pod(self, uid):
        """The pod a Permit plugin holds (WaitingPod), or None."""
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self, fn) -> None:
        self.waiting_pods.iterate(fn)

    def reject_waiting_pod(self, uid) -> bool:
        """Reject a waiting pod (message "removed"); False when it is not waiting."""
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True


def features_of(handle) -> "versions.Features":
    """The Features a plugin is built with: its handle's, or the default version's when it has no handle."""
    return handle.features if handle is not None else versions.features()


def queueing_hints_of(handle) -> bool:
    """Whether a plugin registers its events with QueueingHintFns (SchedulerQueueingHints, kube's
    ``enableSchedulingQueueHint``)."""
    return bool(features_of(handle).gates.get("SchedulerQueueingHints"))
