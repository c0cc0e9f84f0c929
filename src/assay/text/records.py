"""Typed builders of the text-metric records (ROUGE, BLEU and the LLM-judged metrics).

Every text metric gives one record per datum, ``parameters["datum_uid"]`` naming it, and
one aggregate record per metric configuration, ``parameters["aggregate"] == "mean"``,
whose value is the mean of the per-datum values that are defined (``None`` when none
is), with these parameters beside the configuration:

with the parameters of :func:`assay.stats.means.mean_record` (``stderr``, a seeded
bootstrap interval ``ci_low``/``ci_high``, ``n``, ``n_errors``, ``n_undefined``),
which builds it.

Example:
    >>> from assay.stats.means import mean_record
    >>> r = mean_record("BLEU", [0.5, 0.25, 1.0], ["a", "b", "c"], {"weights": [1.0]}, errors=1)
    >>> r.value, r.parameters["n"], r.parameters["n_errors"], r.parameters["aggregate"]
    (0.5833333333333334, 3, 1, 'mean')
    >>> rouge_record("d1", 0.5, "rouge1", use_stemmer=False).parameters
    {'datum_uid': 'd1', 'rouge_type': 'rouge1', 'use_stemmer': False, 'measure': 'fmeasure'}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.results import Metric

__all__ = [
    "rouge_record",
    "bleu_record",
]


def rouge_record(
    uid: str, value: float, rouge_type: str, *, use_stemmer: bool, measure: str = "fmeasure"
) -> Metric:
    """One datum's ROUGE of one type."""
    return Metric(
        "ROUGE",
        float(value),
        {
            "datum_uid": uid,
            "rouge_type": rouge_type,
            "use_stemmer": use_stemmer,
            "measure": measure,
        },
    )


def bleu_record(
    uid: str,
    value: float,
    *,
    weights: Sequence[float],
    smoothing: str | None = None,
    tokenize: str = "whitespace",
) -> Metric:
    """One datum's sentence BLEU (``smoothing``, ``tokenize`` named when not the default)."""
    params: dict[str, Any] = {"datum_uid": uid, "weights": [float(w) for w in weights]}
    if smoothing is not None:
        params["smoothing"] = smoothing
    if tokenize != "whitespace":
        params["tokenize"] = tokenize
    return Metric("BLEU", float(value), params)
