"""Differential tests: filters on metadata, ground truths and predictions, and the paging of
Examples, against valor-lite on the same data with the same pyarrow expressions."""

import numpy as np
import pandas as pd
import pytest
from classkit import make_multiclass

from assay.classification import ClassificationEvaluator

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
valor = pytest.importorskip("valor_lite.classification")

THRESHOLDS = [0.0, 0.25, 0.5]
TYPES = [
    "Counts", "Precision", "Recall", "F1", "Accuracy", "ROCAUC",
    "ConfusionMatrix", "ConfusionMatrixWithExamples", "Examples",
]  # fmt: skip
FIELDS = [("site", pa.string()), ("w", pa.int64()), ("flag", pa.bool_()), ("size", pa.float64())]


def make_data(seed, n=150):
    """Every datum scores every label (valor-lite needs a prediction; see FN note below)."""
    labels, y, p = make_multiclass(n, 4, seed)
    rng = np.random.default_rng(seed)
    meta = []
    for _ in range(n):
        m = {"site": str(rng.choice(["x", "y", "z"])), "flag": bool(rng.random() < 0.5)}
        if rng.random() < 0.8:  # sometimes missing: a null never passes a filter
            m["w"] = int(rng.integers(0, 4))
        m["size"] = float(np.round(rng.random(), 2))
        meta.append(m)
    uids = [f"d{i:04d}" for i in range(n)]
    return labels, uids, y, p, meta


def valor_evaluator(data):
    labels, uids, y, p, meta = data
    loader = valor.Loader.in_memory(metadata_fields=FIELDS)
    loader.add_data(
        [
            valor.Classification(
                uid=u, groundtruth=str(t), predictions=list(labels),
                scores=[float(s) for s in row], metadata=m,
            )
            for u, t, row, m in zip(uids, y, p, meta)
        ]
    )  # fmt: skip
    return loader.finalize()


def assay_evaluator(data, hardmax, **options):
    labels, uids, y, p, meta = data
    gts = pd.DataFrame({"uid": uids, "value": y, "metadata": meta})
    pds = pd.DataFrame(
        {
            "uid": np.repeat(uids, len(labels)),
            "value": np.tile(labels, len(uids)),
            "score": p.ravel(),
        }
    )
    ev = ClassificationEvaluator(
        score_thresholds=THRESHOLDS, hardmax=hardmax, metrics=TYPES, zero_division=0.0, **options
    )
    return ev.add(gts, pds)


def valor_records(ev, hardmax, limit=None, offset=0):
    kw = {"score_thresholds": THRESHOLDS, "hardmax": hardmax}
    out = [m.to_dict() for ms in ev.compute_precision_recall(**kw).values() for m in ms]
    out += [m.to_dict() for m in ev.compute_confusion_matrix(**kw)]
    out += [m.to_dict() for m in ev.compute_confusion_matrix_with_examples(**kw)]
    out += [m.to_dict() for m in ev.compute_examples(**kw, limit=limit, offset=offset)]
    out += [m.to_dict() for ms in ev.compute_rocauc().values() for m in ms]
    return out


def _cells(value):
    """{(truth, prediction or None): (count, sorted example uids)} of any confusion value."""
    out = {}
    for g, row in value["confusion_matrix"].items():
        for p, cell in row.items():
            if isinstance(cell, dict):
                ex = sorted(e.get("datum_uid", e.get("datum_id")) for e in cell["examples"])
                cell = cell["count"]
            else:
                ex = []
            if cell:
                out[g, p] = (cell, ex)
    for g, cell in value["unmatched_ground_truths"].items():
        ex = []
        if isinstance(cell, dict):
            ex = sorted(e.get("datum_uid", e.get("datum_id")) for e in cell["examples"])
            cell = cell["count"]
        if cell:
            out[g, None] = (cell, ex)
    return out


def compare(ours, theirs, *, full_counts):
    """Every valor-lite record against assay's; returns how many were compared.

    valor-lite keeps every label of the unfiltered data (zero counts); assay drops a label
    left with neither a ground truth nor a score, so such valor-lite records must be empty.
    valor-lite misses a FN when the truth label was not predicted and nothing passes (and
    counts one for every other passing label when hardmax is off): FN, Recall and F1 are
    compared only where that cannot happen (``full_counts`` >= 1), and TN only when every
    datum scores every label (``full_counts`` 2: valor-lite counts a TN only where the label
    was predicted).
    """
    compared = 0
    for d in theirs:
        kind, par, val = d["type"], d["parameters"], d["value"]
        t = par.get("score_threshold")
        if kind in ("Counts", "Precision", "Recall", "F1"):
            mine = ours.filter(kind, label_value=par["label"], score_threshold=t)
            if not mine:
                assert val == 0.0 or (val["tp"], val["fp"], val["fn"]) == (0, 0, 0), d
                continue
            (m,) = mine
            if kind == "Counts":
                keys = ("tp", "fp", "fn", "tn")[: 2 + full_counts + (full_counts > 1)]
                assert {k: m.value[k] for k in keys} == {k: val[k] for k in keys}, (m, d)
            elif kind == "Precision" or full_counts >= 1:
                assert abs(m.value - val) < 1e-12, (m, d)
        elif kind == "ROCAUC":  # every label scored on every datum: only then comparable
            (m,) = ours.filter(kind, label_value=par["label"]) or [None]
            if full_counts < 2 or m is None or m.value is None:
                continue  # a label without both classes: assay None, valor-lite 0.0
            assert abs(m.value - val) < 1e-12, (m, d)
        elif kind == "Accuracy":
            assert abs(ours.get(kind, score_threshold=t).value - val) < 1e-12
        elif kind in ("ConfusionMatrix", "ConfusionMatrixWithExamples"):
            assert _cells(ours.get(kind, score_threshold=t).value) == _cells(val), d
        elif kind == "Examples":
            m = ours.get(kind, score_threshold=t, datum_uid=val["datum_id"])
            for f in ("true_positives", "false_positives", "false_negatives"):
                assert sorted(m.value[f]) == sorted(val[f]), (m, d)
        else:
            continue
        compared += 1
    n_examples = sum(d["type"] == "Examples" for d in theirs)
    assert len(ours.filter("Examples")) == n_examples
    return compared


F = pc.field
# (name, assay filter, valor filter, counts compared: 2 all, 1 not TN): the same selection, as a
# pandas-query string for assay where it reads naturally and valor's own Expression otherwise.
CASES = [
    ("datum metadata", {"datums": 'site == "x"'}, {"datums": F("site") == "x"}, 2),
    ("null never passes", {"datums": F("w") >= 2}, {"datums": F("w") >= 2}, 2),
    (
        "metadata and/or",
        {"datums": "flag and (size > 0.3 or site in ['y', 'z'])"},
        {"datums": F("flag") & ((F("size") > 0.3) | F("site").isin(["y", "z"]))},
        2,
    ),
    ("uid", {"datums": F("datum_uid") < "d0070"}, {"datums": F("datum_uid") < "d0070"}, 2),
    (
        "ground truths",
        {"groundtruths": "label in ['L1', 'L2']"},
        {"groundtruths": F("gt_label").isin(["L1", "L2"])},
        2,
    ),
    (
        "predictions by score (keeps each datum's top)",
        {"predictions": "score >= 0.2 or label == gt_label"},
        {"predictions": (F("pd_score") >= 0.2) | (F("pd_label") == F("gt_label"))},
        1,
    ),
    (
        "combined",
        {"datums": 'site != "z"', "predictions": F("pd_score") >= 0.15},
        {"datums": F("site") != "z", "predictions": F("pd_score") >= 0.15},
        0,
    ),
]


@pytest.mark.parametrize("hardmax", [True, False])
@pytest.mark.parametrize("name, ours_kw, theirs_kw, full", CASES, ids=[c[0] for c in CASES])
def test_filters_match_valor(name, ours_kw, theirs_kw, full, hardmax):
    data = make_data(3)
    theirs = valor_records(valor_evaluator(data).filter(**theirs_kw), hardmax)
    ours = assay_evaluator(data, hardmax).filter(**ours_kw).compute()
    assert compare(ours, theirs, full_counts=full if hardmax else 0) > 100


def test_label_filter_equals_valors_gt_and_prediction_filters():
    """assay's labels= is valor-lite's ground-truth plus prediction filter on the labels.
    hardmax off: valor-lite keeps the original top-prediction flag (see the docs)."""
    data = make_data(4)
    keep = ["L1", "L2"]
    theirs = valor_evaluator(data).filter(
        groundtruths=F("gt_label").isin(keep), predictions=F("pd_label").isin(keep)
    )
    ours = assay_evaluator(data, False).filter(labels=keep).compute()
    assert compare(ours, valor_records(theirs, False), full_counts=0) > 50


def test_removing_a_top_prediction_is_a_deliberate_difference():
    """Filtering out a datum's top prediction: assay picks the top among the predictions left
    (as if they were the input); valor-lite keeps the old flag, so that datum has none."""
    data = make_data(5, n=40)
    flt = F("pd_label") != "L1"
    theirs = valor_records(valor_evaluator(data).filter(predictions=flt), True)
    ours = assay_evaluator(data, True).filter(predictions=flt).compute()
    acc = [d["value"] for d in theirs if d["type"] == "Accuracy"][0]  # threshold 0.0 first
    assert ours.get("Accuracy", score_threshold=0.0).value > acc
    labels, uids, y, p, meta = data
    p2 = p.copy()
    p2[:, 1] = -np.inf
    keep_top = np.asarray(labels)[np.argmax(p2, axis=1)] == y
    assert ours.get("Accuracy", score_threshold=0.0).value == pytest.approx(keep_top.mean())


def test_filter_that_keeps_nothing():
    """valor-lite raises EmptyCacheError in filter(); assay gives an empty evaluator."""
    from valor_lite.exceptions import EmptyCacheError

    data = make_data(6, n=20)
    with pytest.raises(EmptyCacheError):
        valor_evaluator(data).filter(datums=F("site") == "nowhere")
    view = assay_evaluator(data, True).filter(datums='site == "nowhere"')
    assert view.is_empty
    with pytest.raises(Exception, match="no data was added"):
        view.compute()


@pytest.mark.parametrize("limit, offset", [(10, 0), (7, 20), (50, 140), (None, 145), (5, 200)])
def test_examples_pages_match_valor(limit, offset):
    data = make_data(7)
    theirs = valor_evaluator(data)
    ours = assay_evaluator(data, True, examples_limit=limit, examples_offset=offset)
    got = ours.compute().filter("Examples")
    want = [m.to_dict() for m in theirs.compute_examples(THRESHOLDS, limit=limit, offset=offset)]
    # valor-lite lists a datum's thresholds together; assay a threshold's datums together
    assert sorted((m.parameters["datum_uid"], m.parameters["score_threshold"]) for m in got) == [
        (d["value"]["datum_id"], d["parameters"]["score_threshold"]) for d in want
    ]
    if offset < 150:
        assert len(got) > 0
    # a page of the filtered evaluator equals valor-lite's page of its filtered evaluator
    flt = theirs.filter(datums=F("site") == "y")
    want = [m.to_dict() for m in flt.compute_examples(THRESHOLDS, limit=limit, offset=offset)]
    got = ours.filter(datums='site == "y"').compute().filter("Examples")
    assert {(m.parameters["datum_uid"], m.parameters["score_threshold"]) for m in got} == {
        (d["value"]["datum_id"], d["parameters"]["score_threshold"]) for d in want
    }
