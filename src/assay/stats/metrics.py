"""The built-in metrics over per-sample scores.

Each factory returns a :class:`~assay.stats.MetricFn`; the record type is CamelCase and
Inspect AI's lowercase name is an alias in the registry (``get_metric("stderr")``).

===================================  =====================  ===================================
factory                              record type            value, for n scores y with mean ȳ
===================================  =====================  ===================================
``accuracy(partial_credit=True)``    ``Accuracy``           mean of the values; ``"P"`` is 0.5,
                                                            or 0 when ``partial_credit=False``
``mean()``                           ``Mean``               ``Σ y / n``
``var()``                            ``Var``                ``Σ (y − ȳ)² / (n − 1)``
``std()``                            ``Std``                ``√var``
``stderr()``                         ``Stderr``             ``√(var / n)``
``stderr(cluster=key)``              ``Stderr``             cluster-robust (CR1) over the
                                                            clusters of sample metadata ``key``
``bootstrap_stderr(num_samples,      ``BootstrapStderr``    std (ddof 1) of ``num_samples``
seed)``                                                     resampled means
===================================  =====================  ===================================

Each also takes ``to_float=``: its own value mapping (as Inspect AI's metrics do), used
instead of the evaluation's for that metric; the record's parameters then carry it.

The registry, the ``@metric`` decorator and :class:`MetricFn` live in
:mod:`assay.stats.metric_registry`; :func:`grouped` in :mod:`assay.stats.grouped` (both
re-exported here).

Example:
    >>> from assay.stats import Score, SampleScore
    >>> s = [SampleScore(Score(v), i) for i, v in enumerate(["C", "I", "C", "P"])]
    >>> accuracy()(s), accuracy(partial_credit=False)(s), round(stderr()(s), 4)
    (0.625, 0.5, 0.2394)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import assay.stats.compute as compute
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.stats.frame import ScoreFrame
from assay.stats.grouped import GroupedMetricFn, grouped, metric_from_spec
from assay.stats.metric_registry import (
    MetricFn,
    as_frame,
    get_metric,
    metric,
    registered_metrics,
)

__all__ = [
    "GroupedMetricFn",
    "MetricFn",
    "accuracy",
    "as_frame",
    "bootstrap_stderr",
    "get_metric",
    "grouped",
    "mean",
    "metric",
    "metric_from_spec",
    "registered_metrics",
    "std",
    "stderr",
    "var",
]


@metric
def accuracy(partial_credit: bool = True, to_float: Any = None) -> Callable[[ScoreFrame], float]:
    """Proportion correct: the mean of the values (C = 1, I = N = 0, P = 0.5).

    Parameters
    ----------
    partial_credit
        Give the partial letter ``"P"`` 0.5 (default, as Inspect AI does); False counts
        it as incorrect (0). A numeric 0.5 is not the letter and is not touched.
    to_float
        This metric's own value mapping (a :class:`~assay.stats.ValueMapping`, the dict
        of its fields, or a ``{text: number}`` table such as ``{"P": 0.0}``); default: the
        evaluation's. Every metric over floats takes one (see :mod:`assay.stats`).

    Returns
    -------
    MetricFn
        Records of type ``Accuracy``; undefined on no scores.

    Examples
    --------
    >>> accuracy()(["C", "P", "I", "C"]), accuracy(partial_credit=False)(["C", "P", "I", "C"])
    (0.625, 0.5)
    >>> accuracy(to_float={"P": 0.25})(["C", "P", "I", "C"])
    0.5625
    """

    def compute_(frame: ScoreFrame) -> float:
        if not len(frame):
            raise UndefinedMetricError("Accuracy", "requires at least 1 score, got 0")
        return compute.mean(frame.values_for(partial_credit=partial_credit))

    compute_.mean_of = lambda frame: frame.values_for(partial_credit=partial_credit)  # type: ignore[attr-defined]
    return compute_


@metric
def mean(to_float: Any = None) -> Callable[[ScoreFrame], float]:
    """Arithmetic mean ``Σ y / n`` of the values (requires n ≥ 1).

    Returns
    -------
    MetricFn
        Records of type ``Mean``.

    Examples
    --------
    >>> mean()([1, 2, 4])
    2.3333333333333335
    """

    def compute_(frame: ScoreFrame) -> float:
        return compute.mean(frame.values)

    compute_.mean_of = lambda frame: frame.values  # type: ignore[attr-defined]
    return compute_


@metric
def var(to_float: Any = None) -> Callable[[ScoreFrame], float]:
    """Sample variance ``Σ (y − ȳ)² / (n − 1)`` (requires n ≥ 2).

    Returns
    -------
    MetricFn
        Records of type ``Var``.

    Examples
    --------
    >>> var()([1, 2, 3, 4])
    1.6666666666666667
    """
    return lambda frame: compute.var(frame.values)


@metric
def std(to_float: Any = None) -> Callable[[ScoreFrame], float]:
    """Sample standard deviation ``√(Σ (y − ȳ)² / (n − 1))`` (requires n ≥ 2).

    Returns
    -------
    MetricFn
        Records of type ``Std``.

    Examples
    --------
    >>> std()([2, 4])
    1.4142135623730951
    """
    return lambda frame: compute.std(frame.values)


@metric
def stderr(cluster: str | None = None, to_float: Any = None) -> Callable[[ScoreFrame], float]:
    """Standard error of the mean, optionally cluster-robust.

    Without ``cluster``: ``√(var / n)`` with the sample variance (requires n ≥ 2). With
    ``cluster=key``, the samples fall into G clusters by their metadata value for
    ``key``; with ``e_g`` the sum of the residuals ``y − ȳ`` inside cluster g, the
    standard error is ``√(G/(G−1) · Σ_g e_g²) / n`` (requires G ≥ 2). That is the CR1
    sandwich estimate for a regression on a constant, the same number statsmodels gives
    with ``cov_type="cluster"``.

    Parameters
    ----------
    cluster
        The sample-metadata key whose values define the clusters; every sample needs
        one, otherwise :class:`~assay.errors.InvalidInputError` names the sample.

    Returns
    -------
    MetricFn
        Records of type ``Stderr`` with the parameter ``cluster``.

    Examples
    --------
    >>> from assay.stats import ScoreFrame
    >>> f = ScoreFrame.from_arrays([1, 1, 0, 0, 1, 0], metadata={"doc": [1, 1, 2, 2, 3, 3]})
    >>> round(stderr(cluster="doc")(f), 6), round(stderr()(f), 6)
    (0.288675, 0.223607)
    """
    if cluster is None:
        return lambda frame: compute.stderr(frame.values)
    return lambda frame: compute.clustered_stderr(frame.values, frame.column(cluster))


@metric
def bootstrap_stderr(
    num_samples: int = 1000, seed: int | None = None, to_float: Any = None
) -> MetricFn:
    """Bootstrap standard error of the mean.

    Draw ``num_samples`` resamples of the n values with replacement, take each
    resample's mean, and report the sample standard deviation (ddof 1) of those means.

    Parameters
    ----------
    num_samples
        The number of resamples B (at least 2).
    seed
        Random seed. With None a seed is drawn once, when the metric is built, and kept
        in the parameters so the value can be reproduced (two metrics built with
        ``seed=None`` therefore differ in configuration).

    Returns
    -------
    MetricFn
        Records of type ``BootstrapStderr`` with parameters ``num_samples`` and ``seed``.

    Examples
    --------
    >>> m = bootstrap_stderr(200, seed=7)
    >>> m([0, 1] * 100) == m([0, 1] * 100)
    True
    """
    if int(num_samples) < 2:
        raise InvalidInputError(
            f"must be at least 2, got {num_samples}", source="bootstrap_stderr", field="num_samples"
        )
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    b = int(num_samples)
    return MetricFn(
        "BootstrapStderr",
        {"num_samples": b, "seed": seed},
        lambda frame: compute.bootstrap_stderr(frame.values, b, seed),
    )
