"""ROUGE-N, ROUGE-L and ROUGE-Lsum, numbers identical to Google's ``rouge-score``.

For a prediction ``c`` and a reference ``r`` (both tokenised as in
:func:`assay.text.tokenize.rouge_tokens`):

* ROUGE-N: ``overlap = Σ_g min(#g in r, #g in c)`` over n-grams ``g``;
  ``precision = overlap / max(#n-grams of c, 1)``, ``recall = overlap / max(#n-grams of r, 1)``.
* ROUGE-L: ``L = LCS(r, c)``; ``precision = L / |c|``, ``recall = L / |r|`` (0 when either
  is empty).
* ROUGE-Lsum (summary level): texts are split into lines; for each reference line the
  union of its LCS positions with every candidate line is taken, and each token of that
  union counts as a hit while both texts still have an unused copy of it;
  ``precision = hits / |c|``, ``recall = hits / |r|``.
* ``fmeasure = 2 p r / (p + r)``, 0 when ``p + r = 0``.

With several references a datum takes, per ROUGE type, the scores of the reference with
the highest F-measure (the first one on ties), as ``rouge-score``'s ``score_multi`` does.

ROUGE-N is computed for all pairs at once from n-gram codes (:mod:`assay.text.ngrams`);
LCS lengths come from rapidfuzz (C++); Lsum uses the bit-parallel backtrack of
:mod:`assay.text.lcs`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assay._validation import as_text_lists, as_texts, check_same_length
from assay.text.declared import ROUGE_TYPES, checked
from assay.text.lcs import lcs_indices, lcs_length
from assay.text.ngrams import Corpus, overlap
from assay.text.tokenize import rouge_sentences

__all__ = ["RougeScores", "rouge", "rouge_scores"]

_ROUGE_N = re.compile(r"rouge([1-9])$")
# Pairs whose n-gram overlaps are counted together: the working arrays are ~100 bytes per
# n-gram of the chunk, so chunks keep the peak at a few MB whatever the corpus size.
_CHUNK = 4096


@dataclass(frozen=True)
class RougeScores:
    """Per-datum precision, recall and F-measure of one ROUGE type (float arrays)."""

    precision: np.ndarray
    recall: np.ndarray
    fmeasure: np.ndarray

    def measure(self, name: str) -> np.ndarray:
        """One of ``"fmeasure"``, ``"precision"``, ``"recall"``."""
        return {"fmeasure": self.fmeasure, "precision": self.precision, "recall": self.recall}[name]


def as_references(references: Sequence[str | Sequence[str]], n: int) -> list[list[str]]:
    """Each datum's references as a non-empty list of strings."""
    out = as_text_lists(references, source="references")
    check_same_length(predictions=range(n), references=out)
    return out


def as_predictions(predictions: Sequence[str]) -> list[str]:
    """Predictions as a list of strings."""
    return as_texts(predictions, source="predictions")


def _fmeasure(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    s = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        f = 2 * p * r / s
    return np.where(s > 0, f, 0.0)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return num / np.maximum(den, 1)


class _Texts:
    """Every distinct text once: its lines as token ids, and all its tokens."""

    def __init__(self, texts: list[str], use_stemmer: bool) -> None:
        vocab: dict[str, int] = {}
        self.lines: list[list[list[int]]] = []
        self.tokens: list[list[int]] = []
        for t in texts:
            lines = [
                [vocab.setdefault(w, len(vocab)) for w in s]
                for s in rouge_sentences(t, use_stemmer)
            ]
            self.lines.append(lines)
            self.tokens.append([i for s in lines for i in s])
        self.corpus = Corpus(self.tokens)


def _pair_scores(
    kind: str, texts: _Texts, pred: np.ndarray, ref: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(precision, recall) of every (prediction text, reference text) pair."""
    m = _ROUGE_N.match(kind)
    if m:
        n = int(m.group(1))
        hits = np.concatenate(
            [
                overlap(n, texts.corpus, pred[k : k + _CHUNK], ref[k : k + _CHUNK])
                for k in range(0, len(pred), _CHUNK)
            ]
        ).astype(np.float64)
        counts = texts.corpus.ngram_counts(n)
        return _ratio(hits, counts[pred]), _ratio(hits, counts[ref])
    if kind == "rougeL":
        return _lcs_scores(texts, pred, ref)
    return _summary_scores(texts, pred, ref)


def _lcs_scores(texts: _Texts, pred: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    tok = texts.tokens
    lcs = np.fromiter(
        (lcs_length(tok[c], tok[r]) for c, r in zip(pred, ref, strict=True)),
        dtype=np.float64,
        count=len(pred),
    )
    lengths = texts.corpus.lengths
    return _ratio(lcs, lengths[pred]), _ratio(lcs, lengths[ref])


def _summary_scores(
    texts: _Texts, pred: np.ndarray, ref: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """ROUGE-Lsum of each pair. When both texts are one line, the union of LCS positions is
    one LCS, whose tokens never exceed either text's counts, so hits = LCS length: those
    pairs are plain ROUGE-L (computed in C++)."""
    n_lines = np.fromiter((len(x) for x in texts.lines), dtype=np.int64, count=len(texts.lines))
    single = (n_lines[pred] == 1) & (n_lines[ref] == 1)
    p = np.zeros(len(pred))
    r = np.zeros(len(pred))
    if single.any():
        p[single], r[single] = _lcs_scores(texts, pred[single], ref[single])
    for k in np.flatnonzero(~single):
        p[k], r[k] = _summary_lcs(texts.lines[ref[k]], texts.lines[pred[k]])
    return p, r


def _summary_lcs(ref: list[list[int]], can: list[list[int]]) -> tuple[float, float]:
    """(precision, recall) of summary-level LCS (see the module docstring)."""
    m = sum(map(len, ref))
    n = sum(map(len, can))
    if not m or not n:
        return 0.0, 0.0
    left_r = Counter(i for s in ref for i in s)
    left_c = Counter(i for s in can for i in s)
    hits = 0
    for sent in ref:
        union: set[int] = set()
        for c in can:
            union.update(lcs_indices(sent, c))
        for pos in sorted(union):
            t = sent[pos]
            if left_c[t] > 0 and left_r[t] > 0:
                hits += 1
                left_c[t] -= 1
                left_r[t] -= 1
    return hits / n, hits / m


def _best_per_datum(datum: np.ndarray, f: np.ndarray, n: int) -> np.ndarray:
    """Index of the pair with the highest F-measure per datum (first on ties)."""
    order = np.lexsort((np.arange(len(f)), -f, datum))
    first = np.ones(len(order), dtype=bool)
    first[1:] = datum[order][1:] != datum[order][:-1]
    best = order[first]
    assert len(best) == n
    return best


def rouge_scores(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    rouge_types: Sequence[str] = ROUGE_TYPES,
    use_stemmer: bool = False,
) -> dict[str, RougeScores]:
    """Per-datum ROUGE precision, recall and F-measure for each type (see module docstring).

    Parameters
    ----------
    predictions : list of str
    references : list of str or list of list of str
        One reference text per datum, or several (the best F-measure is kept).
    rouge_types : names among ``rouge1`` .. ``rouge9``, ``rougeL``, ``rougeLsum``.
    use_stemmer : Porter-stem tokens longer than three characters.

    Example
    -------
    >>> s = rouge_scores(["the cat sat"], [["a cat sat down", "the cat sat"]])
    >>> float(s["rouge1"].fmeasure[0]), float(s["rougeL"].precision[0])
    (1.0, 1.0)
    """
    types = checked("rouge_types", rouge_types, field="rouge_types")
    preds = as_predictions(predictions)
    refs = as_references(references, len(preds))
    n = len(preds)
    if n == 0:
        return {t: RougeScores(*(np.zeros(0),) * 3) for t in types}
    texts = _Texts(preds + [r for rs in refs for r in rs], use_stemmer)
    n_refs = np.fromiter((len(rs) for rs in refs), dtype=np.int64, count=n)
    datum = np.repeat(np.arange(n, dtype=np.int64), n_refs)
    ref_index = n + np.arange(len(datum), dtype=np.int64)
    out: dict[str, RougeScores] = {}
    for kind in types:
        p, r = _pair_scores(kind, texts, datum, ref_index)
        f = _fmeasure(p, r)
        if len(datum) > n:
            best = _best_per_datum(datum, f, n)
            p, r, f = p[best], r[best], f[best]
        out[kind] = RougeScores(p, r, f)
    return out


def rouge(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    rouge_types: Sequence[str] = ROUGE_TYPES,
    use_stemmer: bool = False,
    measure: str = "fmeasure",
) -> dict[str, np.ndarray]:
    """Per-datum ROUGE of each type: the F-measure, or ``measure="precision"``/``"recall"``.

    Example
    -------
    >>> r = rouge(["the cat was found under the bed"], ["the cat was under the bed"])
    >>> round(float(r["rouge1"][0]), 6), round(float(r["rouge2"][0]), 6)
    (0.923077, 0.727273)
    """
    checked("rouge_measures", [measure], field="measure")
    scores = rouge_scores(predictions, references, rouge_types=rouge_types, use_stemmer=use_stemmer)
    return {k: s.measure(measure) for k, s in scores.items()}
