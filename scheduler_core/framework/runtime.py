"""The per-profile framework runtime: calls plugins at each extension point (framework/runtime)."""
from __future__ import annotations

import time
from collections import Counter

import numpy as np

from ..lazy import LazyDict
from .filter_table import FilterTable, StatusPool, distinct_codes, fill_first
from .batch import OpportunisticBatch
from .handle import features_of
from .interface import MAX_NODE_SCORE, MIN_NODE_SCORE, POINT_INTERFACES, Placement
from .node_table import row_mask
from .resource_filter import ResourceFilter, nominated_pods_to_add  # noqa: F401 (also imported from here)
from .status import Code, Status

PREFILTER_RESULT_MSG = "node is filtered out by the prefilter result"
MAX_PERMIT_TIMEOUT = 15 * 60.0


def _score_per_node(pl, state, pod, node_infos):
    """One plugin's raw scores without a batch table: its ``score_nodes`` or ``score`` per node.
    Returns (scores, None) or (None, kube's wrapped Error status)."""
    batch = getattr(pl, "score_nodes", None)
    if batch is not None:
        raw, st = batch(state, pod, node_infos)
        if st is not None and st.code != Code.SUCCESS:
            return None, Status.error(f'running Score plugins: plugin "{pl.name}" failed with: {st.as_error()}',
                                      plugin=pl.name)
        return raw, None
    raw = []
    for ni in node_infos:
        score, st = pl.score(state, pod, ni)
        if st is not None and st.code != Code.SUCCESS:
            return None, Status.error(f'running Score plugins: plugin "{pl.name}" failed with: {st.as_error()}',
                                      plugin=pl.name)
        raw.append(score)
    return raw, None


def _int_array(values):
    """An int64 array of Python ints, or None when one does not fit (the list path then decides)."""
    try:
        return np.array(values, dtype=np.int64)
    except (OverflowError, TypeError, ValueError):
        return None


class Rejections:
    """The rejected nodes of a batch Filter search, in visiting order, without per-node objects:
    positions in the searched node list and, per node, the index of its Status in ``statuses``; ``rows``, when
    given, the nodes' NodeTable rows (trace mode: what the recorder's column form reads)."""

    __slots__ = ("nodes", "positions", "groups", "statuses", "rows", "_counts")

    def __init__(self, nodes, positions, groups, statuses, rows=None):
        self.nodes = nodes
        self.positions = np.concatenate(positions) if positions else np.zeros(0, np.int64)
        self.groups = np.concatenate(groups) if groups else np.zeros(0, np.int64)
        self.statuses = statuses
        self.rows = rows
        self._counts = None

    def __len__(self):
        return len(self.positions)

    def names(self) -> list:
        nodes = self.nodes
        return [nodes[i].name for i in self.positions.tolist()]

    def status_list(self) -> list:
        statuses = self.statuses
        return [statuses[g] for g in self.groups.tolist()]

    def as_dict(self) -> dict:
        """{node name: Status} in visiting order."""
        return dict(zip(self.names(), self.status_list()))

    def distinct(self) -> list:
        """The Statuses of these nodes, each once."""
        statuses = self.statuses
        return [statuses[g] for g in distinct_codes(self.groups)]

    def counts(self) -> list:
        """(index in ``statuses``, number of nodes) of each Status, in the order of their first node (counted
        once: the FitError message and the recorder's encoding both read them)."""
        if self._counts is None:
            self._counts = self._count()
        return self._counts

    def _count(self) -> list:
        groups = self.groups
        counts = np.bincount(groups, minlength=len(self.statuses)) if len(groups) else np.zeros(0, np.int64)
        present = np.flatnonzero(counts).tolist()
        if len(present) > 32:   # many statuses: one sort instead of a pass per status
            present, firsts = np.unique(groups, return_index=True)
            present = present[np.argsort(firsts, kind="stable")].tolist()
        elif len(present) > 1:
            present.sort(key=lambda g: int(np.argmax(groups == g)))
        return [(g, int(counts[g])) for g in present]

    def stopped_at(self) -> dict:
        """{node name: plugin} for the rejected nodes whose Status names a plugin."""
        return {name: st.plugin for name, st in zip(self.names(), self.status_list()) if st.plugin}


def status_counts(node_statuses) -> list:
    """(Status, number of nodes) of a trace's node statuses, in the order of their first node: from the search's
    Rejections while their LazyDict is not built, else counted from the dict (nodes share Status objects)."""
    rejections = node_statuses.unbuilt_source() if isinstance(node_statuses, LazyDict) else None
    if rejections is not None:
        return [(rejections.statuses[g], n) for g, n in rejections.counts()]
    return list(Counter(node_statuses.values()).items())


class Framework:
    """One scheduling profile: ordered plugins per extension point, score weights, and how to run them."""

    def __init__(self, profile_name: str, plugins: dict, score_weights: dict, handle=None,
                 percentage_of_nodes_to_score=None, plugin_args=None, placement_score_weights=None):
        self.profile_name = profile_name
        self.handle = handle
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.plugin_args = plugin_args or {}
        for point in POINT_INTERFACES:
            plugins.setdefault(point, [])
        self.plugins = plugins
        self.pre_enqueue = plugins["PreEnqueue"]
        self.queue_sort = plugins["QueueSort"]
        self.pre_filter = plugins["PreFilter"]
        self.filter = plugins["Filter"]
        self.post_filter = plugins["PostFilter"]
        self.pre_score = plugins["PreScore"]
        self.score = plugins["Score"]
        self.reserve = plugins["Reserve"]
        self.permit = plugins["Permit"]
        self.pre_bind = plugins["PreBind"]
        self.bind = plugins["Bind"]
        self.post_bind = plugins["PostBind"]
        self.placement_generate = plugins["PlacementGenerate"]
        self.placement_score = plugins["PlacementScore"]
        self.score_weights = score_weights
        self.placement_score_weights = placement_score_weights or {}
        self._pre_filter_ext = [(p.name, p.pre_filter_extensions()) for p in self.pre_filter]
        self._pre_filter_ext = [(n, e) for n, e in self._pre_filter_ext if e is not None]
        self._signers = False   # computed at the first signature (the handle's extenders are set by then)
        self.batch = OpportunisticBatch(self)

    def signers(self):
        """computeBatchablePlugins: the PreFilter, Filter, PreScore and Score plugins (each once) that sign pods,
        or None when one of them cannot (no ``sign_pod``) or the scheduler has extenders."""
        if self._signers is False:
            plugins = list(dict.fromkeys(self.pre_filter + self.filter + self.pre_score + self.score))
            unsigned = any(getattr(pl, "sign_pod", None) is None for pl in plugins)
            extenders = self.handle is not None and self.handle.extenders
            self._signers = None if unsigned or extenders else plugins
        return self._signers

    # -- introspection -----------------------------------------------------------------------
    def list_plugins(self) -> dict:
        """Effective plugin lists, in the shape of the golden files' ``plugins`` field."""
        return {
            "prefilter": [p.name for p in self.pre_filter],
            "filter": [p.name for p in self.filter],
            "prescore": [p.name for p in self.pre_score],
            "score": [{"name": p.name, "weight": self.score_weights[p.name]} for p in self.score],
            "postfilter": [p.name for p in self.post_filter],
        }

    def has_filter_plugins(self) -> bool:
        return bool(self.filter)

    def has_score_plugins(self) -> bool:
        return bool(self.score)

    def get_plugin(self, name: str):
        for plugins in self.plugins.values():
            for p in plugins:
                if p.name == name:
                    return p
        return None

    # -- queueing ----------------------------------------------------------------------------
    def queue_sort_less(self, a, b) -> bool:
        return self.queue_sort[0].less(a, b)

    def run_pre_enqueue(self, pod):
        for pl in self.pre_enqueue:
            st = pl.pre_enqueue(pod)
            if st is not None and st.code != Code.SUCCESS:
                st.plugin = pl.name
                return st
        return None

    # -- filtering ---------------------------------------------------------------------------
    def run_pre_filter(self, state, pod, record=None):
        """RunPreFilterPlugins. Returns (node-name set or None, status). ``record`` gets per-plugin results."""
        result = None
        narrowed_by = []
        rejected = None
        for pl in self.pre_filter:
            t0 = time.perf_counter()
            try:
                res, st = pl.pre_filter(state, pod)
            except Exception as exc:  # a plugin crash is a cycle error, as a Go error would be
                st, res = Status.error(f"{type(exc).__name__}: {exc}"), None
            if record is not None:
                record[pl.name] = (res, st, time.perf_counter() - t0)
            code = Code.SUCCESS if st is None else st.code
            if code == Code.SKIP:
                state.skip_filter_plugins.add(pl.name)
                continue
            if code == Code.SUCCESS:
                if res is not None:
                    narrowed_by.append(pl.name)
                    result = set(res) if result is None else result & set(res)
                    if not result:
                        if len(narrowed_by) == 1:
                            msg = f"node(s) didn't satisfy plugin {narrowed_by[0]}"
                        else:
                            msg = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowed_by)}] simultaneously"
                        # v1.30 names no plugin here (the narrowing plugins join UnschedulablePlugins in v1.31)
                        return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
                continue
            st.plugin = pl.name
            if code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return None, st
            if code in (Code.UNSCHEDULABLE, Code.PENDING):
                if rejected is None:
                    rejected = st
                continue
            return None, Status.error(f'running PreFilter plugin "{pl.name}": {st.as_error()}', plugin=pl.name)
        return result, rejected

    def run_filter(self, state, pod, node_info):
        """RunFilterPlugins: stop at the first plugin that does not return Success."""
        skip = state.skip_filter_plugins
        for pl in self.filter:
            if pl.name in skip:
                continue
            st = pl.filter(state, pod, node_info)
            if st is not None and st.code != Code.SUCCESS:
                st.plugin = pl.name
                if not st.is_rejected():
                    return Status.error(f'running "{pl.name}" filter plugin: {st.as_error()}', plugin=pl.name)
                return st
        return None

    def run_filter_traced(self, state, pod, node_info, durations):
        """Trace mode: every filter plugin on the node. Returns (framework status, {plugin: status})."""
        skip = state.skip_filter_plugins
        first = None
        per_plugin = {}
        for pl in self.filter:
            if pl.name in skip:
                per_plugin[pl.name] = Status(Code.SKIP, plugin=pl.name)
                continue
            t0 = time.perf_counter()
            try:
                st = pl.filter(state, pod, node_info)
            except Exception as exc:
                st = Status.error(f"{type(exc).__name__}: {exc}")
            durations[pl.name] = durations.get(pl.name, 0.0) + time.perf_counter() - t0
            if st is not None and st.code != Code.SUCCESS:
                st.plugin = pl.name
                if first is None:
                    first = st if st.is_rejected() else Status.error(
                        f'running "{pl.name}" filter plugin: {st.as_error()}', plugin=pl.name)
            per_plugin[pl.name] = st
        return first, per_plugin

    def run_filter_table(self, state, pod, table, durations) -> tuple:
        """Trace mode over NodeTable rows: every Filter plugin on every row, as run_filter_traced gives
        per node (a skipped plugin's cells are Skip). Returns (FilterTable, each row's Filter result as a
        code of its statuses, 0 when every plugin passes). A plugin's ``filter_batch_statuses`` or
        ``filter_batch`` decides all rows at once; rows a mask rejects get the plugin's
        ``filter_batch_status`` or, without it, their Status from ``filter``; a plugin with neither (or
        whose batch declines) runs ``filter`` per row."""
        n = table.n
        rows = table.rows
        infos = table.infos
        skip = state.skip_filter_plugins
        pool = StatusPool()
        columns = []
        first = np.zeros(n, np.int32)
        for pl in self.filter:
            name = pl.name
            if name in skip:
                columns.append(pool.code(name, Code.SKIP, ()))
                continue
            t0 = time.perf_counter()
            col = self._filter_column(pl, state, pod, table, rows, infos, pool)
            if not isinstance(col, int) and not np.count_nonzero(col):
                col = 0
            fill_first(first, col, pool, name)
            columns.append(col if isinstance(col, int) else col.astype(np.int16))
            durations[name] = durations.get(name, 0.0) + time.perf_counter() - t0
        return FilterTable(table.names, [pl.name for pl in self.filter], columns, pool.statuses), first

    @staticmethod
    def _filter_column(pl, state, pod, table, rows, infos, pool):
        """One plugin's codes over every row (see run_filter_table)."""
        name = pl.name
        kf = getattr(pl, "filter_batch_statuses", None)
        res = kf(state, pod, table, rows) if kf is not None else None
        if res is not None:
            kinds, kind_statuses = res
            shifted = kinds.astype(np.intp) + 1      # 0: passes, k + 1: kind k
            used = distinct_codes(shifted)
            if used == [0]:
                return 0
            lut = np.zeros(used[-1] + 1, np.int32)
            for k in used:
                if k:
                    code, reasons = kind_statuses[k - 1]
                    lut[k] = pool.code(name, code, tuple(reasons))
            return lut[shifted]
        fb = getattr(pl, "filter_batch", None)
        mask = fb(state, pod, table, rows) if fb is not None else None
        col = np.zeros(len(rows), np.int32)
        if mask is not None:
            failed = np.flatnonzero(mask)
            if not len(failed):
                return col
            fs = getattr(pl, "filter_batch_status", None)
            same = fs(state, pod) if fs is not None else None
            if same is not None:
                col[failed] = pool.code(name, same[0], tuple(same[1]))
                return col
            todo = failed.tolist()
        else:
            todo = range(len(rows))
        for r in todo:
            try:
                st = pl.filter(state, pod, infos[r])
            except Exception as exc:
                st = Status.error(f"{type(exc).__name__}: {exc}")
            col[r] = pool.code_of(name, st)
        return col

    def run_filter_batch(self, state, pod, nodes, rows_all, start: int, num_to_find: int, table,
                         nominated_rows=None, nominated_pods_for_node=None, nominated_sums=None):
        """The Filter search of findNodesThatPassFilters (one worker) over NodeTable rows.

        ``nodes`` are searched in kube's rotating order from ``start``; ``rows_all[i]`` is the table row of
        ``nodes[i]`` (None: the same index). Windows of that order are taken until ``num_to_find``
        feasible nodes and one more are found (kube's one-extra rule) or the nodes run out. In a window,
        the plugins run in order on the nodes still alive: a plugin's ``filter_batch(state, pod, table,
        rows)`` gives the rows that fail (or None: then its ``filter`` runs per node). A plugin with
        ``filter_batch_statuses(state, pod, table, rows)`` gives instead ``(kinds, statuses)``: per row
        -1 (passes) or the index in ``statuses`` of the (code, reasons) it rejects the row with. Rows in
        ``nominated_rows`` take the per-node path with nominated pods, unless the Filter has a ResourceFilter and
        ``nominated_sums`` (resource_filter.nominated_requests) is given: then they stay in the batch and the
        pass with the nominated pods is one more ``filter_batch_statuses`` of the resources plugin on the sums
        (``_nominated_pass``). A processed node that a batch
        rejected gets its exact Status from that plugin's ``filter``, or, when the plugin's
        ``filter_batch_status(state, pod)`` gives the (code, reasons) of every rejection for this pod
        (or its row's kind does), a new Status with those.

        Returns (feasible NodeInfos, the processed rejected nodes as Rejections (None after an error),
        number of nodes visited, error Status or None); like the sequential search, the visited nodes
        include the extra feasible node that ended it. Rejected nodes that a plugin rejects for the same
        reasons share one Status object.
        """
        n = len(nodes)
        start %= n
        skip = state.skip_filter_plugins
        plugins = [pl for pl in self.filter if pl.name not in skip]
        batch = [getattr(pl, "filter_batch", None) for pl in plugins]
        kinds_of = [getattr(pl, "filter_batch_statuses", None) for pl in plugins]
        feasible = []
        same = {}  # plugin position -> (code, reasons) every row it rejects gets, or None
        statuses = []  # the distinct Statuses of the rejected nodes
        rej_pos, rej_gid = [], []  # per window: positions in nodes, index in statuses
        group_of = {}

        def shared(p, name, code_reasons):
            """The index of the one Status of every row plugin ``p`` rejects with ``code_reasons``."""
            g = group_of.get((p, code_reasons))
            if g is None:
                g = group_of[(p, code_reasons)] = len(statuses)
                statuses.append(Status(code_reasons[0], *code_reasons[1], plugin=name))
            return g
        nominated_pass = self._nominated_pass(state, pod, table, plugins, nominated_sums) \
            if nominated_rows is not None and len(nominated_rows) else None
        position = {pl.name: p for p, pl in enumerate(plugins)} if nominated_pass is not None else None
        is_nominated = None
        if nominated_rows is not None and len(nominated_rows):
            is_nominated = row_mask(table.n, nominated_rows)
        found = visited = pos = 0
        ratio = 1.0
        while pos < n:
            need = num_to_find + 1 - found
            w = min(n - pos, max(need + 8, int(need / max(ratio, 0.02) * 1.15) + 8))
            idx = np.arange(start + pos, start + pos + w, dtype=np.int64)
            idx[idx >= n] -= n
            rows = idx if rows_all is None else rows_all[idx]
            alive = np.ones(w, bool)
            failed_by = np.full(w, -1, np.int64)
            kind = None
            kind_statuses = {}
            status_of = {}
            special = ()
            if is_nominated is not None:
                special = np.flatnonzero(is_nominated[rows])
                if nominated_pass is None:
                    alive[special] = False
            for p, pl in enumerate(plugins):
                cand = np.flatnonzero(alive)
                if not len(cand):
                    break
                kf = kinds_of[p]
                res = kf(state, pod, table, rows[cand]) if kf is not None else None
                if res is not None:
                    kinds, kind_statuses[p] = res
                    m = kinds >= 0
                    f = cand[m]
                    alive[f] = False
                    failed_by[f] = p
                    if kind is None:
                        kind = np.full(w, -1, np.int64)
                    kind[f] = kinds[m]
                    continue
                fb = batch[p]
                m = fb(state, pod, table, rows[cand]) if fb is not None else None
                if m is not None:
                    f = cand[m]
                    alive[f] = False
                    failed_by[f] = p
                    continue
                for j in cand.tolist():
                    st = pl.filter(state, pod, nodes[idx[j]])
                    if st is not None and st.code != Code.SUCCESS:
                        st.plugin = pl.name
                        if not st.is_rejected():
                            st = Status.error(f'running "{pl.name}" filter plugin: {st.as_error()}', plugin=pl.name)
                        status_of[j] = st
                        alive[j] = False
            passed = alive
            if nominated_pass is not None and len(special):
                fit, extra, extra_pods = nominated_pass
                more = extra[rows[special]]
                r = rows[special]
                kinds_with, fit_statuses = plugins[fit].filter_batch_statuses(
                    state, pod, table, r, (table.req_cpu[r] + more[:, 0], table.req_memory[r] + more[:, 1],
                                           table.req_ephemeral[r] + more[:, 2], table.pod_count[r] + extra_pods[r]))
                first = failed_by[special].copy()   # the plain Filter's failing plugin (-1: passed or per node)
                for i, j in enumerate(special.tolist()):
                    if j in status_of:
                        first[i] = position[status_of[j].plugin]
                override = (kinds_with >= 0) & ((first < 0) | (first >= fit))
                if np.count_nonzero(override):
                    o = special[override]
                    if kind is None:
                        kind = np.full(w, -1, np.int64)
                    kind[o] = kinds_with[override]
                    kind_statuses[fit] = fit_statuses
                    failed_by[o] = fit
                    passed[o] = False
                    for j in o.tolist():
                        status_of.pop(j, None)
                special = ()
            rf = ResourceFilter.for_cycle(self, state, pod) if len(special) else None
            for j in special:
                st = self.run_filter_with_nominated_pods(state, pod, nodes[idx[j]], nominated_pods_for_node, rf)
                if st is None:
                    passed[j] = True
                else:
                    status_of[j] = st
            pass_pos = np.flatnonzero(passed)
            keep = num_to_find - found
            cut = int(pass_pos[keep]) if len(pass_pos) > keep else w
            errors = [j for j, st in status_of.items() if j < cut and st.code == Code.ERROR]
            if errors:
                return [], None, visited + min(errors) + 1, status_of[min(errors)]
            feasible.extend([nodes[i] for i in idx[pass_pos[:keep]].tolist()])
            rej = np.flatnonzero(~passed[:cut])
            if len(rej):
                gid = np.empty(len(rej), np.int64)
                by = failed_by[rej]
                errors = []
                for p in np.unique(by).tolist():
                    sel = np.flatnonzero(by == p)
                    if p < 0:  # decided per node: the statuses status_of holds
                        for i in sel.tolist():
                            gid[i] = len(statuses)
                            statuses.append(status_of[int(rej[i])])
                        continue
                    pl = plugins[p]
                    if p in kind_statuses:
                        ks = kind[rej[sel]]
                        for k in distinct_codes(ks):
                            gid[sel[ks == k]] = shared(p, pl.name, kind_statuses[p][k])
                        continue
                    if p not in same:
                        fs = getattr(pl, "filter_batch_status", None)
                        same[p] = fs(state, pod) if fs is not None else None
                    if same[p] is not None:
                        gid[sel] = shared(p, pl.name, same[p])
                        continue
                    for i in sel.tolist():
                        j = int(rej[i])
                        ni = nodes[idx[j]]
                        st = pl.filter(state, pod, ni)
                        if st is None or st.code == Code.SUCCESS:
                            raise RuntimeError(f"{pl.name}: filter_batch rejected node {ni.name} but filter passes it")
                        st.plugin = pl.name
                        if not st.is_rejected():
                            errors.append((j, Status.error(f'running "{pl.name}" filter plugin: {st.as_error()}',
                                                           plugin=pl.name)))
                            continue
                        gid[i] = len(statuses)
                        statuses.append(st)
                if errors:
                    j, st = min(errors, key=lambda e: e[0])
                    return [], None, visited + j + 1, st
                rej_pos.append(idx[rej])
                rej_gid.append(gid)
            found += min(keep, len(pass_pos))
            if cut < w:
                visited += cut + 1
                break
            visited += w
            pos += w
            ratio = max(found, 1) / (pos + 1)
        return feasible, Rejections(nodes, rej_pos, rej_gid, statuses), visited, None

    def _nominated_pass(self, state, pod, table, plugins, nominated_sums):
        """(position of the resources plugin in ``plugins``, the nominated pods' summed requests per row, their
        number per row) when run_filter_batch can run the pass with the nominated pods on sums, else None: the
        Filter has a ResourceFilter whose one "resources" plugin has ``filter_batch_statuses`` for this pod."""
        if not nominated_sums or ResourceFilter.for_cycle(self, state, pod) is None:
            return None
        found = [p for p, pl in enumerate(plugins) if pl.filter_depends_on == "resources"]
        if len(found) != 1:
            return None
        batch = getattr(plugins[found[0]], "filter_batch_statuses", None)
        none = np.zeros(0, np.int64)
        if batch is None or batch(state, pod, table, none, (none, none, none, none)) is None:
            return None
        return (found[0], *nominated_sums)

    def has_pre_filter_extensions(self, state) -> bool:
        """Whether AddPod / RemovePod would reach a PreFilter extension (one not skipped in ``state``).
        Without one, a dry run can use ``state`` itself instead of a clone: Filter plugins change nothing
        that a clone would copy (their only writes are VolumeBinding's per-node results, in data that
        clones share as in kube, and node-independent caches)."""
        skip = state.skip_filter_plugins
        for name, _ext in self._pre_filter_ext:
            if name not in skip:
                return True
        return False

    def run_pre_filter_extension_add_pod(self, state, pod, pod_to_add, node_info):
        for name, ext in self._pre_filter_ext:
            if name in state.skip_filter_plugins:
                continue
            st = ext.add_pod(state, pod, pod_to_add, node_info)
            if st is not None and st.code != Code.SUCCESS:
                return Status.error(f'running AddPod on PreFilter plugin "{name}": {st.as_error()}', plugin=name)
        return None

    def run_pre_filter_extension_remove_pod(self, state, pod, pod_to_remove, node_info):
        for name, ext in self._pre_filter_ext:
            if name in state.skip_filter_plugins:
                continue
            st = ext.remove_pod(state, pod, pod_to_remove, node_info)
            if st is not None and st.code != Code.SUCCESS:
                return Status.error(f'running RemovePod on PreFilter plugin "{name}": {st.as_error()}',
                                    plugin=name)
        return None

    def run_filter_with_nominated_pods(self, state, pod, node_info, nominated_pods_for_node=None,
                                       resource_filter=None):
        """RunFilterPluginsWithNominatedPods (§1.2.2): fit with and without higher-priority nominees. The pass
        with them runs on sums when it can (``resource_filter``: the cycle's ResourceFilter, if the caller has
        one)."""
        nominated = nominated_pods_to_add(pod, node_info.name, nominated_pods_for_node)
        if not nominated:
            return self.run_filter(state, pod, node_info)
        rf = resource_filter or ResourceFilter.for_cycle(self, state, pod)
        if rf is not None:
            st = rf.status_with_pods(node_info, nominated)
            return st if st is not None else self.run_filter(state, pod, node_info)
        state_out = state.clone() if self.has_pre_filter_extensions(state) else state
        info_out = node_info.clone()
        for p in nominated:
            info_out.add_pod(p)
            st = self.run_pre_filter_extension_add_pod(state_out, pod, p, info_out)
            if st is not None:
                return st
        st = self.run_filter(state_out, pod, info_out)
        if st is not None:
            return st
        return self.run_filter(state, pod, node_info)

    def run_post_filter(self, state, pod, node_statuses):
        """RunPostFilterPlugins: the first Success or U&U stops; Unschedulable reasons accumulate."""
        result = None
        reasons = []
        rejector = ""
        for pl in self.post_filter:
            res, st = pl.post_filter(state, pod, node_statuses)
            code = Code.SUCCESS if st is None else st.code
            if code == Code.SUCCESS:
                return res, st
            st.plugin = pl.name
            if code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return res, st
            if not st.is_rejected():
                return None, Status.error(st.as_error(), plugin=pl.name)  # kube does not wrap this one
            reasons.extend(st.reasons)
            rejector = rejector or pl.name
            if res is not None and res.mode != "noop":
                result = res
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    # -- scoring -----------------------------------------------------------------------------
    def run_pre_score(self, state, pod, node_infos, record=None):
        for pl in self.pre_score:
            st = pl.pre_score(state, pod, node_infos)
            code = Code.SUCCESS if st is None else st.code
            if code == Code.SKIP:
                state.skip_score_plugins.add(pl.name)
                continue
            if code != Code.SUCCESS:
                return Status.error(f'running PreScore plugin "{pl.name}": {st.as_error()}', plugin=pl.name)
        return None

    def run_score(self, state, pod, node_infos, durations=None, table=None):
        """RunScorePlugins: all plugins score all nodes, then NormalizeScore, then the weights are applied;
        an error of an earlier phase wins. Returns ({plugin: (raw list, normalized list)}, totals list, status).

        With a NodeTable (whose rows are the NodeInfos' ``index``), plugins with ``score_batch`` /
        ``normalize_score_batch`` score all nodes at once and the lists are int64 arrays."""
        if table is not None:
            return self._run_score_batch(state, pod, node_infos, durations, table)
        plugins = [pl for pl in self.score if pl.name not in state.skip_score_plugins]
        raws = []
        for pl in plugins:
            t0 = time.perf_counter()
            raw, st = _score_per_node(pl, state, pod, node_infos)
            if st is not None:
                return None, None, st
            raws.append(raw)
            if durations is not None:
                durations[pl.name] = durations.get(pl.name, 0.0) + time.perf_counter() - t0
        per_plugin = {}
        for pl, raw in zip(plugins, raws):
            ext = pl.score_extensions()
            if ext is not None:
                t0 = time.perf_counter()
                pairs = [[ni.name, s] for ni, s in zip(node_infos, raw)]
                st = ext.normalize_score(state, pod, pairs)
                if st is not None and st.code != Code.SUCCESS:
                    return None, None, Status.error(
                        f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {st.as_error()}',
                        plugin=pl.name)
                normalized = [s for _, s in pairs]
                if durations is not None:
                    durations[pl.name] += time.perf_counter() - t0
            else:
                normalized = list(raw)
            per_plugin[pl.name] = (raw, normalized)
        totals = [0] * len(node_infos)
        for pl in plugins:
            weight = self.score_weights[pl.name]
            for i, s in enumerate(per_plugin[pl.name][1]):
                if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE:
                    return None, None, Status.error(
                        f'applying score defaultWeights on Score plugins: plugin "{pl.name}" returns an invalid '
                        f'score {s}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after '
                        f'normalizing', plugin=pl.name)
                totals[i] += s * weight
        return per_plugin, totals, None

    def _run_score_batch(self, state, pod, node_infos, durations, table):
        plugins = [pl for pl in self.score if pl.name not in state.skip_score_plugins]
        rows = np.fromiter((ni.index for ni in node_infos), dtype=np.int64, count=len(node_infos))
        raws = []
        for pl in plugins:
            t0 = time.perf_counter()
            sb = getattr(pl, "score_batch", None)
            raw = sb(state, pod, table, rows) if sb is not None else None
            if raw is None:
                raw, st = _score_per_node(pl, state, pod, node_infos)
                if st is not None:
                    return None, None, st
                raw = _int_array(raw)
                if raw is None:
                    return self.run_score(state, pod, node_infos, durations)
            raws.append(raw)
            if durations is not None:
                durations[pl.name] = durations.get(pl.name, 0.0) + time.perf_counter() - t0
        per_plugin = {}
        for pl, raw in zip(plugins, raws):
            ext = pl.score_extensions()
            if ext is not None:
                t0 = time.perf_counter()
                nb = getattr(ext, "normalize_score_batch", None)
                normalized = nb(state, pod, raw) if nb is not None else None
                if normalized is None:
                    pairs = [[ni.name, s] for ni, s in zip(node_infos, raw.tolist())]
                    st = ext.normalize_score(state, pod, pairs)
                    if st is not None and st.code != Code.SUCCESS:
                        return None, None, Status.error(
                            f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {st.as_error()}',
                            plugin=pl.name)
                    normalized = _int_array([s for _, s in pairs])
                    if normalized is None:
                        return self.run_score(state, pod, node_infos, durations)
                if durations is not None:
                    durations[pl.name] += time.perf_counter() - t0
            else:
                normalized = raw
            per_plugin[pl.name] = (raw, normalized)
        totals = np.zeros(len(node_infos), np.int64)
        for pl in plugins:
            weight = self.score_weights[pl.name]
            normalized = per_plugin[pl.name][1]
            bad = np.flatnonzero((normalized > MAX_NODE_SCORE) | (normalized < MIN_NODE_SCORE))
            if len(bad):
                s = int(normalized[bad[0]])
                return None, None, Status.error(
                    f'applying score defaultWeights on Score plugins: plugin "{pl.name}" returns an invalid '
                    f'score {s}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after '
                    f'normalizing', plugin=pl.name)
            totals += normalized * weight
        return per_plugin, totals, None

    # -- reserve, permit, binding ------------------------------------------------------------
    def run_reserve(self, state, pod, node_name):
        for pl in self.reserve:
            st = pl.reserve(state, pod, node_name)
            if st is not None and st.code != Code.SUCCESS:
                st.plugin = pl.name
                if st.is_rejected():
                    return st
                return Status.error(f'running Reserve plugin "{pl.name}": {st.as_error()}', plugin=pl.name)
        return None

    def run_unreserve(self, state, pod, node_name):
        for pl in reversed(self.reserve):
            pl.unreserve(state, pod, node_name)

    def run_permit(self, state, pod, node_name):
        """Returns (status, {plugin: timeout}) ; status Wait when some plugin asked to wait."""
        waits, wait_status = {}, None
        for pl in self.permit:
            st, timeout = pl.permit(state, pod, node_name)
            code = Code.SUCCESS if st is None else st.code
            if code == Code.SUCCESS:
                continue
            st.plugin = pl.name
            if st.is_rejected():
                return st, {}
            if code == Code.WAIT:
                waits[pl.name] = min(float(timeout or 0), MAX_PERMIT_TIMEOUT)
                wait_status = st
                continue
            return Status.error(f'running Permit plugin "{pl.name}": {st.as_error()}', plugin=pl.name), {}
        if not waits:
            return None, {}
        if features_of(self.handle).has("permit-wait-reason"):
            return Status(Code.WAIT, *wait_status.reasons, "one or more plugins asked to wait and no plugin "
                          "rejected pod", plugin=wait_status.plugin), waits
        return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'), waits

    # -- pod-group placements ------------------------------------------------------------------
    def run_placement_generate(self, state, pod_group, nodes):
        """RunPlacementGeneratePlugins: ([Placement], None), or (None, status). Without a plugin, one placement
        of every node."""
        parent = Placement("", nodes)
        if not self.placement_generate:
            return [parent], None
        pl = self.placement_generate[0]
        placements, st = pl.generate_placements(state, pod_group, parent)
        if st is not None and st.code != Code.SUCCESS:
            return None, st.with_plugin(pl.name)
        if not placements:
            return None, Status(Code.UNSCHEDULABLE, "no feasible placements found", plugin=pl.name)
        return placements, None

    def run_placement_score(self, state, pod_group, assignments):
        """RunPlacementScorePlugins: ([(placement, [(plugin, weighted score)], total)], None) in the order of
        ``assignments`` (PodGroupAssignments), or (None, error status)."""
        per_plugin = {}
        for pl in self.placement_score:
            scores = []
            for pga in assignments:
                score, st = pl.score_placement(state, pod_group, pga)
                if st is not None and st.code != Code.SUCCESS:
                    return None, Status.error(f'running PlacementScore plugins: plugin "{pl.name}" failed with: '
                                              f'{st.as_error()}')
                scores.append([pga.placement, score])
            per_plugin[pl.name] = scores
        for pl in self.placement_score:
            ext = pl.placement_score_extensions()
            if ext is None:
                continue
            st = ext.normalize_placement_score(state, pod_group, per_plugin[pl.name])
            if st is not None and st.code != Code.SUCCESS:
                return None, Status.error(f'running NormalizePlacementScore on PlacementScore plugins: plugin '
                                          f'"{pl.name}" failed with: {st.as_error()}')
        out = []
        for i, pga in enumerate(assignments):
            scores, total = [], 0
            for pl in self.placement_score:
                score = per_plugin[pl.name][i][1]
                if score > MAX_NODE_SCORE or score < MIN_NODE_SCORE:
                    return None, Status.error(
                        f'applying score defaultWeights on PlacementScore plugins: plugin "{pl.name}" returns an '
                        f'invalid score {score}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] '
                        f'after normalizing')
                weighted = score * self.placement_score_weights[pl.name]
                scores.append((pl.name, weighted))
                total += weighted
            out.append((pga.placement, scores, total))
        return out, None

    def run_pre_bind_pre_flights(self, state, pod, node_name):
        """RunPreBindPreFlights: None when some plugin's PreBind will act, Skip when none will, else an Error. The
        plugins that answer Skip are not called at PreBind."""
        result = Status(Code.SKIP)
        skip = set()
        for pl in self.pre_bind:
            st = pl.pre_bind_pre_flight(state, pod, node_name)
            code = Code.SUCCESS if st is None else st.code
            if code == Code.ERROR:
                return Status.error(f'running PreBindPreFlight "{pl.name}": {st.as_error()}')
            if code == Code.SUCCESS:
                result = None
            elif code == Code.SKIP:
                skip.add(pl.name)
            else:
                return Status.error(f'PreBindPreFlight {pl.name} returned "{code}", which is unsupported. It is '
                                    f'supposed to return Success, Skip, or Error status')
        state.skip_pre_bind_plugins = skip
        return result

    def run_pre_bind(self, state, pod, node_name):
        for pl in self.pre_bind:
            if pl.name in state.skip_pre_bind_plugins:
                continue
            st = pl.pre_bind(state, pod, node_name)
            if st is not None and st.code != Code.SUCCESS:
                st.plugin = pl.name
                if st.is_rejected():
                    return st
                return Status.error(f'running PreBind plugin "{pl.name}": {st.as_error()}', plugin=pl.name)
        return None

    def run_bind(self, state, pod, node_name):
        if not self.bind:
            return Status(Code.SKIP)
        for pl in self.bind:
            st = pl.bind(state, pod, node_name)
            if st is not None and st.code == Code.SKIP:
                continue
            if st is not None and st.code != Code.SUCCESS:
                st.plugin = pl.name
                if st.is_rejected():
                    return st
                return Status.error(f'running Bind plugin "{pl.name}": {st.as_error()}', plugin=pl.name)
            return None
        return Status(Code.SKIP)

    def run_post_bind(self, state, pod, node_name):
        for pl in self.post_bind:
            pl.post_bind(state, pod, node_name)
