"""The stats tally: intervals of a mean over samples, from the one engine (docs/records.md).

``ScoreEvaluator(..., ci=0.95)`` (CLI ``assay stats --ci 0.95``) puts an interval on every
record that is a mean of per-sample values (``Accuracy``, ``Mean``, and their ``grouped``
records): ``ci_low``, ``ci_high``, ``confidence_level``, ``ci_method`` (and
``num_bootstrap``, ``seed`` for the bootstrap), plus ``cluster`` when the samples are
clustered. Methods, for n sample values y:

* ``t``: ``ȳ ± t_{1−α/2, n−1} · √(var / n)``; with ``cluster`` the CR1 clustered standard
  error and ``G − 1`` degrees of freedom (the ``ci`` metric's formula).
* ``wilson``: Wilson's score interval of ``Σ y / n``, for values in [0, 1]; with
  ``cluster`` the Korn–Graubard effective size and the ``t_{G−1}`` quantile (the
  ``ci_wilson`` metric's formula). Values outside [0, 1] get the bootstrap.
* ``bca``: the bias-corrected and accelerated bootstrap of those resamples, the jackknife's
  leave-one-unit-out means being the totals minus each unit's sum and size.
* ``bootstrap`` (and ``delong``, which does not apply to a mean): the percentile bootstrap
  over samples, or over whole clusters with ``cluster``. A resample with counts ``w`` over
  the units has mean ``w @ s / w @ c`` (``s`` a unit's sum, ``c`` its size; one sample per
  unit without a cluster), so only the counts are drawn.

The mean's :func:`tally` (units: the samples, by sample id, or with ``cluster`` the
clusters, by cluster id: the cluster is then the unit the data comes in, and a resample
draws counts over the clusters' distinct (sum, size) rows; the t and Wilson forms as its
closed forms) goes through the one engine (:mod:`assay.uncertainty.intervals`).
:meth:`ScoreEvaluator.tally <assay.stats.evaluator.ScoreEvaluator.tally>` gives the tally of
every record with an interval, keyed by :func:`record_key`.

Example:
    >>> ci = SampleCI(CIOptions(0.9, "t"))
    >>> p = ci.parameters(np.array([0.0, 1.0, 1.0, 1.0]))
    >>> round(p["ci_low"], 6), round(p["ci_high"], 6), p["ci_method"]
    (0.161659, 1.338341, 't')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
from scipy import stats as sps

import assay.stats.compute as compute
from assay.errors import UndefinedMetricError
from assay.results import Metric
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.intervals import CIOptions, tally_intervals
from assay.uncertainty.slices import record_key as _record_key
from assay.uncertainty.tally import Key, Tally

__all__ = ["SampleCI", "record_key", "t_bounds", "tally", "wilson_bounds"]

#: The one key of a mean's tally (a record's key, :func:`record_key`, when it has one).
MEAN = ("mean",)
#: What identifies a record among an evaluation's (beside its type).
WHERE = ("reducer", "score_key", "group_column", "group")

F64 = np.ndarray


def t_bounds(y: F64, clusters: Any, level: float) -> tuple[float, float]:
    """``ȳ ± t · se`` (plain, or clustered CR1 with ``G − 1`` degrees of freedom).

    Raises :class:`UndefinedMetricError` with fewer than 2 scores (clusters).
    """
    if clusters is None:
        se, df = compute.stderr(y), y.shape[0] - 1
    else:
        se = compute.clustered_stderr(y, clusters)
        df = len(compute.factorize(clusters)[1]) - 1
    m = compute.mean(y)
    t = float(sps.t.ppf(1.0 - (1.0 - level) / 2.0, df))
    return m - t * se, m + t * se


def _wilson(p_hat: float, n: float, critical: float) -> tuple[float, float]:
    c2 = critical * critical
    denominator = 1.0 + c2 / n
    center = (p_hat + c2 / (2.0 * n)) / denominator
    half = critical * math.sqrt(p_hat * (1.0 - p_hat) / n + c2 / (4.0 * n * n)) / denominator
    return max(center - half, 0.0), min(center + half, 1.0)


def wilson_bounds(y: F64, clusters: Any, level: float) -> tuple[float, float]:
    """Wilson's interval of the mean of values in [0, 1] (Korn–Graubard with clusters).

    Raises :class:`UndefinedMetricError` with no score, or fewer than 2 clusters.
    """
    tail = (1.0 - level) / 2.0
    if y.shape[0] == 0:
        raise UndefinedMetricError("CiWilson", "requires at least 1 score, got 0")
    n = float(y.shape[0])
    p_hat = float(y.sum()) / n
    if clusters is None:
        return _wilson(p_hat, n, -NormalDist().inv_cdf(tail))
    g = len(compute.factorize(clusters)[1])
    if g < 2:
        raise UndefinedMetricError("CiWilson", f"requires at least 2 clusters, got {g}")
    v = compute.clustered_stderr(y, clusters) ** 2
    if p_hat * (1.0 - p_hat) > 0.0 and v > 0.0:
        n = min(p_hat * (1.0 - p_hat) / v, n)
    critical = float(sps.t.ppf(min(1.0 - tail, math.nextafter(1.0, 0.0)), g - 1))
    return _wilson(p_hat, n, critical)


def record_key(m: Metric) -> Key:
    """A record's key among an evaluation's tallies: its type, reducer, score key and group."""
    return _record_key(m, WHERE)


def _units(y: F64, clusters: Any) -> tuple[F64, F64, Any, Any, float]:
    """Per unit (a sample, or a cluster) the sum of centred values and the size, collapsed
    to distinct rows (their multiplicities), each unit's row, the clusters' ids (None
    without), and the centre (a data value, so constant data resample exactly)."""
    levels = np.unique(y)
    centre = float(levels[levels.size // 2]) if levels.size else 0.0
    uniques = None
    if clusters is None:
        rows = np.column_stack([y - centre, np.ones_like(y)])
    else:
        codes, uniques = compute.factorize(clusters)
        sums = np.bincount(codes, weights=y - centre, minlength=len(uniques))
        rows = np.column_stack([sums, np.bincount(codes, minlength=len(uniques))])
    units, mult, unit = collapse(rows.astype(np.float64))
    return units, mult, unit, uniques, centre


def tally(y: F64, clusters: Any = None, key: Key = MEAN, ids: Any = None) -> Tally:
    """The tally of ``mean(y)`` keyed ``key``: its units (the samples, ``ids`` their ids, or
    with ``clusters`` the clusters, by id: a cluster's sum and size), the resampled mean ``w
    @ s / w @ c`` of values centred on a data value (``offset``), the jackknife (the totals
    minus each unit's sum and size) and the closed forms (t; Wilson for values in [0, 1]),
    which raise :class:`UndefinedMetricError` where undefined."""
    units, mult, unit, uniques, centre = _units(y, clusters)
    s, c = units[:, 0], units[:, 1]
    total_s, total_c = float(mult @ s), float(mult @ c)

    def values(w: F64) -> F64:
        return ((w @ s) / (w @ c))[:, None]

    def jackknife() -> F64:
        return ((total_s - s) / (total_c - c))[:, None]

    closed = {"t": lambda level: {key: t_bounds(y, clusters, level)}}
    if bool(((y >= 0.0) & (y <= 1.0)).all()):
        closed["wilson"] = lambda level: {key: wilson_bounds(y, clusters, level)}
    point = np.array([total_s / total_c]) if total_c else None
    found = ids if uniques is None else uniques
    return Tally(
        (key,),
        values,
        mult,
        unit=unit,
        ids=None if found is None else np.asarray(found, dtype=object),
        closed=closed,
        jackknife=jackknife,
        point=point,
        offset=centre,
    )


@dataclass(frozen=True)
class SampleCI:
    """The interval options of a stats evaluation and its cluster key (``None``: samples
    are independent); with a ``sink`` the records' tallies are collected there instead
    (:meth:`ScoreEvaluator.tally <assay.stats.evaluator.ScoreEvaluator.tally>`)."""

    opts: CIOptions
    cluster: str | None = None
    sink: list[Tally] | None = field(default=None, compare=False, repr=False)

    def config(self) -> dict[str, Any]:
        """As evaluator configuration (``ci``, ``ci_method``, ..., ``cluster``)."""
        return {**self.opts.config(), "cluster": self.cluster}

    def method_for(self, y: F64) -> str:
        """The method used on values ``y``: the one asked when it applies, else bootstrap."""
        m = self.opts.method
        if m in ("t", "bca") or (m == "wilson" and bool(((y >= 0.0) & (y <= 1.0)).all())):
            return m
        return "bootstrap"

    def attach(self, out: Metric, y: F64, clusters: Any = None, ids: Any = None) -> None:
        """Add the interval of ``mean(y)`` to the record ``out`` (``ids``: the samples'),
        or with a ``sink`` put its tally there (a record with fewer than 2 units has no
        bootstrap, and no tally)."""
        if self.sink is None:
            out.parameters.update(self.parameters(y, clusters))
            return
        y = np.asarray(y, dtype=np.float64)
        if (y.shape[0] if clusters is None else len(compute.factorize(clusters)[1])) >= 2:
            self.sink.append(tally(y, clusters, record_key(out), ids))

    def parameters(self, y: F64, clusters: Any = None) -> dict[str, Any]:
        """The record parameters of the interval of ``mean(y)`` (``ci_undefined`` with the
        reason when it cannot be computed)."""
        y = np.asarray(y, dtype=np.float64)
        method = self.method_for(y)
        try:
            if method in ("bootstrap", "bca"):
                n_units = y.shape[0] if clusters is None else len(compute.factorize(clusters)[1])
                if n_units < 2:
                    what = "scores" if clusters is None else "clusters"
                    raise UndefinedMetricError("ci", f"requires at least 2 {what}, got {n_units}")
            out = tally_intervals(tally(y, clusters), self.opts)[MEAN]
        except UndefinedMetricError as e:
            out = self.opts.parameters(None, None, method, e.reason)
        if self.cluster is not None:
            out["cluster"] = self.cluster
        return out
