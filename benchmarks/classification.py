"""Classification benchmark: assay vs scikit-learn and valor-lite on the same generated data.

Prints wall time, peak traced memory (numpy allocations, via tracemalloc) and ratios:

* binary 1e6 and 1e7 scores: ROC AUC + PR curve + counts, against one ``np.argsort`` of the
  scores (the floor), scikit-learn and (at 2e4, it is far slower) valor-lite;
* 1e6 datums x 10 classes: the full evaluator (counts, P/R/F1, accuracy, ROC AUC, PR curves,
  detailed PR curves with examples) against scikit-learn's per-class calls.

Usage: ``python benchmarks/classification.py [--quick]``
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from assay.classification import ClassificationEvaluator, pr_curve_counts, roc_auc_score
from assay.classification.compute import DEFAULT_PR_CURVE_THRESHOLDS


def measure(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, float]:
    """Best wall time over ``repeat`` untraced runs (s), then peak traced memory of one more run (MB).

    Timing and memory are separate runs because tracing slows Python-object-heavy code.
    """
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return best, peak


def binary_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1).round(4)  # ties, as real model outputs have
    return y, s


def assay_binary(y: np.ndarray, s: np.ndarray) -> None:
    roc_auc_score(y, s)
    pr_curve_counts(y, s, DEFAULT_PR_CURVE_THRESHOLDS)


def sklearn_binary(y: np.ndarray, s: np.ndarray) -> None:
    from sklearn.metrics import confusion_matrix, precision_recall_curve
    from sklearn.metrics import roc_auc_score as sk_auc

    sk_auc(y, s)
    precision_recall_curve(y, s)
    confusion_matrix(y, s >= 0.5)


def valor_eval(y: np.ndarray, p: np.ndarray, labels: list[str]) -> None:
    from valor_lite.classification import Classification, Loader

    loader = Loader.in_memory()
    loader.add_data(
        [
            Classification(
                uid=str(i), groundtruth=labels[y[i]], predictions=labels, scores=p[i].tolist()
            )
            for i in range(len(y))
        ]
    )
    ev = loader.finalize()
    ev.compute_rocauc()
    ev.compute_precision_recall(score_thresholds=list(DEFAULT_PR_CURVE_THRESHOLDS))


def multiclass_data(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 1.5
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    return y, p


def row(name: str, t: float, mem: float) -> None:
    print(f"  {name:<34} {t:8.3f} s  {mem:9.1f} MB peak")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (for a smoke run)")
    args = ap.parse_args()
    sizes = [10**5, 10**6] if args.quick else [10**6, 10**7]
    sklearn_binary(*binary_data(1000))  # import and warm scikit-learn outside the timings

    for n in sizes:
        y, s = binary_data(n)
        print(f"binary, n={n:.0e}: ROC AUC + PR curve (19 thresholds) + counts")
        t_floor, m_floor = measure(lambda: np.argsort(s), repeat=2)
        t_assay, m_assay = measure(lambda: assay_binary(y, s), repeat=2)
        t_sk, m_sk = measure(lambda: sklearn_binary(y, s))
        row("np.argsort (floor)", t_floor, m_floor)
        row("assay", t_assay, m_assay)
        row("scikit-learn", t_sk, m_sk)
        print(
            f"  assay / argsort = {t_assay / t_floor:.2f}   scikit-learn / assay = {t_sk / t_assay:.2f}"
        )
        ev_t, ev_m = measure(
            lambda: (
                ClassificationEvaluator(metrics=["Counts", "ROCAUC", "PrecisionRecallCurve"])
                .add_arrays(y.astype(int), s, labels=[0, 1])
                .compute()
            )
        )
        row("assay evaluator (both labels)", ev_t, ev_m)

    n_v = 2 * 10**4  # valor-lite's Python loader is slow; larger sizes take minutes
    y, s = binary_data(n_v)
    print(f"binary, n={n_v:.0e}: valor-lite (in-memory loader + ROC AUC + PR at 19 thresholds)")
    t_a, m_a = measure(
        lambda: (
            ClassificationEvaluator(metrics=["Counts", "ROCAUC", "PrecisionRecallCurve"])
            .add_arrays(y.astype(int), s, labels=[0, 1])
            .compute()
        )
    )
    t_v, m_v = measure(lambda: valor_eval(y.astype(int), np.stack([1 - s, s], 1), ["0", "1"]))
    row("assay evaluator", t_a, m_a)
    row("valor-lite", t_v, m_v)
    print(f"  valor-lite / assay = {t_v / t_a:.1f}")

    n, k = (10**5, 10) if args.quick else (10**6, 10)
    y, p = multiclass_data(n, k)
    labels = [f"c{j}" for j in range(k)]
    print(f"multiclass, n={n:.0e} x {k} classes")

    def assay_all() -> None:
        ClassificationEvaluator(pr_curve_max_examples=5).add_arrays(
            np.asarray(labels)[y], p, labels=labels
        ).compute()

    def sklearn_all() -> None:
        from sklearn.metrics import (
            confusion_matrix,
            precision_recall_curve,
            precision_recall_fscore_support,
        )
        from sklearn.metrics import (
            roc_auc_score as sk_auc,
        )

        pred = p.argmax(axis=1)
        precision_recall_fscore_support(y, pred, zero_division=0)
        confusion_matrix(y, pred)
        for j in range(k):
            sk_auc(y == j, p[:, j])
            precision_recall_curve(y == j, p[:, j])

    t_a, m_a = measure(assay_all)
    t_s, m_s = measure(sklearn_all)
    row("assay (all metrics + detailed)", t_a, m_a)
    row("scikit-learn (per-class calls)", t_s, m_s)
    print(f"  scikit-learn / assay = {t_s / t_a:.2f}")
    n_v = 5 * 10**3
    t_a2, _ = measure(
        lambda: (
            ClassificationEvaluator(metrics=["Counts", "ROCAUC", "PrecisionRecallCurve"])
            .add_arrays(np.asarray(labels)[y[:n_v]], p[:n_v], labels=labels)
            .compute()
        )
    )
    t_v, _ = measure(lambda: valor_eval(y[:n_v], p[:n_v], labels))
    print(
        f"multiclass, n={n_v:.0e} x {k}: assay {t_a2:.3f} s, valor-lite {t_v:.3f} s, valor-lite / assay = {t_v / t_a2:.1f}"
    )


if __name__ == "__main__":
    main()
