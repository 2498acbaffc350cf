"""Why pending pods were rejected, as structure: the (plugin, reason, nodes) chips of a pod's latest attempt and
pending pods grouped by the set of (plugin, reason) they were rejected for.

A chip counts the nodes whose final Filter status (the one kube keeps per node: the first plugin that rejected
it, or the PreFilter's) carries the reason, under the plugin that returned that status; so the chips of an
attempt add up to the histogram of kube's FitError message ("0/50 nodes are available: 41 Insufficient cpu,
...") with each reason attributed to its plugin. Chips come from the cycle's matrix (``tracecodec``: ``final``
status per node, ``stopped`` plugin per node); the stored summary columns alone (``failing_plugins``,
``failing_reasons``: {plugin: nodes}, {reason: nodes}) do not say which plugin returned which reason. A group's
key, the set of (plugin, reason) pairs without counts, is read from those summary columns (their key sets),
which kube's reason strings, each returned by one plugin, determine the pairs of.
"""
from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

from django.db.models import Count, Max, Q

from ..models import Cluster, Pod, SchedulingCycle

# tainttoleration: "node(s) had untolerated taint {key: value}"
_TAINT = re.compile(r"^node\(s\) had untolerated taint \{(?P<key>.*): (?P<value>.*)\}$")
_NODES_PREFIX = "node(s) "


def short_reason(reason: str) -> str:
    """kube's reason without the words every reason repeats: an untolerated taint as its key (``key=value`` when it
    has a value), "node(s) didn't match ..." as "didn't match ..."; other reasons ("Insufficient cpu") as they are."""
    m = _TAINT.match(reason)
    if m:
        return f"{m['key']}={m['value']}" if m["value"] else m["key"]
    return reason[len(_NODES_PREFIX):] if reason.startswith(_NODES_PREFIX) else reason


@dataclass(frozen=True)
class Chip:
    """One reason of a pod's latest attempt: the plugin that returned it, kube's text and on how many nodes."""

    plugin: str
    reason: str
    nodes: int

    @property
    def short(self) -> str:
        return short_reason(self.reason)


def _prefilter_result_plugins(matrix: dict) -> str:
    """The PreFilter plugins whose PreFilterResult (a node set) left nodes out: kube gives those nodes a status
    without a plugin ("node is filtered out by the prefilter result")."""
    plugins = (matrix.get("prefilter") or {}).get("plugins") or {}
    return ", ".join(sorted(name for name, p in plugins.items() if p.get("node_names") is not None))


def chips(matrix: dict) -> list[Chip]:
    """The chips of one recorded cycle (its ``matrix``), most nodes first; [] for a cycle that rejected no node."""
    final, stopped = matrix.get("final") or (), matrix.get("stopped") or ()
    statuses, stop_plugins = matrix.get("statuses") or (), matrix.get("stop_plugins") or ()
    counts: dict[tuple[str, str], int] = {}
    no_plugin = None
    for status_index, plugin_index in zip(final, stopped):
        if status_index <= 0:
            continue
        if plugin_index >= 0:
            plugin = stop_plugins[plugin_index]
        else:
            if no_plugin is None:
                no_plugin = _prefilter_result_plugins(matrix)
            plugin = no_plugin
        for reason in statuses[status_index - 1]["reasons"]:
            counts[plugin, reason] = counts.get((plugin, reason), 0) + 1
    return sorted((Chip(p, r, n) for (p, r), n in counts.items()), key=lambda c: (-c.nodes, c.plugin, c.reason))


def group_key(failing_plugins, failing_reasons) -> tuple:
    """A group's key from a cycle's summary columns: (sorted plugins, sorted reasons), node counts left out."""
    return tuple(sorted(failing_plugins or ())), tuple(sorted(failing_reasons or ()))


def group_param(pairs) -> str:
    """The ``group`` query parameter of a set of (plugin, reason) pairs (JSON, sorted)."""
    return json.dumps(sorted({(p, r) for p, r in pairs}), separators=(",", ":"))


def key_of_pairs(pairs) -> tuple:
    """The group key of (plugin, reason) pairs (as read back from a ``group`` parameter)."""
    return tuple(sorted({p for p, _ in pairs})), tuple(sorted({r for _, r in pairs}))


def _buckets(cluster: Cluster | int, namespace: str = "") -> list:
    """Pending pods (of ``namespace``, if given) counted per distinct FitError message and rejecting plugins (Pod
    columns, one GROUP BY): [{"reason", "plugins", "n", "seq" (the latest cycle), "key" (its group key; None
    unless unschedulable)}]. The message fixes the reasons and their node counts, so pods of one bucket share their
    key."""
    pods = Pod.objects.filter(cluster=cluster, node_name="", last_cycle__isnull=False).exclude(reason="")
    if namespace:
        pods = pods.filter(namespace=namespace)
    buckets = list(pods.values("reason", "plugins").annotate(n=Count("id"), seq=Max("last_cycle")).order_by())
    keys = {seq: group_key(plugins, reasons) for seq, plugins, reasons in SchedulingCycle.objects.filter(
        cluster=cluster, seq__in=[b["seq"] for b in buckets], result=SchedulingCycle.UNSCHEDULABLE)
        .values_list("seq", "failing_plugins", "failing_reasons")}
    for b in buckets:
        b["key"] = keys.get(b["seq"])
    return buckets


def pending_groups(cluster: Cluster | int, limit: int = 10, namespace: str = "") -> dict:
    """Pending pods (of ``namespace``, if given) grouped by the (plugin, reason) pairs of their latest attempt,
    largest first:
    {"groups": [{"n", "chips" (Chip with nodes=0), "param"}], "total": pods in a group, "more": groups left out}.

    Buckets of pods that differ only in node counts ("36 Insufficient memory", "37 Insufficient memory") share a
    key, so they fall into one group. The chips of each shown group's latest cycle pair its plugins with its
    reasons.
    """
    groups: dict[tuple, list] = {}      # key -> [pods, latest seq]
    for b in _buckets(cluster, namespace):
        if b["key"] is not None:
            g = groups.setdefault(b["key"], [0, b["seq"]])
            g[0] += b["n"]
            g[1] = max(g[1], b["seq"])
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1][0], kv[0]))
    shown = ranked[:limit]
    latest = chips_of_cycles(cluster, [g[1] for _, g in shown])
    out = []
    for _key, (n, seq) in shown:
        pairs = [Chip(c.plugin, c.reason, 0) for c in latest.get(seq, ())]
        pairs.sort(key=lambda c: (c.plugin, c.reason))
        out.append({"n": n, "chips": pairs, "param": group_param((c.plugin, c.reason) for c in pairs)})
    return {"groups": out, "total": sum(g[0] for g in groups.values()), "more": len(ranked) - len(shown)}


def in_group(cluster: Cluster | int, pairs) -> Q:
    """Pending pods of the group of these (plugin, reason) pairs: those of its buckets, matched by their
    messages and plugins (two IN lists: one pass over the cluster's pending pods)."""
    key = key_of_pairs(pairs)
    members = [b for b in _buckets(cluster) if b["key"] == key]
    if not members:
        return Q(pk__in=[])
    return Q(reason__in={b["reason"] for b in members}, plugins__in={b["plugins"] for b in members})


class _ChipCache:
    """Chips of recorded cycles, most recently used kept (a cycle never changes once recorded; its key includes
    its start time, as a reloaded cluster numbers its cycles again). Decoding a 5,000-node cycle's matrix takes
    tens of milliseconds, and the pending page shows the same latest cycles at every live refresh."""

    def __init__(self, size: int = 20000):
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


_chip_cache = _ChipCache()


def chips_of_cycles(cluster: Cluster | int, seqs) -> dict:
    """{seq: [Chip]} of these cycles of a cluster (the unschedulable ones; matrices read only for cycles whose
    chips are not cached yet)."""
    cluster_id = getattr(cluster, "pk", cluster)
    cycles = SchedulingCycle.objects.filter(cluster=cluster, seq__in=[s for s in seqs if s is not None],
                                            result=SchedulingCycle.UNSCHEDULABLE)
    out, missing = {}, []
    for seq, started in cycles.values_list("seq", "started"):
        found = _chip_cache.get((cluster_id, seq, started))
        if found is None:
            missing.append(seq)
        else:
            out[seq] = found
    if missing:
        for seq, started, matrix in cycles.filter(seq__in=missing).values_list("seq", "started", "matrix"):
            out[seq] = chips(matrix or {})
            _chip_cache.put((cluster_id, seq, started), out[seq])
    return out
