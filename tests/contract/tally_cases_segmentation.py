"""Tally contract cases of the segmentation evaluator (``tests/contract/tallies.py``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.segmentation import SegmentationEvaluator
from assay.uncertainty.slices import record_key
from contract.tallies import TallyCase

LABELS = ["road", "car", "sky"]
TYPES = {"IOU", "mIOU", "Precision", "Recall", "F1", "Accuracy"}


def _maps(n: int = 18) -> dict[str, tuple]:
    """Label maps; every fourth image knows road and car only (site "a")."""
    rng = np.random.default_rng(4)
    out = {}
    for i in range(n):
        labels = LABELS if i % 4 else LABELS[:2]
        g = rng.integers(0, len(labels) + 1, (4, 5))
        p = np.where(rng.random(g.shape) < 0.7, g, rng.integers(0, len(labels) + 1, g.shape))
        md = {"site": "a" if i % 4 == 0 else "b", "camera": f"c{i % 5}"}
        out[f"im{i:02d}"] = (g, p, labels, md)
    return out


MAPS = _maps()
IDS = sorted(MAPS)


def _take(ids: Sequence[Any], opts: Mapping[str, Any]) -> SegmentationEvaluator:
    ev = SegmentationEvaluator(**opts)
    seen: Counter[str] = Counter()
    for uid in ids:
        g, p, labels, md = MAPS[uid]
        ev.add_label_maps(f"{uid}#{seen[uid]}", g, p, labels=labels, metadata=md)
        seen[uid] += 1
    return ev


def _make(opts: Mapping[str, Any]) -> SegmentationEvaluator:
    ev = SegmentationEvaluator(**opts)
    for uid in IDS:
        g, p, labels, md = MAPS[uid]
        ev.add_label_maps(uid, g, p, labels=labels, metadata=md)
    return ev


TALLY_CASES = [
    TallyCase(
        name="segmentation",
        make=_make,
        take=_take,
        key=lambda m: record_key(m, ("label_key", "label_value")) if m.type in TYPES else None,
        ids=IDS,
        columns={k: [MAPS[u][3][k] for u in IDS] for k in ("site", "camera")},
        cluster="camera",
        by="site",
    )
]
