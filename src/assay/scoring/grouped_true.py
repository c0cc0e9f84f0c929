"""Per-group true-score (PRMSE) sums, for the slices of a ``by`` column.

:class:`GroupedTrueStats` holds one :class:`~assay.scoring.sufficient_stats.TrueScoreStats`
per group label; groups merge by label (as :class:`~assay.scoring.sufficient_stats.PairStats`
does) and the state is one float matrix, a row of sums per group.

Example:
    >>> import numpy as np
    >>> r = np.array([[1.0, 2.0], [3.0, np.nan], [4.0, 4.0]])
    >>> (g,) = GroupedTrueStats.from_arrays(r, [np.array([1.5, 3.0, 4.0])], np.array([0, 1, 0]),
    ...                                     ("a", "b"), shift=3.0)
    >>> [s.n for s in g.stats], g.labels
    ([2.0, 1.0], ('a', 'b'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from assay.scoring.sufficient_stats import TrueScoreStats, align_labels

__all__ = ["GroupedTrueStats"]


@dataclass
class GroupedTrueStats:
    """One :class:`TrueScoreStats` per group, in the order of ``labels``."""

    labels: tuple
    stats: list[TrueScoreStats]

    @classmethod
    def from_arrays(
        cls,
        ratings: np.ndarray,
        systems: Sequence[np.ndarray],
        codes: np.ndarray,
        labels: tuple,
        shift: float,
    ) -> list[GroupedTrueStats]:
        """One :class:`GroupedTrueStats` per system score array (rows split by ``codes``)."""
        order = np.argsort(codes, kind="stable")
        bounds = np.cumsum(np.bincount(codes, minlength=len(labels)))[:-1]
        per_group = [
            TrueScoreStats.from_arrays_multi(ratings[idx], [s[idx] for s in systems], shift)
            for idx in np.split(order, bounds)
        ]
        return [cls(tuple(labels), [g[k] for g in per_group]) for k in range(len(systems))]

    def merge(self, other: GroupedTrueStats) -> GroupedTrueStats:
        """Both batches' groups, matched by label."""
        labels, ia, ib = align_labels(self.labels, other.labels)
        out: list[TrueScoreStats | None] = [None] * len(labels)
        for side, idx in ((self, ia), (other, ib)):
            for s, i in zip(side.stats, idx.tolist()):
                prev = out[i]
                out[i] = s if prev is None else prev.merge(s)
        return GroupedTrueStats(labels, [s for s in out if s is not None])

    def to_state(self, prefix: str) -> dict[str, np.ndarray]:
        """Labels and a matrix of sums (a row per group)."""
        rows = [s.to_state("s")["s"] for s in self.stats]
        return {
            f"{prefix}.labels": np.array([str(v) for v in self.labels], dtype=str),
            f"{prefix}.sums": np.array(rows).reshape(len(rows), len(fields(TrueScoreStats))),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], prefix: str) -> GroupedTrueStats:
        """Inverse of :meth:`to_state`."""
        rows = np.asarray(state[f"{prefix}.sums"], dtype=np.float64)
        stats = [TrueScoreStats.from_state({"s": row}, "s") for row in rows]
        return cls(tuple(str(v) for v in state[f"{prefix}.labels"]), stats)
