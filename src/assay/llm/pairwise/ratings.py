"""Beyond the original: position-debiased outcomes, pairwise win rates, Bradley-Terry ratings.

**Debiased outcome.** A pair of models on one question counts once, whatever the number
of orders judged. With both orders judged: a consistent verdict (A,B)/(B,A) is a win for
the response chosen both times, (C,C)/(D,D) a tie, and an inconsistent one a tie (the
judge's verdict followed the position, not the responses). With one order judged (random
mode, or the other order failed): that verdict, C and D being ties. Identical answers
(exact match) are a tie. The outcome ``y`` of model x against y is 1, 1/2 or 0.

**Pairwise win rate** of x against y = mean of ``y`` over their questions (ties count
half).

**Bradley-Terry.** Each model has a log-strength ``theta``; x beats y with probability
``sigmoid(theta_x - theta_y)``. The fit maximises ``sum w * (y log p + (1 - y) log(1 - p))
- l2/2 * |theta|^2`` (ties are half a win each, the usual way), by Newton's method;
``l2`` (default 0.01) is a weak Gaussian prior that keeps a model that won or lost every
game finite, and makes the solution the one with mean ``theta`` 0. This is exactly an
L2-penalised logistic regression without intercept on rows ``e_x - e_y``. Ratings are
reported on the Elo scale: ``1000 + 400 * theta / ln 10``. Intervals: seeded bootstrap
over questions (whole questions are resampled, so the comparisons of one question stay
together), percentile intervals.

Example:
    >>> import numpy as np
    >>> W = np.array([[0.0, 3.0], [1.0, 0.0]])  # model 0 beat model 1 three times of four
    >>> theta = fit_bradley_terry(W, l2=0.0)
    >>> round(float(theta[0] - theta[1]), 6) == round(float(np.log(3.0)), 6)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from assay.errors import InvalidInputError
from assay.uncertainty.intervals import bootstrap, percentile

__all__ = [
    "ELO_SCALE",
    "debiased_outcomes",
    "pairwise_win_rates",
    "fit_bradley_terry",
    "bradley_terry",
    "BradleyTerryFit",
    "question_wins",
    "rating_fit",
    "elo",
    "logistic_newton",
]

ELO_SCALE = 400.0 / np.log(10.0)
_VALUE = {"A": 1.0, "B": 0.0, "C": 0.5, "D": 0.5}


def debiased_outcomes(rows: pd.DataFrame) -> pd.DataFrame:
    """One outcome per (question, unordered model pair); see the module docstring.

    ``rows`` has ``index``, ``model_a``, ``model_b``, ``status``, ``choice`` and, when
    present, ``length_a``/``length_b``. Returns ``index``, ``model``, ``opponent`` (model
    < opponent by name), ``outcome`` (for ``model``), ``length_model``, ``length_opponent``.
    """
    judged: dict[tuple[str, str, str], list[tuple[str, float, float, float]]] = {}
    has_len = "length_a" in rows.columns
    la = rows["length_a"].to_numpy(float) if has_len else np.full(len(rows), np.nan)
    lb = rows["length_b"].to_numpy(float) if has_len else np.full(len(rows), np.nan)
    cols = zip(rows["index"], rows["model_a"], rows["model_b"], rows["status"], rows["choice"])
    for (q, a, b, status, choice), len_a, len_b in zip(cols, la, lb):  # one row per call
        if status not in ("ok", "em") or str(a) == str(b):  # a model against itself:
            continue  # no outcome (the reference among the models: exact matches, not sent)
        x, y = sorted((str(a), str(b)))
        flip = x != a
        if status == "em":
            v = 0.5
        else:
            v = _VALUE[str(choice)]
            v = 1.0 - v if flip else v
        lx, ly = (len_b, len_a) if flip else (len_a, len_b)
        judged.setdefault((str(q), x, y), []).append((str(status), v, float(lx), float(ly)))
    out = []
    for (q, x, y), js in judged.items():
        values = [j[1] for j in js]
        if any(j[0] == "em" for j in js):
            v = 0.5
        elif len(js) == 1 or len(set(values)) == 1:
            v = values[0]
        else:  # both orders, different verdicts about the responses: a tie
            v = 0.5
        out.append((q, x, y, v, js[0][2], js[0][3]))
    cols_out = ["index", "model", "opponent", "outcome", "length_model", "length_opponent"]
    df = pd.DataFrame(out, columns=cols_out)
    return df.sort_values(["index", "model", "opponent"]).reset_index(drop=True)


def pairwise_win_rates(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Win rate (ties half) of every model against every other, both directions.

    Example:
        >>> o = pd.DataFrame({"index": ["q1", "q2"], "model": ["a", "a"], "opponent": ["b", "b"],
        ...                   "outcome": [1.0, 0.5]})
        >>> pairwise_win_rates(o)[["model", "opponent", "win_rate", "n"]].values.tolist()
        [['a', 'b', 0.75, 2], ['b', 'a', 0.25, 2]]
    """
    g = outcomes.groupby(["model", "opponent"])["outcome"].agg(["sum", "count"]).reset_index()
    fwd = pd.DataFrame(
        {"model": g["model"], "opponent": g["opponent"], "wins": g["sum"], "n": g["count"]}
    )
    rev = pd.DataFrame(
        {
            "model": g["opponent"],
            "opponent": g["model"],
            "wins": g["count"] - g["sum"],
            "n": g["count"],
        }
    )
    out = pd.concat([fwd, rev], ignore_index=True).sort_values(["model", "opponent"])
    out["win_rate"] = out["wins"] / out["n"]
    return out.reset_index(drop=True)[["model", "opponent", "wins", "n", "win_rate"]]


def logistic_newton(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, *, l2: float, max_iter: int = 100
) -> np.ndarray:
    """Weighted logistic regression (no intercept column added) for a batch of weightings.

    Maximises ``sum_r w[b, r] * (y[b, r] log p + (1 - y[b, r]) log(1 - p)) - l2/2 |beta|^2``
    with ``p = sigmoid(X @ beta)``, for every ``b``; ``y`` may be fractional. ``X`` is
    ``(R, k)``, ``y`` and ``w`` are ``(B, R)`` (or ``(R,)``). Returns ``beta`` ``(B, k)``.
    With ``l2 == 0`` a singular Hessian is handled by the pseudo-inverse (minimum-norm step).
    """
    w2 = np.atleast_2d(np.asarray(w, dtype=float))
    y2 = np.broadcast_to(np.atleast_2d(np.asarray(y, dtype=float)), w2.shape)
    X = np.asarray(X, dtype=float)
    k = X.shape[1]
    beta = np.zeros((w2.shape[0], k))
    eye = np.eye(k)
    outer = (X[:, :, None] * X[:, None, :]).reshape(len(X), k * k)  # x x^T per row
    # einsum, not BLAS: these products have a tiny inner or outer size, where a threaded
    # BLAS spends more time waking its threads than computing (10-100x on a busy machine).
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-np.einsum("bk,rk->br", beta, X)))
        grad = np.einsum("br,rk->bk", w2 * (y2 - p), X) - l2 * beta
        hess = np.einsum("br,rj->bj", w2 * p * (1.0 - p), outer).reshape(-1, k, k) + l2 * eye
        step = np.einsum("bpq,bq->bp", np.linalg.pinv(hess, hermitian=True), grad)
        big = np.max(np.abs(step), axis=1, keepdims=True)
        step = np.where(big > 4.0, step * 4.0 / np.maximum(big, 1e-300), step)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    return beta


def _pair_design(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    i, j = np.triu_indices(n, k=1)
    X = np.zeros((len(i), n))
    X[np.arange(len(i)), i] = 1.0
    X[np.arange(len(i)), j] = -1.0
    return i, j, X


def fit_bradley_terry(wins: np.ndarray, *, l2: float = 0.01) -> np.ndarray:
    """Log-strengths from a wins matrix (``wins[i, j]``: i's wins over j, ties as halves).

    ``wins`` may be a batch ``(B, n, n)``; returns ``(n,)`` or ``(B, n)``, mean 0 per fit.
    """
    W = np.asarray(wins, dtype=float)
    single = W.ndim == 2
    W3 = W[None] if single else W
    n = W3.shape[-1]
    i, j, X = _pair_design(n)
    games = W3[:, i, j] + W3[:, j, i]
    y = np.divide(W3[:, i, j], games, out=np.full_like(games, 0.5), where=games > 0)
    theta = logistic_newton(X, y, games, l2=l2)
    theta = theta - theta.mean(axis=1, keepdims=True)
    return theta[0] if single else theta


def question_wins(
    outcomes: pd.DataFrame, models: Sequence[str], questions: Sequence[str]
) -> np.ndarray:
    """``(len(questions), n, n)``: per question, ``[q, i, j]`` model i's wins over model j
    (ties as halves), models and questions in the orders given."""
    pos = {m: k for k, m in enumerate(models)}
    qpos = {q: k for k, q in enumerate(questions)}
    per_q = np.zeros((len(questions), len(models), len(models)))
    qi = outcomes["index"].map(qpos).to_numpy()
    mi = outcomes["model"].map(pos).to_numpy()
    oi = outcomes["opponent"].map(pos).to_numpy()
    y = outcomes["outcome"].to_numpy(float)
    np.add.at(per_q, (qi, mi, oi), y)
    np.add.at(per_q, (qi, oi, mi), 1.0 - y)
    return per_q


def elo(theta: ArrayLike) -> np.ndarray:
    """Log-strengths on the Elo scale: ``1000 + 400 theta / ln 10``."""
    return 1000.0 + ELO_SCALE * np.asarray(theta, dtype=float)


@dataclass(frozen=True)
class BradleyTerryFit:
    """Ratings (Elo scale), their bootstrap intervals and games per model."""

    models: list[str]
    theta: np.ndarray
    rating: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    games: np.ndarray

    def table(self) -> pd.DataFrame:
        """The ranking table, best first."""
        df = pd.DataFrame(
            {
                "model": self.models,
                "rating": self.rating,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
                "games": self.games,
            }
        ).sort_values(["rating", "model"], ascending=[False, True])
        df.insert(0, "rank", np.arange(1, len(df) + 1))
        return df.reset_index(drop=True)


def bradley_terry(
    outcomes: pd.DataFrame,
    *,
    l2: float = 0.01,
    n_boot: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
) -> BradleyTerryFit:
    """Bradley-Terry ratings of the models in ``outcomes`` with bootstrap intervals over
    questions (:func:`assay.uncertainty.intervals.bootstrap`, ``n_boot`` resamples)."""
    if len(outcomes) == 0:
        raise InvalidInputError("no judged comparison", source="bradley_terry")
    models = sorted(set(outcomes["model"]) | set(outcomes["opponent"]))
    qs = sorted(set(outcomes["index"]))
    per_q = question_wins(outcomes, models, qs)
    theta = fit_bradley_terry(per_q.sum(axis=0), l2=l2)
    boots = bootstrap(
        lambda w: fit_bradley_terry(np.einsum("bq,qij->bij", w, per_q), l2=l2),
        np.ones(len(qs), dtype=np.int64),
        n_boot,
        seed,
    )
    lo, hi = percentile(boots, confidence)
    return rating_fit(models, theta, lo, hi, per_q)


def rating_fit(
    models: list[str], theta: np.ndarray, lo: np.ndarray, hi: np.ndarray, per_q: np.ndarray
) -> BradleyTerryFit:
    """The fit's table from log-strengths, their interval ends and the per-question wins."""
    games = per_q.sum(axis=(0, 2)) + per_q.sum(axis=(0, 1))
    return BradleyTerryFit(models, theta, elo(theta), elo(lo), elo(hi), games)
