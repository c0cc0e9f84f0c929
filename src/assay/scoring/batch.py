"""The sufficient statistics of one cleaned batch (:class:`~assay.scoring.types.ScoringData`).

Per group column: the human-system pair (as given and rounded), the fairness cells and, with
a second human score, the human-human pair on the double-scored responses. The whole-set
statistics are the pooled groups of the first group column (or computed directly when there
is none). With few distinct human scores the cell path of :mod:`assay.scoring.level_stats`
is used, otherwise the direct per-response path; both give the same sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.scoring.grouped_true import GroupedTrueStats
from assay.scoring.level_stats import CellStats, LevelCoded, grouped_pair_stats, level_code
from assay.scoring.sufficient_stats import PairStats, TrueScoreStats
from assay.scoring.types import ScoringData

__all__ = ["BatchStats", "batch_stats"]

ALL = ("All data",)


@dataclass
class BatchStats:
    """Statistics of one batch (or of everything merged so far)."""

    hm: PairStats | None = None
    hr: PairStats | None = None
    hh: PairStats | None = None
    true: TrueScoreStats | None = None
    true_r: TrueScoreStats | None = None
    by: dict[str, dict[str, Any]] = field(default_factory=dict)


def _grouped(
    d: ScoringData,
    xl: LevelCoded | None,
    mr: np.ndarray,
    col: str,
    shift: float,
    dbl: np.ndarray | None,
) -> dict[str, Any]:
    codes, labels = d.groups[col]
    by: dict[str, Any] = {}
    if xl is not None:
        (by["hm"], by["hr"]), by["cells"] = grouped_pair_stats(
            xl, [d.m, mr], codes, labels, shift, with_cells=True, x=d.h, second_is_rounded=True
        )
    else:
        by["hm"] = PairStats.from_arrays(d.h, d.m, codes, labels, shift=shift)
        by["hr"] = PairStats.from_arrays(d.h, mr, codes, labels, shift=shift)
        by["cells"] = CellStats.from_arrays(d.h, d.m, codes, labels)
    if dbl is not None:
        assert d.h2 is not None
        h2 = d.h2[:, 0]
        if xl is not None:
            sub = LevelCoded(xl.codes[dbl], xl.levels)
            by["hh"] = grouped_pair_stats(sub, [h2[dbl]], codes[dbl], labels, shift, x=d.h[dbl])[0][
                0
            ]
        else:
            by["hh"] = PairStats.from_arrays(d.h[dbl], h2[dbl], codes[dbl], labels, shift=shift)
    return by


def _whole_set(
    d: ScoringData, xl: LevelCoded | None, mr: np.ndarray, shift: float, dbl: np.ndarray | None
) -> tuple[PairStats, PairStats, PairStats | None]:
    if xl is not None:
        pairs = grouped_pair_stats(xl, [d.m, mr], None, ALL, shift, x=d.h, second_is_rounded=True)
        hm, hr = pairs[0]
    else:
        hm = PairStats.from_arrays(d.h, d.m, shift=shift)
        hr = PairStats.from_arrays(d.h, mr, shift=shift)
    if dbl is None:
        return hm, hr, None
    assert d.h2 is not None
    h2 = d.h2[:, 0]
    if xl is not None:
        sub = LevelCoded(xl.codes[dbl], xl.levels)
        hh = grouped_pair_stats(sub, [h2[dbl]], None, ALL, shift, x=d.h[dbl])[0][0]
    else:
        hh = PairStats.from_arrays(d.h[dbl], h2[dbl], shift=shift)
    return hm, hr, hh


def batch_stats(
    d: ScoringData,
    group_columns: list[str],
    shift: float,
    fast: bool,
    true_scores: bool,
    true_by: Sequence[str] = (),
) -> BatchStats:
    """Every statistic of one batch; ``true_scores`` adds the PRMSE sums (per group too for
    the columns ``true_by``)."""
    mr = np.rint(d.m)
    xl = level_code(d.h) if fast else None
    dbl = None if d.h2 is None else ~np.isnan(d.h2[:, 0])
    part = BatchStats()
    for col in group_columns:
        part.by[col] = _grouped(d, xl, mr, col, shift, dbl)
    if group_columns:  # the whole set is the sum of any grouping
        first = part.by[group_columns[0]]
        part.hm, part.hr = first["hm"].total(), first["hr"].total()
        if dbl is not None:
            part.hh = first["hh"].total()
    else:
        part.hm, part.hr, part.hh = _whole_set(d, xl, mr, shift, dbl)
    if true_scores:
        ratings = np.column_stack([d.h, d.h2]) if d.h2 is not None else d.h[:, None]
        part.true, part.true_r = TrueScoreStats.from_arrays_multi(ratings, [d.m, mr], shift=shift)
        for col in true_by:
            codes, labels = d.groups[col]
            by = part.by[col]
            by["true"], by["true_r"] = GroupedTrueStats.from_arrays(
                ratings, [d.m, mr], codes, labels, shift
            )
    return part


def _merge_opt(a: Any, b: Any) -> Any:
    return b if a is None else (a if b is None else a.merge(b))


def merge_batches(a: BatchStats, b: BatchStats) -> BatchStats:
    """The statistics of both together (neither argument is changed)."""
    out = BatchStats(
        hm=_merge_opt(a.hm, b.hm),
        hr=_merge_opt(a.hr, b.hr),
        hh=_merge_opt(a.hh, b.hh),
        true=_merge_opt(a.true, b.true),
        true_r=_merge_opt(a.true_r, b.true_r),
        by={col: dict(by) for col, by in a.by.items()},
    )
    for col, by in b.by.items():
        mine = out.by.setdefault(col, {})
        for k, s in by.items():
            mine[k] = _merge_opt(mine.get(k), s)
    return out


def batch_state(s: BatchStats, group_columns: list[str]) -> dict[str, np.ndarray]:
    """Plain numpy arrays of every statistic (group columns by position: ``by0.hm.n``...)."""
    out: dict[str, np.ndarray] = {}
    for key in ("hm", "hr", "hh", "true", "true_r"):
        stats = getattr(s, key)
        if stats is not None:
            out.update(stats.to_state(key))
    for i, col in enumerate(group_columns):
        for key, stats in s.by.get(col, {}).items():
            out.update(stats.to_state(f"by{i}.{key}"))
    return out


def load_batch_state(state: dict[str, np.ndarray], group_columns: list[str]) -> BatchStats:
    """Inverse of :func:`batch_state`."""
    s = BatchStats()
    for key in ("hm", "hr", "hh"):
        if f"{key}.n" in state:
            setattr(s, key, PairStats.from_state(state, key))
    for key in ("true", "true_r"):
        if key in state:
            setattr(s, key, TrueScoreStats.from_state(state, key))
    for i, col in enumerate(group_columns):
        by: dict[str, Any] = {}
        for key in ("hm", "hr", "hh"):
            if f"by{i}.{key}.n" in state:
                by[key] = PairStats.from_state(state, f"by{i}.{key}")
        if f"by{i}.cells.n" in state:
            by["cells"] = CellStats.from_state(state, f"by{i}.cells")
        for key in ("true", "true_r"):
            if f"by{i}.{key}.sums" in state:
                by[key] = GroupedTrueStats.from_state(state, f"by{i}.{key}")
        if by:
            s.by[col] = by
    return s
