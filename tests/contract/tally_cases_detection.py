"""Tally contract cases of the detection evaluator (``tests/contract/tallies.py``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.detection import DetectionEvaluator
from assay.uncertainty.slices import record_key
from contract.tallies import TallyCase

LABELS = ["cat", "dog", "owl"]
TYPES = {"AP", "APAveragedOverIOUs", "mAP", "mAPAveragedOverIOUs", "AR", "mAR"}
WHERE = ("label_key", "label_value", "iou_threshold", "score_threshold")
OPTIONS = {"iou_thresholds": [0.5, 0.75], "score_thresholds": [0.0, 0.5]}


def _images(n: int = 20) -> dict[str, tuple[list, list, dict]]:
    """Images with boxes, jittered scored detections and false alarms (continuous scores)."""
    rng = np.random.default_rng(8)
    out = {}
    for i in range(n):
        g, p = [], []
        for _ in range(rng.integers(0, 4)):
            x, y = rng.uniform(0, 80, 2)
            box = [float(x), float(y), float(x + rng.uniform(5, 20)), float(y + rng.uniform(5, 20))]
            lab = str(rng.choice(LABELS[:2] if i % 5 else LABELS))
            g.append({"label": lab, "box": box})
            if rng.random() < 0.8:
                dx, dy = rng.normal(0, 2, 2)
                jit = [box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy]
                p.append({"label": lab, "box": jit, "score": float(rng.random())})
        for _ in range(rng.integers(0, 3)):
            x, y = rng.uniform(0, 80, 2)
            box = [float(x), float(y), float(x + 10), float(y + 10)]
            p.append({"label": str(rng.choice(LABELS)), "box": box, "score": float(rng.random())})
        md = {"camera": f"c{i % 3}", "site": "ab"[i % 2]}
        out[f"img{i:03d}"] = (g, p, md)
    return out


IMAGES = _images()
IDS = sorted(IMAGES)


def _evaluator(ids: Sequence[Any], opts: Mapping[str, Any], copies: bool) -> DetectionEvaluator:
    seen: Counter[str] = Counter()
    gts, pds = [], []
    for uid in ids:
        g, p, md = IMAGES[uid]
        name = f"{uid}#{seen[uid]}" if copies else uid
        seen[uid] += 1
        gts.append({"uid": name, "annotations": g, "metadata": md})
        pds.append({"uid": name, "annotations": p})
    return DetectionEvaluator(**OPTIONS, **opts).add_datums(gts, pds)


TALLY_CASES = [
    TallyCase(
        name="detection",
        make=lambda opts: _evaluator(IDS, opts, copies=False),
        take=lambda ids, opts: _evaluator(ids, opts, copies=True),
        key=lambda m: record_key(m, WHERE) if m.type in TYPES else None,
        ids=IDS,
        columns={k: [IMAGES[u][2][k] for u in IDS] for k in ("camera", "site")},
        cluster="camera",
        by="site",
    )
]
