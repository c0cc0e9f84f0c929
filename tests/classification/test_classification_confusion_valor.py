"""Differential tests: ConfusionMatrix, ConfusionMatrixWithExamples, Examples and hardmax=False
against valor-lite, on generated data with ties, sparse predictions, labels never predicted,
labels never in the ground truth, and thresholds of exactly 0 and 1."""

import numpy as np
import pandas as pd
import pytest

from assay.classification import ClassificationEvaluator

valor = pytest.importorskip("valor_lite.classification")

THRESHOLDS = [0.0, 0.3, 0.5, 1.0]  # ascending: valor-lite narrows its mask threshold by threshold
TYPES = ["Counts", "Accuracy", "ConfusionMatrix", "ConfusionMatrixWithExamples", "Examples"]


def make_data(seed, n=120):
    """Long-form rows: every datum has at least one prediction with a score > 0 (valor-lite
    refuses datums without predictions and never counts a score of 0, see the zero tests)."""
    rng = np.random.default_rng(seed)
    gt_labels = ["a", "b", "c", "never_predicted"]
    pd_labels = ["a", "b", "c", "never_true"]
    gts, pds = [], []
    for i in range(n):
        uid = f"d{i:04d}"
        gts.append({"uid": uid, "value": str(rng.choice(gt_labels, p=[0.4, 0.3, 0.2, 0.1]))})
        chosen = [lab for lab in pd_labels if rng.random() < 0.6] or ["a"]
        for lab in sorted(chosen):  # sorted: valor-lite breaks ties by list order
            score = float(rng.choice([0.1, 0.3, 0.5, 0.7, 1.0]))  # ties, and exactly 1
            pds.append({"uid": uid, "value": lab, "score": score})
    return pd.DataFrame(gts), pd.DataFrame(pds)


def run_valor(gts, pds, hardmax):
    from valor_lite.classification import Classification, Loader

    loader = Loader.in_memory()
    by_uid = pds.groupby("uid", sort=True)
    loader.add_data(
        [
            Classification(
                uid=row.uid,
                groundtruth=row.value,
                predictions=list(by_uid.get_group(row.uid).value),
                scores=list(by_uid.get_group(row.uid).score),
            )
            for row in gts.itertuples()
        ]
    )
    ev = loader.finalize()
    kw = {"score_thresholds": THRESHOLDS, "hardmax": hardmax}
    counts = ev.compute_precision_recall(**kw)
    return {
        "Counts": [m.to_dict() for ms in counts.values() for m in ms if m.type == "Counts"],
        "Accuracy": [m.to_dict() for ms in counts.values() for m in ms if m.type == "Accuracy"],
        "ConfusionMatrix": [m.to_dict() for m in ev.compute_confusion_matrix(**kw)],
        "ConfusionMatrixWithExamples": [
            m.to_dict() for m in ev.compute_confusion_matrix_with_examples(**kw)
        ],
        "Examples": [m.to_dict() for m in ev.compute_examples(**kw)],
    }


def run_assay(gts, pds, hardmax):
    ev = ClassificationEvaluator(score_thresholds=THRESHOLDS, hardmax=hardmax, metrics=TYPES)
    return ev.add(gts, pds).compute()


def _uid(example):
    """valor-lite names the datum ``datum_id``; assay ``datum_uid`` (docs/records.md)."""
    return example["datum_id"] if "datum_id" in example else example["datum_uid"]


def _cells(value, with_examples):
    """A confusion matrix value as {(truth, prediction or None): (count, sorted examples)}."""
    out = {}
    for g, row in value["confusion_matrix"].items():
        for p, cell in row.items():
            if with_examples:
                ex = sorted((_uid(e), e["score"]) for e in cell["examples"])
                out[g, p] = (cell["count"], ex)
            else:
                out[g, p] = (cell, [])
    for g, cell in value["unmatched_ground_truths"].items():
        if with_examples:
            ex = sorted(_uid(e) for e in cell["examples"])
            out[g, None] = (cell["count"], ex)
        else:
            out[g, None] = (cell, [])
    return out


@pytest.mark.parametrize("hardmax", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["ConfusionMatrix", "ConfusionMatrixWithExamples"])
def test_confusion_matrices_match_valor(seed, hardmax, kind):
    gts, pds = make_data(seed)
    theirs = {m["parameters"]["score_threshold"]: m for m in run_valor(gts, pds, hardmax)[kind]}
    ours = run_assay(gts, pds, hardmax).filter(kind)
    assert len(ours) == len(THRESHOLDS)
    compared = 0
    for m in ours:
        t = m.parameters["score_threshold"]
        assert m.parameters["hardmax"] is hardmax
        mine = _cells(m.value, kind != "ConfusionMatrix")
        other = _cells(theirs[t]["value"], kind != "ConfusionMatrix")
        assert mine == other, t
        compared += sum(c for c, _ in mine.values())
    assert compared > 100


@pytest.mark.parametrize("hardmax", [True, False])
@pytest.mark.parametrize("seed", [3, 4])
def test_examples_match_valor(seed, hardmax):
    gts, pds = make_data(seed)
    theirs = {
        (m["value"]["datum_id"], m["parameters"]["score_threshold"]): m["value"]
        for m in run_valor(gts, pds, hardmax)["Examples"]
    }
    ours = run_assay(gts, pds, hardmax).filter("Examples")
    assert len(ours) == len(theirs) == len(gts) * len(THRESHOLDS)
    for m in ours:
        other = theirs[m.parameters["datum_uid"], m.parameters["score_threshold"]]
        for field in ("true_positives", "false_positives", "false_negatives"):
            assert sorted(m.value[field]) == sorted(other[field]), (m, other)


@pytest.mark.parametrize("seed", [5, 6])
def test_hardmax_counts_match_valor(seed):
    gts, pds = make_data(seed)
    theirs = {
        (m["parameters"]["label"], m["parameters"]["score_threshold"]): m["value"]
        for m in run_valor(gts, pds, True)["Counts"]
    }
    ours = run_assay(gts, pds, True).filter("Counts")
    compared = 0
    for m in ours:
        other = theirs[m.parameters["label_value"], m.parameters["score_threshold"]]
        # valor-lite misses a FN (and a TN) when the truth was never predicted and nothing
        # passes: compare TP and FP always, FN where the truth label was predicted.
        assert (m.value["tp"], m.value["fp"]) == (other["tp"], other["fp"])
        compared += 1
    assert compared == 5 * len(THRESHOLDS)
    _same_accuracy(gts, pds, True)


@pytest.mark.parametrize("seed", [7, 8])
def test_soft_counts_tp_fp_match_valor(seed):
    """hardmax=False: TP and FP as valor-lite; FN is (ground truths - TP), see the docs for
    valor-lite's FN, which also counts a FN when another label passes beside the truth."""
    gts, pds = make_data(seed)
    theirs = {
        (m["parameters"]["label"], m["parameters"]["score_threshold"]): m["value"]
        for m in run_valor(gts, pds, False)["Counts"]
    }
    ours = run_assay(gts, pds, False).filter("Counts")
    truth = gts.value.value_counts()
    for m in ours:
        other = theirs[m.parameters["label_value"], m.parameters["score_threshold"]]
        assert (m.value["tp"], m.value["fp"]) == (other["tp"], other["fp"])
        assert m.value["tp"] + m.value["fn"] == truth.get(m.parameters["label_value"], 0)
    assert len(ours) == 5 * len(THRESHOLDS)
    _same_accuracy(gts, pds, False)


def _same_accuracy(gts, pds, hardmax):
    theirs = {
        m["parameters"]["score_threshold"]: m["value"]
        for m in run_valor(gts, pds, hardmax)["Accuracy"]
    }
    ours = run_assay(gts, pds, hardmax).filter("Accuracy")
    assert len(ours) == len(theirs) == len(THRESHOLDS)
    for m in ours:
        assert abs(m.value - theirs[m.parameters["score_threshold"]]) < 1e-12


def test_zero_score_at_threshold_zero_is_a_deliberate_difference():
    """valor-lite never counts a score of 0; assay counts a score s at threshold t when s >= t,
    so at threshold 0 a datum whose scores are all 0 has its first label as prediction."""
    gts = pd.DataFrame({"uid": ["d0"], "value": ["b"]})
    pds = pd.DataFrame({"uid": ["d0", "d0"], "value": ["a", "b"], "score": [0.0, 0.0]})
    theirs = run_valor(gts, pds, True)["ConfusionMatrix"][0]["value"]
    assert theirs["unmatched_ground_truths"]["b"] == 1
    ours = run_assay(gts, pds, True).get("ConfusionMatrix", score_threshold=0.0).value
    assert ours["confusion_matrix"]["b"]["a"] == 1
    assert ours["unmatched_ground_truths"]["b"] == 0
    # at any threshold above 0 both leave the datum unmatched
    ours = run_assay(gts, pds, True).get("ConfusionMatrix", score_threshold=0.3).value
    assert ours["unmatched_ground_truths"]["b"] == 1


def test_datum_without_predictions_is_unmatched():
    """valor-lite refuses a datum without predictions; assay counts it unmatched."""
    gts = pd.DataFrame({"uid": ["d0", "d1"], "value": ["a", "b"]})
    pds = pd.DataFrame({"uid": ["d0"], "value": ["a"], "score": [0.9]})
    ms = run_assay(gts, pds, False)
    cm = ms.get("ConfusionMatrix", score_threshold=0.0).value
    assert cm["unmatched_ground_truths"] == {"a": 0, "b": 1}
    ex = ms.get("Examples", score_threshold=0.0, datum_uid="d1").value
    assert ex == {"true_positives": [], "false_positives": [], "false_negatives": ["b"]}


def test_number_of_examples_keeps_the_first_in_uid_order():
    gts, pds = make_data(9)
    full = run_assay(gts, pds, True).filter("ConfusionMatrixWithExamples")
    ev = ClassificationEvaluator(
        score_thresholds=THRESHOLDS, metrics=["ConfusionMatrixWithExamples"], number_of_examples=2
    )
    short = ev.add(gts, pds).compute()
    checked = 0
    for a, b in zip(full, short):
        for g, row in a.value["confusion_matrix"].items():
            for p, cell in row.items():
                other = b.value["confusion_matrix"][g][p]
                assert other["count"] == cell["count"]
                assert other["examples"] == cell["examples"][:2]
                checked += cell["count"] > 2
    assert checked > 0
