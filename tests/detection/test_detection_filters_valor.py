"""Differential tests: detection filters on datum and annotation metadata, ground truths,
predictions and labels, and the paging of Examples, against valor-lite with the same pyarrow
expressions on the same boxes."""

import numpy as np
import pytest
from test_detection_valor_thresholded import IOUS, SCORES, _get, make_datums

from assay.detection import DetectionEvaluator, parse_datums

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
valor = pytest.importorskip("valor_lite.object_detection")

F = pc.field
FIELDS = [("site", pa.string()), ("w", pa.int64()), ("occluded", pa.bool_()),
          ("source", pa.string())]  # fmt: skip
TYPES = ["Counts", "Precision", "Recall", "F1", "ConfusionMatrix", "Examples"]


def with_metadata(seed):
    """make_datums' boxes with datum metadata (site, w sometimes missing), ground-truth
    metadata (occluded) and prediction metadata (source), given to both libraries."""
    gts, prs, dets = make_datums(seed, n=40)
    order = np.argsort([g["uid"] for g in gts], kind="stable")  # uid order, as pages are
    gts, prs, dets = ([x[i] for i in order] for x in (gts, prs, dets))
    rng = np.random.default_rng(seed + 100)
    for g, p, det in zip(gts, prs, dets):
        meta = {"site": str(rng.choice(["x", "y"]))}
        if rng.random() < 0.8:
            meta["w"] = int(rng.integers(0, 3))
        g["metadata"] = det.metadata = meta
        for a, box in zip(g["annotations"], det.groundtruths):
            a["metadata"] = box.metadata = {"occluded": bool(rng.random() < 0.3)}
        for a, box in zip(p["annotations"], det.predictions):
            a["metadata"] = box.metadata = {"source": str(rng.choice(["m1", "m2"]))}
    loader = valor.Loader.in_memory(metadata_fields=FIELDS)
    loader.add_bounding_boxes(dets)
    return DetectionEvaluator(
        iou_thresholds=IOUS, score_thresholds=SCORES, max_detections=None, zero_division=0.0
    ).add(parse_datums(gts, prs)), loader.finalize()


def valor_records(ev, limit=None, offset=0):
    res = ev.compute_precision_recall(iou_thresholds=IOUS, score_thresholds=SCORES)
    out = [m.to_dict() for k in ("Counts", "Precision", "Recall", "F1") for m in res[k]]
    out += [m.to_dict() for m in ev.compute_confusion_matrix(IOUS, SCORES)]
    return out + [
        m.to_dict() for m in ev.compute_examples(IOUS, SCORES, limit=limit, offset=offset)
    ]


def compare(ours, theirs):
    compared = 0
    for m in theirs:
        kind, p, v = m["type"], m["parameters"], m["value"]
        if kind == "ConfusionMatrix":
            mine = ours.get(
                kind, iou_threshold=p["iou_threshold"], score_threshold=p["score_threshold"]
            )
            for side in ("confusion_matrix", "unmatched_predictions", "unmatched_ground_truths"):
                for lab, cell in v[side].items():
                    got = mine.value[side].get(lab, {} if isinstance(cell, dict) else 0)
                    want = {k: c for k, c in cell.items() if c} if isinstance(cell, dict) else cell
                    if isinstance(got, dict):
                        got = {k: c for k, c in got.items() if c}
                    assert got == want, (p, side, lab)
        elif kind == "Examples":
            u = v["datum_id"]
            mine = ours.get(kind, datum_uid=u, **p).value
            assert sorted(map(tuple, v["true_positives"])) == sorted(
                (f"{u}g{g}", f"{u}p{q}") for g, q in mine["true_positives"]
            )
            assert sorted(v["false_positives"]) == sorted(
                f"{u}p{q}" for q in mine["false_positives"]
            )
            assert sorted(v["false_negatives"]) == sorted(
                f"{u}g{g}" for g in mine["false_negatives"]
            )
        else:
            try:
                mine = _get(ours, m)
            except KeyError:  # a label assay's labels= dropped; valor-lite keeps it, empty
                assert v == 0.0 or not any(v.values()), m
                compared += 1
                continue
            if kind == "Counts":
                assert mine.value == v, (m, mine)
            else:
                assert mine.value == pytest.approx(v, abs=1e-12), (m, mine)
        compared += 1
    assert compared == len(theirs)
    assert len(ours.filter("Examples")) == sum(m["type"] == "Examples" for m in theirs)
    return compared


# (name, assay filters, valor-lite filters): assay takes the string form where it reads well.
CASES = [
    ("datum metadata", {"datums": 'site == "x"'}, {"datums": F("site") == "x"}),
    ("null never passes", {"datums": F("w") >= 1}, {"datums": F("w") >= 1}),
    ("gt label", {"groundtruths": 'label == "cat"'}, {"groundtruths": F("gt_label") == "cat"}),
    ("gt metadata", {"groundtruths": "not occluded"}, {"groundtruths": ~F("occluded")}),
    ("pd score", {"predictions": "score >= 0.5"}, {"predictions": F("pd_score") >= 0.5}),
    ("pd metadata", {"predictions": F("source") == "m1"}, {"predictions": F("source") == "m1"}),
    (
        "pd label",
        {"predictions": "label in ['cat', 'dog']"},
        {"predictions": F("pd_label").isin(["cat", "dog"])},
    ),
    (
        "datum and predictions",
        {"datums": 'site == "y"', "predictions": 'source == "m2" and score > 0.3'},
        {"datums": F("site") == "y", "predictions": (F("source") == "m2") & (F("pd_score") > 0.3)},
    ),
    (
        "labels (assay) = gt and pd label filters (valor)",
        {"labels": ["cat", "bird"]},
        {
            "groundtruths": F("gt_label").isin(["cat", "bird"]),
            "predictions": F("pd_label").isin(["cat", "bird"]),
        },
    ),  # fmt: skip
]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name, ours_kw, theirs_kw", CASES, ids=[c[0] for c in CASES])
def test_filters_match_valor(name, ours_kw, theirs_kw, seed):
    ours, theirs = with_metadata(seed)
    want = valor_records(theirs.filter(**theirs_kw))
    got = ours.filter(**ours_kw).compute(TYPES)
    assert compare(got, want) > 100


def test_filter_that_keeps_nothing():
    """valor-lite raises EmptyCacheError in filter(); assay gives an empty evaluator."""
    from valor_lite.exceptions import EmptyCacheError

    ours, theirs = with_metadata(3)
    with pytest.raises(EmptyCacheError):
        theirs.filter(datums=F("site") == "nowhere")
    view = ours.filter(datums='site == "nowhere"')
    assert view.is_empty
    with pytest.raises(Exception, match="no data was added"):
        view.compute(TYPES)


@pytest.mark.parametrize("limit, offset", [(5, 0), (4, 7), (100, 10), (None, 20), (3, 500)])
def test_examples_pages_match_valor(limit, offset):
    ours, theirs = with_metadata(4)
    options = {**ours.config(), "examples_limit": limit, "examples_offset": offset}
    paged = DetectionEvaluator(**options).add(ours.data)
    want = [m.to_dict() for m in theirs.compute_examples(IOUS, SCORES, limit=limit, offset=offset)]
    got = paged.compute(["Examples"])
    key = [(m["value"]["datum_id"], m["parameters"]["iou_threshold"],
            m["parameters"]["score_threshold"]) for m in want]  # fmt: skip
    mine = [(m.parameters["datum_uid"], m.parameters["iou_threshold"],
             m.parameters["score_threshold"]) for m in got]  # fmt: skip
    assert sorted(mine) == sorted(key)
    assert len(mine) > 0 or offset >= 32
