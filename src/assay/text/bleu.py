"""BLEU at sentence and corpus level, numbers identical to NLTK's ``sentence_bleu`` /
``corpus_bleu`` on whitespace tokens (``tokenize="whitespace"``, the default), and to
valor-lite's sentence BLEU with ``tokenize="valor"`` (its tokens: periods dropped, see
:mod:`assay.text.tokenize`).

For n = 1..N (N = ``len(weights)``), a hypothesis ``h`` and its references ``R``:

* clipped matches ``m_n = Σ_g min(#g in h, max_{r∈R} #g in r)`` over the n-grams of ``h``;
  ``d_n = max(1, #n-grams of h)``; the precision is ``p_n = m_n / d_n``;
* the reference length ``ρ`` is the reference length closest to ``|h|`` (the shorter on
  ties); the brevity penalty is 1 when ``|h| > ρ``, 0 when ``|h| = 0``, else
  ``exp(1 - ρ / |h|)``;
* ``BLEU = BP · exp(Σ_n w_n log p_n)``, and 0 when there is no unigram match at all.

Smoothing of a zero ``m_n`` (NLTK's names): ``None`` (method0, NLTK's default and
Valor's) replaces the precision by the smallest positive float, so the score is
practically 0; ``"method1"`` uses ``(m_n + 0.1) / d_n``; ``"method2"`` uses
``(m_n + 1) / (d_n + 1)`` for every n > 1. Corpus BLEU sums ``m_n``, ``d_n``, ``|h|`` and
``ρ`` over the corpus before the same formula.

Counting is vectorised over all sentences at once (:mod:`assay.text.ngrams`); only the
final few floating-point operations per sentence run in Python, in the same order as
NLTK's, so the results are bit-for-bit the same.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assay.errors import InvalidInputError
from assay.text.declared import BLEU_WEIGHTS, checked
from assay.text.ngrams import Corpus, overlap
from assay.text.rouge import as_predictions, as_references
from assay.text.tokenize import BLEU_TOKENIZERS

__all__ = [
    "bleu",
    "corpus_bleu",
]


@dataclass(frozen=True)
class _Counts:
    matches: np.ndarray  # (datums, N) clipped matches
    totals: np.ndarray  # (datums, N) max(1, hypothesis n-grams)
    hyp_len: np.ndarray  # (datums,)
    ref_len: np.ndarray  # (datums,) closest reference length


def _counts(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    order: int,
    tokenize: str = "whitespace",
) -> _Counts:
    split = BLEU_TOKENIZERS[checked("bleu_tokenize", tokenize, field="tokenize")]
    preds = as_predictions(predictions)
    refs = as_references(references, len(preds))
    n = len(preds)
    vocab: dict[str, int] = {}
    texts = [
        [vocab.setdefault(w, len(vocab)) for w in split(t)]
        for t in preds + [r for rs in refs for r in rs]
    ]
    corpus = Corpus(texts)
    n_refs = np.fromiter((len(rs) for rs in refs), dtype=np.int64, count=n)
    datum = np.repeat(np.arange(n, dtype=np.int64), n_refs)
    ref_index = n + np.arange(len(datum), dtype=np.int64)
    hyp = np.arange(n, dtype=np.int64)
    matches = np.zeros((n, order), dtype=np.int64)
    totals = np.zeros((n, order), dtype=np.int64)
    for k in range(order):
        matches[:, k] = overlap(k + 1, corpus, hyp, ref_index, right_owner=datum)
        totals[:, k] = np.maximum(corpus.ngram_counts(k + 1)[hyp], 1)
    hyp_len = corpus.lengths[:n]
    ref_lengths = corpus.lengths[ref_index]
    gap = np.abs(ref_lengths - hyp_len[datum])
    order_ = np.lexsort((ref_lengths, gap, datum))
    first = np.ones(len(order_), dtype=bool)
    first[1:] = datum[order_][1:] != datum[order_][:-1]
    return _Counts(matches, totals, hyp_len, ref_lengths[order_[first]])


def _precisions(m: Sequence[int], d: Sequence[int], smoothing: str | None) -> list[float]:
    out: list[float] = []
    for k, (mk, dk) in enumerate(zip(m, d, strict=True)):
        if mk != 0:
            out.append(mk / dk if smoothing != "method2" or k == 0 else (mk + 1) / (dk + 1))
        elif smoothing is None:
            out.append(sys.float_info.min)
        elif smoothing == "method1":
            out.append((mk + 0.1) / dk)
        else:
            out.append(0.0 if k == 0 else (mk + 1) / (dk + 1))
    return out


def _score(
    m: Sequence[int],
    d: Sequence[int],
    hyp_len: int,
    ref_len: int,
    w: tuple[float, ...],
    smoothing: str | None,
) -> float:
    if m[0] == 0:
        return 0.0
    if hyp_len > ref_len:
        bp = 1.0
    elif hyp_len == 0:
        bp = 0.0
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    p = _precisions(m, d, smoothing)
    return bp * math.exp(math.fsum(wk * math.log(pk) for wk, pk in zip(w, p) if pk > 0))


def bleu(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    weights: Sequence[float] = BLEU_WEIGHTS,
    smoothing: str | None = None,
    tokenize: str = "whitespace",
) -> np.ndarray:
    """Sentence BLEU of each prediction against its reference(s) (see the module docstring).

    Parameters
    ----------
    predictions : list of str
    references : list of str or list of list of str
    weights : one weight per n-gram order (default BLEU-4, uniform).
    smoothing : ``None`` (NLTK's method0), ``"method1"`` or ``"method2"``.
    tokenize : ``"whitespace"`` (``str.split()``, as NLTK's examples) or ``"valor"``
        (valor-lite's tokens: periods dropped). valor-lite also reports a score below
        1e-9 as 0.0; assay keeps method0's tiny positive value.

    Example
    -------
    >>> hyp = "the cat sat on the mat today"
    >>> round(float(bleu([hyp], [["the cat sat on the mat", "a cat sat"]])[0]), 6)
    0.809107
    >>> bleu(["The cat sat."], ["The cat sat"], weights=[1.0]).tolist()  # "sat." != "sat"
    [0.6666666666666666]
    >>> bleu(["The cat sat."], ["The cat sat"], weights=[1.0], tokenize="valor").tolist()
    [1.0]
    """
    w = checked("bleu_weights", weights, field="weights")
    checked("smoothing", smoothing, field="smoothing")
    c = _counts(predictions, references, len(w), tokenize)
    m, d = c.matches.tolist(), c.totals.tolist()
    hl, rl = c.hyp_len.tolist(), c.ref_len.tolist()
    return np.array(
        [_score(m[i], d[i], hl[i], rl[i], w, smoothing) for i in range(len(m))], dtype=float
    )


def corpus_bleu(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    weights: Sequence[float] = BLEU_WEIGHTS,
    smoothing: str | None = None,
    tokenize: str = "whitespace",
) -> float:
    """Corpus BLEU: counts and lengths summed over all sentences, then one score.

    Example
    -------
    >>> round(corpus_bleu(["a b c d", "x y"], ["a b c d", "x z"]), 6)
    0.6756
    """
    w = checked("bleu_weights", weights, field="weights")
    checked("smoothing", smoothing, field="smoothing")
    c = _counts(predictions, references, len(w), tokenize)
    if len(c.hyp_len) == 0:
        raise InvalidInputError("no sentences", field="predictions")
    m = [int(x) for x in c.matches.sum(axis=0)]
    d = [int(x) for x in c.totals.sum(axis=0)]
    return _score(m, d, int(c.hyp_len.sum()), int(c.ref_len.sum()), w, smoothing)
