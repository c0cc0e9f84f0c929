"""Confidence intervals of the suite metrics from their outcome counts: a bootstrap over
items (see :mod:`assay.uncertainty.intervals`).

A suite metric of one scope (a CAT scope, a language) is a function of the counts of that
scope's items per outcome (S, A, U, O, errors for CAT; correct, incorrect, invalid, errors
for the language exams). Resampling the scope's items and counting them per outcome is a
multinomial draw over the outcomes with probabilities count / n, so the counts are the
sufficient statistics; the metric's own formula runs on a whole chunk of resampled counts at
once. ``ci_method="wilson"`` gives the rates that are proportions (``Accuracy``,
``AccuracyOnValid``, ``FormatErrorRate``) Wilson's interval of their numerator over their
denominator; every other metric gets the bootstrap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.results import Metric
from assay.uncertainty.intervals import CIOptions, bootstrap, percentile, wilson

__all__ = ["attach_count_intervals"]

F64 = NDArray[np.float64]
#: The suite's formulas: resampled counts (b, outcomes) -> {metric: (b,) values}.
Formulas = Callable[[F64], Mapping[str, F64]]
#: Per metric: (numerator, denominator) outcome columns of a proportion, for Wilson.
Proportions = Mapping[str, tuple[list[int], list[int]]]


def attach_count_intervals(
    records: list[Metric],
    counts: NDArray[np.int64],
    names: list[str],
    where: str,
    formulas: Formulas,
    kinds: Sequence[str],
    opts: CIOptions,
    proportions: Proportions | None = None,
) -> None:
    """Intervals on the defined records whose ``parameters[where]`` is one of ``names``
    (row ``i`` of ``counts`` holds the outcome counts of ``names[i]``) and whose type is
    one of ``kinds`` (metrics of ``formulas``), in place."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row, name in zip(counts, names):
        if int(row.sum()) == 0:
            continue

        def statistic(w: F64) -> F64:
            with np.errstate(invalid="ignore", divide="ignore"):
                values = formulas(w)
                return np.stack([values[k] for k in kinds], axis=1)

        lo, hi = percentile(bootstrap(statistic, row, opts.num_bootstrap, opts.seed), opts.level)
        for j, kind in enumerate(kinds):
            found[(kind, name)] = opts.parameters(float(lo[j]), float(hi[j]), "bootstrap")
        if opts.method == "wilson":
            for kind, (num, den) in (proportions or {}).items():
                k, n = float(row[num].sum()), float(row[den].sum())
                wl, wh = wilson(k, n, opts.level)
                found[(kind, name)] = opts.parameters(float(wl), float(wh), "wilson")
    for m in records:
        key = (m.type, str(m.parameters.get(where)))
        if m.value is not None and key in found:
            m.parameters.update(found[key])
