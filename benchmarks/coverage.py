"""Coverage of assay's confidence intervals, by simulation with a known truth.

Each repetition draws a fresh data set from a population whose metric is known, computes a
nominal 95% interval through the public evaluator (``ci=0.95``), and counts whether it holds
the truth. A correct method covers in about 95% of repetitions (the binomial standard error
at 500 repetitions is about 1 point).

* accuracy (Wilson and bootstrap): 200 datums, a classifier right with probability 0.8;
* ROC AUC (DeLong and bootstrap): 150 datums, 40% positive, binormal scores with
  ``AUC = Phi(1 / sqrt 2)``; and the bootstrap at 20000 datums, where the resample counts
  are drawn by the ``poisson`` scheme (:mod:`assay.uncertainty.resampling`);
* mAP at IoU 0.5 (bootstrap over images): images with 2 ground truths each, a detection per
  ground truth hitting it with probability 0.7 (else displaced), and 1 false alarm per
  image, scores higher for hits; the truth is the mAP of one very large draw (20000 images);
* QWK (percentile bootstrap and BCa over responses): 300 responses, integer human scores
  1-5 (uniform), system = human + N(0, 0.8) rounded to 2 decimals. The truth is the closed
  form ``2 cov / (var_h + var_m + (mean diff)^2) = 2 * 2 / (2 + 2.64 + 1e-4 / 12)``
  = 0.862067 (the system score is the human score plus a rounded normal error: cov = var_h
  = 2, var_m = 2 + 0.64 + the rounding's 1e-4 / 12, no mean difference), printed beside the
  QWK of one very large draw (10**6 responses), which earlier runs used as the truth; the
  draw is off by its own sampling error (about 2e-4).

Usage: ``python benchmarks/coverage.py [--reps 500] [--num-bootstrap 1000] [--only NAME]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from scipy.stats import norm

LEVEL = 0.95


def _cover(p: dict) -> bool:
    return p["ci_low"] is not None and p["ci_low"] <= p["truth"] <= p["ci_high"]


def accuracy(rng: np.random.Generator, method: str, b: int, seed: int) -> bool:
    from assay.classification import ClassificationEvaluator

    n = 200
    y = rng.integers(0, 2, n)
    right = rng.random(n) < 0.8
    s = np.where(right == (y == 1), 0.9, 0.1)
    ev = ClassificationEvaluator(
        metrics=["Accuracy"], ci=LEVEL, ci_method=method, num_bootstrap=b, seed=seed
    )
    p = ev.add_arrays(np.where(y == 1, "p", "n"), s, labels=["n", "p"]).compute()[0].parameters
    return _cover({**p, "truth": 0.8})


def roc_auc(rng: np.random.Generator, method: str, b: int, seed: int, n: int = 150) -> bool:
    from assay.classification import ClassificationEvaluator

    y = rng.random(n) < 0.4
    s = 1 / (1 + np.exp(-rng.normal(y.astype(float), 1.0)))
    ev = ClassificationEvaluator(
        metrics=["ROCAUC"], ci=LEVEL, ci_method=method, num_bootstrap=b, seed=seed
    )
    ms = ev.add_arrays(np.where(y, "p", "n"), s, labels=["n", "p"]).compute()
    p = ms.get("ROCAUC", label_value="p").parameters
    return _cover({**p, "truth": float(norm.cdf(1 / np.sqrt(2)))})


def _images(rng: np.random.Generator, n: int) -> tuple[list[dict], list[dict]]:
    gts, pds = [], []
    for i in range(n):
        g, p = [], []
        for j in range(2):
            x, y = 40.0 * j + rng.uniform(0, 20), rng.uniform(0, 60)
            box = [x, y, x + 15, y + 15]
            g.append({"label": "obj", "box": box})
            hit = rng.random() < 0.7
            dx = rng.normal(0, 1) if hit else 30.0
            score = float(rng.beta(5, 2) if hit else rng.beta(2, 5))
            p.append({"label": "obj", "box": [x + dx, y, x + dx + 15, y + 15], "score": score})
        x, y = rng.uniform(0, 60, 2)
        fa = [float(x), float(y), float(x + 10), float(y + 10)]
        p.append({"label": "obj", "box": fa, "score": float(rng.beta(2, 5))})
        gts.append({"uid": f"i{i:05d}", "annotations": g})
        pds.append({"uid": f"i{i:05d}", "annotations": p})
    return gts, pds


def mean_ap(rng: np.random.Generator, truth: float, b: int, seed: int) -> bool:
    from assay.detection import evaluate_detection

    gts, pds = _images(rng, 60)
    ms = evaluate_detection(
        gts, pds, metrics=["mAP"], iou_thresholds=[0.5], ci=LEVEL, num_bootstrap=b, seed=seed
    )
    return _cover({**ms.get("mAP").parameters, "truth": truth})


def _scores(rng: np.random.Generator, n: int):  # noqa: ANN202
    import pandas as pd

    h = rng.integers(1, 6, n)
    return pd.DataFrame({"h": h, "m": np.round(h + rng.normal(0, 0.8, n), 2)})


def qwk(rng: np.random.Generator, method: str, truth: float, b: int, seed: int) -> bool:
    from assay.scoring import evaluate_scoring

    ms = evaluate_scoring(
        _scores(rng, 300),
        human="h",
        system="m",
        ci=LEVEL,
        ci_method=method,
        num_bootstrap=b,
        seed=seed,
    )
    return _cover({**ms.get("QWK", table="eval", score="m").parameters, "truth": truth})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--num-bootstrap", type=int, default=1000)
    ap.add_argument("--only")
    a = ap.parse_args()
    from assay.detection import evaluate_detection
    from assay.scoring import evaluate_scoring

    big = np.random.default_rng(12345)
    gts, pds = _images(big, 20000)
    map_truth = evaluate_detection(gts, pds, metrics=["mAP"], iou_thresholds=[0.5]).get("mAP")
    qwk_truth = evaluate_scoring(_scores(big, 10**6), human="h", system="m")
    qwk_draw = qwk_truth.get("QWK", table="eval", score="m").value
    qwk_value = 4 / (4.64 + 1e-4 / 12)
    cases: dict[str, Callable[[np.random.Generator, int, int], bool]] = {
        "accuracy wilson": lambda r, b, s: accuracy(r, "wilson", b, s),
        "accuracy bootstrap": lambda r, b, s: accuracy(r, "bootstrap", b, s),
        "ROC AUC delong": lambda r, b, s: roc_auc(r, "delong", b, s),
        "ROC AUC bootstrap": lambda r, b, s: roc_auc(r, "bootstrap", b, s),
        "ROC AUC bootstrap 20000": lambda r, b, s: roc_auc(r, "bootstrap", b, s, n=20000),
        "mAP bootstrap": lambda r, b, s: mean_ap(r, map_truth.value, b, s),
        "QWK bootstrap": lambda r, b, s: qwk(r, "bootstrap", qwk_value, b, s),
        "QWK bca": lambda r, b, s: qwk(r, "bca", qwk_value, b, s),
    }
    print(f"nominal {LEVEL:.0%}, {a.reps} repetitions, {a.num_bootstrap} resamples")
    print(f"QWK truth: {qwk_value:.6f} (closed form); a 10**6 draw gives {qwk_draw:.6f}")
    for name, case in cases.items():
        if a.only and a.only not in name:
            continue
        rng = np.random.default_rng(2026)
        t = time.process_time()
        hits = sum(case(rng, a.num_bootstrap, r) for r in range(a.reps))
        rate = hits / a.reps
        se = np.sqrt(rate * (1 - rate) / a.reps)
        cpu = time.process_time() - t
        print(f"{name:20s} coverage {rate:6.1%} (+- {se:.1%})   cpu {cpu:7.1f}s")


if __name__ == "__main__":
    main()
