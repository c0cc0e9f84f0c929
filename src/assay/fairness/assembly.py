"""The records of a :class:`~assay.fairness.evaluator.FairnessEvaluator`'s counts, each
with its interval under ``ci`` (:mod:`assay.fairness.intervals`; whole clusters drawn
under ``cluster``, :mod:`assay.fairness.clusters`)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from assay.fairness.clusters import aligned, membership
from assay.fairness.intervals import (
    attach_intervals,
    counts_of,
    definition_cells,
    mark_no_interval,
)
from assay.fairness.summaries import average_records, definition_records, overall_records
from assay.intervals import INTERVAL_KEYS
from assay.results import Metric

if TYPE_CHECKING:
    from assay.fairness.evaluator import FairnessEvaluator

__all__ = ["records_of"]


def records_of(ev: FairnessEvaluator, subs: Mapping[str, FairnessEvaluator]) -> list[Metric]:
    """Per definition, their mean, per group column and over all datums: the records of
    ``ev``'s counts; ``subs``: the per-cluster counts of the same rows."""
    out: list[Metric] = []
    sums = ev._weighted_counts
    label = ev.positive_label
    for i, (g, c) in enumerate(zip(ev.groups, ev._counts)):
        w = None if sums is None else sums[i]
        recs = definition_records(g, c, positive_label=label, weights=w)
        _interval(
            ev, recs, definition_cells(c), w is None,
            lambda k, g=g: definition_records(g, counts_of(k), positive_label=label),
            subs, lambda s, i=i: definition_cells(s._counts[i]),
        )  # fmt: skip
        out += recs
    if ev.groups:
        recs = average_records(
            ev.groups, sums or ev._counts, positive_label=label, weighted=sums is not None
        )
        if ev.ci is not None and len(ev.groups) == 1:  # the mean of one: the same
            for mean, one in zip(recs, out[: len(recs)]):
                keys = INTERVAL_KEYS & one.parameters.keys()
                mean.parameters.update({k: one.parameters[k] for k in keys})
        elif ev.ci is not None:
            mark_no_interval(recs, "the mean over definitions has no interval yet", ev.ci)
        out += recs
    for j, (column, table) in enumerate(zip(ev.group_columns, ev._tables)):
        recs = ev._by_group(column, table)
        build = partial(ev._resampled_table, column, table)
        cells = partial(_table_cells, j, table)
        _interval(ev, recs, table.counts, table.sums is None, build, subs, cells)
        out += recs
    weighted = ev._overall_weights is not None
    recs = overall_records(ev._weights(), positive_label=label, weighted=weighted)
    overall = partial(overall_records, positive_label=label)
    _interval(ev, recs, ev._overall, not weighted, overall, subs, _overall_cells)
    out += recs
    return out


def _interval(
    ev: FairnessEvaluator, recs: list[Metric], cells: Any, unweighted: bool, build: Any,
    clusters: Mapping[str, FairnessEvaluator], cells_of: Any,
) -> None:  # fmt: skip
    """Bootstrap intervals on ``recs`` from their ``cells`` (see
    :mod:`assay.fairness.intervals`), with ``cluster`` from each cluster's ``cells_of``
    (:mod:`assay.fairness.clusters`); with sample weights, ``ci_undefined`` says why not."""
    if ev.ci is None:
        return
    if unweighted:
        drawn = membership(clusters, cells_of) if ev.ci.cluster else None
        attach_intervals(recs, cells, build, ev.ci, drawn)
    else:
        mark_no_interval(recs, "no interval with sample weights yet", ev.ci)


def _table_cells(j: int, table: Any, sub: FairnessEvaluator) -> NDArray[np.int64]:
    """A cluster's counts of group column ``j`` in the rows of the whole ``table``."""
    return aligned(sub._tables[j], table)


def _overall_cells(sub: FairnessEvaluator) -> NDArray[np.int64]:
    return sub._overall
