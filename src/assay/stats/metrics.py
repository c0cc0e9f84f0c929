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
``ci(level, method="t")``            ``Ci``                 ``{"lower", "upper"}``: the mean's
                                                            t (or bootstrap) interval
``ci_wilson(level)``                 ``CiWilson``           Wilson's interval of scores in
                                                            [0, 1]
===================================  =====================  ===================================

Each also takes ``to_float=``: its own value mapping (as Inspect AI's metrics do), used
instead of the evaluation's for that metric; the record's parameters then carry it.

The registry, the ``@metric`` decorator and :class:`MetricFn` live in
:mod:`assay.stats.metric_registry`; :func:`grouped` in :mod:`assay.stats.grouped`;
all are public from :mod:`assay.stats`.

``ci`` and ``ci_wilson`` are Inspect AI's interval metrics (a value that is an interval);
the ``ci`` option of an evaluation instead puts an interval on every mean's record
(:mod:`assay.stats.tally`). Both share its t and Wilson formulas.

Example:
    >>> from assay.stats import Score, SampleScore
    >>> s = [SampleScore(Score(v), i) for i, v in enumerate(["C", "I", "C", "P"])]
    >>> accuracy()(s), accuracy(partial_credit=False)(s), round(stderr()(s), 4)
    (0.625, 0.5, 0.2394)
    >>> f = ScoreFrame.from_arrays([1, 0, 1, 1, 0, 1], metadata={"doc": [1, 1, 2, 2, 3, 3]})
    >>> {k: round(v, 4) for k, v in ci()(f).items()}
    {'lower': 0.1247, 'upper': 1.2086}
    >>> {k: round(v, 4) for k, v in ci_wilson()(f).items()}
    {'lower': 0.3, 'upper': 0.9032}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats as sps

import assay.stats.compute as compute
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.stats.frame import ScoreFrame
from assay.stats.metric_registry import MetricFn, metric
from assay.stats.tally import t_bounds, wilson_bounds
from assay.uncertainty.intervals import CIOptions

__all__ = [
    "accuracy",
    "bootstrap_stderr",
    "ci",
    "ci_wilson",
    "cluster_bootstrap_means",
    "mean",
    "std",
    "stderr",
    "t_quantile",
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


# ---------------------------------------------------------------- intervals as values

Interval = dict[str, float]


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom.

    Example:
        >>> round(t_quantile(0.975, 10), 6), round(t_quantile(0.975, 10**9), 6)
        (2.228139, 1.959964)
    """
    return float(sps.t.ppf(p, df))


def _check_level(level: float, source: str) -> float:
    if not 0.0 < float(level) < 1.0:
        raise InvalidInputError(
            f"must be in the open interval (0, 1), got {level}", source=source, field="level"
        )
    return float(level)


def cluster_bootstrap_means(
    values: np.ndarray, clusters: Any, num_samples: int, seed: Any = None
) -> np.ndarray:
    """Means of ``num_samples`` cluster-bootstrap resamples: draw G clusters with
    replacement, pool their scores, take the mean.

    A resample that draws cluster g ``k_g`` times has mean ``Σ k_g S_g / Σ k_g n_g``
    (``S_g`` the sum and ``n_g`` the size of cluster g), so only the multinomial counts
    ``k ~ Multinomial(G, 1/G)`` are drawn: O(B·G), vectorised.

    Example:
        >>> m = cluster_bootstrap_means(np.array([1.0, 1.0, 0.0]), [1, 1, 2], 500, seed=0)
        >>> sorted(set(np.round(m, 6).tolist()))
        [0.0, 0.666667, 1.0]
    """
    codes, uniques = compute.factorize(clusters)
    g = len(uniques)
    sums = np.bincount(codes, weights=values, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(np.float64)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(g, np.full(g, 1.0 / g), size=num_samples).astype(np.float64)
    return np.asarray((counts @ sums) / (counts @ sizes), dtype=np.float64)


def _t_interval(frame: ScoreFrame, level: float, cluster: str | None) -> Interval:
    clusters = None if cluster is None else frame.column(cluster)
    lo, hi = t_bounds(frame.values, clusters, level)
    return {"lower": lo, "upper": hi}


def _interval_params(
    level: float, method: str, num_samples: int | None = None, seed: int | None = None
) -> Callable[[Any], dict[str, Any]]:
    """The interval keys of every domain (docs/records.md) from a ``{"lower", "upper"}``
    value: ``ci_low``, ``ci_high``, ``confidence_level``, ``ci_method`` (and
    ``num_bootstrap``, ``seed`` for the bootstrap). They stand for the factory's
    Inspect-style ``level``, ``method``, ``num_samples`` in the records (:data:`_RENAMED`);
    the metric's spec keeps those."""
    opts = CIOptions(level, method, num_samples or 0, seed or 0)

    def params(value: Any) -> dict[str, Any]:
        return opts.parameters(value["lower"], value["upper"])

    return params


#: The interval factories' parameters that their records spell as every domain does.
_RENAMED = frozenset({"level", "method", "num_samples"})


@metric
def ci(
    level: float = 0.95,
    method: str = "t",
    num_samples: int = 1000,
    cluster: str | None = None,
    seed: int | None = None,
    to_float: Any = None,
) -> MetricFn:
    """Two-sided confidence interval ``{"lower", "upper"}`` for the mean score.

    ``method="t"``: ``ȳ ± t_{1−α/2, df} · se`` with α = 1 − ``level``. Without
    ``cluster``, ``se = √(var / n)`` and ``df = n − 1`` (requires n ≥ 2). With
    ``cluster=key``, ``se`` is the clustered (CR1) standard error of :func:`stderr` and
    ``df = G − 1`` for G clusters (requires G ≥ 2).

    ``method="bootstrap"``: the α/2 and 1 − α/2 quantiles (linear interpolation) of
    ``num_samples`` resampled means; with ``cluster``, whole clusters are resampled.

    Parameters
    ----------
    level
        Confidence level, in (0, 1).
    method
        ``"t"`` or ``"bootstrap"``.
    num_samples
        Bootstrap resamples (bootstrap only).
    cluster
        Sample-metadata key of the cluster ids.
    seed
        Bootstrap seed; with None one is drawn when the metric is built and recorded.
    to_float
        This metric's own value mapping (default: the evaluation's), as for ``accuracy``.

    Returns
    -------
    MetricFn
        Records of type ``Ci`` with a dict value ``{"lower", "upper"}``.

    Examples
    --------
    >>> {k: round(v, 6) for k, v in ci(0.9)([0.0, 1.0, 1.0, 1.0]).items()}
    {'lower': 0.161659, 'upper': 1.338341}
    """
    tail = (1.0 - _check_level(level, "ci")) / 2.0
    if method not in ("t", "bootstrap"):
        raise InvalidInputError(
            f"unknown method {method!r} (expected 't' or 'bootstrap')", source="ci", field="method"
        )
    params: dict[str, Any] = {"level": float(level), "method": method, "cluster": cluster}
    if method == "t":
        fn = MetricFn("Ci", params, lambda frame: _t_interval(frame, float(level), cluster))
        fn.record_params = _interval_params(float(level), "t")
        fn.record_renamed = _RENAMED
        return fn
    if int(num_samples) < 2:
        raise InvalidInputError(
            f"must be at least 2, got {num_samples}", source="ci", field="num_samples"
        )
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    b, s = int(num_samples), seed

    def bootstrap(frame: ScoreFrame) -> Interval:
        y = frame.values
        if y.shape[0] < 2:
            raise UndefinedMetricError("Ci", f"requires at least 2 scores, got {y.shape[0]}")
        if cluster is None:
            means = compute.bootstrap_means(y, b, s)
        else:
            means = cluster_bootstrap_means(y, frame.column(cluster), b, s)
        lo, hi = np.quantile(means, [tail, 1.0 - tail])
        return {"lower": float(lo), "upper": float(hi)}

    fn = MetricFn("Ci", {**params, "num_samples": b, "seed": s}, bootstrap)
    fn.record_params = _interval_params(float(level), "bootstrap", b, s)
    fn.record_renamed = _RENAMED
    return fn


@metric
def ci_wilson(
    level: float = 0.95, cluster: str | None = None, to_float: Any = None
) -> Callable[[ScoreFrame], Interval]:
    """Wilson score interval ``{"lower", "upper"}`` for the mean of scores in [0, 1].

    With p̂ the mean, n the count and z the normal ``1 − α/2`` quantile:
    ``(p̂ + z²/2n ± z √(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)``, clipped to [0, 1].

    With ``cluster=key`` (G ≥ 2 clusters): n is replaced by the Korn–Graubard effective
    size ``min(n, p̂(1−p̂) / v)`` with ``v`` the squared clustered standard error (n is
    kept when p̂ is 0 or 1 or v is 0), and z by the t quantile with G − 1 degrees of
    freedom.

    Parameters
    ----------
    level
        Confidence level, in (0, 1).
    cluster
        Sample-metadata key of the cluster ids.
    to_float
        This metric's own value mapping (default: the evaluation's), as for ``accuracy``.

    Returns
    -------
    MetricFn
        Records of type ``CiWilson``; a value outside [0, 1] is an
        :class:`~assay.errors.InvalidInputError` naming the sample.

    Examples
    --------
    >>> {k: round(v, 6) for k, v in ci_wilson()(["C", "C", "C", "I"]).items()}
    {'lower': 0.300642, 'upper': 0.954413}
    """
    level = _check_level(level, "ci_wilson")

    def compute_(frame: ScoreFrame) -> Interval:
        y = frame.values
        bad = np.flatnonzero((y < 0.0) | (y > 1.0))
        if bad.size:
            raise InvalidInputError(
                f"score value {y[bad[0]]} is outside [0, 1] (the Wilson interval is for "
                "proportions)",
                record=f"sample {frame[int(bad[0])].sample_id!r}",
                field="value",
            )
        clusters = None if cluster is None else frame.column(cluster)
        lo, hi = wilson_bounds(y, clusters, level)
        return {"lower": lo, "upper": hi}

    compute_.record_params = _interval_params(level, "wilson")  # type: ignore[attr-defined]
    compute_.record_renamed = _RENAMED  # type: ignore[attr-defined]
    return compute_
