"""Shared vectorised n-gram counting over many token-id sequences at once.

Every text is a sequence of integer token ids; the texts are laid end to end in one flat
array. An n-gram is coded as one integer by folding its ids left to right
(``code = dense(code * V + next_id)``, re-densified after each step so the codes stay
small), so n-grams are equal exactly when their codes are. Counting n-grams per text (or
per pair of texts) is then ``numpy.unique`` over ``owner * U + code`` keys: no Python loop
over tokens.

Example:
    >>> corpus = Corpus([[1, 2, 1, 2], [2, 1]])
    >>> corpus.ngram_codes(2)[0].tolist(), corpus.ngram_counts(2).tolist()
    ([0, 1, 0], [3, 1])
    >>> corpus.ngram_counts(3).tolist()
    [2, 0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["Corpus", "overlap"]


class Corpus:
    """Token-id sequences laid end to end, with n-gram codes per order."""

    def __init__(self, texts: Sequence[Sequence[int]]) -> None:
        self.lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        self.starts = np.zeros(len(texts), dtype=np.int64)
        if len(texts):
            np.cumsum(self.lengths[:-1], out=self.starts[1:])
        total = int(self.lengths.sum())
        self.flat = np.fromiter((i for t in texts for i in t), dtype=np.int64, count=total)
        self._codes: dict[int, np.ndarray] = {}

    def ngram_counts(self, n: int) -> np.ndarray:
        """Number of n-grams of each text: ``max(length - n + 1, 0)``."""
        return np.maximum(self.lengths - n + 1, 0)

    def _flat_codes(self, n: int) -> np.ndarray:
        """Code of the n-gram starting at each flat position (positions near the end cut)."""
        if n in self._codes:
            return self._codes[n]
        if n == 1:
            codes = self.flat
        else:
            prev = self._flat_codes(n - 1)
            if prev.size <= 1:
                codes = np.zeros(0, dtype=np.int64)
            else:
                width = int(self.flat.max()) + 1
                raw = prev[:-1] * width + self.flat[n - 1 :]
                codes = np.unique(raw, return_inverse=True)[1].astype(np.int64).reshape(-1)
        self._codes[n] = codes
        return codes

    def gather(self, n: int, text_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the texts ``text_index`` (repeats allowed): (row, code) of every n-gram.

        ``row[k]`` is the position in ``text_index`` the k-th n-gram belongs to.
        """
        counts = self.ngram_counts(n)[text_index]
        total = int(counts.sum())
        row = np.repeat(np.arange(len(text_index), dtype=np.int64), counts)
        first = np.zeros(len(text_index), dtype=np.int64)
        if len(text_index):
            np.cumsum(counts[:-1], out=first[1:])
        pos = np.arange(total, dtype=np.int64) - np.repeat(first, counts)
        pos += np.repeat(self.starts[text_index], counts)
        return row, self._flat_codes(n)[pos]

    def ngram_codes(self, n: int) -> list[np.ndarray]:
        """The n-gram codes of each text (for inspection and tests)."""
        codes = self._flat_codes(n)
        return [codes[s : s + c] for s, c in zip(self.starts, self.ngram_counts(n), strict=True)]


def overlap(
    n: int,
    corpus: Corpus,
    left: np.ndarray,
    right: np.ndarray,
    right_owner: np.ndarray | None = None,
) -> np.ndarray:
    """Clipped n-gram matches of each pair ``(left[k], right[k])`` of texts.

    ``Σ_g min(count_left(g), count_right(g))`` over the n-grams ``g`` of each pair. With
    ``right_owner`` (for each right text, the index into ``left`` it belongs to), each left
    text is compared with the largest count of each n-gram over all its right texts (BLEU's
    clipping by several references): ``Σ_g min(count_left(g), max_r count_r(g))``.
    """
    n_rows = len(left)
    lrow, lcode = corpus.gather(n, left)
    rrow, rcode = corpus.gather(n, right)
    if lcode.size == 0 or rcode.size == 0:
        return np.zeros(n_rows, dtype=np.int64)
    width = int(max(lcode.max(), rcode.max())) + 1
    lk, lc = np.unique(lrow * width + lcode, return_counts=True)
    rk, rc = np.unique(rrow * width + rcode, return_counts=True)
    if right_owner is not None:  # the max count per (owner, n-gram): the last after sorting
        rk = right_owner[rk // width] * width + rk % width
        order = np.lexsort((rc, rk))
        rk, rc = rk[order], rc[order]
        last = np.ones(len(rk), dtype=bool)
        last[:-1] = rk[1:] != rk[:-1]
        rk, rc = rk[last], rc[last]
    common, li, ri = np.intersect1d(lk, rk, assume_unique=True, return_indices=True)
    hits = np.minimum(lc[li], rc[ri])
    return np.bincount(common // width, weights=hits, minlength=n_rows).astype(np.int64)
