"""How well a judge agrees with human labels on the items both scored (``JudgeAgreement``).

For ``n`` paired values (human ``y``, judge ``yhat``) the record's value is a dict:

``mae``, ``pearson``, ``spearman``
    the mean absolute error and the Pearson and Spearman correlations (numeric values);
``agreement``, ``cohen_kappa``
    when every value is an integer (verdicts 0/1, ratings 1-5): the share of items where the
    judge gives the human's value, and Cohen's kappa (that share corrected for the agreement
    expected by chance from the two marginal distributions).

A measure that is undefined on the data (a correlation of a constant, kappa when both raters
give one and the same category) is ``None`` and its reason is in ``undefined``.

Example:
    >>> v, why = judge_agreement([1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0])
    >>> v["agreement"], v["cohen_kappa"], v["mae"]
    (0.75, 0.5, 0.25)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from assay.results import Metric
from assay.uncertainty.intervals import CIOptions, tally_intervals
from assay.uncertainty.tally import Tally

__all__ = [
    "MEASURES",
    "agreement_intervals",
    "agreement_record",
    "agreement_tally",
    "judge_agreement",
]

#: The measures of a JudgeAgreement value, in the order of the tally's keys.
MEASURES = ("agreement", "cohen_kappa", "pearson", "spearman", "mae")


def _kappa(y: np.ndarray, yhat: np.ndarray) -> float | None:
    cats, codes = np.unique(np.concatenate([y, yhat]), return_inverse=True)
    k, n = cats.size, y.size
    table = np.zeros((k, k))
    np.add.at(table, (codes[:n], codes[n:]), 1.0)
    table /= n
    chance = float(table.sum(axis=1) @ table.sum(axis=0))
    if chance >= 1.0:
        return None
    return (float(np.trace(table)) - chance) / (1.0 - chance)


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean of their positions)."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size)
    ranks[order] = np.arange(1, x.size + 1)
    _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=ranks)
    return (sums / counts)[inv]


def _pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    da, db = a - a.mean(), b - b.mean()
    den = float(np.sqrt((da @ da) * (db @ db)))
    return None if den == 0.0 else float(np.clip((da @ db) / den, -1.0, 1.0))


def judge_agreement(y: ArrayLike, yhat: ArrayLike) -> tuple[dict[str, Any], dict[str, str]]:
    """The agreement measures (module docstring) of paired human and judged values, and the
    reasons of those that are undefined."""
    a = np.asarray(y, dtype=np.float64).reshape(-1)
    b = np.asarray(yhat, dtype=np.float64).reshape(-1)
    value: dict[str, Any] = {"mae": float(np.mean(np.abs(a - b))) if a.size else None}
    why: dict[str, str] = {}
    if a.size < 2:
        why["pearson"] = why["spearman"] = f"requires at least 2 labelled items, got {a.size}"
        value["pearson"] = value["spearman"] = None
    else:
        value["pearson"] = _pearson(a, b)
        value["spearman"] = _pearson(_ranks(a), _ranks(b))
        for k in ("pearson", "spearman"):
            if value[k] is None:
                why[k] = "the human or the judged values are constant"
    if a.size and np.all(a == np.round(a)) and np.all(b == np.round(b)):
        value["agreement"] = float(np.mean(a == b))
        value["cohen_kappa"] = _kappa(a, b)
        if value["cohen_kappa"] is None:
            why["cohen_kappa"] = "both give one and the same value: chance agreement is 1"
    return value, why


def _varies(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Whether each resample (row of ``w``) draws at least two distinct values of ``x``."""
    cats, inv = np.unique(x, return_inverse=True)
    drawn = np.zeros((w.shape[0], cats.size))
    np.add.at(drawn.T, inv, (w > 0).T.astype(np.float64))
    return (drawn > 0).sum(axis=1) > 1


def _wpearson(a: np.ndarray, b: np.ndarray, w: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Weighted Pearson correlations (r,) of rows ``a``, ``b`` (r, n) under ``w``; NaN where
    not ``ok`` (one of them constant in the resample)."""
    tot = w.sum(axis=1, keepdims=True)
    da = a - (w * a).sum(axis=1, keepdims=True) / tot
    db = b - (w * b).sum(axis=1, keepdims=True) / tot
    num = (w * da * db).sum(axis=1)
    den = np.sqrt((w * da * da).sum(axis=1) * (w * db * db).sum(axis=1))
    den = np.where(ok & (den > 0), den, np.nan)
    return np.clip(num / den, -1.0, 1.0)


def _wranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The average ranks (r, n) of each item within each resample (items weighing ``w``)."""
    cats, inv = np.unique(x, return_inverse=True)
    onehot = np.zeros((x.size, cats.size))
    onehot[np.arange(x.size), inv] = 1.0
    per = w @ onehot  # (r, k): how many drawn items hold each distinct value
    below = np.cumsum(per, axis=1) - per
    return (below + (per + 1.0) / 2.0)[:, inv]


def agreement_tally(
    y: ArrayLike, yhat: ArrayLike, codes: np.ndarray | None = None, *, name: str = "JudgeAgreement"
) -> Tally:
    """The tally of the measures (keys ``(name, measure)``, :data:`MEASURES`; agreement and
    kappa only for integer values) of paired values; ``codes``: each item's cluster."""
    a = np.asarray(y, dtype=np.float64).reshape(-1)
    b = np.asarray(yhat, dtype=np.float64).reshape(-1)
    integer = bool(a.size) and bool(np.all(a == np.round(a)) and np.all(b == np.round(b)))
    names = MEASURES if integer else MEASURES[2:]
    cats, codes_ab = np.unique(np.concatenate([a, b]), return_inverse=True)
    k = cats.size
    cell = np.zeros((a.size, k * k))
    cell[np.arange(a.size), codes_ab[: a.size] * k + codes_ab[a.size :]] = 1.0
    same, err = (a == b).astype(np.float64), np.abs(a - b)

    def values(w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64)
        tot = w.sum(axis=1)
        ok = _varies(a, w) & _varies(b, w)
        full_a, full_b = np.broadcast_to(a, w.shape), np.broadcast_to(b, w.shape)
        out = {
            "mae": (w @ err) / tot,
            "pearson": _wpearson(full_a, full_b, w, ok),
            "spearman": _wpearson(_wranks(a, w), _wranks(b, w), w, ok),
        }
        if integer:
            table = (w @ cell).reshape(-1, k, k) / tot[:, None, None]
            chance = np.einsum("ri,ri->r", table.sum(axis=2), table.sum(axis=1))
            observed = np.trace(table, axis1=1, axis2=2)
            out["agreement"] = (w @ same) / tot
            free = chance < 1.0 - 1e-12
            kappa = (observed - chance) / np.where(free, 1.0 - chance, 1.0)
            out["cohen_kappa"] = np.where(free, kappa, np.nan)
        return np.stack([out[m] for m in names], axis=1)

    group = None if codes is None else np.asarray(codes, dtype=np.intp)
    return Tally(
        tuple((name, m) for m in names),
        values,
        multiplicity=np.ones(a.size, dtype=np.int64),
        codes=None if group is None else (lambda _column: group),
    )


def agreement_intervals(
    y: ArrayLike, yhat: ArrayLike, opts: CIOptions, codes: np.ndarray | None = None
) -> dict[str, list[float | None]]:
    """measure -> ``[low, high]``, the bootstrap interval (percentile, or BCa is not offered:
    the percentile) of each measure over the labelled items (``codes``: clusters, drawn whole
    when ``opts.cluster`` is set); ``[None, None]`` where no resample defines it."""
    tally = agreement_tally(y, yhat, codes)
    found = tally_intervals(tally, opts)
    return {key[1]: [p["ci_low"], p["ci_high"]] for key, p in found.items()}


def agreement_record(
    y: ArrayLike,
    yhat: ArrayLike,
    context: dict[str, Any],
    opts: CIOptions | None,
    codes: np.ndarray | None = None,
) -> Metric:
    """The ``JudgeAgreement`` record of paired values: the measures, ``n``, the reasons of
    undefined ones (``undefined_measures``) and, with ``opts``, ``measure_ci`` (measure ->
    ``[low, high]``) with the interval's ``confidence_level``, ``ci_method``,
    ``num_bootstrap``, ``seed`` (and ``cluster``)."""
    value, why = judge_agreement(y, yhat)
    params = dict(context) | {"n": int(np.size(y))}
    if why:
        params["undefined_measures"] = why
    if opts is not None and np.size(y) > 0:
        found = agreement_intervals(y, yhat, opts, codes)
        params["measure_ci"] = {m: found[m] for m in MEASURES if m in found}
        ends = ("ci_low", "ci_high")
        params |= {k: v for k, v in opts.parameters(0.0, 0.0).items() if k not in ends}
    return Metric("JudgeAgreement", value, params)
