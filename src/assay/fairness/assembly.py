"""The records of a :class:`~assay.fairness.evaluator.FairnessEvaluator`'s counts, each
with its interval under ``ci``: per definition, their mean, per group column and over all
datums, each a :class:`~assay.fairness.draws.Family` of the point-estimate code.

What a resample draws (:mod:`assay.fairness.draws`): with ``cluster``, whole clusters
(:mod:`assay.fairness.clusters`); otherwise, without sample weights, each family's own cells
(:mod:`assay.fairness.intervals`) except the mean over definitions, and with weights every
family, from the classes of interchangeable datums (:mod:`assay.fairness.units`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from assay.fairness.clusters import membership
from assay.fairness.compute import GroupCounts
from assay.fairness.draws import Family, attach, stacked
from assay.fairness.group_table import GroupTable
from assay.fairness.intervals import counts_of, mark_no_interval
from assay.fairness.records import by_group_values, control_rows
from assay.fairness.summaries import (
    average_records,
    average_values,
    definition_records,
    definition_values,
    overall_records,
    overall_values,
)
from assay.intervals import INTERVAL_KEYS
from assay.results import Metric

if TYPE_CHECKING:
    from assay.fairness.evaluator import FairnessEvaluator

__all__ = ["families", "records_of"]

F64 = NDArray[np.float64]
NO_UNITS = "the state has no classes of datums (saved by an older version)"


def records_of(
    ev: FairnessEvaluator, subs: Mapping[str, FairnessEvaluator], *, mean: bool = True,
    keep: Callable[[Metric], bool] | None = None,
) -> list[Metric]:  # fmt: skip
    """Per definition, their mean (unless not ``mean``: a slice's), per group column and over
    all datums: the records of ``ev``'s counts (only those ``keep`` wants, when given: no
    interval is drawn for the others); ``subs``: the per-cluster counts of the same rows."""
    fams = families(ev, mean=mean)
    if keep is not None:
        fams = [f for f in fams if any(keep(m) for m in f.records)]
    if ev.ci is not None:
        one_mean = mean and len(ev.groups) == 1
        drawn = [f for f in fams if not (one_mean and _is_mean(f))]
        _intervals(ev, drawn, subs, keep)
        if one_mean:  # the mean of one definition is that definition: the same interval
            d, m = fams[0], fams[1]
            for avg, one in zip(m.records, d.records):
                keys = INTERVAL_KEYS & one.parameters.keys()
                avg.parameters.update({k: one.parameters[k] for k in keys})
    return [m for f in fams for m in f.records if keep is None or keep(m)]


def _is_mean(f: Family) -> bool:
    return len(f.shape) == 3


def _intervals(
    ev: FairnessEvaluator, fams: list[Family], subs: Mapping[str, FairnessEvaluator],
    keep: Callable[[Metric], bool] | None,
) -> None:  # fmt: skip
    opts = ev.ci
    assert opts is not None
    if opts.cluster:
        flats = [f.flat for f in fams]
        drawn = membership(subs, lambda s: np.concatenate([g(s) for g in flats]))
        attach(fams, drawn, opts, keep=keep)
        return
    weighted = ev._overall_weights is not None
    own = [f for f in fams if not weighted and not _is_mean(f)]
    for f in own:  # the family's own cells: the datums' classes for this family alone
        attach([f], np.rint(f.flat(ev)).astype(np.int64), opts, keep=keep)
    joint = [f for f in fams if f not in own]
    if joint and ev._units is None:
        for f in joint:
            mark_no_interval(f.records, NO_UNITS, opts)
    elif joint and ev._units is not None:
        attach(joint, ev._units.counts, opts, stacked(joint, ev._units), keep)


def families(ev: FairnessEvaluator, *, mean: bool = False) -> list[Family]:
    """The families of ``ev``'s records: per definition, their mean (with ``mean`` and at
    least one definition), per group column, over all datums."""
    weighted = ev._overall_weights is not None
    sums = ev._definition_weights() if weighted else None
    out = [_definition(ev, i, None if sums is None else sums[i]) for i in range(len(ev.groups))]
    if mean and ev.groups:
        out.append(_mean(ev, sums))
    out += [_table(ev, j, t) for j, t in enumerate(ev._tables)]
    return [*out, _overall(ev, weighted)]


def _cells(c: GroupCounts) -> F64:
    return np.stack([c.tp, c.fp, c.fn, c.tn]).astype(np.float64)


def _flat(counts: Any, sums: Any, weighted: bool) -> F64:
    parts = [np.asarray(counts, np.float64).ravel()]
    return np.concatenate(parts + ([np.asarray(sums, np.float64).ravel()] if weighted else []))


def _definition(ev: FairnessEvaluator, i: int, sums: GroupCounts | None) -> Family:
    g, label, weighted = ev.groups[i], ev.positive_label, sums is not None

    def build(k: Any, s: Any) -> list[Metric]:
        w = None if s is None else counts_of(s)
        return definition_records(g, counts_of(k), positive_label=label, weights=w)

    def flat(sub: Any) -> F64:
        w = sub._definition_weights()[i] if weighted else None
        return _flat(_cells(sub._counts[i]), None if w is None else _cells(w), weighted)

    def cells(u: Any) -> Any:
        return (u.keys[:, 0] * 2 + u.keys[:, 1 + i]).reshape(-1, 1)

    def values(k: F64, s: F64 | None) -> F64:
        return definition_values(counts_of(k if s is None else s))

    recs = definition_records(g, ev._counts[i], positive_label=label, weights=sums)
    return Family(recs, build, (4, 2), weighted, cells, flat, values=values)


def _mean(ev: FairnessEvaluator, sums: list[GroupCounts] | None) -> Family:
    groups, label, weighted, d = ev.groups, ev.positive_label, sums is not None, len(ev.groups)

    def build(k: Any, s: Any) -> list[Metric]:
        on = [counts_of(x) for x in (k if s is None else s)]
        return average_records(groups, on, positive_label=label, weighted=weighted)

    def flat(sub: Any) -> F64:
        counts = [_cells(c) for c in sub._counts]
        w = [_cells(c) for c in sub._definition_weights()] if weighted else None
        return _flat(counts, w, weighted)

    def cells(u: Any) -> Any:
        return np.arange(d) * 8 + u.keys[:, :1] * 2 + u.keys[:, 1 : 1 + d]

    def values(k: F64, s: F64 | None) -> F64:
        return average_values(counts_of(k if s is None else s))

    recs = build(np.stack([_cells(c) for c in ev._counts]).astype(np.int64),
                 None if sums is None else np.stack([_cells(c) for c in sums]))  # fmt: skip
    return Family(recs, build, (d, 4, 2), weighted, cells, flat, values=values)


def _table(ev: FairnessEvaluator, j: int, table: GroupTable) -> Family:
    column, weighted = ev.group_columns[j], table.sums is not None
    names = table.names

    def build(k: Any, s: Any) -> list[Metric]:
        return ev._by_group(column, GroupTable(names, k, s))

    def flat(sub: Any) -> F64:
        part = sub._tables[j]
        at = np.searchsorted(names, part.names)
        counts, w = np.zeros((len(names), 4)), np.zeros((len(names), 4))
        counts[at], w[at] = part.counts, part.weights
        return _flat(counts, w, weighted)

    def cells(u: Any) -> Any:
        return (u.keys[:, 1 + len(ev.groups) + j] * 4 + u.keys[:, 0]).reshape(-1, 1)

    levels = control_rows(column, names, ev.control_columns)

    def values(k: F64, s: F64 | None) -> F64:
        on = k if s is None else s
        return by_group_values(on, levels, zero_division=ev.zero_division, method=ev.method,
                               agg=ev.agg)  # fmt: skip

    recs = ev._by_group(column, table)
    return Family(recs, build, (len(names), 4), weighted, cells, flat, names, values)


def _overall(ev: FairnessEvaluator, weighted: bool) -> Family:
    label = ev.positive_label

    def build(k: Any, s: Any) -> list[Metric]:
        return overall_records(k if s is None else s, positive_label=label, weighted=weighted)

    def flat(sub: Any) -> F64:
        return _flat(sub._overall, sub._weights(), weighted)

    def cells(u: Any) -> Any:
        return u.keys[:, :1]

    def values(k: F64, s: F64 | None) -> F64:
        return overall_values(k if s is None else s)

    recs = overall_records(ev._weights(), positive_label=label, weighted=weighted)
    return Family(recs, build, (4,), weighted, cells, flat, values=values)
