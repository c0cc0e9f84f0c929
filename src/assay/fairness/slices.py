"""Fairness metrics per slice: SPD, DI, AOD, EOD and the fairlearn-style aggregates again on
each subgroup of another column.

``by=["site"]`` (CLI ``--by site``) gives, for every distinct value ``v`` of the column
``site`` (rows without a value are in no slice), the ``StatisticalParityDifference``,
``DisparateImpact``, ``AverageOddsDifference`` and ``EqualOpportunityDifference`` of every
privileged-group definition and the ``DemographicParityDifference``/``Ratio`` and
``EqualizedOddsDifference``/``Ratio`` of every group column (per control level too), computed
on the rows whose ``site`` is ``v`` alone: SPD between the sexes at site x, and so on. Each
record carries ``slice_column``, ``slice``, ``n`` (the slice's rows) and ``gap`` (to the whole
set's record; :mod:`assay.slices`). A slice where a group is missing gives the value the
subset alone gives: ``null`` with the reason (an empty privileged group), or a single group's
difference 0 and ratio 1.

The evaluator keeps, per slice, the same counts it keeps for the whole set (a sub-evaluator
fed the slice's rows; the whole set's checks of labels and privileged values are not
repeated per slice), so slices add, merge and travel in ``state()`` like everything else.

With ``ci`` each slice record gets its own interval (a bootstrap over the slice's rows) and
the gap its interval ``gap_ci_low``, ``gap_ci_high``. Every resample draws from all rows:
with ``S`` the slice's counts and ``W`` the whole set's (cells of a definition, or groups x
outcomes of a group column), the rest is ``W - S``, and a multinomial draw over the cells
of ``S`` and of the rest gives the slice's resampled counts and, added, the whole set's, from
the same draw; the point estimate's formulas give both, every resample of a chunk at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay.fairness.assembly import families, records_of
from assay.fairness.clusters import membership, restrict
from assay.fairness.draws import gap_replicates
from assay.fairness.group_text import group_column_values
from assay.fairness.units import joint
from assay.intervals import percentile
from assay.results import Metric
from assay.slices import annotate, record_key, value_masks

__all__ = [
    "SLICE_TYPES",
    "WHERE",
    "feed",
    "merge_slices",
    "row_slices",
    "slice_records",
    "slices_from",
    "slices_state",
]

SLICE_TYPES = frozenset(
    {
        "StatisticalParityDifference",
        "DisparateImpact",
        "AverageOddsDifference",
        "EqualOpportunityDifference",
        "DemographicParityDifference",
        "DemographicParityRatio",
        "EqualizedOddsDifference",
        "EqualizedOddsRatio",
    }
)

#: What identifies a fairness record within a slice (beside its type).
WHERE = (
    "group_column",
    "privileged",
    "control_column",
    "control",
    "method",
    "agg",
)

Gaps = dict[tuple[Any, ...], tuple[float, float]]


def row_slices(
    values: Mapping[str, ArrayLike], column: str, n: int, source: str | None
) -> Iterator[tuple[str, NDArray[np.bool_]]]:
    """``(value, rows)`` of every slice of ``column`` in a batch (missing values: no slice)."""
    v = group_column_values(values, column, n, source)
    yield from value_masks(v, ~np.asarray(pd.isna(v), dtype=bool))


def _sliced(m: Metric) -> bool:
    """A record computed per slice: a definition's metric or a group column's aggregate
    (not the mean over definitions)."""
    return m.type in SLICE_TYPES and "average_over" not in m.parameters


def _match(m: Metric, whole: Sequence[Metric]) -> list[int]:
    key = record_key(m, WHERE)
    return [j for j, w in enumerate(whole) if record_key(w, WHERE) == key and _number(w.value)][:1]


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _value(m: Metric) -> float:
    return float(m.value) if _number(m.value) else np.nan


def feed(
    slices: dict[str, dict[str, Any]],
    cuts: list[tuple[str, str, NDArray[np.bool_]]],
    make: Callable[[], Any],
    batch: tuple[Any, Any, Any],
    masked: list[tuple[NDArray[np.bool_], NDArray[np.int64]]],
    groupings: list[tuple[NDArray[np.str_], NDArray[np.int64]]],
    seen: tuple[Any, Any],
) -> None:
    """Count a validated batch's rows into their slices' sub-evaluators (made by ``make``):
    ``cuts`` are (column, value, rows), ``batch`` the labels, predictions and weights,
    ``masked`` and ``groupings`` the batch's privileged masks and groups, ``seen`` its
    distinct labels and predictions. A slice's groups are those its rows have."""
    t, p, w = batch
    for column, v, r in cuts:
        sub = slices[column].setdefault(v, make())
        parts, within = restrict(masked, groupings, r)
        sub._accumulate(t[r], p[r], None if w is None else w[r], parts, within)
        sub._remember(*seen, None)


def merge_slices(
    mine: dict[str, dict[str, Any]], other: Mapping[str, Mapping[str, Any]], copy: Any
) -> None:
    """Add ``other``'s slices to ``mine`` in place (a slice new to ``mine`` is copied with
    ``copy(state)``, so later adds to ``mine`` do not reach ``other``)."""
    for column, subs in other.items():
        for v, sub in subs.items():
            if v in mine[column]:
                mine[column][v]._merge(sub)
            else:
                mine[column][v] = copy(sub.state())


def slices_state(
    parts: Mapping[str, Mapping[str, Any]], prefix: str = "slices"
) -> dict[str, NDArray[Any]]:
    """Plain arrays of every slice's sub-evaluator state, by column and value (``prefix``:
    ``"clusters"`` for the per-cluster counts)."""
    out: dict[str, NDArray[Any]] = {}
    for i, (column, subs) in enumerate(parts.items()):
        out[f"{prefix}.{i}.column"] = np.array(column)
        out[f"{prefix}.{i}.values"] = np.array(json.dumps(sorted(subs)))
        for j, v in enumerate(sorted(subs)):
            sub = subs[v]
            out |= {f"{prefix}.{i}.{j}.{k}": v for k, v in sub.state().items() if k != "config"}
    return out


def slices_from(
    state: Mapping[str, NDArray[Any]],
    by: Sequence[str],
    load: Callable[[dict[str, Any]], Any],
    prefix: str = "slices",
) -> dict[str, dict[str, Any]]:
    """What :func:`slices_state` packed; ``load`` rebuilds a sub-evaluator from its arrays."""
    out: dict[str, dict[str, Any]] = {c: {} for c in by}
    name = prefix
    for i in range(len(by)):
        if f"{name}.{i}.values" not in state:
            continue
        column = str(np.asarray(state[f"{name}.{i}.column"])[()])
        for j, v in enumerate(json.loads(str(np.asarray(state[f"{name}.{i}.values"])[()]))):
            prefix = f"{name}.{i}.{j}."
            sub = {k[len(prefix) :]: a for k, a in state.items() if k.startswith(prefix)}
            out[column][v] = load(sub)
    return out


def slice_records(ev: Any, whole: list[Metric]) -> list[Metric]:
    """The sliced records of a :class:`~assay.fairness.FairnessEvaluator` ``ev`` (``whole``:
    its records), every column of its ``by``, values in sorted order."""
    out: list[Metric] = []
    for column, subs in ev._slices.items():
        for v in sorted(subs):
            sub = subs[v]
            parts = {
                g: c._slices[column][v] for g, c in ev._clusters.items() if v in c._slices[column]
            }
            recs = records_of(sub, parts, mean=False, keep=_sliced)  # the mean: not sliced
            gaps = None if ev.ci is None or _no_units(ev, sub) else _gaps(ev, sub, parts)
            n = int(sub._overall.sum())
            out += annotate(recs, whole, column=column, value=v, n=n, where=WHERE, gap_ci=gaps)
    return out


def _no_units(ev: Any, sub: Any) -> bool:
    """Whether weighted gaps lack the classes of datums they draw (a state saved by an older
    version)."""
    weighted = ev._overall_weights is not None and not ev.ci.cluster
    return weighted and (ev._units is None or sub._units is None)


def _gaps(ev: Any, sub: Any, parts: Mapping[str, Any]) -> Gaps:
    """The gap intervals of every definition and group column of one slice (``parts``: the
    slice's rows of each cluster, with ``cluster``): the slice's family and the whole set's
    side by side, drawn jointly (:mod:`assay.fairness.draws`)."""
    pairs = []
    for s, w in zip(families(sub)[:-1], families(ev)[:-1]):  # not the overall records
        want = [(i, j) for i, m in enumerate(s.records)
                if _sliced(m) and _number(m.value) for j in _match(m, w.records)]  # fmt: skip
        if want:
            pairs.append((s, w, want))
    if not pairs:
        return {}
    opts = ev.ci
    if opts.cluster:
        reps = gap_replicates(pairs, _clusters_draw(pairs, ev, parts), opts)
    elif ev._overall_weights is None:  # per pair, the slice's cells and the other rows'
        draws = [(p, *_cells_draw(p, sub, ev)) for p in pairs]
        reps = np.hstack([gap_replicates([p], d, opts, m) for p, d, m in draws])
    else:  # the classes of the slice's datums and of the other rows'
        drawn, matrix = _classes_draw(pairs, sub, ev)
        reps = gap_replicates(pairs, drawn, opts, matrix)
    lo, hi = percentile(reps, opts.level)
    keys = [record_key(s.records[i], WHERE) for s, _, want in pairs for i, _ in want]
    return {k: (float(lo[c]), float(hi[c])) for c, k in enumerate(keys)}


def _cells_draw(pair: Any, sub: Any, ev: Any) -> tuple[NDArray[np.int64], list[Any]]:
    """One pair's draw without weights: the cells of the slice's rows, then of the other rows;
    a slice cell adds to the slice's counts and to its cell of the whole set's."""
    from scipy import sparse

    s, w, _ = pair
    part, full = np.rint(s.flat(sub)).astype(np.int64), np.rint(w.flat(ev)).astype(np.int64)
    rows = np.arange(s.size)
    if s.groups is not None:  # a group column: the slice's groups among the whole set's
        rows = (np.searchsorted(w.groups, s.groups)[:, None] * 4 + np.arange(4)).ravel()
    rest = full.copy()
    rest[rows] -= part
    k = s.size + w.size
    r = np.concatenate([np.arange(s.size), np.arange(s.size), s.size + np.arange(w.size)])
    c = np.concatenate([np.arange(s.size), s.size + rows, s.size + np.arange(w.size)])
    m = sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(k, k))
    return np.concatenate([part, rest]), [m]


def _clusters_draw(pairs: list[Any], ev: Any, parts: Mapping[str, Any]) -> Any:
    """Per cluster, every pair's slice statistics (of the cluster's rows in the slice; none
    when it has none) then whole-set statistics: whole clusters drawn."""
    empty = [np.zeros(s.width) for s, _, _ in pairs]

    def flat(g: str) -> NDArray[np.float64]:
        mine = [s.flat(parts[g]) if g in parts else e for (s, _, _), e in zip(pairs, empty)]
        theirs = [w.flat(ev._clusters[g]) for _, w, _ in pairs]
        return np.concatenate([x for pair in zip(mine, theirs) for x in pair])

    return membership({g: g for g in ev._clusters}, flat)


def _classes_draw(pairs: list[Any], sub: Any, ev: Any) -> tuple[NDArray[np.int64], list[Any]]:
    """With weights: the slice's classes of datums, then the other rows'; through their joint
    cells (:func:`~assay.fairness.units.joint`), the slice's add to the slice's statistics and
    the whole set's, the other rows' to the whole set's."""
    from scipy import sparse

    mine, rest = sub._units, ev._units - sub._units
    (a_s, cells_s), (a_r, cells_r) = joint(mine), joint(rest)
    whole = cells_s.on(ev._units.names)
    top = [m for s, w, _ in pairs for m in (s.matrix(cells_s), w.matrix(whole))]
    nothing = [sparse.csr_matrix((2 * len(cells_r.counts), s.width)) for s, _, _ in pairs]
    low = [m for (_, w, _), z in zip(pairs, nothing) for m in (z, w.matrix(cells_r))]
    second = sparse.vstack([sparse.hstack(top), sparse.hstack(low)], format="csr")
    first = sparse.block_diag([a_s, a_r], format="csr")
    return np.concatenate([mine.counts, rest.counts]), [first, second]
