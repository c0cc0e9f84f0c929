"""Inputs of the scoring evaluation: a table cleaned into numpy arrays, with what was dropped.

The cleaning rules (RSMTool's):

* a response is evaluated when its human and system scores are both numeric; other rows are
  dropped and counted;
* with ``exclude_zero_scores`` (the default) responses with a human score of 0 are dropped too;
* an extra human score that is non-numeric (or 0, with ``exclude_zero_scores``) counts as
  missing: the response stays in the human-system evaluation but not in the double-scored set;
* a missing group value becomes the label ``"No info"``; labels are compared as strings.

Scores must be finite numbers no larger than :data:`MAX_ABS_SCORE` in absolute value (sums of
fourth powers of errors stay finite); anything else is an error naming the row and column.

Example:
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"h": [1, 0, "x", 3], "m": [1.2, 2, 3, 2.5]})
    >>> d = ScoringData.from_frame(frame, human="h", system="m")
    >>> d.n, d.dropped
    (2, {'human_non_numeric': 1, 'human_zero': 1})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError
from assay.io.tables import as_dataframe, require_columns

__all__ = ["ScoringData", "NO_INFO", "MAX_ABS_SCORE", "check_clusters", "resolve_group_columns"]

NO_INFO = "No info"
# Larger scores would overflow the sums of fourth powers the fairness fits need.
MAX_ABS_SCORE = 1e15


def resolve_group_columns(group_columns: Sequence[str] | str | None) -> list[str]:
    """The group columns as a list, each once (one name may be given as a string).

    Example:
        >>> resolve_group_columns(["L1", "age", "L1"]), resolve_group_columns("L1")
        (['L1', 'age'], ['L1'])
    """
    if isinstance(group_columns, str):
        return [group_columns]
    return list(dict.fromkeys(str(c) for c in group_columns or []))  # each column once


def _numeric(df: pd.DataFrame, col: str, source: str) -> np.ndarray:
    """The column as floats; NaN where not numeric. Infinite or huge values are an error."""
    values = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        bad = np.abs(values) > MAX_ABS_SCORE
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        got = df[col].iloc[i]
        got = got.item() if hasattr(got, "item") else got
        raise InvalidInputError(
            f"score {got!r} is out of range: scores must be finite numbers "
            f"within +-{MAX_ABS_SCORE:g}",
            source=source,
            record=i + 1,
            field=col,
        )
    return values


def _check_has_numbers(df: pd.DataFrame, col: str, values: np.ndarray, source: str) -> None:
    if np.isnan(values).all():
        raise InvalidInputError(
            f"column has no numeric values (first value {df[col].iloc[0]!r})",
            source=source,
            field=col,
        )


def _keep_mask(
    h: np.ndarray, m: np.ndarray, exclude_zero_scores: bool, human: str, source: str
) -> tuple[np.ndarray, dict[str, int]]:
    """Rows to evaluate, and counts of the dropped ones by reason."""
    dropped: dict[str, int] = {}
    bad_h = np.isnan(h)
    bad_m = np.isnan(m) & ~bad_h
    if bad_h.any():
        dropped["human_non_numeric"] = int(bad_h.sum())
    if bad_m.any():
        dropped["system_non_numeric"] = int(bad_m.sum())
    keep = ~(bad_h | bad_m)
    if exclude_zero_scores:
        zero = keep & (h == 0)
        if zero.any():
            dropped["human_zero"] = int(zero.sum())
        keep &= ~zero
    if not keep.any():
        raise InvalidInputError(
            "no response has numeric human and system scores"
            + (" and a non-zero human score" if exclude_zero_scores else "")
            + f" (dropped: {dropped})",
            source=source,
            field=human,
        )
    return keep, dropped


def _group_codes(s: pd.Series) -> tuple[np.ndarray, tuple[str, ...]]:
    """Codes into the sorted string labels; a missing value is the label ``"No info"``."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    names = [str(u) for u in uniques]
    if (codes < 0).any():
        codes = np.where(codes < 0, len(names), codes)
        names.append(NO_INFO)
    labels = sorted(set(names))  # labels compare as strings (1 and "1" are one group)
    pos = {k: i for i, k in enumerate(labels)}
    remap = np.array([pos[k] for k in names], dtype=np.intp)
    return remap[codes], tuple(labels)


def check_clusters(group: tuple[np.ndarray, tuple[str, ...]], column: str) -> None:
    """Every response has a cluster (a group column's codes and labels; missing values are
    the label :data:`NO_INFO`)."""
    codes, labels = group
    if NO_INFO in labels:
        missing = np.flatnonzero(codes == labels.index(NO_INFO))
        if len(missing):
            raise InvalidInputError(
                f"{len(missing)} responses have no value (every response needs a cluster)",
                source="cluster",
                field=column,
            )


@dataclass
class ScoringData:
    """Cleaned arrays: human ``h``, system ``m``, extra ratings ``h2`` ``(N, r)`` (NaN =
    missing), group labels per group column (int codes and label tuple), and counts of what
    was dropped.
    """

    h: np.ndarray
    m: np.ndarray
    h2: np.ndarray | None = None
    groups: dict[str, tuple[np.ndarray, tuple]] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    columns: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.h.size)

    @classmethod
    def from_frame(
        cls,
        data: Any,
        *,
        human: str,
        system: str,
        human2: str | Sequence[str] | None = None,
        group_columns: Sequence[str] | None = None,
        exclude_zero_scores: bool = True,
        source: str = "data",
    ) -> ScoringData:
        """Clean a table (pandas/polars DataFrame, CSV/Parquet/JSONL path, list of dicts)."""
        df = _read(data, source)
        h2cols = [human2] if isinstance(human2, str) else list(human2 or [])
        groups = resolve_group_columns(group_columns)
        require_columns(df, [human, system, *h2cols, *groups], source=source)
        if df.shape[0] == 0:
            raise InvalidInputError("the table has no rows", source=source)
        h = _numeric(df, human, source)
        m = _numeric(df, system, source)
        extra = [_numeric(df, col, source) for col in h2cols]
        _check_has_numbers(df, human, h, source)
        _check_has_numbers(df, system, m, source)
        keep, dropped = _keep_mask(h, m, exclude_zero_scores, human, source)
        all_kept = bool(keep.all())

        def sel(a: Any) -> Any:
            return a if all_kept else a[keep]

        out = cls(
            h=sel(h),
            m=sel(m),
            dropped=dropped,
            columns={"human": human, "system": system, "human2": h2cols, "group_columns": groups},
        )
        if h2cols:
            out.h2 = np.column_stack(
                [
                    _extra_rating(
                        sel(v), sel(df[col].isna().to_numpy()), col, exclude_zero_scores, dropped
                    )
                    for col, v in zip(h2cols, extra)
                ]
            )
        for col in groups:
            out.groups[col] = _group_codes(sel(df[col]))
        return out


def _read(data: Any, source: str) -> pd.DataFrame:
    """A table; TSV and XLSX files are read as RSMTool reads them, the rest by the io layer."""
    if isinstance(data, (str, Path)) and Path(data).suffix.lower() in (".tsv", ".xlsx"):
        from assay.scoring.rsmeval_preprocess import read_scores_table

        return read_scores_table(Path(data), [])
    return as_dataframe(data, source=source)


def _extra_rating(
    v: np.ndarray, raw_missing: np.ndarray, col: str, exclude_zero: bool, dropped: dict[str, int]
) -> np.ndarray:
    """An extra human score column: non-numeric (and, optionally, 0) become missing (NaN)."""
    nonnum = np.isnan(v) & ~raw_missing
    if nonnum.any():
        dropped[f"{col}_non_numeric"] = int(nonnum.sum())
    if exclude_zero:
        z = v == 0
        if z.any():
            dropped[f"{col}_zero"] = int(z.sum())
            v = np.where(z, np.nan, v)
    return v
