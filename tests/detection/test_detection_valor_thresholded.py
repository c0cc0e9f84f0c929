"""assay vs valor-lite: Counts, Precision, Recall, F1, AR/mAR per score threshold,
ARAveragedOverScores, mARAveragedOverScores, the 101-point InterpolatedPrecisionRecallCurve and
ConfusionMatrix, on generated boxes with the awkward cases (empty datums, datums with only
predictions or only ground truths, a label never predicted, a label never in a ground truth,
scores of exactly 1, score thresholds of exactly 0 and 1). With ``zero_division=0`` every
value is valor-lite's. No crowds (valor-lite has none) and no score of exactly 0 (valor-lite
drops such predictions, assay counts them at score threshold 0: see docs/detection.md)."""

import numpy as np
import pytest

from assay.detection import parse_datums
from assay.detection.metrics import compute_metrics

valor = pytest.importorskip("valor_lite.object_detection")

IOUS = [0.5, 0.75]
SCORES = [0.0, 0.25, 0.5, 0.9, 1.0]
LABELS = ["cat", "dog", "bird", "never_predicted", "only_predicted"]


def make_datums(seed: int, n: int = 25):
    """(assay ground-truth records, prediction records, valor Detection list)."""
    rng = np.random.default_rng(seed)
    gts, prs, dets = [], [], []
    for i in range(n):
        uid = f"d{i}"
        kind = i % 5  # 0: empty, 1: only predictions, 2: only ground truths, else both
        g_anns, p_anns = [], []
        if kind in (2, 3, 4):
            for _ in range(int(rng.integers(1, 5))):
                x, y = rng.uniform(0, 80, 2)
                w, h = rng.uniform(5, 30, 2)
                lab = LABELS[int(rng.integers(0, 4))]
                g_anns.append({"label": lab, "box": [x, y, x + w, y + h]})
                if kind != 2 and rng.random() < 0.8:  # a jittered detection, maybe mislabelled
                    plab = lab if rng.random() < 0.7 else LABELS[int(rng.integers(0, 3))]
                    if plab == "never_predicted":
                        plab = "cat"
                    jx, jy, jw, jh = rng.normal(0, 3, 4)
                    p_anns.append({"label": plab, "box": [x + jx, y + jy, x + w + jw, y + h + jh]})
        if kind in (1, 3, 4):
            for _ in range(int(rng.integers(0, 4))):
                x, y = rng.uniform(0, 80, 2)
                plab = ["cat", "dog", "bird", "only_predicted"][int(rng.integers(0, 4))]
                p_anns.append({"label": plab, "box": [x, y, x + 12, y + 9]})
        for a in p_anns:  # distinct scores in (0, 1], some exactly 1
            a["score"] = 1.0 if rng.random() < 0.05 else float(rng.uniform(0.001, 0.999))
            b = a["box"]
            a["box"] = [min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])]
        gts.append({"uid": uid, "height": 120, "width": 120, "annotations": g_anns})
        prs.append({"uid": uid, "annotations": p_anns})

        def bb(a, j, side, uid=uid):
            x0, y0, x1, y1 = a["box"]
            kw = {"scores": [a["score"]]} if side == "p" else {}
            return valor.BoundingBox(
                uid=f"{uid}{side}{j}",
                xmin=x0,
                xmax=x1,
                ymin=y0,
                ymax=y1,
                labels=[a["label"]],
                **kw,
            )

        dets.append(
            valor.Detection(
                uid=uid,
                groundtruths=[bb(a, j, "g") for j, a in enumerate(g_anns)],
                predictions=[bb(a, j, "p") for j, a in enumerate(p_anns)],
            )
        )
    return gts, prs, dets


def valor_evaluator(dets):
    loader = valor.Loader.in_memory()
    loader.add_bounding_boxes(dets)
    return loader.finalize()


@pytest.fixture(scope="module", params=[0, 1, 2])
def both(request):
    gts, prs, dets = make_datums(request.param)
    ev = valor_evaluator(dets)
    res = ev.compute_precision_recall(iou_thresholds=IOUS, score_thresholds=SCORES)
    theirs = {k.value: [m.to_dict() for m in v] for k, v in res.items()}
    theirs["ConfusionMatrix"] = [m.to_dict() for m in ev.compute_confusion_matrix(IOUS, SCORES)]
    ours = compute_metrics(
        parse_datums(gts, prs),
        metrics=[
            "Counts", "Precision", "Recall", "F1", "AR", "mAR", "ARAveragedOverScores",
            "mARAveragedOverScores", "InterpolatedPrecisionRecallCurve", "ConfusionMatrix",
        ],
        iou_thresholds=IOUS,
        ar_iou_thresholds=IOUS,
        score_thresholds=SCORES,
        max_detections=None,
        zero_division=0.0,
    )  # fmt: skip
    return ours, theirs


def _get(ours, m):
    p = dict(m["parameters"])
    label = p.pop("label", None)
    if label is not None:
        p["label_value"] = label
    for k in ("iou_thresholds", "score_thresholds"):
        if k in p:
            p[k] = [float(x) for x in p[k]]
    return ours.get(m["type"], **p)


@pytest.mark.parametrize(
    "kind",
    ["Counts", "Precision", "Recall", "F1", "AR", "mAR", "ARAveragedOverScores",
     "mARAveragedOverScores"],
)  # fmt: skip
def test_thresholded_records_equal_valor(both, kind):
    ours, theirs = both
    compared = 0
    for m in theirs[kind]:
        mine = _get(ours, m)
        if kind == "Counts":
            assert mine.value == m["value"], (m, mine)
        else:
            assert mine.value == pytest.approx(m["value"], abs=1e-12), (m, mine)
        compared += 1
    assert compared > 0
    assert compared == len([r for r in ours if r.type == kind]), "valor-lite reports every label"


def test_interpolated_pr_curve_equals_valor(both):
    ours, theirs = both
    compared = 0
    for m in theirs["PrecisionRecallCurve"]:
        mine = ours.get(
            "InterpolatedPrecisionRecallCurve",
            label_value=m["parameters"]["label"],
            iou_threshold=m["parameters"]["iou_threshold"],
        )
        np.testing.assert_allclose(mine.value["precisions"], m["value"]["precisions"], atol=1e-12)
        np.testing.assert_allclose(mine.value["scores"], m["value"]["scores"], atol=1e-12)
        compared += 1
    assert compared == len(LABELS) * len(IOUS)


def test_confusion_matrix_equals_valor(both):
    ours, theirs = both
    compared = 0
    for m in theirs["ConfusionMatrix"]:
        p = m["parameters"]
        mine = ours.get(
            "ConfusionMatrix",
            iou_threshold=p["iou_threshold"],
            score_threshold=p["score_threshold"],
        ).value
        for g, row in m["value"]["confusion_matrix"].items():
            for pl, count in row.items():
                assert mine["confusion_matrix"][g][pl] == count, (p, g, pl)
                compared += 1
        for side in ("unmatched_predictions", "unmatched_ground_truths"):
            for label, count in m["value"][side].items():
                assert mine[side][label] == count, (p, side, label)
                compared += 1
    assert compared == len(IOUS) * len(SCORES) * (len(LABELS) ** 2 + 2 * len(LABELS))


def _crowded(seed: int, n: int = 30, zero_scores: bool = False):
    """Clusters of overlapping ground truths, so that at low IoU thresholds a detection's best
    ground truth is often taken (where COCO and valor-lite part)."""
    rng = np.random.default_rng(seed)
    gts, prs = [], []
    for i in range(n):
        g_anns, p_anns = [], []
        cx, cy = rng.uniform(20, 60, 2)
        for _ in range(int(rng.integers(0, 6))):
            x, y = cx + rng.normal(0, 6, 2)
            lab = ["cat", "dog"][int(rng.integers(0, 2))]
            g_anns.append({"label": lab, "box": [x, y, x + 15, y + 15]})
        for _ in range(int(rng.integers(0, 8))):
            x, y = cx + rng.normal(0, 7, 2)
            s = 0.0 if zero_scores and rng.random() < 0.15 else float(rng.uniform(0.01, 1))
            lab = ["cat", "dog"][int(rng.integers(0, 2))]
            p_anns.append({"label": lab, "score": s, "box": [x, y, x + 15, y + 14]})
        gts.append({"uid": f"c{i}", "height": 100, "width": 100, "annotations": g_anns})
        prs.append({"uid": f"c{i}", "annotations": p_anns})
    return gts, prs


def _valor_from_records(gts, prs):
    dets = []
    for g, p in zip(gts, prs):

        def bb(a, j, side, uid=g["uid"]):
            x0, y0, x1, y1 = a["box"]
            kw = {"scores": [a["score"]]} if side == "p" else {}
            return valor.BoundingBox(
                uid=f"{uid}{side}{j}", xmin=x0, xmax=x1, ymin=y0, ymax=y1, labels=[a["label"]], **kw
            )

        dets.append(
            valor.Detection(
                uid=g["uid"],
                groundtruths=[bb(a, j, "g") for j, a in enumerate(g["annotations"])],
                predictions=[bb(a, j, "p") for j, a in enumerate(p["annotations"])],
            )
        )
    return valor_evaluator(dets)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matching_valor_gives_valor_numbers_at_low_iou_and_zero_scores(seed):
    gts, prs = _crowded(seed, zero_scores=True)
    ious, scores = [0.1, 0.3, 0.5], [0.0, 0.5, 1.0]
    res = _valor_from_records(gts, prs).compute_precision_recall(ious, scores)
    theirs = [m.to_dict() for k in ("Counts", "AR", "ARAveragedOverScores") for m in res[k]]
    data = parse_datums(gts, prs)
    kw = dict(
        metrics=["Counts", "AR", "ARAveragedOverScores"],
        iou_thresholds=ious,
        ar_iou_thresholds=ious,
        score_thresholds=scores,
        max_detections=None,
        zero_division=0.0,
    )
    as_valor = compute_metrics(data, matching="valor", **kw)
    as_coco = compute_metrics(data, **kw)
    compared = differ = 0
    for m in theirs:
        mine = _get(as_valor, m)
        if m["type"] == "Counts":
            assert mine.value == m["value"], (m, mine)
            differ += _get(as_coco, m).value != m["value"]
        else:
            assert mine.value == pytest.approx(m["value"], abs=1e-12), (m, mine)
        compared += 1
    assert compared > 0
    assert differ > 0  # the data does reach the cases where the two rules part


def test_coco_and_valor_matching_documented_example():
    g = [{"label": "a", "box": [0, 0, 10, 10]}, {"label": "a", "box": [8, 0, 18, 10]}]
    p = [
        {"label": "a", "score": 0.9, "box": [0, 0, 10, 10]},
        {"label": "a", "score": 0.8, "box": [1, 0, 11, 10]},
    ]
    gts, prs = [{"uid": "x", "annotations": g}], [{"uid": "x", "annotations": p}]
    data = parse_datums(gts, prs)
    kw = dict(metrics=["Counts"], iou_thresholds=[0.1], score_thresholds=[0.5])
    assert compute_metrics(data, **kw).get("Counts").value == {"tp": 2, "fp": 0, "fn": 0}
    valor_counts = {"tp": 1, "fp": 1, "fn": 1}
    assert compute_metrics(data, matching="valor", **kw).get("Counts").value == valor_counts
    (theirs,) = _valor_from_records(gts, prs).compute_precision_recall([0.1], [0.5])["Counts"]
    assert theirs.to_dict()["value"] == valor_counts


@pytest.mark.parametrize("seed", [0, 1])
def test_examples_and_confusion_matrix_with_examples_equal_valor(seed):
    gts, prs, dets = make_datums(seed)
    ev = valor_evaluator(dets)
    data = parse_datums(gts, prs)
    ours = compute_metrics(
        data,
        metrics=["Examples", "ConfusionMatrixWithExamples"],
        iou_thresholds=IOUS,
        score_thresholds=SCORES,
    )

    def gid(uid, i):
        return f"{uid}g{i}"

    def pid(uid, i):
        return f"{uid}p{i}"

    compared = 0
    for m in ev.compute_examples(IOUS, SCORES):
        v, p = m.to_dict()["value"], m.to_dict()["parameters"]
        u = v["datum_id"]
        mine = ours.get("Examples", datum_uid=u, **p).value
        assert mine["datum_id"] == u
        assert sorted(map(tuple, v["true_positives"])) == sorted(
            (gid(u, g), pid(u, q)) for g, q in mine["true_positives"]
        )
        assert sorted(v["false_positives"]) == sorted(pid(u, q) for q in mine["false_positives"])
        assert sorted(v["false_negatives"]) == sorted(gid(u, g) for g in mine["false_negatives"])
        compared += 1
    # valor-lite has no record for a datum without annotations; assay neither
    assert compared == len([r for r in ours if r.type == "Examples"]) > 0

    for m in ev.compute_confusion_matrix_with_examples(IOUS, SCORES):
        v, p = m.to_dict()["value"], m.to_dict()["parameters"]
        mine = ours.get("ConfusionMatrixWithExamples", **p).value
        for g, row in v["confusion_matrix"].items():
            for pl, cell in row.items():
                ex = mine["confusion_matrix"][g][pl]
                assert ex["count"] == cell["count"]
                assert sorted(
                    (e["datum_id"], gid(e["datum_id"], e["ground_truth_id"]),
                     pid(e["datum_id"], e["prediction_id"])) for e in ex["examples"]
                ) == sorted(
                    (e["datum_id"], e["ground_truth_id"], e["prediction_id"])
                    for e in cell["examples"]
                )  # fmt: skip
                compared += 1
        for side, idk, fn in (
            ("unmatched_predictions", "prediction_id", pid),
            ("unmatched_ground_truths", "ground_truth_id", gid),
        ):
            for label, cell in v[side].items():
                ex = mine[side][label]
                assert ex["count"] == cell["count"], (p, side, label)
                assert sorted(fn(e["datum_id"], e[idk]) for e in ex["examples"]) == sorted(
                    e[idk] for e in cell["examples"]
                )
                compared += 1
    assert compared > 0


@pytest.mark.parametrize("seed", [0, 1])
def test_iou_thresholds_exactly_0_and_1(seed):
    """IoU threshold 1: only exact copies match, the same in assay (both rules) and valor-lite.
    IoU threshold 0: valor-lite finds no true positive at all (its test ``previous best IoU <
    t`` cannot hold for t = 0), which assay does not copy: COCO matching (the default) lets a
    same-label pair with IoU 0 match, as pycocotools does; matching="valor" needs IoU > 1e-9."""
    gts, prs = _crowded(seed)
    for g, p in zip(gts, prs):  # some exact copies, so that IoU 1 occurs
        p["annotations"] += [{**a, "score": 0.77} for a in g["annotations"][:1]]
    ious, scores = [0.0, 1.0], [0.0, 0.5]
    res = _valor_from_records(gts, prs).compute_precision_recall(ious, scores)
    data = parse_datums(gts, prs)
    kw = dict(metrics=["Counts"], iou_thresholds=ious, score_thresholds=scores)
    as_valor = compute_metrics(data, matching="valor", max_detections=None, **kw)
    as_coco = compute_metrics(data, max_detections=None, **kw)
    compared = tp_at_0 = 0
    for m in (x.to_dict() for x in res["Counts"]):
        if m["parameters"]["iou_threshold"] == 0.0:
            assert m["value"]["tp"] == 0  # valor-lite's quirk
            tp_at_0 += _get(as_valor, m).value["tp"]
            assert _get(as_coco, m).value["tp"] >= _get(as_valor, m).value["tp"]
            continue
        assert _get(as_valor, m).value == m["value"], m
        assert _get(as_coco, m).value == m["value"], m
        compared += 1
    assert compared == len(scores) * len(data.labels)
    assert tp_at_0 > 0
    tp_at_1 = sum(as_coco.get("Counts", iou_threshold=1.0, score_threshold=0.0, label_value=v)
                  .value["tp"] for v in ("cat", "dog"))  # fmt: skip
    assert tp_at_1 > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matching_valor_interpolated_curve_equals_valor_at_low_iou(seed):
    gts, prs = _crowded(seed, zero_scores=True)
    ious = [0.1, 0.3, 0.5]
    res = _valor_from_records(gts, prs).compute_precision_recall(ious, [0.5])
    ours = compute_metrics(
        parse_datums(gts, prs),
        metrics=["InterpolatedPrecisionRecallCurve"],
        iou_thresholds=ious,
        matching="valor",
        max_detections=None,
        zero_division=0.0,
    )
    compared = 0
    for m in (x.to_dict() for x in res["PrecisionRecallCurve"]):
        p = m["parameters"]
        mine = ours.get(
            "InterpolatedPrecisionRecallCurve",
            label_value=p["label"],
            iou_threshold=p["iou_threshold"],
        ).value
        np.testing.assert_allclose(mine["precisions"], m["value"]["precisions"], atol=1e-12)
        np.testing.assert_allclose(mine["scores"], m["value"]["scores"], atol=1e-12)
        compared += 1
    assert compared == 2 * len(ious)
