"""The tally contract: the uncertainty engine against brute force, for every evaluator with
a ``tally()``.

Each domain registers cases in ``tests/contract/tally_cases_<domain>.py`` as a list
``TALLY_CASES`` of :class:`TallyCase`; ``tests/test_tally_contract.py`` runs every check
below over every case:

* ``percentile`` and ``cluster``: for every tally of the evaluator, every resample the
  engine draws (row weights, over units or over clusters) is materialised as units (each
  row's weight copies of one of its units, by id) and run through a fresh evaluator's own
  ``compute()``: the tally's values on that resample must equal those records' values
  (NaN where the record is ``None``), and their percentile interval over the resamples
  must be the interval on the evaluator's records;
* ``slice``: every slice record (value and interval) equals the record of a fresh evaluator
  given the slice's units alone, and its gap is its value minus the whole set's.

A case names in ``skip`` a check that does not apply to its evaluator, with the reason (the
test is then reported skipped with it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.evaluator import Evaluator
from assay.results import Metric
from assay.uncertainty.clusters import resample_weights
from assay.uncertainty.intervals import ci_options, draws, percentile
from assay.uncertainty.slices import value_masks
from assay.uncertainty.tally import Key

__all__ = ["TALLY_CHECKS", "TallyCase"]

NUM_BOOTSTRAP = 30


@dataclass
class TallyCase:
    """An evaluator with a tally, on a small case.

    Attributes:
        name: test id.
        make: options (``ci``, ``ci_method``, ``num_bootstrap``, ``seed``, ``cluster``,
            ``by``) -> a fresh evaluator holding the case's units.
        take: unit ids (repeats allowed) and options -> a fresh evaluator holding those
            units alone (a repeated unit added again as a distinct unit).
        key: a record's key among the tallies' keys (None: a record with no interval).
        ids: every unit's id, in the order of ``columns``.
        columns: per unit column (cluster ids, slice values), aligned with ``ids``.
        cluster, by: the column to cluster on and the one to slice by.
        rel: relative tolerance (values summed in another order).
        skip: check name -> why it does not apply to this evaluator.
        as_tallied: a record in its tally's terms (default: itself; the pairwise ratings'
            Elo scale is an increasing affine map of the log-strengths their tally gives).
        slice_intervals: whether a slice's interval is its own bootstrap (the pairwise
            slices' are read from the whole set's draws: then only values are compared).
    """

    name: str
    make: Callable[[Mapping[str, Any]], Evaluator]
    take: Callable[[Sequence[Any], Mapping[str, Any]], Evaluator]
    key: Callable[[Metric], Key | None]
    ids: Sequence[Any]
    columns: Mapping[str, Sequence[Any]]
    cluster: str
    by: str
    rel: float = 1e-9
    skip: Mapping[str, str] = field(default_factory=dict)
    as_tallied: Callable[[Metric], Metric] = lambda m: m
    slice_intervals: bool = True


def _close(a: Any, b: Any, rel: float) -> bool:
    if a is None or b is None:
        return a is b
    return bool(np.isclose(a, b, rtol=rel, atol=1e-12))


def _brute(case: TallyCase, opts: Mapping[str, Any]) -> None:
    """The evaluator's intervals against the percentile of the resampled units' records."""
    ev = case.make(opts)
    options = ci_options(
        opts["ci"], "bootstrap", opts["num_bootstrap"], opts["seed"], cluster=opts.get("cluster")
    )
    assert options is not None
    records = {case.key(m): case.as_tallied(m) for m in ev.compute() if case.key(m) is not None}
    checked = 0
    for t in (t.ready() for t in ev.tally()):  # type: ignore[attr-defined]
        assert t.ids is not None, "a tally names its units"
        rows = t.unit_rows()
        first = np.full(t.rows, -1, dtype=np.intp)
        first[rows[::-1]] = np.arange(rows.size)[::-1]  # a unit of each row
        drawn = draws(t, options)
        values = []
        for w in np.concatenate(list(resample_weights(drawn, NUM_BOOTSTRAP, opts["seed"]))):
            taken = np.repeat(first, np.rint(w).astype(np.int64))
            assert (taken >= 0).all(), "a drawn row stands for no unit"
            ids = [t.ids[i] for i in taken]
            try:
                found = case.take(ids, {}).compute()
                got = {case.key(m): case.as_tallied(m).value for m in found}
            except Exception:  # an evaluator with no data refuses: every record undefined
                got = {}
            values.append([_as_float(got.get(k)) for k in t.keys])
            with np.errstate(invalid="ignore", divide="ignore"):
                mine = np.asarray(t.values(w[None, :]), dtype=np.float64)[0] + t.offset
            want = np.array(values[-1])
            assert np.allclose(mine, want, rtol=case.rel, atol=1e-12, equal_nan=True), [
                (k, a, b) for k, a, b in zip(t.keys, mine, want) if not _close(a, b, case.rel)
            ]
        lo, hi = percentile(np.array(values), options.level)
        for j, k in enumerate(t.keys):
            m = records.get(k)
            if m is None or m.value is None:
                continue
            p = m.parameters
            assert _close(p["ci_low"], _or_none(lo[j]), case.rel), (k, p, lo[j])
            assert _close(p["ci_high"], _or_none(hi[j]), case.rel), (k, p, hi[j])
            checked += 1
    assert checked > 0, "no record was checked"


def _as_float(v: Any) -> float:
    return np.nan if v is None else float(v)


def _or_none(v: float) -> float | None:
    return None if not np.isfinite(v) else float(v)


def check_percentile(case: TallyCase) -> None:
    _brute(case, {"ci": 0.9, "num_bootstrap": NUM_BOOTSTRAP, "seed": 3})


def check_cluster(case: TallyCase) -> None:
    opts = {"ci": 0.9, "num_bootstrap": NUM_BOOTSTRAP, "seed": 5, "cluster": case.cluster}
    _brute(case, opts)


def check_slice(case: TallyCase) -> None:
    """Each slice's records equal the evaluator on the slice's units alone."""
    opts = {"ci": 0.9, "num_bootstrap": NUM_BOOTSTRAP, "seed": 7}
    out = list(case.make({**opts, "by": [case.by]}).compute())
    whole = {case.key(m): m for m in out if "slice" not in m.parameters}
    sliced = [m for m in out if m.parameters.get("slice_column") == case.by]
    ids = np.asarray(case.ids, dtype=object)
    column = np.asarray(case.columns[case.by], dtype=object)
    checked = 0
    for v, keep in value_masks(column, np.ones(column.size, dtype=bool)):
        alone = {case.key(m): m for m in case.take(list(ids[keep]), opts).compute()}
        mine = [m for m in sliced if m.parameters["slice"] == v]
        assert mine, f"no record for the slice {v!r}"
        for m in mine:
            k = case.key(m)
            ref = alone[k]
            assert _close(m.value, ref.value, case.rel), (k, m.value, ref.value)
            for name in ("ci_low", "ci_high") if case.slice_intervals else ():
                assert _close(m.parameters.get(name), ref.parameters.get(name), case.rel)
            base = whole[k].value
            if m.value is not None and base is not None:
                assert _close(m.parameters["gap"], m.value - base, case.rel)
            checked += 1
    assert checked > 0


TALLY_CHECKS: dict[str, Callable[[TallyCase], None]] = {
    "percentile": check_percentile,
    "cluster": check_cluster,
    "slice": check_slice,
}
