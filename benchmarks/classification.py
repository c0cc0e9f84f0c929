"""Classification benchmark: assay against scikit-learn, torchmetrics and valor-lite, each
doing the same work.

Every tool computes the same metric set from the same in-memory numpy arrays (loaded from a
``.npy`` file before the clock starts): ROC AUC, precision, recall, F1, accuracy and the
confusion counts at one threshold (binary: a score ``>= 0.5`` is a positive prediction;
multiclass: the top-scoring class, and one-vs-rest ROC AUC per class). Each measurement runs
in a fresh process, after a warm-up call on small data; every tool runs the same number of
times, round robin, and the best CPU and wall times are kept, with the process's peak RSS
and how far that peak rose above the resident memory at the start (after imports, warm-up
and loading the data: the memory the work itself needed). Ratios use CPU time: on a shared,
loaded machine it moves far less than wall time (the work is single-threaded).

* ``assay functional``: ``roc_auc_score`` + ``precision_score`` / ``recall_score`` /
  ``f1_score`` / ``accuracy_score`` / ``confusion_counts`` on the thresholded predictions;
* ``assay evaluator``: ``ClassificationEvaluator(metrics=[Counts, Precision, Recall, F1,
  Accuracy, ROCAUC])`` with ``add_arrays`` and ``compute`` (it reports every label, so it
  does at least the peers' work);
* ``scikit-learn``: the functions of the same names and ``confusion_matrix``;
* ``torchmetrics functional`` / ``stateful``: ``binary_auroc`` ... ``binary_confusion_matrix``
  (multiclass: the ``multiclass_*`` forms), or the metric classes in a ``MetricCollection``
  with ``update`` and ``compute``; one torch thread, as numpy and scikit-learn use one core;
* ``np.argsort``: one sort of the scores, the floor of any exact ROC AUC.

``--only confusion``: ``ConfusionMatrixWithExamples`` at score threshold 0.5 over 10 classes
(every example kept, as valor-lite does; and at most 10 per cell), from arrays for assay and
from ``Classification`` objects for valor-lite (its loading is part of its time), at 1e4 and
1e5 datums beside valor-lite and at 1e6 for assay alone: the largest size valor-lite survives
is 1e4 (at 1e5 it asks for a 33.8 GiB datum x datum array).

torchmetrics (and torch) are optional: install them only for this benchmark
(``pip install torch torchmetrics``); assay never depends on them.

Usage: ``python benchmarks/classification.py [--quick] [--no-valor] [--only KIND]``
(KIND: binary, multiclass, valor, confusion)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

THRESHOLD = 0.5
CLASSES = 10


# ---------------------------------------------------------------- data


def binary_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.int64)
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1).round(4)  # ties, as real outputs have
    return y, s


def multiclass_data(n: int, k: int = CLASSES, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 1.5
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    return y, p


# ---------------------------------------------------------------- the work, per tool


def assay_functional(y: np.ndarray, s: np.ndarray) -> None:
    from assay.classification import (
        accuracy_score,
        confusion_counts,
        f1_score,
        precision_score,
        recall_score,
        roc_auc_score,
    )

    if s.ndim == 1:
        roc_auc_score(y, s)
        pred = (s >= THRESHOLD).astype(np.int64)
        precision_score(y, pred)
        recall_score(y, pred)
        f1_score(y, pred)
    else:
        pred = s.argmax(axis=1)
        for j in range(s.shape[1]):
            roc_auc_score(y == j, s[:, j])
            precision_score(y, pred, zero_division=0.0, **{_label_kw(): j})
            recall_score(y, pred, zero_division=0.0, **{_label_kw(): j})
            f1_score(y, pred, zero_division=0.0, **{_label_kw(): j})
    accuracy_score(y, pred)
    confusion_counts(y, pred)


def _label_kw() -> str:
    import inspect

    from assay.classification import precision_score

    params = inspect.signature(precision_score).parameters
    return "positive_label" if "positive_label" in params else "pos_label"


def assay_evaluator(y: np.ndarray, s: np.ndarray) -> None:
    from assay.classification import ClassificationEvaluator

    metrics = ["Counts", "Precision", "Recall", "F1", "Accuracy", "ROCAUC"]
    k = 2 if s.ndim == 1 else s.shape[1]
    ClassificationEvaluator(score_thresholds=[0.0], metrics=metrics).add_arrays(
        y, s, labels=list(range(k))
    ).compute()


def sklearn_functional(y: np.ndarray, s: np.ndarray) -> None:
    from sklearn import metrics as skm

    if s.ndim == 1:
        skm.roc_auc_score(y, s)
        pred = (s >= THRESHOLD).astype(np.int64)
        skm.precision_score(y, pred)
        skm.recall_score(y, pred)
        skm.f1_score(y, pred)
    else:
        skm.roc_auc_score(y, s, multi_class="ovr", average=None)
        pred = s.argmax(axis=1)
        skm.precision_recall_fscore_support(y, pred, average=None, zero_division=0.0)
    skm.accuracy_score(y, pred)
    skm.confusion_matrix(y, pred)


def torch_functional(y: np.ndarray, s: np.ndarray) -> None:
    import torch
    from torchmetrics.functional import classification as tmf

    t, p = torch.from_numpy(y), torch.from_numpy(s)
    if s.ndim == 1:
        for fn in (
            tmf.binary_auroc,
            tmf.binary_precision,
            tmf.binary_recall,
            tmf.binary_f1_score,
            tmf.binary_accuracy,
            tmf.binary_confusion_matrix,
        ):
            fn(p, t) if fn is tmf.binary_auroc else fn(p, t, threshold=THRESHOLD)
        return
    k = s.shape[1]
    tmf.multiclass_auroc(p, t, num_classes=k, average=None)
    for fn in (tmf.multiclass_precision, tmf.multiclass_recall, tmf.multiclass_f1_score):
        fn(p, t, num_classes=k, average=None)
    tmf.multiclass_accuracy(p, t, num_classes=k, average="micro")
    tmf.multiclass_confusion_matrix(p, t, num_classes=k)


def torch_stateful(y: np.ndarray, s: np.ndarray) -> None:
    import torch
    from torchmetrics import MetricCollection
    from torchmetrics import classification as tmc

    t, p = torch.from_numpy(y), torch.from_numpy(s)
    if s.ndim == 1:
        ms = MetricCollection(
            [
                tmc.BinaryAUROC(),
                tmc.BinaryPrecision(threshold=THRESHOLD),
                tmc.BinaryRecall(threshold=THRESHOLD),
                tmc.BinaryF1Score(threshold=THRESHOLD),
                tmc.BinaryAccuracy(threshold=THRESHOLD),
                tmc.BinaryConfusionMatrix(threshold=THRESHOLD),
            ],
            compute_groups=False,
        )
    else:
        k = s.shape[1]
        ms = MetricCollection(
            [
                tmc.MulticlassAUROC(num_classes=k, average=None),
                tmc.MulticlassPrecision(num_classes=k, average=None),
                tmc.MulticlassRecall(num_classes=k, average=None),
                tmc.MulticlassF1Score(num_classes=k, average=None),
                tmc.MulticlassAccuracy(num_classes=k, average="micro"),
                tmc.MulticlassConfusionMatrix(num_classes=k),
            ],
            compute_groups=False,
        )
    ms.update(p, t)
    ms.compute()


def valor_evaluator(y: np.ndarray, s: np.ndarray) -> None:
    from valor_lite.classification import Classification, Loader

    p = np.stack([1.0 - s, s], axis=1) if s.ndim == 1 else s
    labels = [str(j) for j in range(p.shape[1])]
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
    ev.compute_precision_recall(score_thresholds=[0.0])


def assay_confusion(y: np.ndarray, s: np.ndarray, number_of_examples: int | None = None) -> None:
    from assay.classification import ClassificationEvaluator

    p = np.stack([1.0 - s, s], axis=1) if s.ndim == 1 else s
    ev = ClassificationEvaluator(
        score_thresholds=[0.5],
        metrics=["ConfusionMatrixWithExamples"],
        number_of_examples=number_of_examples,
    )
    ev.add_arrays(y, p, labels=list(range(p.shape[1]))).compute()


def valor_confusion(y: np.ndarray, s: np.ndarray) -> None:
    from valor_lite.classification import Classification, Loader

    p = np.stack([1.0 - s, s], axis=1) if s.ndim == 1 else s
    labels = [str(j) for j in range(p.shape[1])]
    loader = Loader.in_memory()
    rows = [
        Classification(
            uid=str(i), groundtruth=labels[y[i]], predictions=labels, scores=p[i].tolist()
        )
        for i in range(len(y))
    ]
    loader.add_data(rows)
    loader.finalize().compute_confusion_matrix_with_examples(score_thresholds=[0.5])


def argsort_floor(y: np.ndarray, s: np.ndarray) -> None:
    np.argsort(s if s.ndim == 1 else s[:, 0])


TOOLS: dict[str, Callable[[np.ndarray, np.ndarray], None]] = {
    "assay functional": assay_functional,
    "assay evaluator": assay_evaluator,
    "scikit-learn": sklearn_functional,
    "torchmetrics functional": torch_functional,
    "torchmetrics stateful": torch_stateful,
    "valor-lite evaluator": valor_evaluator,
    "np.argsort (floor)": argsort_floor,
    "assay ConfusionMatrixWithExamples": assay_confusion,
    "assay ConfusionMatrixWithExamples, 10 per cell": lambda y, s: assay_confusion(y, s, 10),
    "valor-lite ConfusionMatrixWithExamples": valor_confusion,
}


# ---------------------------------------------------------------- one measurement, in a child


def child(tool: str, data: str) -> None:
    """Warm up, load the data, run once; print wall and CPU time and peak RSS as JSON."""
    if tool.startswith("torchmetrics"):
        import torch

        torch.set_num_threads(1)
    fn = TOOLS[tool]
    with np.load(data) as z:
        y, s = z["y"], z["s"]
    fn(y[:2000], s[:2000])  # imports and first-call costs stay outside the timing
    start_mb = _current_rss_mb()
    w0, c0 = time.perf_counter(), time.process_time()
    fn(y, s)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    rss_mb = _peak_rss_mb()
    extra = max(0.0, rss_mb - start_mb)
    print(json.dumps({"wall": wall, "cpu": cpu, "rss_mb": rss_mb, "extra_mb": extra}))


def _peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux ``VmHWM``).

    Not ``getrusage``'s ``ru_maxrss``: that keeps the parent's RSS across fork and exec, so
    a child would report the benchmark driver's memory (which holds the data) as its own.
    """
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _current_rss_mb() -> float:
    """Resident memory now (Linux), after imports, warm-up and loading the data."""
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(tool: str, data: Path) -> dict[str, float] | None:
    cmd = [sys.executable, __file__, "--child", tool, "--data", str(data)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), check=False)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {tool:<26} skipped: {last}")
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def _best(runs: list[dict[str, float]]) -> dict[str, float]:
    return {
        "wall": min(r["wall"] for r in runs),
        "cpu": min(r["cpu"] for r in runs),
        "rss_mb": max(r["rss_mb"] for r in runs),
        "extra_mb": max(r["extra_mb"] for r in runs),
    }


def run_case(title: str, y: np.ndarray, s: np.ndarray, tools: list[str], repeat: int) -> None:
    """Every tool ``repeat`` times, round robin (so load changes hit all tools alike)."""
    print(f"{title} (best of {repeat} runs each, round robin)")
    runs: dict[str, list[dict[str, float]]] = {t: [] for t in tools}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.npz"
        np.savez(data, y=y, s=s)
        for _ in range(repeat):
            for tool in list(runs):
                res = measure(tool, data)
                if res is None:
                    del runs[tool]
                else:
                    runs[tool].append(res)
    results = {t: _best(r) for t, r in runs.items()}
    for tool, res in results.items():
        print(
            f"  {tool:<26} {res['cpu']:8.3f} s CPU {res['wall']:8.3f} s wall "
            f"{res['rss_mb']:6.0f} MB peak RSS ({res['extra_mb']:4.0f} MB above the start)"
        )
    _ratios(results)


def _ratios(results: dict[str, dict[str, float]]) -> None:
    """Time ratios from CPU time, which a loaded machine inflates far less than wall time."""
    for mine in ("assay functional", "assay evaluator"):
        if mine not in results:
            continue
        t = results[mine]["cpu"]
        ratios = [
            f"{peer} / {mine} = {results[peer]['cpu'] / t:.2f}x"
            for peer in ("scikit-learn", "torchmetrics functional", "torchmetrics stateful")
            if peer in results
        ]
        if "valor-lite evaluator" in results:
            ratios.append(
                f"valor-lite / {mine} = {results['valor-lite evaluator']['cpu'] / t:.0f}x"
            )
        print("  CPU time: " + "; ".join(ratios))
    if "assay functional" in results and "assay evaluator" in results:
        e, f = results["assay evaluator"], results["assay functional"]
        print(
            f"  assay evaluator / assay functional = {e['cpu'] / f['cpu']:.2f}x CPU time, "
            f"{e['extra_mb'] - f['extra_mb']:+.0f} MB working memory"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--no-valor", action="store_true", help="skip the valor-lite case")
    ap.add_argument(
        "--only", choices=["binary", "multiclass", "valor", "confusion"], help="run one case kind"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.data)
        return
    import assay

    print(f"assay from {Path(assay.__file__).parent}; metric set: ROC AUC, precision, recall,")
    print(f"F1, accuracy, confusion counts at threshold {THRESHOLD} (multiclass: top class)")
    fast = [t for t in TOOLS if "valor-lite" not in t and "Confusion" not in t]
    wanted = {args.only} if args.only else {"binary", "multiclass", "valor", "confusion"}
    sizes = ((10**5, 3), (10**6, 3)) if args.quick else ((10**6, 3), (10**7, 2))
    for n, repeat in sizes if "binary" in wanted else ():
        run_case(f"binary, n={n:.0e}", *binary_data(n), fast, repeat)
    n = 10**5 if args.quick else 10**6
    if "multiclass" in wanted:
        run_case(f"multiclass, n={n:.0e} x {CLASSES} classes", *multiclass_data(n), fast, 3)
    if "valor" in wanted and not args.no_valor:
        n = 2 * 10**3 if args.quick else 2 * 10**4
        run_case(
            f"binary, n={n:.0e} (valor-lite builds its data row by row in Python)",
            *binary_data(n),
            ["assay evaluator", "valor-lite evaluator"],
            2,
        )
    if "confusion" in wanted:
        confusion_cases(args.quick, args.no_valor)


def confusion_cases(quick: bool, no_valor: bool) -> None:
    """ConfusionMatrixWithExamples (every example kept) at one threshold, 10 classes."""
    assay_tool = "assay ConfusionMatrixWithExamples"
    valor_tool = "valor-lite ConfusionMatrixWithExamples"
    peers = [] if no_valor else [valor_tool]
    for n in (10**4,) if quick else (10**4, 10**5):
        run_case(
            f"confusion matrix with examples, n={n:.0e} x {CLASSES}",
            *multiclass_data(n),
            [assay_tool, *peers],
            1,
        )
    for n in () if quick else (10**6,):
        run_case(
            f"confusion matrix with examples, n={n:.0e} x {CLASSES}",
            *multiclass_data(n),
            [assay_tool, assay_tool + ", 10 per cell"],
            2,
        )


if __name__ == "__main__":
    main()
