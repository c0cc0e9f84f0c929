"""The fairness evaluator's tally: its records in families, each with the point estimate's
formulas on a leading resample axis, and what a resample draws.

:class:`Counts` are the sufficient statistics of a set of rows (a whole set, a slice, a
cluster): per privileged-group definition its (4, 2) cells (TP, FP, FN, TN x unprivileged,
privileged), per group column its (k, 4) table, the overall four, each with its weight sums
(the counts as floats without sample weights).

A :class:`Family` is a group of records that the point-estimate code builds from one array of
counts (a definition's (4, 2) cells, the (D, 4, 2) cells of all definitions for their mean, a
group column's (k, 4) table, the overall four) and, with sample weights, the weight sums of the
same cells. Its flat statistics are the counts, then the sums. ``values`` runs the point
estimate's formulas on a whole chunk of resamples' counts at once (the point estimate is the
one-row case), so a replicate is NaN exactly where the record is ``None``; ``build``
(:meth:`Family.rebuilt`) is the record-by-record reference the tests hold ``values`` to.

A :class:`Tally` is the families of one set of rows with its units: the classes of
interchangeable datums (:class:`~assay.fairness.units.Units`, the datum bootstrap) and, with
``cluster``, each cluster's :class:`Counts`. :mod:`assay.fairness.intervals` turns it into
intervals, :mod:`assay.fairness.slices` into slices and gaps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from assay.fairness.by_group import RATES, aggregate_values, group_rates
from assay.fairness.compute import FAIRNESS_VALUES, GroupCounts
from assay.fairness.group_table import GroupTable
from assay.fairness.grouping import GroupColumn, control_levels
from assay.fairness.records import (
    average_records,
    by_group,
    definition_records,
    overall_records,
    overall_values,
)
from assay.fairness.types import PrivilegedGroup
from assay.fairness.units import Units, family_matrix
from assay.results import Metric

__all__ = [
    "Counts",
    "Family",
    "Setup",
    "Tally",
    "average_values",
    "by_group_values",
    "control_rows",
    "definition_values",
    "families",
]

I64 = NDArray[np.int64]
F64 = NDArray[np.float64]
Build = Callable[[I64, F64 | None], list[Metric]]
Values = Callable[[F64, F64 | None], F64]


@dataclass(frozen=True)
class Counts:
    """The counts of a set of rows: per definition its cells, per group column its table, the
    overall TP, FP, FN, TN and, when rows came with sample weights, the weight sums of the
    definitions' cells and of the overall four (None: no weights)."""

    definitions: Sequence[GroupCounts]
    tables: Sequence[GroupTable]
    overall: I64
    definition_weights: Sequence[GroupCounts] | None = None
    overall_weights: F64 | None = None

    @property
    def weighted(self) -> bool:
        return self.overall_weights is not None

    @property
    def n(self) -> int:
        """The number of rows."""
        return int(self.overall.sum())

    @property
    def definition_sums(self) -> Sequence[GroupCounts]:
        """Per definition, the weight sums (the counts as floats without weights)."""
        if self.definition_weights is not None:
            return self.definition_weights
        return [GroupCounts.of_cells(_cells(c)) for c in self.definitions]

    @property
    def overall_sums(self) -> F64:
        """The overall weight sums (the counts as floats without weights)."""
        w = self.overall_weights
        return self.overall.astype(np.float64) if w is None else w


class Setup(Protocol):
    """What the families read of the evaluator's configuration."""

    groups: tuple[PrivilegedGroup, ...]
    group_columns: tuple[GroupColumn, ...]
    control_columns: tuple[str, ...]
    positive_label: Any
    zero_division: float | None
    method: str
    agg: str


@dataclass(frozen=True)
class Family:
    """Records built together: ``records`` (the point estimate's, they get the intervals),
    ``kind`` (``"definition"``, ``"mean"``, ``"table"`` or ``"overall"``), ``build(counts,
    sums)`` (the same records of other counts shaped ``shape`` and, when ``weighted``, weight
    sums; else None), ``cells(units)`` (each class's flat cells, (k, r)), ``flat(counts)``
    (the flat statistics of a set of rows' :class:`Counts` in this layout), ``values(counts,
    sums)`` (the records' values, NaN where not a number, of counts and sums shaped (b,) +
    ``shape``: shape (b, records)) and ``groups`` (a group column's group names, the rows of
    ``shape``; None for the others)."""

    records: list[Metric]
    kind: str
    build: Build
    shape: tuple[int, ...]
    weighted: bool
    cells: Callable[[Units], I64]
    flat: Callable[[Counts], F64]
    values: Values
    groups: NDArray[np.str_] | None = None

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def width(self) -> int:
        return self.size * (2 if self.weighted else 1)

    def rebuilt(self, flat: F64) -> list[Metric]:
        """The records of one resample's flat statistics."""
        counts = np.rint(flat[: self.size]).astype(np.int64).reshape(self.shape)
        sums = flat[self.size : 2 * self.size].reshape(self.shape) if self.weighted else None
        return self.build(counts, sums)

    def replicates(self, flat: F64) -> F64:
        """The records' values (b, records) of b resamples' flat statistics (b, width)."""
        shape = (len(flat), *self.shape)
        counts = np.rint(flat[:, : self.size]).reshape(shape)
        sums = flat[:, self.size : 2 * self.size].reshape(shape) if self.weighted else None
        return self.values(counts, sums)

    def matrix(self, cells: Units) -> Any:
        """The sparse map from the counts and weight sums of joint ``cells``
        (:func:`~assay.fairness.units.joint`) to this family's flat statistics."""
        return family_matrix(self.cells(cells), self.size, self.weighted)


@dataclass(frozen=True)
class Tally:
    """The families of one set of rows (:func:`families`), its classes of datums (None with
    ``cluster``, or from a state saved without them) and, with ``cluster``, each cluster's
    counts of the same rows."""

    families: list[Family]
    counts: Counts
    units: Units | None = None
    clusters: Mapping[str, Counts] = field(default_factory=dict)

    def records(self, keep: Callable[[Metric], bool] | None = None) -> list[Metric]:
        """Every family's records (only those ``keep`` wants, when given)."""
        return [m for f in self.families for m in f.records if keep is None or keep(m)]


def families(setup: Setup, counts: Counts, *, mean: bool = False) -> list[Family]:
    """The families of the records of ``counts``: per definition, their mean (with ``mean``
    and at least one definition), per group column, over all datums."""
    weighted = counts.weighted
    out = [_definition(setup, counts, i) for i in range(len(setup.groups))]
    if mean and setup.groups:
        out.append(_mean(setup, counts))
    out += [_table(setup, counts, j) for j in range(len(setup.group_columns))]
    return [*out, _overall(setup, counts, weighted)]


def _cells(c: GroupCounts) -> F64:
    return np.stack([c.tp, c.fp, c.fn, c.tn]).astype(np.float64)


def _flat(counts: Any, sums: Any, weighted: bool) -> F64:
    parts = [np.asarray(counts, np.float64).ravel()]
    return np.concatenate(parts + ([np.asarray(sums, np.float64).ravel()] if weighted else []))


def _definition(setup: Setup, counts: Counts, i: int) -> Family:
    g, label, weighted = setup.groups[i], setup.positive_label, counts.weighted

    def build(k: Any, s: Any) -> list[Metric]:
        w = None if s is None else GroupCounts.of_cells(s)
        return definition_records(g, GroupCounts.of_cells(k), positive_label=label, weights=w)

    def flat(c: Counts) -> F64:
        w = _cells(c.definition_sums[i]) if weighted else None  # a cluster's: maybe unweighted
        return _flat(_cells(c.definitions[i]), w, weighted)

    def cells(u: Units) -> I64:
        return (u.keys[:, 0] * 2 + u.keys[:, 1 + i]).reshape(-1, 1)

    def values(k: F64, s: F64 | None) -> F64:
        return definition_values(GroupCounts.of_cells(k if s is None else s))

    sums = counts.definition_sums[i] if weighted else None
    recs = definition_records(g, counts.definitions[i], positive_label=label, weights=sums)
    return Family(recs, "definition", build, (4, 2), weighted, cells, flat, values)


def _mean(setup: Setup, counts: Counts) -> Family:
    groups, label, weighted = setup.groups, setup.positive_label, counts.weighted
    d = len(groups)

    def build(k: Any, s: Any) -> list[Metric]:
        on = [GroupCounts.of_cells(x) for x in (k if s is None else s)]
        return average_records(groups, on, positive_label=label, weighted=weighted)

    def flat(c: Counts) -> F64:
        w = [_cells(x) for x in c.definition_sums] if weighted else None
        return _flat([_cells(x) for x in c.definitions], w, weighted)

    def cells(u: Units) -> I64:
        return np.arange(d) * 8 + u.keys[:, :1] * 2 + u.keys[:, 1 : 1 + d]

    def values(k: F64, s: F64 | None) -> F64:
        return average_values(GroupCounts.of_cells(k if s is None else s))

    sums = np.stack([_cells(c) for c in counts.definition_sums]) if weighted else None
    recs = build(np.stack([_cells(c) for c in counts.definitions]).astype(np.int64), sums)
    return Family(recs, "mean", build, (d, 4, 2), weighted, cells, flat, values)


def _table(setup: Setup, counts: Counts, j: int) -> Family:
    column, table = setup.group_columns[j], counts.tables[j]
    names, weighted, groups = table.names, table.sums is not None, len(setup.groups)
    options = {"positive_label": setup.positive_label, "zero_division": setup.zero_division,
               "method": setup.method, "agg": setup.agg,
               "control_columns": setup.control_columns}  # fmt: skip

    def build(k: Any, s: Any) -> list[Metric]:
        return by_group(column, GroupTable(names, k, s), **options)

    def flat(c: Counts) -> F64:
        part = c.tables[j]
        at = np.searchsorted(names, part.names)
        k, w = np.zeros((len(names), 4)), np.zeros((len(names), 4))
        k[at], w[at] = part.counts, part.weights
        return _flat(k, w, weighted)

    def cells(u: Units) -> I64:
        return (u.keys[:, 1 + groups + j] * 4 + u.keys[:, 0]).reshape(-1, 1)

    levels = control_rows(column, names, setup.control_columns)

    def values(k: F64, s: F64 | None) -> F64:
        on = k if s is None else s
        return by_group_values(on, levels, zero_division=setup.zero_division,
                               method=setup.method, agg=setup.agg)  # fmt: skip

    recs = build(table.counts, table.sums)
    return Family(recs, "table", build, (len(names), 4), weighted, cells, flat, values, names)


def _overall(setup: Setup, counts: Counts, weighted: bool) -> Family:
    label = setup.positive_label

    def build(k: Any, s: Any) -> list[Metric]:
        return overall_records(k if s is None else s, positive_label=label, weighted=weighted)

    def flat(c: Counts) -> F64:
        return _flat(c.overall, c.overall_sums, weighted)

    def cells(u: Units) -> I64:
        return u.keys[:, :1]

    def values(k: F64, s: F64 | None) -> F64:
        return overall_values(k if s is None else s)

    recs = overall_records(counts.overall_sums, positive_label=label, weighted=weighted)
    return Family(recs, "overall", build, (4,), weighted, cells, flat, values)


# ---------------------------------------------------------------- the formulas on arrays


def definition_values(c: GroupCounts) -> F64:
    """The values of :func:`~assay.fairness.records.definition_records` of counts shaped
    (..., 2) (many resamples at once), shape (..., 6): the four metrics (NaN where undefined)
    and NaN for the two ``GroupCounts``."""
    values = [f(c) for f in FAIRNESS_VALUES.values()]
    nan = np.full(np.shape(values[0]), np.nan)
    return np.stack([*values, nan, nan], axis=-1)


def average_values(c: GroupCounts) -> F64:
    """The values of :func:`~assay.fairness.records.average_records` of counts shaped
    (..., D, 2), shape (..., 4): each metric's mean over the D definitions, NaN when one is
    undefined."""
    return np.stack([np.mean(f(c), axis=-1) for f in FAIRNESS_VALUES.values()], axis=-1)


def control_rows(
    column: GroupColumn, names: NDArray[np.str_], control_columns: Sequence[str] = ()
) -> list[I64]:
    """The rows of a group column's table (``names``) of each control level, in the order of
    :func:`~assay.fairness.records.by_group`'s records (one level of every row without control
    columns)."""
    if not control_columns:
        return [np.arange(len(names))]
    crossed = not isinstance(column, str)
    return [rows for _, _, rows in control_levels(names, len(control_columns), crossed)]


def by_group_values(
    counts: NDArray[Any],
    levels: Sequence[I64],
    *,
    zero_division: float | None,
    method: str,
    agg: str = "worst_case",
) -> F64:
    """The values of :func:`~assay.fairness.records.by_group`'s records of (weighted) counts
    shaped (b, K, 4) (b resamples of a table's K rows; ``levels``: :func:`control_rows`),
    shape (b, records): per level, per group the four rates and NaN for ``GroupCounts``, then
    the aggregates; NaN where undefined."""
    out = []
    for rows in levels:
        w = counts[:, rows]
        rates = group_rates(w, zero_division)
        nan = np.full(w.shape[:-1], np.nan)
        per = np.stack([*(rates[r] for r in RATES), nan], axis=-1)
        out.append(per.reshape(len(w), -1))
        aggs = aggregate_values(w, method=method, zero_division=zero_division, agg=agg)
        out.append(np.stack(list(aggs.values()), axis=-1))
    return np.concatenate(out, axis=-1)
