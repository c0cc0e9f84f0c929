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

__all__ = ["judge_agreement"]


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
