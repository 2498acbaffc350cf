"""The runtime state of pod groups (backend/cache/podgroupstate.go): for each PodGroup the member pods the
scheduler knows, split into unscheduled, assumed and assigned. The cache keeps it (GenericWorkload on); plugins
read it through their handle's ``pod_group_states``.

kube-scheduler also copies the states into each cycle's snapshot; here a cycle reads the cache's (nothing changes
them while a cycle runs but the cycle itself, and a pod-group cycle assumes its pods in the cache).
"""
from __future__ import annotations


class PodGroupStateError(LookupError):
    """No state for a pod group (the text is kube's)."""


class PodGroupState:
    """One pod group's members: ``all_pods`` {uid: pod}, and the uids (or pods) per state."""

    __slots__ = ("all_pods", "unscheduled", "assumed", "assigned")

    def __init__(self):
        self.all_pods = {}
        self.unscheduled = set()
        self.assumed = {}
        self.assigned = set()

    def add_pod(self, pod) -> None:
        self.all_pods[pod.uid] = pod
        if pod.node_name:
            self.assigned.add(pod.uid)
        else:
            self.unscheduled.add(pod.uid)

    def update_pod(self, old, new) -> None:
        self.all_pods[new.uid] = new
        if not old.node_name and new.node_name:
            self.assigned.add(new.uid)
            self.unscheduled.discard(new.uid)
            self.assumed.pop(new.uid, None)

    def delete_pod(self, uid) -> None:
        self.all_pods.pop(uid, None)
        self.unscheduled.discard(uid)
        self.assumed.pop(uid, None)
        self.assigned.discard(uid)

    def assume_pod(self, pod) -> None:
        stored = self.all_pods.get(pod.uid)
        if stored is None:
            return
        if stored.node_name:
            self.assigned.add(pod.uid)
        else:
            self.assumed[pod.uid] = pod
        self.unscheduled.discard(pod.uid)

    def forget_pod(self, uid) -> None:
        pod = self.all_pods.get(uid)
        if pod is None:
            return
        self.assumed.pop(uid, None)
        if pod.node_name:
            self.assigned.add(uid)
        else:
            self.unscheduled.add(uid)

    def empty(self) -> bool:
        return not self.all_pods

    def all_pods_count(self) -> int:
        return len(self.all_pods)

    def scheduled_pods_count(self) -> int:
        return len(self.assumed) + len(self.assigned)

    def scheduled_pods(self) -> list:
        return [self.all_pods[uid] for uid in self.assigned] + list(self.assumed.values())

    def unscheduled_pods(self) -> dict:
        """{pod name: pod} of the members neither assumed nor assigned."""
        return {self.all_pods[uid].name: self.all_pods[uid] for uid in self.unscheduled}

    def assumed_pods(self) -> set:
        return set(self.assumed)


class PodGroupStates:
    """(namespace, pod group name) -> PodGroupState, kept from the pods the cache and the queue are told of."""

    def __init__(self):
        self._states = {}

    def get(self, namespace: str, name: str) -> PodGroupState:
        state = self._states.get((namespace, name))
        if state is None:
            raise PodGroupStateError(f"pod group state not found for pod group {namespace}/{name}")
        return state

    def add(self, pod) -> None:
        self._states.setdefault((pod.namespace, pod.pod_group), PodGroupState()).add_pod(pod)

    def update(self, old, new) -> None:
        state = self._states.get((new.namespace, new.pod_group))
        if state is not None:   # kube logs a missed add event
            state.update_pod(old, new)

    def remove(self, pod) -> None:
        key = (pod.namespace, pod.pod_group)
        state = self._states.get(key)
        if state is None:
            return
        state.delete_pod(pod.uid)
        if state.empty():
            del self._states[key]

    def assume(self, pod) -> None:
        key = (pod.namespace, pod.pod_group)
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = PodGroupState()
            state.all_pods[pod.uid] = pod
        state.assume_pod(pod)

    def forget(self, pod) -> None:
        state = self._states.get((pod.namespace, pod.pod_group))
        if state is not None:   # kube logs a missed add or assume event
            state.forget_pod(pod.uid)
