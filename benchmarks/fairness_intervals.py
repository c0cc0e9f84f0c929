"""Cost of the fairness intervals: the point estimate against ``ci=0.95`` (1000 resamples).

One ``FairnessEvaluator`` with two privileged-group definitions (so the mean over
definitions gets its interval) and one group column of three groups, fed one batch of
``n`` rows from in-memory arrays; ``add`` and ``compute()`` are timed apart (CPU and wall,
best of ``--repeat``, in this process), for four settings: no weights; weights on a grid of
four values (few classes of interchangeable datums); continuous weights (every datum its
own class: the bootstrap draws and sums every datum per resample); and with ``--by`` a
slice column of four values (each slice's own interval and its gap's). The peak RSS of the
process is printed at the end.

Usage: ``python benchmarks/fairness_intervals.py [--sizes 1e5,1e6] [--repeat 2] [--by]``.
"""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any

import numpy as np

from assay.fairness import FairnessEvaluator


def _data(n: int, weights: str) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    groups = {
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(20, 60, n),
        "race": rng.choice(["a", "b", "c"], n),
        "site": rng.choice(["w", "x", "y", "z"], n),
    }
    w = {"none": None, "grid": rng.choice([0.5, 1.0, 2.0, 3.0], n)}.get(weights)
    if weights == "continuous":
        w = rng.uniform(0.1, 3.0, n)
    return {"y": y, "p": np.where(rng.random(n) < 0.8, y, 1 - y), "g": groups, "w": w}


def _time(d: dict[str, Any], repeat: int, **kw: Any) -> tuple[float, float, float, float]:
    best = (np.inf, np.inf, np.inf, np.inf)
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        ev = FairnessEvaluator(["sex=F", "age:40"], group_columns=["race"], **kw)
        ev.add_arrays(d["y"], d["p"], d["g"], sample_weight=d["w"])
        c1, w1 = time.process_time(), time.perf_counter()
        ev.compute()
        c2, w2 = time.process_time(), time.perf_counter()
        now = (c1 - c0, w1 - w0, c2 - c1, w2 - w1)
        best = tuple(min(a, b) for a, b in zip(best, now))  # type: ignore[assignment]
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--by", action="store_true", help="also time by=['site'] (4 slices)")
    args = ap.parse_args()
    print("rows      weights      setting     add cpu (wall)      compute cpu (wall)")
    for n in (int(float(s)) for s in args.sizes.split(",")):
        for weights in ("none", "grid", "continuous"):
            d = _data(n, weights)
            settings: list[tuple[str, dict[str, Any]]] = [("point", {}), ("ci", {"ci": 0.95})]
            if args.by:
                settings.append(("ci+by", {"ci": 0.95, "by": ["site"]}))
            for name, kw in settings:
                a, aw, c, cw = _time(d, args.repeat, **kw)
                times = f"{a:7.3f}s ({aw:6.3f}s)   {c:7.3f}s ({cw:6.3f}s)"
                print(f"{n:<9d} {weights:12s} {name:8s} {times}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
