"""Actuating a preemption: kube-scheduler's framework/preemption/executor.go (v1.36.2), prepareCandidate of v1.30.

``Executor.actuate`` deletes the chosen candidate's victims through ``handle.client`` (see DefaultPreemption for the
client contract) and clears the nominations of lower-priority pods on the node. With SchedulerAsyncPreemption on
(1.36's default) the work leaves the scheduling cycle, as kube's goroutine does: the preemptor is marked as
preempting, PostFilter returns the nominated node at once, and DefaultPreemption's PreEnqueue keeps the preemptor
out of activeQ (``is_pod_running_preemption``) until the deletions are done.

Where kube runs a goroutine, the scheduler loop runs the work when the preemptor's attempt is over
(``handle.run_async``): after its failure was handled (the pod requeued, its nominatedNodeName patched), before
the next pod is popped. The work clears the lower-priority nominations, then deletes the victims one at a time in
the candidate's order (kube deletes all but the last in parallel); the last victim is registered as pending just
before its deletion, so its deletion event finds the preemption finished, as kube's
``lastVictimsPendingPreemption`` arranges. The order is the same on every run.
"""
from __future__ import annotations

from functools import partial

from .handle import features_of
from .status import Status


class Executor:
    """The preemptions one DefaultPreemption plugin actuates, and the ones still running (by preemptor uid)."""

    def __init__(self, handle):
        self.handle = handle
        features = features_of(handle)
        self.asynchronous = bool(features.gates.get("SchedulerAsyncPreemption"))
        # 1.36's PreemptPod: a victim whose graceful deletion has started gets no second call
        self.skip_terminating = features.has("preemption-executor")
        self.preempting = set()
        self.last_victim_pending = {}   # preemptor uid -> (namespace, name) of the victim deleted last

    def actuate(self, cand, pod):
        """actuatePodPreemption: None, or the Error status that stops a synchronous preemption."""
        if self.asynchronous:
            self.prepare_candidate_async(cand, pod)
            return None
        return self.prepare_candidate(cand, pod)

    def prepare_candidate(self, cand, pod):
        """prepareCandidate: delete every victim, then clear the lower-priority nominations on the node."""
        client = self.handle.client
        for victim in cand.victims:
            if self.skip_terminating and victim.deletion_timestamp:
                continue
            err = client.evict(victim, pod.uid, cand.name)
            if err:
                return Status.error(err)
        self._clear_lower_priority_nominations(pod, cand.name)
        return None

    def prepare_candidate_async(self, cand, pod) -> None:
        """prepareCandidateAsync: mark the preemptor and hand the deletions to the loop (``handle.run_async``).
        Nothing happens when every victim is already terminating."""
        victims = [v for v in cand.victims if not v.deletion_timestamp]
        if not victims:
            return
        self.preempting.add(pod.uid)
        self.handle.run_async(partial(self._preempt_async, cand.name, pod, victims), [v.key for v in victims])

    def _preempt_async(self, node_name, pod, victims) -> None:
        """The goroutine of prepareCandidateAsync; a failed deletion skips the last victim and activates the
        preemptor (it would otherwise wait in unschedulablePods)."""
        client = self.handle.client
        self._clear_lower_priority_nominations(pod, node_name)
        failed = False
        for victim in victims[:-1]:
            if client.evict(victim, pod.uid, node_name):
                failed = True
                break
        if not failed:
            last = victims[-1]
            self.last_victim_pending[pod.uid] = (last.namespace, last.name)
            failed = bool(client.evict(last, pod.uid, node_name))
        self.preempting.discard(pod.uid)
        self.last_victim_pending.pop(pod.uid, None)
        if failed:
            self.handle.activate([pod])

    def is_pod_running_preemption(self, uid) -> bool:
        """IsPodRunningPreemption: preempting, unless the last victim's deletion has already started or ended."""
        if uid not in self.preempting:
            return False
        ref = self.last_victim_pending.get(uid)
        if ref is None:
            return True
        victim = self.handle.client.get_pod(*ref)
        return victim is not None and not victim.deletion_timestamp

    def _clear_lower_priority_nominations(self, pod, node_name) -> None:
        """getLowerPriorityNominatedPods + clearNominatedNodeName (errors are not critical)."""
        nominated = self.handle.nominated_pods_for_node
        if nominated is None:
            return
        client = self.handle.client
        for p in nominated(node_name):
            if p.priority < pod.priority and p.nominated_node_name:
                client.clear_nomination(p)
