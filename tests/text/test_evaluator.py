"""TextEvaluator records, aggregates, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import InvalidInputError
from assay.text import TextEvaluator, bleu, corpus_bleu, evaluate_text, rouge


def test_records_per_datum_and_aggregate() -> None:
    preds = ["the cat sat", "a dog ran", "hello"]
    refs = ["the cat sat down", ["a dog ran", "dogs run"], "goodbye"]
    ms = evaluate_text(preds, refs, uids=["a", "b", "c"], rouge_types=["rouge1", "rougeL"], seed=3)
    r1 = rouge(preds, refs, rouge_types=["rouge1"])["rouge1"]
    got = [m.value for m in ms.filter("ROUGE", rouge_type="rouge1") if "datum_uid" in m.parameters]
    assert got == r1.tolist()
    agg = ms.get("ROUGE", rouge_type="rouge1", aggregate="mean")
    assert agg.value == pytest.approx(r1.mean(), abs=1e-15)
    assert agg.parameters["stderr"] == pytest.approx(np.std(r1, ddof=1) / np.sqrt(3), abs=1e-15)
    assert agg.parameters["ci_low"] <= agg.value <= agg.parameters["ci_high"]
    assert agg.parameters["n"] == 3 and agg.parameters["n_errors"] == 0
    b = ms.get("BLEU", datum_uid="b")
    # three tokens have no 4-gram: NLTK's method0 gives exp(log(min float) / 4), not 1
    assert b.value == bleu(preds, refs)[1] and 0 < b.value < 1e-70
    assert b.parameters["weights"] == [0.25] * 4
    assert ms.get("BLEU", aggregate="mean").parameters["n"] == 3


def test_precision_and_recall_on_request() -> None:
    ms = evaluate_text(
        ["a b"],
        ["a b c d"],
        metrics=["rouge"],
        rouge_types=["rouge1"],
        rouge_measures=["precision", "recall"],
    )
    assert ms.get("ROUGE", measure="precision", datum_uid="0").value == 1.0
    assert ms.get("ROUGE", measure="recall", datum_uid="0").value == 0.5


def test_one_datum_has_no_stderr() -> None:
    ms = evaluate_text(["a b"], ["a b"], metrics=["bleu"], bleu_weights=[1.0])
    agg = ms.get("BLEU", aggregate="mean")
    assert (
        agg.parameters["stderr"] is None
        and agg.parameters["ci_low"] == agg.parameters["ci_high"] == 1.0
    )


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"metrics": ["meteor"]}, "unknown ['meteor']"),
        ({"metrics": []}, "needs at least 1"),
        ({"rouge_types": ["rougeX"]}, "unknown ROUGE type 'rougeX'"),
        ({"rouge_types": ["rouge0"]}, "unknown ROUGE type 'rouge0'"),
        ({"bleu_weights": []}, "needs one or more n-gram weights"),
        ({"bleu_weights": ["a"]}, "weight 1 is 'a'"),
        ({"rouge_measures": ["f2"]}, "unknown ['f2']"),
        ({"bleu_tokenize": "moses"}, "must be whitespace or valor"),
        ({"smoothing": "method7"}, "must be method1, method2 or None"),
        ({"use_stemmer": "yes"}, "must be true or false"),
    ],
)
def test_bad_configuration(kwargs: dict, needle: str) -> None:
    """Each option is checked by its declared rule; the error names the option."""
    with pytest.raises(InvalidInputError) as e:
        TextEvaluator(**kwargs)
    assert e.value.source == next(iter(kwargs)) and needle in e.value.reason


#: config() of several configurations as the hand-written config() gave it (commit
#: f863595): the declared options must store exactly this, in this order.
_CONFIGS = [
    ({}, {}),
    (
        {"ci": 0.9, "by": ["a"], "cluster": "c", "metrics": ["chrf", "rouge"]},
        {"metrics": ["chrf", "rouge"], "ci": 0.9, "ci_method": "bootstrap", "by": ["a"],
         "cluster": "c"},
    ),
    (
        {"smoothing": "method1", "bleu_tokenize": "valor", "bleu_weights": [1, 0],
         "rouge_types": "rouge1", "use_stemmer": True, "rouge_measures": ["recall", "precision"],
         "seed": 3, "num_bootstrap": 50},
        {"rouge_types": ["rouge1"], "use_stemmer": True, "rouge_measures": ["recall", "precision"],
         "bleu_weights": [1.0, 0.0], "smoothing": "method1", "bleu_tokenize": "valor",
         "num_bootstrap": 50, "seed": 3},
    ),
    (
        {"ci": 0.8, "ci_method": "t", "metrics": ["bleu", "bleu"]},
        {"metrics": ["bleu"], "ci": 0.8, "ci_method": "t"},
    ),
]  # fmt: skip
_DEFAULT = {
    "metrics": ["rouge", "bleu"],
    "rouge_types": ["rouge1", "rouge2", "rougeL", "rougeLsum"],
    "use_stemmer": False,
    "rouge_measures": ["fmeasure"],
    "bleu_weights": [0.25, 0.25, 0.25, 0.25],
    "smoothing": None,
    "bleu_tokenize": "whitespace",
    "num_bootstrap": 1000,
    "seed": 0,
}


@pytest.mark.parametrize("given, changed", _CONFIGS)
def test_declared_config_is_the_hand_written_one(given: dict, changed: dict) -> None:
    """num_bootstrap and seed are stored even without ci (every aggregate has a 95%
    bootstrap interval); ci and ci_method with ci; by and cluster when given."""
    got = TextEvaluator(**given).config()
    want = {**_DEFAULT, **changed}
    assert got == want and list(got) == [k for k in [*_DEFAULT, "ci", "ci_method", "by",
                                                     "cluster"] if k in want]  # fmt: skip


def test_bad_batches() -> None:
    ev = TextEvaluator()
    with pytest.raises(
        InvalidInputError, match="lengths differ: predictions has 2, references has 1"
    ):
        ev.add(["a", "b"], ["a"])
    with pytest.raises(InvalidInputError, match="references: index 0: no text"):
        ev.add(["a"], [[]])
    with pytest.raises(InvalidInputError, match="expected a string"):
        ev.add(["a", 3], ["a", "b"])
    with pytest.raises(InvalidInputError, match="one string"):
        rouge("abc", ["abc"])
    with pytest.raises(InvalidInputError, match="smoothing"):
        bleu(["a"], ["a"], smoothing="method9")
    assert ev.is_empty


@pytest.mark.parametrize("fn", [rouge, bleu, corpus_bleu])
@pytest.mark.parametrize(
    "preds, refs, source, index",
    [
        (["a b", "c"], ["a b", None], "references", 1),  # a missing reference
        (["a b", "c"], ["a b", ["c", None]], "references", 1),  # one of several
        (["a b", "c"], [["a"], 7], "references", 1),
        (["a b", None], ["a b", "c"], "predictions", 1),
    ],
)
def test_missing_text_names_datum_and_field(fn, preds, refs, source, index) -> None:
    with pytest.raises(InvalidInputError) as e:
        fn(preds, refs)
    assert e.value.source == source and e.value.record == f"index {index}"
    with pytest.raises(InvalidInputError, match="references: expected a list, got NoneType"):
        fn(["a"], None)


def test_bleu_tokenize_valor_is_named_in_the_records() -> None:
    ev = TextEvaluator(metrics=["bleu"], bleu_weights=[0.5, 0.5], bleu_tokenize="valor")
    ms = ev.add(["The cat."], ["The cat"], uids=["a"]).compute()
    r = ms.get("BLEU", datum_uid="a")
    assert r.value == 1.0 and r.parameters["tokenize"] == "valor"
    assert ms.get("BLEU", aggregate="mean").parameters["tokenize"] == "valor"
    plain = TextEvaluator(metrics=["bleu"], bleu_weights=[0.5, 0.5])
    r = plain.add(["The cat."], ["The cat"], uids=["a"]).compute().get("BLEU", datum_uid="a")
    assert r.value < 1.0 and "tokenize" not in r.parameters


def test_merged_evaluators_number_uidless_datums_like_one_evaluator() -> None:
    # Datums added without uids are numbered by position among all datums, merged ones too:
    # before, each evaluator numbered its own from "0", so a merge held "0" twice.
    a = TextEvaluator().add(["a b", "c"], ["a b c", "c d"])
    b = TextEvaluator().add(["x"], ["x y"])
    one = TextEvaluator().add(["a b", "c", "x"], ["a b c", "c d", "x y"])
    merged = a.merge(TextEvaluator.from_state(b.state()))
    assert merged.compute().to_json() == one.compute().to_json()
    uids = [m.parameters["datum_uid"] for m in merged.compute() if "datum_uid" in m.parameters]
    assert sorted(set(uids)) == ["0", "1", "2"]


def test_a_none_uid_is_numbered_by_its_position_among_all_datums() -> None:
    # A batch of a table may mix rows with and without a uid: a None is numbered like a
    # datum added without uids, by its position after every merge (as one file numbers it).
    preds, refs = ["a b", "b c", "c d", "d e"], ["a b", "b d", "c d", "e e"]
    a = TextEvaluator().add(preds[:2], refs[:2], uids=["x", None])
    b = TextEvaluator().add(preds[2:], refs[2:], uids=[None, "y"])
    merged = a.merge(TextEvaluator.from_state(b.state()))
    assert merged.uids().tolist() == ["x", "1", "2", "y"]
    one = TextEvaluator().add(preds, refs, uids=["x", "1", "2", "y"])
    assert merged.compute().to_json() == one.compute().to_json()


def test_package_names_stay_the_functions_whatever_loads_first() -> None:
    """assay.text exports lazily (its declarations are read by --help without numpy); its
    ``rouge`` and ``bleu`` are the functions even when their modules were loaded first."""
    import subprocess
    import sys

    code = (
        "import sys, assay.text.declared; light = 'numpy' not in sys.modules; "
        "import assay.text.evaluator, assay.text; from assay.text import bleu; "
        "print(light, assay.text.rouge.__name__, bleu.__name__, type(assay.text.rouge).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "rouge", "bleu", "function"]
