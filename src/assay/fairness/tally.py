"""The fairness evaluator's tally: its sufficient statistics, its records in families with
the point estimate's formulas on a leading resample axis, and the tallies the one engine
(:mod:`assay.uncertainty`) turns into intervals, slices and gaps.

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

:class:`Units` are the classes of interchangeable datums. A datum's whole contribution to
every fairness record is its outcome (TP, FP, FN, TN), its privileged bit under every
definition, its group in every group column and its weight; datums equal in all of these are
interchangeable, and a bootstrap that draws ``n`` datums and counts them per class draws
``Multinomial(n, m / n)`` over the classes (``m`` their multiplicities), exactly as drawing
the datums. The evaluator keeps them (with ``ci``, without ``cluster``); they add up across
batches and merge exactly, in one canonical (sorted) order whatever the batching. Without
weights they are at most ``4 * 2^D`` times the groups; with continuous weights they are the
datums.

:class:`Stats` holds one set of rows: its families, counts, classes and, with ``cluster``,
each cluster's counts. :func:`tallies` gives the
:class:`~assay.uncertainty.tally.Tally` of each way a resample is drawn, the rows of every
one being units that are interchangeable for its records:

* a family's own cells (rows without weights; not the mean over definitions): each cell's
  datums are its units (a multinomial draw over the cells, with probabilities count / n);
* the classes of datums (the mean over definitions, and everything weighted): a resample's
  class counts, through sparse matrices to the joint cells and on to each family's flat
  statistics;
* clusters (``cluster=COLUMN``): per family, its cells with each cluster's counts in them
  (the cluster bootstrap weighs a cell by the drawn clusters' counts there).

A slice's gap to the whole set draws both from one resample (:func:`gap_tallies`): the
slice's cells (or classes) and the other rows', the slice's adding to both. The engine's
percentile bootstrap gives every interval (:func:`intervals`, :func:`slice_records`).

Example:
    >>> import numpy as np
    >>> from assay.fairness import FairnessEvaluator
    >>> ev = FairnessEvaluator(["sex=F"], ci=0.9, num_bootstrap=50, cluster="site")
    >>> ev = ev.add_arrays([1, 0, 1, 1], [1, 0, 0, 1],
    ...     {"sex": ["F", "M", "F", "M"], "site": ["a", "a", "b", "b"]})
    >>> spd = ev.compute()[0]
    >>> spd.parameters["cluster"], spd.parameters["ci_method"]
    ('site', 'bootstrap')
    >>> u = Units.of_batch(np.array([0, 0, 3]), [np.array([True, True, False])],
    ...                    [(np.array(["a"]), np.array([0, 0, 0]))], np.array([2.0, 2.0, 1.0]))
    >>> u.keys.tolist(), u.weights.tolist(), u.counts.tolist()
    ([[0, 1, 0], [3, 0, 0]], [2.0, 1.0], [2, 1])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from math import prod
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from assay.fairness.by_group import aggregate_values, group_rates
from assay.fairness.compute import FAIRNESS_VALUES, GroupCounts
from assay.fairness.declared import METRICS
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
from assay.results import Metric
from assay.uncertainty.intervals import (
    INTERVAL_KEYS,
    CIOptions,
    attach,
    gap_bounds,
    tally_bounds,
)
from assay.uncertainty.slices import annotate, record_key, slice_order
from assay.uncertainty.tally import Key, Tally

__all__ = [
    "KEY",
    "Counts",
    "Family",
    "Setup",
    "Stats",
    "Units",
    "attach_intervals",
    "average_values",
    "by_group_values",
    "control_rows",
    "definition_values",
    "drawn",
    "families",
    "gap_tallies",
    "intervals",
    "joint",
    "mapped",
    "record_id",
    "slice_records",
    "sliced",
    "stacked",
    "tallies",
    "transposed",
]

I64 = NDArray[np.int64]
F64 = NDArray[np.float64]
Build = Callable[[I64, F64 | None], list[Metric]]
Values = Callable[[F64, F64 | None], F64]
#: The four outcomes of a datum, in the order of the cells.
OUTCOMES = ("TP", "FP", "FN", "TN")


@dataclass(frozen=True)
class Counts:
    """The counts of a set of rows: per definition its (4, 2) cells (``cells``, (D, 4, 2):
    TP, FP, FN, TN x unprivileged, privileged), per group column its table, the overall TP,
    FP, FN, TN and, when rows came with sample weights, the weight sums of the definitions'
    cells and of the overall four (None: no weights)."""

    cells: I64
    tables: Sequence[GroupTable]
    overall: I64
    cell_weights: F64 | None = None
    overall_weights: F64 | None = None

    @property
    def weighted(self) -> bool:
        return self.overall_weights is not None

    @property
    def n(self) -> int:
        """The number of rows."""
        return int(self.overall.sum())

    @property
    def sums(self) -> F64:
        """The definitions' cells' weight sums, (D, 4, 2) (the counts as floats without
        weights)."""
        w = self.cell_weights
        return self.cells.astype(np.float64) if w is None else w

    @property
    def definitions(self) -> list[GroupCounts]:
        """Per definition, its counts."""
        return [GroupCounts(*c) for c in self.cells]

    @property
    def definition_sums(self) -> list[GroupCounts]:
        """Per definition, the weight sums (the counts as floats without weights)."""
        return [GroupCounts(*c) for c in self.sums]

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
    ``shape``: shape (b, records)), ``groups`` (a group column's group names, the rows of
    ``shape``; None for the others) and ``ids`` (each flat count's cell in words, a unit of
    it: ``("definition", label, outcome, privileged)``, ``("group", column, group,
    outcome)``, ``("overall", outcome)``; none for the mean)."""

    records: list[Metric]
    kind: str
    build: Build
    shape: tuple[int, ...]
    weighted: bool
    cells: Callable[[Units], I64]
    flat: Callable[[Counts], F64]
    values: Values
    groups: NDArray[np.str_] | None = None
    ids: tuple[Any, ...] = ()

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
        (:func:`joint`) to this family's flat statistics."""
        return family_matrix(self.cells(cells), self.size, self.weighted)


@dataclass(frozen=True)
class Stats:
    """The families of one set of rows (:func:`families`), its classes of datums (None
    without ``ci``, with ``cluster``, or from a state saved without them) and, with
    ``cluster``, each cluster's counts of the same rows."""

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


def _flat(counts: Any, sums: Any, weighted: bool) -> F64:
    parts = [np.asarray(counts, np.float64).ravel()]
    return np.concatenate(parts + ([np.asarray(sums, np.float64).ravel()] if weighted else []))


def _definition(setup: Setup, counts: Counts, i: int) -> Family:
    g, label, weighted = setup.groups[i], setup.positive_label, counts.weighted

    def build(k: Any, s: Any) -> list[Metric]:
        w = None if s is None else GroupCounts.of_cells(s)
        return definition_records(g, GroupCounts.of_cells(k), positive_label=label, weights=w)

    def flat(c: Counts) -> F64:
        w = c.sums[i] if weighted else None  # a cluster's: maybe unweighted
        return _flat(c.cells[i], w, weighted)

    def cells(u: Units) -> I64:
        return (u.keys[:, 0] * 2 + u.keys[:, 1 + i]).reshape(-1, 1)

    def values(k: F64, s: F64 | None) -> F64:
        return definition_values(GroupCounts.of_cells(k if s is None else s))

    sums = counts.definition_sums[i] if weighted else None
    recs = definition_records(g, counts.definitions[i], positive_label=label, weights=sums)
    ids = tuple(("definition", g.label, o, bool(p)) for o in OUTCOMES for p in (0, 1))
    return Family(recs, "definition", build, (4, 2), weighted, cells, flat, values, ids=ids)


def _mean(setup: Setup, counts: Counts) -> Family:
    groups, label, weighted = setup.groups, setup.positive_label, counts.weighted
    d = len(groups)

    def build(k: Any, s: Any) -> list[Metric]:
        on = [GroupCounts.of_cells(x) for x in (k if s is None else s)]
        return average_records(groups, on, positive_label=label, weighted=weighted)

    def flat(c: Counts) -> F64:
        return _flat(c.cells, c.sums if weighted else None, weighted)

    def cells(u: Units) -> I64:
        return np.arange(d) * 8 + u.keys[:, :1] * 2 + u.keys[:, 1 : 1 + d]

    def values(k: F64, s: F64 | None) -> F64:
        return average_values(GroupCounts.of_cells(k if s is None else s))

    sums = counts.sums if weighted else None
    recs = build(counts.cells.reshape(d, 4, 2).astype(np.int64), sums)
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
    label = column if isinstance(column, str) else tuple(column)
    ids = tuple(("group", label, str(g), o) for g in names for o in OUTCOMES)
    shape = (len(names), 4)
    return Family(recs, "table", build, shape, weighted, cells, flat, values, names, ids)


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
    ids = tuple(("overall", o) for o in OUTCOMES)
    return Family(recs, "overall", build, (4,), weighted, cells, flat, values, ids=ids)


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
        per = np.stack([*(rates[r] for r in METRICS.family("rates")), nan], axis=-1)
        out.append(per.reshape(len(w), -1))
        aggs = aggregate_values(w, method=method, zero_division=zero_division, agg=agg)
        out.append(np.stack(list(aggs.values()), axis=-1))
    return np.concatenate(out, axis=-1)


# ---------------------------------------------------------------- classes of datums


@dataclass(frozen=True)
class Units:
    """Classes of interchangeable datums: ``keys`` (k, 1 + D + T) int: the outcome (0 TP,
    1 FP, 2 FN, 3 TN), the privileged bit under each of the D definitions and the group code
    (into ``names[j]``, sorted) in each of the T group columns; ``weights`` (k,) each
    class's weight (1 for rows added without weights); ``counts`` (k,) its datums;
    ``complete``: False when part of the data came without its classes (a state saved by an
    older version), so no interval is drawn from part of the data."""

    names: tuple[NDArray[np.str_], ...]
    keys: I64
    weights: F64
    counts: I64
    complete: bool = True

    @classmethod
    def empty(cls, definitions: int, tables: int) -> Units:
        """No classes yet (of D definitions and T group columns)."""
        names = tuple(np.zeros(0, dtype="<U1") for _ in range(tables))
        keys = np.zeros((0, 1 + definitions + tables), dtype=np.int64)
        return cls(names, keys, np.zeros(0), np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.counts)

    def state(self) -> dict[str, NDArray[Any]]:
        """Plain arrays of the classes (:meth:`of_state` reads them)."""
        out: dict[str, NDArray[Any]] = {f"names_{j}": n for j, n in enumerate(self.names)}
        out |= {"keys": self.keys, "weights": self.weights, "counts": self.counts}
        return out if self.complete else out | {"incomplete": np.array(True)}

    @classmethod
    def of_state(cls, state: Mapping[str, NDArray[Any]]) -> Units:
        """What :meth:`state` packed."""
        tables = sum(k.startswith("names_") for k in state)
        names = tuple(np.asarray(state[f"names_{j}"]).astype(str) for j in range(tables))
        keys = np.asarray(state["keys"], dtype=np.int64)
        return cls(names, keys if keys.ndim == 2 else keys.reshape(len(keys), -1),
                   np.asarray(state["weights"], np.float64),
                   np.asarray(state["counts"], np.int64),
                   "incomplete" not in state)  # fmt: skip

    @classmethod
    def of_batch(
        cls,
        outcome: I64,
        masks: Sequence[NDArray[np.bool_]],
        groupings: Sequence[tuple[NDArray[np.str_], I64]],
        weights: F64 | None,
    ) -> Units:
        """The classes of one batch: each datum's outcome, privileged masks, groups (names
        and codes) and weights (None: every datum weighs 1)."""
        n = len(outcome)
        cols = [np.asarray(outcome, np.int64).reshape(n, 1)]
        cols += [np.asarray(m, np.int64).reshape(n, 1) for m in masks]
        cols += [np.asarray(c, np.int64).reshape(n, 1) for _, c in groupings]
        w = np.ones(n) if weights is None else np.asarray(weights, np.float64)
        names = tuple(np.asarray(x).astype(str) for x, _ in groupings)
        return _collect(names, np.hstack(cols), w, np.ones(n, np.int64))

    @property
    def definitions(self) -> int:
        return self.keys.shape[1] - 1 - len(self.names)

    def on(self, names: Sequence[NDArray[np.str_]]) -> Units:
        """The same classes with group codes into ``names`` (each a superset of ours)."""
        keys = self.keys.copy()
        start = 1 + self.definitions
        for j, (mine, theirs) in enumerate(zip(self.names, names)):
            keys[:, start + j] = np.searchsorted(theirs, mine)[keys[:, start + j]]
        return Units(tuple(names), keys, self.weights, self.counts)

    def __add__(self, other: Units) -> Units:
        complete = self.complete and other.complete
        if not len(self) or not len(other):  # one side holds none: the other as it is
            return replace(other if not len(self) else self, complete=complete)
        names = tuple(np.union1d(a, b).astype(str) for a, b in zip(self.names, other.names))
        a, b = self.on(names), other.on(names)
        keys = np.concatenate([a.keys, b.keys])
        out = _collect(names, keys, np.concatenate([a.weights, b.weights]),
                       np.concatenate([a.counts, b.counts]))  # fmt: skip
        return replace(out, complete=complete)

    def __sub__(self, other: Units) -> Units:
        """These classes without ``other``'s datums (``other`` a part of them: a slice)."""
        b = other.on(self.names)
        keys = np.concatenate([self.keys, b.keys])
        return _collect(self.names, keys, np.concatenate([self.weights, b.weights]),
                        np.concatenate([self.counts, -b.counts]))  # fmt: skip


def _collect(names: tuple[NDArray[np.str_], ...], keys: I64, weights: F64, counts: I64) -> Units:
    """Classes summed by equal key and weight (bit for bit), sorted by the key's columns then
    the weight; empty ones dropped. The key's columns are one mixed-radix code when it fits
    62 bits (its order is the columns' lexicographic order): with one weight and few codes
    the classes are a ``bincount`` of it, else one ``lexsort`` of (code, weight)."""
    w = np.ascontiguousarray(weights, dtype=np.float64) + 0.0  # -0.0 is 0.0
    bits = w.view(np.int64)  # weights >= 0: ordered as the weights
    c = np.asarray(counts, np.int64)
    if len(keys) == 0:
        return Units(names, keys.reshape(0, keys.shape[1]), w, c)
    sizes = keys.max(axis=0) + 1
    span = float(np.prod(sizes.astype(np.float64)))
    if span >= 2.0**62:  # the columns themselves, least significant first
        order = np.lexsort((bits, *(keys[:, i] for i in range(keys.shape[1] - 1, -1, -1))))
        k = keys[order]
        change = (k[1:] != k[:-1]).any(axis=1)
    else:
        code = np.zeros(len(keys), dtype=np.int64)
        for i, size in enumerate(sizes.tolist()):
            code = code * size + keys[:, i]
        if span <= 4 * len(keys) and (bits == bits[0]).all():
            total = np.rint(np.bincount(code, weights=c, minlength=int(span))).astype(np.int64)
            at = np.flatnonzero(total)
            cols = [(at // int(np.prod(sizes[i + 1 :]))) % sizes[i] for i in range(len(sizes))]
            return Units(names, np.column_stack(cols).astype(np.int64), np.full(len(at), w[0]),
                         total[at])  # fmt: skip
        order = np.lexsort((bits, code))
        change = code[order][1:] != code[order][:-1]
    change |= bits[order][1:] != bits[order][:-1]
    starts = np.flatnonzero(np.r_[True, change])
    total = np.add.reduceat(c[order], starts)
    first = order[starts[total != 0]]
    return Units(names, np.ascontiguousarray(keys[first]), w[first], total[total != 0])


def joint(units: Units) -> tuple[Any, Units]:
    """The joint cells (the classes without their weight) and the sparse map (k, 2J) from
    class counts to their counts and weight sums: a resample's statistics of every family
    are sums over joint cells, so the map from the (many) classes runs once per resample
    with two numbers per class, and the families read the (few) joint cells."""
    from scipy import sparse

    k = len(units.counts)
    new = np.r_[True, (units.keys[1:] != units.keys[:-1]).any(axis=1)] if k else np.ones(0, bool)
    cell = np.cumsum(new) - 1
    j = int(new.sum())
    rows, cols = np.r_[np.arange(k), np.arange(k)], np.r_[cell, cell + j]
    data = np.r_[np.ones(k), units.weights]
    a = sparse.csr_matrix((data, (rows, cols)), shape=(k, 2 * j))
    total = np.bincount(cell, weights=units.counts, minlength=j).astype(np.int64)
    return a, Units(units.names, units.keys[new], np.ones(j), total)


def family_matrix(cells: I64, size: int, weighted: bool) -> Any:
    """The sparse map (2J, size or 2 size) from the counts and weight sums of J joint cells
    (:func:`joint`) to a family's flat counts and, ``weighted``, its weight sums after them:
    ``cells`` (J, r) are the family cells (in ``0 .. size - 1``) each joint cell adds to (r of
    them: one per definition for the mean)."""
    from scipy import sparse

    j, r = cells.shape
    one = sparse.csr_matrix(
        (np.ones(j * r), (np.repeat(np.arange(j), r), cells.reshape(-1))), shape=(j, size)
    )
    if weighted:
        return sparse.block_diag([one, one], format="csr")
    return sparse.vstack([one, sparse.csr_matrix((j, size))], format="csr")


def stacked(families: Sequence[Family], units: Units) -> list[Any]:
    """The chain from class counts to the families' flat statistics side by side (one draw of
    the classes serves them all): to the joint cells' counts and sums, then to the families'."""
    from scipy import sparse

    a, cells = joint(units)
    return [a, sparse.hstack([f.matrix(cells) for f in families], format="csr")]


def transposed(chain: Sequence[Any] | None) -> list[Any]:
    """A ``chain`` of sparse matrices transposed, row-major (a product with them is faster)."""
    return [m.T.tocsr() for m in chain or ()]


def mapped(rows: Sequence[Any], w: F64) -> F64:
    """Resample weights (b, m) through a :func:`transposed` chain: the flat statistics."""
    for m in rows:
        w = np.asarray((m @ w.T).T)
    return w


# ---------------------------------------------------------------- the engine's tallies

#: What identifies a fairness record among a set's (beside its type): its tally key, and
#: the match of a slice's record to the whole set's.
KEY = (
    "group_column",
    "privileged",
    "average_over",
    "group",
    "control_column",
    "control",
    "method",
    "agg",
)


NO_UNITS = "the state has no classes of datums (saved by an older version)"
Keep = Callable[[Metric], bool] | None


def record_id(m: Metric) -> Key:
    """A record's key among the tallies' keys (:data:`KEY`)."""
    return record_key(m, KEY)


def sliced(m: Metric) -> bool:
    """A record computed per slice: a definition's metric or a group column's aggregate
    (not the mean over definitions)."""
    return m.type in METRICS.sliced and "average_over" not in m.parameters


def _wanted(m: Metric, keep: Keep) -> bool:
    """Whether record ``m`` gets an interval: a number (not a dict of counts) that ``keep``
    (None: every record) wants."""
    return m.value is not None and not isinstance(m.value, dict) and (keep is None or keep(m))


def _family_values(
    families: Sequence[Family], chain: Any, keep: Keep
) -> tuple[tuple[Key, ...], Callable[[F64], F64]]:
    """The keys and values of ``families``' wanted records, their flat statistics side by
    side being the drawn rows mapped by the ``chain`` of sparse matrices (None: the rows are
    the flat statistics)."""
    starts = np.cumsum([0, *(f.width for f in families)])
    want = [[j for j, m in enumerate(f.records) if _wanted(m, keep)] for f in families]
    rows = transposed(chain)

    def values(w: F64) -> F64:
        flat = mapped(rows, w)
        parts = [f.replicates(flat[:, a : a + f.width])[:, j]
                 for f, a, j in zip(families, starts, want)]  # fmt: skip
        return np.concatenate(parts, axis=1)

    keys = tuple(record_id(f.records[j]) for f, js in zip(families, want) for j in js)
    return keys, values


def _objects(items: Sequence[Any]) -> NDArray[Any]:
    """A 1-d object array of ``items`` (tuples stay whole)."""
    out = np.empty(len(items), dtype=object)
    for i, x in enumerate(items):
        out[i] = x
    return out


def _compact(
    keys: tuple[Key, ...], values: Callable[[F64], F64], multiplicity: NDArray[np.int64], ids: Any
) -> Tally:
    """A tally of rows that each stand for their multiplicity's datums (a cell, a class),
    named by the row (``ids``: the cell in words, the class's key): in the compact form
    (``unit_weight``), as datums have no ids of their own: a comparison of two runs does
    not pair such rows as units."""
    return Tally(keys, values, multiplicity, unit=np.arange(len(multiplicity), dtype=np.intp),
                 unit_weight=multiplicity, ids=ids)  # fmt: skip


def _clustered(
    keys: tuple[Key, ...], values: Callable[[F64], F64], flats: Sequence[F64], ids: Any = None
) -> Tally:
    """The cluster tally of one draw: ``flats`` (one per cluster, in sorted order) are each
    cluster's flat statistics, a row per statistic, each cluster's count (or weight sum)
    there its units'."""
    m = np.stack([np.asarray(f, dtype=np.float64).ravel() for f in flats])
    g, r = np.nonzero(m)
    gone = np.setdiff1d(np.arange(len(m)), g)  # a cluster with nothing here still is drawn
    g, r = np.r_[g, gone], np.r_[r, np.zeros(len(gone), np.intp)]
    weight: NDArray[Any] = np.asarray(m[g, r])  # counts, or weight sums
    codes = g.astype(np.intp)
    return Tally(
        keys,
        values,
        np.rint(m.sum(axis=0)).astype(np.int64),
        unit=r.astype(np.intp),
        unit_weight=weight,
        ids=None if ids is None else _objects([ids[i] for i in r]),
        codes=lambda _column: codes,
    )


def tallies(
    stats: Stats,
    families: Sequence[Family],
    opts: CIOptions,
    keep: Keep = None,
    *,
    apart: bool = False,
) -> list[Tally]:
    """The tallies of ``families`` (of ``stats``): with ``cluster`` the families' cells over
    the clusters, all in one tally (one draw of the clusters serves them all), or with
    ``apart`` one tally per family, whose rows are then units (a datum is in one cell of a
    family; the draws are the same, each tally drawing the clusters with the same seed);
    without ``cluster``, each family its own cells when the rows came without weights (not
    the mean over definitions), and the others the classes of datums at once (none, and
    ``ci_undefined`` on their records, from a state without them)."""
    if opts.cluster:
        groups = sorted(stats.clusters)
        if not apart:
            keys, values = _family_values(families, None, keep)
            flats = [np.concatenate([f.flat(stats.clusters[g]) for f in families]) for g in groups]
            return [_clustered(keys, values, flats)]
        out = []
        for f in families:
            keys, values = _family_values([f], None, keep)
            flats = [f.flat(stats.clusters[g]) for g in groups]
            out.append(_clustered(keys, values, flats, None if f.weighted else f.ids or None))
        return out
    own = [f for f in families if not stats.counts.weighted and f.kind != "mean"]
    out = []
    for f in own:
        keys, values = _family_values([f], None, keep)
        mult = np.rint(f.flat(stats.counts)).astype(np.int64)
        out.append(_compact(keys, values, mult, _objects(f.ids)))
    rest = [f for f in families if f not in own]
    if rest and stats.units is None:
        for f in rest:
            for m in f.records:
                if _wanted(m, None):
                    m.parameters.update(opts.parameters(None, None, "bootstrap", NO_UNITS))
    elif rest and stats.units is not None:
        keys, values = _family_values(rest, stacked(rest, stats.units), keep)
        out.append(_compact(keys, values, stats.units.counts, stats.units.keys))
    return out


def drawn(stats: Stats, keep: Keep = None) -> tuple[list[Family], Family | None]:
    """The families of ``stats`` whose records get intervals drawn (those ``keep`` wants
    records of), and the mean over definitions when it is the mean of one definition (that
    definition's records, with the same intervals: not drawn again)."""
    fams = [f for f in stats.families if keep is None or any(keep(m) for m in f.records)]
    means = [f for f in fams if f.kind == "mean"]
    one = len(means) == 1 and sum(f.kind == "definition" for f in fams) == 1
    return [f for f in fams if not (one and f.kind == "mean")], means[0] if one else None


def intervals(stats: Stats, opts: CIOptions, keep: Keep = None) -> None:
    """Intervals on the records of ``stats``' families (those ``keep`` wants, when given: no
    interval is drawn for the others), from its :func:`tallies`."""
    fams, mean = drawn(stats, keep)
    attach([m for f in fams for m in f.records], tallies(stats, fams, opts, keep), opts,
           record_id)  # fmt: skip
    if mean is not None:  # the mean of one definition is that definition: the same interval
        first = next(f for f in fams if f.kind == "definition")
        for avg, it in zip(mean.records, first.records):
            keys = INTERVAL_KEYS & it.parameters.keys()
            avg.parameters.update({k: it.parameters[k] for k in keys})


# ---------------------------------------------------------------- slices and their gaps

Pair = tuple[Family, Family, list[tuple[int, int]]]


def _gap_values(pairs: Sequence[Pair], chain: Any) -> tuple[tuple[Key, ...], Callable[[F64], F64]]:
    """Slice-minus-whole differences: each pair is a slice's family, the whole set's, and the
    (slice record, whole record) indices wanted; the flat statistics are every pair's slice
    then whole statistics, side by side (the keys: the slice's records')."""
    starts = np.cumsum([0, *(s.width + w.width for s, w, _ in pairs)])
    rows = transposed(chain)

    def values(weights: F64) -> F64:
        flat, out = mapped(rows, weights), []
        for (s, w, want), a in zip(pairs, starts):
            mine = s.replicates(flat[:, a : a + s.width])
            theirs = w.replicates(flat[:, a + s.width : a + s.width + w.width])
            i, j = (list(x) for x in zip(*want))
            out.append(mine[:, i] - theirs[:, j])
        return np.concatenate(out, axis=1)

    return tuple(record_id(s.records[i]) for s, _, want in pairs for i, _ in want), values


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def gap_tallies(whole: Stats, part: Stats, opts: CIOptions) -> list[Tally]:
    """The gap tallies of every definition and group column of one slice (``part``): the
    slice's family and the whole set's side by side, drawn jointly: over the clusters, per
    pair the slice's cells and the other rows' (no weights), or the classes of the slice's
    datums and of the other rows'."""
    theirs = [f for f in whole.families if f.kind != "mean"]
    pairs = []
    for s, w in zip(part.families[:-1], theirs[:-1]):  # not the overall records
        ids = {record_id(m): j for j, m in enumerate(w.records) if _number(m.value)}
        want = [(i, ids[record_id(m)]) for i, m in enumerate(s.records)
                if sliced(m) and _number(m.value) and record_id(m) in ids]  # fmt: skip
        if want:
            pairs.append((s, w, want))
    if not pairs:
        return []
    if opts.cluster:
        return [_clustered(*_gap_values(pairs, None), _cluster_flats(pairs, whole, part))]
    if not whole.counts.weighted:  # per pair, the slice's cells and the other rows'
        out = []
        for p in pairs:
            mult, chain = _cells_draw(p, part, whole)
            out.append(Tally(*_gap_values([p], chain), mult))
        return out
    mult, chain = _classes_draw(pairs, part, whole)
    return [Tally(*_gap_values(pairs, chain), mult)]


def _cells_draw(pair: Pair, part: Stats, whole: Stats) -> tuple[NDArray[np.int64], list[Any]]:
    """One pair's draw without weights: the cells of the slice's rows, then of the other rows;
    a slice cell adds to the slice's counts and to its cell of the whole set's."""
    from scipy import sparse

    s, w, _ = pair
    mine = np.rint(s.flat(part.counts)).astype(np.int64)
    full = np.rint(w.flat(whole.counts)).astype(np.int64)
    rows = np.arange(s.size)
    if s.groups is not None and w.groups is not None:  # the slice's groups among the whole's
        rows = (np.searchsorted(w.groups, s.groups)[:, None] * 4 + np.arange(4)).ravel()
    rest = full.copy()
    rest[rows] -= mine
    k = s.size + w.size
    r = np.concatenate([np.arange(s.size), np.arange(s.size), s.size + np.arange(w.size)])
    c = np.concatenate([np.arange(s.size), s.size + rows, s.size + np.arange(w.size)])
    m = sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(k, k))
    return np.concatenate([mine, rest]), [m]


def _cluster_flats(pairs: list[Pair], whole: Stats, part: Stats) -> list[F64]:
    """Per cluster (sorted), every pair's slice statistics (of the cluster's rows in the
    slice; none when it has none) then whole-set statistics."""
    empty = [np.zeros(s.width) for s, _, _ in pairs]

    def flat(g: str) -> F64:
        here = part.clusters.get(g)
        mine = [e if here is None else s.flat(here) for (s, _, _), e in zip(pairs, empty)]
        theirs = [w.flat(whole.clusters[g]) for _, w, _ in pairs]
        return np.concatenate([x for two in zip(mine, theirs) for x in two])

    return [flat(g) for g in sorted(whole.clusters)]


def _classes_draw(
    pairs: list[Pair], part: Stats, whole: Stats
) -> tuple[NDArray[np.int64], list[Any]]:
    """With weights: the slice's classes of datums, then the other rows'; through their joint
    cells (:func:`joint`), the slice's add to the slice's statistics and the whole set's,
    the other rows' to the whole set's."""
    from scipy import sparse

    assert part.units is not None and whole.units is not None
    mine, rest = part.units, whole.units - part.units
    (a_s, cells_s), (a_r, cells_r) = joint(mine), joint(rest)
    full = cells_s.on(whole.units.names)
    top = [m for s, w, _ in pairs for m in (s.matrix(cells_s), w.matrix(full))]
    nothing = [sparse.csr_matrix((2 * len(cells_r.counts), s.width)) for s, _, _ in pairs]
    low = [m for (_, w, _), z in zip(pairs, nothing) for m in (z, w.matrix(cells_r))]
    second = sparse.vstack([sparse.hstack(top), sparse.hstack(low)], format="csr")
    first = sparse.block_diag([a_s, a_r], format="csr")
    return np.concatenate([mine.counts, rest.counts]), [first, second]


def slice_records(
    whole: Stats, records: list[Metric], slices: Mapping[str, Mapping[str | None, Stats]],
    opts: CIOptions | None,
) -> list[Metric]:  # fmt: skip
    """The sliced records of every column's slices (``slices``: each value's stats, of the
    slice's rows alone, ``None`` the rows without a value; ``whole``: the whole set's stats
    and ``records`` its records), values in sorted order (the missing last); with ``opts``
    each with its interval and its gap's."""
    out: list[Metric] = []
    for column, parts in slices.items():
        for v in sorted(parts, key=slice_order):
            part = parts[v]
            if opts is not None:
                intervals(part, opts, keep=sliced)
            weighted = opts is not None and whole.counts.weighted and not opts.cluster
            drawn = opts is not None and not (
                weighted and (whole.units is None or part.units is None)
            )  # weighted gaps draw the classes of datums: none from an older state
            gaps = gap_bounds(gap_tallies(whole, part, opts), opts) if drawn and opts else None
            recs = part.records(keep=sliced)  # the mean over definitions: not sliced
            out += annotate(recs, records, column=column, value=v, n=part.counts.n, where=KEY,
                            gap_ci=gaps)  # fmt: skip
    return out


def attach_intervals(
    records: list[Metric], cells: NDArray[Any], values: Callable[[F64], Any], opts: CIOptions
) -> None:
    """Percentile intervals on ``records`` drawn over their own ``cells`` (a datum's cell its
    unit): ``values`` of a chunk of resampled counts (b,) + the shape of ``cells`` gives
    their values (b, records), in order, NaN where a record would be ``None`` (the point
    estimate's formulas on arrays); dict-valued records (counts) get none."""
    shape = np.shape(cells)
    want = [j for j, m in enumerate(records) if _wanted(m, None)]
    if not want:
        return

    def vals(w: F64) -> F64:
        counts = np.rint(w).reshape((len(w), *shape))
        return np.asarray(values(counts))[:, want]

    mult = np.asarray(cells).reshape(-1).astype(np.int64)
    t = Tally(tuple((j,) for j in want), vals, mult)
    ci, _ = tally_bounds(t, replace(opts, method="bootstrap", cluster=None))
    for c, j in enumerate(want):
        lo, hi = float(ci[0, c]), float(ci[1, c])
        records[j].parameters.update(opts.parameters(lo, hi, "bootstrap"))
