"""Classification benchmark: assay against scikit-learn, torchmetrics and valor-lite, each
doing the same work.

Every tool computes the same metric set from the same in-memory numpy arrays (loaded from a
``.npy`` file before the clock starts): ROC AUC, precision, recall, F1, accuracy and the
confusion counts at one threshold (binary: a score ``>= 0.5`` is a positive prediction;
multiclass: the top-scoring class, and one-vs-rest ROC AUC per class). Each measurement runs
in a fresh process, after a warm-up call on small data; every tool runs the same number of
times, round robin, and the best CPU and wall times are kept, with the process's peak RSS
and how far that peak rose above the resident memory at the start (after imports, warm-up
and loading the data: the memory the work itself needed); a line per assay tool says PASS when
its peak RSS is at most every peer's in the cell. Ratios use CPU time: on a shared,
loaded machine it moves far less than wall time (the work is single-threaded).

* ``assay functional``: ``roc_auc_score`` + ``precision_score`` / ``recall_score`` /
  ``f1_score`` / ``accuracy_score`` / ``confusion_counts`` on the thresholded predictions;
* ``assay evaluator``: ``ClassificationEvaluator(metrics=[Counts, Precision, Recall, F1,
  Accuracy, ROCAUC])`` with ``add_arrays`` and ``compute`` (it reports every label, so it
  does at least the peers' work);
* ``scikit-learn``: ``roc_auc_score``, ``precision_recall_fscore_support`` (once, as its
  users call it), ``accuracy_score`` and ``confusion_matrix``;
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

Each tool's work is a function in ``benchmarks/peers/classification.py``.

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
from pathlib import Path

import numpy as np

from peers.classification import CLASSES, THRESHOLD, TOOLS

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
    peers = {
        t: r["rss_mb"]
        for t, r in results.items()
        if not t.startswith("assay") and not t.startswith("np.")
    }
    for mine in ("assay functional", "assay evaluator"):
        if mine in results and peers:
            top = min(peers.values())
            verdict = "PASS" if results[mine]["rss_mb"] <= top else "FAIL"
            beside = "; ".join(f"{t} {v:.0f} MB" for t, v in peers.items())
            print(
                f"  peak RSS: {mine} {results[mine]['rss_mb']:.0f} MB vs {beside}: {verdict} "
                "(at most every peer's)"
            )
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
