"""Coverage of the paired intervals and type-I error of the paired tests, by simulation.

The scenarios are :mod:`assay.testing.compare_sim`'s (accuracy, ROC AUC, mAP, QWK, a judge
mean, a pairwise win rate). For each: ``--reps`` repetitions where the second run is better
by a known amount (does the nominal 95% interval of the difference cover it?) and ``--reps``
where both runs come from the same model with independent noise (does the test reject at
0.05?). A correct method covers in about 95% and rejects in about 5% of repetitions; the
binomial standard error at 500 repetitions is about 1 point for each. Repetition ``i`` of a
scenario uses ``default_rng([scenario, i, null])`` and bootstrap seed ``i``.

Usage: ``python benchmarks/compare_coverage.py [--reps 500] [--num-bootstrap 500]
[--only NAME]``. Prints a Markdown table (with the machine's load) for docs/compare.md.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from assay.testing.compare_sim import SCENARIOS, simulate, truth


def run(name: str, reps: int, b: int) -> dict[str, list[float]]:
    """Each test's coverage (NaN: no interval) and rejection rate over ``reps``
    repetitions of each kind."""
    idx = list(SCENARIOS).index(name)
    cover: dict[str, list[bool | None]] = {}
    reject: dict[str, list[bool | None]] = {}
    for i in range(reps):
        for null, into in ((False, cover), (True, reject)):
            out = simulate(name, np.random.default_rng([idx, i, int(null)]), b, seed=i, null=null)
            for test, (covered, p) in out.items():
                into.setdefault(test, []).append(covered if not null else bool(p < 0.05))
    return {t: [_share(cover[t]), _share(reject[t])] for t in cover}


def _share(hits: list) -> float:
    return float("nan") if None in hits else float(np.mean(hits))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--num-bootstrap", type=int, default=500)
    ap.add_argument("--only")
    a = ap.parse_args()
    names = [a.only] if a.only else list(SCENARIOS)
    print(f"{a.reps} repetitions of each kind, {a.num_bootstrap} resamples; nominal 95% / 0.05\n")
    print("| metric | test | true difference | coverage | type-I error | seconds | load |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        t0 = time.perf_counter()
        diff = truth(name, False)
        res = run(name, a.reps, a.num_bootstrap)
        secs = time.perf_counter() - t0
        load = os.getloadavg()[0]
        for test, (cov, rej) in res.items():
            print(
                f"| {name} | {test} | {diff:.4f} | {_pct(cov)} | {_pct(rej)} "
                f"| {secs:.0f} | {load:.1f} |",
                flush=True,
            )


def _pct(x: float) -> str:
    return "-" if np.isnan(x) else f"{100 * x:.1f}%"


if __name__ == "__main__":
    main()
