"""Bootstrap intervals of the ``true_score_eval`` table (PRMSE and its parts), over responses.

The sums of :class:`~assay.scoring.sufficient_stats.TrueScoreStats` are sums over responses
of per-response terms. With ``c_i`` ratings of response ``i``, their mean ``Hbar_i``, their
sum of squares ``within_i`` about it (0 with one rating: only responses with two or more
human scores carry the rater-error part) and the system score ``M_i``, a resample with
counts ``w`` has::

    n = sum w                       c = w @ c_i             c2 = w @ c_i^2
    s1 = w @ c_i (Hbar_i - shift)   s2 = w @ c_i (Hbar_i - shift)^2
    within = w @ within_i           dof = w @ (c_i - 1)     sse = w @ c_i (Hbar_i - M_i)^2

and :func:`true_columns` (the formulas of :mod:`assay.scoring.true_score`, vectorised over
resamples) turns those sums into the table's columns, so a resample costs one matrix product,
never a pass over responses; the BCa jackknife's leave-one-out sums are the total minus
each response's terms. Equal responses
(the same system score, ``c_i``, ``Hbar_i``, ``within_i``) are collapsed first.

Intervals go on ``Variance of errors`` (``RaterErrorVariance``; none when the variance is
given), ``True score var``, ``MSE true`` and ``PRMSE true`` (``PRMSE``), for the system score
and its rounded form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.scoring.replicates import collapsed
from assay.uncertainty.intervals import CIOptions

__all__ = [
    "TRUE_CI_COLUMNS",
    "true_columns",
    "true_intervals",
    "true_jackknife",
    "true_replicates",
    "true_terms",
]

#: The ``true_score_eval`` columns that get an interval.
TRUE_CI_COLUMNS = ("Variance of errors", "True score var", "MSE true", "PRMSE true")

F64 = NDArray[np.float64]


def _terms(y: F64, true: F64, shift: float) -> F64:
    c, hb, within = true[:, 0], true[:, 1], true[:, 2]
    d, e = hb - shift, hb - y
    return np.column_stack([np.ones_like(c), c, c * c, c * d, c * d * d, within, c - 1, c * e * e])


def true_columns(sums: F64, given: float | None) -> F64:
    """The :data:`TRUE_CI_COLUMNS` of every row of ``TrueScoreStats`` sums (columns ``n, c,
    c2, s1, s2, within, dof, sse``), vectorised, with the formulas of
    :func:`~assay.scoring.metric_values.true_values` (NaN where it says None)."""
    n, c, c2, s1, s2, within, dof, sse = sums.T
    with np.errstate(divide="ignore", invalid="ignore"):
        se2 = np.full(n.shape, float(given)) if given is not None else within / dof
        se2 = np.where((dof > 0) | (given is not None), se2, np.nan)
        mse = (sse - n * se2) / c
        den = c - c2 / c
        vt = np.where(den > 0, (s2 - s1 * s1 / c - (n - 1) * se2) / den, np.nan)
        prmse = np.where(vt > 0, 1.0 - mse / vt, np.nan)
    return np.column_stack([se2, vt, mse, prmse])


def true_terms(y: F64, true: F64, shift: float) -> F64:
    """Each unit's terms of the ``TrueScoreStats`` sums (made once for every chunk of
    resamples); ``y`` the units' system scores, ``true`` their ``[c_i, Hbar_i, within_i]``."""
    return _terms(y, true, shift)


def true_replicates(
    terms: F64, w: F64, given: float | None, keep: NDArray[np.intp] | None = None
) -> F64:
    """Per resample (a row of counts ``w`` over the units) the :data:`TRUE_CI_COLUMNS`
    (NaN where undefined) from the units' :func:`true_terms`; with ``keep`` (a subgroup's
    units) the subgroup's."""
    if keep is None:
        return true_columns(w @ terms, given)
    return true_columns(w[:, keep] @ terms[keep], given)


def true_jackknife(
    y: F64,
    true: F64,
    mult: NDArray[np.int64],
    shift: float,
    given: float | None,
    keep: NDArray[np.bool_] | None = None,
) -> F64:
    """Per unit: the columns with one of its responses left out (total minus its terms);
    with ``keep`` (a subgroup's units) the subgroup's, whole when the unit is outside it."""
    terms = _terms(y, true, shift)
    k = np.ones(y.size) if keep is None else keep.astype(np.float64)
    return true_columns(((mult * k) @ terms)[None, :] - terms * k[:, None], given)


def true_intervals(
    pairs: F64, true: F64, shift: float, given: float | None, opts: CIOptions, codes: Any = None
) -> dict[tuple[int, str], dict[str, Any]]:
    """Per score form (0: as given, 1: rounded) and column, the interval parameters
    (``codes``: each response's cluster, with ``cluster``)."""
    out: dict[tuple[int, str], dict[str, Any]] = {}
    for form in (0, 1):
        y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
        drawn = collapsed(np.column_stack([y, true]), codes)
        units, mult = drawn.units, drawn.mult
        y_u, t_u = units[:, 0], units[:, 1:]

        def statistic(w: F64, terms: F64 = true_terms(y_u, t_u, shift)) -> F64:
            return true_replicates(terms, w, given)

        def jackknife(y_u: F64 = y_u, t_u: F64 = t_u, mult: Any = mult) -> F64:
            return true_jackknife(y_u, t_u, mult, shift, given)

        ci, method = drawn.bounds(opts, statistic, jackknife)
        for j, col in enumerate(TRUE_CI_COLUMNS):
            if col == "Variance of errors" and given is not None:
                continue  # given, not estimated
            out[(form, col)] = opts.parameters(float(ci[0, j]), float(ci[1, j]), method)
    return out
