"""Report benchmark: how big the HTML report is and how long it takes to build, for large runs.

Two runs are computed, saved in a fresh SQLite store, loaded back, and reported:

* classification: 1e6 datums, 3 labels with continuous scores (``predict_proba``-like), all
  default records plus the exact ``ROCCurve`` (every turning point: the curve the store keeps
  is as long as the data, the report thins it to 300 points per label);
* detection: 5,000 generated COCO images (``assay.testing.detection.make_coco``), 10
  classes, the default records plus COCO's interpolated PR curves per IoU and class.

For each: the records' JSON size in the store, the time to save and to load the run, the
time to build the report (wall and CPU: the work is single-threaded), and the report's size,
with and without plotly.js (inlined once, about 4.7 MB, the same for any report).

Usage: ``python benchmarks/report.py [--quick]`` (``--quick``: 1e5 datums and 500 images).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np


def _timed(fn):  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def classification(n: int):  # type: ignore[no-untyped-def]
    from assay.classification import DEFAULT_METRICS, ClassificationEvaluator

    rng = np.random.default_rng(0)
    labels = ["a", "b", "c"]
    y = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3))
    logits[np.arange(n), y] += 1.2
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    ev = ClassificationEvaluator(metrics=[*DEFAULT_METRICS, "ROCCurve"])
    return ev.add_arrays(np.asarray(labels)[y], p, labels=labels).compute()


def detection(n_images: int):  # type: ignore[no-untyped-def]
    from assay.detection import DetectionEvaluator, coco_summary, load_coco
    from assay.detection.declared import DEFAULT_METRICS
    from assay.testing.detection import make_coco

    gt, dt = make_coco(n_images=n_images, n_categories=10, dets_per_image=20, seed=1)
    ev = DetectionEvaluator().add(load_coco(gt, dt))
    extra = ["APAveragedOverIOUs", "mAPAveragedOverIOUs", "InterpolatedPrecisionRecallCurve"]
    return ev.compute([*DEFAULT_METRICS, *extra]) + coco_summary(ev.coco())


def measure(name: str, kind: str, make, size: str, folder: Path) -> dict:  # type: ignore[no-untyped-def]
    from plotly.offline import get_plotlyjs

    from assay.report.page import build_report
    from assay.store import Store

    metrics, w_compute, _ = _timed(make)
    stored = len(json.dumps(metrics.to_list()))
    with Store(str(folder / f"{kind}.db")) as st:
        eid, w_save, _ = _timed(lambda: st.save(metrics, kind=kind, dataset=size))
        ev, w_load, _ = _timed(lambda: st.get(eid, items=True))
    build_report([ev])  # warm-up: imports, plotly.js read once
    text, w_build, c_build = _timed(lambda: build_report([ev]))
    js = len(get_plotlyjs())
    row = {
        "run": name,
        "records": len(metrics),
        "stored JSON MB": stored / 1e6,
        "compute s": w_compute,
        "save s": w_save,
        "load s": w_load,
        "report build s (wall)": w_build,
        "report build s (CPU)": c_build,
        "report MB": len(text.encode()) / 1e6,
        "report MB without plotly.js": (len(text.encode()) - js) / 1e6,
    }
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1e5 datums and 500 images")
    args = ap.parse_args()
    n, images = (100_000, 500) if args.quick else (1_000_000, 5_000)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            measure(
                f"classification, {n:,} datums + ROCCurve",
                "classification",
                lambda: classification(n),
                f"{n} datums",
                Path(tmp),
            ),
            measure(
                f"detection, {images:,} images",
                "detection",
                lambda: detection(images),
                f"{images} images",
                Path(tmp),
            ),
        ]
    for r in rows:
        print(f"== {r['run']}")
        for k, v in r.items():
            if k != "run":
                print(f"   {k:30s} {v:10.2f}" if isinstance(v, float) else f"   {k:30s} {v:10d}")


if __name__ == "__main__":
    main()
