"""The tools of the detection benchmark (``benchmarks/detection.py``), one run function each.

A run function takes the two COCO files and the IoU type, does the tool's whole job from
the files (reading them included) and returns ``{"stats", "read", "eval", "total", "cpu"}``:
the 12 COCO summary numbers (or the tool's own mAP followed by None when it has no
summary; for the confusion-matrix runs, per threshold pair the totals two confusion
matrices must share), the wall seconds spent reading, evaluating and in all, and the CPU
seconds of the whole (this process). The driver
runs each in a fresh child process.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path

import numpy as np


def run_assay(gt_path, dt_path, iou_type):
    """assay with its default settings: the full COCOeval arrays, as pycocotools computes them
    (precision for every max-dets, not only the one the summary reads)."""
    from assay.detection.compute import CocoParams
    from assay.detection.io import load_coco

    try:
        from assay.detection.compute import coco_evaluate
        from assay.detection.match import pair_ious
        from assay.detection.rank import rank_detections
    except ImportError:  # the layout before the split (for before/after figures)
        from assay.detection.compute import _rank_detections as rank_detections
        from assay.detection.compute import evaluate as coco_evaluate
        from assay.detection.compute import pair_ious

    t0, c0 = time.perf_counter(), time.process_time()
    data = load_coco(gt_path, dt_path, iou_type=iou_type)
    t1 = time.perf_counter()
    ev = coco_evaluate(data, CocoParams(iou_type=iou_type))
    stats = ev.stats()
    t2, c2 = time.perf_counter(), time.process_time()
    det, _ = rank_detections(data, 100)
    t3 = time.perf_counter()
    pair_ious(data, det, iou_type)
    t4 = time.perf_counter()
    return {
        "stats": stats.tolist(),
        "read": t1 - t0,
        "eval": t2 - t1,
        "iou_only": t4 - t3,
        "total": t2 - t0,
        "cpu": c2 - c0,
    }


def run_assay_cli(gt_path, dt_path, iou_type):
    """``assay detection --coco`` in a subprocess: the command a user types, from the files to
    the 12 printed numbers. Its CPU time (user + sys) and peak RSS are the subprocess's own
    (``getrusage(RUSAGE_CHILDREN)``), interpreter start-up and imports included."""
    import os
    import resource
    import subprocess
    import sys

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "assay", "detection", "--groundtruths", gt_path]
    cmd += ["--predictions", dt_path, "--iou-type", iou_type, "--coco"]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    t2 = time.perf_counter()
    r2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    stats = [float(line.rsplit("=", 1)[1]) for line in out.splitlines() if "] = " in line]
    return {
        "stats": stats,
        "read": float("nan"),
        "eval": float("nan"),
        "total": t2 - t0,
        "cpu": (r2.ru_utime - r0.ru_utime) + (r2.ru_stime - r0.ru_stime),
        "peak_mb": r2.ru_maxrss / 1024,
    }


def run_pycocotools(gt_path, dt_path, iou_type):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        t0, c0 = time.perf_counter(), time.process_time()
        gt = COCO(gt_path)
        dt = gt.loadRes(dt_path)
        t1 = time.perf_counter()
        e = COCOeval(gt, dt, iou_type)
        e.evaluate()
        e.accumulate()
        e.summarize()
        t2, c2 = time.perf_counter(), time.process_time()
    return {
        "stats": e.stats.tolist(),
        "read": t1 - t0,
        "eval": t2 - t1,
        "total": t2 - t0,
        "cpu": c2 - c0,
    }


def run_faster_coco_eval(gt_path, dt_path, iou_type):
    from faster_coco_eval import COCO, COCOeval_faster

    with contextlib.redirect_stdout(io.StringIO()):
        t0, c0 = time.perf_counter(), time.process_time()
        gt = COCO(gt_path)
        dt = gt.loadRes(dt_path)
        t1 = time.perf_counter()
        e = COCOeval_faster(gt, dt, iou_type, print_function=lambda *a, **k: None)
        e.evaluate()
        e.accumulate()
        e.summarize()
        t2, c2 = time.perf_counter(), time.process_time()
    return {
        "stats": list(map(float, e.stats[:12])),
        "read": t1 - t0,
        "eval": t2 - t1,
        "total": t2 - t0,
        "cpu": c2 - c0,
    }


def run_hotcoco(gt_path, dt_path, iou_type):
    """hotcoco (Rust, pycocotools-exact) with its COCOeval API. Its thread count is the
    ``RAYON_NUM_THREADS`` the driver sets in the child's environment (1 = single-threaded)."""
    import hotcoco

    with contextlib.redirect_stdout(io.StringIO()):
        t0, c0 = time.perf_counter(), time.process_time()
        gt = hotcoco.COCO(gt_path)
        dt = gt.load_res(dt_path)
        t1 = time.perf_counter()
        e = hotcoco.COCOeval(gt, dt, iou_type)
        e.evaluate()
        e.accumulate()
        e.summarize()
        t2, c2 = time.perf_counter(), time.process_time()
    return {
        "stats": list(map(float, e.stats[:12])),
        "read": t1 - t0,
        "eval": t2 - t1,
        "total": t2 - t0,
        "cpu": c2 - c0,
    }


def _valor_detections(gt_path, dt_path):
    """valor-lite Detection objects from the two COCO files (crowd regions left out)."""
    from valor_lite.object_detection import BoundingBox, Detection

    gt = json.loads(Path(gt_path).read_text())
    dt = json.loads(Path(dt_path).read_text())
    by = {im["id"]: ([], []) for im in gt["images"]}
    for a in gt["annotations"]:
        if a["iscrowd"]:
            continue  # valor-lite has no crowd regions
        x, y, w, h = a["bbox"]
        by[a["image_id"]][0].append(
            BoundingBox(
                uid=str(a["id"]),
                xmin=x,
                xmax=x + w,
                ymin=y,
                ymax=y + h,
                labels=[str(a["category_id"])],
            )
        )
    for i, d in enumerate(dt):
        x, y, w, h = d["bbox"]
        by[d["image_id"]][1].append(
            BoundingBox(
                uid=f"p{i}",
                xmin=x,
                xmax=x + w,
                ymin=y,
                ymax=y + h,
                labels=[str(d["category_id"])],
                scores=[d["score"]],
            )
        )
    return [Detection(uid=str(k), groundtruths=g, predictions=p) for k, (g, p) in by.items()]


def run_valor_lite(gt_path, dt_path, iou_type):
    from valor_lite.object_detection import Loader

    t0, c0 = time.perf_counter(), time.process_time()
    dets = _valor_detections(gt_path, dt_path)
    t1 = time.perf_counter()
    loader = Loader.in_memory()
    loader.add_bounding_boxes(dets)
    ev = loader.finalize()
    res = ev.compute_precision_recall(
        iou_thresholds=[round(0.5 + 0.05 * i, 2) for i in range(10)], score_thresholds=[0.0]
    )
    t2, c2 = time.perf_counter(), time.process_time()
    m = [x.to_dict() for x in res[next(k for k in res if k.value == "mAPAveragedOverIOUs")]]
    return {
        "stats": [m[0]["value"]] + [None] * 11,
        "read": t1 - t0,
        "eval": t2 - t1,
        "total": t2 - t0,
        "cpu": c2 - c0,
    }


def run_torchmetrics(gt_path, dt_path, iou_type):
    import torch
    from torchmetrics.detection import MeanAveragePrecision

    t0, c0 = time.perf_counter(), time.process_time()
    gt = json.loads(Path(gt_path).read_text())
    dt = json.loads(Path(dt_path).read_text())
    by = {im["id"]: ([], [], [], [], [], []) for im in gt["images"]}
    for a in gt["annotations"]:
        x, y, w, h = a["bbox"]
        by[a["image_id"]][0].append([x, y, x + w, y + h])
        by[a["image_id"]][1].append(a["category_id"])
        by[a["image_id"]][5].append(a["iscrowd"])
    for d in dt:
        x, y, w, h = d["bbox"]
        b = by[d["image_id"]]
        b[2].append([x, y, x + w, y + h])
        b[3].append(d["category_id"])
        b[4].append(d["score"])
    t1 = time.perf_counter()
    metric = MeanAveragePrecision(iou_type="bbox", backend="faster_coco_eval")
    preds, targets = [], []
    for g, gl, p, pl, s, c in by.values():
        preds.append(
            {
                "boxes": torch.tensor(p).reshape(-1, 4),
                "labels": torch.tensor(pl, dtype=torch.long),
                "scores": torch.tensor(s),
            }
        )
        targets.append(
            {
                "boxes": torch.tensor(g).reshape(-1, 4),
                "labels": torch.tensor(gl, dtype=torch.long),
                "iscrowd": torch.tensor(c, dtype=torch.long),
            }
        )
    metric.update(preds, targets)
    out = metric.compute()
    t2, c2 = time.perf_counter(), time.process_time()
    return {
        "stats": [float(out["map"])] + [None] * 11,
        "read": t1 - t0,
        "eval": t2 - t1,
        "total": t2 - t0,
        "cpu": c2 - c0,
    }


CM_IOUS, CM_SCORES = [0.5, 0.75], [0.0, 0.5]


def _cm_summary(matrix, unmatched_gt, unmatched_pd):
    """Totals that two confusion matrices must share: matched same-label and cross-label pairs,
    unmatched ground truths and predictions, per (IoU, score) threshold pair."""
    return [int(x) for x in (np.trace(matrix), matrix.sum() - np.trace(matrix))] + [
        int(unmatched_gt.sum()),
        int(unmatched_pd.sum()),
    ]


def run_assay_cm(gt_path, dt_path, iou_type):
    """assay's ConfusionMatrix records at 2 IoU x 2 score thresholds, from the files."""
    from assay.detection.io import load_coco
    from assay.detection.metrics import compute_metrics

    t0, c0 = time.perf_counter(), time.process_time()
    data = load_coco(gt_path, dt_path, iou_type=iou_type)
    t1 = time.perf_counter()
    ms = compute_metrics(
        data, metrics=["ConfusionMatrix"], iou_thresholds=CM_IOUS, score_thresholds=CM_SCORES
    )
    t2, c2 = time.perf_counter(), time.process_time()
    sums = []
    for m in ms:
        v = m.value
        labels = list(v["confusion_matrix"])
        mat = np.array([[v["confusion_matrix"][g][p] for p in labels] for g in labels])
        ugt = np.array(list(v["unmatched_ground_truths"].values()))
        upd = np.array(list(v["unmatched_predictions"].values()))
        sums.append(_cm_summary(mat, ugt, upd))
    return {"stats": sums, "read": t1 - t0, "eval": t2 - t1, "total": t2 - t0, "cpu": c2 - c0}


def run_valor_cm(gt_path, dt_path, iou_type):
    """valor-lite's compute_confusion_matrix at the same thresholds."""
    from valor_lite.object_detection import Loader

    t0, c0 = time.perf_counter(), time.process_time()
    dets = _valor_detections(gt_path, dt_path)
    t1 = time.perf_counter()
    loader = Loader.in_memory()
    loader.add_bounding_boxes(dets)
    res = loader.finalize().compute_confusion_matrix(CM_IOUS, CM_SCORES)
    t2, c2 = time.perf_counter(), time.process_time()
    sums = []
    for m in res:
        v = m.to_dict()["value"]
        labels = sorted(v["confusion_matrix"])
        mat = np.array([[v["confusion_matrix"][g][p] for p in labels] for g in labels])
        ugt = np.array([v["unmatched_ground_truths"][x] for x in labels])
        upd = np.array([v["unmatched_predictions"][x] for x in labels])
        sums.append(_cm_summary(mat, ugt, upd))
    return {"stats": sums, "read": t1 - t0, "eval": t2 - t1, "total": t2 - t0, "cpu": c2 - c0}


CM_TOOLS = {"assay": run_assay_cm, "valor-lite": run_valor_cm}


TOOLS = {
    "assay": run_assay,
    "assay-cli": run_assay_cli,
    "pycocotools": run_pycocotools,
    "faster-coco-eval": run_faster_coco_eval,
    # the same tool twice: single-threaded (RAYON_NUM_THREADS=1) and with its default threads
    "hotcoco-1thread": run_hotcoco,
    "hotcoco": run_hotcoco,
    "valor-lite": run_valor_lite,
    "torchmetrics": run_torchmetrics,
}
