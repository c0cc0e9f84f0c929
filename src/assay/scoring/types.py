"""Inputs of the scoring evaluation: a table cleaned into numpy arrays, with what was dropped.

RSMTool's rules (spec, "Evaluation Metrics" conventions):

* a response is evaluated when its human and system scores are both numeric; other rows are
  dropped and counted;
* with ``exclude_zero_scores`` (the default) responses with a human score of 0 are dropped too;
* a second human score that is non-numeric (or 0, with ``exclude_zero_scores``) is treated as
  missing: the response stays in the human-system evaluation but not in the ``N_2`` double-scored
  set;
* a missing subgroup value becomes the label ``"No info"``; labels are compared as strings.

Example:
    >>> import pandas as pd
    >>> d = ScoringData.from_frame(pd.DataFrame({"h": [1, 0, "x", 3], "m": [1.2, 2, 3, 2.5]}), human="h", system="m")
    >>> d.n, d.dropped
    (2, {'human_non_numeric': 1, 'human_zero': 1})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError
from assay.io.tables import as_dataframe, require_columns

__all__ = ["ScoringData", "NO_INFO"]

NO_INFO = "No info"


def _numeric(series: pd.Series) -> np.ndarray:
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return np.where(np.isfinite(values), values, np.nan)


@dataclass
class ScoringData:
    """Cleaned arrays: human ``h``, system ``m``, extra ratings ``h2`` ``(N, r)`` (NaN = missing),
    subgroup labels (each a pair of int codes and label tuple), and counts of what was dropped.
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
        subgroups: Sequence[str] = (),
        exclude_zero_scores: bool = True,
        source: str = "data",
    ) -> ScoringData:
        """Clean a table (pandas/polars DataFrame, CSV/Parquet/JSONL path, list of dicts)."""
        df = as_dataframe(data, source=source)
        h2cols = [human2] if isinstance(human2, str) else list(human2 or [])
        subgroups = list(subgroups)
        require_columns(df, [human, system, *h2cols, *subgroups], source=source)
        if df.shape[0] == 0:
            raise InvalidInputError("the table has no rows", source=source)
        h = _numeric(df[human])
        m = _numeric(df[system])
        for col, vals in ((human, h), (system, m)):
            if np.isnan(vals).all():
                raise InvalidInputError(
                    f"column has no numeric values (first value {df[col].iloc[0]!r})",
                    source=source,
                    field=col,
                )
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
        all_kept = bool(keep.all())
        sel = (lambda a: a) if all_kept else (lambda a: a[keep])
        out = cls(
            h=sel(h),
            m=sel(m),
            dropped=dropped,
            columns={"human": human, "system": system, "human2": h2cols, "subgroups": subgroups},
        )
        if h2cols:
            cols = []
            for col in h2cols:
                v = sel(_numeric(df[col]))
                raw_missing = sel(df[col].isna().to_numpy())
                nonnum = np.isnan(v) & ~raw_missing
                if nonnum.any():
                    dropped[f"{col}_non_numeric"] = int(nonnum.sum())
                if exclude_zero_scores:
                    z = v == 0
                    if z.any():
                        dropped[f"{col}_zero"] = int(z.sum())
                        v = np.where(z, np.nan, v)
                cols.append(v)
            out.h2 = np.column_stack(cols)
        for col in subgroups:
            s = df[col] if all_kept else df[col][keep]
            codes, uniques = pd.factorize(s, use_na_sentinel=True)
            names = [str(u) for u in uniques]
            if (codes < 0).any():
                codes = np.where(codes < 0, len(names), codes)
                names.append(NO_INFO)
            labels = sorted(set(names))  # labels compare as strings (1 and "1" are one group)
            pos = {k: i for i, k in enumerate(labels)}
            remap = np.array([pos[k] for k in names], dtype=np.intp)
            out.groups[col] = (remap[codes], tuple(labels))
        return out
