"""After a filter, a label left without a pixel: valor-lite reports 0.0 and averages it into
mIOU; assay (default ``zero_division=None``) reports it undefined and leaves it out; with
``zero_division=0`` the two agree. docs/segmentation.md writes the difference down."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from assay.segmentation import SegmentationEvaluator

pc = pytest.importorskip("pyarrow.compute")
valor = pytest.importorskip("valor_lite.semantic_segmentation")

LABELS = ["road", "car", "sky"]
MAPS = {  # 0 = background, i = LABELS[i - 1]
    "d0": (np.array([[0, 0, 1, 1]]), np.array([[0, 1, 1, 1]])),  # road only
    "d1": (np.array([[2, 2, 0, 0]]), np.array([[2, 0, 0, 0]])),  # car only; sky nowhere
}


def _both(zero_division):
    ours, segs = SegmentationEvaluator(zero_division=zero_division), []
    for uid, (g, p) in MAPS.items():
        ours.add_label_maps(uid, g, p, labels=LABELS)
        segs.append(valor.Segmentation(uid=uid, groundtruths=g.astype(np.uint16),
                                       predictions=p.astype(np.uint16), labels=LABELS))  # fmt: skip
    loader = valor.Loader.in_memory()
    loader.add_data(segs)
    theirs = loader.finalize().filter(datums=pc.field("datum_uid").isin(["d0"]))
    t = {
        (m.to_dict()["type"], m.to_dict()["parameters"].get("label")): m.to_dict()["value"]
        for ms in theirs.compute_precision_recall_iou().values()
        for m in ms
    }
    o = {(m.type, m.parameters.get("label_value")): m for m in ours.filter(datums=["d0"]).compute()}
    return o, t


def test_a_label_left_without_pixels_is_undefined_in_assay_and_zero_in_valor_lite():
    ours, theirs = _both(None)
    assert theirs[("IOU", "road")] == pytest.approx(2 / 3)
    assert theirs[("IOU", "car")] == theirs[("IOU", "sky")] == 0.0
    assert theirs[("mIOU", None)] == pytest.approx(2 / 9)
    assert ours[("IOU", "road")].value == pytest.approx(2 / 3)
    for label in ("car", "sky"):
        assert ours[("IOU", label)].value is None and ours[("IOU", label)].parameters["undefined"]
    assert ours[("mIOU", None)].value == pytest.approx(2 / 3)


def test_with_zero_division_0_the_two_agree():
    ours, theirs = _both(0.0)
    for key in [("IOU", "road"), ("IOU", "car"), ("IOU", "sky"), ("mIOU", None)]:
        assert ours[key].value == pytest.approx(theirs[key], abs=1e-12), key


def test_the_docs_write_the_difference_down():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "segmentation.md").read_text()
    text = " ".join(doc.split())
    assert "With the default `zero_division=None` they differ after a filter" in text
    assert "valor-lite IOU car 0.0, sky 0.0 and mIOU 0.2222" in text
    assert "for every per-label record" in text and "with `zero_division=0`" in text
