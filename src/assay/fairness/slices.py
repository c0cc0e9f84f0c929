"""Fairness metrics per slice: SPD, DI, AOD, EOD and the fairlearn-style aggregates again on
each subgroup of another column.

``by=["site"]`` (CLI ``--by site``) gives, for every distinct value ``v`` of the column
``site`` (rows without a value are in no slice), the ``StatisticalParityDifference``,
``DisparateImpact``, ``AverageOddsDifference`` and ``EqualOpportunityDifference`` of every
privileged-group definition and the ``DemographicParityDifference``/``Ratio`` and
``EqualizedOddsDifference``/``Ratio`` of every group column (per control level too), computed
on the rows whose ``site`` is ``v`` alone: SPD between the sexes at site x, and so on. Each
record carries ``slice_column``, ``slice``, ``n`` (the slice's rows) and ``gap`` (to the whole
set's record; :mod:`assay.uncertainty.slices`). A slice where a group is missing gives the value the
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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.fairness.intervals import Pair, gap_draw, intervals, membership
from assay.fairness.tally import Tally
from assay.fairness.units import joint
from assay.results import Metric
from assay.uncertainty.clusters import Clusters
from assay.uncertainty.intervals import CIOptions, percentile
from assay.uncertainty.slices import annotate, record_key

__all__ = [
    "SLICE_TYPES",
    "WHERE",
    "slice_records",
    "sliced",
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


def sliced(m: Metric) -> bool:
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


def slice_records(
    whole: Tally, records: list[Metric], slices: Mapping[str, Mapping[str, Tally]],
    opts: CIOptions | None,
) -> list[Metric]:  # fmt: skip
    """The sliced records of every column's slices (``slices``: each value's tally, of the
    slice's rows alone; ``whole``: the whole set's tally and ``records`` its records), values
    in sorted order; with ``opts`` each with its interval and its gap's."""
    out: list[Metric] = []
    for column, tallies in slices.items():
        for v in sorted(tallies):
            part = tallies[v]
            if opts is not None:
                intervals(part, opts, keep=sliced)
            drawn = opts is not None and not _no_units(whole, part, opts)
            gaps = _gaps(whole, part, opts) if drawn and opts is not None else None
            recs = part.records(keep=sliced)  # the mean over definitions: not sliced
            out += annotate(recs, records, column=column, value=v, n=part.counts.n, where=WHERE,
                            gap_ci=gaps)  # fmt: skip
    return out


def _no_units(whole: Tally, part: Tally, opts: CIOptions) -> bool:
    """Whether weighted gaps lack the classes of datums they draw (a state saved by an older
    version)."""
    weighted = whole.counts.weighted and not opts.cluster
    return weighted and (whole.units is None or part.units is None)


def _gaps(whole: Tally, part: Tally, opts: CIOptions) -> Gaps:
    """The gap intervals of every definition and group column of one slice (``part``): the
    slice's family and the whole set's side by side, drawn jointly."""
    theirs = [f for f in whole.families if f.kind != "mean"]
    pairs = []
    for s, w in zip(part.families[:-1], theirs[:-1]):  # not the overall records
        want = [(i, j) for i, m in enumerate(s.records)
                if sliced(m) and _number(m.value) for j in _match(m, w.records)]  # fmt: skip
        if want:
            pairs.append((s, w, want))
    if not pairs:
        return {}
    if opts.cluster:
        draws = [gap_draw(pairs, _clusters_draw(pairs, whole, part))]
    elif not whole.counts.weighted:  # per pair, the slice's cells and the other rows'
        draws = [gap_draw([p], *_cells_draw(p, part, whole)) for p in pairs]
    else:  # the classes of the slice's datums and of the other rows'
        draws = [gap_draw(pairs, *_classes_draw(pairs, part, whole))]
    lo, hi = percentile(np.hstack([d.replicates(opts) for d in draws]), opts.level)
    keys = [record_key(s.records[i], WHERE) for s, _, want in pairs for i, _ in want]
    return {k: (float(lo[c]), float(hi[c])) for c, k in enumerate(keys)}


def _cells_draw(pair: Pair, part: Tally, whole: Tally) -> tuple[NDArray[np.int64], list[Any]]:
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


def _clusters_draw(pairs: list[Pair], whole: Tally, part: Tally) -> Clusters:
    """Per cluster, every pair's slice statistics (of the cluster's rows in the slice; none
    when it has none) then whole-set statistics: whole clusters drawn."""
    empty = [np.zeros(s.width) for s, _, _ in pairs]

    def flat(g: str) -> NDArray[np.float64]:
        here = part.clusters.get(g)
        mine = [e if here is None else s.flat(here) for (s, _, _), e in zip(pairs, empty)]
        theirs = [w.flat(whole.clusters[g]) for _, w, _ in pairs]
        return np.concatenate([x for two in zip(mine, theirs) for x in two])

    return membership({g: g for g in whole.clusters}, flat)


def _classes_draw(
    pairs: list[Pair], part: Tally, whole: Tally
) -> tuple[NDArray[np.int64], list[Any]]:
    """With weights: the slice's classes of datums, then the other rows'; through their joint
    cells (:func:`~assay.fairness.units.joint`), the slice's add to the slice's statistics and
    the whole set's, the other rows' to the whole set's."""
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
