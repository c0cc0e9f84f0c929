"""Fairness per-group benchmark: assay against fairlearn, each doing the same work.

Both tools compute the same results from the same in-memory numpy arrays (labels and
predictions 0/1, one text group per row; loaded from a ``.npz`` file before the clock
starts): per group the selection rate, true positive rate, false positive rate and
accuracy, and over the groups ``DemographicParityDifference``/``Ratio`` and
``EqualizedOddsDifference``/``Ratio`` (``method="between_groups"``, ``agg="worst_case"``).

* ``assay evaluator``: ``FairnessEvaluator(group_columns=["g"])``, ``add_arrays`` and
  ``compute`` (one pass gives every per-group record and the four aggregates);
* ``fairlearn``: ``MetricFrame(metrics={selection_rate, true_positive_rate,
  false_positive_rate, accuracy_score})`` and its ``by_group``, then the four functions
  ``demographic_parity_difference``, ``demographic_parity_ratio``,
  ``equalized_odds_difference``, ``equalized_odds_ratio``, called as a user calls them.
  Each of those functions builds a ``MetricFrame`` of its own (selection rate; or TPR and
  FPR), so fairlearn groups the data five times; its time is also shown split into the
  ``MetricFrame`` part and the four functions.

Each measurement runs in a fresh process, after a warm-up call on small data; the tools
run the same number of times, round robin, and the best CPU and wall times are kept, with
the peak RSS and how far it rose above the resident memory at the start (after imports,
warm-up and loading the data). Ratios use CPU time (the work is single-threaded and a
loaded machine moves CPU time far less than wall time). Before any figure is printed the
numbers of the timed runs are compared: every per-group rate and aggregate must agree to
1e-12, or the benchmark stops.

Usage: ``python benchmarks/fairness.py [--sizes 1e5,1e6] [--groups 2,6] [--repeats 3]``
(default: 1e5 rows, 2 and 6 groups, 3 repeats: a quick run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from assay.fairness.by_group import AGGREGATES, RATES
from classification import _current_rss_mb, _peak_rss_mb  # the same memory measure

TOL = 1e-12

Results = dict[str, float]


def make_data(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels, predictions (right 75% of the time, a group-dependent bias) and groups."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, k, n)
    y = (rng.random(n) < 0.3 + 0.05 * codes).astype(np.int64)
    flip = rng.random(n) < 0.2 + 0.02 * codes
    yhat = np.where(flip, 1 - y, y)
    groups = np.array([f"g{i}" for i in range(k)])[codes]
    return y, yhat, groups


# ---------------------------------------------------------------- the work, per tool


def assay_evaluator(y: np.ndarray, p: np.ndarray, g: np.ndarray) -> Results:
    from assay.fairness import FairnessEvaluator

    ms = FairnessEvaluator(group_columns=["g"]).add_arrays(y, p, {"g": g}).compute()
    out: Results = {}
    for m in ms:
        if m.type in RATES and m.parameters.get("group_column") == "g":
            out[f"{m.type}/{m.parameters['group']}"] = m.value
        elif m.type in AGGREGATES:
            out[m.type] = m.value
    return out


def fairlearn_metricframe(y: np.ndarray, p: np.ndarray, g: np.ndarray) -> Results:
    from fairlearn.metrics import (
        MetricFrame,
        false_positive_rate,
        selection_rate,
        true_positive_rate,
    )
    from sklearn.metrics import accuracy_score

    metrics = {
        "SelectionRate": selection_rate,
        "TruePositiveRate": true_positive_rate,
        "FalsePositiveRate": false_positive_rate,
        "Accuracy": accuracy_score,
    }
    by_group = MetricFrame(metrics=metrics, y_true=y, y_pred=p, sensitive_features=g).by_group
    return {
        f"{name}/{group}": float(by_group.loc[group, name])
        for name in metrics
        for group in by_group.index
    }


def fairlearn_aggregates(y: np.ndarray, p: np.ndarray, g: np.ndarray) -> Results:
    from fairlearn import metrics as fm

    return {
        "DemographicParityDifference": fm.demographic_parity_difference(y, p, sensitive_features=g),
        "DemographicParityRatio": fm.demographic_parity_ratio(y, p, sensitive_features=g),
        "EqualizedOddsDifference": fm.equalized_odds_difference(y, p, sensitive_features=g),
        "EqualizedOddsRatio": fm.equalized_odds_ratio(y, p, sensitive_features=g),
    }


# a tool: a list of named parts, timed one after the other (the tool's time is their sum)
TOOLS: dict[str, list[tuple[str, Callable[[np.ndarray, np.ndarray, np.ndarray], Results]]]] = {
    "assay evaluator": [("FairnessEvaluator", assay_evaluator)],
    "fairlearn": [("MetricFrame", fairlearn_metricframe), ("4 functions", fairlearn_aggregates)],
}


# ---------------------------------------------------------------- one measurement, in a child


def child(tool: str, data: str) -> None:
    """Warm up, load the data, run once; print times, peak RSS and the results as JSON."""
    with np.load(data) as z:
        y, p, g = z["y"], z["p"], z["g"]
    for _, fn in TOOLS[tool]:
        fn(y[:2000], p[:2000], g[:2000])  # imports and first-call costs stay outside
    start_mb = _current_rss_mb()
    results: Results = {}
    parts: dict[str, float] = {}
    w0, c0 = time.perf_counter(), time.process_time()
    for name, fn in TOOLS[tool]:
        c1 = time.process_time()
        results.update(fn(y, p, g))
        parts[name] = time.process_time() - c1
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    rss_mb = _peak_rss_mb()
    out = {"wall": wall, "cpu": cpu, "rss_mb": rss_mb, "extra_mb": max(0.0, rss_mb - start_mb)}
    print(json.dumps({**out, "parts": parts, "results": results}))


def measure(tool: str, data: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", tool, "--data", str(data)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), check=False)
    if r.returncode != 0:
        raise SystemExit(f"{tool} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def check_agreement(a: Results, b: Results) -> int:
    """Every result of both tools equal to 1e-12; returns how many were compared."""
    if set(a) != set(b):
        raise SystemExit(f"different results: {sorted(set(a) ^ set(b))}")
    for key in a:
        if not math.isclose(a[key], b[key], rel_tol=TOL, abs_tol=TOL):
            raise SystemExit(f"disagreement on {key}: assay {a[key]!r}, fairlearn {b[key]!r}")
    assert len(a) > 0
    return len(a)


def run_case(n: int, k: int, repeats: int) -> None:
    print(f"n={n:.0e} rows, {k} groups (best of {repeats} runs each, round robin)")
    runs: dict[str, list[dict]] = {t: [] for t in TOOLS}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.npz"
        y, p, g = make_data(n, k)
        np.savez(data, y=y, p=p, g=g)
        for _ in range(repeats):
            for tool in TOOLS:
                runs[tool].append(measure(tool, data))
    compared = 0
    for a, b in zip(runs["assay evaluator"], runs["fairlearn"]):
        compared += check_agreement(a["results"], b["results"])
    print(f"  agreement: {compared} numbers compared, all equal to {TOL:g}")
    best = {}
    for tool, rs in runs.items():
        best[tool] = {
            "cpu": min(r["cpu"] for r in rs),
            "wall": min(r["wall"] for r in rs),
            "rss_mb": max(r["rss_mb"] for r in rs),
            "extra_mb": max(r["extra_mb"] for r in rs),
        }
        parts = {name: min(r["parts"][name] for r in rs) for name in rs[0]["parts"]}
        split = "" if len(parts) < 2 else " (" + ", ".join(f"{k} {v:.3f}" for k, v in parts.items())
        res = best[tool]
        print(
            f"  {tool:<16} {res['cpu']:8.3f} s CPU {res['wall']:8.3f} s wall "
            f"{res['rss_mb']:6.0f} MB peak RSS ({res['extra_mb']:4.0f} MB above the start)"
            + (split + " s CPU)" if split else "")
        )
    ratio = best["fairlearn"]["cpu"] / best["assay evaluator"]["cpu"]
    print(f"  CPU time: fairlearn / assay evaluator = {ratio:.0f}x")


def _sizes(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5", help="rows, comma separated (default 1e5)")
    ap.add_argument("--groups", default="2,6", help="group counts, comma separated")
    ap.add_argument("--repeats", type=int, default=3, help="runs per tool (default 3)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.data)
        return
    import fairlearn

    import assay

    print(f"assay from {Path(assay.__file__).parent}; fairlearn {fairlearn.__version__}")
    print("per group: SelectionRate, TruePositiveRate, FalsePositiveRate, Accuracy;")
    print("over the groups: DemographicParity and EqualizedOdds Difference and Ratio")
    for n in _sizes(args.sizes):
        for k in _sizes(args.groups):
            run_case(n, k, max(1, args.repeats))


if __name__ == "__main__":
    main()
