"""The scored nodes in 1.36's order, and OpportunisticBatching (v1.36.2's schedule_one.go sortedNodeScores and
framework/runtime/batch.go).

At 1.36 the host is the first node popped from a heap of the scored nodes (Go's container/heap, highest total
first, ties by a Randomizer that only nodes scored by an extender get, else as the heap leaves them, which follows
the order of the feasible nodes); with the "name" tie-break, ties go by the smallest name. With OpportunisticBatching the rest of that
order is kept for the next pod of the same signature (``SignPod``): if the node chosen last no longer passes the
next pod's Filter, the next node of the order is tried first (the "hint"), as kube's batch does.
"""
from __future__ import annotations

import json

import numpy as np

from .status import is_success

MAX_BATCH_AGE = 0.5   # seconds (maxBatchAge), on the scheduler's clock
SCHEDULER_NAME_SIGNER = "v1.Pod.Spec.SchedulerName"


def _less(a, b) -> bool:
    """nodeScoreHeap.Less: the higher total, then the higher Randomizer."""
    return a[0] > b[0] or (a[0] == b[0] and a[1] > b[1])


def _down(h, i0: int, n: int) -> None:
    """container/heap's down."""
    i = i0
    while True:
        j1 = 2 * i + 1
        if j1 >= n:
            return
        j = j1
        j2 = j1 + 1
        if j2 < n and _less(h[j2], h[j1]):
            j = j2
        if not _less(h[j], h[i]):
            return
        h[i], h[j] = h[j], h[i]
        i = j


def heap_first(totals, randomizers=None) -> int:
    """The index of the node SortedNodeScores pops first, without building the heap: among the nodes with the
    highest (total, Randomizer), the one Go's heapify leaves at the root. down() moves a child up only when it is
    strictly greater and prefers the left child on ties, so the root is the node whose heap position comes first in
    path order (the root, then the left subtree before the right, an ancestor before its descendants)."""
    t = np.asarray(totals, dtype=np.int64)
    best = np.flatnonzero(t == t.max())
    if randomizers is not None and len(best) > 1:
        r = np.asarray(randomizers, dtype=np.int64)[best]
        best = best[r == r.max()]
    if len(best) == 1:
        return int(best[0])
    v = best + 1                            # 1-based heap positions: the bits after the leading 1 are the path
    depth = np.frexp(v.astype(np.float64))[1] - 1
    key = v << (depth.max() - depth)        # positions on the deepest level, an ancestor's at its leftmost descendant
    return int(best[np.lexsort((depth, key))[0]])


class SortedNodeScores:
    """sortedNodeScores: ``pop`` gives the node names in 1.36's order (see the module docstring)."""

    def __init__(self, names, totals, randomizers=None, by_name: bool = False):
        if by_name:
            order = sorted(range(len(names)), key=lambda i: (-int(totals[i]), names[i]))
            self._heap = None
            self._stack = [names[i] for i in reversed(order)]
            return
        self._stack = None
        h = [(int(totals[i]), randomizers[i] if randomizers is not None else 0, names[i]) for i in range(len(names))]
        for i in range(len(h) // 2 - 1, -1, -1):
            _down(h, i, len(h))
        self._heap = h

    def __len__(self):
        return len(self._stack) if self._heap is None else len(self._heap)

    def pop(self) -> str:
        if self._heap is None:
            return self._stack.pop()
        h = self._heap
        n = len(h) - 1
        h[0], h[n] = h[n], h[0]
        _down(h, 0, n)
        return h.pop()[2]


def sign_pod(fwk, pod):
    """Framework.SignPod: the pod's signature (text), or None when a plugin cannot sign it or the profile cannot
    sign at all (extenders, or a PreFilter, Filter, PreScore or Score plugin without ``sign_pod``)."""
    signers = fwk.signers()
    if signers is None:
        return None
    sig = {SCHEDULER_NAME_SIGNER: pod.scheduler_name}
    for pl in signers:
        fragments, st = pl.sign_pod(pod)
        if not is_success(st):
            return None
        for key, value in fragments:
            sig[key] = value
    return json.dumps(sig, sort_keys=True, separators=(",", ":"))


class OpportunisticBatch:
    """One profile's batch: the last cycle and the sorted nodes it left for a pod of the same signature."""

    def __init__(self, fwk):
        self.fwk = fwk
        self.signature = None
        self.sorted_nodes = None
        self.created = 0.0
        self.last_cycle = -1
        self.last_chosen = ""
        self.batched_pods = 0

    def node_hint(self, pod, signature, state, cycle: int, snapshot, now: float) -> str:
        """GetNodeHint: the next node of the kept order, or "" when the state cannot be used (then dropped)."""
        if not self._compatible(pod, signature, state, cycle, snapshot, now):
            return ""
        return self.sorted_nodes.pop()

    def store(self, signature, hinted: str, chosen: str, other_nodes, cycle: int, now: float) -> None:
        """StoreScheduleResults: remember the cycle; keep the rest of the order unless the hint was used."""
        self.last_cycle = cycle
        self.last_chosen = chosen
        if hinted and hinted == chosen:
            self.batched_pods += 1
            return
        if signature is not None and other_nodes is not None and len(other_nodes):
            self.signature, self.sorted_nodes, self.created = signature, other_nodes, now
        else:
            self.signature = self.sorted_nodes = None

    def _compatible(self, pod, signature, state, cycle, snapshot, now) -> bool:
        """batchStateCompatible: the pod follows the last cycle of this profile, which succeeded, has the same
        signature, within maxBatchAge, and no longer passes the Filter on the node chosen last."""
        if self.sorted_nodes is None or not len(self.sorted_nodes):
            return False
        if cycle != self.last_cycle + 1 or signature is None or signature != self.signature \
                or now > self.created + MAX_BATCH_AGE:
            return False
        ni = snapshot.get(self.last_chosen)
        if ni is None:
            return False
        st = self.fwk.run_filter(state, pod, ni)
        return st is not None and st.is_rejected()
