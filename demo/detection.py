"""Demo section: detection (COCO-exact) and semantic segmentation on generated data.

Generates a deterministic COCO-format dataset (crowd regions, empty images, all area ranges),
evaluates it with assay and with pycocotools side by side, and runs a small semantic
segmentation evaluation. Writes the metric records to ``detection.json`` and ``segmentation.json``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from assay.detection import DetectionEvaluator, coco_summary, load_coco
from assay.detection.params import STAT_NAMES
from assay.results import MetricSet
from assay.segmentation import SegmentationEvaluator
from assay.testing.detection import make_coco
from saving import save


def run(out_dir: Path, console: Console) -> None:
    gt, dt = make_coco(n_images=300, n_categories=10, dets_per_image=60, seed=7)
    t0 = time.perf_counter()
    evaluator = DetectionEvaluator().add(load_coco(gt, dt))
    ev = evaluator.coco()  # the COCOeval view: arrays and the 12 summary numbers
    t_assay = time.perf_counter() - t0

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        peer = COCOeval(coco, coco.loadRes(copy.deepcopy(dt)), "bbox")
        peer.evaluate()
        peer.accumulate()
        peer.summarize()
    t_peer = time.perf_counter() - t0

    table = Table(title=f"COCO bbox summary: {len(gt['images'])} images, {len(dt)} detections")
    for col in ("statistic", "IoU", "area", "maxDets", "assay", "pycocotools", "|diff|"):
        table.add_column(
            col, justify="right" if col in ("assay", "pycocotools", "|diff|", "maxDets") else "left"
        )
    for (stat, iou, area, md), a, b in zip(STAT_NAMES, ev.stats(), peer.stats):
        table.add_row(stat, iou, area, str(md), f"{a:.6f}", f"{b:.6f}", f"{abs(a - b):.1e}")
    console.print(table)
    console.print(
        f"assay {t_assay:.2f} s, pycocotools {t_peer:.2f} s (x{t_peer / max(t_assay, 1e-9):.0f})"
    )

    metrics = evaluator.compute(
        [
            "APAveragedOverIOUs",
            "mAPAveragedOverIOUs",
            "mAR",
            "PrecisionRecallCurve",
            "InterpolatedPrecisionRecallCurve",  # COCO's PR curves per IoU, for the report
        ]
    )
    per_class = Table(
        title="per-class AP (averaged over IoU 0.50:0.95) and the PR curve at score 0.5"
    )
    for col in ("label", "AP", "tp", "fp", "fn", "precision", "recall"):
        per_class.add_column(col)
    curve = metrics.get("PrecisionRecallCurve").value
    for m in metrics.filter("APAveragedOverIOUs"):
        lab = m.parameters["label_value"]
        c = curve[lab][0.5]
        fmt = lambda v: "undefined" if v is None else f"{v:.3f}"  # noqa: E731
        per_class.add_row(
            lab,
            fmt(m.value),
            str(c["tp"]),
            str(c["fp"]),
            str(c["fn"]),
            fmt(c["precision"]),
            fmt(c["recall"]),
        )
    console.print(per_class)
    (out_dir / "detection.json").write_text((metrics + coco_summary(ev)).to_json(indent=2))
    save(
        out_dir, metrics + coco_summary(ev), console, kind="detection", dataset="make_coco(seed=7)"
    )

    # semantic segmentation: two label maps per image, noisy predictions
    rng = np.random.default_rng(7)
    seg = SegmentationEvaluator()
    for i in range(20):
        g = np.zeros((64, 64), np.int64)
        g[:32] = 1  # sky
        g[40:, 10:50] = 2  # road
        g[rng.integers(0, 50) :, rng.integers(0, 50) :][:8, :8] = 3  # car
        p = g.copy()
        noise = rng.random(g.shape) < 0.1
        p[noise] = rng.integers(0, 4, noise.sum())
        seg.add_label_maps(f"img{i}", g, p, labels=["sky", "road", "car"])
    seg_ms: MetricSet = seg.compute()
    st = Table(title="semantic segmentation (20 generated images, 10% pixel noise)")
    st.add_column("label")
    st.add_column("IoU", justify="right")
    for m in seg_ms.filter("IOU"):
        st.add_row(m.parameters["label_value"], f"{m.value:.4f}")
    st.add_row("mIoU", f"{seg_ms.get('mIOU').value:.4f}")
    console.print(st)
    (out_dir / "segmentation.json").write_text(seg_ms.to_json(indent=2))
    save(out_dir, seg_ms, console, kind="segmentation", dataset="20 generated label maps")
