"""Why pending pods were rejected, as structure: the (plugin, reason, nodes) chips of a pod's latest attempt and
pending pods grouped by the set of (plugin, reason) they were rejected for.

A chip counts the nodes whose final Filter status (the one kube keeps per node: the first plugin that rejected
it, or the PreFilter's) carries the reason, under the plugin that returned that status; so the chips of an
attempt add up to the histogram of kube's FitError message ("0/50 nodes are available: 41 Insufficient cpu,
...") with each reason attributed to its plugin. Chips come from the cycle's matrix (``tracecodec``: ``final``
status per node, ``stopped`` plugin per node). A group's key, the set of (plugin, reason) pairs without
counts, is read from the cycle's summary columns (``failing_plugins`` and ``failing_reasons``, their key sets),
which kube's reason strings, each returned by one plugin, determine the pairs of.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from django.db.models import F, Lookup

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


def pending_cycles(cluster: Cluster | int):
    """The unschedulable latest cycles of a cluster's pending pods."""
    latest = Pod.objects.filter(cluster=cluster, node_name="", last_cycle__isnull=False).values("last_cycle")
    return SchedulingCycle.objects.filter(cluster=cluster, seq__in=latest, result=SchedulingCycle.UNSCHEDULABLE)


def pending_groups(cluster: Cluster | int, limit: int = 10) -> dict:
    """Pending pods grouped by the (plugin, reason) pairs of their latest attempt, largest first:
    {"groups": [{"n", "chips" (Chip with nodes=0), "param"}], "total": pods in a group, "more": groups left out}.

    Reads two small JSON columns per pending pod, and one matrix per group shown (its latest cycle's, which pairs
    the plugins with the reasons).
    """
    groups: dict[tuple, list] = {}      # key -> [pods, latest seq]
    for seq, plugins, reasons in pending_cycles(cluster).values_list("seq", "failing_plugins", "failing_reasons"):
        g = groups.setdefault(group_key(plugins, reasons), [0, seq])
        g[0] += 1
        g[1] = max(g[1], seq)
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1][0], kv[0]))
    shown = ranked[:limit]
    matrices = dict(SchedulingCycle.objects.filter(cluster=cluster, seq__in=[g[1] for _, g in shown])
                    .values_list("seq", "matrix"))
    out = []
    for _key, (n, seq) in shown:
        pairs = [Chip(c.plugin, c.reason, 0) for c in chips(matrices.get(seq) or {})]
        pairs.sort(key=lambda c: (c.plugin, c.reason))
        out.append({"n": n, "chips": pairs, "param": group_param((c.plugin, c.reason) for c in pairs)})
    return {"groups": out, "total": sum(g[0] for g in groups.values()), "more": len(ranked) - len(shown)}


class KeysEqual(Lookup):
    """A JSON object column whose keys are exactly ``rhs`` (a list of strings), on PostgreSQL and SQLite."""

    lookup_name = "keys_equal"
    prepare_rhs = False

    def as_postgresql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        keys = sorted(set(self.rhs))
        return (f"({lhs} ?& %s::text[] AND (SELECT count(*) FROM jsonb_object_keys({lhs})) = %s)",
                [*lhs_params, keys, *lhs_params, len(keys)])

    def as_sqlite(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        keys = sorted(set(self.rhs))
        return (f"((SELECT count(*) FROM json_each({lhs})) = %s AND (SELECT count(*) FROM json_each({lhs}) "
                f"WHERE key IN (SELECT value FROM json_each(%s))) = %s)",
                [*lhs_params, len(keys), *lhs_params, json.dumps(keys), len(keys)])


def in_group(cluster: Cluster | int, pairs) -> dict:
    """Filter keyword for Pod rows of the group of these (plugin, reason) pairs."""
    plugins, reasons = key_of_pairs(pairs)
    cycles = pending_cycles(cluster).filter(KeysEqual(F("failing_plugins"), list(plugins)),
                                            KeysEqual(F("failing_reasons"), list(reasons)))
    return {"last_cycle__in": cycles.values("seq")}


def chips_of_cycles(cluster: Cluster | int, seqs) -> dict:
    """{seq: [Chip]} of these cycles of a cluster (the unschedulable ones; one matrix read each)."""
    rows = SchedulingCycle.objects.filter(cluster=cluster, seq__in=[s for s in seqs if s is not None],
                                          result=SchedulingCycle.UNSCHEDULABLE).values_list("seq", "matrix")
    return {seq: chips(matrix or {}) for seq, matrix in rows}
