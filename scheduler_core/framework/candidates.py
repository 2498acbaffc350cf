"""Preemption candidates: a node and the victims whose removal lets the preemptor fit (extenderv1.Victims plus
the node's name). The per-node dry run makes one ``Candidate`` each; the dry run on NodeTable rows
(``preemption_batch``) gives all of its candidates as arrays (``RowCandidates``), of which only the ones read
become objects: pickOneNodeForPreemption reads the chosen one alone unless start times decide."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress

import numpy as np


class Candidate:
    """A node where the preemptor fits once ``victims`` are removed. The dry run on NodeTable rows also gives its
    key for pickOneNodeForPreemption's first four criteria and whether none of its victims has a start time
    (``unstarted``); None: computed when needed."""

    __slots__ = ("name", "victims", "num_pdb_violations", "key", "unstarted")

    def __init__(self, name: str, victims, num_pdb_violations: int, key=None, unstarted=None):
        self.name = name
        self.victims = list(victims)
        self.num_pdb_violations = num_pdb_violations
        self.key, self.unstarted = key, unstarted

    def __repr__(self):
        return f"Candidate({self.name}, {[p.key for p in self.victims]}, pdb={self.num_pdb_violations})"


class RowCandidates(Sequence):
    """The candidates of a dry run on NodeTable rows, in its order (none violates a PDB): per candidate its node's
    ``names`` entry and row, which of the row's lower-priority pods (``pods[row]``, in reprieve order) are victims,
    the highest victim priority (``first``), the victims' priorities summed with PRIORITY_SHIFT each (``summed``),
    their number (``counts``) and whether none has a start time (``unstarted``). ``[i]`` makes candidate i's
    Candidate; ``tied`` applies pickOneNodeForPreemption's first four criteria without making any."""

    def __init__(self, names: list, pods: list, rows, victims, first, summed, counts, unstarted):
        self.names, self._pods, self._rows, self._victims = names, pods, rows, victims
        self._first, self._summed, self._counts, self.unstarted = first, summed, counts, unstarted

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int) -> Candidate:
        name = self.names[i]   # IndexError ends an iteration
        return Candidate(name, compress(self._pods[self._rows[i]], self._victims[i].tolist()), 0,
                         (0, -int(self._first[i]), -int(self._summed[i]), -int(self._counts[i])),
                         bool(self.unstarted[i]))

    def by_name(self) -> Mapping:
        """{node name: Candidate}, each made when read."""
        return _ByName(self)

    def tied(self, order: list) -> list:
        """The positions in ``order`` (positions of candidates) that pickOneNodeForPreemption's first four criteria
        keep: no PDB violation (none has one), then the lowest highest victim priority, the lowest sum, the fewest
        victims; in ``order``'s order."""
        idx = np.asarray(order, np.int64)
        first, summed, counts = self._first[idx], self._summed[idx], self._counts[idx]
        best = first == first.min()
        best &= summed == summed[best].min()
        best &= counts == counts[best].min()
        return idx[best].tolist()


class _ByName(Mapping):
    __slots__ = ("_found", "_index")

    def __init__(self, found: RowCandidates):
        self._found, self._index = found, None

    def __getitem__(self, name: str) -> Candidate:
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self._found.names)}
        return self._found[self._index[name]]

    def __iter__(self):
        return iter(self._found.names)

    def __len__(self) -> int:
        return len(self._found)
