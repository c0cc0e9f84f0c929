"""Confidence intervals, one spelling and one engine for every domain.

The engine: an evaluator's :class:`~assay.uncertainty.tally.Tally` (per-unit rows, the
point estimate's formulas on a leading resample axis) becomes interval parameters by
:func:`attach` / :func:`tally_intervals` (the closed form asked for where the tally has one,
else the bootstrap: percentile, or BCa where the tally has a jackknife; over units, or over
clusters with ``cluster``), and a slice's gap tally (:meth:`Tally.gap`) its interval by
:func:`gap_bounds`. The options are one :class:`CIOptions` (``ci``, ``ci_method``,
``num_bootstrap``, ``seed``, ``cluster``) in every domain.

An interval lives in a record's ``parameters`` (``value`` is unchanged):

``ci_low``, ``ci_high``
    the interval's ends (``None`` when it could not be computed, the reason in
    ``ci_undefined``);
``confidence_level``
    its nominal coverage (``0.95``);
``ci_method``
    how it was computed: ``bootstrap``, ``wilson``, ``t`` or ``delong``;
``num_bootstrap``, ``seed``
    the resamples and the seed (``bootstrap`` only).

Methods (``level`` = 1 - alpha):

* ``bootstrap``: the percentile bootstrap over the unit the data comes in (datums, images,
  responses). Each metric keeps per-unit sufficient statistics; a resample is a vector of
  multinomial counts (how often each unit is drawn, ``n`` draws), so a resampled metric is
  the metric of count-weighted sufficient statistics: no evaluator re-runs per resample.
  Units with equal statistics are collapsed first (:func:`collapse`): drawing ``n`` units
  uniformly and summing the counts of equal ones is a draw from ``Multinomial(n, m / n)``
  over the distinct rows (``m`` their multiplicities), so the collapsed bootstrap has
  exactly the distribution of the per-unit one. Counts are drawn by one of three exact
  schemes, the cheapest for the multiplicities (:mod:`assay.uncertainty.resampling`), in chunks of
  resamples (:data:`CHUNK_ELEMENTS` numbers at a time) to bound memory. The interval is the
  ``alpha/2`` and ``1 - alpha/2`` quantiles (linear interpolation) of the resampled values;
  resamples on which the metric is undefined (a precision with no predicted positive) are
  left out.
* ``bca``: the bias-corrected and accelerated bootstrap (Efron 1987; :func:`bca`) of the
  same resamples, for metrics that are functions of summed per-unit statistics (the
  jackknife's leave-one-out statistics are the total minus each unit's terms). A metric it
  is not offered for gets the percentile bootstrap.
* ``wilson``: Wilson's score interval of a proportion ``k / n``.
* ``t``: ``mean +- t_{1-alpha/2, df} se``.
* ``delong``: DeLong, DeLong & Clarke-Pearson (1988) for a ROC AUC, with the variance from
  the structural components in the midrank form of Sun & Xu (2014), O(n log n); the
  normal interval clipped to [0, 1].

Example:
    >>> opts = CIOptions(0.9, "wilson")
    >>> from assay.uncertainty.closed_form import wilson
    >>> lo, hi = wilson(8, 10, 0.9)
    >>> opts.parameters(lo, hi)  # doctest: +ELLIPSIS
    {'ci_low': 0.5407..., 'ci_high': 0.9314..., 'confidence_level': 0.9, 'ci_method': 'wilson'}
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError
from assay.results import Metric
from assay.uncertainty.clusters import Clusters, resample_weights
from assay.uncertainty.options import CI_METHODS, interval_options
from assay.uncertainty.resampling import CHUNK_ELEMENTS
from assay.uncertainty.tally import Key, Tally

__all__ = [
    "INTERVAL_KEYS",
    "CIOptions",
    "ci_options",
    "interval_from",
    "bootstrap",
    "percentile",
    "bca",
    "draws",
    "replicates",
    "tally_bounds",
    "tally_intervals",
    "attach",
    "gap_bounds",
    "replicates_by_key",
]

#: Every parameter an interval writes into a record.
INTERVAL_KEYS = frozenset(
    {
        "ci_low",
        "ci_high",
        "confidence_level",
        "ci_method",
        "num_bootstrap",
        "seed",
        "cluster",
        "ci_undefined",
    }
)

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class CIOptions:
    """What interval to put on a record: level, method, and the bootstrap's size and seed.

    ``method`` is the one asked for; a metric for which it does not apply (``delong`` on
    an F1) gets the bootstrap, and its record says so in ``ci_method``.
    """

    level: float
    method: str = "bootstrap"
    num_bootstrap: int = 1000
    seed: int = 0
    cluster: str | None = None

    def config(self) -> dict[str, Any]:
        """The options as evaluator configuration (``ci``, ``ci_method``, ...)."""
        out: dict[str, Any] = {
            "ci": self.level,
            "ci_method": self.method,
            "num_bootstrap": self.num_bootstrap,
            "seed": self.seed,
        }
        return out | ({"cluster": self.cluster} if self.cluster else {})

    def uses(self, method: str) -> bool:
        """Whether a metric that has ``method`` gets it: the method asked for, and no
        ``cluster`` (Wilson, t and DeLong assume independent units; clustered data gets the
        cluster bootstrap)."""
        return self.method == method and self.cluster is None

    def parameters(
        self,
        low: float | None,
        high: float | None,
        method: str | None = None,
        undefined: str | None = None,
    ) -> dict[str, Any]:
        """The record parameters of an interval ``[low, high]`` computed by ``method``.

        A non-finite or missing end gives ``ci_low = ci_high = None`` with the reason in
        ``ci_undefined``.
        """
        m = method or self.method
        if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
            low = high = None
            undefined = undefined or "the interval is undefined on this data"
        out: dict[str, Any] = {
            "ci_low": None if low is None else float(low),
            "ci_high": None if high is None else float(high),
            "confidence_level": self.level,
            "ci_method": m,
        }
        if m in ("bootstrap", "bca"):
            out |= {"num_bootstrap": self.num_bootstrap, "seed": self.seed}
            if self.cluster:
                out["cluster"] = self.cluster
        if low is None:
            out["ci_undefined"] = undefined
        return out

    def interval(
        self,
        replicates: ArrayLike,
        estimate: ArrayLike | None = None,
        jackknife: ArrayLike | None = None,
        weights: ArrayLike | None = None,
    ) -> tuple[F64, str]:
        """The interval, shape (2, k), of bootstrap ``replicates`` (b, k) and its method:
        :func:`bca` when asked and the ``estimate`` and leave-one-out ``jackknife`` values
        (with the units' multiplicities ``weights``) are given, else the percentile."""
        if self.method == "bca" and jackknife is not None and estimate is not None:
            w = np.ones(np.shape(jackknife)[0]) if weights is None else weights
            return bca(replicates, estimate, jackknife, w, self.level), "bca"
        return percentile(replicates, self.level), "bootstrap"

    def bootstrap_interval(
        self,
        statistic: Callable[[F64], F64],
        multiplicity: ArrayLike | Clusters,
    ) -> NDArray[np.float64]:
        """Percentile intervals, shape (2, k), of a ``statistic`` of resample counts."""
        reps = bootstrap(statistic, multiplicity, self.num_bootstrap, self.seed)
        return percentile(reps, self.level)


def ci_options(
    ci: float | None,
    ci_method: str = "bootstrap",
    num_bootstrap: int = 1000,
    seed: int = 0,
    *,
    cluster: str | None = None,
    methods: tuple[str, ...] = CI_METHODS,
) -> CIOptions | None:
    """Validated :class:`CIOptions` (by the declared options,
    :func:`assay.uncertainty.options.interval_options`), or ``None`` when ``ci`` is ``None``
    (no intervals).

    Example:
        >>> ci_options(0.95, "delong")
        CIOptions(level=0.95, method='delong', num_bootstrap=1000, seed=0, cluster=None)
        >>> ci_options(1.5)
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: ci: must be a confidence level in (0, 1), got 1.5
    """
    given = {"ci": ci, "ci_method": ci_method, "num_bootstrap": num_bootstrap, "seed": seed}
    return interval_from(interval_options(methods).validate(given | {"cluster": cluster}))


def interval_from(values: Mapping[str, Any]) -> CIOptions | None:
    """:class:`CIOptions` from clean values of the interval options (``None`` without
    ``ci``): what an evaluator's ``__init__`` makes of them."""
    if values["ci"] is None:
        return None
    return CIOptions(
        values["ci"],
        values["ci_method"],
        values["num_bootstrap"],
        values["seed"],
        values.get("cluster"),
    )


def config_options(config: Mapping[str, Any]) -> CIOptions | None:
    """:class:`CIOptions` from an evaluator's configuration keys (the inverse of ``config``)."""
    return ci_options(
        config.get("ci"),
        config.get("ci_method", "bootstrap"),
        config.get("num_bootstrap", 1000),
        config.get("seed", 0),
        cluster=config.get("cluster"),
    )


# ---------------------------------------------------------------- the bootstrap


def bootstrap(
    statistic: Callable[[F64], F64],
    multiplicity: ArrayLike | Clusters,
    num_bootstrap: int,
    seed: int,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> F64:
    """``statistic`` of every resample: an array (num_bootstrap,) or (num_bootstrap, k).

    ``statistic`` maps a (b, m) array of counts over the distinct units to b values (or a
    (b, k) array, k metrics of the same resample). ``multiplicity``: the units each row
    stands for, or :class:`Clusters` (the cluster bootstrap).
    """
    parts = [
        np.asarray(statistic(w), dtype=np.float64)
        for w in resample_weights(multiplicity, num_bootstrap, seed, chunk_elements)
    ]
    return np.concatenate(parts, axis=0)


def percentile(replicates: ArrayLike, level: float) -> F64:
    """The two-sided percentile interval, shape (2,) + replicates.shape[1:], of bootstrap
    replicates (NaN replicates, undefined resamples, left out; NaN where all are).

    Example:
        >>> percentile(np.arange(101.0), 0.9).round(6).tolist()
        [5.0, 95.0]
    """
    r = np.asarray(replicates, dtype=np.float64)
    tail = (1.0 - level) / 2.0
    if not np.isnan(r).any():
        return np.quantile(r, [tail, 1.0 - tail], axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "All-NaN slice": NaN, as documented
        return np.nanquantile(r, [tail, 1.0 - tail], axis=0)


def bca(
    replicates: ArrayLike,
    estimate: ArrayLike,
    jackknife: ArrayLike,
    weights: ArrayLike,
    level: float,
) -> F64:
    """The BCa interval, shape (2, k), from bootstrap ``replicates`` (b, k), the point
    ``estimate`` (k,) and the leave-one-out ``jackknife`` values (m, k) of the m distinct
    units with their multiplicities ``weights`` (a unit drawn twice is left out twice).

    As ``scipy.stats.bootstrap(method="BCa")``: ``z0 = Phi^-1(share of replicates below the
    estimate, ties counting one half)``; with ``d_i = mean(jackknife) - jackknife_i``,
    ``a = sum d^3 / (6 (sum d^2)^1.5)`` (weighted by multiplicity); the interval is the
    replicates' quantiles (linear interpolation) at ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))``
    for ``z`` the normal ``alpha/2`` and ``1 - alpha/2`` quantiles. NaN replicates
    (undefined resamples) are left out; NaN where the estimate, a jackknife value or the
    bias correction is not finite (all replicates on one side of the estimate).

    Example:
        >>> r = np.arange(1.0, 100.0)[:, None]
        >>> jack = np.array([[49.0], [50.0], [51.0]])
        >>> bca(r, [50.0], jack, [1, 1, 1], 0.9).round(6).tolist()
        [[5.9], [94.1]]
    """
    r = np.asarray(replicates, dtype=np.float64)
    r = r.reshape(r.shape[0], -1)
    est = np.asarray(estimate, dtype=np.float64).reshape(-1)
    jk = np.asarray(jackknife, dtype=np.float64).reshape(-1, est.size)
    w = np.asarray(weights, dtype=np.float64)
    dist = NormalDist()
    out = np.full((2, est.size), np.nan)
    tail = (1.0 - level) / 2.0
    for j in range(est.size):
        rj = r[:, j][np.isfinite(r[:, j])]
        if rj.size == 0 or not np.isfinite(est[j]) or not np.isfinite(jk[:, j]).all():
            continue
        below = (np.count_nonzero(rj < est[j]) + np.count_nonzero(rj <= est[j])) / (2 * rj.size)
        if not 0.0 < below < 1.0:
            continue
        z0 = dist.inv_cdf(below)
        d = float(np.dot(w, jk[:, j]) / w.sum()) - jk[:, j]
        den = 6.0 * float(np.dot(w, d * d)) ** 1.5
        a = float(np.dot(w, d**3)) / den if den > 0 else 0.0
        ends = []
        for z in (dist.inv_cdf(tail), dist.inv_cdf(1.0 - tail)):
            ends.append(dist.cdf(z0 + (z0 + z) / (1.0 - a * (z0 + z))))
        out[:, j] = np.quantile(rj, ends)
    return out


# ---------------------------------------------------------------- the engine


def draws(tally: Tally, opts: CIOptions) -> NDArray[np.int64] | Clusters:
    """What a resample of ``tally`` draws: its rows (their multiplicities), or with
    ``cluster`` the clusters of its units (each unit weighing its cluster's draws)."""
    if opts.cluster is None:
        return np.asarray(tally.multiplicity, dtype=np.int64)
    if tally.codes is None:
        raise InvalidInputError("these records have no cluster bootstrap", source="cluster")
    codes = tally.codes(opts.cluster)
    return Clusters.of(tally.unit_rows(), codes, tally.rows, tally.unit_weight)


def replicates(tally: Tally, opts: CIOptions, drawn: Any = None) -> F64:
    """The values (num_bootstrap, k) of every resample of ``tally`` (``drawn``: its
    :func:`draws`, when already made)."""
    drawn = draws(tally, opts) if drawn is None else drawn

    def statistic(w: F64) -> F64:
        with np.errstate(invalid="ignore", divide="ignore"):
            return tally.values(w)

    return bootstrap(statistic, drawn, opts.num_bootstrap, opts.seed, tally.chunk)


def tally_bounds(tally: Tally, opts: CIOptions, drawn: Any = None) -> tuple[F64, str]:
    """The bootstrap interval (2, k) of each key of ``tally`` and its method: BCa when
    asked and the tally has a jackknife (with ``cluster``, leave one cluster out), else the
    percentile (``drawn``: its :func:`draws`, when already made)."""
    drawn = draws(tally, opts) if drawn is None else drawn
    if isinstance(drawn, Clusters) and too_few_clusters(drawn, opts):
        return np.full((2, len(tally.keys)), np.nan), "bootstrap"  # no interval (see there)
    reps = replicates(tally, opts, drawn)
    if opts.method != "bca" or tally.jackknife is None:
        ci, method = percentile(reps, opts.level), "bootstrap"
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            if isinstance(drawn, Clusters):
                est = tally.values(drawn.totals()[None, :])[0]
                jack = np.concatenate([tally.values(w) for w in drawn.leave_one_out()], axis=0)
                ci, method = opts.interval(reps, est, jack, np.ones(drawn.size))
            else:
                ci, method = opts.interval(reps, tally.estimate(), tally.jackknife(), drawn)
    return (ci + tally.offset if tally.offset else ci), method


#: Below this many clusters a cluster bootstrap's interval tends to be too narrow (it draws
#: from few distinct resamples): assay warns (docs/architecture.md, "Clusters").
MIN_CLUSTERS = 10


def too_few_clusters(drawn: Clusters, opts: CIOptions) -> str | None:
    """Why a cluster bootstrap over ``drawn`` gives no interval (fewer than two clusters
    hold a unit: every resample is the data again, an interval of width 0), or None; warns
    once below :data:`MIN_CLUSTERS`."""
    n = drawn.occupied
    if n < 2:
        return (
            f"a cluster bootstrap needs at least two clusters; cluster={opts.cluster} has {n} here"
        )
    if n < MIN_CLUSTERS:
        warnings.warn(
            f"a cluster bootstrap over fewer than {MIN_CLUSTERS} clusters tends to give too "
            f"narrow an interval (cluster={opts.cluster})",
            UserWarning,
            stacklevel=1,  # one place: shown once per process
        )
    return None


def tally_intervals(tally: Tally, opts: CIOptions) -> dict[Key, dict[str, Any]]:
    """The interval parameters of every key of ``tally``: the closed form of the method
    asked for where the tally has one for the key (and no ``cluster``), else the bootstrap
    (skipped when every key has its closed form)."""
    out: dict[Key, dict[str, Any]] = {}
    closed = tally.closed.get(opts.method) if opts.uses(opts.method) else None
    found = {} if closed is None else closed(opts.level)
    if any(k not in found for k in tally.keys):
        ready = tally.ready()
        drawn = draws(ready, opts)
        if isinstance(drawn, Clusters) and (reason := too_few_clusters(drawn, opts)):
            for k in tally.keys:
                out[k] = opts.parameters(None, None, "bootstrap", undefined=reason)
            return out
        ci, method = tally_bounds(ready, opts, drawn)
        for j, k in enumerate(tally.keys):
            out[k] = opts.parameters(float(ci[0, j]), float(ci[1, j]), method)
    for k, (lo, hi) in found.items():
        out[k] = opts.parameters(float(lo), float(hi), opts.method)
    return out


def attach(
    records: Sequence[Metric],
    tallies: Sequence[Tally],
    opts: CIOptions,
    key: Callable[[Metric], Key | None],
) -> None:
    """Add the interval parameters to the defined ``records``, in place; ``key`` gives a
    record's key among the tallies' (a record no tally has keeps no interval)."""
    found: dict[Key, dict[str, Any]] = {}
    for t in tallies:
        found |= tally_intervals(t, opts)
    for m in records:
        k = None if m.value is None else key(m)
        if k is not None and (params := found.get(k)) is not None:
            m.parameters.update(params)


def replicates_by_key(tallies: Sequence[Tally], opts: CIOptions) -> dict[Key, F64]:
    """Every key's values (num_bootstrap,) over the resamples of its tally."""
    out: dict[Key, F64] = {}
    for t in (t.ready() for t in tallies):
        reps = replicates(t, opts)
        out |= {k: reps[:, j] for j, k in enumerate(t.keys)}
    return out


def gap_bounds(
    tallies: Sequence[Tally], opts: CIOptions, whole: Mapping[Key, F64] | None = None
) -> dict[Key, tuple[float, float]]:
    """The percentile interval of each slice-minus-whole gap. Without ``whole`` each tally
    is a gap tally (:meth:`Tally.gap`: one resample gives both values); with it, ``whole``
    holds the whole set's replicates by key (:func:`replicates_by_key`, made once for every
    slice) and each tally is a slice's, over the same units drawn the same way (the slice's
    units kept, the others weighing nothing), the gap its values minus the whole's."""
    out: dict[Key, tuple[float, float]] = {}
    for t in (t.ready() for t in tallies):
        keys, reps = t.keys, replicates(t, opts)
        if whole is not None:
            cols = [j for j, k in enumerate(t.keys) if k in whole]
            keys = tuple(t.keys[j] for j in cols)
            if not keys:
                continue
            reps = reps[:, cols] - np.column_stack([whole[k] for k in keys])
        ci = percentile(reps, opts.level)
        out |= {k: (float(ci[0, j]), float(ci[1, j])) for j, k in enumerate(keys)}
    return out
