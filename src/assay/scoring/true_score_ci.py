"""Bootstrap intervals of the ``true_score_eval`` table (PRMSE and its parts), over responses.

The sums of :class:`~assay.scoring.sufficient_stats.TrueScoreStats` are sums over responses
of per-response terms. With ``c_i`` ratings of response ``i``, their mean ``Hbar_i``, their
sum of squares ``within_i`` about it (0 with one rating: only responses with two or more
human scores carry the rater-error part) and the system score ``M_i``, a resample with
counts ``w`` has::

    n = sum w                       c = w @ c_i             c2 = w @ c_i^2
    s1 = w @ c_i (Hbar_i - shift)   s2 = w @ c_i (Hbar_i - shift)^2
    within = w @ within_i           dof = w @ (c_i - 1)     sse = w @ c_i (Hbar_i - M_i)^2

and :func:`~assay.scoring.metric_values.true_values` (the formulas of
:mod:`assay.scoring.true_score`) turns those sums into the table's row, so a resample costs
one matrix product and a few scalar formulas, never a pass over responses. Equal responses
(the same system score, ``c_i``, ``Hbar_i``, ``within_i``) are collapsed first.

Intervals go on ``Variance of errors`` (``RaterErrorVariance``; none when the variance is
given), ``True score var``, ``MSE true`` and ``PRMSE true`` (``PRMSE``), for the system score
and its rounded form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.intervals import CIOptions, collapse
from assay.scoring.metric_values import true_values
from assay.scoring.sufficient_stats import TrueScoreStats

__all__ = ["TRUE_CI_COLUMNS", "true_intervals", "true_replicates"]

#: The ``true_score_eval`` columns that get an interval.
TRUE_CI_COLUMNS = ("Variance of errors", "True score var", "MSE true", "PRMSE true")

F64 = NDArray[np.float64]
_NAMES = ("n", "c", "c2", "s1", "s2", "within", "dof", "sse")


def true_replicates(y: F64, true: F64, w: F64, shift: float, given: float | None) -> F64:
    """Per resample (a row of counts ``w`` over the units) the :data:`TRUE_CI_COLUMNS`
    (NaN where undefined); ``y`` the units' system scores, ``true`` their
    ``[c_i, Hbar_i, within_i]``."""
    c, hb, within = true[:, 0], true[:, 1], true[:, 2]
    d, e = hb - shift, hb - y
    terms = np.column_stack([np.ones_like(c), c, c * c, c * d, c * d * d, within, c - 1, c * e * e])
    sums = w @ terms
    out = np.full((w.shape[0], len(TRUE_CI_COLUMNS)), np.nan)
    for i in range(w.shape[0]):
        kw: dict[str, Any] = {k: float(sums[i, j]) for j, k in enumerate(_NAMES)}
        t = TrueScoreStats(shift=shift, **kw)
        v, _ = true_values(t, given)
        out[i] = [np.nan if v.get(k) is None else v[k] for k in TRUE_CI_COLUMNS]
    return out


def true_intervals(
    pairs: F64, true: F64, shift: float, given: float | None, opts: CIOptions
) -> dict[tuple[int, str], dict[str, Any]]:
    """Per score form (0: as given, 1: rounded) and column, the interval parameters."""
    out: dict[tuple[int, str], dict[str, Any]] = {}
    for form in (0, 1):
        y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
        units, mult, _ = collapse(np.column_stack([y, true]))

        def statistic(w: F64, units: F64 = units) -> F64:
            return true_replicates(units[:, 0], units[:, 1:], w, shift, given)

        ci = opts.bootstrap_interval(statistic, mult)
        for j, col in enumerate(TRUE_CI_COLUMNS):
            if col == "Variance of errors" and given is not None:
                continue  # given, not estimated
            out[(form, col)] = opts.parameters(float(ci[0, j]), float(ci[1, j]), "bootstrap")
    return out
