"""``by`` on a column with missing values in text and pairwise (issue 36, item 10): the units
without a value are the slice ``null``, counted, listed last and equal to those units
evaluated alone (the LLM suites and judges share the code path: ``text_slices``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from assay.llm.pairwise import analyze
from assay.text.evaluator import TextEvaluator
from assay.uncertainty.slices import text_slices

PREDS = ["a cat sat", "the dog ran", "a bird flew", "cats sit", "dogs run far", "the end"]
REFS = ["a cat sat down", "the dog ran off", "a bird", "cats sat", "dogs ran", "end"]
SITE = ["n", None, "s", "", "n", None]  # None and "" are both missing


def _text(keep: list[int], by: bool) -> list:
    ev = TextEvaluator(metrics=["rouge"], rouge_types=["rouge1"], by=["site"] if by else [])
    cols = {"site": [SITE[i] for i in keep]} if by else None
    ev.add([PREDS[i] for i in keep], [REFS[i] for i in keep], columns=cols)
    return ev.compute().to_list()


def test_text_slices_puts_the_missing_last() -> None:
    assert text_slices(np.array(["b", "", "a"])) == ["a", "b", ""]
    assert text_slices(np.array(["b", "a"])) == ["a", "b"]


def test_text_null_slice_is_counted_last_and_equals_its_rows_alone() -> None:
    recs = _text(list(range(6)), by=True)
    sliced = [r for r in recs if r["parameters"].get("slice_column") == "site"]
    order = list(dict.fromkeys(r["parameters"]["slice"] for r in sliced))
    assert order == ["n", "s", None]
    null = [r for r in sliced if r["parameters"]["slice"] is None]
    assert null and all(r["parameters"]["slice_n"] == 3 for r in null)
    alone = {
        r["type"]: r["value"]
        for r in _text([1, 3, 5], by=False)
        if r["parameters"].get("aggregate") == "mean"
    }
    for r in null:
        assert abs(r["value"] - alone[r["type"]]) < 1e-12


def _rows() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    out = []
    for q in range(12):
        topic = ["x", "y", None][q % 3]
        for a, b in (("ref", "m1"), ("m1", "ref")):
            out.append(
                {
                    "index": f"q{q}", "model_a": a, "model_b": b, "task": "t", "status": "ok",
                    "choice": str(rng.choice(list("ABCD"))), "length_a": 10.0,
                    "length_b": 12.0, "words_a": 1.0, "words_b": 1.0, "topic": topic,
                }
            )  # fmt: skip
    return pd.DataFrame(out)


def test_pairwise_null_slice_is_counted_last() -> None:
    recs = analyze(_rows(), reference_model="ref", by="topic", num_bootstrap=50).metrics
    sliced = [m for m in recs if m.parameters.get("slice_column") == "topic"]
    order = list(dict.fromkeys(m.parameters["slice"] for m in sliced))
    assert order == ["x", "y", None]
    assert {m.parameters["slice_n"] for m in sliced if m.parameters["slice"] is None} == {4}
