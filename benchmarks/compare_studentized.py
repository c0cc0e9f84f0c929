"""The studentized paired bootstrap against the default normal interval with the bootstrap's
standard error, where the percentile interval covered least (docs/compare.md): accuracy (200
datums) and QWK (300 responses).

The same simulated pairs of runs as ``benchmarks/compare_coverage.py``
(:mod:`assay.testing.compare_sim`: the true difference known), 1000 resamples each, the
same resample counts for both intervals; the bootstrap-t studentizes each resample's
difference by its own jackknife standard error
(:func:`assay.compare.paired_bootstrap` with ``studentized=True``).

Usage: ``python benchmarks/compare_studentized.py [--reps 400]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from assay.compare import paired_bootstrap
from assay.testing import compare_sim as cs


def _pair(name: str, rng: np.random.Generator):  # noqa: ANN202
    if name == "qwk":
        n = 300
        h = rng.integers(1, 6, n).astype(float)
        shared = rng.normal(0, 0.4, n)
        sa, sb = (np.sqrt(s * s - 0.16) for s in cs._QWK_SD[False])
        ma, mb = h + shared + rng.normal(0, sa, n), h + shared + rng.normal(0, sb, n)
        return cs._qwk_tally(h, ma), cs._qwk_tally(h, mb), ("QWK",)
    from assay.classification import ClassificationEvaluator

    n = 200
    cell = rng.choice(4, n, p=cs._TABLE[False])
    y = rng.integers(0, 2, n)

    def run(right: np.ndarray):  # noqa: ANN202
        s = np.where(right == (y == 1), 0.9, 0.1)
        ev = ClassificationEvaluator(metrics=["Accuracy"], score_thresholds=[0.5])
        ev.add_arrays(np.where(y == 1, "p", "n"), s, labels=["n", "p"], uids=np.arange(n))
        return ev.tally()[0]

    ta, tb = run(np.isin(cell, (0, 1))), run(np.isin(cell, (0, 2)))
    return ta, tb, next(k for k in ta.keys if k[0] == "Accuracy")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=400)
    reps = ap.parse_args().reps
    print(f"{reps} repetitions, 1000 resamples, load {os.getloadavg()[0]:.1f}")
    for name in ("accuracy", "qwk"):
        t0, cover = time.process_time(), {"normal": 0, "studentized": 0}
        truth = cs.truth(name, False)
        for r in range(reps):
            ta, tb, key = _pair(name, np.random.default_rng(1000 + r))
            for how in cover:
                ci = paired_bootstrap(
                    ta, tb, num_bootstrap=1000, seed=r, studentized=how == "studentized"
                )[key].ci
                assert ci is not None
                cover[how] += bool(ci[0] <= truth <= ci[1])
        shown = ", ".join(f"{k} {100 * v / reps:.1f}%" for k, v in cover.items())
        print(f"{name}: {shown} ({time.process_time() - t0:.0f} s cpu)")


if __name__ == "__main__":
    main()
