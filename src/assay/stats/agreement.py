"""Krippendorff's alpha: agreement between raters (judges) who each rated the samples.

Each scored sample's value is a list of ratings, one per rater (the ``collect`` reducer
builds such lists from the epochs or scorers of a sample). Records have type
``KrippendorffAlpha``; Inspect's name ``krippendorff_alpha`` is an alias.

Example:
    >>> from assay.stats import Score
    >>> units = [Score(["a", "a"]), Score(["b", "b"]), Score(["a", "b"])]
    >>> round(krippendorff_alpha()(units), 6)
    0.444444
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.stats.metric_registry import MetricFn, metric
from assay.stats.score import SampleScore, _rec, value_to_float
from assay.stats.value_mapping import as_mapping

__all__ = ["alpha_from_ratings", "krippendorff_alpha"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _is_list(v: Any) -> bool:
    t = type(v)
    if t is list or t is tuple:
        return True
    return isinstance(v, Sequence) and not isinstance(v, (str, bytes))


def _units(scores: Sequence[SampleScore]) -> tuple[list[Any], np.ndarray, list[Any]]:
    """Flat pairable ratings, their unit index, and the sample id of each unit.

    Missing ratings (None, NaN) are dropped; a unit left with fewer than two ratings
    cannot be paired and is dropped too."""
    values: list[Any] = [s.score.value for s in scores]
    is_list = [_is_list(v) for v in values]
    if values and not any(is_list):
        raise UndefinedMetricError(
            "KrippendorffAlpha",
            "needs list values (one rating per rater); use the 'collect' reducer",
        )
    if not all(is_list):
        s = scores[is_list.index(False)]
        raise InvalidInputError(
            f"expected a list of ratings (one per rater), got {s.score.value!r}; build "
            "lists with the 'collect' reducer",
            record=_rec(s.sample_id),
            field="value",
        )
    # r == r is False only for NaN: None and NaN are missing ratings
    kept = [[r for r in v if r is not None and r == r] for v in values]
    sizes = np.fromiter(map(len, kept), np.int64, len(kept))
    pairable = np.flatnonzero(sizes >= 2)
    flat = [r for i in pairable.tolist() for r in kept[i]]
    unit = np.repeat(np.arange(pairable.shape[0]), sizes[pairable])
    ids = [scores[i].sample_id for i in pairable.tolist()]
    return flat, unit, ids


def _codes(flat: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Category codes by Python equality (so 1, 1.0 and True are one category)."""
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in flat), np.int64, len(flat))
    return codes, list(index)


def _convert_each(flat: list[Any], ids: list[Any], unit: np.ndarray, to_float: Any) -> np.ndarray:
    out = np.empty(len(flat), dtype=np.float64)
    for i, v in enumerate(flat):
        if isinstance(v, numbers.Real):  # numbers as they are, booleans as 0/1
            out[i] = float(v)
        elif to_float is not None:
            out[i] = to_float(v, record=ids[int(unit[i])])
        else:
            out[i] = value_to_float(v, record=ids[int(unit[i])])
    return out


def _numeric(
    flat: list[Any], ids: list[Any], unit: np.ndarray, level: str, to_float: Any
) -> np.ndarray:
    arr = np.asarray(flat)
    if arr.dtype.kind in "biuf":  # all numbers (booleans as 0/1): no per-rating work
        out = arr.astype(np.float64)
    else:
        out = _convert_each(flat, ids, unit, to_float)
    if level == "ratio" and (out < 0).any():
        raise InvalidInputError(
            "ratio-level ratings must be ≥ 0", record=_rec(ids[int(unit[out < 0][0])])
        )
    return out


def _squared(x: np.ndarray, unit: np.ndarray, m: np.ndarray) -> tuple[float, float]:
    """Observed and expected disagreement for δ²(a, b) = (a − b)²: within a unit of m
    ratings, Σ over ordered pairs of (a − b)² equals 2m Σ (x − x̄)²."""
    n = x.shape[0]
    unit_mean = np.bincount(unit, weights=x) / m
    within = np.bincount(unit, weights=(x - unit_mean[unit]) ** 2)
    d_o = float(np.sum(2.0 * m * within / (m - 1.0))) / n
    d_e = 2.0 * n * float(np.sum((x - x.mean()) ** 2)) / (n * (n - 1.0))
    return d_o, d_e


def _coincidence(codes: np.ndarray, unit: np.ndarray, m: np.ndarray, k: int) -> np.ndarray:
    """The k×k coincidence matrix ``o_ck = Σ_u (n_uc n_uk − [c=k] n_uc) / (m_u − 1)``."""
    counts = np.zeros((m.shape[0], k), dtype=np.float64)
    np.add.at(counts, (unit, codes), 1.0)
    w = 1.0 / (m - 1.0)
    o = (counts * w[:, None]).T @ counts
    o[np.diag_indices(k)] -= (counts * w[:, None]).sum(axis=0)
    return np.asarray(o)


def alpha_from_ratings(
    flat: list[Any], unit: np.ndarray, level: str, ids: list[Any], to_float: Any = None
) -> float:
    """α = 1 − D_o / D_e for pairable ratings ``flat`` of units ``unit`` (see
    :func:`krippendorff_alpha`); 1.0 when D_e = 0 (every rating the same)."""
    n = len(flat)
    if n < 2:
        raise UndefinedMetricError("KrippendorffAlpha", "no unit has two or more ratings")
    m = np.bincount(unit).astype(np.float64)
    if level == "nominal":
        codes, cats = _codes(flat)
        pairs = np.bincount(unit * len(cats) + codes, minlength=m.shape[0] * len(cats))
        same = np.bincount(np.repeat(np.arange(m.shape[0]), len(cats)), weights=pairs**2.0)
        d_o = float(np.sum((m * m - same) / (m - 1.0))) / n
        totals = np.bincount(codes).astype(np.float64)
        d_e = (n * n - float(np.dot(totals, totals))) / (n * (n - 1.0))
    elif level in ("ordinal", "interval"):
        x = _numeric(flat, ids, unit, level, to_float)
        if level == "ordinal":
            levels, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
            midpoints = np.cumsum(counts) - counts / 2.0
            x = midpoints[inverse]
        d_o, d_e = _squared(x, unit, m)
    else:
        x = _numeric(flat, ids, unit, level, to_float)
        levels, codes = np.unique(x, return_inverse=True)
        total = levels[:, None] + levels[None, :]
        delta = np.divide(
            (levels[:, None] - levels[None, :]) ** 2,
            total**2,
            out=np.zeros((levels.shape[0],) * 2),
            where=total > 0,
        )
        o = _coincidence(codes.ravel(), unit, m, levels.shape[0])
        d_o = float(np.sum(o * delta)) / n
        nc = o.sum(axis=1)
        d_e = float(nc @ delta @ nc) / (n * (n - 1.0))
    if d_e == 0.0:
        return 1.0
    return 1.0 - d_o / d_e


@metric
def krippendorff_alpha(level: str = "nominal", to_float: Any = None) -> MetricFn:
    """Krippendorff's α, agreement among raters: ``α = 1 − D_o / D_e``.

    Every sample (unit) has a list of ratings, one per rater; missing ratings (None,
    NaN) are left out, and a unit with fewer than two ratings is left out. With n the
    number of remaining ratings, m_u the ratings of unit u, and δ²(a, b) the distance of
    the level:

    * observed disagreement ``D_o = (1/n) Σ_u Σ_{i≠j in u} δ²(a_i, a_j) / (m_u − 1)``;
    * expected disagreement ``D_e = Σ_{i≠j over all n} δ²(a_i, a_j) / (n(n − 1))``.

    Levels: ``nominal`` δ² = [a ≠ b]; ``interval`` δ² = (a − b)²; ``ordinal`` the
    interval distance on the ranks' cumulative midpoints (``Σ_{k<c} n_k + n_c/2`` over
    the rating counts n_k), which is Krippendorff's ordinal metric; ``ratio``
    δ² = ((a − b)/(a + b))² (ratings ≥ 0). α is 1 for perfect agreement, 0 for chance,
    negative for systematic disagreement; 1.0 when every rating is the same (D_e = 0);
    undefined when no unit has two ratings.

    Parameters
    ----------
    level
        ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``. Non-nominal ratings
        may be numbers or anything :func:`value_to_float` reads (``"C"``, ``"0.5"``).
    to_float
        A :class:`~assay.stats.ValueMapping` (or its dict) for non-nominal ratings.

    Returns
    -------
    MetricFn
        Records of type ``KrippendorffAlpha``. It takes the raw list values, after the
        epoch reducer (``reducers=["collect"]`` builds one list per sample).

    Examples
    --------
    >>> from assay.stats import Score
    >>> krippendorff_alpha("interval")([Score([1, 1]), Score([3, 3]), Score([5, None])])
    1.0
    """
    if level not in LEVELS:
        raise InvalidInputError(
            f"unknown level {level!r} (expected one of {', '.join(LEVELS)})",
            source="krippendorff_alpha",
            field="level",
        )

    def compute_(scores: list[SampleScore]) -> float:
        flat, unit, ids = _units(scores)
        return alpha_from_ratings(flat, unit, level, ids, mapping)

    mapping = as_mapping(to_float)
    params: dict[str, Any] = {"level": level}
    if mapping is not None:
        params["to_float"] = mapping.to_dict()
    fn: Callable[[list[SampleScore]], float] = compute_
    out = MetricFn("KrippendorffAlpha", params, fn, takes="scores")
    out.spec = {"metric": "KrippendorffAlpha", "params": {**params}}
    return out
