"""The mean of per-datum values as one record, with a seeded bootstrap interval.

Used wherever per-datum values are averaged into an aggregate record: the text metrics
(ROUGE, BLEU), the LLM judge metrics, and any LLM evaluation that reports a mean. The
record's value is the mean of the values that are defined (``None`` when none is), with
these parameters beside the configuration:

``aggregate``, ``num_bootstrap``, ``seed``
    ``"mean"``, and how the interval was drawn;
``stderr``
    the standard error of that mean, ``std(ddof=1) / √n`` (``None`` when n < 2);
``ci_low``, ``ci_high``, ``confidence_level``, ``ci_method``
    a seeded percentile-bootstrap 95% interval of the mean (``num_bootstrap`` resamples
    through :func:`assay.stats.bootstrap_means`, values ordered by datum uid first, so the
    interval does not depend on the order in which data arrived), in the spelling of every
    domain (docs/records.md);
``n``, ``n_errors``, ``n_undefined``
    the number of datums with a value, the number whose value could not be obtained (e.g.
    a judge call failed), and the number for which the metric is undefined.

``ci`` (a :class:`~assay.uncertainty.intervals.CIOptions`, from ``--ci``) sets the interval's
level and method: ``bootstrap`` (the seeded percentile bootstrap above, ``num_bootstrap`` and
``seed`` from ``ci``), ``t`` (``mean +- t_{n-1} stderr``; undefined below two values) or
``wilson`` (where the values are a proportion: every one 0 or 1, so the mean is k / n;
other values get the bootstrap, and ``ci_method`` says so).

**The tally** (:func:`mean_tally`, :mod:`assay.uncertainty`): the units are the datums (by
uid). Without a cluster its rows are the distinct defined values and the plain bootstrap is
the closed form ``bootstrap``: :func:`assay.stats.bootstrap_means`' seeded draws, the
records' since they first carried an interval (where the values have few levels,
``10 L <= n``, those draws are exactly the engine's multinomial counts over the levels);
``t`` and ``wilson`` are closed forms too. With a cluster every datum is a unit (one
without a value is drawn with its cluster and counts in no mean): the engine's cluster
bootstrap of ``sum w y / sum w`` over the rows of (value, has a value, cluster). A slice's
gap (:func:`mean_gap_intervals`) is read from the whole set's draws over the rows of
(value, has a value, slice).

Example:
    >>> r = mean_record("BLEU", [0.5, 0.25, 1.0], ["a", "b", "c"], {"weights": [1.0]}, errors=1)
    >>> r.value, r.parameters["n"], r.parameters["n_errors"], r.parameters["aggregate"]
    (0.5833333333333334, 3, 1, 'mean')
    >>> datum_record("Bias", "d1", None, reason="no opinions").parameters
    {'datum_uid': 'd1', 'undefined': 'no opinions'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.errors import UndefinedMetricError
from assay.results import Metric

if TYPE_CHECKING:
    from assay.uncertainty.intervals import CIOptions
    from assay.uncertainty.tally import Key, Tally

__all__ = [
    "mean_record",
    "mean_tally",
    "mean_unit_values",
    "datum_record",
    "mean_gap_intervals",
    "NUM_BOOTSTRAP",
]

NUM_BOOTSTRAP = 1000


def datum_record(
    type: str, uid: str, value: float | None, *, reason: str | None = None, **parameters: Any
) -> Metric:
    """One datum's value of any text metric; ``None`` with ``reason`` when undefined."""
    params: dict[str, Any] = {"datum_uid": uid, **parameters}
    if value is None:
        params["undefined"] = reason or "undefined"
        return Metric(type, None, params)
    return Metric(type, float(value), params)


def mean_record(
    type: str,
    values: Sequence[float] | np.ndarray,
    uids: Sequence[str] | np.ndarray,
    parameters: Mapping[str, Any],
    *,
    errors: int = 0,
    undefined: int = 0,
    num_bootstrap: int = NUM_BOOTSTRAP,
    seed: int = 0,
    ci: CIOptions | None = None,
    clusters: tuple[Any, Any] | None = None,
) -> Metric:
    """The aggregate record of one metric's per-datum values (see the module docstring).

    ``clusters`` (with ``ci.cluster``): the cluster of each value and of each datum
    without one; the interval is then the cluster bootstrap (:func:`mean_tally`).
    """
    from assay.stats.compute import bootstrap_means
    from assay.stats.metrics import mean, stderr

    y = np.asarray(values, dtype=np.float64)
    order = np.argsort(np.asarray(uids, dtype=str), kind="stable")
    y = y[order]
    if clusters is not None:
        clusters = (np.asarray(clusters[0], dtype=str)[order], clusters[1])
    if ci is not None:
        return _with_interval(type, y, parameters, ci, errors, undefined, clusters)
    params = {
        **parameters,
        "aggregate": "mean",
        "confidence_level": 0.95,
        "ci_method": "bootstrap",
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


def _with_interval(
    type: str,
    y: np.ndarray,
    parameters: Mapping[str, Any],
    ci: CIOptions,
    errors: int,
    undefined: int,
    clusters: tuple[Any, Any] | None = None,
) -> Metric:
    """:func:`mean_record` with the interval ``ci`` asks for (``y`` in uid order; the
    cluster bootstrap with ``ci.cluster`` and ``clusters``)."""
    from assay.uncertainty.intervals import tally_intervals

    n = int(y.size)
    counts = {"n": n, "n_errors": int(errors), "n_undefined": int(undefined)}
    head = {**parameters, "aggregate": "mean"}
    if n == 0:
        lost = ci.parameters(None, None, undefined="no datum has a value")
        return Metric(type, None, {**head, **lost, "stderr": None, **counts,
                                   "undefined": "no datum has a value"})  # fmt: skip
    from assay.stats.metrics import mean, stderr

    value = float(mean()(y))  # the same value and stderr as without ci
    try:
        se: float | None = float(stderr()(y))
    except UndefinedMetricError:
        se = None
    method = ci.method if ci.cluster is None else "bootstrap"
    if method not in ("t", "wilson") or (method == "wilson" and not np.isin(y, (0.0, 1.0)).all()):
        method = "bootstrap"  # not a proportion, or a method a mean does not have
    if method == "t" and se is None:
        interval = ci.parameters(None, None, "t", undefined="needs two values")
    else:
        y_all, codes = y, None
        if ci.cluster is not None:
            assert clusters is not None, "the cluster bootstrap needs each value's cluster"
            mine, rest = np.asarray(clusters[0], str), np.asarray(clusters[1], str)
            y_all = np.concatenate([y, np.full(rest.size, np.nan)])
            codes = np.unique(np.concatenate([mine, rest]), return_inverse=True)[1].reshape(-1)
        tally = mean_tally((type,), y_all, codes, ci.num_bootstrap, ci.seed)
        interval = tally_intervals(tally, replace(ci, method=method))[(type,)]
    return Metric(type, value, {**head, **interval, "stderr": se, **counts})


def mean_unit_values(uids: np.ndarray, y: np.ndarray) -> tuple[str, Any, Any, None] | None:
    """A mean's per-unit values for the paired t test of two runs (``unit_values`` of an
    evaluator, :mod:`assay.compare.runs`): the defined values by uid, or None without any or
    when a uid repeats.

    Example:
        >>> mean_unit_values(np.array(["a", "b", "c"]), np.array([1.0, np.nan, 0.0]))[1:3]
        (array(['a', 'c'], dtype='<U1'), array([1., 0.]))
    """
    has = ~np.isnan(np.asarray(y, dtype=np.float64))
    ids = np.asarray(uids)[has]
    if not has.any() or np.unique(ids).size != ids.size:
        return None
    return "paired_t", ids, np.asarray(y, dtype=np.float64)[has], None


def mean_tally(
    key: Key,
    y: np.ndarray,
    codes: np.ndarray | None = None,
    num_bootstrap: int = NUM_BOOTSTRAP,
    seed: int = 0,
    ids: np.ndarray | None = None,
) -> Tally:
    """The tally of the mean of the defined values of ``y`` (NaN: a datum without a value),
    keyed ``key`` (see the module docstring): over the defined values, or with ``codes``
    (each datum's cluster, ``0 .. G-1``) over every datum; ``ids``: the datums' uids
    (default their positions).
    """
    from assay.stats.compute import bootstrap_means
    from assay.stats.metrics import mean as mean_of
    from assay.stats.metrics import stderr
    from assay.uncertainty.closed_form import t_interval, wilson
    from assay.uncertainty.collapsing import collapse
    from assay.uncertainty.tally import Tally

    y = np.asarray(y, dtype=np.float64)
    names = np.arange(y.size) if ids is None else np.asarray(ids)
    has = ~np.isnan(y)
    if codes is not None:
        g = np.asarray(codes, dtype=np.intp)
        rows, mult, unit = collapse(np.column_stack([np.where(has, y, 0.0), has, g]))
        v, d, row_g = rows[:, 0], rows[:, 1], rows[:, 2].astype(np.intp)
        first = np.zeros(mult.size, dtype=np.intp)  # a datum of each row (rows of equals)
        first[unit[::-1]] = np.arange(unit.size)[::-1]

        def clustered(w: np.ndarray) -> np.ndarray:
            return np.asarray((w * d) @ v / (w @ d))[:, None]

        return Tally(
            (key,), clustered, mult, unit_weight=mult, ids=names[first],
            codes=lambda column: row_g,
        )  # fmt: skip
    x = y[has]
    n, total = x.size, float(x.sum())

    def seeded(level: float) -> dict[Key, tuple[float, float]]:
        tail = (1.0 - level) / 2.0
        lo, hi = np.quantile(bootstrap_means(x, num_bootstrap, seed), [tail, 1.0 - tail])
        return {key: (float(lo), float(hi))}

    def by_t(level: float) -> dict[Key, tuple[float, float]]:
        lo, hi = t_interval(float(mean_of()(x)), float(stderr()(x)), n - 1, level)
        return {key: (float(lo), float(hi))}

    def by_wilson(level: float) -> dict[Key, tuple[float, float]]:
        lo, hi = wilson(total, n, level)
        return {key: (float(lo), float(hi))}

    closed = {"bootstrap": seeded, "t": by_t, "wilson": by_wilson}

    def rows() -> Tally:
        """The distinct values and how many datums hold each (made when drawn)."""
        levels, unit, counts = np.unique(x, return_inverse=True, return_counts=True)

        def mean(w: np.ndarray) -> np.ndarray:
            return (w @ levels / w.sum(axis=1))[:, None]

        return Tally((key,), mean, counts.astype(np.int64), unit=unit.reshape(-1),
                     ids=names[has], closed=closed)  # fmt: skip

    return Tally((key,), closed=closed, prepare=rows)


def mean_gap_intervals(
    y: np.ndarray,
    slices: np.ndarray,
    names: Sequence[str],
    opts: CIOptions,
    clusters: np.ndarray | None = None,
) -> dict[str, tuple[float, float]]:
    """``{slice: (low, high)}``: bootstrap intervals of each slice's mean minus the whole
    set's, from one joint bootstrap over all items (``y`` NaN where an item has no value:
    it is drawn, and counts in no mean); with ``clusters`` (each item's), over whole
    clusters.

    Example:
        >>> y = np.array([1.0, 0.0, 1.0, np.nan, 0.5, 0.0])
        >>> s = np.array(["a", "a", "b", "b", "b", ""])
        >>> from assay.uncertainty.intervals import CIOptions
        >>> cis = mean_gap_intervals(y, s, ["a", "b"], CIOptions(0.9, num_bootstrap=50))
        >>> sorted(cis), all(lo <= hi for lo, hi in cis.values())
        (['a', 'b'], True)
    """
    from assay.uncertainty.collapsing import collapse
    from assay.uncertainty.intervals import gap_bounds
    from assay.uncertainty.tally import Tally

    has = ~np.isnan(y)
    vals = np.where(has, y, 0.0)
    codes = np.unique(slices, return_inverse=True)
    groups = None
    if clusters is not None:
        groups = np.unique(np.asarray(clusters, str), return_inverse=True)[1].reshape(-1)
    table = [vals, has, codes[1].reshape(-1), *([] if groups is None else [groups])]
    rows, mult, unit = collapse(np.column_stack(table))
    v, d = rows[:, 0], rows[:, 1]
    g = None if groups is None else rows[:, 3].astype(np.intp)

    member = [codes[0][rows[:, 2].astype(np.int64)] == s for s in names]

    def gaps(w: np.ndarray) -> np.ndarray:
        wd = w * d
        whole = (wd @ v) / wd.sum(axis=1)
        return np.stack([(wd * m) @ v / (wd * m).sum(axis=1) - whole for m in member], 1)

    with_codes = None if g is None else (lambda column: g)
    keys = tuple((s,) for s in names)
    tally = Tally(keys, gaps, mult, unit_weight=None if g is None else mult, codes=with_codes)
    return {s: lohi for (s,), lohi in gap_bounds([tally], opts).items()}
