"""Long-form classification inputs: one row per ground-truth or predicted label.

Ground truths have columns ``uid``, optional ``key`` and ``value``; predictions ``uid``,
optional ``key``, ``value`` and ``score`` (a number in [0, 1]). Each is a pandas or polars
DataFrame, a file path (JSONL, CSV, Parquet) or a list of dicts.

A datum's **metadata** (scalars by name, for filters: :mod:`assay.filtering`) rides on its
ground-truth rows: a ``metadata`` column holding one mapping (or nothing) per row, or flat
columns named by ``metadata_columns``.

Example:
    >>> import pandas as pd
    >>> gts = pd.DataFrame({"uid": ["a", "b"], "value": ["cat", "dog"]})
    >>> pds = pd.DataFrame({"uid": ["a", "a", "b"], "value": ["cat", "dog", "dog"],
    ...                     "score": [0.9, 0.1, 0.7]})
    >>> block = parse_long_form(gts, pds)["class"]
    >>> block.labels, block.gt.tolist(), block.uids.tolist()
    (('cat', 'dog'), [0, 1], ['a', 'b'])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from assay.classification.types import DEFAULT_KEY, KeyBlock, code_dtype
from assay.errors import InvalidInputError
from assay.io.metadata import Metadata, metadata_from_frame, metadata_from_records
from assay.io.tables import as_dataframe, numeric_column, require_columns

__all__ = ["parse_long_form"]


def _text_column(df: pd.DataFrame, col: str, source: str) -> NDArray[np.str_]:
    """A column of scalar ids or labels as text; a missing value, list or object is an error."""
    s = df[col]
    missing = s.isna().to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise InvalidInputError("missing value", source=source, record=i + 1, field=col)
    if s.dtype == object:
        nested = np.fromiter(
            (isinstance(v, (list, dict, tuple, set)) for v in s), dtype=bool, count=len(s)
        )
        if nested.any():
            i = int(np.flatnonzero(nested)[0])
            raise InvalidInputError(
                f"expected a string or number, got {type(s.iloc[i]).__name__} {s.iloc[i]!r}",
                source=source,
                record=i + 1,
                field=col,
            )
    return _as_text(s)


def _as_text(s: pd.Series) -> NDArray[np.str_]:
    """``str`` of every value. A column with few distinct values (labels) converts each
    distinct value once and repeats the text (10^7 binary labels: 0.12 s instead of 1.6 s);
    a column of mostly distinct values (uids) converts every value."""
    head = s.iloc[:10_000]
    if len(s) > 10_000 and len(pd.unique(head)) <= 1_000:
        codes, uniq = pd.factorize(s, sort=False)
        if len(uniq) <= len(s) // 10:
            return np.asarray(uniq.astype(str), dtype=str)[codes]
    return np.asarray(s.astype(str).to_numpy(), dtype=str)


def _first_duplicate(frame: pd.DataFrame, cols: list[str]) -> int | None:
    dup = frame.duplicated(subset=cols, keep="first").to_numpy()
    return int(np.flatnonzero(dup)[0]) if dup.any() else None


def _metadata(
    g: pd.DataFrame, p: pd.DataFrame, columns: Any, gt_source: str, pd_source: str
) -> Metadata | None:
    if "metadata" in p.columns:
        raise InvalidInputError(
            "metadata belongs to the datum: give it on the ground-truth rows",
            source=pd_source,
            field="metadata",
        )
    parts = []
    if "metadata" in g.columns:
        parts.append(metadata_from_records(g["metadata"].tolist(), source=gt_source))
    if columns:
        parts.append(metadata_from_frame(g, list(columns), source=gt_source))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else parts[0].overlay(parts[1], source=gt_source)


def _frames(
    groundtruths: Any, predictions: Any, gt_source: str, pd_source: str, metadata_columns: Any
) -> tuple[pd.DataFrame, pd.DataFrame, Metadata | None]:
    g = as_dataframe(groundtruths, source=gt_source)
    p = as_dataframe(predictions, source=pd_source)
    require_columns(g, ["uid", "value"], source=gt_source)
    require_columns(p, ["uid", "value", "score"], source=pd_source)
    md = _metadata(g, p, metadata_columns, gt_source, pd_source)

    def key(df: pd.DataFrame, source: str) -> Any:
        return _text_column(df, "key", source) if "key" in df.columns else DEFAULT_KEY

    gt = pd.DataFrame(
        {
            "uid": _text_column(g, "uid", gt_source),
            "key": key(g, gt_source),
            "value": _text_column(g, "value", gt_source),
        }
    )
    pr = pd.DataFrame(
        {
            "uid": _text_column(p, "uid", pd_source),
            "key": key(p, pd_source),
            "value": _text_column(p, "value", pd_source),
            "score": numeric_column(p, "score", source=pd_source, lo=0.0, hi=1.0),
        }
    )
    return gt, pr, md


def _check_duplicates(gt: pd.DataFrame, pr: pd.DataFrame, gt_source: str, pd_source: str) -> None:
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
            f"duplicate prediction for uid {pr.uid.iloc[i]!r}, key {pr.key.iloc[i]!r}, "
            f"value {pr.value.iloc[i]!r}",
            source=pd_source,
            record=i + 1,
            field="value",
        )


def parse_long_form(
    groundtruths: Any,
    predictions: Any,
    *,
    gt_source: str = "groundtruths",
    pd_source: str = "predictions",
    metadata_columns: Any = None,
) -> dict[str, KeyBlock]:
    """Validate long-form ground truths and predictions into one :class:`KeyBlock` per key.

    Raises :class:`InvalidInputError` naming the source, row (1-based) and field for:
    missing columns or values, ids or labels that are lists or objects, scores that are not
    numbers in [0, 1], duplicate rows, and predictions whose datum (uid, key) has no
    ground truth; and for metadata that is not a mapping of scalars (see
    :func:`assay.filtering.metadata_from_records`).
    """
    gt, pr, md = _frames(groundtruths, predictions, gt_source, pd_source, metadata_columns)
    _check_duplicates(gt, pr, gt_source, pd_source)
    orphan = ~pr["key"].isin(set(gt["key"])).to_numpy()
    if orphan.any():
        i = int(np.flatnonzero(orphan)[0])
        raise InvalidInputError(
            f"uid {pr.uid.iloc[i]!r} has no ground truth for key {pr.key.iloc[i]!r}",
            source=pd_source,
            record=i + 1,
            field="uid",
        )
    return {
        str(key): _block_from_frames(
            str(key),
            gk,
            pr[pr["key"].to_numpy() == key],
            pd_source,
            None if md is None else md.take(gk.index.to_numpy()),
        )
        for key, gk in gt.groupby("key", sort=True)
    }


def _block_from_frames(
    key: str, g: pd.DataFrame, p: pd.DataFrame, pd_source: str, md: Metadata | None
) -> KeyBlock:
    uids = g["uid"].to_numpy(dtype=str)
    datum = pd.Index(uids).get_indexer(p["uid"].to_numpy(dtype=str))
    if (datum < 0).any():
        j = int(np.flatnonzero(datum < 0)[0])
        raise InvalidInputError(
            f"uid {p.uid.iloc[j]!r} has no ground truth"
            + ("" if key == DEFAULT_KEY else f" for key {key!r}"),
            source=pd_source,
            record=int(p.index[j]) + 1,
            field="uid",
        )
    labels = tuple(
        str(x) for x in np.unique(np.concatenate([g["value"].to_numpy(), p["value"].to_numpy()]))
    )
    lab_index = pd.Index(labels)
    gt_codes = lab_index.get_indexer(g["value"].to_numpy()).astype(code_dtype(len(labels)))
    scores = np.full((len(labels), len(uids)), -np.inf)
    scores[lab_index.get_indexer(p["value"].to_numpy()), datum] = p["score"].to_numpy()
    return KeyBlock(key, uids, labels, gt_codes, scores, metadata=md)
