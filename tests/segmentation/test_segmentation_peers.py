"""Segmentation against valor-lite: with ``zero_division=0`` every record valor-lite reports
(IOU, Precision, Recall, F1 per label, mIOU), an absent label included, is identical."""

import numpy as np
import pytest

from assay.segmentation import SegmentationEvaluator

valor = pytest.importorskip("valor_lite.semantic_segmentation")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zero_division_zero_equals_valor_lite(seed):
    rng = np.random.default_rng(seed)
    labels = ["sky", "road", "car", "ghost"]  # ghost: in no map at all
    ev = SegmentationEvaluator(zero_division=0.0)
    strict = SegmentationEvaluator()
    segs = []
    for i in range(4):
        g = rng.integers(0, 4, (9, 11))
        p = np.where(rng.random(g.shape) < 0.7, g, rng.integers(0, 4, g.shape))
        ev.add_label_maps(f"d{i}", g, p, labels=labels)
        strict.add_label_maps(f"d{i}", g, p, labels=labels)
        segs.append(
            valor.Segmentation(
                uid=f"d{i}",
                groundtruths=g.astype(np.uint16),
                predictions=p.astype(np.uint16),
                labels=labels,
            )
        )
    loader = valor.Loader.in_memory()
    loader.add_data(segs)
    theirs = [
        m.to_dict()
        for v in loader.finalize().compute_precision_recall_iou().values()
        for m in v
        if m.to_dict()["type"] in ("IOU", "Precision", "Recall", "F1", "mIOU")
    ]
    ours = ev.compute()
    compared = 0
    for m in theirs:
        label = m["parameters"].get("label")
        mine = ours.get(m["type"], **({} if label is None else {"label_value": label}))
        assert mine.value == pytest.approx(m["value"], abs=1e-12), (m, mine)
        compared += 1
    assert compared == 4 * 4 + 1
    # strict (the default): the absent label is undefined and left out of mIOU
    assert strict.compute().get("IOU", label_value="ghost").value is None
    present = [ours.get("IOU", label_value=x).value for x in labels[:3]]
    assert strict.compute().get("mIOU").value == pytest.approx(np.mean(present), abs=1e-12)
