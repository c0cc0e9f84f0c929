"""ROUGE and BLEU against the reference packages (rouge-score, nltk, sacrebleu) to 1e-12."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from assay.text import bleu, corpus_bleu, rouge_scores

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
nltk_bleu = pytest.importorskip("nltk.translate.bleu_score")

TOL = 1e-12
TYPES = ["rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"]
WORDS = (
    "the cat cats sat sitting on a mat dog dogs running runs ran quickly quick "
    "Hello, world! 42 3.14 naïve İstanbul café K ... -- (x) e-mail don't"
).split()

EDGE_PREDS = [
    "",
    "   ",
    "!!! ??? ...",
    "the cat sat on the mat",
    "The CAT sat on the mat.",
    "ünïcödé façade naïve — 東京 ТЕКСТ",
    "1 2 3 4 5 6 7 8 9 10",
    "line one\nline two\n\nline three",
    "\n\n",
    "the " * 300 + "end",
    "running runs ran runner",
]
EDGE_REFS = [
    ["the cat"],
    [""],
    ["..."],
    ["the cat sat on the mat", "a cat on a mat", ""],
    ["the cat sat on the mat"],
    ["unicode facade naive 東京"],
    ["10 9 8 7 6 5 4 3 2 1"],
    ["line two\nline one", "line three"],
    ["\n"],
    ["the end " * 100],
    ["run run run"],
]


def generated(seed: int, n: int) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)

    def text() -> str:
        parts = []
        for _ in range(rng.randint(0, 40)):
            parts.append(rng.choice(WORDS))
            if rng.random() < 0.1:
                parts.append("\n")
        return " ".join(parts)

    preds = [text() for _ in range(n)]
    refs = [[text() for _ in range(rng.randint(1, 3))] for _ in range(n)]
    return preds, refs


def _compare_rouge(preds: list[str], refs: list[list[str]], stem: bool) -> int:
    ours = rouge_scores(preds, refs, rouge_types=TYPES, use_stemmer=stem)
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=stem)
    compared = 0
    for i, (p, r) in enumerate(zip(preds, refs, strict=True)):
        theirs = scorer.score_multi(r, p)
        for t in TYPES:
            for m in ("precision", "recall", "fmeasure"):
                want = getattr(theirs[t], m)
                got = float(ours[t].measure(m)[i])
                assert abs(want - got) <= TOL, (t, m, p, r, want, got)
                compared += 1
    return compared


@pytest.mark.parametrize("stem", [False, True])
def test_rouge_generated(stem: bool) -> None:
    preds, refs = generated(7, 300)
    assert _compare_rouge(preds, refs, stem) == 300 * len(TYPES) * 3


@pytest.mark.parametrize("stem", [False, True])
def test_rouge_edge_cases(stem: bool) -> None:
    assert _compare_rouge(EDGE_PREDS, EDGE_REFS, stem) > 0


def test_rouge_single_type_lsum_and_string_references() -> None:
    preds, refs = generated(3, 50)
    single = [r[0] for r in refs]
    ours = rouge_scores(preds, single, rouge_types=["rougeLsum"])
    scorer = rouge_scorer.RougeScorer(["rougeLsum"])
    got = ours["rougeLsum"].fmeasure
    want = np.array([scorer.score(r, p)["rougeLsum"].fmeasure for p, r in zip(preds, single)])
    assert len(want) == 50
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


def _nltk(refs: list[list[str]], preds: list[str], w: tuple[float, ...], fn: object) -> list[float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            float(
                nltk_bleu.sentence_bleu(
                    [x.split() for x in r], p.split(), weights=w, smoothing_function=fn
                )
            )
            for p, r in zip(preds, refs, strict=True)
        ]


SMOOTH = {None: None, "method1": "method1", "method2": "method2"}
WEIGHTS = [(0.25, 0.25, 0.25, 0.25), (0.5, 0.5), (1.0,), (0.1, 0.2, 0.3, 0.2, 0.2)]


@pytest.mark.parametrize("smoothing", [None, "method1", "method2"])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_bleu_sentence_and_corpus(smoothing: str | None, weights: tuple[float, ...]) -> None:
    sf = nltk_bleu.SmoothingFunction()
    fn = getattr(sf, smoothing) if smoothing else None
    preds, refs = generated(11, 200)
    preds += EDGE_PREDS
    refs += EDGE_REFS
    got = bleu(preds, refs, weights=weights, smoothing=smoothing)
    want = _nltk(refs, preds, weights, fn)
    assert len(want) == len(got) > 0
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = nltk_bleu.corpus_bleu(
            [[x.split() for x in r] for r in refs],
            [p.split() for p in preds],
            weights=weights,
            smoothing_function=fn,
        )
    assert abs(corpus_bleu(preds, refs, weights=weights, smoothing=smoothing) - c) <= TOL


def test_bleu_agrees_with_sacrebleu_where_definitions_meet() -> None:
    """sacrebleu's BLEU with no smoothing and its tokeniser off is NLTK's corpus BLEU."""
    sacrebleu = pytest.importorskip("sacrebleu")
    preds, refs = generated(5, 100)
    one_ref = [r[0] for r in refs]
    ours = corpus_bleu(preds, one_ref)
    theirs = sacrebleu.corpus_bleu(
        preds, [one_ref], tokenize="none", smooth_method="none", force=True
    ).score
    assert abs(100 * ours - theirs) <= 1e-9


def test_sacrebleu_options_are_sacrebleus_numbers() -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    from assay.text import TextEvaluator, chrf_sentence, sacrebleu_sentence

    preds, refs = generated(9, 60)
    sb = sacrebleu_sentence(preds, refs)
    cf = chrf_sentence(preds, refs)
    n = 0
    for i, (p, r) in enumerate(zip(preds, refs, strict=True)):
        assert sb[i] == sacrebleu.sentence_bleu(p, r).score
        assert cf[i] == sacrebleu.sentence_chrf(p, r).score
        n += 1
    assert n == 60
    ms = TextEvaluator(metrics=["sacrebleu", "chrf"]).add(preds, refs).compute()
    assert ms.get("ChrF", datum_uid="3").value == cf[3]
    assert ms.get("SacreBLEU", aggregate="mean").value == pytest.approx(sb.mean())


@pytest.mark.parametrize("weights", WEIGHTS)
def test_bleu_valor_tokens_equal_valor_lite(weights: tuple[float, ...]) -> None:
    """``tokenize="valor"`` is valor-lite's sentence BLEU (its tokens drop periods)."""
    valor = pytest.importorskip("valor_lite.text_generation.computation")
    preds, refs = generated(5, 150)
    preds += EDGE_PREDS + ["The cat.", "It costs $5, e.g. 3.14 dollars..."]
    refs += EDGE_REFS + [["The cat"], ["it costs $5 e.g. 3.14 dollars"]]
    got = bleu(preds, refs, weights=weights, tokenize="valor")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [
            valor.calculate_sentence_bleu(prediction=p, references=r, weights=weights)
            for p, r in zip(preds, refs, strict=True)
        ]
    for g, w, p, r in zip(got, want, preds, refs, strict=True):
        # valor-lite reports a score below 1e-9 (method0's tiny value) as 0.0
        assert (g == pytest.approx(w, rel=0, abs=TOL)) if w else g < 1e-9, (p, r, g, w)
    # the example: 1.0 with valor's tokens, NLTK's whitespace tokens differ
    assert bleu(["The cat."], ["The cat"], weights=(1.0,), tokenize="valor")[0] == 1.0
    assert valor.calculate_sentence_bleu("The cat.", ["The cat"], weights=(1.0,)) == 1.0
    assert bleu(["The cat."], ["The cat"], weights=(1.0,))[0] == 0.5
