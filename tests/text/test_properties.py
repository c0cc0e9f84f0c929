"""Hypothesis properties of ROUGE and BLEU: bounds, identity, symmetry."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assay.text import bleu, rouge_scores
from assay.text.tokenize import rouge_tokens

texts = st.text(alphabet=st.sampled_from(list("abc xyz.\n12É")), max_size=60)


@settings(max_examples=150, deadline=None)
@given(texts, texts, st.booleans())
def test_rouge_bounds_and_symmetry(a: str, b: str, stem: bool) -> None:
    ab = rouge_scores([a], [b], use_stemmer=stem)
    ba = rouge_scores([b], [a], use_stemmer=stem)
    for t, s in ab.items():
        for m in ("precision", "recall", "fmeasure"):
            assert 0.0 <= s.measure(m)[0] <= 1.0
        # swapping prediction and reference swaps precision and recall, F is symmetric
        assert s.precision[0] == ba[t].recall[0]
        assert s.fmeasure[0] == ba[t].fmeasure[0]


words = st.lists(
    st.sampled_from(["cat", "Cats", "sat", "running", "a", "9", "x.y", "É"]), max_size=12
)


@settings(max_examples=150, deadline=None)
@given(words, st.booleans())
def test_identical_texts_score_one(ws: list[str], stem: bool) -> None:
    a = " ".join(ws)
    assume(len(rouge_tokens(a, stem)) >= 2)
    s = rouge_scores([a], [a], use_stemmer=stem)
    for t in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        assert s[t].fmeasure[0] == 1.0
    assume(len(ws) >= 4)
    assert bleu([a], [a])[0] == 1.0


@settings(max_examples=100, deadline=None)
@given(texts, st.lists(texts, min_size=1, max_size=3))
def test_bleu_bounds_and_best_reference(a: str, refs: list[str]) -> None:
    v = bleu([a], [refs])[0]
    assert 0.0 <= v <= 1.0
    f = rouge_scores([a], [refs])["rouge1"].fmeasure[0]
    singles = [rouge_scores([a], [r])["rouge1"].fmeasure[0] for r in refs]
    assert f == max(singles)
    assert np.isfinite(v)
