"""Confidence intervals of the fairness metrics: a bootstrap over datums, from the counts
the evaluator already keeps (see :mod:`assay.intervals`).

A datum's whole contribution to one privileged-group definition is its cell: (unprivileged
or privileged) x (TP, FP, FN, TN), eight cells; to one group column, (group, or control level
and group) x (TP, FP, FN, TN). Resampling datums and counting them per cell is a multinomial
draw over the cells with probabilities count / n, so the kept counts are the sufficient
statistics: no datum is re-read. The replicates of a chunk of resamples come at once from
the point estimate's own formulas on arrays with a resample axis (the point estimate is the
one-row case; :mod:`assay.fairness.draws`), so a resampled value is defined exactly when the
point estimate would be (NaN, and left out, where its record would be ``None``).

Intervals go on SPD, DI, AOD and EOD of every definition, on every group's SelectionRate,
TruePositiveRate, FalsePositiveRate and Accuracy and the four fairlearn-style aggregates of
every group column, and on the overall Accuracy, Precision and Recall (four cells), each
family drawn from its own cells when there are no sample weights. The mean over definitions
and everything weighted draw classes of interchangeable datums instead
(:mod:`assay.fairness.units`); the engine of all of them is :mod:`assay.fairness.draws`.
:func:`attach_intervals` serves the LLM fairness suite's records (a family of its own cells
with the suite's formulas on arrays).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.clusters import Clusters
from assay.fairness.compute import GroupCounts
from assay.fairness.group_table import GroupTable
from assay.intervals import CIOptions
from assay.results import Metric

__all__ = ["attach_intervals", "counts_of", "definition_cells", "mark_no_interval", "table_with"]


def attach_intervals(
    records: list[Metric], cells: NDArray[Any], values: Callable[[NDArray[np.float64]], Any],
    opts: CIOptions, clusters: Clusters | None = None,
) -> None:  # fmt: skip
    """Intervals on ``records``: ``values`` of a chunk of resampled counts (b,) + the shape
    of ``cells`` gives their values (b, records), in order, NaN where a record would be
    ``None`` (the point estimate's formulas on arrays); dict-valued records (counts) get
    none. ``clusters``: each cluster's cells (the cluster bootstrap,
    :mod:`assay.fairness.clusters`). One family of :mod:`assay.fairness.draws`, drawn from
    its own cells."""
    from assay.fairness.draws import Family, attach

    def unused(*_: Any) -> Any:
        raise AssertionError("a family drawn from its own cells, never rebuilt")

    fam = Family(records, unused, np.shape(cells), False, unused, unused,
                 values=lambda k, _: values(k))  # fmt: skip
    flat = np.asarray(cells).reshape(-1).astype(np.int64)
    attach([fam], flat if clusters is None else clusters, opts)


def definition_cells(c: GroupCounts) -> NDArray[np.int64]:
    """The eight counts of a definition as a (4, 2) array: TP, FP, FN, TN x (u, p)."""
    return np.stack([c.tp, c.fp, c.fn, c.tn]).astype(np.int64)


def counts_of(cells: NDArray[Any]) -> GroupCounts:
    """Inverse of :func:`definition_cells`; cells shaped (..., 4, 2) give counts shaped
    (..., 2) (many resamples, or definitions, at once)."""
    return GroupCounts(*(cells[..., i, :] for i in range(4)))


def table_with(table: GroupTable, counts: NDArray[np.int64]) -> GroupTable:
    """``table`` with other counts (same groups)."""
    return replace(table, counts=counts)


def mark_no_interval(records: list[Metric], why: str, opts: CIOptions) -> None:
    """``ci_undefined`` (with the interval's settings) on defined metric records."""
    for m in records:
        if m.value is not None and not isinstance(m.value, dict):
            m.parameters.update(opts.parameters(None, None, "bootstrap", undefined=why))
