"""Answer lengths: per-model length statistics and the length-controlled win rate.

**Length unit.** The original counts cl100k_base tokens with ``tiktoken``, whose vocabulary
is downloaded at run time; no registry package ships it, and assay downloads nothing at
run time, so lengths here are in **characters** (and words, split on white space). Token
counts of English text are roughly characters / 4, so the original's means are about a
quarter of the character means here; ratios between models are close but not equal.

**Length statistics** are the mean and (population) standard deviation of each model's
answer lengths over the comparison rows (a model's answer counts once per row it
appears in, as the original counts).

**Length-controlled win rate** (the idea of AlpacaEval 2.0). For model m against the
reference r, with ``y`` the position-debiased outcome of each question (1, 1/2, 0) and
``z = tanh((len_m - len_r) / s)`` its standardised length difference (``s`` the standard
deviation of ``len_m - len_r`` over m's questions), fit the logistic model
``P(m wins) = sigmoid(b0 + b1 * z)``. The win rate predicted at equal length is
``sigmoid(b0)``; ``b1`` says how much the judge rewards extra length (0 = not at all).
Both come with seeded bootstrap intervals over questions.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"model_a": ["m", "r"], "model_b": ["r", "m"], "length_a": [3, 1],
    ...                      "length_b": [1, 3], "words_a": [1, 1], "words_b": [1, 1]})
    >>> length_stats(rows).to_dict("records")[0]["mean_chars"]
    3.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from assay.llm.pairwise.ratings import logistic_newton
from assay.uncertainty.intervals import bootstrap, percentile

__all__ = [
    "LENGTH_UNIT",
    "char_length",
    "word_length",
    "length_stats",
    "LengthControlled",
    "LengthDesign",
    "length_design",
    "length_controlled_win_rate",
]

LENGTH_UNIT = "characters"


def char_length(text: object) -> int:
    """Characters of ``str(text)``."""
    return len(str(text))


def word_length(text: object) -> int:
    """White-space separated words of ``str(text)``."""
    return len(str(text).split())


def length_stats(rows: pd.DataFrame) -> pd.DataFrame:
    """``model, n, mean_chars, std_chars, mean_words, std_words``, models in order of appearance.

    ``rows`` has ``model_a``, ``model_b`` and the lengths of their answers in characters
    (``length_a``, ``length_b``) and words (``words_a``, ``words_b``).
    """
    per: dict[str, list[tuple[float, float]]] = {}
    cols = zip(rows["model_a"], rows["model_b"], rows["length_a"], rows["length_b"])
    for (a, b, ca, cb), wa, wb in zip(cols, rows["words_a"], rows["words_b"]):
        per.setdefault(str(a), []).append((float(ca), float(wa)))
        per.setdefault(str(b), []).append((float(cb), float(wb)))
    out = []
    for m, values in per.items():
        v = np.array(values)
        out.append((m, len(v), v[:, 0].mean(), v[:, 0].std(), v[:, 1].mean(), v[:, 1].std()))
    cols_out = ["model", "n", "mean_chars", "std_chars", "mean_words", "std_words"]
    return pd.DataFrame(out, columns=cols_out)


@dataclass(frozen=True)
class LengthControlled:
    """Length-controlled win rate of ``model`` against ``reference_model``."""

    model: str
    reference_model: str
    n: int
    raw_win_rate: float
    win_rate: float
    win_rate_ci: tuple[float, float]
    length_coefficient: float | None
    length_coefficient_ci: tuple[float, float] | None


@dataclass(frozen=True)
class LengthDesign:
    """The length-controlled fit's data for ``model`` against ``reference_model``: one row per
    question the two share (``questions``: its id), the design ``X`` (intercept and, when
    the length differences vary, ``tanh(d / s)``) and the outcomes ``y``."""

    model: str
    reference_model: str
    questions: np.ndarray
    X: np.ndarray
    y: np.ndarray

    @property
    def has_slope(self) -> bool:
        return bool(self.X.shape[1] == 2)

    def fit(self, weights: np.ndarray, *, l2: float) -> np.ndarray:
        """``(B, 2)``: the win rate at equal length and the length coefficient of each row of
        ``weights`` (``(B, rows)``, e.g. resample counts); NaN where a weighting is empty
        (and the coefficient where the lengths do not vary)."""
        w = np.atleast_2d(weights)
        beta = logistic_newton(self.X, self.y, w, l2=l2)
        out = np.column_stack([1.0 / (1.0 + np.exp(-beta[:, 0])), beta[:, -1]])
        if not self.has_slope:
            out[:, 1] = np.nan
        out[w.sum(axis=1) == 0] = np.nan
        return out

    def result(self, point: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> LengthControlled:
        """The :class:`LengthControlled` of a point fit and its interval ends."""
        slope = self.has_slope
        return LengthControlled(
            self.model,
            self.reference_model,
            len(self.y),
            float(self.y.mean()),
            float(point[0]),
            (float(lo[0]), float(hi[0])),
            float(point[1]) if slope else None,
            (float(lo[1]), float(hi[1])) if slope else None,
        )


def length_design(outcomes: pd.DataFrame, model: str, reference_model: str) -> LengthDesign | None:
    """The fit's data (see :class:`LengthDesign`); ``None`` when the two models share no
    judged question. ``outcomes`` is
    :func:`~assay.llm.pairwise.ratings.debiased_outcomes`' table."""
    fwd = outcomes[(outcomes["model"] == model) & (outcomes["opponent"] == reference_model)]
    rev = outcomes[(outcomes["model"] == reference_model) & (outcomes["opponent"] == model)]
    y = np.concatenate([fwd["outcome"].to_numpy(float), 1.0 - rev["outcome"].to_numpy(float)])
    if len(y) == 0:
        return None
    lm = np.concatenate([fwd["length_model"], rev["length_opponent"]]).astype(float)
    lr = np.concatenate([fwd["length_opponent"], rev["length_model"]]).astype(float)
    d = lm - lr
    s = d.std()
    if not np.isfinite(s) or s == 0:
        X = np.ones((len(d), 1))
    else:
        X = np.column_stack([np.ones(len(d)), np.tanh(d / s)])
    questions = np.concatenate([fwd["index"].to_numpy(str), rev["index"].to_numpy(str)])
    return LengthDesign(model, reference_model, questions, X, y)


def length_controlled_win_rate(
    outcomes: pd.DataFrame,
    model: str,
    reference_model: str,
    *,
    l2: float = 0.01,
    n_boot: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
) -> LengthControlled | None:
    """See the module docstring; ``None`` when the two models share no judged question.

    The interval resamples the two models' questions (``n_boot`` resamples);
    :func:`~assay.llm.pairwise.analysis.analyze` instead resamples every question once for
    all its intervals.
    """
    d = length_design(outcomes, model, reference_model)
    if d is None:
        return None
    point = d.fit(np.ones(len(d.y)), l2=l2)[0]
    reps = bootstrap(lambda w: d.fit(w, l2=l2), np.ones(len(d.y), np.int64), n_boot, seed)
    lo, hi = percentile(reps, confidence)
    return d.result(point, lo, hi)
