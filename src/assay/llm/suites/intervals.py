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
from assay.uncertainty.intervals import CIOptions, tally_intervals, wilson
from assay.uncertainty.tally import Key, Tally

__all__ = ["attach_count_intervals"]

F64 = NDArray[np.float64]
#: The suite's formulas: resampled counts (b, outcomes) -> {metric: (b,) values}.
Formulas = Callable[[F64], Mapping[str, F64]]
#: Per metric: (numerator, denominator) outcome columns of a proportion, for Wilson.
Proportions = Mapping[str, tuple[list[int], list[int]]]


def count_tally(
    row: NDArray[np.int64],
    name: str,
    formulas: Formulas,
    kinds: Sequence[str],
    proportions: Proportions | None = None,
) -> Tally:
    """The engine's tally (:mod:`assay.uncertainty`) of one scope's records ``kinds``, keyed
    ``(kind, name)``: its outcome counts ``row`` are the units a resample draws, and the
    proportions have Wilson's interval as a closed form."""
    keys: tuple[Key, ...] = tuple((kind, name) for kind in kinds)

    def values(w: F64) -> F64:
        found = formulas(w)
        return np.stack([found[k] for k in kinds], axis=1)

    def by_wilson(level: float) -> dict[Key, tuple[float, float]]:
        out = {}
        for kind, (num, den) in (proportions or {}).items():
            lo, hi = wilson(float(row[num].sum()), float(row[den].sum()), level)
            out[(kind, name)] = (float(lo), float(hi))
        return out

    return Tally(keys, values, row, closed={"wilson": by_wilson})


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
    found: dict[Key, dict[str, Any]] = {}
    for row, name in zip(counts, names):
        if int(row.sum()) > 0:
            found |= tally_intervals(count_tally(row, name, formulas, kinds, proportions), opts)
    for m in records:
        key = (m.type, str(m.parameters.get(where)))
        if m.value is not None and key in found:
            m.parameters.update(found[key])
