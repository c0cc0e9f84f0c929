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

``--crossed`` adds a second group column (3 values) and a random weight per row (uniform
in 0.1..3): the groups are the combinations of the two columns (assay
``group_columns=[("g", "g2")]``, fairlearn ``sensitive_features=df[["g", "g2"]]``) and
every rate and aggregate is weighted (assay ``sample_weight=``, fairlearn
``sample_params`` and ``sample_weight=``).

Usage: ``python benchmarks/fairness.py [--sizes 1e5,1e6] [--groups 2,6] [--repeats 3]
[--crossed]`` (default: 1e5 rows, 2 and 6 groups, 3 repeats: a quick run).
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
Data = dict[str, np.ndarray]


def make_data(n: int, k: int, crossed: bool = False, seed: int = 0) -> Data:
    """Labels, predictions (right 75% of the time, a group-dependent bias) and groups; with
    ``crossed`` a second group column and a weight per row too."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, k, n)
    y = (rng.random(n) < 0.3 + 0.05 * codes).astype(np.int64)
    flip = rng.random(n) < 0.2 + 0.02 * codes
    yhat = np.where(flip, 1 - y, y)
    groups = np.array([f"g{i}" for i in range(k)])[codes]
    data = {"y": y, "p": yhat, "g": groups}
    if crossed:
        data["g2"] = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
        data["w"] = rng.uniform(0.1, 3.0, n)
    return data


def _group_key(group: object) -> str:
    return "|".join(group) if isinstance(group, (list, tuple)) else str(group)


# ---------------------------------------------------------------- the work, per tool


def assay_evaluator(d: Data) -> Results:
    from assay.fairness import FairnessEvaluator

    if "g2" in d:
        ev = FairnessEvaluator(group_columns=[("g", "g2")])
        ev.add_arrays(d["y"], d["p"], {"g": d["g"], "g2": d["g2"]}, sample_weight=d["w"])
    else:
        ev = FairnessEvaluator(group_columns=["g"]).add_arrays(d["y"], d["p"], {"g": d["g"]})
    out: Results = {}
    for m in ev.compute():
        if m.type in RATES and "group" in m.parameters:
            out[f"{m.type}/{_group_key(m.parameters['group'])}"] = m.value
        elif m.type in AGGREGATES:
            out[m.type] = m.value
    return out


def _fairlearn_args(d: Data) -> dict:
    """fairlearn's sensitive features (a frame of two columns when crossed) and weights."""
    import pandas as pd

    if "g2" not in d:
        return {"sensitive_features": d["g"]}
    return {
        "sensitive_features": pd.DataFrame({"g": d["g"], "g2": d["g2"]}),
        "sample_weight": d["w"],
    }


def fairlearn_metricframe(d: Data) -> Results:
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
    args = _fairlearn_args(d)
    weights = {"sample_weight": args.pop("sample_weight", None)}
    by_group = MetricFrame(
        metrics=metrics,
        y_true=d["y"],
        y_pred=d["p"],
        sample_params={name: weights for name in metrics},
        **args,
    ).by_group
    return {
        f"{name}/{_group_key(group)}": float(by_group.loc[group, name])
        for name in metrics
        for group in by_group.index
    }


def fairlearn_aggregates(d: Data) -> Results:
    from fairlearn import metrics as fm

    y, p, args = d["y"], d["p"], _fairlearn_args(d)
    return {
        "DemographicParityDifference": fm.demographic_parity_difference(y, p, **args),
        "DemographicParityRatio": fm.demographic_parity_ratio(y, p, **args),
        "EqualizedOddsDifference": fm.equalized_odds_difference(y, p, **args),
        "EqualizedOddsRatio": fm.equalized_odds_ratio(y, p, **args),
    }


# a tool: a list of named parts, timed one after the other (the tool's time is their sum)
TOOLS: dict[str, list[tuple[str, Callable[[Data], Results]]]] = {
    "assay evaluator": [("FairnessEvaluator", assay_evaluator)],
    "fairlearn": [("MetricFrame", fairlearn_metricframe), ("4 functions", fairlearn_aggregates)],
}


# ---------------------------------------------------------------- one measurement, in a child


def child(tool: str, data: str) -> None:
    """Warm up, load the data, run once; print times, peak RSS and the results as JSON."""
    with np.load(data) as z:
        d = {name: z[name] for name in z.files}
    for _, fn in TOOLS[tool]:
        fn({k: v[:2000] for k, v in d.items()})  # imports and first-call costs stay outside
    start_mb = _current_rss_mb()
    results: Results = {}
    parts: dict[str, float] = {}
    w0, c0 = time.perf_counter(), time.process_time()
    for name, fn in TOOLS[tool]:
        c1 = time.process_time()
        results.update(fn(d))
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


def run_case(n: int, k: int, repeats: int, crossed: bool = False) -> None:
    what = f"{k} x 3 crossed groups, weighted" if crossed else f"{k} groups"
    print(f"n={n:.0e} rows, {what} (best of {repeats} runs each, round robin)")
    runs: dict[str, list[dict]] = {t: [] for t in TOOLS}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.npz"
        np.savez(data, **make_data(n, k, crossed))
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
    ap.add_argument("--crossed", action="store_true", help="two group columns and weights")
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
            run_case(n, k, max(1, args.repeats), args.crossed)


if __name__ == "__main__":
    main()
