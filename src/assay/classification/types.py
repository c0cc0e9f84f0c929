"""Input containers for classification.

A datum has a ``uid``, one ground-truth label value per label key (a plain label means key
``"class"``) and, per key, a set of predicted label values with scores in [0, 1].

Inputs are validated into one :class:`KeyBlock` per label key: the datums' uids, their
ground-truth label codes and their scores. Long-form tables (one row per label) are read by
:mod:`assay.classification.io`; scikit-learn-style arrays by :func:`block_from_arrays`.

Example:
    >>> b = block_from_arrays(["dog", "cat"], [[0.2, 0.8], [0.7, 0.3]], labels=["cat", "dog"])
    >>> b.labels, b.gt.tolist(), b.dense_scores()[:, 0].tolist()
    (('cat', 'dog'), [1, 0], [0.2, 0.8])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay._validation import as_1d, check_same_length
from assay.errors import InvalidInputError
from assay.io.metadata import Metadata

__all__ = [
    "DEFAULT_KEY",
    "KeyBlock",
    "block_from_arrays",
    "concat_blocks",
    "compact_block",
    "code_dtype",
    "joined_metadata",
]

DEFAULT_KEY = "class"

#: Per label: sorted positive scores, sorted negative scores, and their weights (or ``None``).
Split = tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.int64] | None, NDArray[np.int64] | None
]


def code_dtype(k: int) -> np.dtype[Any]:
    """The smallest unsigned integer type that holds label codes ``0 .. k-1``."""
    return np.dtype(np.min_scalar_type(max(k - 1, 0)))


@dataclass(frozen=True)
class KeyBlock:
    """All datums of one label key.

    Attributes:
        key: the label key.
        uids: datum uids, shape (n,), as int64 or fixed-width strings; ``None`` when the
            datums were given without uids (they are numbered by position when blocks join).
        labels: the label values as text, sorted.
        gt: ground-truth label code of each datum (an index into ``labels``), shape (n,).
        scores: float64 (len(labels), n), ``-inf`` where a label was not predicted; or, for
            two labels given as one score column, shape (1, n): the scores of
            ``labels[binary_row]``, the other label's score being ``1 - s``.
        binary_row: see ``scores``; ``None`` for the dense form.
        metadata: the datums' metadata (:class:`assay.filtering.Metadata`), or ``None``.
        weights: ``None``, or (compact form, :func:`compact_block`) int64 (n,): how many
            identical datums (same truth, same scores, no uid) each column stands for.
    """

    key: str
    uids: NDArray[Any] | None
    labels: tuple[str, ...]
    gt: NDArray[np.integer[Any]]
    scores: NDArray[np.float64]
    binary_row: int | None = None
    metadata: Metadata | None = None
    weights: NDArray[np.int64] | None = None

    @property
    def n(self) -> int:
        """Columns of the block (datums, or distinct datums in the compact form)."""
        return len(self.gt)

    @property
    def total(self) -> int:
        """Datums the block stands for (``n`` unless compact)."""
        return self.n if self.weights is None else int(self.weights.sum())

    def uid_array(self) -> NDArray[Any]:
        """The uids, numbering datums ``0 .. n-1`` when none were given."""
        return np.arange(self.n) if self.uids is None else self.uids

    def take(self, keep: NDArray[np.bool_]) -> KeyBlock:
        """The datums ``keep`` (a bool mask; a slice), uids kept (positions when none were
        given)."""
        assert self.metadata is not None
        return replace(
            self,
            uids=self.uid_array()[keep],
            gt=self.gt[keep],
            scores=self.scores[:, keep],
            metadata=self.metadata.take(keep),
        )

    def dense_scores(self) -> NDArray[np.float64]:
        """Scores as (len(labels), n), building the complement row of the binary form."""
        if self.binary_row is None:
            return self.scores
        s = self.scores[0]
        rows = [1.0 - s, s] if self.binary_row == 1 else [s, 1.0 - s]
        return np.stack(rows)

    def top(self) -> tuple[NDArray[np.integer[Any]], NDArray[np.float64]]:
        """Each datum's highest-scoring label code (ties: the first label) and its score."""
        if self.binary_row is None:
            # row by row (np.argmax over axis 0 would copy the scores transposed): a later
            # label wins only when strictly higher, so ties keep the first, as argmax does
            best = self.scores[0].copy() if len(self.scores) else np.zeros(self.n)
            top = np.zeros(self.n, dtype=np.intp)
            for j in range(1, len(self.scores)):
                row = self.scores[j]
                top[row > best] = j
                np.maximum(best, row, out=best)
            return top, best
        s = self.scores[0]
        c = 1.0 - s
        # labels[1] wins only when its score is strictly higher (argmax keeps the first max).
        second_wins = s > c if self.binary_row == 1 else c > s
        return second_wins.view(np.uint8), np.maximum(s, c, out=c)

    def weighted_splits(self) -> Iterator[Split]:
        """Per label, in label order: its sorted scores on the datums of that label and on the
        others, with how many datums each score stands for (``None``: one each, the plain
        form). One label's arrays at a time: a caller that keeps them decides the memory."""
        if self.weights is None:
            yield from ((p, q, None, None) for p, q in self.sorted_splits())
            return
        w = self.weights
        dense = self.dense_scores()
        for j in range(len(self.labels)):
            is_pos = self.gt == j
            parts = []
            for side in (is_pos, ~is_pos):
                s, ws = dense[j][side], w[side]
                order = np.argsort(s, kind="stable")
                parts += [s[order], ws[order]]
            yield parts[0], parts[2], parts[1], parts[3]

    def sorted_splits(self) -> SortedSplits:
        """Per label: its scores on the datums of that label and on the others, each sorted
        (read-only arrays), sorted when a label is read.

        Nothing is kept unless :meth:`keep_sorted_splits` was called on this block object
        (the DeLong interval reads them again after the point estimate): a block of ``k``
        labels then holds a second copy of its scores.

        The binary form sorts one row; the complement label's sorted scores are the
        reversed ``1 - s`` of the other side, exactly what sorting ``1 - s`` gives
        (``1 - x`` is monotone), without a second sort.

        Example:
            >>> b = block_from_arrays(["a", "b", "a"], [[0.9, 0.1], [0.4, 0.6], [0.7, 0.3]],
            ...                       labels=["a", "b"])
            >>> [(p.tolist(), q.tolist()) for p, q in b.sorted_splits()]
            [([0.7, 0.9], [0.4]), ([0.6], [0.1, 0.3])]
        """
        return SortedSplits(self)

    def keep_sorted_splits(self) -> None:
        """Keep the sorted scores of every label once read (for this block object only)."""
        self.__dict__.setdefault("_kept_splits", {})


class SortedSplits(Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]]):
    """The per-label sorted scores of a :class:`KeyBlock`, computed when indexed."""

    def __init__(self, block: KeyBlock) -> None:
        self._b = block
        self._binary: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None

    def __len__(self) -> int:
        return len(self._b.labels)

    @overload
    def __getitem__(self, j: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]: ...

    @overload
    def __getitem__(self, j: slice) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]: ...

    def __getitem__(self, j: int | slice) -> Any:
        if isinstance(j, slice):
            return [self[i] for i in range(len(self))[j]]
        j = range(len(self))[j]  # negative indices; IndexError past the end
        kept: dict[int, tuple[NDArray[np.float64], NDArray[np.float64]]] | None
        kept = self._b.__dict__.get("_kept_splits")
        if kept is not None and j in kept:
            return kept[j]
        pair = self._sort(j)
        if kept is not None:
            kept[j] = pair
        return pair

    def _sort(self, j: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        b = self._b
        if b.binary_row is None:
            is_pos = b.gt == j
            pos, neg = b.scores[j][is_pos], b.scores[j][~is_pos]
            pos.sort()
            neg.sort()
        else:  # one sort serves both labels (kept by this sequence)
            if self._binary is None:
                is_pos = b.gt == b.binary_row
                pos, neg = b.scores[0][is_pos], b.scores[0][~is_pos]
                pos.sort()
                neg.sort()
                self._binary = pos, neg
            pos, neg = self._binary
            if j != b.binary_row:  # the complement label: reversed 1 - s, roles swapped
                pos, neg = (1.0 - neg)[::-1], (1.0 - pos)[::-1]
        pos.setflags(write=False)
        neg.setflags(write=False)
        return pos, neg


def _duplicated(values: NDArray[Any]) -> NDArray[np.bool_]:
    """True at each value that occurs earlier in ``values`` (pandas' ``duplicated()``).

    Example:
        >>> _duplicated(np.array([3, 1, 3, 2, 1])).tolist()
        [False, False, True, False, True]
    """
    out = np.zeros(len(values), dtype=bool)
    if len(values) < 2:
        return out
    try:
        order = np.argsort(values, kind="stable")  # equal values keep their order
    except TypeError:  # values numpy cannot order (mixed objects)
        import pandas as pd

        return np.asarray(pd.Index(values).duplicated())
    ordered = values[order]
    out[order[1:][ordered[1:] == ordered[:-1]]] = True
    return out


def _py(x: Any) -> Any:
    """A numpy scalar as the plain Python value (so messages show ``'a'``, not ``np.str_``)."""
    return x.item() if isinstance(x, np.generic) else x


def _label_codes(t: NDArray[Any], labels: Sequence[Any]) -> NDArray[np.signedinteger[Any]]:
    """Index of each value of ``t`` in ``labels``; -1 where it is not a label."""
    labs = np.asarray(labels)
    same_kind = (labs.dtype.kind in "biuf" and t.dtype.kind in "biuf") or (
        labs.dtype.kind == "U" and t.dtype.kind == "U"
    )
    if not same_kind:
        import pandas as pd  # mixed kinds only: the array path never loads pandas

        return pd.Index(list(labels)).get_indexer(t)
    if len(labs) <= 64:  # one comparison per label: no n-sized integer temporaries
        codes = np.full(len(t), -1, dtype=np.int8)
        t, labs = _as_words(t, labs)
        for j, lab in enumerate(labs):
            codes[t == lab] = j
        return codes
    order = np.argsort(labs, kind="stable")
    sl = labs[order]
    i = np.minimum(np.searchsorted(sl, t), len(sl) - 1)
    return np.where(sl[i] == t, order[i], -1)


def _as_words(t: NDArray[Any], labs: NDArray[Any]) -> tuple[NDArray[Any], NDArray[Any]]:
    """Text of one or two characters as one integer each (numpy's UCS-4 code units, zero
    padded), so that equality is one integer comparison; other arrays as they are. Equal
    integers are equal strings (numpy pads strings with zeros and ignores them in ``==``)."""
    width = t.dtype.itemsize
    if t.dtype.kind != "U" or width not in (4, 8) or labs.dtype.kind != "U":
        return t, labs
    word = np.uint32 if width == 4 else np.uint64
    fits = np.array([len(x) <= width // 4 for x in labs.tolist()], dtype=bool)
    padded = np.asarray(labs, dtype=t.dtype)  # a label too long to fit matches nothing:
    out = padded.view(word).copy()
    out[~fits] = np.iinfo(word).max  # no text of this width is these bytes (not UCS-4)
    return np.ascontiguousarray(t).view(word), out


def _uids(uids: ArrayLike | None, n: int) -> NDArray[Any] | None:
    if uids is None:
        return None
    u = as_1d(uids, source="uids")
    if len(u) != n:
        raise InvalidInputError(f"has {len(u)} uids for {n} labels", source="uids")
    if u.dtype.kind in "iub":
        u = u.astype(np.int64)
    elif u.dtype.kind != "U":
        u = u.astype(str)
    dup = _duplicated(u)
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InvalidInputError(f"duplicate uid {_py(u[i])!r}", source="uids", record=f"index {i}")
    return u


def _check_unit_interval(s: NDArray[np.float64], labs: Sequence[str]) -> None:
    bad = ~((s >= 0.0) & (s <= 1.0))
    if bad.any():
        r, c = (int(x) for x in np.argwhere(bad)[0]) if s.ndim == 2 else (int(np.argmax(bad)), 1)
        raise InvalidInputError(
            f"score must be in [0, 1], got {s[r, c] if s.ndim == 2 else s[r]!r}",
            source="y_score",
            record=f"index {r}",
            field=labs[c],
        )


def block_from_arrays(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    labels: Sequence[Any],
    uids: ArrayLike | None = None,
    key: str = DEFAULT_KEY,
) -> KeyBlock:
    """Build a :class:`KeyBlock` from scikit-learn-style arrays.

    Args:
        y_true: ground-truth label of each datum, shape (n,); every value must be in ``labels``.
        y_score: scores in [0, 1], shape (n, len(labels)), column j the score of ``labels[j]``
            (``predict_proba``'s layout); with two labels, a 1-D array is the score of
            ``labels[1]`` and ``labels[0]`` scores ``1 - s``.
        labels: the label values, in the column order of ``y_score``.
        uids: datum ids (default: none; datums are numbered by position).

    Example:
        >>> b = block_from_arrays([1, 0], [0.8, 0.3], labels=[0, 1])
        >>> b.labels, b.dense_scores()[:, 0].tolist()
        (('0', '1'), [0.19999999999999996, 0.8])
    """
    t = as_1d(y_true, source="y_true")
    s = np.asarray(y_score, dtype=np.float64)
    labs = [str(x) for x in labels]
    if len(set(labs)) != len(labs) or len(labs) == 0:
        raise InvalidInputError("labels must be distinct and not empty", source="labels")
    if s.ndim == 1 and len(labs) != 2:
        raise InvalidInputError("a 1-D y_score needs exactly two labels", source="y_score")
    if s.ndim == 1:
        check_same_length(y_true=t, y_score=s)
    elif s.ndim != 2 or s.shape != (len(t), len(labs)):
        raise InvalidInputError(
            f"y_score has shape {s.shape}; expected ({len(t)}, {len(labs)})", source="y_score"
        )
    _check_unit_interval(s, labs)
    codes = _label_codes(t, labels)
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise InvalidInputError(
            f"label {_py(t[i])!r} is not in labels", source="y_true", record=f"index {i}"
        )
    order = np.argsort(labs)  # codes follow the sorted label text
    rank = np.empty(len(labs), dtype=np.intp)
    rank[order] = np.arange(len(labs))
    gt = rank.astype(code_dtype(len(labs)))[codes]
    sorted_labels = tuple(labs[i] for i in order)
    u = _uids(uids, len(t))
    if s.ndim == 1:  # kept as given: a copy, since the caller may reuse its buffer
        return KeyBlock(key, u, sorted_labels, gt, s[None, :].copy(), binary_row=int(rank[1]))
    # rows picked from the transposed view: one copy of the scores (no (n, k) temporary)
    return KeyBlock(key, u, sorted_labels, gt, np.ascontiguousarray(s.T[order]))


def concat_blocks(blocks: Sequence[KeyBlock]) -> KeyBlock:
    """Join blocks of one key (datums in order), over the union of their labels.

    Datums given without uids are numbered by their position in the joined block. Raises
    :class:`InvalidInputError` if a uid occurs twice.
    """
    if len(blocks) == 1:
        return blocks[0]
    if any(b.weights is not None for b in blocks):
        return compact_block(_concat_weighted(blocks))
    key = blocks[0].key
    uids = _joined_uids(blocks)
    md = joined_metadata(blocks)
    first = blocks[0]
    if first.binary_row is not None and all(
        b.binary_row == first.binary_row and b.labels == first.labels for b in blocks
    ):
        scores = np.concatenate([b.scores for b in blocks], axis=1)
        gt = np.concatenate([b.gt for b in blocks])
        return KeyBlock(key, uids, first.labels, gt, scores, first.binary_row, md)
    labels = tuple(sorted(set().union(*(b.labels for b in blocks))))
    lab_codes = {lab: i for i, lab in enumerate(labels)}
    dense = np.full((len(labels), sum(b.n for b in blocks)), -np.inf)
    gts = []
    start = 0
    for b in blocks:
        rows = np.array([lab_codes[lab] for lab in b.labels], dtype=np.intp)
        dense[rows, start : start + b.n] = b.dense_scores()
        gts.append(rows.astype(code_dtype(len(labels)))[b.gt])
        start += b.n
    return KeyBlock(key, uids, labels, np.concatenate(gts), dense, metadata=md)


def compact_block(b: KeyBlock) -> KeyBlock:
    """The same datums as distinct (truth, scores) columns with counts: state of size
    O(labels x distinct score vectors) instead of O(datums). Uids and metadata are dropped
    (the compact form serves the metrics that need neither). Columns come sorted by
    (scores, truth).

    Example:
        >>> b = block_from_arrays([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.25], labels=[0, 1])
        >>> c = compact_block(b)
        >>> c.scores.tolist(), c.gt.tolist(), c.weights.tolist(), c.total
        ([[0.25, 0.5, 0.5]], [1, 0, 1], [1, 1, 2], 4)
    """
    if b.n == 0:
        return replace(b, uids=None, metadata=None, weights=np.zeros(0, dtype=np.int64))
    order = np.lexsort([b.gt, *b.scores[::-1]])  # lexsort: the last key is the primary
    gt, scores = b.gt[order], b.scores[:, order]
    new = np.ones(b.n, dtype=bool)
    new[1:] = gt[1:] != gt[:-1]
    for row in scores:  # one row at a time: no (labels x n) temporary
        new[1:] |= row[1:] != row[:-1]
    starts = np.flatnonzero(new)
    if b.weights is None:  # one datum per column: the run lengths are the counts
        weights = np.diff(starts, append=b.n).astype(np.int64)
    else:
        weights = np.add.reduceat(b.weights[order], starts)
    return replace(
        b, uids=None, metadata=None, gt=gt[starts], scores=scores[:, starts], weights=weights
    )


def _concat_weighted(blocks: Sequence[KeyBlock]) -> KeyBlock:
    """Blocks joined column-wise with their weights (plain blocks weigh 1 per datum)."""
    plain = [replace(b, weights=None, uids=None, metadata=None) for b in blocks]
    joined = concat_blocks(plain)
    w = [np.ones(b.n, np.int64) if b.weights is None else b.weights for b in blocks]
    return replace(joined, uids=None, weights=np.concatenate(w))


def joined_metadata(blocks: Sequence[KeyBlock]) -> Metadata | None:
    """The blocks' metadata in datum order (``None`` when no block has any)."""
    if all(b.metadata is None for b in blocks):
        return None
    parts = [Metadata(b.n) if b.metadata is None else b.metadata for b in blocks]
    return Metadata.concat(parts, source=f"metadata of key {blocks[0].key!r}")


def _joined_uids(blocks: Sequence[KeyBlock]) -> NDArray[Any] | None:
    if all(b.uids is None for b in blocks):
        return None
    parts, start = [], 0
    for b in blocks:
        parts.append(np.arange(start, start + b.n) if b.uids is None else b.uids)
        start += b.n
    uids = np.concatenate(parts)
    dup = _duplicated(uids)
    if dup.any():
        u = _py(uids[int(np.flatnonzero(dup)[0])])
        raise InvalidInputError(
            f"uid {u!r} occurs in more than one batch for key {blocks[0].key!r}",
            source="batches",
        )
    return uids
