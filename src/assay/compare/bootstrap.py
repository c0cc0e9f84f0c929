"""The paired bootstrap of two runs' tallies: one set of resample weights for both.

Two runs of the same units (a datum, an image, a response, a question: the tallies' unit
``ids``) are paired by id (:func:`pair_units`). A resample draws the shared units (or their
clusters) once, with the engine's exact draws
(:func:`~assay.uncertainty.resampling.resample_counts`), and weighs each run's rows by the
draws of its units there: every record of either run is recomputed on the same resample,
so the difference of any two records (a ROC AUC, a mAP, a QWK, a corpus BLEU, a win rate)
has a bootstrap distribution that keeps the pairing. Units only one run has weigh nothing.

The interval is the normal one with the bootstrap's standard error, ``d +- z_{1-a/2} se``
(``se`` the resampled differences' standard deviation): for a ratio such as QWK the
percentile interval covered 92.2-93.8% in the simulation, this one 94.4% (2000 repetitions,
docs/compare.md).
The p-value is the
smallest two-sided level whose interval leaves out zero, ``min(1, 2 (min(#{d* < 0},
#{d* > 0}) + #{d* = 0} / 2 + 1) / (B + 1))`` over the ``B`` defined resamples (the ``+ 1``
counts the data among the resamples, so it is never 0).

Example:
    >>> def run(right, ids):  # accuracy over units, one row each
    ...     cells = np.array(right, dtype=float)[:, None]
    ...     return Tally(("Accuracy",), lambda w: w @ cells / w.sum(1, keepdims=True),
    ...                  np.ones(len(ids), np.int64), ids=np.array(ids))
    >>> a, b = run([1, 0, 1, 1, 0], list("pqrst")), run([1, 1, 1, 1], list("srqp"))
    >>> r = paired_bootstrap(a, b, num_bootstrap=200)["Accuracy"]
    >>> r.test, r.diff, r.n, pair_units(a, b).only_a
    ('paired_bootstrap', 0.25, 4, 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.compare.paired import Paired
from assay.errors import InvalidInputError
from assay.uncertainty.clusters import Clusters
from assay.uncertainty.resampling import resample_counts
from assay.uncertainty.tally import Key, Tally

__all__ = ["Pairing", "pair_units", "paired_bootstrap"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class Pairing:
    """The units two tallies share: each shared unit's entry in ``a`` and in ``b`` (in the
    order of ``a``), how many units it stands for, and the counts of units only one has."""

    a: NDArray[np.intp]
    b: NDArray[np.intp]
    weight: NDArray[np.int64]
    only_a: int
    only_b: int

    @property
    def n(self) -> int:
        """The number of paired units."""
        return int(self.weight.sum())


def _ids(t: Tally, name: str) -> NDArray[Any]:
    if t.ids is None:
        raise InvalidInputError("the tally has no unit ids to pair by", source=name, field="ids")
    ids = np.asarray(t.ids)
    if np.unique(ids).size != ids.size:
        raise InvalidInputError("unit ids are not unique", source=name, field="ids")
    return ids


def _weights(t: Tally) -> NDArray[np.int64]:
    n = t.unit_rows().size
    return np.ones(n, np.int64) if t.unit_weight is None else np.asarray(t.unit_weight, np.int64)


def pair_units(a: Tally, b: Tally) -> Pairing:
    """The units of ``a`` and ``b`` with equal ids (an entry standing for several units of
    equal statistics must stand for as many in both)."""
    ia, ib = _ids(a, "run A"), _ids(b, "run B")
    shared, at_a, at_b = np.intersect1d(ia, ib, assume_unique=True, return_indices=True)
    order = np.argsort(at_a, kind="stable")
    at_a, at_b = at_a[order].astype(np.intp), at_b[order].astype(np.intp)
    wa, wb = _weights(a), _weights(b)
    if not np.array_equal(wa[at_a], wb[at_b]):
        raise InvalidInputError(
            "a shared unit stands for different numbers of units in the two runs",
            source="run B",
            field="unit_weight",
        )
    return Pairing(
        at_a,
        at_b,
        wa[at_a],
        int(wa.sum() - wa[at_a].sum()),
        int(wb.sum() - wb[at_b].sum()),
    )


def _membership(t: Tally, entries: NDArray[np.intp], codes: NDArray[np.intp], w: F64) -> Clusters:
    return Clusters.of(t.unit_rows()[entries], codes, t.rows, w)


def paired_bootstrap(
    a: Tally,
    b: Tally,
    *,
    level: float = 0.95,
    num_bootstrap: int = 1000,
    seed: int = 0,
    clusters: NDArray[np.intp] | None = None,
    pairing: Pairing | None = None,
    studentized: bool = False,
) -> dict[Key, Paired]:
    """The paired bootstrap of every key both tallies have: ``diff`` is ``b``'s value minus
    ``a``'s on the shared units (see the module). ``clusters``: each shared unit's cluster
    code (``0 .. G-1``, in the pairing's order): whole clusters are drawn instead of units.
    ``studentized``: the interval is the bootstrap-t's (:func:`_studentized`) instead of the
    normal one (the p-value stays the percentile bootstrap's).
    """
    a, b = a.ready(), b.ready()
    p = pair_units(a, b) if pairing is None else pairing
    where = {k: j for j, k in enumerate(a.keys)}
    keys = [k for k in b.keys if k in where]
    if not keys or p.n == 0:
        return {}
    ja = np.array([where[k] for k in keys], dtype=np.intp)
    jb = np.array([b.keys.index(k) for k in keys], dtype=np.intp)
    if clusters is None:  # each shared entry drawn as often as the units it stands for
        codes = np.arange(p.a.size, dtype=np.intp)
        draw, inner = p.weight, np.ones(p.a.size)
    else:
        codes = np.unique(np.asarray(clusters), return_inverse=True)[1].astype(np.intp)
        draw, inner = np.ones(int(codes.max()) + 1, np.int64), p.weight.astype(np.float64)
    ma, mb = _membership(a, p.a, codes, inner), _membership(b, p.b, codes, inner)

    def diff(counts: F64) -> F64:
        with np.errstate(invalid="ignore", divide="ignore"):
            va = a.values(ma.weights(counts))[:, ja] + a.offset
            vb = b.values(mb.weights(counts))[:, jb] + b.offset
        return np.asarray(vb - va, dtype=np.float64)

    point = diff(draw.astype(np.float64)[None, :])[0]
    chunk = max(1, min(a.chunk, b.chunk))
    reps = np.concatenate(
        [diff(w) for w in resample_counts(draw, num_bootstrap, seed, chunk)], axis=0
    )
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    ci = _studentized(diff, draw, point, num_bootstrap, seed, chunk, level) if studentized else None
    out: dict[Key, Paired] = {}
    for j, k in enumerate(keys):
        r = reps[:, j][np.isfinite(reps[:, j])]
        if not np.isfinite(point[j]) or r.size == 0:
            out[k] = Paired("paired_bootstrap", float(point[j]), math.nan, math.nan, p.n)
            continue
        below, above = np.count_nonzero(r < 0), np.count_nonzero(r > 0)
        tail = min(below, above) + (r.size - below - above) / 2.0
        pv = min(1.0, 2.0 * (tail + 1.0) / (r.size + 1.0))
        se = float(r.std(ddof=1)) if r.size > 1 else math.nan
        d = float(point[j])
        lo, hi = (d - z * se, d + z * se) if ci is None else (float(ci[0, j]), float(ci[1, j]))
        out[k] = Paired("paired_bootstrap", d, se, pv, p.n, (lo, hi))
    return out


def _jackknife_se(diff: Callable[[F64], F64], counts: F64) -> F64:
    """The jackknife standard error (k,) of the differences at draw ``counts`` (m,): one
    draw of each drawn entry left out, ``sqrt((n - 1) / n sum_i c_i (d_(i) - dbar)^2)``."""
    drawn = np.flatnonzero(counts > 0)
    rows = np.repeat(counts[None, :], drawn.size, axis=0)
    rows[np.arange(drawn.size), drawn] -= 1.0
    d = diff(rows)
    c = counts[drawn][:, None]
    n = counts.sum()
    mean = (c * d).sum(axis=0) / n
    return np.asarray(np.sqrt((n - 1.0) / n * (c * (d - mean) ** 2).sum(axis=0)))


def _studentized(
    diff: Callable[[F64], F64],
    draw: NDArray[np.int64],
    point: F64,
    num_bootstrap: int,
    seed: int,
    chunk: int,
    level: float,
) -> F64:
    """The bootstrap-t interval (2, k) of the differences: each resample's difference
    studentized by its own jackknife standard error, ``t* = (d* - d) / se*``, and the
    interval ``[d - t*_(1 - a/2) se, d - t*_(a/2) se]`` with ``se`` the data's jackknife
    standard error (the same resample counts as the normal interval's)."""
    se = _jackknife_se(diff, draw.astype(np.float64))
    ts = []
    for w in resample_counts(draw, num_bootstrap, seed, chunk):
        for counts in w:
            with np.errstate(invalid="ignore", divide="ignore"):
                d = diff(counts[None, :])[0]
                ts.append((d - point) / _jackknife_se(diff, counts))
    t = np.asarray(ts)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        hi_t = np.nanquantile(t, 1.0 - tail, axis=0)
        lo_t = np.nanquantile(t, tail, axis=0)
    return np.vstack([point - hi_t * se, point - lo_t * se])
