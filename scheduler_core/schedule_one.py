"""One scheduling cycle for one pod: PreFilter, Filter, PostFilter, PreScore, Score, selectHost.

This mirrors kube-scheduler's schedule_one.go (schedulePod, findNodesThatFitPod,
findNodesThatPassFilters, prioritizeNodes, selectHost) and records a CycleTrace.
"""
from __future__ import annotations

import random
import time

import numpy as np

from .framework.batch import SortedNodeScores, heap_first, sign_pod
from .framework.cycle_state import CycleState
from .framework.handle import features_of
from .framework.node_table import row_mask
from .framework.resource_filter import ResourceFilter, nominated_requests
from .framework.runtime import PREFILTER_RESULT_MSG, Rejections, nominated_pods_to_add, status_counts
from .framework.status import Code, Status
from .lazy import LazyDict, LazyList
from .trace import CycleTrace

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def num_feasible_nodes_to_find(pct_profile, pct_global, num_all_nodes: int) -> int:
    """How many feasible nodes a cycle looks for (percentageOfNodesToScore, adaptive when 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = pct_profile if pct_profile is not None else (pct_global or 0)
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def fit_error_message(num_all_nodes: int, node_statuses: dict, pre_filter_msg: str = "",
                      post_filter_msg: str = "") -> str:
    """framework.FitError.Error(): the FailedScheduling text."""
    msg = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        hist = {}
        for st, n in status_counts(node_statuses):
            if st is not None:
                for r in st.reasons:
                    hist[r] = hist.get(r, 0) + n
        items = sorted(f"{n} {r}" for r, n in hist.items())
        if items:
            msg += " " + ", ".join(items) + "."
    if post_filter_msg:
        msg += " " + post_filter_msg
    return msg


class SchedulerContext:
    """State shared by all profiles of one scheduler: start index, randomness, extenders, nominator."""

    def __init__(self, tie_break: str = "random", seed=None, percentage_of_nodes_to_score=0,
                 extenders=(), nominated_pods_for_node=None, trace_all_filters: bool = True,
                 nominated_node_names=None, batch: bool = True):
        self.next_start_node_index = 0
        self.rng = random.Random(seed)
        self.tie_break = tie_break
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.extenders = list(extenders)
        self.nominated_pods_for_node = nominated_pods_for_node
        # () -> names of the nodes that have nominated pods; without it (when nominated_pods_for_node is
        # set) the Filter search stays on the per-node path.
        self.nominated_node_names = nominated_node_names
        self.nominated_sums = None   # the nominator's NominatedSums, when it keeps them
        self.trace_all_filters = trace_all_filters
        # NumPy batch paths (NodeTable) for Filter in kube mode and for Score; False: per node only.
        self.batch = batch
        self.cycle = 0
        # A scheduler loop sets the queue's scheduling cycle before each cycle and its clock (OpportunisticBatching
        # reuses a cycle's results only in the next cycle of the same profile, within 0.5 s); None: no batching.
        self.scheduling_cycle = None
        self.now = time.monotonic


def best_nodes(names, totals) -> list:
    """The names with the best total; ``totals`` is a list or an int64 array."""
    if isinstance(totals, np.ndarray):
        return [names[i] for i in np.flatnonzero(totals == totals.max()).tolist()]
    best_total = max(totals)
    return [n for n, t in zip(names, totals) if t == best_total]


def select_host(names, totals, ctx: SchedulerContext):
    """selectHost: uniform random among the best totals, or the smallest name. kube's reservoir sampling picks
    uniformly among the best; one draw does the same."""
    top = best_nodes(names, totals)
    if ctx.tie_break == "name":
        return min(top), top
    return top[ctx.rng.randrange(len(top))], top


def pop_sorted_node_scores(names, totals, ctx: SchedulerContext, pod, keep: bool):
    """1.36's host (newSortedNodeScores(...).Pop()) and, when ``keep``, the rest of the order (a SortedNodeScores,
    else None). A Randomizer per node only when an extender that is interested in the pod scored them."""
    by_name = ctx.tie_break == "name"
    randomizers = None
    if not by_name and any(ext.is_interested(pod) for ext in ctx.extenders):
        randomizers = [ctx.rng.getrandbits(63) for _ in names]
    if keep:
        others = SortedNodeScores(names, totals, randomizers, by_name=by_name)
        return others.pop(), others
    if by_name:
        return select_host(names, totals, ctx)[0], None
    return names[heap_first(totals, randomizers)], None


def schedule_pod(fwk, ctx: SchedulerContext, pod, snapshot, state: CycleState | None = None,
                 attempt: int = 1, score_single_node: bool = False) -> tuple:
    """Run one scheduling cycle (up to selectHost and PostFilter). Returns (trace, state)."""
    ctx.cycle += 1
    state = state or CycleState()
    tr = CycleTrace(pod, fwk.profile_name, cycle=ctx.cycle, attempt=attempt)
    tr.started_at = time.time()
    t_start = time.perf_counter()
    all_nodes = snapshot.node_infos
    tr.num_all_nodes = len(all_nodes)
    if not all_nodes:
        tr.unschedulable = True
        tr.message = NO_NODES_AVAILABLE
        tr.durations["total"] = time.perf_counter() - t_start
        return tr, state

    features = features_of(fwk.handle)
    batch = fwk.batch if ctx.scheduling_cycle is not None and features.gates.get("OpportunisticBatching") else None
    signature = sign_pod(fwk, pod) if batch is not None else None
    feasible = _find_nodes_that_fit(fwk, ctx, state, pod, snapshot, tr, batch, signature)
    if tr.error:
        tr.durations["total"] = time.perf_counter() - t_start
        return tr, state

    if not feasible:
        tr.unschedulable = True
        t0 = time.perf_counter()
        if fwk.post_filter:
            res, st = fwk.run_post_filter(state, pod, tr.node_statuses)
            tr.post_filter_result = res
            tr.post_filter_msg = "" if st is None else st.message()  # kept even for an Error, as kube does
            record = getattr(res, "record", None)
            tr.preemption = record if record is not None else {
                "attempted": True, "code": str(Code.SUCCESS if st is None else st.code),
                "message": "" if st is None else st.message(),
                "nominated_node": (res.nominated_node_name or None) if res else None, "victims": []}
        tr.durations["PostFilter"] = time.perf_counter() - t0
        tr.message = fit_error_message(len(all_nodes), tr.node_statuses, tr.pre_filter_msg, tr.post_filter_msg)
        tr.durations["total"] = time.perf_counter() - t_start
        return tr, state

    tr.feasible = [ni.name for ni in feasible]
    tr.scoring_run_by_scheduler = len(feasible) > 1
    if len(feasible) > 1 or score_single_node:
        t0 = time.perf_counter()
        totals = _prioritize(fwk, ctx, state, pod, feasible, tr, snapshot)
        tr.durations["Score"] = time.perf_counter() - t0
        if tr.error:
            tr.durations["total"] = time.perf_counter() - t_start
            return tr, state
    others = None
    if len(feasible) == 1:
        tr.chosen = feasible[0].name
        tr.top_nodes = [tr.chosen]
    elif features.has("sorted-node-scores"):
        tr.chosen, others = pop_sorted_node_scores(tr.feasible, totals, ctx, pod,
                                                   keep=batch is not None and signature is not None)
        tr.top_nodes = best_nodes(tr.feasible, totals)
    else:
        tr.chosen, tr.top_nodes = select_host(tr.feasible, totals, ctx)
    if batch is not None:
        batch.store(signature, tr.node_hint, tr.chosen, others, ctx.scheduling_cycle, ctx.now())
    tr.durations["total"] = time.perf_counter() - t_start
    return tr, state


def _find_nodes_that_fit(fwk, ctx, state, pod, snapshot, tr, batch=None, signature=None):
    all_nodes = snapshot.node_infos
    t0 = time.perf_counter()
    record = {}
    pre_res, st = fwk.run_pre_filter(state, pod, record=record)
    tr.durations["PreFilter"] = time.perf_counter() - t0
    for name, (_res, _st, secs) in record.items():
        tr.durations[f"PreFilter/{name}"] = secs
    tr.prefilter_plugins = record
    tr.prefilter_status = st
    tr.prefilter_result = pre_res
    tr.skip_filter_plugins = sorted(state.skip_filter_plugins)
    # The plugins whose PreFilterResult narrowed the nodes (kube's pluginsWithNodes, sorted as sets.List).
    narrowed_by = sorted(name for name, (res, pst, _secs) in record.items()
                         if res is not None and (pst is None or pst.code == Code.SUCCESS))
    named = features_of(fwk.handle).has("prefilter-result-plugins")
    if named:
        tr.unschedulable_plugins = list(narrowed_by)
    if st is not None and st.code != Code.SUCCESS:
        if not st.is_rejected():
            tr.error = st.as_error()
            return []
        for ni in all_nodes:
            tr.node_statuses[ni.name] = st
        tr.pre_filter_msg = st.message()
        if st.plugin:
            # 1.36 keeps the narrowing plugins beside an Unschedulable one (an unresolvable one stops PreFilter)
            keep = narrowed_by if named and st.code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE else ()
            tr.unschedulable_plugins = sorted({*keep, st.plugin})
            if st.code == Code.PENDING:
                tr.pending_plugins = [st.plugin]
        return []

    t0 = time.perf_counter()
    if batch is not None:
        # GetNodeHint, even for a pod with a nominated node (which is tried instead)
        tr.node_hint = batch.node_hint(pod, signature, state, ctx.scheduling_cycle, snapshot, ctx.now())
    nominated_only = None
    tried = pod.nominated_node_name or tr.node_hint
    if tried:
        # evaluateNominatedNode (neither version checks the PreFilterResult here); a rejection stays in
        # the node statuses, so it counts as processed, and an Error just falls back to all nodes.
        ni = snapshot.get(tried)
        if ni is not None:
            st_n = fwk.run_filter_with_nominated_pods(state, pod, ni, ctx.nominated_pods_for_node)
            if st_n is None:
                nominated_only = [ni]
            elif st_n.is_rejected():
                tr.node_statuses[ni.name] = st_n
    if nominated_only is not None:
        feasible = _run_extender_filters(ctx, pod, nominated_only, tr)
        if feasible:
            tr.evaluated_nodes = [n.name for n in nominated_only]
            tr.durations["Filter"] = time.perf_counter() - t0
            return feasible

    nodes = all_nodes
    if pre_res is not None:
        outside = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowed_by)}]" if named else PREFILTER_RESULT_MSG
        nodes = []
        for ni in all_nodes:
            if ni.name in pre_res:
                nodes.append(ni)
            else:
                tr.node_statuses[ni.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, outside)
    tr.start_index = ctx.next_start_node_index
    feasible = _find_nodes_that_pass_filters(fwk, ctx, state, pod, nodes, tr, snapshot)
    tr.processed_nodes = len(feasible) + len(tr.node_statuses)
    if nodes:
        ctx.next_start_node_index = (ctx.next_start_node_index + tr.processed_nodes) % len(nodes)
    if tr.error:
        return []
    if ctx.trace_all_filters and tr.filter_table is None:
        # Per-node trace mode: nodes excluded by the PreFilterResult still get every filter plugin's verdict.
        durations = {}
        for ni in all_nodes:
            if ni.name not in tr.filter:
                _first, per_plugin = fwk.run_filter_traced(state, pod, ni, durations)
                tr.filter[ni.name] = per_plugin
    feasible = _run_extender_filters(ctx, pod, feasible, tr)
    tr.durations["Filter"] = time.perf_counter() - t0
    plugins = set(tr.unschedulable_plugins)
    statuses = tr.node_statuses
    for s in (statuses.distinct_values() if isinstance(statuses, LazyDict) else statuses.values()):
        if s.plugin and s.is_rejected():
            plugins.add(s.plugin)
    tr.unschedulable_plugins = sorted(plugins)
    return feasible


def _find_nodes_that_pass_filters(fwk, ctx, state, pod, nodes, tr, snapshot=None):
    n = len(nodes)
    if n == 0:
        return []
    num_to_find = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score,
                                             ctx.percentage_of_nodes_to_score, n)
    if not ctx.extenders and not fwk.score:
        num_to_find = 1 if n else 0
    tr.num_nodes = n
    tr.num_to_find = num_to_find
    start = ctx.next_start_node_index
    if not fwk.filter:
        return [nodes[(start + i) % n] for i in range(min(num_to_find, n))]
    if ctx.batch and snapshot is not None and \
            (ctx.nominated_pods_for_node is None or ctx.nominated_node_names is not None):
        if ctx.trace_all_filters:
            return _pass_filters_table(fwk, ctx, state, pod, nodes, tr, snapshot, start, num_to_find)
        return _pass_filters_batch(fwk, ctx, state, pod, nodes, tr, snapshot, start, num_to_find)
    feasible = []
    statuses = tr.node_statuses
    nominated = ctx.nominated_pods_for_node
    trace = ctx.trace_all_filters
    durations = tr.durations
    evaluated = tr.evaluated_nodes
    for i in range(n):
        ni = nodes[(start + i) % n]
        evaluated.append(ni.name)
        if trace:
            st, per_plugin = fwk.run_filter_traced(state, pod, ni, durations)
            tr.filter[ni.name] = per_plugin
            if nominated is not None and (st is None or st.code != Code.ERROR):
                st = fwk.run_filter_with_nominated_pods(state, pod, ni, nominated)
        else:
            st = fwk.run_filter_with_nominated_pods(state, pod, ni, nominated)
        if st is None:
            # Like kube with one worker: after numToFind feasible nodes the search goes on until one more
            # feasible node is found; that node is not kept (the next cycle starts on it), but the
            # rejected nodes visited before it count as processed.
            if len(feasible) >= num_to_find:
                break
            feasible.append(ni)
        elif st.code == Code.ERROR:
            tr.error = st.as_error()
            return []
        else:
            statuses[ni.name] = st
            if st.plugin:
                tr.kube_stopped_at[ni.name] = st.plugin
    return feasible


def _rotated(names: list, start: int, count: int) -> list:
    """``count`` names from position ``start`` on, wrapping around (kube's rotating search order)."""
    start %= len(names)
    end = start + count
    return names[start:end] if end <= len(names) else names[start:] + names[:end - len(names)]


def _pass_filters_batch(fwk, ctx, state, pod, nodes, tr, snapshot, start, num_to_find):
    """The same search on NodeTable rows (Framework.run_filter_batch); the trace gets the same fields."""
    table = snapshot.table()
    all_nodes = snapshot.node_infos
    rows_all = None if nodes is all_nodes else np.fromiter((ni.index for ni in nodes), np.int64, len(nodes))
    special = _nominated_rows(ctx, state, pod, table)
    sums = nominated_requests(state, ctx.nominated_pods_for_node, ctx.nominated_node_names, pod, table,
                             ctx.nominated_sums) \
        if special is not None else None
    feasible, rejected, visited, err = fwk.run_filter_batch(
        state, pod, nodes, rows_all, start, num_to_find, table, special, ctx.nominated_pods_for_node, sums)
    names = table.names if nodes is all_nodes else [ni.name for ni in nodes]
    _set_search_trace(tr, names, start, visited, rejected)
    if err is not None:
        tr.error = err.as_error()
        return []
    return feasible


def _nominated_rows(ctx, state, pod, table):
    """Table rows of the nodes with a nominated pod that RunFilterPluginsWithNominatedPods would add (priority
    >= the pod's, not the pod itself): only there does the Filter result differ from the plain one."""
    nominated = ctx.nominated_pods_for_node
    if nominated is None:
        return None
    extra = nominated_requests(state, nominated, ctx.nominated_node_names, pod, table, ctx.nominated_sums)
    if extra is None:
        return None
    if extra is not False:
        return np.flatnonzero(extra[1] > 0)
    names = [name for name in ctx.nominated_node_names() if nominated_pods_to_add(pod, name, nominated)]
    return np.array([table.row_of(name) for name in names], dtype=np.int64) if names else None


def _nominated_codes(rf, ctx, state, pod, table, ft, rows):
    """ResourceFilter.nominated_codes on ``rows`` with the nominated pods' sums, or None."""
    extra = nominated_requests(state, ctx.nominated_pods_for_node, ctx.nominated_node_names, pod, table,
                             ctx.nominated_sums)
    if not extra:
        return None
    return rf.nominated_codes(ft, table, rows, *extra)


def _set_search_trace(tr, names, start, visited, rejected):
    """The trace's visited nodes, rejected nodes' statuses and stopping plugins, built when first read: kube-mode
    cycles on big clusters reject thousands of nodes that nothing reads unless the pod fails or a recorder asks."""
    if tr.evaluated_nodes:
        tr.evaluated_nodes.extend(_rotated(names, start, visited))
    else:
        tr.evaluated_nodes = LazyList(lambda: _rotated(names, start, visited), visited)
    if rejected is None or not len(rejected):
        return
    if tr.node_statuses:
        tr.node_statuses.update(rejected.as_dict())
    else:
        tr.node_statuses = LazyDict(rejected.as_dict, len(rejected), rejected.distinct(), source=rejected)
    if tr.kube_stopped_at:
        tr.kube_stopped_at.update(rejected.stopped_at())
    else:
        tr.kube_stopped_at = LazyDict(rejected.stopped_at, source=rejected)


def _pass_filters_table(fwk, ctx, state, pod, nodes, tr, snapshot, start, num_to_find):
    """Trace mode on NodeTable rows: every Filter plugin's verdict on every node (Framework.run_filter_table),
    then kube's search read off the nodes' results; the trace gets the fields of the per-node trace path."""
    table = snapshot.table()
    ft, first = fwk.run_filter_table(state, pod, table, tr.durations)
    tr.filter_table = ft
    tr.filter = LazyDict(ft.per_node, table.n)
    all_nodes = snapshot.node_infos
    n = len(nodes)
    start %= n
    idx = np.arange(start, start + n, dtype=np.int64)
    idx[idx >= n] -= n
    searched = None if nodes is all_nodes else np.fromiter((ni.index for ni in nodes), np.int64, n)
    rows = idx if searched is None else searched[idx]
    result = first[rows]
    special = _nominated_rows(ctx, state, pod, table)
    if special is not None:
        rf = ResourceFilter.for_cycle(fwk, state, pod)
        positions = np.flatnonzero(row_mask(table.n, special)[rows])
        codes = _nominated_codes(rf, ctx, state, pod, table, ft, rows[positions]) if rf is not None else None
        if codes is not None:   # the first pass's failure where it fails, else the plain Filter's result
            result[positions] = np.where(codes > 0, codes, result[positions])
        else:
            for pos in positions.tolist():
                st = fwk.run_filter_with_nominated_pods(state, pod, all_nodes[rows[pos]], ctx.nominated_pods_for_node,
                                                        rf)
                result[pos] = 0 if st is None else ft.add(st)
    pass_pos = np.flatnonzero(result == 0)
    cut = int(pass_pos[num_to_find]) if len(pass_pos) > num_to_find else n
    is_error = np.array([False] + [st.code == Code.ERROR for st in ft.statuses])
    errors = np.flatnonzero(is_error[result[:cut]])
    names = table.names if nodes is all_nodes else [ni.name for ni in nodes]
    if len(errors):
        j = int(errors[0])
        ft.search = (searched, start, j + 1)
        _set_search_trace(tr, names, start, j + 1, None)
        tr.error = ft.status(int(result[j])).as_error()
        return []
    rej = np.flatnonzero(result[:cut] != 0)
    ft.search = (searched, start, cut + 1 if cut < n else n)
    _set_search_trace(tr, names, start, ft.search[2],
                      Rejections(nodes, [idx[rej]], [result[rej] - 1], ft.statuses, rows=rows[rej]))
    kept = pass_pos[:num_to_find]
    ft.feasible_rows = rows[kept]
    return [nodes[i] for i in idx[kept].tolist()]


def _run_extender_filters(ctx, pod, feasible, tr):
    """Filter extenders run after the Filter plugins, each on the survivors of the previous one."""
    for ext in ctx.extenders:
        if not feasible:
            break
        feasible = ext.filter_into_trace(pod, feasible, tr)
        if tr.error:
            return []
    return feasible


def _prioritize(fwk, ctx, state, pod, feasible, tr, snapshot=None):
    t0 = time.perf_counter()
    if not fwk.score and not ctx.extenders:
        totals = [1] * len(feasible)
        tr.totals = {ni.name: 1 for ni in feasible}
        return totals
    st = fwk.run_pre_score(state, pod, feasible)
    tr.durations["PreScore"] = time.perf_counter() - t0
    tr.prescore_skip_plugins = sorted(state.skip_score_plugins)
    if st is not None:
        tr.error = st.as_error()
        return None
    table = snapshot.table() if ctx.batch and snapshot is not None else None
    per_plugin, totals, st = fwk.run_score(state, pod, feasible, tr.durations, table=table)
    if st is not None:
        tr.error = st.as_error()
        return None
    names = tr.feasible
    if ctx.extenders and isinstance(totals, np.ndarray):
        totals = totals.tolist()
    for ext in ctx.extenders:
        ext.prioritize_into_trace(pod, feasible, totals, tr)
        if tr.error:   # the call was canceled
            return None
    tr.set_scores(names, {plugin: (fwk.score_weights[plugin], raw, normalized)
                          for plugin, (raw, normalized) in per_plugin.items()}, totals)
    return totals
