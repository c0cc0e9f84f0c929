"""Report size and build time at real sizes (issue 34, item 5): under 2 s and under 10 MB.

Two runs are computed, saved in a fresh SQLite store, loaded back and reported, each alone
and the two COCO-like runs side by side:

* classification: 1e6 datums, 3 labels with continuous scores, the default records plus the
  exact ``ROCCurve`` (the store keeps every turning point; the report draws 300 per label);
* detection: 5,000 generated COCO images over 80 classes (``make_coco``), the default
  records plus ``APAveragedOverIOUs`` and COCO's interpolated PR curves per IoU and class:
  the per-class bars with their class menu and 80 curves per IoU threshold;
* the same detection run twice (two runs compared: the side-by-side table, the
  parameters diff, every per-class figure with two series);
* two classification runs of 5e4 datums (the same datums, the second model sharper) kept
  with their units and reported with their store: the paired comparison's tables and
  forest plot (:mod:`assay.report.paired`, its bootstrap at ``REPORT_BOOTSTRAP``
  resamples), which the units and the bootstrap make the slowest report here.

The build is timed in CPU seconds (the work is single-threaded; wall time on a shared
machine measures the neighbours), best and median of ``--repeat`` builds after a warm-up.
The limits are checked: the script exits 1 when a build takes 2 s or more or a report
weighs 10 MB or more.

Usage: ``python benchmarks/report_size.py [--quick] [--repeat 5] [--paired N]``
(``--quick``: 1e5 datums and 500 images, for a smoke run; ``--paired``: the paired runs'
datums, 5e4 by default).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

LIMIT_S = 2.0
LIMIT_MB = 10.0


def classification(n: int, skill: float = 1.2, curve: bool = True) -> Any:
    from assay.classification import DEFAULT_METRICS, ClassificationEvaluator

    rng = np.random.default_rng(0)
    labels = ["a", "b", "c"]
    y = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3))
    logits[np.arange(n), y] += skill
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    ev = ClassificationEvaluator(metrics=[*DEFAULT_METRICS, *(["ROCCurve"] if curve else [])])
    return ev.add_arrays(np.asarray(labels)[y], p, labels=labels).compute()


def detection(n_images: int, seed: int) -> Any:
    from assay.detection import DetectionEvaluator, coco_summary, load_coco
    from assay.detection.declared import DEFAULT_METRICS
    from assay.testing.detection import make_coco

    gt, dt = make_coco(n_images=n_images, n_categories=80, dets_per_image=20, seed=seed)
    ev = DetectionEvaluator().add(load_coco(gt, dt))
    extra = ["APAveragedOverIOUs", "mAPAveragedOverIOUs", "InterpolatedPrecisionRecallCurve"]
    return ev.compute([*DEFAULT_METRICS, *extra]) + coco_summary(ev.coco())


def build(runs: list[Any], repeat: int, store: Any = None) -> dict[str, float]:
    from assay.report.page import build_report

    build_report(runs, store=store)  # warm-up: imports, plotly.js read once
    cpu, wall = [], []
    text = ""
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        text = build_report(runs, store=store)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return {
        "build CPU s (best)": min(cpu),
        "build CPU s (median)": statistics.median(cpu),
        "build wall s (median)": statistics.median(wall),
        "report MB": len(text.encode()) / 1e6,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1e5 (paired: 5e3) datums, 500 images")
    ap.add_argument("--repeat", type=int, default=5, help="timed builds per report")
    ap.add_argument("--paired", type=int, default=None, help="datums of the paired runs")
    args = ap.parse_args()
    n, images = (100_000, 500) if args.quick else (1_000_000, 5_000)
    n_paired = args.paired or n // 20

    from assay.store import Store

    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp, Store(str(Path(tmp) / "b.db")) as st:
        cls = st.save(classification(n), kind="classification", dataset=f"{n} datums")
        det = [
            st.save(detection(images, seed), kind="detection", dataset=f"{images} images",
                    model=f"detector-{seed}")
            for seed in (1, 2)
        ]  # fmt: skip
        paired = [
            st.save(classification(n_paired, skill, curve=False), kind="classification",
                    dataset=f"{n_paired} datums", model=f"logit-{skill}")
            for skill in (1.2, 1.4)
        ]  # fmt: skip
        runs = {i: st.get(i, items=True) for i in (cls, *det, *paired)}
        cases = [
            (f"classification, {n:,} datums + ROCCurve", [runs[cls]]),
            (f"COCO bbox, {images:,} images, 80 classes", [runs[det[0]]]),
            (f"COCO bbox, {images:,} images, 80 classes, 2 runs", [runs[i] for i in det]),
        ]
        for name, case in cases:
            rows.append((name, build(case, args.repeat)))
        name = f"classification, {n_paired:,} datums, 2 runs paired on their units"
        rows.append((name, build([runs[i] for i in paired], args.repeat, store=st)))
    over = False
    for name, r in rows:
        ok = r["build CPU s (median)"] < LIMIT_S and r["report MB"] < LIMIT_MB
        over |= not ok
        print(f"== {name}: {'within' if ok else 'OVER'} {LIMIT_S:g} s and {LIMIT_MB:g} MB")
        for k, v in r.items():
            print(f"   {k:24s} {v:8.3f}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
