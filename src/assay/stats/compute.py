"""Pure numpy score statistics: arrays in, numbers out.

Every function here is strict: where a statistic is not defined on the data it raises
:class:`~assay.errors.UndefinedMetricError` naming the missing condition (never a silent
0 or NaN). The formulas, for ``n`` values ``y_i`` with mean ``ȳ``:

* ``mean = Σ y_i / n``                                   requires n ≥ 1
* ``var  = Σ (y_i − ȳ)² / (n − 1)`` (sample variance)    requires n ≥ 2
* ``std  = √var``                                        requires n ≥ 2
* ``stderr = √(var / n)``                                requires n ≥ 2
* clustered ``stderr`` over ``G`` clusters (CR1, the Liang–Zeger sandwich for the mean
  with the Stata/statsmodels small-sample factor ``G/(G−1)``; for an intercept-only
  regression the ``(n−1)/(n−k)`` factor is 1)::

      stderr_cl = √( G/(G−1) · Σ_g (Σ_{i∈g} (y_i − ȳ))² ) / n        requires G ≥ 2

* ``bootstrap_stderr``: standard deviation (ddof = 1, Efron & Tibshirani's ``se_B``) of
  the means of ``B`` resamples of size ``n`` drawn with replacement.

Epoch reduction helpers work on rows already sorted by sample (``starts``/``counts`` give
each sample's run of rows), see :mod:`assay.stats.reducers`.

Example:
    >>> import numpy as np
    >>> y = np.array([1.0, 0.0, 1.0, 1.0])
    >>> round(stderr(y), 6), round(clustered_stderr(y, np.array([0, 0, 1, 1])), 6)
    (0.25, 0.25)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay._validation import as_1d, check_same_length
from assay.errors import InvalidInputError, UndefinedMetricError

__all__ = [
    "bootstrap_means",
    "bootstrap_stderr",
    "clustered_stderr",
    "factorize",
    "mean",
    "pass_at_k",
    "pass_hat_k",
    "std",
    "stderr",
    "var",
]


def _at_least(name: str, values: ArrayLike, n_min: int) -> NDArray[np.float64]:
    """``values`` as a 1-D float array (through the validation door); undefined when it
    has fewer than ``n_min`` values."""
    y = as_1d(np.ravel(values), source="values", dtype=np.float64)
    if y.shape[0] < n_min:
        raise UndefinedMetricError(
            name, f"requires at least {n_min} score{'s' if n_min > 1 else ''}, got {y.shape[0]}"
        )
    return y


def mean(values: np.ndarray) -> float:
    """Arithmetic mean ``Σ y / n`` (requires n ≥ 1).

    Example:
        >>> mean(np.array([1.0, 0.0, 0.5]))
        0.5
    """
    y = _at_least("Mean", values, 1)
    return float(y.mean())


def var(values: np.ndarray) -> float:
    """Sample variance ``Σ (y − ȳ)² / (n − 1)`` (requires n ≥ 2).

    Example:
        >>> var(np.array([1.0, 2.0, 3.0, 4.0]))
        1.6666666666666667
    """
    y = _at_least("Var", values, 2)
    return float(np.var(y, ddof=1))


def std(values: np.ndarray) -> float:
    """Sample standard deviation ``√var`` (requires n ≥ 2).

    Example:
        >>> std(np.array([2.0, 4.0]))
        1.4142135623730951
    """
    y = _at_least("Std", values, 2)
    return float(np.std(y, ddof=1))


def stderr(values: np.ndarray) -> float:
    """Standard error of the mean ``√(var / n)`` (requires n ≥ 2).

    Example:
        >>> stderr(np.array([1.0, 0.0, 1.0, 0.0]))
        0.28867513459481287
    """
    y = _at_least("Stderr", values, 2)
    return float(np.std(y, ddof=1) / np.sqrt(y.shape[0]))


def factorize(keys: Any) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes ``0..G-1`` (in order of first appearance) and the ``G`` distinct keys.

    Example:
        >>> codes, keys = factorize(np.array(["b", "a", "b"]))
        >>> codes.tolist(), keys.tolist()
        ([0, 1, 0], ['b', 'a'])
    """
    codes, uniques = pd.factorize(np.asarray(keys), use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), np.asarray(uniques)


def _int_keys(keys: Any) -> Any:
    """Keys that are all Python ints (read from objects) as int64: hashed several times
    faster; the codes are the same."""
    if isinstance(keys, np.ndarray) and keys.dtype == object and set(map(type, keys)) == {int}:
        return keys.astype(np.int64)
    return keys


def _cluster_codes(keys: Any) -> tuple[np.ndarray, int]:
    """Non-negative codes, equal exactly when the keys are, and the number of distinct keys.

    Integer keys spanning at most twice their count are offset from their minimum (codes may
    skip unused values; their sums are 0): no hash table, whose size follows n (pandas'
    ``factorize`` takes ~42 MB at 10^6 keys, this 8 MB). Other keys are factorised.
    """
    if isinstance(keys, np.ndarray) and keys.dtype.kind in "iu" and keys.ndim == 1 and keys.size:
        lo, hi = int(keys.min()), int(keys.max())
        if hi - lo < 2 * keys.size:
            codes = keys.astype(np.int64) - lo if lo else keys.astype(np.int64, copy=False)
            return codes, int(np.count_nonzero(np.bincount(codes)))
    codes, uniques = factorize(keys)
    return codes, len(uniques)


def clustered_stderr(values: np.ndarray, clusters: Any) -> float:
    """Cluster-robust standard error of the mean (CR1), see the module docstring.

    ``√(G/(G−1) · Σ_g e_g²) / n`` with ``e_g = Σ_{i∈g} (y_i − ȳ)``; equals statsmodels'
    ``OLS(y, 1).fit(cov_type="cluster")`` standard error of the intercept.

    Parameters
    ----------
    values
        ``(n,)`` scores.
    clusters
        ``(n,)`` cluster keys (any hashable values).

    Returns
    -------
    float

    Raises
    ------
    UndefinedMetricError
        Fewer than two clusters.
    InvalidInputError
        ``values`` and ``clusters`` differ in length.

    Examples
    --------
    >>> y, docs = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0]), np.array([1, 1, 2, 2, 3, 3])
    >>> round(clustered_stderr(y, docs), 6)
    0.288675
    """
    y = _at_least("Stderr", values, 1)
    codes, g = _cluster_codes(_int_keys(clusters))
    check_same_length(values=y, clusters=codes)
    if g < 2:
        raise UndefinedMetricError(
            "Stderr", f"clustered stderr requires at least 2 clusters, got {g}"
        )
    n = y.shape[0]
    resid = y - y.mean()
    e = np.bincount(codes, weights=resid)
    v = g / (g - 1) * float(np.dot(e, e)) / (n * n)
    return float(np.sqrt(v))


_CHUNK_ELEMENTS = 4_000_000  # draws per chunk: ~32 MB of float64 at a time


_BLOCK = 4096  # values per block in the index path (32 KB of float64: cache resident)


def bootstrap_means(values: np.ndarray, num_samples: int = 1000, seed: Any = None) -> np.ndarray:
    """Means of ``num_samples`` resamples (size n, with replacement) of ``values``.

    Vectorised and chunked (at most ~4e6 draws in memory at a time), deterministic for a
    given ``seed``, and exact (the same distribution as drawing n indices uniformly):

    * few distinct levels ``L`` (0/1 scores, C/I/P letters, ratings; ``10·L ≤ n``): a
      resample's mean depends only on how often each level is drawn, which is
      Multinomial(n, observed level frequencies); we draw those counts, ``O(B·L)``.
    * otherwise, a uniform draw over n values is a draw of a block of 4096 consecutive
      values (probability size/n; multinomial block counts) followed by a uniform draw
      inside the block, so the gathers stay cache-local.

    Example:
        >>> m = bootstrap_means(np.array([0.0, 1.0] * 50), num_samples=5, seed=1)
        >>> m.shape, bool(np.all((m >= 0) & (m <= 1)))
        ((5,), True)
    """
    y = _at_least("BootstrapStderr", values, 1)
    if num_samples < 2:
        raise InvalidInputError(
            f"must be at least 2, got {num_samples}", source="bootstrap_means", field="num_samples"
        )
    rng = np.random.default_rng(seed)
    levels, inverse = np.unique(y, return_inverse=True)
    n_levels = levels.shape[0]
    # work on values centred at a data value: constant data gives exactly zero spread
    centre = levels[n_levels // 2]
    out = _means(y - centre, levels - centre, inverse, n_levels, num_samples, rng)
    return out + centre


def _means(
    y: np.ndarray,
    levels: np.ndarray,
    inverse: np.ndarray,
    n_levels: int,
    num_samples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    n = y.shape[0]
    out = np.empty(num_samples, dtype=np.float64)
    if n_levels * 10 <= n:
        p = np.bincount(inverse, minlength=n_levels) / n
        rows = max(1, _CHUNK_ELEMENTS // n_levels)
        for start in range(0, num_samples, rows):
            stop = min(num_samples, start + rows)
            counts = rng.multinomial(n, p, size=stop - start)
            out[start:stop] = (counts @ levels) / n
        return out
    index_dtype = np.int32 if n < 2**31 - _BLOCK else np.int64
    rows = max(1, _CHUNK_ELEMENTS // n)
    if n <= 2 * _BLOCK:
        for start in range(0, num_samples, rows):
            stop = min(num_samples, start + rows)
            idx = rng.integers(0, n, size=(stop - start, n), dtype=index_dtype)
            out[start:stop] = y[idx].mean(axis=1)
        return out
    n_blocks = -(-n // _BLOCK)
    last = n - _BLOCK * (n_blocks - 1)
    sizes = np.full(n_blocks, _BLOCK, dtype=np.float64)
    sizes[-1] = last
    p = sizes / n
    offsets = (np.arange(n_blocks) * _BLOCK).astype(index_dtype)
    for start in range(0, num_samples, rows):
        r = min(num_samples, start + rows) - start
        counts = rng.multinomial(n, p, size=r)
        idx = np.repeat(np.tile(offsets, r), counts.ravel())
        idx += rng.integers(0, _BLOCK, size=r * n, dtype=np.uint16)
        if last != _BLOCK:  # draws in the short last block: uniform over its `last` values
            for j in range(r):
                k = int(counts[j, -1])
                if k:
                    idx[(j + 1) * n - k : (j + 1) * n] = offsets[-1] + rng.integers(0, last, size=k)
        out[start : start + r] = np.take(y, idx).reshape(r, n).mean(axis=1)
    return out


def bootstrap_stderr(values: np.ndarray, num_samples: int = 1000, seed: Any = None) -> float:
    """Bootstrap standard error of the mean: ``std(ddof=1)`` of :func:`bootstrap_means`.

    For large n it agrees with :func:`stderr` up to the factor ``√((n−1)/n)`` and
    Monte-Carlo error of relative size ``≈ 1/√(2B)``.

    Example:
        >>> y = np.random.default_rng(0).normal(size=10_000)
        >>> abs(bootstrap_stderr(y, 1000, seed=3) / stderr(y) - 1) < 0.1
        True
    """
    means = bootstrap_means(values, num_samples, seed)
    return float(np.std(means - means[0], ddof=1))  # shift-invariant; exact 0 when constant


# ---------------------------------------------------------------------- epochs
def _ratio_of_combinations(top: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """``C(top, k) / C(n, k)`` as ``Π_{j<k} (top − j) / (n − j)`` (0 where top < k)."""
    top = top.astype(np.float64)
    n = n.astype(np.float64)
    # exact integer products (one rounding) while they fit; a running product otherwise
    num = np.ones(top.shape[0], dtype=np.float64)
    den = np.ones(top.shape[0], dtype=np.float64)
    run = np.ones(top.shape[0], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j in range(k):
            num *= np.clip(top - j, 0.0, None)
            den *= n - j
            run *= np.clip(top - j, 0.0, None) / (n - j)
        exact = np.isfinite(den) & (den > 0) & (den < 2.0**53)
        return np.where(exact, num / den, run)


def pass_at_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass@k of Chen et al. 2021 (arXiv 2107.03374): ``1 − C(n−c, k) / C(n, k)``.

    ``n`` attempts per sample of which ``c`` are correct. Computed as the product
    ``1 − Π_{j<k} (n−c−j)/(n−j)``, which is exact in floating point up to rounding (no
    large binomials). Samples with ``n < k`` get NaN (the estimator needs k attempts).

    Example:
        >>> pass_at_k(np.array([5, 5, 3]), np.array([0, 2, 3]), 2).tolist()
        [0.0, 0.7, 1.0]
    """
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    out = 1.0 - _ratio_of_combinations(n - c, n, k)
    return np.where(n >= k, out, np.nan)


def pass_hat_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """pass^k of Yao et al. 2024 (τ-bench, arXiv 2406.12045): ``C(c, k) / C(n, k)``.

    The unbiased estimate of the probability that k attempts all succeed. Samples with
    ``n < k`` get NaN.

    Example:
        >>> pass_hat_k(np.array([5, 5, 3]), np.array([0, 4, 3]), 2).tolist()
        [0.0, 0.6, 1.0]
    """
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    out = _ratio_of_combinations(c, n, k)
    return np.where(n >= k, out, np.nan)
