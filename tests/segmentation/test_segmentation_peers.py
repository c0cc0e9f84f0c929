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


def _valor_and_ours(seed: int, zero_division):
    rng = np.random.default_rng(seed)
    labels = ["sky", "road", "car", "ghost", "only_pred"]
    ev = SegmentationEvaluator(zero_division=zero_division)
    segs = []
    for i in range(int(rng.integers(1, 5))):
        h, w = (int(x) for x in rng.integers(1, 12, 2))
        g = rng.integers(0, 4, (h, w))  # ghost (4) and only_pred (5) never in a ground truth
        p = np.where(rng.random(g.shape) < 0.6, g, rng.integers(0, 4, g.shape))
        p[rng.random(g.shape) < 0.1] = 5
        ev.add_label_maps(f"d{i}", g, p, labels=labels)
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
    theirs = {
        k.value if hasattr(k, "value") else k: [m.to_dict() for m in v]
        for k, v in loader.finalize().compute_precision_recall_iou().items()
    }
    return ev.compute(), theirs


@pytest.mark.parametrize("seed", range(6))
def test_accuracy_and_confusion_matrix_equal_valor_lite(seed):
    ours, theirs = _valor_and_ours(seed, 0.0)
    compared = 0
    (acc,) = theirs["Accuracy"]
    assert ours.get("Accuracy").value == pytest.approx(acc["value"], abs=1e-12)
    compared += 1
    (cm,) = theirs["ConfusionMatrix"]
    mine = ours.get("ConfusionMatrix").value
    for g, row in cm["value"]["confusion_matrix"].items():
        for p, cell in row.items():
            assert mine["confusion_matrix"][g][p]["iou"] == pytest.approx(cell["iou"], abs=1e-12)
            compared += 1
    for side in ("unmatched_predictions", "unmatched_ground_truths"):
        for label, cell in cm["value"][side].items():
            assert mine[side][label]["ratio"] == pytest.approx(cell["ratio"], abs=1e-12)
            compared += 1
    assert compared == 1 + 25 + 10


def test_confusion_matrix_undefined_cells_are_null_by_default():
    ours, theirs = _valor_and_ours(0, None)
    mine = ours.get("ConfusionMatrix").value
    # ghost is in no map: its cells have an empty union, valor-lite reports 0.0
    assert mine["confusion_matrix"]["ghost"]["ghost"]["iou"] is None
    assert mine["unmatched_ground_truths"]["ghost"]["ratio"] is None
    assert theirs["ConfusionMatrix"][0]["value"]["confusion_matrix"]["ghost"]["ghost"]["iou"] == 0.0
    # the diagonal is the per-label IOU record, and the counts are still there
    for v in ("sky", "road", "car"):
        assert mine["confusion_matrix"][v][v]["iou"] == ours.get("IOU", label_value=v).value
    assert np.asarray(mine["counts"]).sum() > 0
