"""Perplexity over samples from their token counts and log-probabilities, as Inspect AI's
``perplexity_per_token`` and ``perplexity_per_seq``.

Each score's ``metadata`` carries ``num_tokens`` (n_i) and ``sum_log_probs`` (s_i, the
sum of the natural-log probabilities of the sample's tokens). Records have the types
``PerplexityPerToken`` and ``PerplexityPerSeq``; Inspect's names are aliases.

Example:
    >>> from assay.stats import Score
    >>> s = [Score(0, metadata={"num_tokens": 2, "sum_log_probs": -2.0}),
    ...      Score(0, metadata={"num_tokens": 8, "sum_log_probs": -2.0})]
    >>> round(perplexity_per_token()(s), 6), round(perplexity_per_seq()(s), 6)
    (1.491825, 1.868246)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.stats.metric_registry import MetricFn, metric
from assay.stats.score import SampleScore, _rec

__all__ = ["perplexity_per_seq", "perplexity_per_token"]


def _tokens_and_log_probs(scores: list[SampleScore]) -> tuple[np.ndarray, np.ndarray]:
    n = np.empty(len(scores), dtype=np.float64)
    s = np.empty(len(scores), dtype=np.float64)
    for i, score in enumerate(scores):
        md = score.score.metadata or {}
        if md.get("num_tokens") is None or md.get("sum_log_probs") is None:
            raise InvalidInputError(
                "score metadata needs 'num_tokens' and 'sum_log_probs' for perplexity",
                record=_rec(score.sample_id),
                field="metadata",
            )
        n[i], s[i] = int(md["num_tokens"]), float(md["sum_log_probs"])
    return n, s


def _exp(name: str, nll: float) -> float:
    try:
        return math.exp(nll)
    except OverflowError:
        raise UndefinedMetricError(name, f"exp({nll}) overflows (perplexity is infinite)") from None


@metric
def perplexity_per_token() -> MetricFn:
    """Corpus perplexity weighted by tokens: ``exp(−Σ_i s_i / Σ_i n_i)``.

    Undefined when no sample has tokens (or when the value overflows).

    Returns
    -------
    MetricFn
        Records of type ``PerplexityPerToken``.

    Examples
    --------
    >>> from assay.stats import Score
    >>> perplexity_per_token()([Score(0, metadata={"num_tokens": 1, "sum_log_probs": 0.0})])
    1.0
    """

    def compute_(scores: list[SampleScore]) -> float:
        n, s = _tokens_and_log_probs(scores)
        if n.sum() == 0:
            raise UndefinedMetricError("PerplexityPerToken", "no tokens")
        return _exp("PerplexityPerToken", -float(s.sum()) / float(n.sum()))

    fn: Callable[[list[SampleScore]], float] = compute_
    return MetricFn("PerplexityPerToken", {}, fn, takes="scores")


@metric
def perplexity_per_seq() -> MetricFn:
    """Perplexity with one weight per sample: ``exp(mean_i(−s_i / n_i))`` over the samples
    with n_i > 0 (the geometric mean of the samples' perplexities).

    Undefined when no sample has tokens (or when the value overflows).

    Returns
    -------
    MetricFn
        Records of type ``PerplexityPerSeq``.

    Examples
    --------
    >>> from assay.stats import Score
    >>> perplexity_per_seq()([Score(0, metadata={"num_tokens": 4, "sum_log_probs": 0.0})])
    1.0
    """

    def compute_(scores: list[SampleScore]) -> float:
        n, s = _tokens_and_log_probs(scores)
        keep = n > 0
        if not keep.any():
            raise UndefinedMetricError("PerplexityPerSeq", "no sample has tokens")
        return _exp("PerplexityPerSeq", float(np.mean(-s[keep] / n[keep])))

    fn: Callable[[list[SampleScore]], float] = compute_
    return MetricFn("PerplexityPerSeq", {}, fn, takes="scores")
