"""Contract cases: the detection and segmentation evaluators."""

from __future__ import annotations

import numpy as np

from assay.detection import DetectionData, DetectionEvaluator, parse_datums
from assay.segmentation import SegmentationEvaluator
from contract import ContractCase


def _detection_batches(n_batches: int = 3, per_batch: int = 4, seed: int = 5):
    """Box datums with distinct scores (so ties across datums cannot depend on order)."""
    rng = np.random.default_rng(seed)
    scores = iter(rng.permutation(10_000) / 10_000 + 1e-6)
    out = []
    for b in range(n_batches):
        gts, prs = [], []
        for d in range(per_batch):
            uid = f"b{b}d{d}"
            g_anns, p_anns = [], []
            for _ in range(int(rng.integers(0, 4))):
                x, y = rng.uniform(0, 80, 2)
                w, h = rng.uniform(5, 30, 2)
                lab = ["cat", "dog", "cat10", "cat2"][int(rng.integers(0, 4))]
                g_anns.append({"label": lab, "box": [x, y, x + w, y + h]})
                jx, jy = rng.normal(0, 2, 2)
                p_anns.append(
                    {
                        "label": lab,
                        "score": float(next(scores)),
                        "box": [x + jx, y + jy, x + w, y + h],
                    }
                )
            for _ in range(int(rng.integers(0, 3))):
                x, y = rng.uniform(0, 80, 2)
                p_anns.append(
                    {"label": "dog", "score": float(next(scores)), "box": [x, y, x + 10, y + 10]}
                )
            gts.append({"uid": uid, "height": 100, "width": 100, "annotations": g_anns})
            prs.append({"uid": uid, "annotations": p_anns})
        out.append((gts, prs))
    return out


DET_BATCHES = [parse_datums(g, p) for g, p in _detection_batches()]


def _metadata_batches():
    """The same boxes with datum metadata, and annotation metadata in some batches only."""
    out = []
    for b, (gts, prs) in enumerate(_detection_batches()):
        for i, g in enumerate(gts):
            g["metadata"] = {"site": "xy"[i % 2], **({"w": i} if b != 1 else {})}
            for a in g["annotations"] if b != 2 else []:
                a["metadata"] = {"hard": i % 3 == 0}
        out.append(parse_datums(gts, prs))
    return out


class SiteFiltered(DetectionEvaluator):
    """Computes on site "x", ground truths not labelled cat2, predictions scoring > 0.2:
    metadata must survive state and merge."""

    def _compute(self, metrics=None):
        view = self.filter(
            datums='site == "x"', groundtruths='label != "cat2"', predictions="score > 0.2"
        )
        if view.is_empty:
            return DetectionEvaluator._compute(self, [])
        return DetectionEvaluator._compute(view, ["mAP", "AR", "Counts", "Examples"])


def _anns(labels: list[str], shift: int) -> list[dict]:
    """One horizontal band per label, 3 pixels high, moved down by ``shift`` rows."""
    return [
        {"label": lab, "box": [0, 4 * i + shift, 8, 4 * i + shift + 3]}
        for i, lab in enumerate(labels)
    ]


def _seg_batches(n_batches: int = 3, seed: int = 2):
    rng = np.random.default_rng(seed)
    out = []
    for b in range(n_batches):
        gts, prs = [], []
        for d in range(2):
            uid = f"s{b}{d}"
            labels = ["road", "sky", "car"][: 1 + (b + d) % 3]

            md = {"site": "xy"[d]} if b != 1 else {}  # one batch without metadata
            gts.append({"uid": uid, "height": 16, "width": 8, "annotations": _anns(labels, 0),
                        "metadata": md})  # fmt: skip
            shift = int(rng.integers(0, 2))
            prs.append({"uid": uid, "annotations": _anns(labels, shift)})
        out.append((gts, prs))
    return out


SEG_BATCHES = _seg_batches()

CASES = [
    ContractCase(
        name="detection",
        make=lambda: DetectionEvaluator(iou_thresholds=[0.5, 0.75]),
        make_other=lambda: DetectionEvaluator(iou_thresholds=[0.5]),
        batches=DET_BATCHES,
        concat=lambda parts: DetectionData.merge(list(parts)),
    ),
    ContractCase(
        name="detection_ci",
        make=lambda: DetectionEvaluator(iou_thresholds=[0.5, 0.75], ci=0.9, num_bootstrap=40),
        make_other=lambda: DetectionEvaluator(iou_thresholds=[0.5, 0.75], ci=0.8, num_bootstrap=40),
        batches=DET_BATCHES,
        concat=lambda parts: DetectionData.merge(list(parts)),
    ),
    ContractCase(
        name="detection_zero_division",
        make=lambda: DetectionEvaluator(zero_division=0.0, max_detections=None),
        make_other=lambda: DetectionEvaluator(zero_division=1.0, max_detections=None),
        batches=DET_BATCHES,
        concat=lambda parts: DetectionData.merge(list(parts)),
    ),
    ContractCase(
        name="detection_score_thresholds_valor_matching",
        make=lambda: DetectionEvaluator(score_thresholds=[0.0, 0.5, 1.0], matching="valor"),
        make_other=lambda: DetectionEvaluator(score_thresholds=[0.0, 0.5, 1.0]),
        batches=DET_BATCHES,
        concat=lambda parts: DetectionData.merge(list(parts)),
    ),
    ContractCase(
        name="detection_metadata_filter",
        make=lambda: SiteFiltered(
            score_thresholds=[0.0, 0.5], examples_limit=3, examples_offset=1
        ),  # fmt: skip
        make_other=lambda: SiteFiltered(score_thresholds=[0.0, 0.5], examples_limit=2),
        batches=_metadata_batches(),
        concat=lambda parts: DetectionData.merge(list(parts)),
    ),
    ContractCase(
        name="detection_by_site_with_ci",
        make=lambda: DetectionEvaluator(
            by=["site", "w"], score_thresholds=[0.0, 0.5], ci=0.9, num_bootstrap=30
        ),
        make_other=lambda: DetectionEvaluator(by=["site"], score_thresholds=[0.0, 0.5], ci=0.9),
        batches=_metadata_batches(),
        concat=lambda parts: DetectionData.merge(list(parts)),
    ),
    ContractCase(
        name="segmentation",
        make=lambda: SegmentationEvaluator(),
        make_other=lambda: SegmentationEvaluator(zero_division=0.0),
        batches=SEG_BATCHES,
        concat=lambda parts: ([d for g, _ in parts for d in g], [d for _, p in parts for d in p]),
        add=lambda ev, batch: ev.add(*batch),
    ),
    ContractCase(
        name="segmentation_ci",
        make=lambda: SegmentationEvaluator(ci=0.9, num_bootstrap=40),
        make_other=lambda: SegmentationEvaluator(ci=0.9, num_bootstrap=40, seed=1),
        batches=SEG_BATCHES,
        concat=lambda parts: ([d for g, _ in parts for d in g], [d for _, p in parts for d in p]),
        add=lambda ev, batch: ev.add(*batch),
    ),
    ContractCase(
        name="segmentation_by_site_with_ci",
        make=lambda: SegmentationEvaluator(by=["site"], ci=0.9, num_bootstrap=40),
        make_other=lambda: SegmentationEvaluator(by=["site"], ci=0.9, num_bootstrap=41),
        batches=SEG_BATCHES,
        concat=lambda parts: ([d for g, _ in parts for d in g], [d for _, p in parts for d in p]),
        add=lambda ev, batch: ev.add(*batch),
    ),
]
