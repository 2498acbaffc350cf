"""DryRunPreemption over NodeTable rows: the candidates of a dry run in NumPy, for the dry runs whose Filter
reads only the Node objects and the summed requests (a ResourceFilter) and where no PDB counts.

The per-node dry run (``Evaluator.dry_run_preemption``) takes the potential nodes in turn from the offset: a
node without lower-priority pods has no victims; otherwise every lower-priority pod is removed, the pod must then
pass the Filter (with the nominated pods RunFilterPluginsWithNominatedPods adds, then without), and the removed
pods are added back one by one in the order ``select_victims_on_node`` sorts them, each kept if the pod still
passes. Here the same steps run on all the nodes of a window at once: the node-only plugins' ``filter_batch``
masks, the resources plugin's ``fits_batch`` on summed requests, and the reprieve as one step per position in
the nodes' sorted lists. The candidates (nodes, victims and order) are the per-node dry run's.
"""
from __future__ import annotations

import numpy as np

from .gosort import sort_slice
from .resource_filter import RESOURCES, nominated_requests


class LowPriorityPods:
    """Per node, its pods of a priority below a preemptor's in the order select_victims_on_node reprieves
    them (``sort_slice`` with ``more_important``, from the node's pod order) and their cpu, memory and
    ephemeral-storage requests; kept while the node's pods (its generation) and the priority stay the same."""

    def __init__(self, more_important):
        self.more_important = more_important
        self._by_node = {}   # node name -> (generation, priority, (pods, requests))

    def get(self, node_info, priority: int) -> tuple:
        hit = self._by_node.get(node_info.name)
        if hit is not None and hit[0] == node_info.generation and hit[1] == priority:
            return hit[2]
        pods = [p for p in node_info.pods if p.priority < priority]
        sort_slice(pods, self.more_important)
        requests = [tuple(p.requests.get(r, 0) for r in RESOURCES) for p in pods]
        entry = (pods, requests)
        self._by_node[node_info.name] = (node_info.generation, priority, entry)
        return entry


class _Fit:
    """The Filter of the dry run on sums: node-only plugins (their masks, once per window) and the resources
    plugin's ``fits_batch``; also with the nominated pods' requests added where there are some."""

    def __init__(self, resources, state, table, extra, extra_pods):
        self.resources, self.state, self.table = resources, state, table
        self.extra, self.extra_pods = extra, extra_pods   # per table row: the nominated pods' requests, count

    def passes(self, rows, used, num_pods):
        """Both passes of RunFilterPluginsWithNominatedPods on rows with these sums; None: cannot tell."""
        fits = self.resources.fits_batch(self.state, self.table, rows, (used[:, 0], used[:, 1], used[:, 2], num_pods))
        if fits is None or self.extra is None:
            return fits
        nominated = self.extra_pods[rows] > 0
        if not nominated.any():
            return fits
        with_pods = used + self.extra[rows]
        fits_with = self.resources.fits_batch(self.state, self.table, rows, (with_pods[:, 0], with_pods[:, 1],
                                                                            with_pods[:, 2],
                                                                            num_pods + self.extra_pods[rows]))
        return fits & (fits_with | ~nominated)


def batch_candidates(handle, state, pod, potential, pdbs, offset: int, num_candidates: int, rf, low_pods):
    """The candidates of ``Evaluator.dry_run_preemption`` as (node name, victims) pairs (the same nodes with the
    same victims, in the same order; none violates a PDB), or None where this cannot tell: PDBs, a Filter that is not one resources plugin
    with ``fits_batch`` and node-only plugins with ``filter_batch``, values beyond the table's exact range, a node
    whose every lower-priority pod would be reprieved (an error in the per-node dry run), or no candidate at all
    (the statuses of the nodes are then the answer: the per-node dry run gives them)."""
    if pdbs or rf is None:
        return None
    resources = [pl for pl in rf.plugins if pl.filter_depends_on == "resources"]
    node_only = [pl for pl in rf.plugins if pl.filter_depends_on == "node"]
    if len(resources) != 1 or not hasattr(resources[0], "fits_batch"):
        return None
    if any(getattr(pl, "filter_batch", None) is None for pl in node_only):
        return None
    table = handle.snapshot.table()
    if not table.exact:
        return None
    extra = nominated_requests(state, handle.nominated_pods_for_node, handle.nominated_node_names, pod, table)
    if extra is False:
        return None
    fit = _Fit(resources[0], state, table, *(extra or (None, None)))
    prio = pod.priority
    n = len(potential)
    candidates = []
    pos = 0
    ratio = 0.5
    while pos < n and len(candidates) < num_candidates:
        need = num_candidates - len(candidates)
        w = min(n - pos, int(need / max(ratio, 0.02) * 1.15) + 8)
        nodes = [potential[(offset + pos + i) % n] for i in range(w)]
        found = _window(nodes, state, pod, prio, table, node_only, fit, low_pods)
        if found is None:
            return None
        candidates.extend(found[:need])
        pos += w
        ratio = max(len(candidates), 1) / pos
    return candidates or None


def _window(nodes, state, pod, prio, table, node_only, fit, low_pods):
    """The candidates among ``nodes`` in their order, as (name, victims); None: cannot tell."""
    w = len(nodes)
    rows = np.fromiter((ni.index for ni in nodes), np.int64, w)
    entries = [low_pods.get(ni, prio) for ni in nodes]
    counts = np.fromiter((len(e[0]) for e in entries), np.int64, w)
    ok = counts > 0
    for pl in node_only:
        failing = pl.filter_batch(state, pod, table, rows)
        if failing is None:
            return None
        ok &= ~failing
    k_max = int(counts.max()) if w else 0
    requests = np.zeros((w, k_max, len(RESOURCES)), np.int64)
    low = np.zeros((w, len(RESOURCES)), np.int64)   # each node's lower-priority pods' summed requests
    flat = [r for e in entries for r in e[1]]
    if flat:
        flat = np.array(flat, np.int64)
        ends = np.cumsum(counts)
        which = np.repeat(np.arange(w), counts)
        requests[which, np.arange(len(flat)) - np.repeat(ends - counts, counts)] = flat
        running = np.concatenate((np.zeros((1, len(RESOURCES)), np.int64), np.cumsum(flat, axis=0)))
        low = running[ends] - running[ends - counts]
    used = np.stack([table.req_cpu[rows], table.req_memory[rows], table.req_ephemeral[rows]], axis=1) - low
    num_pods = table.pod_count[rows] - counts
    sub = np.flatnonzero(ok)
    passes = fit.passes(rows[sub], used[sub], num_pods[sub])
    if passes is None:
        return None
    sub = sub[passes]
    rows_s, used_s, pods_s, counts_s = rows[sub], used[sub], num_pods[sub], counts[sub]
    victim = np.zeros((len(sub), k_max), bool)
    for k in range(k_max):
        valid = counts_s > k
        if not valid.any():
            break
        trial = used_s + requests[sub, k]
        fits = fit.passes(rows_s, trial, pods_s + 1)
        if fits is None:
            return None
        keep = valid & fits
        used_s = np.where(keep[:, None], trial, used_s)
        pods_s = pods_s + keep
        victim[:, k] = valid & ~fits
    found = []
    for i, marks in zip(sub.tolist(), victim.tolist()):
        pods = entries[i][0]
        victims = [p for p, is_victim in zip(pods, marks) if is_victim]
        if not victims:
            return None
        found.append((nodes[i].name, victims))
    return found
