"""Coverage of the prediction-powered (PPI++) interval with a biased judge, by simulation.

Each repetition draws 100 items with a human label and a judge's score and 1000 more items
with the judge's score only, then computes three nominal 95% intervals of the human mean
and counts whether each holds the truth:

* ``judge only``: the normal interval of the judge's mean over all 1100 items (what a judged
  metric reports without human labels);
* ``labels only``: the normal interval of the 100 human labels' mean (PPI with lam = 0);
* ``PPI++``: :func:`assay.uncertainty.ppi.ppi_mean` (power-tuned lam);
* ``PPI++ clusters``: :func:`assay.uncertainty.ppi.ppi_cluster_interval`, the items in 220
  clusters of 5 drawn with a shared cluster effect (the cluster bootstrap over clusters).

Scenarios (the judge's mean off the truth by 0.1 in each):

* ``proportion``: human labels 1 with probability 0.6; the judge says 1 for 90% of the 1s and
  40% of the 0s (judge mean 0.7);
* ``mean``: human scores N(3, 1); the judge's score is 0.8 y + 0.7 + N(0, 0.5) (judge mean 3.1);
* ``clustered``: human scores u_c + N(3, 0.8) with a cluster effect u_c ~ N(0, 0.6); the judge
  as in ``mean``.

A correct interval covers in about 95% of repetitions (the binomial standard error at 500
repetitions is about 1 point).

Usage: ``python benchmarks/ppi_coverage.py [--reps 500] [--num-bootstrap 1000]``.
"""

from __future__ import annotations

import argparse
import os
import time
from statistics import NormalDist

import numpy as np

LEVEL, N_LABELED, N_UNLABELED = 0.95, 100, 1000
Z = NormalDist().inv_cdf(0.5 + LEVEL / 2)


def _normal(x: np.ndarray) -> tuple[float, float]:
    half = Z * x.std(ddof=1) / np.sqrt(x.size)
    return x.mean() - half, x.mean() + half


def proportion(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, None, float]:
    n = N_LABELED + N_UNLABELED
    y = (rng.random(n) < 0.6).astype(float)
    yhat = np.where(y == 1.0, rng.random(n) < 0.9, rng.random(n) < 0.4).astype(float)
    return y, yhat, None, 0.6


def mean(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, None, float]:
    y = rng.normal(3.0, 1.0, N_LABELED + N_UNLABELED)
    return y, 0.8 * y + 0.7 + rng.normal(0.0, 0.5, y.size), None, 3.0


def clustered(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    groups = (N_LABELED + N_UNLABELED) // 5
    codes = rng.permutation(np.repeat(np.arange(groups), 5))
    y = rng.normal(0.0, 0.6, groups)[codes] + rng.normal(3.0, 0.8, codes.size)
    return y, 0.8 * y + 0.7 + rng.normal(0.0, 0.5, y.size), codes, 3.0


def run(name: str, draw, reps: int, b: int) -> None:
    from assay.uncertainty.ppi import ppi_cluster_interval, ppi_mean

    hits = {"judge only": 0, "labels only": 0, "PPI++": 0}
    widths = {k: 0.0 for k in hits}
    rng = np.random.default_rng(20260)
    t0 = time.perf_counter()
    for rep in range(reps):
        y, yhat, codes, truth = draw(rng)
        lab, unl = slice(0, N_LABELED), slice(N_LABELED, None)
        intervals = {
            "judge only": _normal(yhat),
            "labels only": _normal(y[lab]),
        }
        if codes is None:
            e = ppi_mean(y[lab], yhat[lab], yhat[unl], level=LEVEL)
            intervals["PPI++"] = (e.ci_low, e.ci_high)
        else:
            e = ppi_cluster_interval(
                y[lab], yhat[lab], yhat[unl], codes[lab], codes[unl], LEVEL, b, seed=rep
            )
            intervals["PPI++"] = (e.ci_low, e.ci_high)
        for k, (lo, hi) in intervals.items():
            hits[k] += lo <= truth <= hi
            widths[k] += hi - lo
    secs = time.perf_counter() - t0
    print(f"{name} ({reps} repetitions, {secs:.1f} s, load {os.getloadavg()[0]:.2f})")
    for k in hits:
        label = "PPI++ clusters" if (k == "PPI++" and name == "clustered") else k
        print(f"  {label:15s} coverage {hits[k] / reps:6.1%}  mean width {widths[k] / reps:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--num-bootstrap", type=int, default=1000)
    args = ap.parse_args()
    for name, draw in (("proportion", proportion), ("mean", mean), ("clustered", clustered)):
        run(name, draw, args.reps, args.num_bootstrap)


if __name__ == "__main__":
    main()
