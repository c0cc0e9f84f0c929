"""Deterministic COCO-format data for tests, benchmarks and the demo.

:func:`make_coco` returns ``(annotations_dict, results_list)`` in COCO's own JSON shapes,
with the awkward cases COCOeval has rules for: crowd regions, objects in all three area
ranges, empty images, duplicate ground truths (equal IoUs), tied scores, categories with
no detections and categories with detections but no ground truth.

Example:
    >>> gt, dt = make_coco(n_images=3, seed=0)
    >>> sorted(gt) == ['annotations', 'categories', 'images']
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pycocotools import mask as mask_utils

__all__ = ["make_coco"]


def _polygon(rng: np.random.Generator, x: float, y: float, w: float, h: float) -> list[float]:
    """A star-shaped polygon inside the box (x, y, w, h), as a COCO flat list."""
    k = int(rng.integers(5, 10))
    ang = np.sort(rng.uniform(0, 2 * np.pi, k))
    rad = rng.uniform(0.55, 1.0, k)
    cx, cy = x + w / 2, y + h / 2
    px = cx + np.cos(ang) * rad * w / 2
    py = cy + np.sin(ang) * rad * h / 2
    return np.round(np.column_stack([px, py]).reshape(-1), 2).tolist()


def _ground_truths(
    rng: np.random.Generator,
    n_gt: int,
    n_categories: int,
    size: tuple[int, int],
    crowd_rate: float,
    duplicate_rate: float,
) -> list[tuple[list[float], int, int]]:
    """``n_gt`` random ``(box, category, iscrowd)`` of one image of ``size`` (width, height),
    each followed by an exact copy with probability ``duplicate_rate``."""
    width, height = size
    gts = []
    for _ in range(n_gt):
        # sizes spanning small / medium / large (area thresholds 32^2, 96^2)
        s = float(np.exp(rng.uniform(np.log(6), np.log(300))))
        w = float(np.clip(s * rng.uniform(0.6, 1.6), 2, width - 1))
        h = float(np.clip(s * rng.uniform(0.6, 1.6), 2, height - 1))
        x = float(rng.uniform(0, width - w))
        y = float(rng.uniform(0, height - h))
        box = [round(x, 2), round(y, 2), round(w, 2), round(h, 2)]
        cat = int(rng.integers(1, n_categories + 1))
        crowd = int(rng.random() < crowd_rate)
        gts.append((box, cat, crowd))
        if rng.random() < duplicate_rate:  # an exact duplicate: equal IoUs for every detection
            gts.append((list(box), cat, 0))
    return gts


def _gt_segmentation(
    rng: np.random.Generator, box: list[float], crowd: int, width: int, height: int
) -> tuple[Any, float]:
    """A ground truth's segmentation (a polygon in its box; a crowd region's as an RLE) and
    its area (the mask's pixel count)."""
    poly = _polygon(rng, *box)
    rle = mask_utils.merge(mask_utils.frPyObjects([poly], height, width))
    if crowd:
        return {"size": rle["size"], "counts": rle["counts"].decode()}, float(mask_utils.area(rle))
    return [poly], float(mask_utils.area(rle))


def _detections(
    rng: np.random.Generator,
    gts: list[tuple[list[float], int, int]],
    n_gt: int,
    n_categories: int,
    dets_per_image: int,
    ghost: int | None,
    size: tuple[int, int],
) -> list[tuple[list[float], int]]:
    """One image's raw ``(box, category)`` detections: jittered copies of its ground truths
    (a tenth with a random category), then random boxes (a few of category ``ghost``); an
    image without ground truths gets the random boxes half the time, else 3."""
    width, height = size
    dets = []
    n_true = min(len(gts) * 3, dets_per_image // 2)
    for _ in range(n_true):
        box, cat, _c = gts[int(rng.integers(len(gts)))]
        j = rng.normal(0, 0.12, 4) * np.array([box[2], box[3], box[2], box[3]])
        x, y = box[0] + j[0], box[1] + j[1]
        w, h = max(box[2] + j[2], 1.0), max(box[3] + j[3], 1.0)
        if rng.random() < 0.1:
            cat = int(rng.integers(1, n_categories + 1))
        dets.append(([x, y, w, h], cat))
    for _ in range(dets_per_image - n_true if n_gt or rng.random() < 0.5 else 3):
        s = float(np.exp(rng.uniform(np.log(4), np.log(250))))
        w, h = s * rng.uniform(0.6, 1.6), s * rng.uniform(0.6, 1.6)
        cat = int(rng.integers(1, n_categories + 1))
        if ghost is not None and rng.random() < 0.02:
            cat = ghost
        dets.append(([rng.uniform(0, width - 2), rng.uniform(0, height - 2), w, h], cat))
    return dets


def make_coco(
    n_images: int = 50,
    *,
    n_categories: int = 8,
    gt_per_image: float = 7.0,
    dets_per_image: int = 100,
    segm: bool = False,
    width: int = 640,
    height: int = 480,
    crowd_rate: float = 0.05,
    empty_rate: float = 0.1,
    duplicate_rate: float = 0.05,
    seed: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Generate a COCO annotations dict and a results list.

    Args:
        n_images: number of images (ids 1..n, listed in shuffled order).
        n_categories: categories (ids 1..n); the last never has a detection, and detections
            are also made for an extra id 1000 + 1 with no ground truth at all when n >= 3.
        gt_per_image: mean ground truths per image (Poisson); ``empty_rate`` of images have none.
        dets_per_image: detections per image: jittered copies of ground truths (sometimes with
            the wrong category) plus random boxes; scores rounded to 2 decimals so ties occur.
        segm: also produce ``segmentation`` (polygons for ground truths, RLE for crowds and
            for detections).
        crowd_rate: fraction of ground truths that are crowd regions.
        duplicate_rate: fraction of ground truths followed by an exact copy (equal IoUs).
        seed: the random seed.
    """
    rng = np.random.default_rng(seed)
    cats = [{"id": c, "name": f"cat{c}"} for c in range(1, n_categories + 1)]
    ids = rng.permutation(np.arange(1, n_images + 1))
    images = [
        {"id": int(i), "width": width, "height": height, "file_name": f"{i}.jpg"} for i in ids
    ]
    anns: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    never = n_categories  # a category that is never detected
    ghost = 1001 if n_categories >= 3 else None  # detections of a category with no ground truth
    for pos, img in enumerate(images):
        iid = img["id"]
        empty = (pos == 0 and empty_rate > 0) or rng.random() < empty_rate
        n_gt = 0 if empty else int(rng.poisson(gt_per_image))
        gts = _ground_truths(rng, n_gt, n_categories, (width, height), crowd_rate, duplicate_rate)
        for box, cat, crowd in gts:
            ann: dict[str, Any] = {
                "id": len(anns) + 1,
                "image_id": iid,
                "category_id": cat,
                "bbox": box,
                "iscrowd": crowd,
                "area": round(box[2] * box[3], 2),
            }
            if segm:
                ann["segmentation"], ann["area"] = _gt_segmentation(rng, box, crowd, width, height)
            anns.append(ann)
        dets = _detections(rng, gts, n_gt, n_categories, dets_per_image, ghost, (width, height))
        for box, cat in dets:
            if cat == never:
                cat = 1
            x = float(np.clip(box[0], 0, width - 2))
            y = float(np.clip(box[1], 0, height - 2))
            w = float(min(box[2], width - x))
            h = float(min(box[3], height - y))
            r: dict[str, Any] = {
                "image_id": iid,
                "category_id": cat,
                "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)],
                "score": round(float(rng.uniform(0.01, 1.0)), 2),
            }
            if segm:
                rle = mask_utils.merge(
                    mask_utils.frPyObjects([_polygon(rng, x, y, w, h)], height, width)
                )
                r["segmentation"] = {"size": rle["size"], "counts": rle["counts"].decode()}
            results.append(r)
    return {"images": images, "annotations": anns, "categories": cats}, results
