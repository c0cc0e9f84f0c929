"""RSMTool's helper functions that users call directly (our implementations, same results).

Example:
    >>> import numpy as np
    >>> n_human_scores(np.array([[1.0, 2.0], [3.0, np.nan]])).tolist()
    [2, 1]
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError

__all__ = [
    "convert_to_ordered_category",
    "disattenuated_correlations",
    "n_human_scores",
    "partial_correlations",
]


def n_human_scores(human_scores: Any) -> np.ndarray:
    """Number of human scores per response: the non-NaN cells of each row of a
    ``(responses, raters)`` array.

    Example:
        >>> n_human_scores([[1, 2, 3]]).tolist()
        [3]
    """
    a = np.asarray(human_scores, dtype=np.float64)
    if a.ndim != 2:
        raise InvalidInputError("human_scores must be a 2-d array (responses x raters)")
    return (~np.isnan(a)).sum(axis=1)


def disattenuated_correlations(human_system: Any, human_human: Any) -> pd.DataFrame:
    """``corr_HM / sqrt(corr_HH)`` per row, with ``corr_HM, corr_HH, sqrt_HH,
    corr_disattenuated`` columns.

    ``human_system`` and ``human_human`` are Series indexed by score type or group. A single
    human-human value whose label is not among the human-system labels applies to every row.
    A negative ``corr_HH`` has no square root: ``sqrt_HH`` and the result are NaN.

    Example:
        >>> d = disattenuated_correlations(pd.Series({"raw": 0.6}), pd.Series({"": 0.81}))
        >>> round(float(d.loc["raw", "corr_disattenuated"]), 6)
        0.666667
    """
    hm = pd.Series(human_system, dtype=float)
    hh = pd.Series(human_human, dtype=float)
    if len(hh) == 1 and hh.index[0] not in hm.index:
        hh = pd.Series(np.repeat(hh.to_numpy(), len(hm)), index=hm.index)
    df = pd.concat([hm, hh], axis=1, sort=True, keys=["corr_HM", "corr_HH"])
    with np.errstate(invalid="ignore"):
        df["sqrt_HH"] = np.sqrt(df["corr_HH"].to_numpy())
    df["corr_disattenuated"] = df["corr_HM"] / df["sqrt_HH"]
    return df


def partial_correlations(df: pd.DataFrame) -> pd.DataFrame:
    """Partial correlation of every pair of columns given all the others.

    With ``P`` the inverse of the covariance matrix, the partial correlation of ``i`` and
    ``j`` is ``-P_ij / sqrt(P_ii P_jj)`` (1 on the diagonal). A covariance matrix whose
    determinant is at most float32's machine epsilon is inverted with the pseudo-inverse (with
    a warning); more columns than rows gives NaN everywhere (as RSMTool).

    Example:
        >>> x = pd.DataFrame({"a": [1, 2, 3, 4.5], "b": [2, 1, 4, 3], "c": [1, 3, 2, 5]})
        >>> bool(np.allclose(partial_correlations(x).to_numpy().diagonal(), 1))
        True
    """
    rows, cols = df.shape
    cov = df.cov()
    k = len(cov.columns)
    if cols > rows:
        inv = np.full((k, k), np.nan)
    else:
        c = cov.to_numpy()
        try:
            if np.linalg.det(c) > np.finfo(np.float32).eps:
                inv = np.linalg.inv(c)
            else:
                warnings.warn(
                    "the covariance matrix is (nearly) singular: partial correlations use its "
                    "Moore-Penrose pseudo-inverse",
                    stacklevel=2,
                )
                inv = np.linalg.pinv(c)
        except np.linalg.LinAlgError:
            inv = np.full((k, k), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.sqrt(1.0 / np.diag(inv))
        out = -(d[:, None] * inv * d[None, :])
    np.fill_diagonal(out, 1.0)
    return pd.DataFrame(out, index=cov.columns, columns=cov.columns)


def convert_to_ordered_category(values: pd.Series, base_group: str | None = None) -> pd.Series:
    """The values as an ordered categorical: categories by decreasing count, ties in sorted
    order; ``base_group`` (which must occur) moved first. The first category is the reference
    level of RSMTool's fairness models.

    Example:
        >>> s = convert_to_ordered_category(pd.Series(["b", "a", "b", "c", "a"]))
        >>> list(s.cat.categories)
        ['a', 'b', 'c']
    """
    counts = values.value_counts()
    order = sorted(counts.index.tolist(), key=lambda v: (-int(counts[v]), v))
    if base_group is not None:
        if base_group not in order:
            raise InvalidInputError(
                f"the reference group {base_group!r} is not one of the values", source="base_group"
            )
        order.remove(base_group)
        order.insert(0, base_group)
    return values.astype("category").cat.reorder_categories(order, ordered=True)
