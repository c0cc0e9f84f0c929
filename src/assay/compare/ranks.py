"""Ranks of several runs by one metric, with rank intervals and significance groups.

For each record of the metric (a row of the comparison), every run's value ranks it
(1 the best: the highest, or the lowest with ``lower_is_better``; ties share the better
rank). The rank interval is the percentile interval of the run's rank over bootstrap
resamples of the units all the runs share: each resample draws those units once and
every run's tally is recomputed on it (one set of weights for all, so the ranks keep the
pairing). The significance groups: every pair of runs is compared on their shared units
(:func:`assay.compare.runs.paired_records`), the p-values adjusted over all pairs, and
runs sorted by value get letters such that two runs share a letter exactly when no
adjusted test at level ``1 - level`` separates them, as far as one run of consecutive
sorted runs allows (the compact letter display over the sorted order).

Example:
    >>> letters([0.9, 0.8, 0.5], lambda i, j: {0, 2} == {i, j})
    ['a', 'ab', 'b']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.compare.adjust import adjust as adjusted
from assay.compare.runs import RunUnits, paired_records
from assay.errors import InvalidInputError
from assay.results import Metric
from assay.uncertainty.clusters import Clusters
from assay.uncertainty.resampling import resample_counts

__all__ = ["rank_runs", "letters", "ranks_of"]


def ranks_of(values: np.ndarray, lower_is_better: bool = False) -> np.ndarray:
    """Ranks (1 the best) along the last axis; ties share the better rank; NaN last.

    Example:
        >>> ranks_of(np.array([0.5, 0.9, 0.5])).tolist()
        [2, 1, 2]
    """
    v = np.where(np.isnan(values), np.inf if lower_is_better else -np.inf, values)
    v = v if lower_is_better else -v
    return 1 + (v[..., None, :] < v[..., :, None]).sum(axis=-1)


def letters(values: Sequence[float], separated: Callable[[int, int], bool]) -> list[str]:
    """Letters of the runs (in the given order): runs sorted by value (best first), a
    letter for each maximal stretch of consecutive runs that no test separates."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    spans: list[tuple[int, int]] = []
    for s in range(len(order)):
        e = s
        while e + 1 < len(order) and not any(
            separated(order[i], order[e + 1]) for i in range(s, e + 1)
        ):
            e += 1
        if not spans or e > spans[-1][1]:
            spans.append((s, e))
    out = [""] * len(values)
    for n, (s, e) in enumerate(spans):
        for i in range(s, e + 1):
            out[order[i]] += chr(ord("a") + n % 26)
    return out


def _resampled(
    runs: Sequence[RunUnits], found: Sequence[Any], num_bootstrap: int, seed: int
) -> np.ndarray | None:
    """Every run's value (B, k) over resamples of the units all share; ``None`` when they
    share none (or a run has no tally for the record)."""
    if any(f is None for f in found):
        return None
    tallies = [f[0].ready() for f in found]
    if any(t.ids is None or t.unit_weight is not None for t in tallies):
        return None
    shared = np.asarray(tallies[0].ids)
    for t in tallies[1:]:
        shared = np.intersect1d(shared, np.asarray(t.ids))
    if shared.size < 2:
        return None
    members, cols = [], []
    for t, f in zip(tallies, found):
        at = np.searchsorted(np.asarray(t.ids)[np.argsort(t.ids)], shared)
        entries = np.argsort(t.ids)[at]
        codes = np.arange(shared.size, dtype=np.intp)
        members.append(Clusters.of(t.unit_rows()[entries], codes, t.rows))
        cols.append(t.keys.index(f[1]))
    draw = np.ones(shared.size, np.int64)
    parts = []
    for counts in resample_counts(draw, num_bootstrap, seed, max(1, 2**19 // shared.size)):
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(
                np.column_stack(
                    [
                        t.values(m.weights(counts))[:, c] + t.offset
                        for t, m, c in zip(tallies, members, cols)
                    ]
                )
            )
    return np.concatenate(parts, axis=0)


def rank_runs(
    metric: str,
    rows: Sequence[Mapping[str, Any]],
    ids: Sequence[int],
    tables: Sequence[Mapping[Any, Metric]],
    units: Sequence[RunUnits],
    *,
    adjust: str = "holm",
    level: float = 0.95,
    num_bootstrap: int = 1000,
    seed: int = 0,
    lower_is_better: bool = False,
) -> list[dict[str, Any]]:
    """One rank row per run and record of type ``metric`` (see the module): ``type``,
    ``parameters``, ``run``, ``value``, ``rank``, ``rank_low``, ``rank_high`` (``None``
    without shared units) and ``group``."""
    keys = list(tables[0]) + [k for t in tables[1:] for k in t if k not in tables[0]]
    chosen = [k for k in dict.fromkeys(keys) if k[0] == metric]
    if not chosen:
        types = sorted({k[0] for t in tables for k in t})
        raise InvalidInputError(
            f"no record of type {metric!r}; the runs have {', '.join(types)}", source="--rank"
        )
    out: list[dict[str, Any]] = []
    for key in chosen:
        ms = [t.get(key) for t in tables]
        if any(m is None or not isinstance(m.value, (int, float)) for m in ms):
            continue
        values = np.array([float(m.value) for m in ms])  # type: ignore[union-attr]
        point = ranks_of(values, lower_is_better)
        found = [u.find(m) for u, m in zip(units, ms)]  # type: ignore[arg-type]
        reps = _resampled(units, found, num_bootstrap, seed)
        lo = hi = None
        if reps is not None:
            r = ranks_of(reps, lower_is_better)
            tail = (1.0 - level) / 2.0
            lo = np.floor(np.quantile(r, tail, axis=0)).astype(int)
            hi = np.ceil(np.quantile(r, 1.0 - tail, axis=0)).astype(int)
        sep = _separated(units, ms, key, adjust, level, num_bootstrap, seed)
        signed = -values if lower_is_better else values
        group = letters(signed.tolist(), sep)
        label = key[1] + (f" (#{key[2] + 1})" if key[2] else "")
        for i, run in enumerate(ids):
            out.append(
                {
                    "type": key[0],
                    "parameters": label,
                    "run": run,
                    "value": float(values[i]),
                    "rank": int(point[i]),
                    "rank_low": None if lo is None else int(lo[i]),
                    "rank_high": None if hi is None else int(hi[i]),
                    "group": group[i],
                }
            )
    return out


def _separated(
    units: Sequence[RunUnits],
    ms: Sequence[Any],
    key: Any,
    adjust: str,
    level: float,
    num_bootstrap: int,
    seed: int,
) -> Callable[[int, int], bool]:
    """Whether the adjusted paired test of runs ``i`` and ``j`` separates them."""
    pairs = [(i, j) for i in range(len(ms)) for j in range(i + 1, len(ms))]
    ps = []
    for i, j in pairs:
        res = paired_records(
            units[i], units[j], {key: (ms[i], ms[j])}, level=level,
            num_bootstrap=num_bootstrap, seed=seed,
        ).results.get(key)  # fmt: skip
        ps.append(math.nan if res is None else res.p_value)
    q = adjusted(ps, adjust) if ps else np.zeros(0)
    alpha = 1.0 - level
    sep = {p: bool(v < alpha) for p, v in zip(pairs, q) if not math.isnan(v)}
    return lambda i, j: sep.get((min(i, j), max(i, j)), False)
