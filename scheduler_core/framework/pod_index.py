"""Per-node pod counts kept from cycle to cycle, for the PreFilter and PreScore passes over all pods.

InterPodAffinity and PodTopologySpread count, in every cycle, the pods on every node that match a term or
selector. Between two cycles usually one node changed (the one that took the previous pod), so these
indexes keep the per-node counts as NodeTable columns and count again only the rows whose NodeInfo
generation changed since they were last used. Summing per topology domain is then one
``NodeTable.domain_sums``.

- ``MatchCounts``: per row, how many of the node's pods one predicate accepts (``count(pods)``).
- ``TermIndex``: per distinct term carried by the pods on the nodes (existing pods' affinity terms), a
  representative term and how many pods carry it on each row, so a cycle matches each distinct term
  against the incoming pod once instead of every pod's terms.

Both are cached in the NodeTable (``NodeTable.index``) under a key that must say everything the counts
depend on (for a term: selector, namespaces and topology key, as ``AffinityTerm.key``).
"""
from __future__ import annotations

import numpy as np


def _changed_rows(gens, table):
    """Rows whose NodeInfo generation differs from ``gens`` (updated in place to the table's)."""
    changed = np.flatnonzero(gens != table.generation)
    if len(changed):
        gens[changed] = table.generation[changed]
    return changed.tolist()


class MatchCounts:
    """Per row, ``count(node_info.pods)``; re-counted on the rows whose pods changed."""

    __slots__ = ("count", "counts", "gens")

    def __init__(self, table, count):
        self.count = count
        self.counts = np.fromiter((count(ni.pods) for ni in table.infos), np.int64, table.n)
        self.gens = table.generation.copy()

    def copy(self) -> "MatchCounts":
        c = MatchCounts.__new__(MatchCounts)
        c.count, c.counts, c.gens = self.count, self.counts.copy(), self.gens.copy()
        return c

    def current(self, table):
        """The int64 count per row, for the table's current NodeInfos (do not modify it)."""
        changed = _changed_rows(self.gens, table)
        if changed:
            infos, count, counts = table.infos, self.count, self.counts
            for i in changed:
                counts[i] = count(infos[i].pods)
        return self.counts


def match_counts(table, key, count):
    """The table's MatchCounts for ``key`` (``count`` builds it the first time), current."""
    return table.index(key, lambda t: MatchCounts(t, count)).current(table)


class TermIndex:
    """Per distinct term the nodes' pods carry: ``[term, per-row int64 counts, total]``.

    ``terms_of(node_info)`` yields ``(signature, term)`` for every term of every relevant pod on the
    node; pods' terms with equal signatures are counted together under the first term seen.
    """

    __slots__ = ("terms_of", "rows", "entries", "gens", "n")

    def __init__(self, table, terms_of):
        self.terms_of = terms_of
        self.n = table.n
        self.rows = [None] * table.n   # per row: {signature: count} of that node's pods
        self.entries = {}
        for i, ni in enumerate(table.infos):
            self._count_row(i, ni)
        self.gens = table.generation.copy()

    def _count_row(self, i: int, ni) -> None:
        entries = self.entries
        old = self.rows[i]
        if old:
            for sig, c in old.items():
                entry = entries[sig]
                entry[1][i] -= c
                entry[2] -= c
                if not entry[2]:
                    del entries[sig]
        new = {}
        for sig, term in self.terms_of(ni):
            new[sig] = new.get(sig, 0) + 1
            entry = entries.get(sig)
            if entry is None:
                entry = entries[sig] = [term, np.zeros(self.n, np.int64), 0]
            entry[1][i] += 1
            entry[2] += 1
        self.rows[i] = new or None

    def copy(self) -> "TermIndex":
        c = TermIndex.__new__(TermIndex)
        c.terms_of, c.n, c.gens = self.terms_of, self.n, self.gens.copy()
        c.rows = list(self.rows)  # the per-row dicts are replaced, never changed in place
        c.entries = {sig: [term, counts.copy(), total] for sig, (term, counts, total) in self.entries.items()}
        return c

    def current(self, table):
        """The entries (``{signature: [term, per-row counts, total]}``) for the table's current NodeInfos."""
        for i in _changed_rows(self.gens, table):
            self._count_row(i, table.infos[i])
        return self.entries


def term_index(table, key, terms_of):
    """The table's TermIndex for ``key``, current."""
    return table.index(key, lambda t: TermIndex(t, terms_of)).current(table)
