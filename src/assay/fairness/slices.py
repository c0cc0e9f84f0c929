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
the same draw; the record builders of the point estimate run on both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay.clusters import Clusters
from assay.fairness.clusters import aligned, restrict
from assay.fairness.group_text import group_column_values
from assay.fairness.intervals import counts_of, definition_cells, table_with
from assay.fairness.summaries import definition_records
from assay.intervals import CIOptions, bootstrap, percentile
from assay.results import Metric
from assay.slices import annotate, record_key, value_masks

__all__ = [
    "SLICE_TYPES",
    "WHERE",
    "feed",
    "joint_gaps",
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


def joint_gaps(
    records: list[Metric],
    whole: Sequence[Metric],
    part: NDArray[np.int64],
    full: NDArray[np.int64],
    rows: NDArray[np.intp],
    build: Callable[[NDArray[np.int64], NDArray[np.int64]], tuple[list[Metric], list[Metric]]],
    opts: CIOptions,
    clusters: Sequence[tuple[NDArray[np.int64], NDArray[np.int64]]] = (),
) -> Gaps:
    """The gaps' bootstrap intervals of a slice's defined ``records``, keyed as
    :func:`assay.slices.record_key` with :data:`WHERE`.

    ``part`` are the slice's counts (a definition's (4, 2) cells, or a group table's (k, 4)
    counts), ``full`` the whole set's and ``rows`` where the slice's rows sit in ``full``
    (so ``full - part`` placed there are the other rows' counts); ``build(slice_counts,
    whole_counts)`` makes the slice's and the whole set's records from resampled counts, in
    the order of ``records`` and ``whole``. ``clusters``: with ``cluster``, each cluster's
    (slice counts, whole counts), laid out as ``part`` and ``full``: a resample draws them.
    """

    def embed(s: NDArray[np.int64]) -> NDArray[np.int64]:
        out = np.zeros_like(full)
        out[rows] = s
        return out

    rest = full - embed(part)
    want = [
        (i, j)
        for i, m in enumerate(records)
        if _sliced(m) and _number(m.value)
        for j in _match(m, whole)
    ]
    if not want:
        return {}
    mult: Any = np.concatenate([part.ravel(), rest.ravel()]).astype(np.int64)
    if opts.cluster:
        from scipy import sparse

        rows_g = [np.concatenate([s.ravel(), (w - embed(s)).ravel()]) for s, w in clusters]
        mult = Clusters(sparse.csr_matrix(np.stack(rows_g).astype(np.float64)))

    def statistic(w: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.full((w.shape[0], len(want)), np.nan)
        for r, row in enumerate(np.rint(w).astype(np.int64)):
            s = row[: part.size].reshape(part.shape)
            mine, theirs = build(s, row[part.size :].reshape(full.shape) + embed(s))
            out[r] = [_value(mine[i]) - _value(theirs[j]) for i, j in want]
        return out

    lo, hi = percentile(bootstrap(statistic, mult, opts.num_bootstrap, opts.seed), opts.level)
    return {
        record_key(records[i], WHERE): (float(lo[c]), float(hi[c])) for c, (i, _) in enumerate(want)
    }


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
            recs = [m for m in sub._records(parts) if _sliced(m)]
            weighted = ev._overall_weights is not None or sub._overall_weights is not None
            gaps = None if ev.ci is None or weighted else _gaps(ev, sub, parts)
            n = int(sub._overall.sum())
            out += annotate(recs, whole, column=column, value=v, n=n, where=WHERE, gap_ci=gaps)
    return out


def _gaps(ev: Any, sub: Any, parts: Mapping[str, Any]) -> Gaps:
    """The gap intervals of every definition and group column of one slice (``parts``: the
    slice's rows of each cluster, with ``cluster``)."""
    label, opts = ev.positive_label, ev.ci
    out: Gaps = {}
    names = sorted(ev._clusters)
    for i, (g, c_s, c_w) in enumerate(zip(ev.groups, sub._counts, ev._counts)):
        part, full = definition_cells(c_s), definition_cells(c_w)

        def build(s: Any, w: Any, g: Any = g) -> tuple[list[Metric], list[Metric]]:
            return (definition_records(g, counts_of(s), positive_label=label),
                    definition_records(g, counts_of(w), positive_label=label))  # fmt: skip

        mine, theirs = build(part, full)
        drawn = [
            (definition_cells(parts[k]._counts[i]) if k in parts else np.zeros_like(part),
             definition_cells(ev._clusters[k]._counts[i])) for k in names
        ]  # fmt: skip
        out |= joint_gaps(mine, theirs, part, full, np.arange(4), build, opts, drawn)
    for j, (column, t_s, t_w) in enumerate(zip(ev.group_columns, sub._tables, ev._tables)):
        rows = np.searchsorted(t_w.names, t_s.names)

        def build_t(s: Any, w: Any, c: Any = column, t_s: Any = t_s, t_w: Any = t_w) -> Any:
            return (ev._by_group(c, table_with(t_s, s)), ev._by_group(c, table_with(t_w, w)))

        mine, theirs = build_t(t_s.counts, t_w.counts)
        drawn = [
            (aligned(parts[k]._tables[j], t_s) if k in parts else np.zeros_like(t_s.counts),
             aligned(ev._clusters[k]._tables[j], t_w)) for k in names
        ]  # fmt: skip
        out |= joint_gaps(mine, theirs, t_s.counts, t_w.counts, rows, build_t, opts, drawn)
    return out
