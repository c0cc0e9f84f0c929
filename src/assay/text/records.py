"""Typed builders of the text-metric records (ROUGE, BLEU and the LLM-judged metrics).

Every text metric gives one record per datum, ``parameters["datum_uid"]`` naming it, and
one aggregate record per metric configuration, ``parameters["aggregate"] == "mean"``,
whose value is the mean of the per-datum values that are defined (``None`` when none
is), with these parameters beside the configuration:

``stderr``
    the standard error of that mean, ``std(ddof=1) / √n`` (``None`` when n < 2);
``ci_low``, ``ci_high``
    a seeded percentile-bootstrap 95% interval of the mean (``num_bootstrap`` resamples,
    values ordered by datum uid first, so the interval does not depend on the order in
    which data arrived);
``n``, ``n_errors``, ``n_undefined``
    the number of datums with a value, the number whose judge never gave a valid reply
    (or whose call failed), and the number for which the metric is undefined (e.g. an
    answer without statements).

Example:
    >>> r = aggregate("BLEU", [0.5, 0.25, 1.0], ["a", "b", "c"], {"weights": [1.0]}, errors=1)
    >>> r.value, r.parameters["n"], r.parameters["n_errors"], r.parameters["aggregate"]
    (0.5833333333333334, 3, 1, 'mean')
    >>> rouge_record("d1", 0.5, "rouge1", use_stemmer=False).parameters
    {'datum_uid': 'd1', 'rouge_type': 'rouge1', 'use_stemmer': False, 'measure': 'fmeasure'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import UndefinedMetricError
from assay.results import Metric

__all__ = ["aggregate", "rouge_record", "bleu_record", "datum_record", "NUM_BOOTSTRAP"]

NUM_BOOTSTRAP = 1000


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


def datum_record(
    type: str, uid: str, value: float | None, *, reason: str | None = None, **parameters: Any
) -> Metric:
    """One datum's value of any text metric; ``None`` with ``reason`` when undefined."""
    params: dict[str, Any] = {"datum_uid": uid, **parameters}
    if value is None:
        params["undefined"] = reason or "undefined"
        return Metric(type, None, params)
    return Metric(type, float(value), params)


def aggregate(
    type: str,
    values: Sequence[float] | np.ndarray,
    uids: Sequence[str] | np.ndarray,
    parameters: Mapping[str, Any],
    *,
    errors: int = 0,
    undefined: int = 0,
    num_bootstrap: int = NUM_BOOTSTRAP,
    seed: int = 0,
) -> Metric:
    """The aggregate record of one metric (see the module docstring)."""
    from assay.stats import bootstrap_means, mean, stderr

    y = np.asarray(values, dtype=np.float64)
    order = np.argsort(np.asarray(uids, dtype=str), kind="stable")
    y = y[order]
    params = {
        **parameters,
        "aggregate": "mean",
        "confidence": 0.95,
        "num_bootstrap": num_bootstrap,
        "seed": seed,
    }
    n = int(y.size)
    counts = {"n": n, "n_errors": int(errors), "n_undefined": int(undefined)}
    if n == 0:
        empty = {"stderr": None, "ci_low": None, "ci_high": None, **counts}
        return Metric(type, None, {**params, **empty, "undefined": "no datum has a value"})
    try:
        se: float | None = float(stderr()(y))
    except UndefinedMetricError:
        se = None
    means = bootstrap_means(y, num_bootstrap, seed)
    lo, hi = np.quantile(means, [0.025, 0.975])
    stats = {"stderr": se, "ci_low": float(lo), "ci_high": float(hi), **counts}
    return Metric(type, float(mean()(y)), {**params, **stats})
