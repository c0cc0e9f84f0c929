"""Input containers for classification.

A datum has a ``uid``, one ground-truth label value per label key (a plain label means key
``"class"``) and, per key, a set of predicted label values with scores in [0, 1].

Inputs arrive in long form (one row per label) and are validated into one
:class:`KeyBlock` per label key: the datums' uids, their ground-truth label codes and a
dense score matrix ``scores[label, datum]`` (``-inf`` where a label was not predicted).

Example:
    >>> import pandas as pd
    >>> gts = pd.DataFrame({"uid": ["a", "b"], "value": ["cat", "dog"]})
    >>> pds = pd.DataFrame({"uid": ["a", "a", "b"], "value": ["cat", "dog", "dog"], "score": [0.9, 0.1, 0.7]})
    >>> block = parse_long_form(gts, pds)["class"]
    >>> block.labels, block.gt.tolist()
    (('cat', 'dog'), [0, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError
from assay.io.tables import as_dataframe, numeric_column, require_columns

__all__ = ["DEFAULT_KEY", "KeyBlock", "parse_long_form", "block_from_arrays", "concat_blocks"]

DEFAULT_KEY = "class"


@dataclass(frozen=True)
class KeyBlock:
    """All datums of one label key.

    Attributes:
        key: the label key.
        uids: datum uids, shape (n,), in input order (strings from files; any hashable
            values from arrays, shown with ``str`` in examples).
        labels: sorted label values (union of ground truths and predictions).
        gt: ground-truth label code of each datum, shape (n,).
        scores: float64 array (len(labels), n); ``-inf`` where the label was not predicted.
    """

    key: str
    uids: NDArray[np.object_]
    labels: tuple[str, ...]
    gt: NDArray[np.int64]
    scores: NDArray[np.float64]

    @property
    def n(self) -> int:
        return len(self.uids)


def _str_column(df: pd.DataFrame, col: str, source: str) -> NDArray[np.object_]:
    s = df[col]
    missing = s.isna().to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise InvalidInputError("missing value", source=source, record=i + 1, field=col)
    return s.astype(str).to_numpy(dtype=object)


def _first_duplicate(frame: pd.DataFrame, cols: list[str]) -> int | None:
    dup = frame.duplicated(subset=cols, keep="first").to_numpy()
    return int(np.flatnonzero(dup)[0]) if dup.any() else None


def parse_long_form(
    groundtruths: Any,
    predictions: Any,
    *,
    gt_source: str = "groundtruths",
    pd_source: str = "predictions",
) -> dict[str, KeyBlock]:
    """Validate long-form ground truths and predictions into one :class:`KeyBlock` per key.

    Ground truths have columns ``uid``, optional ``key``, ``value``; predictions ``uid``,
    optional ``key``, ``value``, ``score``. Accepts DataFrames (pandas/polars), file paths
    or lists of dicts. Raises :class:`InvalidInputError` naming the source, row (1-based)
    and field for: missing columns or values, scores that are not numbers in [0, 1],
    duplicate rows, and predictions whose datum (uid, key) has no ground truth.
    """
    g = as_dataframe(groundtruths, source=gt_source)
    p = as_dataframe(predictions, source=pd_source)
    require_columns(g, ["uid", "value"], source=gt_source)
    require_columns(p, ["uid", "value", "score"], source=pd_source)

    gt = pd.DataFrame(
        {
            "uid": _str_column(g, "uid", gt_source),
            "key": _str_column(g, "key", gt_source) if "key" in g.columns else DEFAULT_KEY,
            "value": _str_column(g, "value", gt_source),
        }
    )
    pr = pd.DataFrame(
        {
            "uid": _str_column(p, "uid", pd_source),
            "key": _str_column(p, "key", pd_source) if "key" in p.columns else DEFAULT_KEY,
            "value": _str_column(p, "value", pd_source),
            "score": numeric_column(p, "score", source=pd_source, lo=0.0, hi=1.0),
        }
    )

    i = _first_duplicate(gt, ["uid", "key"])
    if i is not None:
        raise InvalidInputError(
            f"duplicate ground truth for uid {gt.uid.iloc[i]!r}, key {gt.key.iloc[i]!r} "
            "(one ground-truth label per datum and key)",
            source=gt_source,
            record=i + 1,
            field="uid",
        )
    i = _first_duplicate(pr, ["uid", "key", "value"])
    if i is not None:
        raise InvalidInputError(
            f"duplicate prediction for uid {pr.uid.iloc[i]!r}, key {pr.key.iloc[i]!r}, value {pr.value.iloc[i]!r}",
            source=pd_source,
            record=i + 1,
            field="value",
        )

    blocks: dict[str, KeyBlock] = {}
    gt_keys = set(gt["key"].unique())
    for key, gk in gt.groupby("key", sort=True):
        blocks[str(key)] = _block_from_frames(
            str(key), gk, pr[pr["key"].to_numpy() == key], pd_source
        )
    orphan_keys = set(pr["key"].unique()) - gt_keys
    if orphan_keys:
        i = int(np.flatnonzero(pr["key"].isin(orphan_keys).to_numpy())[0])
        raise InvalidInputError(
            f"uid {pr.uid.iloc[i]!r} has no ground truth for key {pr.key.iloc[i]!r}",
            source=pd_source,
            record=i + 1,
            field="uid",
        )
    return blocks


def _block_from_frames(key: str, g: pd.DataFrame, p: pd.DataFrame, pd_source: str) -> KeyBlock:
    uids = g["uid"].to_numpy(dtype=object)
    uid_index = pd.Index(uids)
    datum = uid_index.get_indexer(p["uid"].to_numpy(dtype=object))
    if (datum < 0).any():
        j = int(np.flatnonzero(datum < 0)[0])
        row = int(p.index[j]) + 1
        raise InvalidInputError(
            f"uid {p.uid.iloc[j]!r} has no ground truth"
            + ("" if key == DEFAULT_KEY else f" for key {key!r}"),
            source=pd_source,
            record=row,
            field="uid",
        )
    labels_arr = np.unique(
        np.concatenate([g["value"].to_numpy(dtype=object), p["value"].to_numpy(dtype=object)])
    )
    labels = tuple(str(x) for x in labels_arr)
    lab_index = pd.Index(labels)
    gt_codes = lab_index.get_indexer(g["value"].to_numpy(dtype=object)).astype(np.int64)
    pd_codes = lab_index.get_indexer(p["value"].to_numpy(dtype=object))
    scores = np.full((len(labels), len(uids)), -np.inf)
    scores[pd_codes, datum] = p["score"].to_numpy()
    return KeyBlock(key, uids, labels, gt_codes, scores)


def block_from_arrays(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    labels: Sequence[Any],
    uids: ArrayLike | None = None,
    key: str = DEFAULT_KEY,
) -> KeyBlock:
    """Build a :class:`KeyBlock` from sklearn-style arrays.

    Args:
        y_true: ground-truth label of each datum, shape (n,); every value must be in ``labels``.
        y_score: scores, shape (n, len(labels)) with column j the score of ``labels[j]``; for
            two labels a 1-D array is the score of ``labels[1]`` and ``labels[0]`` gets ``1 - s``.
        labels: the label values, in the column order of ``y_score``.
        uids: datum ids (default ``0..n-1``).

    Example:
        >>> b = block_from_arrays([1, 0], [0.8, 0.3], labels=[0, 1])
        >>> b.labels, b.scores[:, 0].tolist()
        (('0', '1'), [0.19999999999999996, 0.8])
    """
    t = np.asarray(y_true)
    s = np.asarray(y_score, dtype=np.float64)
    labs = [str(x) for x in labels]
    if len(set(labs)) != len(labs):
        raise InvalidInputError("labels must be distinct", source="labels")
    if s.ndim == 1:
        if len(labs) != 2:
            raise InvalidInputError("a 1-D y_score needs exactly two labels", source="y_score")
        s = np.stack([1.0 - s, s], axis=1)
    if s.ndim != 2 or s.shape[1] != len(labs) or s.shape[0] != t.shape[0]:
        raise InvalidInputError(
            f"y_score has shape {s.shape}; expected ({t.shape[0]}, {len(labs)})", source="y_score"
        )
    bad = ~((s >= 0.0) & (s <= 1.0))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InvalidInputError(
            f"score must be in [0, 1], got {s[r, c]!r}",
            source="y_score",
            record=int(r),
            field=labs[c],
        )
    codes = pd.Index(list(labels)).get_indexer(t)
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise InvalidInputError(f"label {t[i]!r} is not in labels", source="y_true", record=i)
    order = np.argsort(labs)  # columns in sorted label order
    rank = np.empty(len(labs), dtype=np.int64)
    rank[order] = np.arange(len(labs))
    u = np.arange(len(t)) if uids is None else np.asarray(uids)
    if u.shape != t.shape:
        raise InvalidInputError(f"has {len(u)} uids for {len(t)} labels", source="uids")
    return KeyBlock(
        key, u, tuple(labs[i] for i in order), rank[codes], np.ascontiguousarray(s[:, order].T)
    )


def concat_blocks(blocks: Sequence[KeyBlock]) -> KeyBlock:
    """Concatenate blocks of one key (datums in order), over the union of their labels.

    Raises :class:`InvalidInputError` if a uid occurs in two blocks.
    """
    if len(blocks) == 1:
        return blocks[0]
    key = blocks[0].key
    labels = tuple(sorted(set().union(*(b.labels for b in blocks))))
    lab_index = pd.Index(labels)
    n = sum(b.n for b in blocks)
    scores = np.full((len(labels), n), -np.inf)
    gts, uids = [], []
    start = 0
    for b in blocks:
        rows = lab_index.get_indexer(list(b.labels))
        scores[rows, start : start + b.n] = b.scores
        gts.append(rows[b.gt])
        uids.append(b.uids)
        start += b.n
    all_uids = np.concatenate(uids)
    dup = pd.Index(all_uids).duplicated()
    if dup.any():
        u = all_uids[int(np.flatnonzero(dup)[0])]
        raise InvalidInputError(
            f"uid {u!r} occurs in more than one batch for key {key!r}", source="batches"
        )
    return KeyBlock(key, all_uids, labels, np.concatenate(gts).astype(np.int64), scores)
