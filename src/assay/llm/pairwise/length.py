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

from assay.llm.pairwise.ratings import bootstrap_counts, logistic_newton

__all__ = [
    "LENGTH_UNIT",
    "char_length",
    "word_length",
    "length_stats",
    "LengthControlled",
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


def _design(lengths_m: np.ndarray, lengths_r: np.ndarray) -> tuple[np.ndarray, bool]:
    d = lengths_m - lengths_r
    s = d.std()
    if not np.isfinite(s) or s == 0:
        return np.ones((len(d), 1)), False
    return np.column_stack([np.ones(len(d)), np.tanh(d / s)]), True


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

    ``outcomes`` is :func:`~assay.llm.pairwise.ratings.debiased_outcomes`' table.
    """
    fwd = outcomes[(outcomes["model"] == model) & (outcomes["opponent"] == reference_model)]
    rev = outcomes[(outcomes["model"] == reference_model) & (outcomes["opponent"] == model)]
    y = np.concatenate([fwd["outcome"].to_numpy(float), 1.0 - rev["outcome"].to_numpy(float)])
    if len(y) == 0:
        return None
    lm = np.concatenate([fwd["length_model"], rev["length_opponent"]]).astype(float)
    lr = np.concatenate([fwd["length_opponent"], rev["length_model"]]).astype(float)
    X, has_slope = _design(lm, lr)
    counts = bootstrap_counts(len(y), n_boot, seed)  # one row per question: resample rows
    beta = logistic_newton(X, y, np.vstack([np.ones(len(y)), counts]), l2=l2)
    alpha = (1.0 - confidence) / 2.0
    wr = 1.0 / (1.0 + np.exp(-beta[:, 0]))
    wr_lo, wr_hi = np.quantile(wr[1:], [alpha, 1.0 - alpha])
    coef = coef_ci = None
    if has_slope:
        coef = float(beta[0, 1])
        lo, hi = np.quantile(beta[1:, 1], [alpha, 1.0 - alpha])
        coef_ci = (float(lo), float(hi))
    return LengthControlled(
        model,
        reference_model,
        len(y),
        float(y.mean()),
        float(wr[0]),
        (float(wr_lo), float(wr_hi)),
        coef,
        coef_ci,
    )
