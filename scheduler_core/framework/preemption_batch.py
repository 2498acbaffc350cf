"""DryRunPreemption over NodeTable rows: the candidates of a dry run in NumPy, for the dry runs whose Filter
reads only the Node objects and the summed requests (a ResourceFilter) and where no PDB counts.

The per-node dry run (``Evaluator.dry_run_preemption``) takes the potential nodes in turn from the offset: a
node without lower-priority pods has no victims; otherwise every lower-priority pod is removed, the pod must then
pass the Filter (with the nominated pods RunFilterPluginsWithNominatedPods adds, then without), and the removed
pods are added back one by one in the order ``select_victims_on_node`` sorts them, each kept if the pod still
passes. Here the same steps run on all the nodes of a window at once: the node-only plugins' ``filter_batch``
masks, the resources plugin's ``fit_limits`` on summed requests, and the reprieve as one step per position in
the nodes' sorted lists. The candidates (nodes, victims and order) are the per-node dry run's.
"""
from __future__ import annotations

import numpy as np

from .candidates import RowCandidates
from .gosort import sort_slice
from .resource_filter import RESOURCES, nominated_requests

PRIORITY_SHIFT = 2**31   # MaxInt32 + 1, added to each victim's priority in pickOneNodeForPreemption's sum


class LowPriorityPods:
    """Per NodeTable row, the node's pods of a priority below a preemptor's in the order select_victims_on_node
    reprieves them (``sort_slice`` with ``more_important``, from the node's pod order), as columns (``_Rows``):
    kept for a few tables and priorities, a row re-read when its node's pods changed (its generation)."""

    KEPT = 4

    def __init__(self, more_important):
        self.more_important = more_important
        self._kept = {}   # priority -> _Rows
        self.yield_ = 0.5   # the share of nodes that were candidates in the last dry run: sizes the next one's window

    def rows(self, potential, positions, rows, table, priority: int) -> "_Rows":
        """The columns, up to date on ``rows`` (the table rows of ``potential[positions]``)."""
        kept = self._kept.get(priority)
        if kept is None or kept.table is not table:
            if len(self._kept) >= self.KEPT:
                del self._kept[next(iter(self._kept))]
            kept = self._kept[priority] = _Rows(table, priority)
        for i in np.flatnonzero(kept.generation[rows] != table.generation[rows]).tolist():
            kept.read(potential[positions[i]], int(rows[i]), self.more_important)
        return kept


class _Rows:
    """A table's nodes' lower-priority pods: per row the pods (sorted), their count, their summed requests of
    RESOURCES and per position (zero beyond the count) each one's requests (rows x positions x RESOURCES),
    priority and whether it has a recorded start time; and the generation read."""

    def __init__(self, table, priority: int):
        self.table, self.priority = table, priority
        n = table.n
        self.pods = [()] * n
        self.generation = np.full(n, -1, np.int64)
        self.counts = np.zeros(n, np.int64)
        self.low = np.zeros((n, len(RESOURCES)), np.int64)
        self.requests = np.zeros((n, 4, len(RESOURCES)), np.int64)
        self.priorities = np.zeros((n, 4), np.int64)
        self.started = np.zeros((n, 4), bool)

    def read(self, node_info, row: int, more_important) -> None:
        pods = [p for p in node_info.pods if p.priority < self.priority]
        sort_slice(pods, more_important)
        k = len(pods)
        width = self.requests.shape[1]
        if k > width:
            grown = max(k, 2 * width)
            self.requests = _widened(self.requests, grown)
            self.priorities = _widened(self.priorities, grown)
            self.started = _widened(self.started, grown)
        self.requests[row] = 0
        self.priorities[row] = 0
        self.started[row] = False
        if k:
            self.requests[row, :k] = [[p.requests.get(r, 0) for r in RESOURCES] for p in pods]
            self.priorities[row, :k] = [p.priority for p in pods]
            self.started[row, :k] = [bool(p.start_time) for p in pods]
        self.low[row] = self.requests[row].sum(axis=0)
        self.pods[row] = pods
        self.counts[row] = k
        self.generation[row] = node_info.generation


def _widened(columns, width: int):
    """``columns`` (rows x positions [x ...]) with ``width`` positions, the new ones zero."""
    grown = np.zeros((columns.shape[0], width, *columns.shape[2:]), columns.dtype)
    grown[:, :columns.shape[1]] = columns
    return grown


class _Fit:
    """The Filter of the dry run on sums: node-only plugins (their masks, once per window) and the resources
    plugin's ``fit_limits``; also with the nominated pods' requests added where there are some."""

    def __init__(self, resources, state, table, extra, extra_pods):
        self.resources, self.state, self.table = resources, state, table
        self.extra, self.extra_pods = extra, extra_pods   # per table row: the nominated pods' requests, count

    def on(self, rows) -> "_RowsFit | None":
        """The resources Filter on these rows; None: cannot tell."""
        limits = self.resources.fit_limits(self.state, self.table, rows)
        if limits is None:
            return None
        if self.extra is None:
            return _RowsFit(*limits, None, None)
        return _RowsFit(*limits, self.extra[rows], self.extra_pods[rows])


class _RowsFit:
    """The resources Filter on fixed rows: per row the highest pod count and sums at which the pod fits, and the
    nominated pods' summed requests and count where there are some (both passes of
    RunFilterPluginsWithNominatedPods)."""

    __slots__ = ("pods_limit", "limits", "extra", "extra_pods", "nominated")

    def __init__(self, pods_limit, limits, extra, extra_pods):
        self.pods_limit, self.limits = pods_limit, limits
        self.nominated = None
        if extra_pods is not None:
            nominated = extra_pods > 0
            if np.count_nonzero(nominated):
                self.nominated = nominated
        self.extra, self.extra_pods = (extra, extra_pods) if self.nominated is not None else (None, None)

    def take(self, positions) -> "_RowsFit":
        """The same on the rows at ``positions``."""
        return _RowsFit(self.pods_limit[positions], [(j, limit[positions]) for j, limit in self.limits],
                        None if self.extra is None else self.extra[positions],
                        None if self.extra_pods is None else self.extra_pods[positions])

    def passes(self, used, num_pods):
        """Whether the pod passes with these sums (rows x RESOURCES) and pod counts."""
        fits = self._fits(used, num_pods)
        if self.nominated is None:
            return fits
        return fits & (self._fits(used + self.extra, num_pods + self.extra_pods) | ~self.nominated)

    def _fits(self, used, num_pods):
        fits = num_pods <= self.pods_limit
        for j, limit in self.limits:
            fits &= used[:, j] <= limit
        return fits


def batch_candidates(handle, state, pod, potential, pdbs, offset: int, num_candidates: int, rf, low_pods):
    """The candidates of ``Evaluator.dry_run_preemption`` as RowCandidates (the same nodes with the same victims,
    in the same order; none violates a PDB), or None where this cannot tell: PDBs, a Filter that is not one resources plugin with ``fit_limits`` and node-only
    plugins with ``filter_batch``, values beyond the table's exact range, a node whose every lower-priority pod
    would be reprieved (an error in the per-node dry run), or no candidate at all (the statuses of the nodes are
    then the answer: the per-node dry run gives them)."""
    if pdbs or rf is None:
        return None
    resources = [pl for pl in rf.plugins if pl.filter_depends_on == "resources"]
    node_only = [pl for pl in rf.plugins if pl.filter_depends_on == "node"]
    if len(resources) != 1 or not hasattr(resources[0], "fit_limits"):
        return None
    if any(getattr(pl, "filter_batch", None) is None for pl in node_only):
        return None
    table = handle.snapshot.table()
    if not table.exact:
        return None
    extra = nominated_requests(state, handle.nominated_pods_for_node, handle.nominated_node_names, pod, table,
                               handle.nominated_sums)
    if extra is False:
        return None
    fit = _Fit(resources[0], state, table, *(extra or (None, None)))
    prio = pod.priority
    n = len(potential)
    # row i is snapshot.node_infos[i]: when every node is a potential one, positions are rows
    potential_rows = None if potential is table.infos else np.fromiter((ni.index for ni in potential), np.int64, n)
    windows = []
    pos = passed = found = 0
    ratio = low_pods.yield_
    while pos < n and found < num_candidates:
        need = num_candidates - found
        w = min(n - pos, int(need / max(ratio, 0.02) * 1.15) + 8)
        positions = np.arange(offset + pos, offset + pos + w, dtype=np.int64) % n
        rows = positions if potential_rows is None else potential_rows[positions]
        low_rows = low_pods.rows(potential, positions, rows, table, prio)
        window = _window(rows, state, pod, table, node_only, fit, low_rows, need)
        if window is None:
            return None
        window, passing = window
        if window is not None:
            windows.append(window)
            found += len(window[0])
        pos += w
        passed += passing
        ratio = max(passed, 1) / pos
    low_pods.yield_ = ratio
    if not found:
        return None
    return _row_candidates(windows, table, low_rows)


def _row_candidates(windows, table, low_rows) -> RowCandidates:
    """The windows' candidates (rows, victim marks, first, summed, counts, unstarted each) as one RowCandidates.
    It reads a candidate's victims from ``low_rows.pods[row]`` when asked: a row is read again only when its
    node's pods change, which no step of the preemption before the pick does."""
    rows, victims, first, summed, counts, unstarted = zip(*windows)
    width = max(v.shape[1] for v in victims)
    marks = np.zeros((sum(len(r) for r in rows), width), bool)
    at = 0
    for v in victims:
        marks[at:at + len(v), :v.shape[1]] = v
        at += len(v)
    rows = np.concatenate(rows)
    names = table.names
    return RowCandidates([names[r] for r in rows.tolist()], low_rows.pods, rows, marks, np.concatenate(first),
                         np.concatenate(summed), np.concatenate(counts), np.concatenate(unstarted))


def _window(rows, state, pod, table, node_only, fit, low_rows, need: int):
    """The first ``need`` candidates among the table ``rows`` in their order, as arrays (rows, victim marks over
    the rows' lower-priority pods, first, summed, counts, unstarted: see RowCandidates) or None when there is
    none, and how many of the nodes are candidates; None: cannot tell. Nodes after the ``need``-th candidate
    are not looked at further, as the per-node dry run stops there."""
    w = len(rows)
    counts = low_rows.counts[rows]
    ok = counts > 0
    for pl in node_only:
        failing = pl.filter_batch(state, pod, table, rows)
        if failing is None:
            return None
        ok &= ~failing
    k_max = int(counts.max()) if w else 0
    requests = low_rows.requests[rows, :k_max]
    low = low_rows.low[rows]   # each node's lower-priority pods' summed requests
    used = np.stack([table.req_cpu[rows], table.req_memory[rows], table.req_ephemeral[rows]], axis=1) - low
    num_pods = table.pod_count[rows] - counts
    rows_fit = fit.on(rows)
    if rows_fit is None:
        return None
    if ok.all():   # the usual case: no node-only plugin fails and every node has lower-priority pods
        passes = rows_fit.passes(used, num_pods)
    else:
        sub = np.flatnonzero(ok)
        passes = np.zeros(w, bool)
        passes[sub] = rows_fit.take(sub).passes(used[sub], num_pods[sub])
    sub = np.flatnonzero(passes)
    passing = len(sub)
    if not passing:
        return None, 0
    sub = sub[:need]
    rows_s, used_s, pods_s, counts_s, requests = rows[sub], used[sub], num_pods[sub], counts[sub], requests[sub]
    fit_s = rows_fit if len(sub) == w else rows_fit.take(sub)
    victim = np.zeros((len(sub), k_max), bool)
    for k in range(k_max):
        valid = counts_s > k
        if not valid.any():
            break
        trial = used_s + requests[:, k]
        fits = fit_s.passes(trial, pods_s + 1)
        keep = valid & fits
        used_s = np.where(keep[:, None], trial, used_s)
        pods_s = pods_s + keep
        victim[:, k] = valid & ~fits
    num_victims = victim.sum(axis=1)
    if not num_victims.all():
        return None
    # what pickOneNodeForPreemption reads of each candidate (RowCandidates)
    priorities = low_rows.priorities[rows_s, :k_max]
    first = priorities[np.arange(len(sub)), victim.argmax(axis=1)]
    summed = (priorities * victim).sum(axis=1) + num_victims * PRIORITY_SHIFT
    unstarted = ~(low_rows.started[rows_s, :k_max] & victim).any(axis=1)
    return (rows_s, victim, first, summed, num_victims, unstarted), passing
